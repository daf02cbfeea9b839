"""The ``arithmetic`` (in-domain) and ``modular`` (out-of-domain) families."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import ClassVar

from conductor_gym.tasks.procedural.base import (
    TaskFamily,
    _Item,
    _numeric_distractors,
    _require,
)
from conductor_gym.tasks.procedural.expressions import (
    _Expr,
    _fold_tokens,
    _Op,
    _ops,
    _render,
    _replace,
    _value,
)

__all__ = ["ArithmeticConfig", "ModularConfig"]


@dataclass(frozen=True)
class ArithmeticConfig(TaskFamily):
    """Multi-step integer expressions with ``+ - *`` and parentheses (profile ``math500``).

    Attributes:
        min_ops, max_ops: Range of the number of operators.
        max_operand: Largest operand of ``+``/``-``.
        max_factor: Largest literal operand of ``*`` (keeps answers readable).
        num_distractors: Wrong answers per item (3..5).
    """

    name: ClassVar[str] = "arithmetic"
    profile: ClassVar[str] = "math500"
    grader: ClassVar[str] = "numeric"

    min_ops: int = 3
    max_ops: int = 5
    max_operand: int = 60
    max_factor: int = 15
    num_distractors: int = 4

    def validate(self) -> None:
        """Check the ranges."""
        _require(self, "min_ops", 1 <= self.min_ops <= 10, "must be in 1..10")
        _require(self, "max_ops", self.min_ops <= self.max_ops <= 10, "must be in min_ops..10")
        _require(self, "max_operand", self.max_operand >= 10, "must be >= 10")
        _require(self, "max_factor", self.max_factor >= 3, "must be >= 3")
        _require(self, "num_distractors", 3 <= self.num_distractors <= 5, "must be in 3..5")

    def _tree(self, rng: random.Random, ops: int, parent: str) -> _Expr:
        if ops == 0:
            if parent == "*":
                return rng.randint(2, self.max_factor)
            return rng.randint(1, self.max_operand)
        op = "+-*"[rng.randrange(3)]
        left = rng.randrange(ops)
        return _Op(op, self._tree(rng, left, op), self._tree(rng, ops - 1 - left, op))

    def _build(self, rng: random.Random) -> _Item:
        tree = self._tree(rng, rng.randint(self.min_ops, self.max_ops), "")
        text = _render(tree)
        answer = int(_value(tree))
        flat = text.replace("(", "").replace(")", "").split()
        nodes = _ops(tree)
        flips = []
        for node in rng.sample(nodes, min(2, len(nodes))):
            swapped = {"+": "-", "-": "+", "*": "+"}[node.op]
            flips.append(int(_value(_replace(tree, node, _Op(swapped, node.left, node.right)))))
        slips = [
            flips[0],  # one operator misread
            _fold_tokens(flat, precedence=True),  # parentheses ignored
            _fold_tokens(flat, precedence=False),  # strictly left to right
            -answer,  # sign error
            *flips[1:],
            answer + rng.choice((-10, -2, -1, 1, 2, 10)),  # arithmetic slip
        ]
        template = rng.choice(("Compute {}.", "Evaluate {}.", "What is the value of {}?"))
        return _Item(
            kind="expression",
            question=template.format(text),
            reference=str(answer),
            solution=str(answer),
            distractors=_numeric_distractors(answer, slips, self.num_distractors),
            extra={},
        )


@dataclass(frozen=True)
class ModularConfig(TaskFamily):
    """Competition-style modular arithmetic with answers in ``0..999`` (profile ``aime25``):
    the remainder of ``a^b + c``, of a power sum ``1^k + ... + n^k``, or the least
    positive solution of ``a x = c (mod m)``.

    Attributes:
        base_max: Largest base ``a``.
        exponent_max: Largest exponent ``b`` of ``a^b``.
        num_distractors: Wrong answers per item (3..5).
    """

    name: ClassVar[str] = "modular"
    profile: ClassVar[str] = "aime25"
    grader: ClassVar[str] = "numeric"

    base_max: int = 99
    exponent_max: int = 2025
    num_distractors: int = 4

    def validate(self) -> None:
        """Check the ranges."""
        _require(self, "base_max", 3 <= self.base_max <= 10_000, "must be in 3..10000")
        _require(self, "exponent_max", 20 <= self.exponent_max <= 10**6, "must be in 20..10**6")
        _require(self, "num_distractors", 3 <= self.num_distractors <= 5, "must be in 3..5")

    def _build(self, rng: random.Random) -> _Item:
        kind = rng.choice(("power", "power_sum", "congruence"))
        m = 1000 if rng.random() < 0.5 else rng.randint(101, 999)
        if kind == "power":
            a, b, c = (
                rng.randint(2, self.base_max),
                rng.randint(10, self.exponent_max),
                rng.randint(1, 999),
            )
            answer = (pow(a, b, m) + c) % m
            slips = [
                (pow(a, b - 1, m) + c) % m,  # exponent off by one
                pow(a, b, m),  # constant dropped
                (pow(a, b + 1, m) + c) % m,
                (a * b + c) % m,  # power read as product
            ]
            question = f"What is the remainder when {a}^{b} + {c} is divided by {m}?"
        elif kind == "power_sum":
            n, k = rng.randint(10, 60), rng.randint(2, 9)
            answer = sum(pow(i, k, m) for i in range(1, n + 1)) % m
            slips = [
                (answer - pow(n, k, m)) % m,  # last term forgotten
                (answer + pow(n + 1, k, m)) % m,  # one term too many
                sum(pow(i, k - 1, m) for i in range(1, n + 1)) % m,  # exponent off by one
            ]
            question = (
                f"What is the remainder when 1^{k} + 2^{k} + 3^{k} + ... + {n}^{k} "
                f"is divided by {m}?"
            )
        else:
            a = rng.randint(2, m - 1)
            while math.gcd(a, m) != 1:
                a = rng.randint(2, m - 1)
            c = rng.randint(1, m - 1)
            answer = c * pow(a, -1, m) % m  # never 0: c is not 0 and a is invertible
            slips = [
                m - answer,  # sign slip
                c * pow(a, -1, m) % m + m,  # not the least solution
                (c * a) % m,  # multiplied instead of divided
                (answer + 1) % m,
            ]
            question = (
                f"Find the least positive integer x such that {a}x leaves remainder {c} "
                f"when divided by {m}."
            )
        return _Item(
            kind=kind,
            question=question,
            reference=str(answer),
            solution=str(answer),
            distractors=_numeric_distractors(answer, slips, self.num_distractors, modulus=m),
            extra={},
        )
