r"""Offline procedural task families: checkable questions generated from a seed.

Contract. A *family* is a frozen dataclass config (a :class:`TaskFamily`) with
``validate()``, which raises ``ValueError`` naming the offending field (it also runs on
construction), and ``generate(index, seed) -> Task``, a pure function of the config,
``seed`` and ``index``: the item is drawn from ``random.Random(f"{seed}:{family}:{index}")``
(string seeds hash the same in every process and Python version). Every task has

* ``id`` ``f"{family}-{index}"``, ``domain`` the family name, ``grader`` the family's grader;
* ``metadata["profile"]``: the paper benchmark whose difficulty profile the simulated
  workers use for it (the family stands in for that profile; it is *not* the benchmark);
* ``metadata["solution"]``: a correct final answer as a worker would box it (``"42"``,
  ``"B"``, ``"(25 - 5) * 4"``);
* ``metadata["distractors"]``: 3 to 5 distinct plausible wrong final answers (typical
  slips), each of which the task's grader marks wrong;
* grader inputs (``num_choices`` for choice questions, ``numbers`` for countdown) and
  ``kind``, the template the item came from.

Answers are computed by the generator itself, never by evaluating generated text.

==========================  =================  ===========  ===============================
family                      profile            grader       what it asks
==========================  =================  ===========  ===============================
``arithmetic``              ``math500``        numeric      multi-step integer expression
``multiple_choice``         ``mmlu``           choice       4-option computed facts
``countdown``               ``rlpr``           countdown    reach a target from 4 numbers
``program_trace``           ``livecodebench``  numeric      what a short program prints
``modular``                 ``aime25``         numeric      modular arithmetic, 0..999
``multiple_choice_hard``    ``gpqa-diamond``   choice       harder number-theory facts
``program_trace_hard``      ``bigcodebench``   numeric      nested loops and functions
==========================  =================  ===========  ===============================

:class:`ProceduralTasks` interleaves families into one finite, deterministic
:class:`~conductor_gym.tasks.base.TaskSource` and caches what it generates.
"""

from __future__ import annotations

import itertools
import math
import operator
import random
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, ClassVar, NamedTuple

from conductor_gym.tasks.base import Task, fingerprint_tasks

__all__ = [
    "FAMILIES",
    "IN_DOMAIN_FAMILIES",
    "OOD_FAMILIES",
    "ArithmeticConfig",
    "CountdownConfig",
    "ModularConfig",
    "MultipleChoiceConfig",
    "MultipleChoiceHardConfig",
    "ProceduralTasks",
    "ProgramTraceConfig",
    "ProgramTraceHardConfig",
    "TaskFamily",
]


# -- shared machinery -------------------------------------------------------------------


class _Item(NamedTuple):
    """What a family's builder produces; :meth:`TaskFamily.generate` wraps it in a Task."""

    kind: str
    question: str
    reference: str
    solution: str
    distractors: list[str]
    extra: dict[str, Any]


def _require(config: object, field_name: str, ok: bool, rule: str) -> None:
    if not ok:
        value = getattr(config, field_name)
        raise ValueError(f"{type(config).__name__}.{field_name} {rule}, got {value!r}")


class TaskFamily(ABC):
    """A procedural task family: a frozen dataclass config that generates tasks.

    Subclasses set the class attributes ``name`` (the family name, used in task ids),
    ``profile`` (the paper benchmark it stands in for) and ``grader``, and implement
    :meth:`validate` and ``_build(rng)``.
    """

    name: ClassVar[str]
    profile: ClassVar[str]
    grader: ClassVar[str]

    def __post_init__(self) -> None:
        self.validate()

    @abstractmethod
    def validate(self) -> None:
        """Raise ``ValueError`` naming the field if the config is inconsistent."""

    @abstractmethod
    def _build(self, rng: random.Random) -> _Item: ...

    def generate(self, index: int, seed: int) -> Task:
        """The task at ``index`` for ``seed``; the same arguments always give the same task."""
        item = self._build(random.Random(f"{seed}:{self.name}:{index}"))
        metadata: dict[str, Any] = {
            "profile": self.profile,
            "kind": item.kind,
            "solution": item.solution,
            "distractors": item.distractors,
            **item.extra,
        }
        return Task(
            id=f"{self.name}-{index}",
            question=item.question,
            reference=item.reference,
            grader=self.grader,
            domain=self.name,
            metadata=metadata,
        )


