"""The package's layers: the library below the CLI never imports ``agents`` or
``trainers`` (it reaches them by name through registries), and no symlink is left."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ("conductor_gym.agents", "conductor_gym.trainers")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_no_library_module_imports_agents_or_trainers() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(n for n in _imports(path) if n.startswith(PLUGINS))
        for path in sorted((ROOT / "conductor_gym").rglob("*.py"))
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_check_sees_an_offending_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "from conductor_gym.agents import RandomPlanner\nimport conductor_gym.trainers\n"
    )
    assert {n for n in _imports(module) if n.startswith(PLUGINS)} == {
        "conductor_gym.agents",
        "conductor_gym.agents.RandomPlanner",
        "conductor_gym.trainers",
    }


def test_the_repository_holds_no_symlink() -> None:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-s"], capture_output=True, text=True, check=True
    ).stdout
    assert [line for line in listed.splitlines() if line.startswith("120000")] == []


def test_the_top_level_package_stays_small() -> None:
    modules = [p.name for p in (ROOT / "conductor_gym").glob("*.py")]
    assert len(modules) <= 10, sorted(modules)
