"""A small, safe interpreter for the Python the trace families print from.

It walks the :mod:`ast` of a program and never calls ``eval``/``exec``. Allowed:
integer, string and list literals; names; ``= += -= *= //= %=``; ``for`` over
``range(...)``, lists, strings and slices; ``while``; ``if``/``elif``/``else``;
``def`` with positional parameters and ``return`` (recursion up to depth 60);
``+ - * // % **`` (exponents up to 64), comparisons, ``and``/``or``/``not``;
indexing and slicing; calls of ``len``, ``range``, ``abs``, ``min``, ``max``,
``sum``, ``print`` and the program's own functions. Anything else, more than
:data:`MAX_STEPS` evaluated statements, or a value outside 10^30 is
:class:`Unsupported`. :func:`run` returns what the program printed and how many
statements it executed (its size).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conductor_gym.errors import ConductorGymError

__all__ = ["MAX_STEPS", "Run", "Unsupported", "run"]

MAX_STEPS = 20_000
_MAX_DEPTH = 60
_LIMIT = 10**30

_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


class Unsupported(ConductorGymError):
    """The program uses something outside the subset, or runs too long."""


class _Return(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


@dataclass(frozen=True)
class Run:
    """What a program printed (one string per ``print``) and its executed statements."""

    printed: tuple[str, ...]
    steps: int
    loops: int
    calls: int


class _Machine:
    def __init__(self) -> None:
        self.steps = 0
        self.loops = 0
        self.calls = 0
        self.depth = 0
        self.printed: list[str] = []
        self.functions: dict[str, ast.FunctionDef] = {}

    def block(self, body: list[ast.stmt], env: dict[str, Any]) -> None:
        for stmt in body:
            self.stmt(stmt, env)

    def stmt(self, node: ast.stmt, env: dict[str, Any]) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Unsupported("too many steps")
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            self.assign(node.targets[0], self.expr(node.value, env), env)
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            op = _BINARY.get(type(node.op))
            if op is None:
                raise Unsupported("operator")
            env[node.target.id] = self.check(
                op(self.name(node.target.id, env), self.expr(node.value, env))
            )
        elif isinstance(node, ast.For) and not node.orelse:
            self.loops += 1
            for item in list(self.expr(node.iter, env)):
                self.assign(node.target, item, env)
                self.block(node.body, env)
        elif isinstance(node, ast.While) and not node.orelse:
            self.loops += 1
            while self.expr(node.test, env):
                self.steps += 1
                if self.steps > MAX_STEPS:
                    raise Unsupported("too many steps")
                self.block(node.body, env)
        elif isinstance(node, ast.If):
            self.block(node.body if self.expr(node.test, env) else node.orelse, env)
        elif isinstance(node, ast.Expr):
            self.expr(node.value, env)
        elif isinstance(node, ast.FunctionDef):
            args = node.args
            if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or node.decorator_list:
                raise Unsupported("function signature")
            self.functions[node.name] = node
        elif isinstance(node, ast.Return):
            raise _Return(None if node.value is None else self.expr(node.value, env))
        elif isinstance(node, ast.Pass):
            return
        else:
            raise Unsupported(type(node).__name__)

    def assign(self, target: ast.expr, value: Any, env: dict[str, Any]) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
        elif isinstance(target, ast.Subscript):
            container = self.expr(target.value, env)
            if not isinstance(container, list):
                raise Unsupported("item assignment")
            container[self.expr(target.slice, env)] = value
        else:
            raise Unsupported("assignment target")

    def name(self, name: str, env: dict[str, Any]) -> Any:
        if name in env:
            return env[name]
        if name in self.globals:
            return self.globals[name]
        raise Unsupported(f"unknown name {name}")

    def check(self, value: Any) -> Any:
        if isinstance(value, int) and abs(value) > _LIMIT:
            raise Unsupported("value too large")
        return value

    def expr(self, node: ast.expr, env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Constant) and type(node.value) in (int, str, bool):
            return node.value
        if isinstance(node, ast.Name):
            return self.name(node.id, env)
        if isinstance(node, ast.List | ast.Tuple):
            return [self.expr(e, env) for e in node.elts]
        if isinstance(node, ast.BinOp):
            op = _BINARY.get(type(node.op))
            left, right = self.expr(node.left, env), self.expr(node.right, env)
            if op is None or (
                isinstance(node.op, ast.Pow) and (not isinstance(right, int) or right > 64)
            ):
                raise Unsupported("operator")
            try:
                return self.check(op(left, right))
            except (ZeroDivisionError, TypeError) as exc:
                raise Unsupported(str(exc)) from None
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand, env)
            if isinstance(node.op, ast.USub):
                return -operand
            if isinstance(node.op, ast.Not):
                return not operand
            raise Unsupported("unary operator")
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                result: Any = True
                for v in node.values:
                    result = self.expr(v, env)
                    if not result:
                        return result
                return result
            result = False
            for v in node.values:
                result = self.expr(v, env)
                if result:
                    return result
            return result
        if isinstance(node, ast.Compare):
            left = self.expr(node.left, env)
            for cmp, comp in zip(node.ops, node.comparators, strict=True):
                right = self.expr(comp, env)
                if not _COMPARE[type(cmp)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.Subscript):
            container = self.expr(node.value, env)
            if isinstance(node.slice, ast.Slice):
                parts = [
                    None if p is None else self.expr(p, env)
                    for p in (node.slice.lower, node.slice.upper, node.slice.step)
                ]
                return container[slice(*parts)]
            try:
                return container[self.expr(node.slice, env)]
            except (IndexError, TypeError, KeyError) as exc:
                raise Unsupported(str(exc)) from None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            return self.call(node.func.id, [self.expr(a, env) for a in node.args], env)
        raise Unsupported(type(node).__name__)

    def call(self, name: str, args: list[Any], env: dict[str, Any]) -> Any:
        self.calls += 1
        if name in self.functions:
            fn = self.functions[name]
            params = [a.arg for a in fn.args.args]
            if len(params) != len(args):
                raise Unsupported("arity")
            self.depth += 1
            if self.depth > _MAX_DEPTH:
                raise Unsupported("recursion too deep")
            try:
                self.block(fn.body, dict(zip(params, args, strict=True)))
                result = None
            except _Return as ret:
                result = ret.value
            finally:
                self.depth -= 1
            return result
        if name == "print":
            self.printed.append(" ".join(str(a) for a in args))
            return None
        builtin = _BUILTINS.get(name)
        if builtin is None:
            raise Unsupported(f"call of {name}")
        try:
            return builtin(*args)
        except (TypeError, ValueError) as exc:
            raise Unsupported(str(exc)) from None

    globals: dict[str, Any]  # the program's top-level names, set by run()


_BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len,
    "range": lambda *a: range(*a) if len(range(*a)) <= MAX_STEPS else _too_long(),
    "abs": abs,
    "min": min,
    "max": max,
    "sum": sum,
}


def _too_long() -> Any:
    raise Unsupported("range too long")


def run(source: str) -> Run:
    """Run ``source`` (module docstring); raises :class:`Unsupported`."""
    try:
        module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise Unsupported(f"syntax: {exc}") from None
    machine = _Machine()
    env: dict[str, Any] = {}
    machine.globals = env
    try:
        machine.block(module.body, env)
    except _Return:
        raise Unsupported("return outside a function") from None
    except RecursionError:
        raise Unsupported("recursion too deep") from None
    return Run(tuple(machine.printed), machine.steps, machine.loops, machine.calls)
