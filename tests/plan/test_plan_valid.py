"""conductor_gym.plan: completions that hold a valid plan parse to exactly that plan."""

from __future__ import annotations

import pytest
from plan_cases import VALID

from conductor_gym.plan import Plan, PlanParseError, parse_plan


@pytest.mark.parametrize(
    ("text", "num_workers", "expected"),
    [pytest.param(text, n, plan, id=name) for name, text, n, plan in VALID],
)
def test_valid_completion(text: str, num_workers: int, expected: Plan) -> None:
    assert parse_plan(text, num_workers) == expected


def test_max_steps_argument_allows_longer_plans() -> None:
    text = (
        "model_id = [0, 0, 0, 0, 0, 0]\n"
        'subtasks = ["a", "b", "c", "d", "e", "f"]\n'
        "access_list = [[], [0], [1], [2], [3], [4]]"
    )
    plan = parse_plan(text, 1, max_steps=6)
    assert len(plan) == 6
    assert plan.access[-1] == (4,)
    with pytest.raises(PlanParseError) as info:
        parse_plan(text, 1)
    assert info.value.reason == "too_many_steps"
