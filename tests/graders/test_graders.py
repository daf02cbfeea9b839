"""The built-in graders and the answer-extraction helpers, on hand-written responses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from conductor_gym.graders import (
    Grade,
    GraderError,
    get_grader,
    grade,
    register_grader,
    registered_graders,
)
from conductor_gym.graders.countdown import MAX_EXPRESSION_CHARS, evaluate_expression
from conductor_gym.graders.extract import (
    anchored_answers,
    clean_answer,
    final_answer,
    last_boxed,
)
from conductor_gym.graders.numeric import parse_number

# -- extraction helpers -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (r"first \boxed{1} then \boxed{2}", "2"),
        (r"\boxed{\frac{3}{4}}", r"\frac{3}{4}"),
        (r"\fbox{7}", "7"),
        (r"\boxed {12}", "12"),
        (r"\boxed{5} and an unclosed \boxed{6", "5"),
        (r"\boxed{\boxed{9}}", "9"),
        ("no box here", None),
        (r"\boxed{", None),
    ],
)
def test_last_boxed(text: str, expected: str | None) -> None:
    assert last_boxed(text) == expected


def test_last_boxed_is_fast_on_many_unclosed_boxes() -> None:
    text = r"\boxed{" * 20_000 + r"\boxed{3}"
    assert last_boxed(text) == "3"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The final answer is 42.", ["42"]),
        ("Answer: 7\nlater, the answer is 8", ["7", "8"]),
        ("**Answer:** $x$", ["x"]),
        ("**Final Answer**: 3", ["3"]),
        ("**Answer:**\n\n  19\n", ["19"]),
        ("answers: 1, 2", []),
        ("no anchor at all", []),
    ],
)
def test_anchored_answers(text: str, expected: list[str]) -> None:
    assert [value for _, value in anchored_answers(text)] == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  $42$. ", "42"),
        ("**B**", "B"),
        (r"\(\frac{1}{2}\)", r"\frac{1}{2}"),
        (r"\text{seven}", "seven"),
        ("`x + 1`;", "x + 1"),
        ("$5", "5"),
    ],
)
def test_clean_answer(raw: str, expected: str) -> None:
    assert clean_answer(raw) == expected


def test_final_answer_prefers_box_over_anchor() -> None:
    assert final_answer(r"Answer: 3. Hmm, no: \boxed{4}") == ("4", "boxed")
    assert final_answer("The answer is 3.") == ("3", "anchored")
    assert final_answer("nothing") is None


# -- numeric ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "reference", "extracted"),
    [
        (r"So the result is \boxed{42}.", "42", "42"),
        (r"\boxed{1,234}", "1234", "1,234"),
        (r"\boxed{-5}", "-5", "-5"),
        (r"\boxed{+5}", "5", "+5"),
        (r"\boxed{3/4}", "0.75", "3/4"),
        (r"\boxed{0.75}", "3/4", "0.75"),
        (r"\boxed{\frac{3}{4}}", "0.75", r"\frac{3}{4}"),
        (r"\boxed{\dfrac{-3}{4}}", "-3/4", r"\dfrac{-3}{4}"),
        (r"\boxed{$42$}", "42", "42"),
        (r"\boxed{42.0}", "42", "42.0"),
        (r"\boxed{x = 7}", "7", "x = 7"),
        (r"\boxed{12 \text{ apples}}", "12", "12"),
        ("The final answer is $\\frac{3}{4}$.", "0.75", r"\frac{3}{4}"),
        ("**Answer:** 17", "17", "17"),
        ("Answer: 1,234 apples", "1234", "1,234"),
        ("The answer is 12 because 3 * 4 = 12.", "12", "12"),
        ("Answer: 42\nI checked that the answer is correct.", "42", "42"),
        ("I get 5 - 3 = 2, and doubling gives 4", "4", "4"),
    ],
)
def test_numeric_accepts_equivalent_forms(response: str, reference: str, extracted: str) -> None:
    verdict = grade("numeric", response, reference)
    assert verdict.correct, verdict
    assert verdict.extracted == extracted


@pytest.mark.parametrize(
    ("response", "reference", "extracted"),
    [
        (r"\boxed{41}", "42", "41"),
        (r"\boxed{-42}", "42", "-42"),
        (r"\boxed{3/5}", "0.75", "3/5"),
        (r"\boxed{0.749}", "3/4", "0.749"),
        (r"\boxed{1,235}", "1234", "1,235"),
        # The box wins over an earlier correct anchored answer.
        (r"Answer: 42. On reflection \boxed{43}", "42", "43"),
        # The last anchored phrase wins over an earlier one.
        ("Answer: 42\nWait, the final answer is 44.", "42", "44"),
        # The anchored answer wins over a later stray number.
        ("The answer is 8, found in 42 seconds", "42", "8"),
        # A claimed "because ... = 13" does not replace the stated answer.
        ("The answer is 12 because 3 * 4 = 13.", "13", "12"),
    ],
)
def test_numeric_rejects_different_values(response: str, reference: str, extracted: str) -> None:
    verdict = grade("numeric", response, reference)
    assert not verdict.correct, verdict
    assert verdict.extracted == extracted


def test_numeric_reason_names_the_rule() -> None:
    assert grade("numeric", r"\boxed{3}", "3").reason.startswith("boxed")
    assert grade("numeric", "Answer: 3", "3").reason.startswith("anchored")
    last = grade("numeric", "first 2 then 3", "3")
    assert last.correct and last.reason.startswith("last number")
    assert last.extracted == "3"


def test_numeric_fallback_keeps_the_sign_only_when_it_is_a_sign() -> None:
    assert grade("numeric", "the value drops to -7", "-7").correct
    # In "5-3" the "-" is subtraction, so the last number is 3, not -3.
    verdict = grade("numeric", "compute 5-3", "-3")
    assert not verdict.correct and verdict.extracted == "3"


def test_numeric_without_a_number_is_wrong_with_nothing_extracted() -> None:
    verdict = grade("numeric", "I could not reach a confident final answer.", "42")
    assert verdict == Grade(False, None, "no number found in the response")


def test_numeric_box_without_a_number_is_wrong_and_says_so() -> None:
    verdict = grade("numeric", r"Perhaps 42. \boxed{\text{unknown}}", "42")
    assert not verdict.correct
    assert verdict.extracted == "unknown"
    assert "not a number" in verdict.reason


def test_numeric_zero_denominator_is_not_a_number() -> None:
    assert parse_number("3/0") is None
    assert parse_number(r"\frac{1}{0}") is None
    assert not grade("numeric", r"\boxed{3/0}", "3").correct


@pytest.mark.parametrize("reference", ["abc", "", "1/0", "4 apples"])
def test_numeric_malformed_reference_is_a_grader_error(reference: str) -> None:
    with pytest.raises(GraderError, match="reference"):
        grade("numeric", r"\boxed{4}", reference)


# -- choice -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "reference"),
    [
        ("Answer: B", "B"),
        ("**Answer:** C", "C"),
        ("**Answer:** **D**", "D"),
        (r"Final answer: \boxed{B}", "B"),
        (r"\boxed{(C)}", "C"),
        (r"\boxed{\text{A}}", "A"),
        (r"\boxed{b}", "B"),
        ("The answer is B because 17 is prime.", "B"),
        ("After checking each option, the correct option is (C).", "C"),
        ("The final answer is option D.", "D"),
        ("Let me think.\n(B)\n", "B"),
        ("It has to be the last one, so (D).", "D"),
        ("Answer: A, since the others are even.", "A"),
        ("Answer: B\nWait, that is wrong. The answer is C.", "C"),
        ("answer: (A) 17", "A"),
    ],
)
def test_choice_extracts_the_answer_letter(response: str, reference: str) -> None:
    verdict = grade("choice", response, reference)
    assert verdict.correct, verdict
    assert verdict.extracted == reference


@pytest.mark.parametrize(
    ("response", "reference", "extracted"),
    [
        ("Answer: B", "C", "B"),
        (r"Answer: C. On reflection \boxed{A}", "C", "A"),
        ("The answer is (D).", "A", "D"),
        # The anchored letter is later than the boxed one, so it is the answer.
        (r"\boxed{A} is tempting, but the answer is B", "A", "B"),
    ],
)
def test_choice_wrong_letter(response: str, reference: str, extracted: str) -> None:
    verdict = grade("choice", response, reference)
    assert not verdict.correct
    assert verdict.extracted == extracted


@pytest.mark.parametrize(
    "response",
    [
        "A good approach is to test each number for small factors.",
        "Answer: A good approach is to test each number for small factors.",
        "Option A is tempting but option B looks better.",
        "I am not sure which one it is.",
        "The answer is a prime number.",
        "",
    ],
)
def test_choice_prose_without_an_answer_gives_nothing(response: str) -> None:
    verdict = grade("choice", response, "A")
    assert verdict == Grade(False, None, "no option letter (A-D) found")


def test_choice_letters_beyond_num_choices_are_not_options() -> None:
    assert grade("choice", "The answer is E", "A").extracted is None
    verdict = grade("choice", "The answer is E", "E", num_choices=5)
    assert verdict.correct and verdict.extracted == "E"
    # The last *valid* letter counts when a later letter is out of range.
    assert grade("choice", "Answer: B\nAnswer: F", "B").correct


@pytest.mark.parametrize(
    ("reference", "metadata"),
    [("E", {}), ("AB", {}), ("", {}), ("A", {"num_choices": 0}), ("A", {"num_choices": 27})],
)
def test_choice_malformed_reference_is_a_grader_error(
    reference: str, metadata: dict[str, Any]
) -> None:
    with pytest.raises(GraderError):
        grade("choice", "Answer: A", reference, **metadata)


# -- countdown ----------------------------------------------------------------------------

NUMBERS = [25, 5, 4, 3]


@pytest.mark.parametrize(
    ("response", "extracted"),
    [
        (r"\boxed{(25 - 5) * 4}", "(25 - 5) * 4"),
        (r"\boxed{(25-5)*4 = 80}", "(25-5)*4"),
        ("Answer: (25 - 5) \\times 4", "(25 - 5) * 4"),
        ("Answer: (25 \u2212 5) \u00d7 4", "(25 - 5) * 4"),  # Unicode minus and times
        ("Answer: 4 * (25 - 5) = 80", "4 * (25 - 5)"),
        (r"\boxed{\left(25 - 5\right) \cdot 4}", "(25 - 5) * 4"),
        ("**Answer:** $4 \\cdot (25 - 5)$", "4 * (25 - 5)"),
        (r"\boxed{-(5 - 25) * 4}", "-(5 - 25) * 4"),
        ("Answer: ((25 - 5)) * (4)", "((25 - 5)) * (4)"),
    ],
)
def test_countdown_accepts_valid_expressions(response: str, extracted: str) -> None:
    verdict = grade("countdown", response, "80", numbers=NUMBERS)
    assert verdict.correct, verdict
    assert verdict.extracted == extracted


def test_countdown_exact_division_and_intermediate_fractions() -> None:
    assert grade("countdown", r"\boxed{25 * 4 / 5}", "20", numbers=NUMBERS).correct
    # 5 / 3 is not an integer, but (5 / 3) * 3 is exactly 5.
    assert grade("countdown", r"\boxed{(5 / 3) * 3}", "5", numbers=[5, 3, 3]).correct
    assert grade("countdown", r"\boxed{\frac{100}{4} + 3}", "28", numbers=[100, 4, 3]).correct


def test_countdown_not_all_numbers_needed() -> None:
    assert grade("countdown", "Answer: 25 + 5", "30", numbers=NUMBERS).correct


@pytest.mark.parametrize(
    ("response", "numbers", "reason_part"),
    [
        ("Answer: 25 * 4 - 5 * 4", NUMBERS, "4 (used too often)"),
        ("Answer: 20 * 4", NUMBERS, "20 (not given)"),
        ("Answer: 4 / (5 - 5)", [5, 5, 4], "division by zero"),
        ("Answer: (25 - 5) * 3", NUMBERS, "= 60, not the target 80"),
        ("Answer: 25 / 3", NUMBERS, "= 25/3, not the target 80"),
        ("Answer: 2 ** 10", [2, 10], "Pow is not allowed"),
        ("Answer: 25 % 5", NUMBERS, "Mod is not allowed"),
        ("Answer: __import__('os').getcwd()", NUMBERS, "not allowed"),
        ("Answer: 4.0 * 20", [4, 20], "4.0 is not an integer"),
        ("Answer: +25 + 55", [25, 55], "UAdd is not allowed"),
        ("Answer: (25 - 5", NUMBERS, "not an arithmetic expression"),
        ("Answer: 25 4", NUMBERS, "not an arithmetic expression"),
        ("Answer: x * 4", NUMBERS, "Name is not allowed"),
        ("Answer: " + "1 + " * 100 + "1", [1] * 101, "longer than"),
        ("I could not find one.", NUMBERS, "no expression found"),
    ],
)
def test_countdown_rejections_say_why(response: str, numbers: list[int], reason_part: str) -> None:
    verdict = grade("countdown", response, "80", numbers=numbers)
    assert not verdict.correct
    assert reason_part in verdict.reason, verdict.reason


def test_countdown_number_reuse_is_checked_as_a_multiset() -> None:
    assert grade("countdown", r"\boxed{5 * 5 + 55}", "80", numbers=[5, 5, 55]).correct
    verdict = grade("countdown", r"\boxed{5 * 5 * 5 - 45}", "80", numbers=[5, 5, 45])
    assert not verdict.correct and "5 (used too often)" in verdict.reason


def test_countdown_length_bound_is_the_documented_constant() -> None:
    short = "+".join(["1"] * (MAX_EXPRESSION_CHARS // 2))  # 199 characters
    assert evaluate_expression(short)[0] == MAX_EXPRESSION_CHARS // 2
    with pytest.raises(ValueError, match="longer than"):
        evaluate_expression(short + "+1")


@pytest.mark.parametrize(
    ("reference", "metadata"),
    [
        ("eighty", {"numbers": NUMBERS}),
        ("80", {}),
        ("80", {"numbers": "25 5 4 3"}),
        ("80", {"numbers": [25, 5.0]}),
    ],
)
def test_countdown_malformed_task_is_a_grader_error(
    reference: str, metadata: dict[str, Any]
) -> None:
    with pytest.raises(GraderError):
        grade("countdown", r"\boxed{(25 - 5) * 4}", reference, **metadata)


# -- registry -----------------------------------------------------------------------------


def test_builtin_graders_are_registered() -> None:
    assert {"numeric", "choice", "countdown"} <= set(registered_graders())
    assert get_grader("numeric")(r"\boxed{2}", "2", {}).correct


def test_grade_wraps_a_broken_grader_in_grader_error() -> None:
    name = "test-broken-grader"

    def broken(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
        return Grade(1 / len(response) > 0, None, "unreachable for an empty response")

    if name not in registered_graders():
        register_grader(name)(broken)
    assert grade(name, "x", "x").correct  # the grader itself works on normal input
    with pytest.raises(GraderError, match="ZeroDivisionError") as caught:
        grade(name, "", "x")
    assert isinstance(caught.value.__cause__, ZeroDivisionError)


def test_unknown_grader_lists_the_registered_names() -> None:
    with pytest.raises(KeyError, match="numeric"):
        grade("no-such-grader", "1", "1")
