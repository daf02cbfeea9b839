"""Benchmark: parsing a typical conductor completion (target: median under 100 µs)."""

from __future__ import annotations

from typing import Any

from conductor_gym.plan import PlanParseError, parse_plan

TYPICAL_COMPLETION = """\
The question asks for the number of positive integers n below 1000 such that n^2 + 1 is
divisible by 5, and then for the sum of those integers modulo 7. This is a two-part number
theory problem: first characterise the residues of n modulo 5 for which n^2 = -1 (mod 5),
then count and sum the matching n below 1000, and finally reduce the sum. Model 2 is the
strongest at careful step-by-step arithmetic, so it should derive the residue classes and
the count. Model 0 is good at code-style computation and can independently compute the sum
and its remainder; it needs to see the first step to reuse the residue classes. Model 1 is
the most reliable verifier, so it should check both earlier steps, resolve any disagreement,
and state the final answer in the required format.

```python
model_id = [2, 0, 1]
subtasks = [
    "Find all residues r modulo 5 with r^2 + 1 divisible by 5, then count the positive "
    "integers n < 1000 in those residue classes. Show your reasoning.",
    "Using the residue classes found above, compute the sum of all positive integers "
    "n < 1000 with n^2 + 1 divisible by 5, then give that sum modulo 7.",
    "Check both previous answers for arithmetic mistakes. If they disagree, redo the "
    "computation. End with 'Final answer: <count>, <sum mod 7>'.",
]
access_list = [[], [0], "all"]
```
"""


def test_parse_plan_typical(benchmark: Any) -> None:
    assert 900 <= len(TYPICAL_COMPLETION) <= 1600
    plan = benchmark(parse_plan, TYPICAL_COMPLETION, 5)
    assert len(plan) == 3
    assert plan.model_ids == (2, 0, 1)
    assert plan.access == ((), (0,), "all")


def test_parse_plan_nesting_bomb(benchmark: Any) -> None:
    """A 1-million-bracket nesting bomb: the scanner must reject it in one linear pass."""
    bomb = "model_id = " + "[" * 1_000_000 + "]" * 1_000_000

    def reject() -> str:
        try:
            parse_plan(bomb, 2, max_chars=3_000_000)
        except PlanParseError as exc:
            return exc.reason
        return "parsed"

    assert benchmark(reject) == "too_deep"


def test_parse_plan_unclosed_brackets(benchmark: Any) -> None:
    """5,000 unclosed ``model_id = [`` openings: no quadratic rescanning."""
    text = "model_id = [" * 5000  # 60,000 chars: under the 64 KiB limit, so it is scanned

    def reject() -> str:
        try:
            parse_plan(text, 2)
        except PlanParseError as exc:
            return exc.reason
        return "parsed"

    assert benchmark(reject) not in ("parsed", "too_long")
