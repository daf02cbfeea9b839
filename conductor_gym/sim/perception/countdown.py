"""Countdown instances in prose: given numbers, a target; solved by exhaustive search.

An instance is a list of two or more numbers introduced by ``numbers``, ``using``,
``from`` or ``with`` (``3, 5, 7 and 25``) together with a target introduced by a
target phrase (``equals``, ``equal to``, ``make``, ``reach``, ``target``, ``get``,
``obtain``, ``total``, ``result in``) within 400 characters, the nearest one after
the list preferred. The key is the sorted numbers and the target, so restatements (reordered
numbers, another wording) are one instance; an instance over a subset of the numbers
and another target is a partial target (a sub-problem).

The solver searches every expression over sub-multisets of the numbers (``+ - * /``,
each number at most once, intermediate values positive integers) and keeps a shortest
one. Size: numbers a shortest solution needs + 0.6 * log10(target) + 0.1 * numbers
given - 0.3 * ln(1 + subsets that reach the target).

Work is bounded whatever the text: a list or target with a number longer than
:data:`MAX_NUMBER_DIGITS` digits is no instance (the search's expressions would grow
with every digit).
"""

from __future__ import annotations

import heapq
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from conductor_gym.sim.perception.arithmetic import parse_expression, value
from conductor_gym.sim.perception.base import (
    Covered,
    Fact,
    Problem,
    finditer_at,
    read_int,
    word_starts,
)

__all__ = ["MAX_NUMBER_DIGITS", "CountdownProblem", "find_countdown", "solve_countdown"]

MAX_NUMBER_DIGITS = 100

_LIST = re.compile(
    r"\b(?:numbers?|using|from|with)\b[:\s]*(?:the\s+)?(?:numbers?\s*)?"
    r"(?P<list>\d+(?:\s*(?:,|\band\b|&)\s*\d+)+)",
    re.IGNORECASE,
)
_TARGET = re.compile(
    r"\b(?:equals?|equal\s+to|makes?|reach(?:es)?|target(?:\s+(?:number|value))?"
    r"(?:\s+(?:is|of))?|get|obtain|totals?|results?\s+in)\b\s*[:=]?\s*(?P<target>\d+)",
    re.IGNORECASE,
)
_ANY_LIST = re.compile(r"\d\s*(?:,|\band\b|&)\s*\d")  # where a number list may be
# The words a match of _LIST / _TARGET starts with (lower case): in an ASCII text the
# patterns are tried only where one of them stands.
_LIST_WORDS = ("number", "using", "from", "with")
_TARGET_WORDS = ("equal", "make", "reach", "target", "get", "obtain", "total", "result")
_DIGITS = re.compile(r"\d+")
_MAX_VALUES = 4000  # per subset: bounds the search for six numbers


@lru_cache(maxsize=1 << 12)
def _values(numbers: tuple[int, ...]) -> list[dict[int, str]]:
    """For each bitmask over ``numbers``: reachable value -> one expression (the first
    found, at most :data:`_MAX_VALUES` a mask)."""
    n = len(numbers)
    table: list[dict[int, str]] = [{} for _ in range(1 << n)]
    for i, x in enumerate(numbers):
        table[1 << i][x] = str(x)
    for mask in range(1, 1 << n):
        if mask & (mask - 1) == 0:
            continue
        out = table[mask]
        sub = (mask - 1) & mask
        while sub and len(out) < _MAX_VALUES:
            other = mask ^ sub
            if sub < other:  # each split once; both operand orders are tried below
                _combine_into(out, table[sub], table[other])
            sub = (sub - 1) & mask
    return table


def _combine_into(out: dict[int, str], left: dict[int, str], right: dict[int, str]) -> None:
    """Add to ``out`` (up to :data:`_MAX_VALUES` values) each value not in it yet that
    one operation makes of a value of ``left`` and one of ``right``, in the order
    ``a + b``, ``a * b``, the positive difference, ``a / b``, ``b / a`` (exact divisions
    only); an expression is written out only when its value is added."""
    for a, ea in left.items():
        for b, eb in right.items():
            if len(out) >= _MAX_VALUES:
                return
            v = a + b
            if v not in out:
                out[v] = f"{ea} + {eb}"
            v = a * b
            if v not in out and len(out) < _MAX_VALUES:
                out[v] = f"({ea}) * ({eb})"
            if a > b:
                v = a - b
                if v not in out and len(out) < _MAX_VALUES:
                    out[v] = f"{ea} - ({eb})"
            elif b > a:
                v = b - a
                if v not in out and len(out) < _MAX_VALUES:
                    out[v] = f"{eb} - ({ea})"
            if b > 1 and a % b == 0:
                v = a // b
                if v not in out and len(out) < _MAX_VALUES:
                    out[v] = f"({ea}) / ({eb})"
            if a > 1 and b % a == 0:
                v = b // a
                if v not in out and len(out) < _MAX_VALUES:
                    out[v] = f"({eb}) / ({ea})"


@lru_cache(maxsize=1 << 12)
def solve_countdown(numbers: tuple[int, ...], target: int) -> tuple[str | None, int, int]:
    """``(a shortest expression or None, numbers it uses, subsets reaching target)``."""
    table = _values(tuple(sorted(numbers)))
    best: tuple[int, str] | None = None
    hits = 0
    for mask, found in enumerate(table):
        if target in found:
            hits += 1
            used = bin(mask).count("1")
            if best is None or used < best[0]:
                best = (used, found[target])
    if best is None:
        return None, len(numbers), 0
    # The search writes each expression with single blanks: nothing to tidy.
    return best[1], best[0], hits


