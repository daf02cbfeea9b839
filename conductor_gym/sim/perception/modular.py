"""Modular arithmetic in prose: a power plus a constant, a power sum, a congruence.

=============  ==============================================================  =========
form           recognised by                                                   size
=============  ==============================================================  =========
power          ``a^b + c`` (or ``a^b``) with ``divided by m`` / ``mod m``      log2 b
power_sum      ``1^k + 2^k + ... + n^k`` with ``divided by m`` / ``mod m``     log2(n k)
congruence     ``a x`` ... ``remainder c`` ... ``divided by m``, or            log2 m
               ``a x = c (mod m)`` / ``ax ≡ c mod m``
=============  ==============================================================  =========

The modulus must follow the expression within 120 characters. The key is the form
and its numbers; the solver is Python's modular power and inverse. Every size also
adds 0.3 * log10(m).

Work is bounded whatever the text: a modular power ``a^b mod m`` costs about
``log2(b) * log2(m)^2`` steps, and a problem whose powers cost more than
:data:`POW_BUDGET` in all poses none; nor does a power sum of more than
:data:`MAX_TERMS` terms (its terms repeat with period ``m``, so ``n`` may be any size
when ``m`` is small), or a number longer than :data:`~.base.MAX_DIGITS` digits.
"""

from __future__ import annotations

import math
import re

from conductor_gym.sim.perception.base import Covered, Problem, log_size, near_misses, read_int

__all__ = ["MAX_TERMS", "POW_BUDGET", "find_modular"]

MAX_TERMS = 100_000
POW_BUDGET = 2**36

_X = re.compile(r"\dx\b|\d\s*\*\s*x\b|\d x\b")  # cheap pre-check for "a x"
_MODULUS = re.compile(r"(?:divided\s+by|\bmod(?:ulo)?|\bmodulus)\s*(\d+)", re.I)
_POWER_SUM = re.compile(r"\b1\s*\^\s*(\d+)\s*\+\s*2\s*\^\s*\1\b[^\n]{0,60}\+\s*(\d+)\s*\^\s*\1\b")
_POWER = re.compile(r"\b(\d+)\s*\^\s*(\d+)(?:\s*\+\s*(\d+))?")
_CONGRUENCE = re.compile(
    r"\b(\d+)\s*\*?\s*x\b[^\n]{0,40}?(?:remainder|≡|=|is\s+congruent\s+to)\s*(\d+)", re.I
)


def _make(kind: str, args: tuple[int, ...], m: int, start: int, end: int) -> Problem | None:
    if m < 2:
        return None
    if kind == "power":
        a, b, c = args
        if _pow_cost(b, m) > POW_BUDGET:
            return None
        answer: int | None = (pow(a, b, m) + c) % m
        size = math.log2(max(b, 2))
    elif kind == "power_sum":
        k, n = args
        answer = _power_sum(k, n, m)
        if answer is None:
            return None
        size = math.log2(max(n * k, 2))
    else:
        a, c = args
        answer = c * pow(a, -1, m) % m if math.gcd(a, m) == 1 else None
        if answer == 0:
            answer = m
        size = math.log2(m)
    return Problem(
        family="modular",
        key=f"modular:{kind}:{','.join(map(str, args))}:{m}",
        answer=None if answer is None else str(answer),
        size=size + 0.3 * log_size(m),
        start=start,
        end=end,
        _slips=() if answer is None else near_misses(answer, m),
    )


def _pow_cost(exponent: int, m: int) -> int:
    """Steps of ``pow(a, exponent, m)``, as the module docstring counts them."""
    return max(exponent.bit_length(), 1) * max(m.bit_length(), 64) ** 2


def _power_sum(k: int, n: int, m: int) -> int | None:
    """``(1^k + ... + n^k) mod m`` in at most :data:`MAX_TERMS` powers, or ``None``.
    ``i^k mod m`` depends on ``i mod m`` only, so whole periods of ``m`` terms repeat."""
    periods, rest = divmod(n, m)
    terms = (m if periods else 0) + rest
    if terms > MAX_TERMS or terms * _pow_cost(k, m) > POW_BUDGET:
        return None
    period = sum(pow(i, k, m) for i in range(1, m + 1)) if periods else 0
    return (periods * period + sum(pow(i, k, m) for i in range(1, rest + 1))) % m


def _x_after_operand(text: str) -> bool:
    """Whether some ``x`` follows a digit, a blank or ``*`` (as in every match of
    :data:`_X`): the cheap look before the pattern's own."""
    at = text.find("x", 1)
    while at >= 0:
        before = text[at - 1]
        if before == "*" or before.isdecimal() or before.isspace():
            return True
        at = text.find("x", at + 1)
    return False


def find_modular(text: str) -> list[Problem]:
    """Modular problems posed in ``text`` (module docstring)."""
    out: list[Problem] = []
    if "^" not in text and (not _x_after_operand(text) or _X.search(text) is None):
        return out
    taken = Covered()
    for pattern, kind in (
        (_POWER_SUM, "power_sum"),
        (_CONGRUENCE, "congruence"),
        (_POWER, "power"),
    ):
        for match in pattern.finditer(text):
            if match.start() in taken:
                continue
            modulus = _MODULUS.search(text, match.end(), match.end() + 120)
            if modulus is None:
                continue
            read = [read_int(g) for g in (modulus.group(1), *match.groups()) if g is not None]
            numbers = [x for x in read if x is not None]
            if len(numbers) != len(read):
                continue
            m, *args = numbers
            if kind == "power" and len(args) == 2:
                args.append(0)
            problem = _make(kind, tuple(args), m, match.start(), modulus.end())
            if problem is not None:
                out.append(problem)
                taken.add(match.start(), modulus.end())
    return out
