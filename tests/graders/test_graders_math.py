"""The "math" grader (math-verify) on hand-written MATH500/AIME-style answers.

Covers equivalent and non-equivalent forms, the extraction rules, input bounds, the lazy
import, and both timeout paths: in the main thread (math-verify's SIGALRM timeouts) and
from a helper thread (the worker process with a wall-clock limit).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import pytest

from conductor_gym.graders import Grade, GraderError, grade
from conductor_gym.graders import math as math_grader
from conductor_gym.graders.math import (
    MAX_ANSWER_CHARS,
    MathCheck,
    ReferenceParseError,
    math_equal,
    verify_answer,
)

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("math_verify") is None, reason="math-verify is not installed"
)

T = TypeVar("T")

# A power tower sympy cannot evaluate in reasonable time: only a timeout stops it.
SLOW_ANSWER = r"\boxed{9^{9^{9}}}"


def in_thread(fn: Callable[[], T]) -> T:
    """Run ``fn`` in a fresh (non-main) thread and return its result or raise its error."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=120)
    assert not thread.is_alive(), "grading thread hung"
    if "error" in box:
        raise box["error"]
    value: T = box["value"]
    return value


@pytest.fixture(scope="module", autouse=True)
def _stop_worker() -> Iterator[None]:
    yield
    math_grader.shutdown_worker()


EQUIVALENT = [
    (r"so \boxed{\frac{1}{2}}", r"\frac{1}{2}"),
    (r"\boxed{0.5}", r"\frac{1}{2}"),
    (r"\boxed{\dfrac12}", r"\frac{1}{2}"),
    (r"\boxed{1/2}", r"\frac{1}{2}"),
    (r"\boxed{3^{1/2}}", r"\sqrt{3}"),
    (r"\boxed{\sqrt{8}}", r"2\sqrt{2}"),
    (r"\boxed{\left(3, \frac{\pi}{2}\right)}", r"(3, \frac{\pi}{2})"),
    (r"\boxed{10\%}", r"10\%"),
    (r"\boxed{10}", r"10\%"),
    (r"\boxed{[1,2]}", r"x \in [1, 2]"),
    (r"\boxed{\text{Evelyn}}", r"\text{Evelyn}"),
    (r"\boxed{Evelyn}", r"\text{Evelyn}"),
    (r"\boxed{204}", "204"),
    (r"\boxed{204.0}", "204"),
    (r"\boxed{4\frac{2}{3}}", r"\frac{14}{3}"),
    (r"\boxed{(x+1)^2}", "x^2+2x+1"),
    (r"\boxed{\{2, 1\}}", r"\{1,2\}"),
    (r"\boxed{x = 5}", "5"),
    (r"\boxed{90^\circ}", "90"),
    (r"\boxed{\begin{pmatrix}1\\2\end{pmatrix}}", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}"),
    ("The final answer is $\\frac{1}{2}$. I hope it is correct.", "0.5"),
    ("**Answer:** 204", "204"),
    ("Answer: \\frac{\\sqrt{3}}{2}", "\\frac{\\sqrt3}{2}"),
    ("Adding the two parts we get $x = 17$ in the end", "17"),
]

NOT_EQUIVALENT = [
    (r"\boxed{\frac{1}{3}}", r"\frac{1}{2}"),
    (r"\boxed{0.51}", r"\frac{1}{2}"),
    (r"\boxed{\sqrt{2}}", r"\sqrt{3}"),
    (r"\boxed{(\frac{\pi}{2}, 3)}", r"(3, \frac{\pi}{2})"),
    (r"\boxed{[1,2)}", r"x \in [1, 2]"),
    (r"\boxed{\text{Bob}}", r"\text{Evelyn}"),
    (r"\boxed{205}", "204"),
    (r"\boxed{-204}", "204"),
    (r"\boxed{3.14}", r"\pi"),
    (r"\boxed{x^2+1}", "x^2+2x+1"),
    (r"\boxed{three}", "3"),
    (r"\boxed{\{1, 2, 3\}}", r"\{1,2\}"),
    # The last box wins over an earlier correct one.
    (r"First \boxed{204}, but on reflection \boxed{206}", "204"),
    # A box wins over a correct anchored answer.
    (r"Answer: 204. Hmm, no: \boxed{205}", "204"),
]


@pytest.mark.parametrize(("response", "reference"), EQUIVALENT)
def test_equivalent_forms_are_correct(response: str, reference: str) -> None:
    verdict = grade("math", response, reference)
    assert verdict.correct, verdict


@pytest.mark.parametrize(("response", "reference"), NOT_EQUIVALENT)
def test_different_answers_are_wrong(response: str, reference: str) -> None:
    verdict = grade("math", response, reference)
    assert not verdict.correct, verdict
    assert verdict.extracted is not None


def test_reason_names_the_rule_and_extracted_is_the_answer() -> None:
    boxed = grade("math", r"thus \boxed{\frac{1}{2}}.", "0.5")
    assert boxed.reason.startswith("boxed") and boxed.extracted == r"\frac{1}{2}"
    anchored = grade("math", "Answer: 12", "12")
    assert anchored.reason.startswith("anchored") and anchored.extracted == "12"
    delimited = grade("math", "The final answer is $\\sqrt{3}$. I hope it is correct.", "\\sqrt3")
    assert delimited.reason.startswith("anchored") and delimited.extracted == r"\sqrt{3}"
    fallback = grade("math", "so we find $y = 7$", "7")
    assert fallback.correct and fallback.reason.startswith("math-verify")
    assert fallback.extracted == "y = 7"


