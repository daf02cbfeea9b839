"""Benchmark: the "math" grader on typical MATH500-style answers (grades per second).

One round grades the 20 hand-written (response, reference) pairs below once;
grades/s = 20 / (seconds per round). Three figures:

* ``cold``: before each round every cache is cleared (the grader's reference cache,
  math-verify's parse caches and sympy's cache), so every answer and reference is parsed
  and compared from scratch: the conservative figure for answers never seen before;
* ``warm``: nothing is cleared (a repeated evaluation, the same answers again);
* ``warm_thread``: as ``warm`` but graded from a helper thread, so each check goes through
  the worker process; the gap to ``warm`` is the inter-process overhead.

Run: ``make bench`` (or ``pytest tests/benchmarks/test_bench_graders.py --benchmark-enable``).
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from conductor_gym.graders import grade
from conductor_gym.graders import math as math_grader

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("math_verify") is None, reason="math-verify is not installed"
)

PAIRS: list[tuple[str, str, bool]] = [
    (r"Combining the terms, the answer is $\boxed{\frac{3}{4}}$.", r"\frac{3}{4}", True),
    (r"So the probability is \boxed{0.75}.", r"\frac{3}{4}", True),
    (r"Thus $r = \boxed{2\sqrt{5}}$.", r"\sqrt{20}", True),
    (r"The point is $\boxed{\left(3, \frac{\pi}{2}\right)}$.", r"(3, \frac{\pi}{2})", True),
    (r"The remainder is $\boxed{204}$.", "204", True),
    (r"We get $\boxed{205}$.", "204", False),
    (r"Therefore \boxed{x \in [1, 2]}.", r"[1,2]", True),
    (r"The interval is $\boxed{(-\infty, 3)}$.", r"(-\infty, 3]", False),
    (r"The answer is \boxed{\text{Evelyn}}.", r"\text{Evelyn}", True),
    (r"So \boxed{10\%} of the students.", r"10\%", True),
    (r"Expanding, \boxed{x^2 + 2x + 1}.", r"(x+1)^2", True),
    (r"The roots are \boxed{1, -2}.", r"-2, 1", True),
    (r"The sum is $\boxed{\frac{11}{2}}$.", r"5.5", True),
    (r"The area is $\boxed{18\pi}$.", r"18\pi", True),
    (r"So $k = \boxed{-\frac{1}{3}}$.", r"-\frac13", True),
    (
        r"The matrix is $\boxed{\begin{pmatrix} 2 \\ -1 \end{pmatrix}}$.",
        r"\begin{pmatrix} 2 \\ -1 \end{pmatrix}",
        True,
    ),
    ("The final answer is $\\dfrac{7}{9}$. I hope it is correct.", r"\frac{7}{9}", True),
    ("**Answer:** 336", "336", True),
    (r"Hence the distance is \boxed{\sqrt{2}}.", r"\sqrt{3}", False),
    (r"The angle is $\boxed{120^\circ}$.", "120", True),
]


@pytest.fixture(scope="module", autouse=True)
def _stop_worker() -> Iterator[None]:
    yield
    math_grader.shutdown_worker()


def _one_pass() -> list[bool]:
    return [grade("math", response, reference).correct for response, reference, _ in PAIRS]


def test_pairs_are_graded_as_expected() -> None:
    assert len(PAIRS) == 20
    assert _one_pass() == [expected for _, _, expected in PAIRS]


def _clear_caches() -> None:
    import math_verify.parser
    import sympy.core.cache

    math_grader._parse_gold.cache_clear()
    for cached in ("parse_latex_cached", "parse_expr_cached", "extract_latex"):
        getattr(math_verify.parser, cached).cache_clear()
    sympy.core.cache.clear_cache()


def test_math_grades_per_second_cold(benchmark: Any) -> None:
    """The main-thread path (math-verify in-process, SIGALRM timeouts), caches cleared."""
    _one_pass()
    result = benchmark.pedantic(_one_pass, setup=_clear_caches, rounds=20, iterations=1)
    assert result == [expected for _, _, expected in PAIRS]


def test_math_grades_per_second_warm(benchmark: Any) -> None:
    """The main-thread path, caches warm."""
    _one_pass()
    result = benchmark.pedantic(_one_pass, rounds=20, iterations=1)
    assert result == [expected for _, _, expected in PAIRS]


def test_math_grades_per_second_warm_thread(benchmark: Any) -> None:
    """The helper-thread path (each check runs in the worker process), caches warm."""

    def threaded_pass() -> list[bool]:
        out: list[bool] = []
        thread = threading.Thread(target=lambda: out.extend(_one_pass()))
        thread.start()
        thread.join()
        return out

    threaded_pass()  # start the worker (and warm its caches) outside the timing
    result = benchmark.pedantic(threaded_pass, rounds=20, iterations=1)
    assert result == [expected for _, _, expected in PAIRS]
