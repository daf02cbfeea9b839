"""The "freeform" grader's cascade (choice, math-verify, numeric, string) on hand-written
answers, and the off-by-default LLM judge (never called here)."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from conductor_gym.graders import GraderError, grade, registered_graders
from conductor_gym.graders import math as math_grader
from conductor_gym.graders.freeform import (
    JUDGE_GRADER,
    extract_answer,
    looks_mathematical,
    normalize_text,
    parse_judge_reply,
    parse_numeric,
)

needs_math_verify = pytest.mark.skipif(
    importlib.util.find_spec("math_verify") is None, reason="math-verify is not installed"
)


@pytest.fixture(scope="module", autouse=True)
def _stop_worker() -> Iterator[None]:
    yield
    math_grader.shutdown_worker()


# (response, reference, metadata, rule that decides)
CORRECT: list[tuple[str, str, dict[str, Any], str]] = [
    ("**Answer:** B", "B", {}, "choice"),
    ("After weighing them all, I pick (C).", "C", {}, "choice"),
    (r"\boxed{D}", "(D)", {}, "choice"),
    ("Answer: London", "B", {"choices": ["Paris", "London", "Rome"]}, "choice"),
    ("Answer: A", "Paris", {"choices": ["Paris", "London"]}, "choice"),
    (r"\boxed{\frac{1}{2}}", "0.5", {}, "math-verify"),
    (r"Answer: $\sqrt{2}/2$", r"\frac{\sqrt{2}}{2}", {}, "math-verify"),
    ("Answer: x = 5", "5", {}, "math-verify"),
    (r"\boxed{(x+1)^2}", "x^2+2x+1", {}, "math-verify"),
    ("Answer: 3.14159", "3.1416", {}, "numeric"),
    ("Answer: 1.5e3", "1500", {}, "numeric"),
    (r"Answer: $6.02 \times 10^{23}$", "6.022e23", {"rel_tol": 0.01}, "numeric"),
    ("The answer is 0.00011", "0.0001", {"rel_tol": 0.2}, "numeric"),
    ("Answer: Paris", "paris", {}, "string"),
    ("The answer is the Eiffel Tower.", "Eiffel Tower", {}, "string"),
    ("Answer: Zürich", "zurich", {}, "string"),
    ("I thought long about it.\nMitochondria!", "mitochondria", {}, "string"),
    (r"\boxed{\text{Marie Curie}}", "marie curie", {}, "string"),
    ("Final answer: New-York", "new york", {}, "string"),
    ("Answer: \uff21\uff22\uff23 corp", "ABC Corp", {}, "string"),  # full-width letters
]

WRONG: list[tuple[str, str, dict[str, Any]]] = [
    ("Answer: C", "B", {}),
    ("Answer: Rome", "B", {"choices": ["Paris", "London", "Rome"]}),
    ("I cannot decide between the options.", "B", {"choices": ["Paris", "London"]}),
    (r"\boxed{\frac{1}{3}}", "0.5", {}),
    ("Answer: 3.2", "3.1416", {}),
    ("Answer: 3.14159", "3.1416", {"rel_tol": 1e-9}),
    ("Answer: -3", "3", {}),
    ("Answer: 12", "1,2", {}),
    ("Answer: (1, 2)", "12", {}),
    ("Answer: no", "on", {}),
    ("Answer: London", "Paris", {}),
    ("Answer: Curie", "Marie Curie", {}),
    ("", "Paris", {}),
    ("Answer: three", "3", {}),
]


@pytest.mark.parametrize(("response", "reference", "metadata", "rule"), CORRECT)
def test_correct_answers_and_the_deciding_rule(
    response: str, reference: str, metadata: dict[str, Any], rule: str
) -> None:
    if rule == "math-verify" and importlib.util.find_spec("math_verify") is None:
        pytest.skip("math-verify is not installed")
    verdict = grade("freeform", response, reference, **metadata)
    assert verdict.correct, verdict
    assert verdict.reason.startswith(rule), verdict.reason


@needs_math_verify
@pytest.mark.parametrize(("response", "reference", "metadata"), WRONG)
def test_wrong_answers(response: str, reference: str, metadata: dict[str, Any]) -> None:
    verdict = grade("freeform", response, reference, **metadata)
    assert not verdict.correct, verdict


@needs_math_verify
def test_wrong_reasons_say_what_was_tried() -> None:
    verdict = grade("freeform", "Answer: London", "Paris")
    assert verdict.reason.startswith("no rule matched")
    assert "normalised strings differ" in verdict.reason
    numeric = grade("freeform", "Answer: 3.2", "3.1416")
    assert numeric.reason.startswith("numeric") and "not within" in numeric.reason
    none = grade("freeform", "   \n ", "Paris")
    assert none.extracted is None and none.reason == "no answer found in the response"


def test_choice_outside_the_options_is_a_grader_error() -> None:
    with pytest.raises(GraderError, match="not one of"):
        grade("freeform", "Answer: A", "E", choices=["a", "b"])


def test_bad_rel_tol_is_a_grader_error() -> None:
    with pytest.raises(GraderError, match="rel_tol"):
        grade("freeform", "Answer: 1", "1.0001", rel_tol="loose")


@needs_math_verify
def test_grading_from_a_thread_matches_the_main_thread() -> None:
    cases = [(r, ref, md) for r, ref, md, _ in CORRECT[:10]] + WRONG[:6]
    expected = [grade("freeform", r, ref, **md) for r, ref, md in cases]
    got: list[Any] = []
    thread = threading.Thread(
        target=lambda: got.extend(grade("freeform", r, ref, **md) for r, ref, md in cases)
    )
    thread.start()
    thread.join(timeout=120)
    assert got == expected


def test_extract_answer() -> None:
    assert extract_answer(r"x \boxed{7} y") == ("7", "boxed")
    assert extract_answer("The answer is Paris.") == ("Paris", "anchored")
    assert extract_answer("thinking...\n**Paris**\n\n") == ("Paris", "last line")
    assert extract_answer(" \n") is None


def test_normalize_text() -> None:
    assert normalize_text("  The Eiffel   Tower. ") == "eiffel tower"
    assert normalize_text("Café") == "cafe"
    assert normalize_text("-3") == "-3"
    assert normalize_text("(1, 2)") == "(1, 2)"


def test_looks_mathematical() -> None:
    assert looks_mathematical(r"x \in [1, 2]")
    assert looks_mathematical(r"\frac{\pi}{2}")
    assert looks_mathematical("10 cm")
    assert not looks_mathematical("Paris")
    assert not looks_mathematical(r"\text{no}")


def test_parse_numeric() -> None:
    assert parse_numeric("1.5e3") == 1500
    assert parse_numeric(r"2 \times 10^{-3}") == parse_numeric("0.002")
    assert parse_numeric("3/4") == parse_numeric("0.75")
    assert parse_numeric("1e999") is None
    assert parse_numeric("e5") is None


# -- the LLM judge: off by default, never called ------------------------------------------


def test_judge_is_not_registered_by_default() -> None:
    assert JUDGE_GRADER not in registered_graders()
    with pytest.raises(KeyError):
        grade(JUDGE_GRADER, "Answer: Paris", "Paris")


def test_judge_reply_parsing() -> None:
    assert parse_judge_reply("CORRECT") is True
    assert parse_judge_reply("incorrect.") is False
    assert parse_judge_reply("Verdict: INCORRECT, because ...") is False
    assert parse_judge_reply("I am not sure") is None
    assert parse_judge_reply("The answer is not correct.") is False
    assert parse_judge_reply("CORRECT or INCORRECT?") is None
