"""The problem interface every family parser returns, and what they share.

A :class:`Problem` is one problem instance found in a text: which family's form it has,
a canonical ``key`` (equal for restatements of the same problem: reordered operands,
reworded lead-ins, other number formats), its correct final answer computed by the
family's own solver, and a structural ``size`` (the raw difficulty score the simulated
workers turn into a difficulty). It can judge a final answer (:meth:`Problem.check`),
name plausible wrong answers (:meth:`Problem.slips`), and say what it becomes when
some of its sub-problems are already solved (:meth:`Problem.reduce`).

Perception is total: every finder returns the problems it can read in any text and
raises nothing, with its work bounded on huge inputs (each module says how). A number
longer than :data:`MAX_DIGITS` digits is no number to any parser (:func:`read_int`).

Parsers that look for a pattern led by words try it only where one of those words stands
(:func:`word_starts`, :func:`finditer_at`): the same matches as a scan, at a fraction of
its cost.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

__all__ = [
    "MAX_DIGITS",
    "Covered",
    "Fact",
    "Problem",
    "finditer_at",
    "log_size",
    "near_misses",
    "read_int",
    "word_starts",
]

MAX_DIGITS = 4000
"""The longest number (in digits) a parser reads; below Python's own limit on
converting digits to an ``int`` (4300 by default)."""


@dataclass(frozen=True)
class Fact:
    """A stated result of a (sub-)problem: ``key`` is the problem's key, ``value`` the
    stated answer (right or wrong), ``correct`` whether it is right."""

    key: str
    value: str
    correct: bool


@dataclass(frozen=True, eq=False)
class Problem:
    """One problem instance (see the module docstring).

    Attributes:
        family: The procedural family whose form it has (``"arithmetic"``, ...).
        key: Canonical identity: restatements of one problem share it.
        answer: The correct final answer as a worker boxes it; ``None`` when the
            instance has no solution (an unreachable countdown target).
        size: Raw structural difficulty (family-specific units, larger is harder).
        start, end: Where the statement lies in the normalised text it was found in.
    """

    family: str
    key: str
    answer: str | None
    size: float
    start: int = 0
    end: int = 0
    _slips: tuple[str, ...] = field(default=(), repr=False)

    def check(self, answer: str) -> bool:
        """Whether ``answer`` (a final answer string) is a correct answer."""
        return self.answer is not None and _same(answer, self.answer)

    def slips(self) -> tuple[str, ...]:
        """Plausible wrong answers, the most common slip first."""
        return self._slips

    def sub_keys(self) -> frozenset[str]:
        """Keys of the sub-problems whose results :meth:`reduce` can use."""
        return frozenset()

    def reduce(self, facts: Mapping[str, Fact]) -> tuple[Problem, bool] | None:
        """The problem left once the stated ``facts`` (by sub-problem key) are taken
        as given, and whether every fact used was right; ``None`` if none applies."""
        return None


def _same(a: str, b: str) -> bool:
    return a.strip().rstrip(".").replace(" ", "").lower() == b.replace(" ", "").lower()


def near_misses(value: int, modulus: int | None = None) -> tuple[str, ...]:
    """Integer slips around ``value`` (off by one, by two, by ten, a sign slip)."""
    out: list[str] = []
    for delta in (1, -1, 2, 10, -2, -10):
        v = value + delta if modulus is None else (value + delta) % modulus
        if v != value and str(v) not in out:
            out.append(str(v))
    if modulus is None and value != 0:
        out.insert(2, str(-value))
    return tuple(out)


class Covered:
    """Spans of a text already taken by an instance: ``x in covered`` is whether some
    added ``[start, end)`` holds ``x``, in logarithmic time (kept as a sorted union), so
    a text with thousands of instances is read in near-linear time."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._ends: list[int] = []

    def add(self, start: int, end: int) -> None:
        """Take ``[start, end)``."""
        if end <= start:
            return
        i = bisect.bisect_left(self._ends, start)  # first span that ends at or after start
        j = bisect.bisect_right(self._starts, end)  # spans from i to j touch the new one
        if i < j:
            start = min(start, self._starts[i])
            end = max(end, self._ends[j - 1])
        self._starts[i:j] = [start]
        self._ends[i:j] = [end]

    def __contains__(self, x: int) -> bool:
        i = bisect.bisect_right(self._starts, x) - 1
        return i >= 0 and x < self._ends[i]


def read_int(digits: str) -> int | None:
    """The integer ``digits`` (decimal digits, any script) write, or ``None`` when they
    are more than :data:`MAX_DIGITS` or not an integer at all."""
    if len(digits) > MAX_DIGITS:
        return None
    try:
        return int(digits)
    except ValueError:  # not digits, or a lower int_max_str_digits than the default
        return None


def log_size(value: int | float | Fraction) -> float:
    """``log10(1 + |value|)``: the magnitude part of a size (also for values past a
    float's range, where the ``1 +`` no longer shows)."""
    try:
        return math.log10(1.0 + abs(float(value)))
    except OverflowError:
        exact = Fraction(value)
        return math.log10(abs(exact.numerator)) - math.log10(exact.denominator)


def word_starts(lowered: str, words: tuple[str, ...]) -> list[int]:
    """Every place one of ``words`` stands in ``lowered`` (also inside longer words), in
    order."""
    out: list[int] = []
    for word in words:
        at = lowered.find(word)
        while at >= 0:
            out.append(at)
            at = lowered.find(word, at + 1)
    out.sort()
    return out


def finditer_at(
    pattern: re.Pattern[str],
    text: str,
    starts: list[int] | None,
    pos: int = 0,
    endpos: int | None = None,
) -> Iterator[re.Match[str]]:
    """``pattern.finditer(text, pos, endpos)`` for a pattern whose matches are never
    empty, trying only the places in ``starts`` (sorted; they must hold every place a
    match may start), or every place when ``starts`` is ``None``: a match at a place
    sees the whole text around it, as in a scan, so the matches are the same."""
    end = len(text) if endpos is None else endpos
    if starts is None:
        yield from pattern.finditer(text, pos, end)
        return
    cursor = pos
    for start in starts[bisect.bisect_left(starts, pos) :]:
        if start >= end:
            return
        if start < cursor:
            continue
        match = pattern.match(text, start, end)
        if match is not None:
            yield match
            cursor = match.end()
