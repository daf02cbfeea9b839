"""The ``multiple_choice`` (in-domain) and ``multiple_choice_hard`` (out-of-domain)
families and the assembly of lettered questions.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar

from conductor_gym.tasks.procedural.base import TaskFamily, _Item, _require
from conductor_gym.tasks.procedural.number_theory import (
    _factorize,
    _primes_and_hard_composites,
    divisors,
    totient,
)

__all__ = ["MultipleChoiceConfig", "MultipleChoiceHardConfig"]


# Multiple-choice assembly.


_OPTION_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _wrong_options(
    rng: random.Random, correct: int, candidates: Iterable[int], count: int
) -> list[int]:
    """``count`` distinct positive values other than ``correct``: random picks from
    ``candidates``, padded with nearby values if there are too few."""
    pool = sorted({c for c in candidates if c > 0 and c != correct})
    rng.shuffle(pool)
    chosen = pool[:count]
    step = 1
    while len(chosen) < count:
        for value in (correct + step, correct - step):
            if value > 0 and value != correct and value not in chosen and len(chosen) < count:
                chosen.append(value)
        step += 1
    return chosen


def _choice_item(
    rng: random.Random,
    kind: str,
    stem: str,
    correct: str,
    wrong: Sequence[str],
    num_choices: int,
) -> _Item:
    """A lettered question with ``correct`` at a uniformly random position."""
    options = list(wrong[: num_choices - 1])
    rng.shuffle(options)
    position = rng.randrange(num_choices)
    options.insert(position, correct)
    letters = _OPTION_LETTERS[:num_choices]
    body = "\n".join(f"{letter}) {option}" for letter, option in zip(letters, options, strict=True))
    question = f"{stem}\n{body}\n\nAnswer with the letter of the correct option."
    answer = letters[position]
    return _Item(
        kind=kind,
        question=question,
        reference=answer,
        solution=answer,
        distractors=[letter for letter in letters if letter != answer],
        extra={"num_choices": num_choices},
    )


@dataclass(frozen=True)
class MultipleChoiceConfig(TaskFamily):
    """Lettered questions on facts the generator computes (profile ``mmlu``): which
    number is prime, a remainder, a greatest common divisor, the largest fraction.

    Attributes:
        num_choices: Options per question (4..6); the correct letter is uniform over them.
        max_value: Upper bound of the numbers in "which is prime" questions (>= 150).
    """

    name: ClassVar[str] = "multiple_choice"
    profile: ClassVar[str] = "mmlu"
    grader: ClassVar[str] = "choice"

    num_choices: int = 4
    max_value: int = 200

    def validate(self) -> None:
        """Check the ranges."""
        # 4..6 options give 3..5 wrong letters, the distractor count every family has.
        _require(self, "num_choices", 4 <= self.num_choices <= 6, "must be in 4..6")
        _require(self, "max_value", 150 <= self.max_value <= 100_000, "must be in 150..100000")

    def _build(self, rng: random.Random) -> _Item:
        kind = rng.choice(("prime", "remainder", "gcd", "largest_fraction"))
        wrong_count = self.num_choices - 1
        if kind == "prime":
            primes, composites = _primes_and_hard_composites(20, self.max_value)
            correct = rng.choice(primes)
            wrong = rng.sample(composites, wrong_count)
            stem = "Which of the following numbers is prime?"
        elif kind == "remainder":
            number, divisor = rng.randint(100, 9999), rng.randint(max(self.num_choices, 5), 13)
            correct = number % divisor
            wrong = rng.sample([r for r in range(divisor) if r != correct], wrong_count)
            stem = f"What is the remainder when {number} is divided by {divisor}?"
        elif kind == "gcd":
            g = rng.randint(2, 15)
            x, y = rng.sample(range(2, 21), 2)
            while math.gcd(x, y) != 1:
                x, y = rng.sample(range(2, 21), 2)
            a, b = g * x, g * y
            near = {*divisors(a), *divisors(b), 2 * g, g * min(x, y)} - {1}
            wrong = _wrong_options(rng, g, near, wrong_count)
            correct = g
            stem = f"What is the greatest common divisor of {a} and {b}?"
        else:
            values: dict[Fraction, str] = {}
            while len(values) < self.num_choices:
                q = rng.randint(2, 12)
                p = rng.randint(1, q - 1)
                if math.gcd(p, q) == 1:
                    values.setdefault(Fraction(p, q), f"{p}/{q}")
            best = max(values)
            texts = [text for value, text in values.items() if value != best]
            return _choice_item(
                rng,
                kind,
                "Which of the following fractions is the largest?",
                values[best],
                texts,
                self.num_choices,
            )
        return _choice_item(
            rng, kind, stem, str(correct), [str(w) for w in wrong], self.num_choices
        )


@dataclass(frozen=True)
class MultipleChoiceHardConfig(TaskFamily):
    """Harder lettered number-theory questions (profile ``gpqa-diamond``): least common
    multiple of three numbers, Euler's totient, sum of divisors, number of divisors.

    Attributes:
        num_choices: Options per question (4..6).
        max_value: Upper bound of ``n`` in totient and divisor questions (>= 100).
    """

    name: ClassVar[str] = "multiple_choice_hard"
    profile: ClassVar[str] = "gpqa-diamond"
    grader: ClassVar[str] = "choice"

    num_choices: int = 4
    max_value: int = 600

    def validate(self) -> None:
        """Check the ranges."""
        # 4..6 options give 3..5 wrong letters, the distractor count every family has.
        _require(self, "num_choices", 4 <= self.num_choices <= 6, "must be in 4..6")
        _require(self, "max_value", 100 <= self.max_value <= 1_000_000, "must be in 100..10**6")

    def _build(self, rng: random.Random) -> _Item:
        kind = rng.choice(("lcm", "totient", "sigma", "num_divisors"))
        if kind == "lcm":
            a, b, c = rng.sample(range(4, 31), 3)
            correct = math.lcm(a, b, c)
            near = [a * b * c, math.lcm(a, b), math.lcm(b, c), math.lcm(a, c), 2 * correct]
            stem = f"What is the least common multiple of {a}, {b} and {c}?"
        else:
            n = rng.randint(30, self.max_value)
            while len(_factorize(n)) < 2:
                n = rng.randint(30, self.max_value)
            factors = _factorize(n)
            found = divisors(n)
            if kind == "totient":
                correct = totient(n)
                drop = next(iter(factors))
                near = [n - 1, n // 2, correct * drop // (drop - 1), correct + 2]
                stem = f"How many integers k with 1 <= k <= {n} are coprime to {n}?"
            elif kind == "sigma":
                correct = sum(found)
                near = [correct - n, correct - 1, correct + n, sum(factors) + 1 + n]
                stem = f"What is the sum of all positive divisors of {n}?"
            else:
                correct = len(found)
                near = [correct - 2, correct - 1, correct + 1, correct + 2, 2 * correct]
                stem = f"How many positive divisors does {n} have?"
        wrong = _wrong_options(rng, correct, near, self.num_choices - 1)
        return _choice_item(
            rng, kind, stem, str(correct), [str(w) for w in wrong], self.num_choices
        )
