r"""Grader ``"countdown"``: an arithmetic expression over given numbers reaches a target.

Contract: ``reference`` is the target integer as a string and ``metadata["numbers"]`` the
list of integers the expression may use, each at most as often as it is listed (not all
need be used); a malformed reference or missing numbers raise
:class:`~conductor_gym.graders.base.GraderError`.

The expression is found as reasoning-gym's countdown and TinyZero read it, read after
any ``</think>``: the content of the last ``<answer>...</answer>`` tag, or of the last
``\boxed{...}``, whichever ends later; else the value after the last anchored phrase
("Answer: ..."; :func:`~conductor_gym.graders.extract.graded_answer`); else a bare final
line that is an arithmetic expression (only digits, operators, parentheses, spaces and
an optional ``= value``). Numbers: each given number may be used at most as often as it
is listed, and not every number has to be used (the task's own rule). Peers differ here:
TinyZero requires every number exactly once, reasoning-gym's scorer only that each
number used is among those given (reuse allowed) and truncates the value to an integer;
we are exact and stricter than reasoning-gym on reuse. ``\times``, ``\cdot``, ``\div``,
their Unicode signs, ``\frac{a}{b}``, LaTeX ``\left( \right)`` and braces used as
parentheses are rewritten to Python operators, and a trailing ``= <value>`` is dropped
(only the left-hand side is judged). It is parsed with :func:`ast.parse` in ``eval``
mode and evaluated by walking the tree here, never by ``eval``: only integer literals,
binary ``+ - * /``, unary minus and parentheses are allowed, and arithmetic is exact
(:class:`fractions.Fraction`, so intermediate fractions are fine, e.g. ``(1 / 3) * 3``).
Expressions longer than :data:`MAX_EXPRESSION_CHARS` are rejected unparsed, which bounds
the work to microseconds. The ``reason`` names what failed: no expression, syntax, a
forbidden construct, a number used too often or not given, division by zero, or the
value. Numbers are checked before the value is computed."""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from conductor_gym.graders.base import Grade, GraderError, register_grader
from conductor_gym.graders.extract import boxes, graded_answer, strip_reasoning

__all__ = [
    "MAX_EXPRESSION_CHARS",
    "evaluate_expression",
    "extract_expression",
    "grade_countdown",
    "normalize_expression",
]

MAX_EXPRESSION_CHARS = 200
"""Longest expression the grader will parse (characters, after normalization)."""

_REPLACEMENTS = (
    ("\\left", ""),
    ("\\right", ""),
    ("\\times", "*"),
    ("\\cdot", "*"),
    ("\\ast", "*"),
    ("\\div", "/"),
    ("\u00d7", "*"),
    ("\u22c5", "*"),
    ("\u00b7", "*"),
    ("\u2217", "*"),
    ("\u00f7", "/"),
    ("\u2212", "-"),
    ("\u2013", "-"),
)
_TAG_OPEN, _TAG_CLOSE = "<answer>", "</answer>"
_BARE_EXPRESSION = re.compile(
    r"(?:[\d\s()+\-*/=.{}\u00d7\u00f7\u2212\u2013\u22c5\u00b7\u2217]|\\[a-z]+)*"
)
_LATEX_FRAC = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")
_BINARY_OPS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
}


class _Rejected(Exception):
    """The expression breaks a rule; the message is the grade's reason."""


def normalize_expression(text: str) -> str:
    r"""Rewrite LaTeX and Unicode operators to Python ones and drop a trailing ``= value``."""
    for old, new in _REPLACEMENTS:
        text = text.replace(old, new)
    previous = None
    while previous != text:  # innermost \frac first, so nested fractions unwind
        previous = text
        text = _LATEX_FRAC.sub(r"(\1)/(\2)", text)
    text = text.replace("{", "(").replace("}", ")")
    left, equals, _ = text.partition("=")
    if equals and left.strip():
        text = left
    return text.strip()


def _bare_final_line(response: str) -> str | None:
    """The last non-empty line when it is an arithmetic expression over numbers."""
    for line in reversed(response.splitlines()):
        text = line.strip().strip("`$*").strip()
        if not text:
            continue
        expression = normalize_expression(text)
        if (
            _BARE_EXPRESSION.fullmatch(text) is not None
            and any(ch.isdigit() for ch in expression)
            and any(op in expression for op in "+-*/")
        ):
            return text
        return None
    return None


def _last_answer_tag(response: str) -> tuple[str, int] | None:
    """``(content, end)`` of the last ``<answer>...</answer>`` (any case), or ``None``;
    two reverse searches, so linear however many tags are left open."""
    lowered = response.lower()
    close = lowered.rfind(_TAG_CLOSE)
    if close < 0:
        return None
    open_ = lowered.rfind(_TAG_OPEN, 0, close)
    if open_ < 0:
        return None
    return response[open_ + len(_TAG_OPEN) : close], close + len(_TAG_CLOSE)


