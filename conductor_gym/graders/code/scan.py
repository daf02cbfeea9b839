"""The static checks run in the parent, before anything runs: the scan of the program for
test-machinery tampering (:func:`scan_program`) and the count of the test methods of a
``unittest`` module (:func:`count_test_methods`)."""

from __future__ import annotations

import ast
from collections.abc import Mapping

from conductor_gym.graders.base import GraderError

__all__ = ["count_test_methods", "scan_program"]

_MACHINERY = frozenset(
    {
        "unittest",
        "TestCase",
        "TestResult",
        "TestSuite",
        "TestLoader",
        "TextTestRunner",
        "TextTestResult",
        "IsolatedAsyncioTestCase",
        "FunctionTestCase",
        "builtins",
        "__builtins__",
    }
)
_MACHINERY_MODULES = ("unittest", "builtins")
_FORBIDDEN_ATTRIBUTES = {
    "_getframe": "sys._getframe",
    "_current_frames": "sys._current_frames",
    "f_back": "frame access (f_back)",
    "f_locals": "frame access (f_locals)",
    "f_globals": "frame access (f_globals)",
    "f_builtins": "frame access (f_builtins)",
    "tb_frame": "frame access (tb_frame)",
    "gi_frame": "frame access (gi_frame)",
    "cr_frame": "frame access (cr_frame)",
    "ag_frame": "frame access (ag_frame)",
    "currentframe": "inspect frame access (currentframe)",
    "getouterframes": "inspect frame access (getouterframes)",
    "getinnerframes": "inspect frame access (getinnerframes)",
    "get_objects": "gc.get_objects",
    "get_referrers": "gc.get_referrers",
    "get_referents": "gc.get_referents",
    "_exit": "os._exit",
    "__subclasses__": "__subclasses__",
    "__globals__": "__globals__",
    "__builtins__": "__builtins__",
    "settrace": "sys.settrace",
    "setprofile": "sys.setprofile",
}
_FORBIDDEN_MODULE_ATTRIBUTES = {
    ("sys", "modules"): "sys.modules",
    ("sys", "exit"): "sys.exit",
    ("inspect", "stack"): "inspect frame access (stack)",
    ("inspect", "trace"): "inspect frame access (trace)",
}
_FORBIDDEN_NAMES = {"__import__": "__import__", "__builtins__": "__builtins__"}


def _chain_names(node: ast.expr) -> set[str]:
    """Every name and attribute name along ``a.b[c].d``."""
    names: set[str] = set()
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Name):
        names.add(node.id)
    return names


def _watched_aliases(tree: ast.Module) -> tuple[dict[str, str], set[str]]:
    """``(modules, machinery)``: local names bound to modules (``import sys as s`` gives
    ``{"s": "sys"}``), and every local name that may refer to the test machinery
    (:data:`_MACHINERY`, names imported from ``unittest`` or ``builtins``, and names
    assigned from those, such as ``T = unittest.TestCase``)."""
    modules: dict[str, str] = {}
    machinery = set(_MACHINERY)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                modules[local] = alias.name if alias.asname else local
                if alias.name.split(".", 1)[0] in _MACHINERY_MODULES:
                    machinery.add(local)
        elif isinstance(node, ast.ImportFrom) and node.module:
            from_machinery = node.module.split(".", 1)[0] in _MACHINERY_MODULES
            for alias in node.names:
                if from_machinery or alias.name in _MACHINERY:
                    machinery.add(alias.asname or alias.name)
    assignments = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr) and node.value
    ]
    changed = True
    while changed:  # names assigned from watched objects are watched too
        changed = False
        for node in assignments:
            if node.value is None or not _chain_names(node.value) & machinery:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id not in machinery:
                    machinery.add(target.id)
                    changed = True
    return modules, machinery


