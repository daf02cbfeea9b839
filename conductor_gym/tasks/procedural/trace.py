"""The ``program_trace`` (in-domain) and ``program_trace_hard`` (out-of-domain)
families: what integer a short Python program prints.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

from conductor_gym.tasks.procedural.base import (
    TaskFamily,
    _Item,
    _lines,
    _numeric_distractors,
    _require,
)
from conductor_gym.tasks.procedural.number_theory import divisors

__all__ = ["ProgramTraceConfig", "ProgramTraceHardConfig"]


_WORDS = (
    "apple", "kiwi", "banana", "fig", "cherry", "plum", "mango", "pear", "grape",
    "lemon", "lime", "melon", "peach", "date", "olive", "orange", "papaya", "guava",
)  # fmt: skip


@dataclass(frozen=True)
class ProgramTraceConfig(TaskFamily):
    """Short Python programs (5-10 lines: loops, conditionals, accumulators over small
    lists); the question is the integer they print (profile ``livecodebench``).

    The generator computes the output by following the template's semantics in Python,
    not by running the text it emits.

    Attributes:
        list_min, list_max: Length range of the lists the programs loop over.
        value_max: Largest list value.
        num_distractors: Wrong answers per item (3..5).
    """

    name: ClassVar[str] = "program_trace"
    profile: ClassVar[str] = "livecodebench"
    grader: ClassVar[str] = "numeric"

    list_min: int = 4
    list_max: int = 7
    value_max: int = 20
    num_distractors: int = 4

    def validate(self) -> None:
        """Check the ranges."""
        _require(self, "list_min", 2 <= self.list_min <= 20, "must be in 2..20")
        _require(self, "list_max", self.list_min <= self.list_max <= 20, "must be in list_min..20")
        _require(self, "value_max", 10 <= self.value_max <= 1000, "must be in 10..1000")
        _require(self, "num_distractors", 3 <= self.num_distractors <= 5, "must be in 3..5")

    def _list(self, rng: random.Random, distinct: bool = False) -> list[int]:
        length = rng.randint(self.list_min, self.list_max)
        if distinct:
            return rng.sample(range(1, self.value_max + 1), length)
        return [rng.randint(1, self.value_max) for _ in range(length)]

    def _parity(self, rng: random.Random) -> tuple[str, int, list[int]]:
        nums, k, a, init = self._list(rng), rng.choice((2, 3)), rng.randint(2, 4), rng.randint(0, 9)
        code = _lines(
            f"nums = {nums}",
            f"total = {init}",
            "for x in nums:",
            f"    if x % {k} == 0:",
            f"        total += x * {a}",
            "    else:",
            "        total -= x",
            "print(total)",
        )

        def term(x: int) -> int:
            return x * a if x % k == 0 else -x

        answer = init + sum(map(term, nums))
        slips = [
            init + sum(-x if x % k == 0 else x * a for x in nums),  # branches swapped
            init + sum(x * a for x in nums if x % k == 0),  # else branch skipped
            answer - term(nums[-1]),  # loop stopped one early
            answer - init,  # initial value forgotten
        ]
        return code, answer, slips

    def _collatz(self, rng: random.Random) -> tuple[str, int, list[int]]:
        start, cap = rng.randint(6, 60), rng.randint(5, 15)
        code = _lines(
            f"n = {start}",
            "steps = 0",
            f"while n != 1 and steps < {cap}:",
            "    if n % 2 == 0:",
            "        n = n // 2",
            "    else:",
            "        n = 3 * n + 1",
            "    steps += 1",
            "print(n + steps)",
        )

        def nxt(n: int) -> int:
            return n // 2 if n % 2 == 0 else 3 * n + 1

        states = [start]
        while states[-1] != 1 and len(states) - 1 < cap:
            states.append(nxt(states[-1]))
        steps = len(states) - 1
        answer = states[-1] + steps
        slips = [
            states[-2] + steps - 1,  # one step too few
            nxt(states[-1]) + steps + 1,  # one step too many
            states[-1],  # printed n only
            steps,  # printed steps only
        ]
        return code, answer, slips

    def _running_max(self, rng: random.Random) -> tuple[str, int, list[int]]:
        values, m = self._list(rng, distinct=True), rng.randint(2, 5)
        code = _lines(
            f"values = {values}",
            "best = values[0]",
            "changes = 0",
            "for v in values[1:]:",
            "    if v > best:",
            "        best = v",
            "        changes += 1",
            f"print(best * {m} + changes)",
        )
        best, changes = values[0], 0
        for v in values[1:]:
            if v > best:
                best, changes = v, changes + 1
        answer = best * m + changes
        slips = [answer + 1, best * m, values[-1] * m + changes, answer - 1]
        return code, answer, slips

    def _words(self, rng: random.Random) -> tuple[str, int, list[int]]:
        length = rng.randint(self.list_min, self.list_max)
        words = [rng.choice(_WORDS) for _ in range(length)]
        t, p = rng.randint(3, 5), rng.randint(1, 3)
        code = _lines(
            f"words = {words!r}",
            "score = 0",
            "for w in words:",
            f"    if len(w) > {t}:",
            "        score += len(w)",
            "    else:",
            f"        score -= {p}",
            "print(score)",
        )
        answer = sum(len(w) if len(w) > t else -p for w in words)
        slips = [
            sum(len(w) if len(w) >= t else -p for w in words),  # > read as >=
            sum(len(w) for w in words if len(w) > t),  # else branch skipped
            sum(-p if len(w) > t else len(w) for w in words),  # branches swapped
        ]
        return code, answer, slips

    def _mod_chain(self, rng: random.Random) -> tuple[str, int, list[int]]:
        a0, stop, b, m = rng.randint(0, 9), rng.randint(4, 9), rng.randint(2, 7), rng.randint(7, 50)
        code = _lines(
            f"acc = {a0}",
            "count = 0",
            f"for i in range(1, {stop}):",
            f"    acc = (acc * {b} + i) % {m}",
            "    if acc % 2 == 0:",
            "        count += 1",
            "print(acc + count)",
        )

        def run(last: int) -> tuple[int, int]:
            acc, count = a0, 0
            for i in range(1, last):
                acc = (acc * b + i) % m
                if acc % 2 == 0:
                    count += 1
            return acc, count

        acc, count = run(stop)
        inclusive, short = run(stop + 1), run(stop - 1)
        slips = [sum(inclusive), sum(short), acc, count]  # range end off by one either way
        return code, acc + count, slips

    def _build(self, rng: random.Random) -> _Item:
        templates = (
            ("parity", self._parity),
            ("collatz", self._collatz),
            ("running_max", self._running_max),
            ("words", self._words),
            ("mod_chain", self._mod_chain),
        )
        kind, make = templates[rng.randrange(len(templates))]
        code, answer, slips = make(rng)
        return _trace_item(kind, code, answer, slips, self.num_distractors)


def _trace_item(kind: str, code: str, answer: int, slips: list[int], count: int) -> _Item:
    question = f"What integer does this program print?\n\n```python\n{code}\n```"
    return _Item(
        kind=kind,
        question=question,
        reference=str(answer),
        solution=str(answer),
        distractors=_numeric_distractors(answer, slips, count),
        extra={"code": code},
    )


@dataclass(frozen=True)
class ProgramTraceHardConfig(TaskFamily):
    """Longer Python programs with helper functions, recursion and nested loops; the
    question is the integer they print (profile ``bigcodebench``).

    Attributes:
        list_min, list_max: Length range of the lists the programs loop over.
        value_max: Largest list value.
        num_distractors: Wrong answers per item (3..5).
    """

    name: ClassVar[str] = "program_trace_hard"
    profile: ClassVar[str] = "bigcodebench"
    grader: ClassVar[str] = "numeric"

    list_min: int = 3
    list_max: int = 6
    value_max: int = 40
    num_distractors: int = 4

    def validate(self) -> None:
        """Check the ranges."""
        _require(self, "list_min", 2 <= self.list_min <= 12, "must be in 2..12")
        _require(self, "list_max", self.list_min <= self.list_max <= 12, "must be in list_min..12")
        _require(self, "value_max", 12 <= self.value_max <= 500, "must be in 12..500")
        _require(self, "num_distractors", 3 <= self.num_distractors <= 5, "must be in 3..5")

    def _list(self, rng: random.Random, low: int = 1) -> list[int]:
        length = rng.randint(self.list_min, self.list_max)
        return [rng.randint(low, self.value_max) for _ in range(length)]

    def _abundant(self, rng: random.Random) -> tuple[str, int, list[int]]:
        ks = self._list(rng, low=6)
        code = _lines(
            "def f(n):",
            "    s = 0",
            "    for d in range(1, n):",
            "        if n % d == 0:",
            "            s += d",
            "    return s",
            "",
            "",
            "total = 0",
            f"for k in {ks}:",
            "    if f(k) > k:",
            "        total += k",
            "    else:",
            "        total += f(k)",
            "print(total)",
        )

        def f(n: int) -> int:
            return sum(divisors(n)) - n

        answer = sum(k if f(k) > k else f(k) for k in ks)
        slips = [
            sum(ks),  # divisor loop read as including n, so every k counts
            sum(f(k) if f(k) > k else k for k in ks),  # branches swapped
            sum(k for k in ks if f(k) > k),  # else branch skipped
            sum(f(k) for k in ks),
        ]
        return code, answer, slips

    def _pairs(self, rng: random.Random) -> tuple[str, int, list[int]]:
        xs, m = self._list(rng), rng.randint(3, 7)
        code = _lines(
            f"xs = {xs}",
            "total = 0",
            "for i in range(len(xs)):",
            "    for j in range(i + 1, len(xs)):",
            f"        if (xs[i] + xs[j]) % {m} == 0:",
            "            total += xs[i] * xs[j]",
            "        else:",
            "            total += 1",
            "print(total)",
        )

        def run(pairs: Iterable[tuple[int, int]]) -> int:
            return sum(xs[i] * xs[j] if (xs[i] + xs[j]) % m == 0 else 1 for i, j in pairs)

        n = len(xs)
        answer = run((i, j) for i in range(n) for j in range(i + 1, n))
        slips = [
            run((i, j) for i in range(n) for j in range(i, n)),  # inner loop from i
            run((i, j) for i in range(n) for j in range(n) if i != j),  # every ordered pair
            run((i, j) for i in range(n) for j in range(i + 1, n) if (xs[i] + xs[j]) % m == 0),
        ]
        return code, answer, slips

    def _recursion(self, rng: random.Random) -> tuple[str, int, list[int]]:
        c, a, k, m = rng.randint(1, 3), rng.randint(1, 3), rng.randint(6, 13), rng.randint(50, 997)
        code = _lines(
            "def g(n):",
            "    if n < 2:",
            f"        return n + {c}",
            f"    return g(n - 1) + {a} * g(n - 2)",
            "",
            "",
            f"print(g({k}) % {m})",
        )

        def series(base_shift: int, upto: int) -> list[int]:
            vals = [base_shift, 1 + base_shift]
            for _ in range(2, upto + 1):
                vals.append(vals[-1] + a * vals[-2])
            return vals

        g = series(c, k + 1)
        answer = g[k] % m
        slips = [g[k - 1] % m, g[k + 1] % m, series(0, k)[k] % m, g[k]]
        return code, answer, slips

    def _grid(self, rng: random.Random) -> tuple[str, int, list[int]]:
        rows, cols, w = rng.randint(2, 4), rng.randint(3, 4), rng.randint(2, 3)
        grid = [[rng.randint(1, self.value_max) for _ in range(cols)] for _ in range(rows)]
        code = _lines(
            f"grid = {grid}",
            "total = 0",
            "for r in range(len(grid)):",
            "    for c in range(len(grid[r])):",
            "        if (r + c) % 2 == 0:",
            "            total += grid[r][c]",
            "        else:",
            f"            total -= grid[r][c] * {w}",
            "print(total)",
        )
        even = sum(v for r, row in enumerate(grid) for c, v in enumerate(row) if (r + c) % 2 == 0)
        odd = sum(v for r, row in enumerate(grid) for c, v in enumerate(row) if (r + c) % 2)
        answer = even - w * odd
        slips = [odd - w * even, even - odd, even + w * odd, even]
        return code, answer, slips

    def _helper(self, rng: random.Random) -> tuple[str, int, list[int]]:
        values, b, rounds = self._list(rng), rng.randint(1, 5), rng.randint(2, 5)
        code = _lines(
            "def step(x):",
            "    if x % 3 == 0:",
            "        return x // 3",
            f"    return x + {b}",
            "",
            "",
            "out = 0",
            f"for v in {values}:",
            f"    for _ in range({rounds}):",
            "        v = step(v)",
            "    out += v",
            "print(out)",
        )

        def run(times: int) -> int:
            out = 0
            for v in values:
                for _ in range(times):
                    v = v // 3 if v % 3 == 0 else v + b
                out += v
            return out

        answer = run(rounds)
        slips = [run(rounds - 1), run(rounds + 1), sum(values)]
        return code, answer, slips

    def _build(self, rng: random.Random) -> _Item:
        templates = (
            ("abundant", self._abundant),
            ("pairs", self._pairs),
            ("recursion", self._recursion),
            ("grid", self._grid),
            ("helper", self._helper),
        )
        kind, make = templates[rng.randrange(len(templates))]
        code, answer, slips = make(rng)
        return _trace_item(kind, code, answer, slips, self.num_distractors)
