"""The release files, built offline as ``python -m build`` builds them (the sdist through
setuptools' PEP 517 hooks, then the wheel from the unpacked sdist, so the sdist is known
complete): the license and metadata, every extra, the package data, and a wheel that runs
the demo on its own with ``import conductor_gym`` lean. ``.ci/release-check`` installs
them in fresh venvs from the package index (that needs the network: CI, not a test)."""

from __future__ import annotations

import email
import email.message
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOKS = """import sys
from setuptools import build_meta
print(getattr(build_meta, sys.argv[1])(sys.argv[2]))
"""
HEAVY = ("torch", "transformers", "vllm", "litellm", "verifiers", "verl", "ray", "datasets",
         "matplotlib", "starlette", "uvicorn", "trl", "math_verify")  # fmt: skip


def _hook(name: str, source: Path, out: Path) -> Path:
    done = subprocess.run(
        [sys.executable, "-c", HOOKS, name, str(out)], cwd=source, capture_output=True,
        text=True, check=True, timeout=300,
    )  # fmt: skip
    return out / done.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(sdist, wheel) of the working tree's tracked and new files."""
    work = tmp_path_factory.mktemp("release")
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    tree = work / "tree"
    for name in listed:
        if (ROOT / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / name, tree / name)
    sdist = _hook("build_sdist", tree, work / "dist")
    with tarfile.open(sdist) as archive:
        archive.extractall(work / "unpacked", filter="data")
    (source,) = (work / "unpacked").iterdir()
    wheel = _hook("build_wheel", source, work / "dist")
    return sdist, wheel


def _metadata(wheel: Path) -> email.message.Message:
    with zipfile.ZipFile(wheel) as archive:
        (name,) = (n for n in archive.namelist() if n.endswith(".dist-info/METADATA"))
        return email.message_from_bytes(archive.read(name))


def test_the_license_and_metadata(built: tuple[Path, Path]) -> None:
    sdist, wheel = built
    assert sdist.name == "conductor_gym-0.1.0.tar.gz"
    assert wheel.name == "conductor_gym-0.1.0-py3-none-any.whl"
    metadata = _metadata(wheel)
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata["License-File"] == "LICENSE"
    assert metadata["Requires-Python"] == ">=3.11"
    assert metadata["Author"] == "conductor-gym developers"
    assert "Operating System :: POSIX :: Linux" in metadata.get_all("Classifier", [])
    assert not [c for c in metadata.get_all("Classifier", []) if c.startswith("License ::")]
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert "## Install" in (metadata.get_payload() or "")  # the README is the description
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert set(metadata.get_all("Provides-Extra", [])) == set(project["optional-dependencies"])
    license_text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in license_text and "Version 2.0, January 2004" in license_text
    with zipfile.ZipFile(wheel) as archive:
        shipped = archive.read("conductor_gym-0.1.0.dist-info/licenses/LICENSE").decode()
        names = set(archive.namelist())
        entry_points = archive.read("conductor_gym-0.1.0.dist-info/entry_points.txt").decode()
    assert shipped == license_text
    assert "conductor-gym = conductor_gym.cli.main:main" in entry_points
    with tarfile.open(sdist) as archive:
        members = {Path(m).relative_to("conductor_gym-0.1.0").as_posix()
                   for m in archive.getnames() if "/" in m}  # fmt: skip
    assert {"LICENSE", "README.md", "pyproject.toml"} <= members
    for data in ("core/assets/viewer.js", "board/assets/board.js", "pool/presets/sim-paper.toml"):
        assert f"conductor_gym/{data}" in names and f"conductor_gym/{data}" in members


def test_the_wheel_alone_runs_the_demo_and_imports_lean(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    _, wheel = built
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = {**os.environ, "PYTHONPATH": str(site)}  # the wheel's files before the checkout's
    probe = (
        "import sys, conductor_gym\n"
        f"print(conductor_gym.__file__.startswith({str(site)!r}))\n"
        f"print(sorted(set({HEAVY!r}) & {{m.split('.')[0] for m in sys.modules}}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True,
        check=True, timeout=120,
    ).stdout.split("\n")  # fmt: skip
    assert out[:2] == ["True", "[]"]
    demo = subprocess.run(
        [sys.executable, "-m", "conductor_gym.cli.main", "demo", "--episodes", "2"],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=True, timeout=300,
    ).stdout  # fmt: skip
    assert "mean reward over 2 episodes:" in demo
