"""Reading a located value as Python: checking that its statement assigns exactly the list
written (:func:`single_value`) and evaluating that list (:func:`literal`), with
deterministic details (see :mod:`conductor_gym.plan`)."""

from __future__ import annotations

import ast
import warnings
from typing import Any

from conductor_gym.plan.model import PlanParseError
from conductor_gym.plan.scan import Occurrence, line_of, snippet, statement_end

__all__ = ["literal", "short", "single_value"]

# How a detail names the expressions a literal cannot hold, or that a value turned into.
_KINDS: dict[type[ast.AST], str] = {
    ast.Attribute: "an attribute",
    ast.Await: "an await",
    ast.BinOp: "an operation",
    ast.BoolOp: "a boolean operation",
    ast.Call: "a call",
    ast.Compare: "a comparison",
    ast.Dict: "a dict with ** unpacking",  # the only dict a literal cannot be
    ast.DictComp: "a comprehension",
    ast.FormattedValue: "an f-string",
    ast.GeneratorExp: "a comprehension",
    ast.IfExp: "a conditional expression",
    ast.JoinedStr: "an f-string",
    ast.Lambda: "a lambda",
    ast.ListComp: "a comprehension",
    ast.Name: "a name",
    ast.NamedExpr: "an assignment expression",
    ast.SetComp: "a comprehension",
    ast.Slice: "a slice",
    ast.Starred: "a starred expression",
    ast.Subscript: "a subscript",
    ast.Tuple: "a tuple",
    ast.UnaryOp: "an operation",
    ast.Yield: "a yield",
    ast.YieldFrom: "a yield",
}


def _quiet_parse(src: str) -> ast.Expression:
    """``ast.parse(src, mode="eval")``; invalid escapes such as "\\s" warn (an error under
    ``-W error``) but are valid."""
    if "\\" not in src:
        return ast.parse(src, mode="eval")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(src, mode="eval")


def short(value: object, width: int = 60) -> str:
    r = repr(value)
    return r if len(r) <= width else r[: width - 3] + "..."


def _kind(node: ast.AST) -> str:
    return _KINDS.get(type(node), "an expression")


def single_value(text: str, occ: Occurrence, max_depth: int) -> None:
    """Reject a value that goes on after its list as Python (``[0] * 6``, ``[2, 0][::-1]``,
    ``[0] + [1]``, ``[0] if c else [1]``, ``[0], [1]``): the plan would not be the list
    written. Text after the list that is not Python with it (prose, a closing backtick) is
    not part of the value."""
    stop = statement_end(text, occ.end, max_depth)
    if not text[occ.end : stop].replace("\\\n", "").strip():
        return
    src = text[occ.start : stop].rstrip()
    try:
        value = _quiet_parse(src).body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return
    if isinstance(value, ast.List):
        return
    raise PlanParseError(
        "not_a_list",
        f"{occ.name} on line {line_of(text, occ.start)} is assigned {short(src)}, "
        f"{_kind(value)}, not one list literal (write the list itself)",
    )


def _non_literal(node: ast.AST) -> ast.AST | None:
    """The first node of ``node`` that :func:`ast.literal_eval` does not accept."""
    if isinstance(node, ast.Constant):
        return None
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        children: list[ast.AST | None] = list(node.elts)
    elif isinstance(node, ast.Dict):
        children = [c for pair in zip(node.keys, node.values, strict=True) for c in pair]
        if None in children:  # a ** unpacking
            return node
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        plain = node.func.id == "set" and not node.args and not node.keywords
        return None if plain else node
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        return None if _is_number(node.operand) else node
    elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        left = node.left.operand if isinstance(node.left, ast.UnaryOp) else node.left
        right = node.right
        complex_right = isinstance(right, ast.Constant) and isinstance(right.value, complex)
        return None if _is_number(left) and complex_right else node
    else:
        return node
    for child in children:
        if child is not None and (bad := _non_literal(child)) is not None:
            return bad
    return None


def _is_number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float | complex)
        and not isinstance(node.value, bool)
    )


def _malformed(src: str, first_line: int) -> str:
    """What :func:`ast.literal_eval` found in ``src`` that a literal cannot hold, with its
    line in the text (its own message shows the node's repr, a memory address)."""
    try:
        bad = _non_literal(_quiet_parse(src).body)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        bad = None
    if bad is None:
        return "it holds something a literal cannot"
    segment = ast.get_source_segment(src, bad) or ""
    line = first_line + getattr(bad, "lineno", 1) - 1
    return f"{_kind(bad)} {short(segment, 40)} on line {line} is not a literal value"


def literal(text: str, occ: Occurrence) -> list[Any]:
    """Evaluate a closed value: a literal that starts at "[" and ends at its match is a list."""
    src = text[occ.start : occ.end]
    line = line_of(text, occ.start)
    value: list[Any]
    try:
        if "\\" in src:
            # Invalid escapes such as "\s" warn (an error under -W error) but are valid.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = ast.literal_eval(src)
        else:
            value = ast.literal_eval(src)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as exc:
        if isinstance(exc, SyntaxError):
            msg = exc.msg
        elif isinstance(exc, ValueError | TypeError) and str(exc).startswith("malformed node"):
            msg = _malformed(src, line)
        else:
            msg = str(exc) or "the expression is nested too deeply"
        raise PlanParseError(
            "syntax",
            f"the {occ.name} list on line {line} is not a Python literal"
            f" ({type(exc).__name__}: {msg}): {snippet(text, occ.start)}",
        ) from None
    return value