def test_no_answer_and_empty_box_are_wrong() -> None:
    assert grade("math", "I could not solve it.", "3") == Grade(
        False, None, "math-verify: no answer found in the response"
    )
    assert grade("math", "", "3").extracted is None
    empty = grade("math", r"\boxed{ }", "3")
    assert not empty.correct and empty.reason == "boxed: the box is empty"


def test_over_long_answer_is_wrong_without_calling_math_verify() -> None:
    verdict = grade("math", r"\boxed{" + "1+" * MAX_ANSWER_CHARS + "1}", "3")
    assert not verdict.correct and "over" in verdict.reason


def test_long_response_is_graded_on_its_tail() -> None:
    filler = "We consider many cases with numbers like 12, 13 and 14. " * 2_000
    assert len(filler) > math_grader.MAX_RESPONSE_CHARS
    assert grade("math", filler + " so we get $x = 41$", "41").correct
    assert grade("math", filler + r"\boxed{41}", "41").correct


def test_helpers() -> None:
    assert math_equal(r"\frac{1}{2}", "0.5")
    assert not math_equal(r"\frac{1}{2}", "0.6")
    assert verify_answer("3", "") == MathCheck(False, None)
    check = verify_answer("3", "we get $3$ apples", mode="text")
    assert check.equivalent and check.extracted == "3"


def test_broken_reference_is_a_grader_error() -> None:
    with pytest.raises(GraderError, match="reference is empty"):
        grade("math", r"\boxed{1}", "  ")
    assert issubclass(ReferenceParseError, GraderError)


def test_missing_math_verify_is_a_grader_error(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> Any:
        raise ImportError("No module named 'math_verify'")

    monkeypatch.setattr(math_grader, "_math_verify", missing)
    with pytest.raises(GraderError, match="pip install math-verify"):
        grade("math", r"\boxed{1}", "1")


def test_import_is_lazy() -> None:
    code = (
        "import sys, conductor_gym, conductor_gym.graders.math, conductor_gym.graders.freeform\n"
        "print([m for m in ('math_verify', 'sympy', 'latex2sympy2_extended', 'mpmath')"
        " if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


# -- timeouts and threads -----------------------------------------------------------------


def test_worker_does_not_rerun_an_unguarded_main_script(tmp_path: Any) -> None:
    # A script with no `if __name__ == "__main__":` guard grades from a thread: the spawn
    # worker must not execute the script again (it would print twice, or recurse).
    script = tmp_path / "unguarded.py"
    script.write_text(
        "import threading\n"
        "from conductor_gym.graders import grade\n"
        "print('top-level ran', flush=True)\n"
        "out = []\n"
        "t = threading.Thread(target=lambda: out.append(grade('math', r'\\boxed{2}', '2')))\n"
        "t.start(); t.join()\n"
        "print(out[0].correct, flush=True)\n"
    )
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["top-level ran", "True"]


def test_main_thread_timeout_is_a_grader_error(monkeypatch: pytest.MonkeyPatch) -> None:
    assert threading.current_thread() is threading.main_thread()
    monkeypatch.setattr(math_grader, "VERIFY_TIMEOUT_S", 1)
    with pytest.raises(GraderError, match="timed out"):  # raised by the timeout, not a hang
        grade("math", SLOW_ANSWER, "12")


def test_grading_from_a_thread_matches_the_main_thread() -> None:
    cases = EQUIVALENT[:6] + NOT_EQUIVALENT[:6]
    expected = [grade("math", response, reference) for response, reference in cases]
    got = in_thread(lambda: [grade("math", response, reference) for response, reference in cases])
    assert got == expected


def test_thread_path_uses_the_worker_process_not_sigalrm(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = math_grader._check_in_worker

    def spy(*args: Any) -> Any:
        calls.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(math_grader, "_check_in_worker", spy)
    assert grade("math", r"\boxed{2}", "2").correct  # main thread: in-process
    assert calls == []
    assert in_thread(lambda: grade("math", r"\boxed{2}", "2")).correct
    assert len(calls) == 1


def test_worker_timeout_from_a_thread_is_a_grader_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # math-verify's own (SIGALRM) timeout, inside the worker's main thread.
    monkeypatch.setattr(math_grader, "VERIFY_TIMEOUT_S", 1)
    with pytest.raises(GraderError, match="timed out"):
        in_thread(lambda: grade("math", SLOW_ANSWER, "12"))
    assert in_thread(lambda: grade("math", r"\boxed{12}", "12")).correct


def test_worker_wall_timeout_kills_the_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    # The parent's wall clock, for work a signal handler cannot interrupt.
    in_thread(lambda: grade("math", r"\boxed{1}", "1"))  # the worker is up
    monkeypatch.setattr(math_grader, "WORKER_TIMEOUT_S", 1.0)
    with pytest.raises(GraderError, match="worker process killed"):
        in_thread(lambda: grade("math", SLOW_ANSWER, "12"))
    # A fresh worker takes over.
    assert in_thread(lambda: grade("math", r"\boxed{\frac{2}{4}}", "0.5")).correct
