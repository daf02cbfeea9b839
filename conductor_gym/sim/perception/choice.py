"""Multiple-choice stems with options, and the same stems without them.

Options are two or more consecutive lines ``A) ...`` (also ``A.``, ``A:``, ``(A)``)
with letters in order; the stem is the paragraph before them. The stem's kind is read from
its wording and numbers, and the family's solver computes the value it asks for:

=================  ===========================================  ======================
kind               recognised by                                family
=================  ===========================================  ======================
prime              "prime" (options are integers)               multiple_choice
remainder          remainder of N divided by D, N mod D         multiple_choice
gcd                greatest common divisor / gcd / HCF of a, b  multiple_choice
largest_fraction   largest / greatest / biggest (fractions)     multiple_choice
lcm                least common multiple / lcm of a, b, c       multiple_choice_hard
totient            coprime / relatively prime to n, totient     multiple_choice_hard
sigma              sum of the (positive) divisors of n          multiple_choice_hard
num_divisors       how many / number of (positive) divisors     multiple_choice_hard
=================  ===========================================  ======================

With options the answer is the letter whose option equals that value; the key is the
kind, its numbers and the set of option values, so reordered options are the same
problem (their letters differ, and the answer is read in the statement at hand). A
stem of a computing kind without options is a free-value problem (the answer is the
number): the natural sub-problem of the lettered one, whose stated result picks the
option (:meth:`ChoiceProblem.reduce`).

Size: log10 of the largest number in the stem or options + a per-kind weight + 0.2
per option.

Work is bounded whatever the text: divisor counts, divisor sums and totients are
computed for numbers up to :data:`MAX_FACTORED` (a larger one poses no problem), and
primality is decided exactly (Miller-Rabin with fixed bases) for options up to
:data:`MAX_PRIME_DIGITS` digits (options with a longer number pose none).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache

from conductor_gym.sim.perception.base import (
    MAX_DIGITS,
    Covered,
    Fact,
    Problem,
    finditer_at,
    log_size,
    near_misses,
    read_int,
    word_starts,
)
from conductor_gym.tasks.procedural.number_theory import divisors, totient

__all__ = ["MAX_FACTORED", "MAX_PRIME_DIGITS", "ChoiceProblem", "find_choice"]

MAX_FACTORED = 10**12
MAX_PRIME_DIGITS = 400
# Bases for which Miller-Rabin is exact below 3.3 * 10^24 (and a strong test above).
_WITNESSES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)

_OPTION = re.compile(r"^[ \t]*\(?(?P<letter>[A-F])(?:\)|\.|:)[ \t]+(?P<text>\S[^\n]*)$", re.M)
_FIRST_OPTION = re.compile(r"^[ \t]*\(?A(?:\)|\.|:)[ \t]", re.M)
# A line that may be an option line (both patterns above start with one of these).
_OPTION_LINE = re.compile(r"\n(?=[ \t(A-F])")
_NUMBER = re.compile(r"\d+")
_FRACTION = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")

# A word each kind's wording needs (a cheap pre-check before its pattern).
_CUE = {
    "lcm": ("multiple", "lcm"), "totient": ("prime", "totient"), "sigma": ("divisor",),
    "num_divisors": ("divisor",), "remainder": ("remainder", "mod"),
    "gcd": ("common", "gcd"), "prime": ("prime",),
    "largest_fraction": ("largest", "greatest", "biggest"),
}  # fmt: skip
# Each cue word with the kinds it cues (one look for each word in a text).
_CUE_WORDS = tuple(
    (word, tuple(kind for kind, cues in _CUE.items() if word in cues))
    for word in dict.fromkeys(w for cues in _CUE.values() for w in cues)
)

# The words a match of each kind's pattern starts with (lower case); the remainder's
# ``N mod D`` starts at the number before a "mod" (:func:`_starts`).
_STARTS = {
    "lcm": ("least", "lcm"), "totient": ("coprime", "relatively", "totient"),
    "sigma": ("sum",), "num_divisors": ("how", "number"), "remainder": ("remainder",),
    "gcd": ("greatest", "gcd", "highest"), "prime": ("prime",),
    "largest_fraction": ("largest", "greatest", "biggest"),
}  # fmt: skip

_KINDS: tuple[tuple[str, str, re.Pattern[str], float], ...] = (
    ("lcm", "multiple_choice_hard",
     re.compile(r"(?:least\s+common\s+multiple|\blcm\b)\D{0,20}(\d+)\D{1,8}(\d+)"
                r"\D{1,8}(\d+)", re.I), 0.8),
    ("totient", "multiple_choice_hard",
     re.compile(r"(?:coprime|relatively\s+prime)\s+(?:to|with)\s+(\d+)"
                r"|totient\D{0,12}(\d+)", re.I), 1.2),
    ("sigma", "multiple_choice_hard",
     re.compile(r"sum\s+of\s+(?:all\s+)?(?:the\s+)?(?:positive\s+)?divisors"
                r"\s+of\s+(\d+)", re.I), 1.0),
    ("num_divisors", "multiple_choice_hard",
     re.compile(r"(?:how\s+many\s+(?:positive\s+)?divisors\s+does\s+(\d+)|"
                r"number\s+of\s+(?:positive\s+)?divisors\s+of\s+(\d+))", re.I), 0.6),
    ("remainder", "multiple_choice",
     re.compile(r"remainder\s+(?:when|of)\s+(\d+)\s+(?:is\s+)?divided\s+by\s+(\d+)|"
                r"\b(\d+)\s+mod(?:ulo)?\s+(\d+)", re.I), 0.4),
    ("gcd", "multiple_choice",
     re.compile(r"(?:greatest\s+common\s+(?:divisor|factor)|\bgcd\b|highest\s+common\s+factor)"
                r"\D{0,20}(\d+)\D{1,8}(\d+)", re.I), 0.3),
    ("prime", "multiple_choice", re.compile(r"\bprimes?\b", re.I), 0.5),
    ("largest_fraction", "multiple_choice",
     re.compile(r"\b(?:largest|greatest|biggest)\b", re.I), 0.2),
)  # fmt: skip


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    for p in _WITNESSES:
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in _WITNESSES:
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _ints(groups: tuple[str | None, ...]) -> tuple[int, ...] | None:
    """The numbers a stem pattern captured, or ``None`` if one is too long to read."""
    out = tuple(read_int(g) for g in groups if g is not None)
    return None if None in out else out  # type: ignore[return-value]


def _compute(kind: str, args: tuple[int, ...]) -> int | None:
    if kind == "lcm":
        lcm = math.lcm(*args)
        # No longer than a number a parser reads, so that it can be written out.
        return lcm if lcm.bit_length() <= MAX_DIGITS * 3 else None
    if kind in ("totient", "sigma", "num_divisors") and not 1 <= args[0] <= MAX_FACTORED:
        return None
    if kind == "totient":
        return totient(args[0])
    if kind == "sigma":
        return sum(divisors(args[0]))
    if kind == "num_divisors":
        return len(divisors(args[0]))
    if kind == "remainder":
        return args[0] % args[1] if args[1] else None
    if kind == "gcd":
        return math.gcd(*args)
    return None


@dataclass(frozen=True, eq=False)
class ChoiceProblem(Problem):
    """A stem with (or without) lettered options (module docstring)."""

    kind: str = ""
    args: tuple[int, ...] = ()
    options: tuple[tuple[str, str], ...] = ()

    def check(self, answer: str) -> bool:
        text = answer.strip().strip("().").upper()
        if self.options:
            return self.answer is not None and text[:1] == self.answer and len(text) <= 2
        return self.answer is not None and answer.strip().rstrip(".") == self.answer

    def sub_keys(self) -> frozenset[str]:
        return frozenset({_value_key(self.kind, self.args)}) if self.options else frozenset()

    def reduce(self, facts: Mapping[str, Fact]) -> tuple[Problem, bool] | None:
        fact = facts.get(_value_key(self.kind, self.args))
        if fact is None or not self.options:
            return None
        letter = next((k for k, text in self.options if text.strip() == fact.value.strip()), None)
        if letter is None:
            return None
        reduced = ChoiceProblem(
            family=self.family, key=self.key, answer=letter if fact.correct else None,
            size=0.2 * len(self.options), start=self.start, end=self.end,
            _slips=self._slips, kind=self.kind, args=self.args, options=self.options,
        )  # fmt: skip
        return reduced, fact.correct


def _value_key(kind: str, args: tuple[int, ...]) -> str:
    return f"choice-value:{kind}:{','.join(map(str, args))}"


def _starts(kind: str, text: str, lowered: str) -> list[int] | None:
    """Every place in ``text`` where a match of ``kind``'s pattern may start, or
    ``None`` (every place) unless ``text`` is ASCII: there ``lowered`` keeps the places
    and the patterns' IGNORECASE is plain ASCII case."""
    if not text.isascii():
        return None
    starts = word_starts(lowered, _STARTS[kind])
    if kind == "remainder":  # "N mod D": the digits before the blanks before "mod"
        at = lowered.find("mod")
        while at >= 0:
            blanks = at
            while blanks > 0 and text[blanks - 1].isspace():
                blanks -= 1
            digits = blanks
            while digits > 0 and text[digits - 1].isdecimal():
                digits -= 1
            if digits < blanks < at:
                starts.append(digits)
            at = lowered.find("mod", at + 1)
        starts.sort()
    return starts


