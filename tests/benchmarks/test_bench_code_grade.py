"""Benchmark: time per ``unittest`` grade of the "code" grader (the BigCodeBench path),
for a plain task and for one that loads pandas, each a legitimate solution that must
pass. Issue 39 measured these before and after the identity snapshots."""

from __future__ import annotations

from typing import Any

from code_grader_support import GOOD, LEGITIMATE, unit

from conductor_gym.sandbox import isolation


def test_unittest_grade_plain(benchmark: Any) -> None:
    isolation()  # the one-time probe is not part of a grade
    verdict = benchmark.pedantic(unit, args=(GOOD,), rounds=5, iterations=1)
    assert verdict.correct, verdict


def test_unittest_grade_pandas(benchmark: Any) -> None:
    case = next(case for case in LEGITIMATE if case.name == "pandas-frame-compare")
    isolation()
    verdict = benchmark.pedantic(
        unit,
        args=(case.program, case.tests),
        kwargs={"libs": list(case.libs)},
        rounds=5,
        iterations=1,
    )
    assert verdict.correct, verdict
