"""The plan prior of cpu-orchestrate: the plans it draws, and the search that fits it."""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest
from conductor_gym.trainers.trl.data import make_refs
from conductor_gym.trainers.trl.plan_prior import (
    ROLES,
    PlanPrior,
    PlanSearch,
    Structure,
    search_prior,
)
from conductor_gym.trainers.trl.warm_start import WarmStart

from conductor_gym.core.config import EnvConfig
from conductor_gym.plan import parse_plan
from conductor_gym.training.scoring import Scorer

QUESTION = 'Compute 7 * 10 - "17".\nA) 1\nB) 2'


def test_drawn_plans_parse_and_every_role_writes_its_subtask_and_access() -> None:
    rng = random.Random(0)
    prior = PlanPrior.uniform(num_workers=7, max_steps=3)
    for _ in range(300):
        structure = prior.draw(rng)
        plan = structure.plan(QUESTION)
        assert parse_plan(plan.to_text(), num_workers=7, max_steps=5) == plan
        assert structure.roles[0] == "attempt"
        assert plan.subtasks[0] == QUESTION and plan.access[0] == ()
        for role, subtask, access in zip(structure.roles, plan.subtasks, plan.access, strict=True):
            text, seen = ROLES[role]
            assert subtask == (QUESTION if text is None else text) and access == seen


def test_the_uniform_prior_draws_every_length_worker_and_role_alike() -> None:
    rng = random.Random(1)
    structures = [PlanPrior.uniform(7, 3).draw(rng) for _ in range(6000)]
    lengths = Counter(len(s.workers) for s in structures)
    workers = Counter(w for s in structures for w in s.workers)
    roles = Counter(r for s in structures for r in s.roles[1:])
    for counts, kinds in ((lengths, 3), (workers, 7), (roles, len(ROLES))):
        assert len(counts) == kinds
        expected = sum(counts.values()) / kinds
        assert all(abs(n - expected) < 0.1 * expected for n in counts.values()), counts


def test_refit_moves_each_factor_toward_the_elites_and_keeps_unreached_ones() -> None:
    prior = PlanPrior.uniform(3, 3)
    elites = [
        Structure((2,), ("attempt",)),
        Structure((2, 0), ("attempt", "check")),
        Structure((1, 0), ("attempt", "check")),
    ]
    moved = prior.refit(elites, smoothing=0.5)
    assert moved.lengths == pytest.approx([1 / 3, 1 / 2, 1 / 6])
    assert moved.workers[0] == pytest.approx([1 / 6, 1 / 3, 1 / 2])
    assert moved.workers[1] == pytest.approx([1 / 6 + 0.5, 1 / 6, 1 / 6])
    assert moved.workers[2] == pytest.approx(prior.workers[2])  # no elite has a third step
    assert moved.roles[0][list(ROLES).index("check")] == pytest.approx(0.125 + 0.5)
    assert moved.mode() == Structure((2, 0), ("attempt", "check"))
    for factor in (moved.lengths, *moved.workers, *moved.roles):
        assert float(np.sum(factor)) == pytest.approx(1.0)


def _mean_reward(scorer: Scorer, structures: list[Structure], refs: list) -> float:
    results = scorer.score(
        [r for _ in structures for r in refs],
        [s.plan(scorer.tasks[r.task_index].question).to_text() for s in structures for r in refs],
        rollout_seeds=[7 + i for i in range(len(refs))] * len(structures),
    )
    return float(np.mean([r.reward for r in results]))


def test_the_search_finds_plans_that_beat_the_uniform_prior_on_unseen_tasks() -> None:
    scorer = Scorer(EnvConfig(), seed=0)
    settings = PlanSearch(iterations=5, population=64, tasks_per_plan=16, seed=3)
    prior, history = search_prior(scorer, make_refs(range(200, 400)), settings, log=False)
    assert [h["iteration"] for h in history] == [1, 2, 3, 4, 5]
    assert all(h["elite_reward"] >= h["mean_reward"] for h in history)
    again, history_again = search_prior(scorer, make_refs(range(200, 400)), settings, log=False)
    assert prior.to_dict() == again.to_dict()
    # The floor keeps every length, worker and role drawable.
    for factor in (prior.lengths, prior.workers, prior.roles):
        assert factor.min() >= settings.floor / factor.shape[-1] - 1e-12
    assert [h["best"] for h in history] == [h["best"] for h in history_again]
    unseen = make_refs(range(400, 480))
    rng = random.Random(5)
    uniform = _mean_reward(scorer, [PlanPrior.uniform(7, 3).draw(rng) for _ in range(32)], unseen)
    fitted = _mean_reward(scorer, [prior.draw(rng) for _ in range(32)], unseen)
    # 32 x 80 episodes each: simulator v3.1 bounds what plans add over the best worker,
    # so the margin is smaller than on v3 (0.831 against 0.814 in reward; v3: > 0.03)
    assert fitted > uniform + 0.01, (fitted, uniform)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("iterations", -1),
        ("population", 0),
        ("tasks_per_plan", 0),
        ("elite", 0.0),
        ("smoothing", 1.5),
    ],
)
def test_bad_search_settings_name_the_field(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"PlanSearch.{field}"):
        PlanSearch(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("field", "value"), [("steps", -1), ("batch_size", 0), ("learning_rate", 0.0)]
)
def test_bad_warm_start_settings_name_the_field(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"WarmStart.{field}"):
        WarmStart(**{field: value})  # type: ignore[arg-type]
