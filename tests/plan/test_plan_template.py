"""Plan files (:mod:`conductor_gym.plan.template`): a plan written with ``{question}``
reads back unchanged (comments and awkward characters included), the question goes in
by plain replacement, and a plan no step of which sees the question is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import Plan
from conductor_gym.plan.template import QUESTION, fill_question, read_plan_file, write_plan_file


def test_a_written_plan_reads_back_unchanged(tmp_path: Path) -> None:
    plan = Plan(
        (1, 0, 1),
        (f'Say "hi" {{x}} \\ then:\n{QUESTION}', f"Check it.\t{QUESTION}", "Restate."),
        ((), (0,), "all"),
    )
    path = write_plan_file(tmp_path / "deep" / "p.plan", plan, comment="model_id = [9]\nnote")
    assert path == tmp_path / "deep" / "p.plan"
    assert path.read_text().splitlines()[:2] == ["# model_id = [9]", "# note"]
    assert read_plan_file(path) == plan
    filled = fill_question(plan, "What is {0} + 1?")
    assert filled.subtasks[:2] == (
        'Say "hi" {x} \\ then:\nWhat is {0} + 1?',
        "Check it.\tWhat is {0} + 1?",
    )
    assert filled.model_ids == plan.model_ids and filled.access == plan.access


def test_plans_the_format_cannot_hold_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.plan"
    with pytest.raises(ConfigurationError, match=r"no subtask holds the placeholder \{question\}"):
        write_plan_file(path, Plan((0,), ("Solve it.",), ((),)))
    with pytest.raises(ConfigurationError, match=r"the plan has no steps"):
        write_plan_file(path, Plan((), (), ()))
    with pytest.raises(ConfigurationError, match=r"model ids must be >= 0, got \[-1\]"):
        write_plan_file(path, Plan((-1,), (QUESTION,), ((),)))
    assert not path.exists()