@lru_cache(maxsize=1 << 12)
def _read_stem(stem: str) -> tuple[str, str, tuple[int, ...], float] | None:
    lowered = stem.lower()
    for kind, family, pattern, weight in _KINDS:
        if not any(c in lowered for c in _CUE[kind]):
            continue
        match = next(finditer_at(pattern, stem, _starts(kind, stem, lowered)), None)
        if match is not None:
            args = _ints(match.groups())
            if args is None:
                continue
            return kind, family, args, weight
    return None


def _option_lines(text: str) -> list[int]:
    """Where an option line may start: the text's start, and each line that begins with
    a blank, ``(`` or a letter ``A``-``F`` (an option pattern matches only at those)."""
    return [0, *(match.end() for match in _OPTION_LINE.finditer(text))]


def _options(text: str, lines: list[int]) -> list[tuple[int, int, list[tuple[str, str]]]]:
    """Runs of consecutive option lines: ``(start, end, [(letter, text)])``; ``lines``
    are :func:`_option_lines`."""
    runs: list[tuple[int, int, list[tuple[str, str]]]] = []
    for match in finditer_at(_OPTION, text, lines):
        letter = match.group("letter")
        if (
            runs
            and runs[-1][1] + 1 >= match.start() - 1
            and ord(letter) == ord(runs[-1][2][-1][0]) + 1
        ):
            start, _, items = runs[-1]
            runs[-1] = (start, match.end(), [*items, (letter, match.group("text").strip())])
        elif letter == "A":
            runs.append((match.start(), match.end(), [(letter, match.group("text").strip())]))
    return [r for r in runs if len(r[2]) >= 2]


