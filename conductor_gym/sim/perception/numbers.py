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


_SEPARATORS = (",", "_", "\u2009", "\u202f", "\u00a0")
_GROUP = re.compile(r"\d[,\u2009\u202f\u00a0_]\d{3}")  # in every _SEPARATED match
_NOT_DIGIT = re.compile(r"\D")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")
# ASCII bytes: letters to lower case, anything else to a blank (so split() gives the
# [a-z]+ runs of the lowered text).
_RUNS_TABLE = bytes(c + 32 if 65 <= c <= 90 else c if 97 <= c <= 122 else 32 for c in range(256))
_NUMBER_WORDS_BYTES = frozenset(w.encode() for w in _NUMBER_WORDS)


def _word_value(match: re.Match[str]) -> str:
    if match.group("hundred"):
        return "100"
    tens = match.group("tens")
    if tens:
        unit = match.group("unit")
        return str(_TENS_VALUE[tens.lower()] + (_UNIT_VALUE[unit.lower()] if unit else 0))
    return str(_UNIT_VALUE[match.group("small").lower()])


def _unseparate(match: re.Match[str]) -> str:
    return _NOT_DIGIT.sub("", match.group(0))


def _word_starts(lowered: str, words: frozenset[str]) -> list[int]:
    """In an ASCII ``lowered`` text, where a :data:`_WORD_NUMBER` match may start: each
    of the number ``words`` standing as a whole ``[a-z]+`` run, and for ``hundred`` the
    places of an ``a`` / ``one`` before it."""
    starts: list[int] = []
    size = len(lowered)
    for word in words:
        at = lowered.find(word)
        while at >= 0:
            end = at + len(word)
            if (at == 0 or lowered[at - 1] not in _ASCII_LETTERS) and (
                end == size or lowered[end] not in _ASCII_LETTERS
            ):
                starts.extend((at - 4, at - 2) if word == "hundred" else (at,))
            at = lowered.find(word, at + 1)
    # A lead before the text's start is no place (a negative position reads as 0).
    return [at for at in starts if at >= 0]


def _words_to_digits(text: str) -> str:
    """``_WORD_NUMBER.sub(_word_value, text)`` where some ``[a-z]+`` run of the lowered
    text is a number word, else ``text``. For ASCII text the regex is tried only where
    a match may start (:func:`_word_starts`), in order, as ``sub`` would meet them."""
    if not text.isascii():
        if _NUMBER_WORDS.isdisjoint(_LETTERS.findall(text.lower())):
            return text
        return _WORD_NUMBER.sub(_word_value, text)
    runs = _NUMBER_WORDS_BYTES.intersection(text.encode().translate(_RUNS_TABLE).split())
    if not runs:
        return text
    starts = _word_starts(text.lower(), frozenset(w.decode() for w in runs))
    parts: list[str] = []
    last = 0
    for start in sorted(starts):
        if start < last:
            continue
        match = _WORD_NUMBER.match(text, start)
        if match is not None:
            parts.append(text[last:start])
            parts.append(_word_value(match))
            last = match.end()
    parts.append(text[last:])
    return "".join(parts)


def _has_group(text: str) -> bool:
    """Whether a digit, a separator and three digits follow one another somewhere (as
    in every match of :data:`_SEPARATED`), looked for at the separators only."""
    for separator in _SEPARATORS:
        at = text.find(separator, 1)
        while at >= 0:
            if _GROUP.match(text, at - 1) is not None:
                return True
            at = text.find(separator, at + 1)
    return False


@lru_cache(maxsize=1 << 14)
def normalise(text: str) -> str:
    """``text`` with numbers and operators written one way (module docstring)."""
    if not text.isascii():  # every symbol mapped is outside ASCII
        text = text.translate(_SYMBOLS)
    text = _words_to_digits(text)
    if _has_group(text):
        text = _SEPARATED.sub(_unseparate, text)
    return text
