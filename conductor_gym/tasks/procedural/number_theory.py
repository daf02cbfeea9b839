"""Small number theory, cached where it pays (choice questions and program traces)."""

from __future__ import annotations

import math
from functools import lru_cache


@lru_cache(maxsize=8)
def _sieve(limit: int) -> tuple[bool, ...]:
    flags = [True] * (limit + 1)
    flags[0] = flags[1] = False
    for p in range(2, math.isqrt(limit) + 1):
        if flags[p]:
            flags[p * p :: p] = [False] * len(range(p * p, limit + 1, p))
    return tuple(flags)


@lru_cache(maxsize=8)
def _primes_and_hard_composites(low: int, high: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Primes in ``low..high`` and composites there with no factor 2, 3 or 5 (they look
    prime at a glance, which makes them good wrong options)."""
    flags = _sieve(high)
    primes = tuple(n for n in range(low, high + 1) if flags[n])
    composites = tuple(
        n for n in range(low, high + 1) if not flags[n] and n % 2 and n % 3 and n % 5
    )
    return primes, composites


def _factorize(n: int) -> dict[int, int]:
    factors: dict[int, int] = {}
    d = 2
    while d * d <= n:
        while n % d == 0:
            factors[d] = factors.get(d, 0) + 1
            n //= d
        d += 1
    if n > 1:
        factors[n] = factors.get(n, 0) + 1
    return factors


def divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def totient(n: int) -> int:
    result = n
    for p in _factorize(n):
        result -= result // p
    return result