def _with_options(
    kind: str, family: str, args: tuple[int, ...], weight: float,
    options: list[tuple[str, str]], start: int, end: int,
) -> ChoiceProblem | None:  # fmt: skip
    solved = _solve_options(kind, family, args, weight, tuple(options))
    if solved is None:
        return None
    return ChoiceProblem(
        family=solved.family, key=solved.key, answer=solved.answer, size=solved.size,
        start=start, end=end, _slips=solved._slips, kind=solved.kind, args=solved.args,
        options=solved.options,
    )  # fmt: skip


@lru_cache(maxsize=1 << 12)
def _solve_options(
    kind: str, family: str, args: tuple[int, ...], weight: float,
    options: tuple[tuple[str, str], ...],
) -> ChoiceProblem | None:  # fmt: skip
    """The lettered problem, at no place yet (:func:`_with_options` places it)."""
    start = end = 0
    texts = [t for _, t in options]
    correct: str | None = None
    if kind == "prime":
        numbers = [
            read_int(t) if t.isdecimal() and len(t) <= MAX_PRIME_DIGITS else None for t in texts
        ]
        if None in numbers:
            return None
        primes = [
            letter for (letter, _), n in zip(options, numbers, strict=True) if _is_prime(n or 0)
        ]
        correct = primes[0] if len(primes) == 1 else None
        largest = max(n or 0 for n in numbers)
    elif kind == "largest_fraction":
        parsed = [_FRACTION.match(t) for t in texts]
        pairs = [(read_int(m.group(1)), read_int(m.group(2))) for m in parsed if m]
        if len(pairs) != len(texts):
            return None
        values = [Fraction(a, b) for a, b in pairs if a is not None and b]
        if len(values) != len(texts):
            return None
        best = max(values)
        correct = options[values.index(best)][0] if values.count(best) == 1 else None
        largest = max(b for _, b in pairs if b is not None)
    else:
        wanted = _compute(kind, args)
        if wanted is None:
            return None
        correct = next((k for k, t in options if t == str(wanted)), None)
        in_options = [read_int(x) for t in texts for x in _NUMBER.findall(t)]
        if None in in_options:
            return None
        largest = max([*args, *(x for x in in_options if x is not None)], default=0)
    letters = [k for k, _ in options if k != correct]
    size = log_size(largest) + weight + 0.2 * len(options)
    return ChoiceProblem(
        family=family, key=f"choice:{kind}:{','.join(map(str, args))}:{'|'.join(sorted(texts))}",
        answer=correct, size=size, start=start, end=end, _slips=tuple(letters),
        kind=kind, args=args, options=tuple(options),
    )  # fmt: skip


