"""Expression trees, shared by ``arithmetic`` and ``countdown``."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction


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