@dataclass(frozen=True, eq=False)
class CountdownProblem(Problem):
    """Reach ``target`` from ``numbers`` (module docstring)."""

    numbers: tuple[int, ...] = ()
    target: int = 0

    def check(self, answer: str) -> bool:
        node = parse_expression(answer.split("=")[0])
        if node is None:
            return False
        used = Counter(read_int(t) for t in _DIGITS.findall(answer.split("=")[0]))
        if None in used or used - Counter(self.numbers):
            return False
        try:
            return value(node) == self.target
        except ArithmeticError:
            return False

    def sub_keys(self) -> frozenset[str]:
        return frozenset({"countdown-part"})

    def reduce(self, facts: Mapping[str, Fact]) -> tuple[Problem, bool] | None:
        # A stated expression over some of the numbers: the rest of the search starts
        # from its value (a partial target).
        for fact in facts.values():
            if not fact.key.startswith("countdown:"):
                continue
            part_numbers, part_target = _parse_key(fact.key)
            if not part_numbers or Counter(part_numbers) - Counter(self.numbers):
                continue
            if part_target == self.target:
                continue
            rest = list((Counter(self.numbers) - Counter(part_numbers)).elements())
            reduced = make_countdown((*rest, part_target), self.target, self.start, self.end)
            if reduced.answer is None:
                continue
            written = f"({fact.value})".replace("\\", "\\\\")  # literal in a template
            answer = re.sub(rf"\b{part_target}\b", written, reduced.answer, count=1)
            problem = CountdownProblem(
                family="countdown",
                key=self.key,
                answer=answer if fact.correct else None,
                size=reduced.size,
                start=self.start,
                end=self.end,
                _slips=self._slips,
                numbers=self.numbers,
                target=self.target,
            )
            return problem, fact.correct
        return None


def _parse_key(key: str) -> tuple[tuple[int, ...], int]:
    _, numbers, target = key.split(":")
    return tuple(int(x) for x in numbers.split(",") if x), int(target)


def make_countdown(
    numbers: tuple[int, ...], target: int, start: int = 0, end: int = 0
) -> CountdownProblem:
    """The instance ``numbers -> target``, solved."""
    ordered = tuple(sorted(numbers))
    expression, size, slips = _solved(ordered, target)
    return CountdownProblem(
        family="countdown",
        key=f"countdown:{','.join(map(str, ordered))}:{target}",
        answer=expression,
        size=size,
        start=start,
        end=end,
        _slips=slips,
        numbers=ordered,
        target=target,
    )


@lru_cache(maxsize=1 << 12)
def _solved(ordered: tuple[int, ...], target: int) -> tuple[str | None, float, tuple[str, ...]]:
    """``(answer, size, slips)``: the slips are expressions over all the numbers whose
    values come nearest the target."""
    expression, used, hits = solve_countdown(ordered, target)
    size = used + 0.6 * math.log10(1 + target) + 0.1 * len(ordered) - 0.3 * math.log(1 + hits)
    full = _values(ordered)[-1]
    near = heapq.nsmallest(4, (v for v in full if v != target), key=lambda v: (abs(v - target), v))
    return expression, size, tuple(full[v] for v in near)


def find_countdown(text: str) -> list[CountdownProblem]:
    """Countdown instances posed in ``text`` (module docstring)."""
    out: list[CountdownProblem] = []
    list_starts: list[int] | None = None
    target_starts: list[int] | None = None
    if text.isascii():  # lower() keeps places, and IGNORECASE is plain ASCII case
        lowered = text.lower()
        list_starts = word_starts(lowered, _LIST_WORDS)
        if not list_starts:
            return out
        target_starts = word_starts(lowered, _TARGET_WORDS)
    seen = Covered()
    for run in _ANY_LIST.finditer(text):
        if run.start() in seen:
            continue
        window = (max(0, run.start() - 40), run.end() + 200)
        listed = next(finditer_at(_LIST, text, list_starts, *window), None)
        if listed is None:
            continue
        seen.add(listed.start(), listed.end())
        listed_digits = _DIGITS.findall(listed.group("list"))
        if not 2 <= len(listed_digits) <= 6 or any(
            len(x) > MAX_NUMBER_DIGITS for x in listed_digits
        ):
            continue
        numbers = tuple(int(x) for x in listed_digits)
        window_start = max(0, listed.start() - 400)
        # The nearest target phrase after the list, else the nearest before it.
        best = None
        for phrase in finditer_at(_TARGET, text, target_starts, window_start, listed.end() + 400):
            if listed.start() <= phrase.start() < listed.end():
                continue
            after = phrase.start() >= listed.end()
            distance = abs(phrase.start() - listed.start()) - (10_000 if after else 0)
            if best is None or distance < best[0]:
                best = (distance, phrase)
        if best is None:
            continue
        target_match = best[1]
        if len(target_match.group("target")) > MAX_NUMBER_DIGITS:
            continue
        target = int(target_match.group("target"))
        start = min(listed.start(), target_match.start())
        end = max(listed.end(), target_match.end())
        out.append(make_countdown(numbers, target, start, end))
    return out
