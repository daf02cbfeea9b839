"""Problem instances in free text, one parser and one real solver per family form.

:func:`find_problems` normalises how numbers are written (:mod:`.numbers`), then looks
for, in this order, programs to trace (:mod:`.trace`), lettered questions and their
free-value stems (:mod:`.choice`), countdown instances (:mod:`.countdown`), modular
problems (:mod:`.modular`) and arithmetic expressions (:mod:`.arithmetic`); the text
of each instance found is masked before the next parser reads it, so a program's
``x * 2`` or an option ``3/4`` is not also an expression, and a ``\\boxed{...}``
answer is never read as a problem. The result lists every
distinct instance (by key) in order of position, and the results the text states
(``expr = n``). Parses are cached by text.

A bag of a problem's words (its numbers and long words in any order) poses no
problem: every parser needs the form of its family (an operator between numbers,
option lines, a number list with a target phrase, a modulus after a power, a program
that parses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from conductor_gym.sim.perception.arithmetic import find_arithmetic
from conductor_gym.sim.perception.base import Fact, Problem
from conductor_gym.sim.perception.choice import find_choice
from conductor_gym.sim.perception.countdown import find_countdown
from conductor_gym.sim.perception.modular import find_modular
from conductor_gym.sim.perception.numbers import normalise
from conductor_gym.sim.perception.trace import find_trace

__all__ = ["Fact", "Found", "Problem", "find_problems", "normalise"]

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{[^{}\n]*(?:\{[^{}\n]*\}[^{}\n]*)*\}")


@dataclass(frozen=True)
class Found:
    """What one text poses and states.

    Attributes:
        problems: Distinct problem instances, in order of position.
        stated: ``(key, value, right)`` results the text states for arithmetic
            expressions (``36 + 50 = 86``), and whether each is right.
        rest: The normalised text with every instance (and stated result) blanked out:
            what the text asks besides posing its problems.
    """

    problems: tuple[Problem, ...]
    stated: tuple[tuple[str, str, bool], ...]
    rest: str


def _blank(piece: str) -> str:
    """``piece`` with every character but a newline turned into a space."""
    if "\n" not in piece:
        return " " * len(piece)
    return "\n".join(" " * len(line) for line in piece.split("\n"))


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each span blanked (newlines kept, so lines stay lines)."""
    if not spans:
        return text
    parts: list[str] = []
    last = 0
    for start, end in sorted(spans):
        start = max(start, last)
        if end <= start:
            continue
        parts.append(text[last:start])
        parts.append(_blank(text[start:end]))
        last = end
    parts.append(text[last:])
    return "".join(parts)


@lru_cache(maxsize=1 << 14)
def find_problems(text: str) -> Found:
    """Every problem instance ``text`` poses (module docstring)."""
    text = normalise(text)
    # A boxed answer is an answer (a claim), not a problem to pose: hidden from the
    # parsers, kept in ``rest``.
    boxed = [(m.start(), m.end()) for m in _BOXED.finditer(text)]
    original = text
    text = _mask(text, boxed)
    found: list[Problem] = []
    for finder in (find_trace, find_choice, find_countdown, find_modular):
        if finder is find_trace and "print(" not in text:
            continue
        hits = finder(text)
        if hits:
            found.extend(hits)
            text = _mask(text, [(p.start, p.end) for p in hits])
    arithmetic, stated = find_arithmetic(text)
    found.extend(arithmetic)
    found.sort(key=lambda p: p.start)
    seen: set[str] = set()
    distinct = []
    for problem in found:
        if problem.key not in seen:
            seen.add(problem.key)
            distinct.append(problem)
    rest = _mask(original, [(p.start, p.end) for p in found])
    return Found(tuple(distinct), tuple(stated), rest)
