"""The package's layers, read off its folders: each package may import only the packages
its row of :data:`ALLOWED` lists (the same table is in ``docs/architecture.md``), the
library below the CLI never imports ``agents`` or ``trainers`` (it reaches them by name
through registries), no module imports another package's private names, and no symlink
is left.

Every import counts: module level, inside functions and under ``TYPE_CHECKING`` alike,
since each is an arrow the type checker and a reader follow.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ("conductor_gym.agents", "conductor_gym.trainers")

# The folders that make up the import name ``conductor_gym`` (pyproject's package-dir).
SOURCES: dict[str, Path] = {
    "conductor_gym": ROOT / "conductor_gym",
    "conductor_gym.agents": ROOT / "agents",
    "conductor_gym.trainers": ROOT / "trainers",
}

BASE = "base"
"""``errors``, ``registry``, ``seeding`` and the private helpers ``_validate`` and
``_loop``: the modules directly under ``conductor_gym/`` that everything may use."""
API = "api"
"""``conductor_gym/__init__.py``: the public API, which re-exports from the layers."""

# Each layer lists the layers it may import (itself always). Arrows point down the
# diagram in docs/architecture.md: cli > plug-ins > products > bench > training > core >
# pool > sim > workers > leaf parts > base.
ALLOWED: dict[str, frozenset[str]] = {
    BASE: frozenset(),
    "plan": frozenset({BASE}),
    "tasks": frozenset({BASE}),
    "sandbox": frozenset({BASE}),
    "graders": frozenset({BASE, "sandbox"}),
    "workers": frozenset({BASE, "tasks"}),
    "sim": frozenset({BASE, "workers", "plan", "tasks", "graders"}),
    "pool": frozenset({BASE, "workers"}),
    "core": frozenset({BASE, "pool", "workers", "plan", "tasks", "graders"}),
    "training": frozenset({BASE, "core", "pool", "workers", "tasks"}),
    API: frozenset({BASE, "training", "core", "pool", "workers", "plan", "tasks", "graders"}),
    "bench": frozenset(
        {BASE, API, "training", "core", "pool", "sim", "workers", "plan", "tasks", "graders"}
    ),
    # the simulator's research tools (fit, fidelity, audit, calibration) use evaluation
    "simlab": frozenset(
        {
            BASE,
            API,
            "bench",
            "training",
            "core",
            "pool",
            "sim",
            "workers",
            "plan",
            "tasks",
            "graders",
        }
    ),
    "board": frozenset({BASE, API, "bench", "core", "pool", "sim", "workers", "tasks"}),
    "view": frozenset({BASE, API, "bench", "core", "pool", "sim", "workers", "plan", "tasks"}),
    "serve": frozenset({BASE, API, "bench", "core", "pool", "workers", "tasks", "graders"}),
    # the reference plans find a question's form with the simulator's perception
    "agents": frozenset({BASE, API, "training", "core", "sim", "plan", "tasks", "workers"}),
    # trainers' plan reports name each subtask's request with the simulator's readers
    "trainers": frozenset(
        {BASE, API, "training", "core", "pool", "sim", "plan", "tasks", "workers", "agents"}
    ),
    "cli": frozenset(
        {
            BASE,
            API,
            "serve",
            "board",
            "view",
            "bench",
            "simlab",
            "training",
            "core",
            "pool",
            "sim",
            "workers",
            "plan",
            "tasks",
            "graders",
            "sandbox",
        }
    ),
}
BASE_MODULES = frozenset({"errors", "registry", "seeding", "_validate", "_loop"})


def module_name(path: Path) -> str:
    """The import name of a source file under one of :data:`SOURCES`."""
    for prefix, folder in sorted(SOURCES.items(), key=lambda item: -len(str(item[1]))):
        if path.is_relative_to(folder):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts and parts[-1] == "__init__":
                parts.pop()
            return ".".join([prefix, *parts])
    raise ValueError(f"{path} is in no source folder")


def layer(module: str) -> str | None:
    """The layer of an import name, or ``None`` for a module outside the library."""
    parts = module.split(".")
    if parts[0] != "conductor_gym":
        return None
    if len(parts) == 1:
        return API
    if parts[1] in BASE_MODULES:
        return BASE
    return parts[1]


def is_module(module: str) -> bool:
    """Whether an import name under ``conductor_gym`` names a module or package file."""
    parts = module.split(".")
    for prefix, folder in sorted(SOURCES.items(), key=lambda item: -len(item[0])):
        head = prefix.split(".")
        if parts[: len(head)] == head:
            path = folder.joinpath(*parts[len(head) :])
            return (path / "__init__.py").is_file() or path.with_suffix(".py").is_file()
    return False


def imports(path: Path, module: str) -> Iterator[tuple[str, str, int]]:
    """Every ``(imported module, imported name, line)`` of a file; ``name`` is ``""`` for
    a plain ``import`` and for ``from package import module`` (which yields the module)."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, "", node.lineno
        elif isinstance(node, ast.ImportFrom):
            source = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                if is_module(f"{source}.{alias.name}"):
                    yield f"{source}.{alias.name}", "", node.lineno
                else:
                    yield source, alias.name, node.lineno


