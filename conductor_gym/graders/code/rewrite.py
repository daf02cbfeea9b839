"""Instrumenting a ``unittest`` module (``test_code``) in the parent, before it reaches
the sandbox, so that what the test code itself does goes past the harness's checks
(see :mod:`.harness`):

* every call ``f(a, k=b)`` becomes ``CALL(label, f, a, k=b)`` and every method call
  ``x.m(a)`` becomes ``CALL_ATTR(label, x, "m", a)``: the harness checks its integrity
  (and that no thread the program started is running) just before the call, after the
  callee and the arguments were evaluated, so a patch that undoes itself when called is
  seen before it runs; ``label`` (the callee's source) names a callee that must not be
  the program's code: any method, and a name the test code imports;
* every operand of a comparison (``==``, ``<``, ``in``... but not ``is``) and every
  value whose truth is tested (``if``, ``while``, ``assert``, ``and``/``or``, ``not``,
  a conditional expression, a comprehension's ``if``) becomes ``VALUE(operand)``: the
  harness refuses one whose comparison or truth methods the program wrote, searched
  into containers, numpy object arrays and pandas objects.

``CALL``, ``CALL_ATTR`` and ``VALUE`` are written as three string constants (the
``tokens``) which the harness, after compiling the module, replaces with its frozen
guard objects in the code objects' constants: nothing in the module's globals for the
program to swap. Calls whose meaning depends on their caller's frame (``super()``,
``locals()``...) are left as they are.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from conductor_gym.graders.base import GraderError

__all__ = ["instrument_tests"]

# Builtins that look at the frame that calls them: wrapping them would show them the
# guard's frame instead of the test's.
_FRAME_BOUND = frozenset(
    {"super", "locals", "vars", "dir", "globals", "eval", "exec", "breakpoint"}
)
_LABEL_MAX = 80


def _imported_names(tree: ast.Module) -> set[str]:
    """Names the test code binds with ``import`` (not from the solution's module)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names.add(alias.asname or alias.name.split(".", 1)[0])
        elif isinstance(node, ast.ImportFrom) and node.module != "solution":
            names |= {alias.asname or alias.name for alias in node.names if alias.name != "*"}
    return names


class _Instrument(ast.NodeTransformer):
    def __init__(self, tokens: Mapping[str, str], imported: set[str]) -> None:
        self.tokens = tokens
        self.imported = imported

    def _guard(self, kind: str) -> ast.expr:
        return ast.Constant(self.tokens[kind])

    def _value(self, node: ast.expr) -> ast.expr:
        if isinstance(node, ast.Constant | ast.Compare | ast.BoolOp) or (
            isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
        ):
            return node  # already a checked result (or a literal)
        return ast.Call(self._guard("value"), [node], [])

    def visit_Call(self, node: ast.Call) -> ast.AST:
        label = ast.unparse(node.func)[:_LABEL_MAX]  # the callee as the test code wrote it
        self.generic_visit(node)
        func = node.func
        if isinstance(func, ast.Name) and func.id in _FRAME_BOUND:
            return node
        if isinstance(func, ast.Attribute):
            args = [ast.Constant(label), func.value, ast.Constant(func.attr), *node.args]
            return ast.Call(self._guard("attr"), args, node.keywords)
        if not (isinstance(func, ast.Name) and func.id in self.imported):
            label = ""
        return ast.Call(self._guard("call"), [ast.Constant(label), func, *node.args], node.keywords)

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        if all(isinstance(op, ast.Is | ast.IsNot) for op in node.ops):
            return node
        node.left = ast.Call(self._guard("value"), [node.left], [])
        node.comparators = [ast.Call(self._guard("value"), [c], []) for c in node.comparators]
        return node

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.AST:
        self.generic_visit(node)
        node.values = [self._value(value) for value in node.values]
        return node

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            node.operand = self._value(node.operand)
        return node

    def _test(self, node: ast.If | ast.While | ast.IfExp | ast.Assert) -> ast.AST:
        self.generic_visit(node)
        node.test = self._value(node.test)
        return node

    visit_If = visit_While = visit_IfExp = visit_Assert = _test

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        self.generic_visit(node)
        node.ifs = [self._value(test) for test in node.ifs]
        return node


def instrument_tests(test_code: str, tokens: Mapping[str, str]) -> str:
    """``test_code`` with its calls, comparisons and truth tests routed through the
    harness's guards (see the module docstring); ``tokens`` maps ``"call"``, ``"attr"``
    and ``"value"`` to the string constants that stand for them.

    Raises :class:`~conductor_gym.graders.base.GraderError` if ``test_code`` does not
    parse or a token already occurs in it.
    """
    for token in tokens.values():
        if token in test_code:
            raise GraderError(f"code: test_code already contains the harness's token {token}")
    try:
        tree = ast.parse(test_code)
        tree = _Instrument(tokens, _imported_names(tree)).visit(tree)
        return ast.unparse(ast.fix_missing_locations(tree))
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise GraderError(f"code: test_code could not be instrumented: {exc}") from exc