_PAD_OFFSETS = (1, -1, 2, -2, 10, -10, 3, -3, 5, -5)


def _numeric_distractors(
    answer: int, slips: Iterable[int], count: int, modulus: int | None = None
) -> list[str]:
    """The first ``count`` distinct slips that differ from ``answer``, padded with near misses.

    With ``modulus``, near misses wrap into ``0..modulus-1`` like the answer.
    """
    out: list[str] = []
    seen = {answer}
    pads = (answer + d if modulus is None else (answer + d) % modulus for d in _PAD_OFFSETS)
    for value in (*slips, *pads):
        if value not in seen:
            seen.add(value)
            out.append(str(value))
            if len(out) == count:
                break
    return out


def _lines(*lines: str) -> str:
    return "\n".join(lines)


# Expression trees, shared by ``arithmetic`` and ``countdown``.


@dataclass(frozen=True, eq=False)
class _Op:
    op: str
    left: _Expr
    right: _Expr


_Expr = int | _Op
_PRECEDENCE = {"+": 1, "-": 1, "*": 2, "/": 2}


def _render(expr: _Expr, parent: int = 0, right_of_inverse: bool = False) -> str:
    """Infix text with only the parentheses the precedence rules need."""
    if isinstance(expr, int):
        return str(expr)
    prec = _PRECEDENCE[expr.op]
    left = _render(expr.left, prec)
    right = _render(expr.right, prec, expr.op in "-/")
    text = f"{left} {expr.op} {right}"
    if prec < parent or (right_of_inverse and prec == parent):
        return f"({text})"
    return text


def _value(expr: _Expr) -> int | Fraction:
    """Exact value; an exact quotient stays an ``int``. Raises ``ZeroDivisionError``."""
    if isinstance(expr, int):
        return expr
    a, b = _value(expr.left), _value(expr.right)
    if expr.op == "+":
        return a + b
    if expr.op == "-":
        return a - b
    if expr.op == "*":
        return a * b
    if b == 0:
        raise ZeroDivisionError
    if isinstance(a, int) and isinstance(b, int) and a % b == 0:
        return a // b
    return Fraction(a) / b


def _ops(expr: _Expr) -> list[_Op]:
    """Operator nodes in pre-order."""
    if isinstance(expr, int):
        return []
    return [expr, *_ops(expr.left), *_ops(expr.right)]


def _replace(expr: _Expr, node: _Op, new: _Expr) -> _Expr:
    """``expr`` with the subtree ``node`` (by identity) replaced by ``new``."""
    if expr is node:
        return new
    if isinstance(expr, int):
        return expr
    return _Op(expr.op, _replace(expr.left, node, new), _replace(expr.right, node, new))


def _fold_tokens(tokens: list[str], precedence: bool) -> int:
    """Evaluate ``a op b op c ...`` (integers, ``+ - *``), with or without precedence."""
    numbers, ops = [int(t) for t in tokens[::2]], tokens[1::2]
    if not precedence:
        total = numbers[0]
        for op, number in zip(ops, numbers[1:], strict=True):
            total = total + number if op == "+" else total - number if op == "-" else total * number
        return total
    terms, signs = [numbers[0]], [1]
    for op, number in zip(ops, numbers[1:], strict=True):
        if op == "*":
            terms[-1] *= number
        else:
            terms.append(number)
            signs.append(1 if op == "+" else -1)
    return sum(sign * term for sign, term in zip(signs, terms, strict=True))


# Small number theory, cached where it pays.


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


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def _totient(n: int) -> int:
    result = n
    for p in _factorize(n):
        result -= result // p
    return result


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


