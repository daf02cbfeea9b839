"""The format prior's random plans: the syntax of every plan shape, no preference."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from conductor_gym.trainers.trl.warm_start import LATER_SUBTASKS, WarmStart, random_plan

from conductor_gym.plan import parse_plan

QUESTION = 'Compute 7 * 10 - "17".\nA) 1\nB) 2'


def test_random_plans_parse_copy_the_question_and_let_later_steps_see_it() -> None:
    rng = random.Random(0)
    for _ in range(200):
        plan = random_plan(rng, QUESTION, num_workers=7)
        assert parse_plan(plan.to_text(), num_workers=7, max_steps=5) == plan
        assert plan.subtasks[0] == QUESTION and plan.access[0] == ()
        assert all(s in LATER_SUBTASKS for s in plan.subtasks[1:])
        assert all(a == "all" for a in plan.access[1:])


def test_the_draw_is_uniform_over_lengths_workers_and_requests() -> None:
    rng = random.Random(1)
    plans = [random_plan(rng, QUESTION, num_workers=7) for _ in range(6000)]
    lengths = Counter(len(p.model_ids) for p in plans)
    workers = Counter(i for p in plans for i in p.model_ids)
    requests = Counter(s for p in plans for s in p.subtasks[1:])
    for counts, kinds in ((lengths, 3), (workers, 7), (requests, 3)):
        assert len(counts) == kinds
        expected = sum(counts.values()) / kinds
        assert all(abs(n - expected) < 0.1 * expected for n in counts.values()), counts


def test_later_access_can_be_drawn_from_other_choices() -> None:
    rng = random.Random(2)
    plans = [random_plan(rng, QUESTION, 3, later_access=((), "all")) for _ in range(300)]
    assert {a for p in plans for a in p.access[1:]} == {(), "all"}


@pytest.mark.parametrize(
    ("field", "value"), [("steps", -1), ("batch_size", 0), ("learning_rate", 0.0)]
)
def test_bad_settings_name_the_field(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"WarmStart.{field}"):
        WarmStart(**{field: value})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="later_access"):
        WarmStart(later_access=())
