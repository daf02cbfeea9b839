"""A small, safe interpreter for the Python the trace families print from.

It walks the :mod:`ast` of a program and never calls ``eval``/``exec``. Allowed:
integer, string and list literals; names; ``= += -= *= //= %=``; ``for`` over
``range(...)``, lists, strings and slices; ``while``; ``if``/``elif``/``else``;
``def`` with positional parameters and ``return`` (recursion up to depth 60);
``+ - * // % **`` (exponents up to 64), comparisons, ``and``/``or``/``not``;
indexing and slicing; calls of ``len``, ``range``, ``abs``, ``min``, ``max``,
``sum``, ``print`` and the program's own functions. Anything else, more than
:data:`MAX_STEPS` evaluated statements, an integer result outside 10^30, more than
:data:`MAX_WORK` elements copied or compared, or an operation Python itself refuses (a
type mismatch such as ``3 > [1, 2]``, a zero division, an index out of range) is
:class:`Unsupported`: :func:`run` raises nothing else, and its work is bounded by those
limits whatever the program. It returns what the program printed and how many
statements it executed (its size).

Work is counted before it is done: a concatenation or repetition is charged the length
of its result, a loop the length it iterates, a comparison, ``print``, ``min``, ``max``
and ``sum`` the size of their operands (every element of nested lists, a shared list as
often as it is reached, an integer by its digits), so that ``x = [x, x]`` doubled sixty
times is refused when printed rather than printed for ever.
"""

from __future__ import annotations

import ast
import operator
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conductor_gym.errors import ConductorGymError

__all__ = ["MAX_STEPS", "MAX_WORK", "WALK_COST", "Run", "Unsupported", "run", "run_module"]