# -- in-domain families -------------------------------------------------------------------


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
            near = {*_divisors(a), *_divisors(b), 2 * g, g * min(x, y)} - {1}
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
        raise ValueError(
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


# -- out-of-domain families ---------------------------------------------------------------


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
            divisors = _divisors(n)
            if kind == "totient":
                correct = _totient(n)
                drop = next(iter(factors))
                near = [n - 1, n // 2, correct * drop // (drop - 1), correct + 2]
                stem = f"How many integers k with 1 <= k <= {n} are coprime to {n}?"
            elif kind == "sigma":
                correct = sum(divisors)
                near = [correct - n, correct - 1, correct + n, sum(factors) + 1 + n]
                stem = f"What is the sum of all positive divisors of {n}?"
            else:
                correct = len(divisors)
                near = [correct - 2, correct - 1, correct + 1, correct + 2, 2 * correct]
                stem = f"How many positive divisors does {n} have?"
        wrong = _wrong_options(rng, correct, near, self.num_choices - 1)
        return _choice_item(
            rng, kind, stem, str(correct), [str(w) for w in wrong], self.num_choices
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
            return sum(_divisors(n)) - n

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


# -- the task source ----------------------------------------------------------------------

FAMILIES: dict[str, TaskFamily] = {
    config.name: config
    for config in (
        ArithmeticConfig(),
        MultipleChoiceConfig(),
        CountdownConfig(),
        ProgramTraceConfig(),
        ModularConfig(),
        MultipleChoiceHardConfig(),
        ProgramTraceHardConfig(),
    )
}
"""Every family with its default config, by name."""

IN_DOMAIN_FAMILIES = ("arithmetic", "multiple_choice", "countdown", "program_trace")
"""Families standing in for the paper's training benchmarks (MATH500, MMLU, RLPR, LCB)."""

OOD_FAMILIES = ("modular", "multiple_choice_hard", "program_trace_hard")
"""Families standing in for the paper's unseen benchmarks (AIME25, GPQA-Diamond, BCB)."""


class ProceduralTasks:
    """A finite, deterministic task source that interleaves procedural families.

    ``source[i]`` is item ``i // n`` of family ``families[i % n]`` (``n`` families), so
    every prefix is balanced across families. Tasks are generated on first access and
    cached.

    Args:
        families: Family names (keys of :data:`FAMILIES`) or family configs.
        size: Number of tasks (>= 1).
        seed: Seed of every item; the same arguments give the same tasks.
        name: The source's name (default ``"procedural/<families joined by +>"``).
    """

    def __init__(
        self,
        families: Sequence[str | TaskFamily],
        size: int,
        seed: int = 0,
        name: str | None = None,
    ) -> None:
        self._requested = families
        self.size = size
        self.seed = seed
        self.families: tuple[TaskFamily, ...]  # set by validate()
        self.validate()
        joined = "+".join(family.name for family in self.families)
        self.name: str = name or f"procedural/{joined}"
        self._cache: dict[int, Task] = {}
        self._fingerprint: str | None = None

    def validate(self) -> None:
        """Resolve the families and check every argument (``ValueError`` names the problem)."""
        if isinstance(self._requested, str) or not self._requested:
            raise ValueError("families: give a non-empty sequence of family names or configs")
        resolved: list[TaskFamily] = []
        for family in self._requested:
            if isinstance(family, TaskFamily):
                family.validate()
                resolved.append(family)
            elif family in FAMILIES:
                resolved.append(FAMILIES[family])
            else:
                raise ValueError(f"families: unknown family {family!r}; valid: {sorted(FAMILIES)}")
        names = [fam.name for fam in resolved]
        if len(set(names)) != len(names):
            raise ValueError(f"families: each family may appear once, got {names}")
        if isinstance(self.size, bool) or not isinstance(self.size, int) or self.size < 1:
            raise ValueError(f"size: must be an int >= 1, got {self.size!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int):
            raise ValueError(f"seed: must be an int, got {self.seed!r}")
        self.families = tuple(resolved)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> Task:
        index = operator.index(index)
        if not 0 <= index < self.size:
            raise IndexError(f"task index {index} is outside 0..{self.size - 1}")
        task = self._cache.get(index)
        if task is None:
            family = self.families[index % len(self.families)]
            task = family.generate(index // len(self.families), self.seed)
            self._cache[index] = task
        return task

    def __iter__(self) -> Iterator[Task]:
        return (self[i] for i in range(self.size))

    def fingerprint(self) -> str:
        """Hash of every task's id, reference and grader (computed once)."""
        if self._fingerprint is None:
            self._fingerprint = fingerprint_tasks(iter(self))
        return self._fingerprint

    def __repr__(self) -> str:
        names = [fam.name for fam in self.families]
        return f"ProceduralTasks({names}, size={self.size}, seed={self.seed}, name={self.name!r})"
