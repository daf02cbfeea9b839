"""Benchmark: the string-only graders (``choice``, ``countdown``, ``numeric``) and the
code grader's program extraction, per response (issue 38: none may get slower than
twice its median before the peer-convention extraction: choice 8 us, countdown 7 us).

One round grades every response of a small mixed set once; the figure is the time per
round. Run: ``make bench`` (or ``pytest tests/benchmarks/test_bench_text_graders.py
--benchmark-enable``).
"""

from __future__ import annotations

from typing import Any

from conductor_gym.graders import grade
from conductor_gym.graders.code.extract import extract_code

CHOICE = [
    ("Let me compare the options.\nThe answer is (C).", "C", True),
    ("**Answer:** B", "C", False),
    ("Option A fails; option C is correct.", "C", True),
    ("Answer: $C$", "C", True),
]
COUNTDOWN = [
    ("<answer>(25 - 5) * 4</answer>", True),
    ("So \\boxed{(25-5)\\times 4}.", True),
    ("Answer: 25 * 3 + 5", True),
    ("Trying products first.\n(25 - 5) * 3", False),
]
NUMERIC = [
    ("She has 1,234 marbles.\n#### 1,234", "1234", True),
    ("The answer is \\boxed{18}.", "18", True),
    ("Answer: 17", "18", False),
    ("There are 1 000 in all.", "1000", True),
]
CODE = (
    "Here it is.\n\n```python\nimport numpy as np\n\ndef task_func(values):\n"
    "    return int(np.sum(values))\n```\n\nExample usage:\n```python\n"
    "print(task_func([1, 2, 3]))\n```\n\nOutput:\n```\n6\n```\n"
)


def _choice() -> list[bool]:
    return [grade("choice", r, ref).correct for r, ref, _ in CHOICE]


def _countdown() -> list[bool]:
    return [grade("countdown", r, "80", numbers=[25, 5, 4, 3]).correct for r, _ in COUNTDOWN]


def _numeric() -> list[bool]:
    return [grade("numeric", r, ref).correct for r, ref, _ in NUMERIC]


def test_choice_per_round(benchmark: Any) -> None:
    assert benchmark(_choice) == [expected for *_, expected in CHOICE]


def test_countdown_per_round(benchmark: Any) -> None:
    assert benchmark(_countdown) == [expected for _, expected in COUNTDOWN]


def test_numeric_per_round(benchmark: Any) -> None:
    assert benchmark(_numeric) == [expected for *_, expected in NUMERIC]


def test_code_extraction(benchmark: Any) -> None:
    program = benchmark(extract_code, CODE, "task_func")
    assert program is not None and program.startswith("import numpy")