MAX_STEPS = 20_000
MAX_WORK = 10_000_000
"""Elements a run may copy in all; an element compared or printed counts
:data:`WALK_COST` (its walk runs in Python, not C). See the module docstring."""
WALK_COST = 32
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
# A %-format whose width or precision is read from the arguments or has four or more
# digits: its output has no small bound.
_WIDE_FORMAT = re.compile(r"%[^a-zA-Z%]*(?:\*|\d{4})")
# What Python raises on values the subset allows but an operation refuses.
_REFUSED = (TypeError, ValueError, ZeroDivisionError, OverflowError, IndexError, KeyError)


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
        self.work = 0
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
            current = self.name(node.target.id, env)
            value = self.expr(node.value, env)
            env[node.target.id] = self.binary(node.op, current, value, augmented=True)
        elif isinstance(node, ast.For) and not node.orelse:
            self.loops += 1
            iterable = self.expr(node.iter, env)
            if not isinstance(iterable, list | str | range):
                raise Unsupported(f"iteration over {type(iterable).__name__}")
            self.charge(len(iterable))
            for item in list(iterable):
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
            index = self.expr(target.slice, env)
            try:
                container[index] = value
            except _REFUSED as exc:
                raise Unsupported(str(exc)) from None
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

    def charge(self, work: int) -> None:
        """Count ``work`` elements toward :data:`MAX_WORK`, before doing it."""
        self.work += work
        if self.work > MAX_WORK:
            raise Unsupported("too much work")

    def weigh(self, *values: Any) -> None:
        """Charge the size of ``values`` (module docstring), walking at most what is left
        of the budget."""
        for value in values:
            self.charge(WALK_COST * _weight(value, (MAX_WORK - self.work) // WALK_COST))

    def binary(
        self, op_node: ast.operator, left: Any, right: Any, *, augmented: bool = False
    ) -> Any:
        """``left op right``, its cost charged first (shared by ``a op b`` and, with
        ``augmented``, ``a op= b``)."""
        op = _BINARY.get(type(op_node))
        if op is None:
            raise Unsupported("operator")
        if isinstance(op_node, ast.Pow) and not augmented:
            if not isinstance(right, int) or right > 64:
                raise Unsupported("operator")
        elif (
            isinstance(op_node, ast.Pow)
            and isinstance(left, int)
            and isinstance(right, int)
            and abs(left) >= 2
            and right > 100
        ):
            # ``a **= b`` bounds no exponent; a result past 10^30 (|a| >= 2 and b > 100
            # is past it) is refused before it is computed.
            raise Unsupported("value too large")
        if isinstance(op_node, ast.Add) and _sequence(left) and type(left) is type(right):
            self.charge(len(left) + len(right))
        elif isinstance(op_node, ast.Mult):
            for seq, count in ((left, right), (right, left)):
                if _sequence(seq) and isinstance(count, int):
                    self.charge(len(seq) * max(count, 0))
        elif isinstance(op_node, ast.Mod) and isinstance(left, str):
            if _WIDE_FORMAT.search(left):
                raise Unsupported("format width")
            self.charge(len(left))
            self.weigh(right)
        try:
            return self.check(op(left, right))
        except _REFUSED as exc:
            raise Unsupported(str(exc)) from None

    def expr(self, node: ast.expr, env: dict[str, Any]) -> Any:
        if isinstance(node, ast.Constant) and type(node.value) in (int, str, bool):
            return node.value
        if isinstance(node, ast.Name):
            return self.name(node.id, env)
        if isinstance(node, ast.List | ast.Tuple):
            return [self.expr(e, env) for e in node.elts]
        if isinstance(node, ast.BinOp):
            left, right = self.expr(node.left, env), self.expr(node.right, env)
            return self.binary(node.op, left, right)
        if isinstance(node, ast.UnaryOp):
            operand = self.expr(node.operand, env)
            if isinstance(node.op, ast.USub):
                if not isinstance(operand, int | float):
                    raise Unsupported(f"bad operand type for unary -: {type(operand).__name__}")
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
                compare = _COMPARE.get(type(cmp))
                if compare is None:
                    raise Unsupported(type(cmp).__name__)
                self.weigh(left, right)
                try:
                    if not compare(left, right):
                        return False
                except _REFUSED as exc:
                    raise Unsupported(str(exc)) from None
                left = right
            return True
        if isinstance(node, ast.Subscript):
            container = self.expr(node.value, env)
            if isinstance(node.slice, ast.Slice):
                parts = [
                    None if p is None else self.expr(p, env)
                    for p in (node.slice.lower, node.slice.upper, node.slice.step)
                ]
                try:
                    part = container[slice(*parts)]
                except _REFUSED as exc:
                    raise Unsupported(str(exc)) from None
                if isinstance(part, list | str):
                    self.charge(len(part))
                return part
            index = self.expr(node.slice, env)
            try:
                return container[index]
            except _REFUSED as exc:
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
            self.weigh(*args)
            try:
                self.printed.append(" ".join(str(a) for a in args))
            except _REFUSED as exc:  # an integer too long to write out
                raise Unsupported(str(exc)) from None
            return None
        builtin = _BUILTINS.get(name)
        if builtin is None:
            raise Unsupported(f"call of {name}")
        if name in ("min", "max", "sum"):
            self.weigh(*args)
        if name == "sum" and len(args) == 2 and _sequence(args[1]) and _sequence(args[0]):
            # sum(lists, start) concatenates: each partial sum is copied again.
            self.charge(len(args[0]) * _weight(args[0], MAX_WORK // WALK_COST))
        try:
            result = builtin(*args)
        except _REFUSED as exc:
            raise Unsupported(str(exc)) from None
        return self.check(result) if name == "sum" else result

    globals: dict[str, Any]  # the program's top-level names, set by run()


def _sequence(value: Any) -> bool:
    return isinstance(value, list | str)


def _weight(value: Any, budget: int) -> int:
    """The size of ``value`` as the module docstring counts it, or a number above
    ``budget`` once the walk passes it (the walk stops there). A list met again inside
    itself counts as its ``[...]``; the walk keeps its own stack, so any depth is fine."""
    total = 0
    inside: set[int] = set()
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        item, leaving = stack.pop()
        if leaving:
            inside.discard(id(item))
            continue
        if type(item) is list:
            if id(item) in inside:
                total += 5
                continue
            total += 2 + len(item)
            inside.add(id(item))
            stack.append((item, True))
            stack.extend((element, False) for element in item)
        elif isinstance(item, str):
            total += 2 + len(item)
        elif isinstance(item, int):
            total += 1 + item.bit_length() // 3
        else:
            total += 1
        if total > budget:
            break
    return total


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
        with warnings.catch_warnings():  # text read as code: its SyntaxWarnings are noise
            warnings.simplefilter("ignore", SyntaxWarning)
            module = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise Unsupported(f"syntax: {exc}") from None
    return run_module(module)


def run_module(module: ast.Module) -> Run:
    """:func:`run` for a program already parsed (``ast.parse(source)``; the tree is only
    read); raises :class:`Unsupported`."""
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
