"""Arithmetic expressions in prose: parse, solve, reduce by known sub-results.

An expression is a maximal run of integers, ``+ - * /`` and parentheses holding at
least one operator. It is read into a canonical form: ``+``/``-`` chains become a
multiset of signed terms, ``*``/``/`` chains a multiset of factors over one of
divisors, so ``36 + 50``, ``50 + 36`` and ``(50) + 36`` are one problem, and every
sub-chain (``a - b`` inside ``a - b + c``, also ``a + c``) is a sub-problem whose stated
result can replace it (:meth:`ArithmeticProblem.reduce`). A run followed by ``= n``
states a result (a :class:`~.base.Fact`), not a problem; ``= ?`` still poses it.

Size: operators + 0.5 per multiplication or division + 0.5 per level of nesting +
0.5 * log10(1 + |answer|).

Work is bounded whatever the text: a run of more than :data:`MAX_TOKENS` tokens or
parentheses nested deeper than :data:`MAX_NESTING` is no expression, nor is one whose
value (or a partial value on the way) passes 2^:data:`MAX_BITS`; the partial sums of
two terms are sub-problems only in chains of at most :data:`MAX_PAIRED` terms.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Union

from conductor_gym.sim.perception.base import Fact, Problem, log_size, near_misses, read_int

__all__ = [
    "MAX_BITS",
    "MAX_NESTING",
    "MAX_PAIRED",
    "MAX_TOKENS",
    "ArithmeticProblem",
    "Node",
    "find_arithmetic",
    "parse_expression",
    "render",
    "value",
]

MAX_TOKENS = 1000
MAX_NESTING = 60
MAX_BITS = 14_000  # about 4214 digits: an answer Python can still write out
MAX_PAIRED = 64

# A canonical expression: an int, ("S", ((sign, node), ...)) for a +/- chain, or
# ("P", (factor, ...), (divisor, ...)) for a * / chain; members sorted by their text.
Node = Union[int, tuple[Any, ...]]  # noqa: UP007 (recursive alias)

# Starts only where no "-" or "(" precedes, so a long run of them without a digit is
# scanned once, not once per position. The same matches as
# ``(?<![-(])[-(]*+\d[\d \t+\-*/()]*``, written to start with a character class so that
# the regex engine skips to the next digit, "-" or "(" without trying each place.
_RUN = re.compile(r"[\d(-](?<![-(].)(?:(?<=\d)|[-(]*+\d)[\d \t+\-*/()]*")
_OPERATOR = re.compile(r"[-+*/]")
_ANSWER = re.compile(r"\s*-?\d+(\s*/\s*\d+)?\s*")
_TOKEN = re.compile(r"\d+|[-+*/()]")
_RESULT = re.compile(r"[ \t]*=[ \t]*(-?\d+(?:/\d+)?)(?![\d*/+])")


class _Syntax(Exception):
    pass


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _parse(tokens: list[str]) -> Node:
    pos = 0
    depth = 0  # open parentheses and unary minus signs around the current atom

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise _Syntax
        pos += 1
        return tokens[pos - 1]

    def atom() -> Node:
        nonlocal depth
        tok = take()
        if tok in ("(", "-"):
            depth += 1
            if depth > MAX_NESTING:
                raise _Syntax
            inner = chain() if tok == "(" else _neg(atom())
            if tok == "(" and take() != ")":
                raise _Syntax
            depth -= 1
            return inner
        number = read_int(tok) if tok.isdecimal() else None
        if number is None:
            raise _Syntax
        return number

    def term() -> Node:
        num: list[Node] = [atom()]
        den: list[Node] = []
        while peek() in ("*", "/"):
            (num if take() == "*" else den).append(atom())
        return _product(num, den)

    def chain() -> Node:
        terms = [(1, term())]
        while peek() in ("+", "-"):
            sign = 1 if take() == "+" else -1
            terms.append((sign, term()))
        return _sum(terms)

    node = chain()
    if pos != len(tokens):
        raise _Syntax
    return node


def _neg(node: Node) -> Node:
    return -node if isinstance(node, int) else ("S", ((-1, node),))


def _sum(terms: list[tuple[int, Node]]) -> Node:
    flat: list[tuple[int, Node]] = []
    for sign, node in terms:
        if isinstance(node, tuple) and node[0] == "S":
            flat.extend((sign * s, n) for s, n in node[1])
        else:
            flat.append((sign, node))
    if len(flat) == 1 and flat[0][0] == 1:
        return flat[0][1]
    return ("S", tuple(sorted(flat, key=lambda t: (render(t[1]), t[0]))))


def _product(num: list[Node], den: list[Node]) -> Node:
    n: list[Node] = []
    d: list[Node] = []
    for target, other, nodes in ((n, d, num), (d, n, den)):
        for node in nodes:
            if isinstance(node, tuple) and node[0] == "P":
                target.extend(node[1])
                other.extend(node[2])
            else:
                target.append(node)
    if len(n) == 1 and not d:
        return n[0]
    return ("P", tuple(sorted(n, key=render)), tuple(sorted(d, key=render)))


@lru_cache(maxsize=1 << 14)
def render(node: Node) -> str:
    """Canonical text of ``node`` (also a valid expression)."""
    if isinstance(node, int):
        return str(node) if node >= 0 else f"({node})"
    if node[0] == "S":
        parts = []
        for i, (sign, sub) in enumerate(node[1]):
            text = render(sub)
            parts.append(
                ("" if sign > 0 else "-") + text if i == 0 else f" {'+-'[sign < 0]} {text}"
            )
        return "(" + "".join(parts) + ")"
    text = " * ".join(render(x) for x in node[1])
    if node[2]:
        text += "".join(f" / {render(x)}" for x in node[2])
    return "(" + text + ")"


@lru_cache(maxsize=1 << 14)
def value(node: Node) -> Fraction:
    """Exact value; raises ``ArithmeticError``: ``ZeroDivisionError``, or
    ``OverflowError`` when a value on the way passes 2^:data:`MAX_BITS`."""
    if isinstance(node, int):
        return _bounded(Fraction(node))
    if node[0] == "S":
        total = Fraction(0)
        for sign, sub in node[1]:
            total = _bounded(total + sign * value(sub))
        return total
    out = Fraction(1)
    for x in node[1]:
        out = _bounded(out * value(x))
    for x in node[2]:
        out = _bounded(out / value(x))
    return out


def _bounded(v: Fraction) -> Fraction:
    if v.numerator.bit_length() > MAX_BITS or v.denominator.bit_length() > MAX_BITS:
        raise OverflowError(f"a value of more than {MAX_BITS} bits")
    return v


def _ops(node: Node) -> tuple[int, int, int]:
    """(operators, multiplications and divisions, nesting depth)."""
    if isinstance(node, int):
        return 0, 0, 0
    members = [sub for _, sub in node[1]] if node[0] == "S" else [*node[1], *node[2]]
    stats = [_ops(m) for m in members]
    ops = len(members) - 1 + sum(s[0] for s in stats)
    muls = (len(members) - 1 if node[0] == "P" else 0) + sum(s[1] for s in stats)
    return ops, muls, 1 + max((s[2] for s in stats), default=0)


@lru_cache(maxsize=1 << 14)
def parse_expression(text: str) -> Node | None:
    """The canonical form of ``text`` as one expression, or ``None`` (also past the
    bounds of the module docstring)."""
    tokens = _tokens(text)
    if not tokens or len(tokens) > MAX_TOKENS:
        return None
    try:
        return _parse(tokens)
    except (_Syntax, RecursionError):
        return None


def _fmt(v: Fraction) -> str:
    return str(v.numerator) if v.denominator == 1 else f"{v.numerator}/{v.denominator}"


def _members(node: Node) -> list[Node]:
    if isinstance(node, int):
        return []
    if node[0] == "S":
        return [sub for _, sub in node[1]]
    return [*node[1], *node[2]]


def _sub_nodes(node: Node) -> list[Node]:
    """Every operator node, and every sub-chain of two or more members of a chain."""
    out: list[Node] = []
    if isinstance(node, int):
        return out
    out.append(node)
    for m in _members(node):
        out.extend(_sub_nodes(m))
    if node[0] == "S" and 2 < len(node[1]) <= MAX_PAIRED:
        terms = node[1]
        for i in range(len(terms)):
            for j in range(i + 1, len(terms)):
                out.append(_sum([terms[i], terms[j]]))
    return out


@dataclass(frozen=True, eq=False)
class ArithmeticProblem(Problem):
    """An expression to evaluate (module docstring)."""

    node: Node = 0

    def check(self, answer: str) -> bool:
        parsed = parse_expression(answer) if _ANSWER.fullmatch(answer) else None
        if parsed is None or self.answer is None:
            return False
        try:
            return value(parsed) == value(self.node)
        except ArithmeticError:
            return False

    def sub_keys(self) -> frozenset[str]:
        return _sub_keys(self.node)

    def reduce(self, facts: Mapping[str, Fact]) -> tuple[Problem, bool] | None:
        used: list[Fact] = []
        node = _substitute(self.node, facts, used)
        if not used:
            return None
        problem = make_arithmetic(node, self.start, self.end)
        if problem is None:  # fully stated: the answer is the stated value
            stated = value(node) if isinstance(node, int) else None
            problem = ArithmeticProblem(
                family="arithmetic", key=self.key, answer=None if stated is None else _fmt(stated),
                size=0.0, start=self.start, end=self.end, _slips=self._slips, node=node,
            )  # fmt: skip
        # The same problem with less work left: it keeps its key (and so its quirks).
        problem = dataclasses.replace(problem, key=self.key, _slips=self._slips)
        return problem, all(f.correct for f in used)


@lru_cache(maxsize=1 << 12)
def _sub_keys(node: Node) -> frozenset[str]:
    return frozenset("arithmetic:" + render(n) for n in _sub_nodes(node)[1:])


def _fact_node(fact: Fact) -> Node | None:
    parsed = parse_expression(fact.value)
    return parsed if isinstance(parsed, int) else None


def _substitute(node: Node, facts: Mapping[str, Fact], used: list[Fact]) -> Node:
    if isinstance(node, int):
        return node
    fact = facts.get("arithmetic:" + render(node))
    if fact is not None and (replacement := _fact_node(fact)) is not None:
        used.append(fact)
        return replacement
    if node[0] == "S":
        terms = [(s, _substitute(n, facts, used)) for s, n in node[1]]
        # A stated partial sum of two terms of this chain replaces them.
        for i in range(len(terms) if 2 < len(terms) <= MAX_PAIRED else 0):
            for j in range(i + 1, len(terms)):
                pair = _sum([terms[i], terms[j]])
                fact = facts.get("arithmetic:" + render(pair))
                if fact is not None and (replacement := _fact_node(fact)) is not None:
                    used.append(fact)
                    rest = [t for k, t in enumerate(terms) if k not in (i, j)]
                    return _substitute(_sum([*rest, (1, replacement)]), facts, used)
        return _sum(terms)
    return _product(
        [_substitute(n, facts, used) for n in node[1]],
        [_substitute(n, facts, used) for n in node[2]],
    )


def make_arithmetic(node: Node, start: int = 0, end: int = 0) -> ArithmeticProblem | None:
    """The problem of evaluating ``node`` (``None`` for a bare number or a zero division)."""
    made = _made(node)
    if made is None:
        return None
    return ArithmeticProblem(
        family=made.family, key=made.key, answer=made.answer, size=made.size,
        start=start, end=end, _slips=made._slips, node=made.node,
    )  # fmt: skip


@lru_cache(maxsize=1 << 12)
def _made(node: Node) -> ArithmeticProblem | None:
    start = end = 0
    if isinstance(node, int):
        return None
    try:
        exact = value(node)
    except ArithmeticError:
        return None
    ops, muls, depth = _ops(node)
    size = ops + 0.5 * muls + 0.5 * (depth - 1) + 0.5 * log_size(exact)
    slips = near_misses(int(exact)) if exact.denominator == 1 else ()
    return ArithmeticProblem(
        family="arithmetic",
        key="arithmetic:" + render(node),
        answer=_fmt(exact),
        size=size,
        start=start,
        end=end,
        _slips=slips,
        node=node,
    )


def _trim(text: str) -> tuple[int, int]:
    """Bounds of ``text`` without trailing operators/blanks and unbalanced parentheses
    (in one pass: stripping operators and blanks moves no parenthesis)."""
    start, end = 0, len(text)
    opened = text.count("(") - text.count(")")
    while True:
        while end > start and text[end - 1] in " \t+-*/":
            end -= 1
        if opened > 0 and text[start] == "(":
            start += 1
            opened -= 1
        elif opened < 0 and text[end - 1] == ")":
            end -= 1
            opened += 1
        else:
            return start, end


def find_arithmetic(
    text: str,
) -> tuple[list[ArithmeticProblem], list[tuple[str, str, bool]]]:
    """Expressions posed in ``text`` and results stated there (``(key, value, right)``)."""
    problems: list[ArithmeticProblem] = []
    stated: list[tuple[str, str, bool]] = []
    for match in _RUN.finditer(text):
        if _OPERATOR.search(match.group(0), 1) is None:  # no operator: none once trimmed
            continue
        a, b = _trim(match.group(0))
        piece = match.group(0)[a:b]
        if not any(op in piece[1:] for op in "+-*/"):
            continue
        node = parse_expression(piece)
        if node is None or isinstance(node, int):
            continue
        begin, finish = match.start() + a, match.start() + b
        result = _RESULT.match(text, finish)
        if result is not None:
            claimed = parse_expression(result.group(1))
            try:
                right = claimed is not None and value(claimed) == value(node)
            except ArithmeticError:
                right = False
            stated.append(("arithmetic:" + render(node), result.group(1), right))
            continue
        problem = make_arithmetic(node, begin, finish)
        if problem is not None:
            problems.append(problem)
    return problems, stated