def extract_expression(response: str) -> tuple[str, str] | None:
    """``(expression, rule)`` by the rules in the module docstring, normalized; or ``None``."""
    response = strip_reasoning(response)
    tag = _last_answer_tag(response)
    found: tuple[str, str] | None = None
    if tag is not None and (not (boxed := boxes(response)) or tag[1] >= boxed[-1][1]):
        found = tag[0], "answer tag"
    else:
        found = graded_answer(response)
    if found is None:
        bare = _bare_final_line(response)
        found = (bare, "final line") if bare is not None else None
    if found is None:
        return None
    expression = normalize_expression(found[0])
    return (expression, found[1]) if expression else None


def _check_nodes(tree: ast.Expression) -> list[int]:
    """The integer literals of ``tree``; raises :class:`_Rejected` on anything else."""
    used: list[int] = []
    for node in ast.walk(tree.body):
        if isinstance(node, ast.Constant):
            if type(node.value) is not int:
                raise _Rejected(f"{node.value!r} is not an integer")
            used.append(node.value)
        elif isinstance(node, ast.BinOp):
            if type(node.op) not in _BINARY_OPS:
                raise _Rejected(f"operator {type(node.op).__name__} is not allowed (+ - * / only)")
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, ast.USub):
                raise _Rejected(f"unary {type(node.op).__name__} is not allowed (only minus)")
        elif not isinstance(node, ast.operator | ast.unaryop):
            raise _Rejected(
                f"{type(node).__name__} is not allowed (only integers, + - * / and parentheses)"
            )
    return used


def _value(node: ast.expr) -> Fraction:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return Fraction(node.value)
    if isinstance(node, ast.UnaryOp):
        return -_value(node.operand)
    assert isinstance(node, ast.BinOp)  # _check_nodes admitted nothing else
    left, right = _value(node.left), _value(node.right)
    if isinstance(node.op, ast.Add):
        return left + right
    if isinstance(node.op, ast.Sub):
        return left - right
    if isinstance(node.op, ast.Mult):
        return left * right
    if right == 0:
        raise _Rejected("division by zero")
    return left / right


def _parse(expression: str) -> tuple[ast.Expression, list[int]]:
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise _Rejected(f"the expression is longer than {MAX_EXPRESSION_CHARS} characters")
    try:
        tree = ast.parse(expression, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise _Rejected(f"{expression!r} is not an arithmetic expression") from None
    return tree, _check_nodes(tree)


def evaluate_expression(expression: str) -> tuple[Fraction, list[int]]:
    """Exact value and integer literals of an allowed expression.

    Raises ``ValueError`` (with the reason) when the expression is too long, does not
    parse, uses anything but integers, ``+ - * /``, unary minus and parentheses, or
    divides by zero.
    """
    try:
        tree, used = _parse(expression)
        return _value(tree.body), used
    except _Rejected as exc:
        raise ValueError(str(exc)) from None


def _allowed_numbers(metadata: Mapping[str, Any]) -> list[int]:
    numbers = metadata.get("numbers")
    if not isinstance(numbers, list | tuple) or not all(type(n) is int for n in numbers):
        raise GraderError(f"countdown: metadata['numbers'] must be a list of ints, got {numbers!r}")
    return list(numbers)


@register_grader("countdown")
def grade_countdown(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    """Grade ``response`` as correct when its expression uses only the allowed numbers
    (each at most once per listing) and evaluates exactly to ``reference``."""
    try:
        target = int(reference.strip())
    except ValueError:
        raise GraderError(f"countdown: the reference {reference!r} is not an integer") from None
    numbers = _allowed_numbers(metadata)
    found = extract_expression(response)
    if found is None:
        return Grade(
            False,
            None,
            "no expression found (expected <answer>...</answer>, \\boxed{...}, 'Answer: ...' "
            "or an expression as the last line)",
        )
    expression, rule = found
    try:
        tree, used = _parse(expression)
    except _Rejected as exc:
        return Grade(False, expression, f"{rule}: {exc}")
    extra = Counter(used) - Counter(numbers)
    if extra:
        over = ", ".join(
            f"{n} ({'used too often' if n in numbers else 'not given'})" for n in sorted(extra)
        )
        reason = f"{rule}: uses numbers beyond those allowed {numbers}: {over}"
        return Grade(False, expression, reason)
    try:
        value = _value(tree.body)
    except _Rejected as exc:
        return Grade(False, expression, f"{rule}: {exc}")
    if value != target:
        shown = str(value.numerator) if value.denominator == 1 else str(value)
        return Grade(False, expression, f"{rule}: {expression} = {shown}, not the target {target}")
    return Grade(True, expression, f"{rule}: {expression} = {target} with allowed numbers")
