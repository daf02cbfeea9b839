"""Every public error the library, the agents and the trainers define derives from
:class:`conductor_gym.errors.ConductorGymError`, through the classes of our own sources.

Read from the sources (no module is imported, so adapters whose frameworks cannot load
beside each other are checked too). An exception class is one whose bases name an
exception (a builtin, a name ending in ``Error``/``Exception``/``Warning``, or another of
our exception classes); private ones (``_Name``) are control flow that never leaves its
module and are not counted.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (ROOT / "conductor_gym", ROOT / "agents", ROOT / "trainers")
BASE = "ConductorGymError"


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""


def classes(paths: Iterable[Path]) -> dict[str, tuple[str, list[str]]]:
    """Class name -> (where, base names) for every class in ``paths``."""
    found: dict[str, tuple[str, list[str]]] = {}
    for path in paths:
        tree = ast.parse(path.read_text(), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
                where = f"{shown}:{node.lineno}"
                found[node.name] = (where, [_base_name(b) for b in node.bases])
    return found


def _is_builtin_exception(name: str) -> bool:
    value = getattr(builtins, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


def outside_the_tree(found: dict[str, tuple[str, list[str]]]) -> list[str]:
    """Public exception classes that do not reach :data:`BASE` through our classes."""

    def is_exception(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name in seen:
            return False
        if _is_builtin_exception(name) or name.endswith(("Error", "Exception", "Warning")):
            return True
        return name in found and any(is_exception(b, seen | {name}) for b in found[name][1])

    def reaches_base(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name == BASE:
            return True
        if name in seen or name not in found:
            return False
        return any(reaches_base(b, seen | {name}) for b in found[name][1])

    return sorted(
        f"{where} {name}"
        for name, (where, bases) in found.items()
        if not name.startswith("_")
        and any(is_exception(b) for b in bases)
        and not reaches_base(name)
    )


def test_every_public_error_derives_from_the_base() -> None:
    sources = [p for folder in FOLDERS for p in sorted(folder.rglob("*.py"))]
    assert outside_the_tree(classes(sources)) == []


def test_the_check_sees_an_error_outside_the_tree(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    module = tmp_path / "pkg" / "bad.py"
    module.write_text(
        "class ConductorGymError(Exception): ...\n"
        "class ConfigurationError(ConductorGymError, ValueError): ...\n"
        "class Fine(ConfigurationError): ...\n"
        "class Stray(ValueError): ...\n"
        "class AlsoStray(Stray): ...\n"
        "class Wrapped(vf.TaskError): ...\n"
        "class _Private(Exception): ...\n"
        "class NotAnError: ...\n"
    )
    assert sorted(entry.split(" ", 1)[1] for entry in outside_the_tree(classes([module]))) == [
        "AlsoStray",
        "Stray",
        "Wrapped",
    ]
