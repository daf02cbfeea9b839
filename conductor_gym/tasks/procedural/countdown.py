"""The ``countdown`` family: reach a target from given numbers."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import ClassVar

from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks.procedural.base import TaskFamily, _Item, _require
from conductor_gym.tasks.procedural.expressions import _Expr, _Op, _ops, _render, _replace, _value

__all__ = ["CountdownConfig"]


@dataclass(frozen=True)
class CountdownConfig(TaskFamily):
    """Reach a target with ``+ - * /`` over given numbers (profile ``rlpr``).

    ``count - 1`` distinct small numbers from ``1..small_max`` and one of ``big_numbers``;
    the target is the value of a random expression over a subset of them (every
    intermediate result a positive integer), within ``target_min..target_max`` and not
    itself one of the numbers.

    Attributes:
        small_max: Largest small number.
        big_numbers: The pool the one big number is drawn from.
        count: How many numbers are given (3..6).
        target_min, target_max: The target's range.
        num_distractors: Wrong expressions per item (3..5).
    """

    name: ClassVar[str] = "countdown"
    profile: ClassVar[str] = "rlpr"
    grader: ClassVar[str] = "countdown"

    small_max: int = 25
    big_numbers: tuple[int, ...] = (25, 50, 75, 100)
    count: int = 4
    target_min: int = 1
    target_max: int = 999
    num_distractors: int = 4

    def validate(self) -> None:
        """Check the ranges."""
        _require(self, "count", 3 <= self.count <= 6, "must be in 3..6")
        _require(self, "small_max", self.count <= self.small_max <= 1000, "must be in count..1000")
        _require(
            self,
            "big_numbers",
            len(self.big_numbers) > 0 and all(1 <= n <= 10_000 for n in self.big_numbers),
            "must be a non-empty tuple of integers in 1..10000",
        )
        _require(self, "target_min", self.target_min >= 1, "must be >= 1")
        _require(
            self,
            "target_max",
            self.target_max >= self.target_min + 9,
            "must be at least target_min + 9",
        )
        _require(self, "num_distractors", 3 <= self.num_distractors <= 5, "must be in 3..5")

    def _combine(self, rng: random.Random, numbers: list[int]) -> _Expr | None:
        """Combine ``numbers`` pairwise at random, keeping every value a positive integer."""
        pool: list[tuple[int, _Expr]] = [(n, n) for n in numbers]
        while len(pool) > 1:
            i, j = rng.sample(range(len(pool)), 2)
            (a, left), (b, right) = pool[i], pool[j]
            op = "+-*/"[rng.randrange(4)]
            if op in "-/" and a < b:
                (a, left), (b, right) = (b, right), (a, left)
            if op == "-" and a == b:
                return None
            if op == "/" and (b == 1 or a % b):
                return None
            if op == "*" and 1 in (a, b):
                op = "+"
            if op == "+":
                value = a + b
            elif op == "-":
                value = a - b
            elif op == "*":
                value = a * b
            else:
                value = a // b
            pool = [item for k, item in enumerate(pool) if k not in (i, j)]
            pool.append((value, _Op(op, left, right)))
        return pool[0][1]

    def _solution(self, rng: random.Random, numbers: list[int]) -> _Expr:
        for _ in range(100):
            size = rng.choice((2, 3, 3, 4, 4, 4, 5, 6))
            expr = self._combine(rng, rng.sample(numbers, min(size, len(numbers))))
            if expr is not None and not isinstance(expr, int):
                value = _value(expr)
                if self.target_min <= value <= self.target_max and value not in numbers:
                    return expr
        # Practically unreachable with sane ranges: fall back to the first pair that fits.
        for a, b in itertools.combinations(numbers, 2):
            for op in "+*":
                expr = _Op(op, a, b)
                value = _value(expr)
                if self.target_min <= value <= self.target_max and value not in numbers:
                    return expr
        raise ConfigurationError(
            f"CountdownConfig.target_min/target_max: no target in "
            f"{self.target_min}..{self.target_max} found for numbers {numbers}"
        )

    def _build(self, rng: random.Random) -> _Item:
        numbers = rng.sample(range(1, self.small_max + 1), self.count - 1)
        numbers.append(rng.choice(self.big_numbers))
        rng.shuffle(numbers)
        tree = self._solution(rng, numbers)
        target = int(_value(tree))
        candidates: list[_Expr] = []
        for node in _ops(tree):
            for op in "+-*/":
                if op != node.op:
                    candidates.append(_replace(tree, node, _Op(op, node.left, node.right)))
            if node.op in "-/":
                candidates.append(_replace(tree, node, _Op(node.op, node.right, node.left)))
        rng.shuffle(candidates)
        everything: _Expr = numbers[0]
        for n in numbers[1:]:
            everything = _Op("+", everything, n)
        pairs = [
            _Op(op, a, b) for i, a in enumerate(numbers) for b in numbers[i + 1 :] for op in "+*"
        ]
        distractors: list[str] = []
        for expr in (*candidates, everything, *pairs):
            try:
                wrong = _value(expr) != target
            except ZeroDivisionError:
                continue
            text = _render(expr)
            if wrong and text not in distractors:
                distractors.append(text)
                if len(distractors) == self.num_distractors:
                    break
        shown = ", ".join(map(str, numbers))
        question = (
            f"Using the numbers {shown}, write an arithmetic expression that equals {target}. "
            "Each number may be used at most once (you do not have to use all of them); "
            "use only +, -, *, / and parentheses. Give the expression as your final answer."
        )
        return _Item(
            kind="countdown",
            question=question,
            reference=str(target),
            solution=_render(tree),
            distractors=distractors,
            extra={"numbers": numbers},
        )
