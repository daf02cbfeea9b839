r"""Grader ``"numeric"``: the response's final number equals the reference exactly.

Contract: ``reference`` is a number in any form :func:`parse_number` reads (``"42"``,
``"-3/4"``, ``"0.75"``, ``"\frac{3}{4}"``); one it cannot read raises
:class:`~conductor_gym.graders.base.GraderError` (a broken task, not a wrong answer).
A reference of clock or ratio form (``12:00``, ``3:2``) is no single number: it is
compared as text (spaces removed) with the final box or anchored value, never raised.
The response's final answer is read after any R1-style ``</think>`` by the first rule
that applies (simple-evals' ``Answer:`` line, lm-eval's GSM8K last-number match):

1. ``boxed``: the last balanced ``\boxed{...}``. A box is the model's committed answer,
   so a box with no number in it is graded wrong; earlier text is not searched. A
   strong final-answer phrase after it (``Final answer: 19``, a line ``Answer: 19``)
   supersedes it (rule 2 reads that phrase).
2. ``anchored``: the last anchored phrase ("The final answer is X", "Answer: X",
   "**Answer:** X") whose value holds a number.
3. ``last number``: the last number anywhere in the text.

Inside a box or after an anchor, the whole value is read as a number if it can be;
otherwise its leading number, otherwise its only number. Numbers compare as exact
rationals (:class:`fractions.Fraction`), so ``1,234``, ``+5``, ``3/4``, ``0.75``,
``\frac{3}{4}``, ``$42$`` and ``42.0`` are all read, and ``0.75 == 3/4``. No float is
involved anywhere. Number formats: a comma followed by groups of exactly three digits
after a leading 1-9 group is a thousands separator (``1,234`` is 1234, the English
convention Math-Verify also follows); any other comma in a whole answer is a decimal
comma (``0,111`` is 0.111, ``1,22`` is 1.22); groups of three digits separated by spaces,
``\,`` or ``{,}`` are one number (``1 000``, ``1\,000``, ``1{,}000``).
A response with no number is wrong with ``extracted=None``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any, NamedTuple

from conductor_gym.graders.base import Grade, GraderError, register_grader
from conductor_gym.graders.extract import (
    anchored_answers,
    boxes,
    clean_answer,
    graded_answer,
    strip_reasoning,
    superseding_anchor,
)

__all__ = ["NumericAnswer", "extract_number", "grade_numeric", "parse_number"]

# An unsigned decimal: thousands groups ("1,234,567") or plain digits, optional fraction.
_NUM = (
    r"(?:(?:[1-9]\d{0,2}(?:,\d{3})+(?!\d)|[1-9]\d{0,2}(?:[ \u00a0\u202f]\d{3})+(?![\d,])|\d+)"
    r"(?:\.\d+)?|\.\d+)"
)
_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")
_CLOCK = re.compile(r"\d+(?:\s*:\s*\d+)+")
_PLAIN = re.compile(rf"[+-]?{_NUM}")
_RATIO = re.compile(rf"([+-]?{_NUM})/({_NUM})")
_LATEX_FRAC = re.compile(r"([+-]?)\\frac\{([^{}]+)\}\{([^{}]+)\}")
# A number inside prose; the look-behind keeps "x2", "v1.5" and the "3" of "5-3" unsigned
# or unmatched rather than misread.
_TOKEN = re.compile(
    rf"(?<![\w.])[+-]?\\frac\{{\s*{_NUM}\s*\}}\{{\s*{_NUM}\s*\}}"
    rf"|(?<![\w.])[+-]?{_NUM}(?:/{_NUM})?"
)
_ASSIGNMENT = re.compile(r"[A-Za-z]\w*\s*=\s*([^=]*)", re.DOTALL)
_LATEX_NOISE = (("\\dfrac", "\\frac"), ("\\tfrac", "\\frac"), ("{,}", ","), ("\\,", ""))


class NumericAnswer(NamedTuple):
    """A final answer found in a response.

    Attributes:
        text: The answer as written (cleaned), or the number read from it.
        value: Its exact value, or ``None`` when the chosen answer holds no number.
        rule: Which extraction rule matched: ``"boxed"``, ``"anchored"`` or ``"last number"``.
    """

    text: str
    value: Fraction | None
    rule: str


def _normalize(text: str) -> str:
    text = text.replace("\u2212", "-")
    for old, new in _LATEX_NOISE:
        text = text.replace(old, new)
    return text


def parse_number(text: str) -> Fraction | None:
    r"""The exact value of ``text`` if it is one number, else ``None``.

    Accepts integers and decimals with an optional sign and thousands commas
    (``"-1,234.5"``), ratios (``"3/4"``), LaTeX fractions (``"\frac{3}{4}"``,
    ``\dfrac``, ``\tfrac``), math delimiters and emphasis (``"$42$"``, ``"**42**"``),
    one pair of enclosing parentheses, and a leading ``"x ="`` (a variable name only).
    A zero denominator gives ``None``.
    """
    text = _normalize(clean_answer(text))
    if assignment := _ASSIGNMENT.fullmatch(text):
        text = clean_answer(assignment[1])
    text = re.sub(r"\s+", "", text)
    if text.startswith("(") and text.endswith(")") and "(" not in text[1:-1]:
        text = text[1:-1]
    try:
        if match := _LATEX_FRAC.fullmatch(text):
            sign, top, bottom = match.groups()
            num, den = parse_number(top), parse_number(bottom)
            if num is None or den is None or den == 0:
                return None
            return -num / den if sign == "-" else num / den
        if match := _RATIO.fullmatch(text):
            num, den = Fraction(match[1].replace(",", "")), Fraction(match[2].replace(",", ""))
            return None if den == 0 else num / den
        if _PLAIN.fullmatch(text):
            return Fraction(text.replace(",", ""))
        if _DECIMAL_COMMA.fullmatch(text):
            return Fraction(text.replace(",", "."))
    except (ValueError, ZeroDivisionError):
        return None
    return None


def _number_in(value: str) -> tuple[str, Fraction] | None:
    """The number a short answer states: all of it, else its leading number, else its
    only number."""
    whole = parse_number(value)
    if whole is not None:
        return clean_answer(value), whole
    normalized = _normalize(value)
    lead = _TOKEN.match(normalized.lstrip("$*( \t"))
    tokens = [lead] if lead is not None else list(_TOKEN.finditer(normalized))
    if len(tokens) == 1 and tokens[0] is not None:
        number = parse_number(tokens[0].group())
        if number is not None:
            return tokens[0].group(), number
    return None


def extract_number(response: str) -> NumericAnswer | None:
    """The response's final numeric answer by the rules in the module docstring.

    Returns ``None`` when the response holds no number at all; a ``boxed`` answer with no
    number in it comes back with ``value=None``.
    """
    response = strip_reasoning(response)
    found_boxes = boxes(response)
    later = superseding_anchor(response, found_boxes[-1][1]) if found_boxes else None
    if later is not None and (revised := _number_in(later)) is not None:
        return NumericAnswer(revised[0], revised[1], "anchored")
    if found_boxes:
        boxed = found_boxes[-1][2]
        found = _number_in(boxed)
        if found is None:
            return NumericAnswer(clean_answer(boxed), None, "boxed")
        return NumericAnswer(found[0], found[1], "boxed")
    for _, value in reversed(anchored_answers(response)):
        found = _number_in(value)
        if found is not None:
            return NumericAnswer(found[0], found[1], "anchored")
    tokens = list(_TOKEN.finditer(_normalize(response)))
    for token in reversed(tokens):
        number = parse_number(token.group())
        if number is not None:
            return NumericAnswer(token.group(), number, "last number")
    return None


def _show(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(value)


def _grade_as_text(response: str, reference: str) -> Grade:
    """A clock or ratio reference (``12:00``) against the final box or anchored value."""
    found = graded_answer(response)
    if found is None:
        return Grade(False, None, "no boxed or anchored answer to compare with the reference")
    answer, rule = found
    same = re.sub(r"\s+", "", answer) == re.sub(r"\s+", "", reference)
    relation = "matches" if same else "does not match"
    return Grade(same, answer, f"{rule}: {answer!r} {relation} the reference {reference!r} as text")


@register_grader("numeric")
def grade_numeric(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    """Grade ``response`` as correct when its final number equals ``reference`` exactly."""
    expected = parse_number(reference)
    if expected is None and _CLOCK.fullmatch(reference.strip()):
        return _grade_as_text(response, reference.strip())
    if expected is None:
        raise GraderError(f"numeric: the reference {reference!r} is not a number")
    found = extract_number(response)
    if found is None:
        return Grade(False, None, "no number found in the response")
    if found.value is None:
        return Grade(False, found.text, f"boxed: the boxed answer {found.text!r} is not a number")
    if found.value == expected:
        reason = f"{found.rule}: {found.text!r} equals the reference {_show(expected)}"
        return Grade(True, found.text, reason)
    reason = (
        f"{found.rule}: {found.text!r} (= {_show(found.value)}) "
        f"differs from the reference {_show(expected)}"
    )
    return Grade(False, found.text, reason)