def violations(files: Mapping[Path, str], allowed: Mapping[str, frozenset[str]]) -> list[str]:
    """Every arrow against ``allowed``, as ``"path:line: a -> b (module)"``."""
    found = []
    for path, module in files.items():
        source_layer = layer(module)
        assert source_layer in allowed, f"{module}: layer {source_layer!r} is not in the table"
        for target, _name, line in imports(path, module):
            target_layer = layer(target)
            if target_layer is None or target_layer == source_layer:
                continue
            if target_layer not in allowed[source_layer]:
                found.append(f"{path}:{line}: {source_layer} -> {target_layer} ({target})")
    return found


def library_files() -> dict[Path, str]:
    return {
        path: module_name(path)
        for folder in SOURCES.values()
        for path in sorted(folder.rglob("*.py"))
    }


def test_every_import_follows_the_allowed_imports_table() -> None:
    assert violations(library_files(), ALLOWED) == []


def test_every_package_folder_has_a_row_in_the_table() -> None:
    packages = {p.name for p in (ROOT / "conductor_gym").iterdir() if (p / "__init__.py").is_file()}
    assert packages - set(ALLOWED) == set()
    assert set(ALLOWED) - packages - {BASE, API, "agents", "trainers"} == set()


def test_the_check_fails_on_an_arrow_against_the_table(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "from conductor_gym.core.env import ConductorEnv\n"
        "def late():\n"
        "    from conductor_gym import bench\n"
        "    import conductor_gym.plan.parse\n"
    )
    table = {**ALLOWED, "workers": frozenset({BASE, "plan"})}
    found = violations({module: "conductor_gym.workers.bad"}, table)
    assert [entry.split(": ", 1)[1] for entry in found] == [
        "workers -> core (conductor_gym.core.env)",
        "workers -> bench (conductor_gym.bench)",
    ]
    assert violations({module: "conductor_gym.cli.bad"}, ALLOWED) == []


def test_the_check_resolves_relative_imports(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("from ..core import env\nfrom . import spec\n")
    found = violations({module: "conductor_gym.workers.bad"}, ALLOWED)
    assert [entry.split(": ", 1)[1] for entry in found] == [
        "workers -> core (conductor_gym.core.env)"
    ]


def test_the_table_is_the_one_in_the_architecture_doc() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    rows = dict(re.findall(r"^\| `([\w]+)` \| ([^|]*) \|", text, flags=re.M))
    documented = {
        name: frozenset(re.findall(r"`(\w+)`", targets)) for name, targets in rows.items()
    }
    assert documented == ALLOWED


def test_no_library_module_imports_agents_or_trainers() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            target for target, _, _ in imports(path, module) if target.startswith(PLUGINS)
        )
        for path, module in library_files().items()
        if not module.startswith(PLUGINS)
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_plugin_check_sees_an_offending_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text(
        "from conductor_gym.agents import RandomPlanner\nimport conductor_gym.trainers\n"
    )
    assert {
        target
        for target, _, _ in imports(module, "conductor_gym.bench.bad")
        if target.startswith(PLUGINS)
    } == {"conductor_gym.agents", "conductor_gym.trainers"}


def private_imports(files: Mapping[Path, str]) -> list[str]:
    """Private names (``_x``) imported from another package, as ``"path:line: module.name"``.
    The base's private helpers (``_validate``, ``_loop``) are the base's own to share."""
    found = []
    for path, module in files.items():
        for target, name, line in imports(path, module):
            if layer(target) is None or not name.startswith("_") or name.startswith("__"):
                continue
            if target.split(".")[:2] != module.split(".")[:2]:
                found.append(f"{path.name}:{line}: {target}.{name}")
    return found


def test_no_module_imports_another_packages_private_names() -> None:
    assert private_imports(library_files()) == []


def test_the_private_check_sees_an_offending_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("from conductor_gym.bench.evaluate import _play, Batcher\n")
    assert private_imports({module: "conductor_gym.serve.bad"}) == [
        "bad.py:1: conductor_gym.bench.evaluate._play"
    ]
    assert private_imports({module: "conductor_gym.bench.bad"}) == []


def test_the_repository_holds_no_symlink() -> None:
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-s"], capture_output=True, text=True, check=True
    ).stdout
    assert [line for line in listed.splitlines() if line.startswith("120000")] == []


def test_the_top_level_package_stays_small() -> None:
    modules = [p.name for p in (ROOT / "conductor_gym").glob("*.py")]
    assert len(modules) <= 10, sorted(modules)
