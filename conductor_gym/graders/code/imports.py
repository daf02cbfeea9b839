"""The modules a task's test code imports (parsed, never run).

BigCodeBench's test code imports libraries of its own (``pytz``, ``faker``,
``openpyxl``) that the task's ``libs`` do not always declare. When one is missing on
the grading machine the tests cannot run at all: that is the machine's fault, not the
answer's, so the ``unittest`` flow reports it as a grader (infrastructure) error naming
the module, before anything runs.
"""

from __future__ import annotations

import ast

__all__ = ["imported_modules"]

_OPTIONAL = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _guarded(handlers: list[ast.ExceptHandler]) -> bool:
    """Whether a ``try`` catches a failed import (the import is then optional)."""
    for handler in handlers:
        if handler.type is None:
            return True
        names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(isinstance(name, ast.Name) and name.id in _OPTIONAL for name in names):
            return True
    return False


def imported_modules(test_code: str) -> list[str]:
    """Top-level names of the modules ``test_code`` imports, in order, each once.

    Relative imports and imports inside a ``try`` that catches ``ImportError`` (an
    optional dependency) are left out; test code that does not parse gives ``[]`` (the
    test run reports it).
    """
    try:
        tree = ast.parse(test_code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Try) and _guarded(node.handlers):
            for child in node.orelse + node.finalbody:
                visit(child)
            for handler in node.handlers:
                visit(handler)
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name.split(".", 1)[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append(node.module.split(".", 1)[0])
        for inner in ast.iter_child_nodes(node):
            visit(inner)

    visit(tree)
    return list(dict.fromkeys(found))
