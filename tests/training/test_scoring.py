"""The trainers' bridge: score_completions / Scorer, with GRPO groups."""

from __future__ import annotations

import asyncio

import pytest
from support import plan_text, solve_plan

from conductor_gym import ConductorEnv, EpisodeRef, Scorer, score_completions

CHECKED = plan_text(
    [0, 1, 2], ["Solve the task.", "Check the answer above.", "Give the final answer."],
    [[], "all", [1]],
)  # fmt: skip


@pytest.fixture(scope="module")
def scorer() -> Scorer:
    return Scorer(k=3, shuffle_workers=True, seed=7)


def test_a_group_shares_task_and_pool_draw_but_not_worker_randomness(scorer: Scorer) -> None:
    ref = EpisodeRef(task_index=11, group_seed=1234)
    results = scorer.score([ref] * 16, [CHECKED] * 16)
    assert len({tuple(r.info["pool"]) for r in results}) == 1
    assert len({r.info["task_id"] for r in results}) == 1
    tokens = {tuple(s.completion_tokens for s in r.info["trace"].steps) for r in results}
    assert len(tokens) > 8  # each rollout samples its own worker answers
    other = scorer.score([EpisodeRef(11, g) for g in range(12)], [CHECKED] * 12)
    assert len({tuple(r.info["pool"]) for r in other}) > 1  # other groups, other draws


def test_same_rollout_seeds_reproduce_and_match_the_env(scorer: Scorer) -> None:
    refs = [EpisodeRef(i, 100 + i) for i in range(6)]
    actions = [CHECKED, "no plan", *[CHECKED] * 4]
    first = scorer.score(refs, actions, rollout_seeds=list(range(6)))
    again = scorer.score([r.to_label() for r in refs], actions, rollout_seeds=list(range(6)))
    assert [(r.reward, r.info["trace"]) for r in first] == [
        (r.reward, r.info["trace"]) for r in again
    ]
    env = ConductorEnv(k=3, shuffle_workers=True)
    for ref, action, rollout, result in zip(refs, actions, range(6), first, strict=True):
        obs, _ = env.reset(
            seed=ref.group_seed, options={"task_index": ref.task_index, "rollout_seed": rollout}
        )
        assert obs == scorer.prompt(ref)
        _, reward, _, truncated, info = env.step(action)
        assert (reward, truncated, info["trace"]) == (
            result.reward,
            result.truncated,
            result.info["trace"],
        )
    bad = first[1]
    assert bad.outcome == "invalid" and bad.parse_failed and bad.reward == 0.0
    assert bad.info["parse_error"]["reason"] and bad.steps == 0 and first[0].steps == 3


def test_rewards_scores_and_outcomes_agree() -> None:
    refs = [EpisodeRef(i, i) for i in range(40)]
    results = score_completions(
        refs, [solve_plan("the task above", i % 7) for i in range(40)], tasks="offline"
    )
    for r in results:
        assert (r.outcome, r.reward, r.correct) in {
            ("correct", 1.0, 1.0),
            ("wrong", 0.5, 0.0),
            ("invalid", 0.0, 0.0),
        }
    assert {r.outcome for r in results} >= {"correct", "wrong"}


def test_ascore_runs_inside_an_event_loop(scorer: Scorer) -> None:
    async def main() -> list[float]:
        results = await scorer.ascore([EpisodeRef(3, 3)] * 4, [CHECKED] * 4)
        return [r.reward for r in results]

    assert all(r in (0.5, 1.0) for r in asyncio.run(main()))


def test_bad_inputs_fail_clearly(scorer: Scorer) -> None:
    with pytest.raises(ValueError, match="2 refs for 1 completions"):
        scorer.score([EpisodeRef(0, 0)] * 2, [CHECKED])
    with pytest.raises(ValueError, match="not a task_index/group_seed JSON"):
        scorer.score(["task-7"], [CHECKED])
    with pytest.raises(ValueError, match=r"EpisodeRef\.group_seed"):
        EpisodeRef(0, -1)
    with pytest.raises(ValueError, match="max_recursions=0"):
        Scorer(max_recursions=1).score([EpisodeRef(0, 0)], [CHECKED])
    with pytest.raises(ValueError, match="rollout_seed"):
        ConductorEnv().reset(seed=0, options={"rollout_seed": -3})
    with pytest.raises(ValueError, match="either a scorer or Scorer arguments"):
        score_completions([], [], scorer=scorer, tasks="offline")
