"""How numbers are written, normalised before any family parser reads a text.

* thousands separators between digit groups (``1,234``, ``1 234`` with a thin or
  no-break space, ``1_234``) are removed;
* small numbers written as words (``zero`` .. ``ninety-nine``, ``a hundred`` /
  ``one hundred``) become digits, case-insensitively;
* Unicode and typographic operators become ASCII: the minus sign (U+2212) and the en
  dash become ``-``, the multiplication sign and the dots U+00B7 and U+22C5 ``*``, the
  division sign ``/``.

Normalisation never moves text across lines, so code blocks keep their layout.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["normalise"]

_UNITS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_UNIT_VALUE = {w: i for i, w in enumerate(_UNITS)}
_TENS_VALUE = {w: 20 + 10 * i for i, w in enumerate(_TENS)}

_WORD_NUMBER = re.compile(
    r"\b(?:(?P<hundred>(?:a|one)[ -]hundred)"
    rf"|(?P<tens>{'|'.join(_TENS)})(?:[ -](?P<unit>{'|'.join(_UNITS[1:10])}))?"
    rf"|(?P<small>{'|'.join(_UNITS)}))\b",
    re.IGNORECASE,
)
_LETTERS = re.compile(r"[a-z]+")
_NUMBER_WORDS = frozenset([*_UNITS, *_TENS, "hundred"])
_SEPARATED = re.compile(r"(?<![\d.,])\d{1,3}(?:[,\u2009\u202f\u00a0_]\d{3})+(?![\d])")
_SYMBOLS = str.maketrans(
    {"\u2212": "-", "\u2013": "-", "\u00d7": "*", "\u00b7": "*", "\u22c5": "*", "\u00f7": "/"}
)


def _word_value(match: re.Match[str]) -> str:
    if match.group("hundred"):
        return "100"
    tens = match.group("tens")
    if tens:
        unit = match.group("unit")
        return str(_TENS_VALUE[tens.lower()] + (_UNIT_VALUE[unit.lower()] if unit else 0))
    return str(_UNIT_VALUE[match.group("small").lower()])


def _unseparate(match: re.Match[str]) -> str:
    return re.sub(r"\D", "", match.group(0))


@lru_cache(maxsize=1 << 14)
def normalise(text: str) -> str:
    """``text`` with numbers and operators written one way (module docstring)."""
    text = text.translate(_SYMBOLS)
    if not _NUMBER_WORDS.isdisjoint(_LETTERS.findall(text.lower())):
        text = _WORD_NUMBER.sub(_word_value, text)
    if "," in text or "_" in text or "\u2009" in text or "\u202f" in text or "\u00a0" in text:
        text = _SEPARATED.sub(_unseparate, text)
    return text