def _check_node(node: ast.AST, modules: Mapping[str, str], machinery: set[str]) -> str | None:
    """Why ``node`` is forbidden by :func:`scan_program`, or ``None``."""
    if isinstance(node, ast.Attribute):
        if node.attr in _FORBIDDEN_ATTRIBUTES:
            return f"uses {_FORBIDDEN_ATTRIBUTES[node.attr]}"
        if isinstance(node.value, ast.Name):
            owner = modules.get(node.value.id, node.value.id)
            if (owner, node.attr) in _FORBIDDEN_MODULE_ATTRIBUTES:
                return f"uses {_FORBIDDEN_MODULE_ATTRIBUTES[owner, node.attr]}"
        if isinstance(node.ctx, ast.Store | ast.Del) and _chain_names(node) & machinery:
            return f"writes an attribute of the test machinery ({ast.unparse(node)[:120]})"
    elif isinstance(node, ast.Subscript):
        if isinstance(node.ctx, ast.Store | ast.Del) and _chain_names(node) & machinery:
            return f"writes into the test machinery ({ast.unparse(node)[:120]})"
    elif isinstance(node, ast.Name):
        if node.id in _FORBIDDEN_NAMES:
            return f"uses {_FORBIDDEN_NAMES[node.id]}"
    elif isinstance(node, ast.ImportFrom) and node.module:
        for alias in node.names:
            if (node.module, alias.name) in _FORBIDDEN_MODULE_ATTRIBUTES:
                return f"uses {_FORBIDDEN_MODULE_ATTRIBUTES[node.module, alias.name]}"
            if alias.name in _FORBIDDEN_ATTRIBUTES:
                return f"uses {_FORBIDDEN_ATTRIBUTES[alias.name]}"
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("setattr", "delattr")
        and node.args
        and _chain_names(node.args[0]) & machinery
    ):
        return f"calls {node.func.id} on the test machinery ({ast.unparse(node)[:120]})"
    return None


def scan_program(source: str) -> str | None:
    """Why the program may tamper with the test machinery (see the module docstring), or
    ``None`` when the static scan finds nothing. A program that does not parse passes
    the scan (it will fail its tests)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    modules, machinery = _watched_aliases(tree)
    for node in ast.walk(tree):
        problem = _check_node(node, modules, machinery)
        if problem is not None:
            return problem
    return None


_TEST_CASE_NAMES = frozenset({"TestCase", "IsolatedAsyncioTestCase"})


def _is_test_case_base(base: ast.expr, names: set[str]) -> bool:
    if isinstance(base, ast.Name):
        return base.id in names
    if isinstance(base, ast.Attribute):
        return base.attr in _TEST_CASE_NAMES
    return False


def count_test_methods(test_code: str) -> dict[str, int]:
    """``{class name: number of test methods}`` for the top-level ``unittest.TestCase``
    subclasses of ``test_code`` (found with :mod:`ast`, nothing is run), counting methods
    named ``test*`` the class defines or inherits from other classes of ``test_code``.

    Raises :class:`~conductor_gym.graders.base.GraderError` if ``test_code`` does not parse.
    """
    try:
        tree = ast.parse(test_code)
    except (SyntaxError, ValueError) as exc:
        raise GraderError(f"code: test_code does not parse: {exc}") from exc
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    # Names that mean TestCase: its own names, aliases imported from unittest, and (found
    # below) the test classes of test_code, which may be bases of others.
    bases = set(_TEST_CASE_NAMES)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "unittest":
            bases |= {a.asname or a.name for a in node.names if a.name in _TEST_CASE_NAMES}
    cases: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, node in classes.items():
            if name not in cases and any(_is_test_case_base(b, bases | cases) for b in node.bases):
                cases.add(name)
                changed = True

    def methods(name: str, seen: frozenset[str]) -> set[str]:
        node = classes[name]
        own = {
            item.name
            for item in node.body
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            and item.name.startswith("test")
        }
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
                own |= methods(base.id, seen | {base.id})
        return own

    return {name: len(methods(name, frozenset({name}))) for name in classes if name in cases}
