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
"""

from __future__ import annotations

import math
import re

from conductor_gym.sim.perception.base import Problem, log_size, near_misses

__all__ = ["find_modular"]

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
        answer: int | None = (pow(a, b, m) + c) % m
        size = math.log2(max(b, 2))
    elif kind == "power_sum":
        k, n = args
        answer = sum(pow(i, k, m) for i in range(1, n + 1)) % m
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


def find_modular(text: str) -> list[Problem]:
    """Modular problems posed in ``text`` (module docstring)."""
    out: list[Problem] = []
    if "^" not in text and _X.search(text) is None:
        return out
    taken: list[tuple[int, int]] = []
    for pattern, kind in (
        (_POWER_SUM, "power_sum"),
        (_CONGRUENCE, "congruence"),
        (_POWER, "power"),
    ):
        for match in pattern.finditer(text):
            if any(a <= match.start() < b for a, b in taken):
                continue
            modulus = _MODULUS.search(text, match.end(), match.end() + 120)
            if modulus is None:
                continue
            m = int(modulus.group(1))
            groups = match.groups()
            if kind == "power_sum":
                args: tuple[int, ...] = (int(groups[0]), int(groups[1]))
            elif kind == "congruence":
                args = (int(groups[0]), int(groups[1]))
            else:
                args = (int(groups[0]), int(groups[1]), int(groups[2] or 0))
            problem = _make(kind, args, m, match.start(), modulus.end())
            if problem is not None:
                out.append(problem)
                taken.append((match.start(), modulus.end()))
    return out