def find_choice(text: str) -> list[ChoiceProblem]:
    """Lettered questions posed in ``text``, then free-value stems outside them."""
    out: list[ChoiceProblem] = []
    covered = Covered()
    previous_end = 0
    lines = _option_lines(text)
    posed = any(_FIRST_OPTION.match(text, at) for at in lines)
    for start, end, options in _options(text, lines) if posed else ():
        # The stem is the paragraph before the options (at most 400 characters).
        paragraph = text.rfind("\n\n", 0, max(start - 1, 0))
        stem_start = max(previous_end, start - 400, 0 if paragraph < 0 else paragraph + 2)
        stem = text[stem_start:start]
        read = _read_stem(stem)
        previous_end = end
        if read is None:
            continue
        problem = _with_options(*read, options, stem_start, end)
        if problem is not None:
            out.append(problem)
            covered.add(stem_start, end)
    lowered = text.lower()
    cued = {kind for word, kinds in _CUE_WORDS if word in lowered for kind in kinds}
    for kind, family, pattern, weight in _KINDS:
        if kind in ("prime", "largest_fraction") or kind not in cued:
            continue
        for match in finditer_at(pattern, text, _starts(kind, text, lowered)):
            if match.start() in covered:
                continue
            args = _ints(match.groups())
            wanted = None if args is None else _compute(kind, args)
            if args is None or wanted is None:
                continue
            out.append(
                ChoiceProblem(
                    family=family,
                    key=_value_key(kind, args),
                    answer=str(wanted),
                    size=log_size(max(args)) + weight - 0.5,
                    start=match.start(),
                    end=match.end(),
                    _slips=near_misses(wanted),
                    kind=kind,
                    args=args,
                )
            )
            covered.add(match.start(), match.end())
    return out
