"""Tests for ``make test``'s set-up of what the sandbox (and one rendering test) needs from
the system: the Makefile's ``system-packages`` target, run with a ``PATH`` on which
``bwrap`` cannot be found and with a stand-in for ``apt-get`` that records its calls
(nothing is installed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from sandbox_support import IS_ROOT

CHECKOUT = Path(__file__).resolve().parents[2]


def _tools(tmp_path: Path) -> Path:
    """A dir with the programs the target runs, and no bwrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("make", "sh", "id"):
        found = shutil.which(tool)
        if found is None:
            pytest.skip(f"{tool} is not installed")
        (bin_dir / tool).symlink_to(found)
    recorder = bin_dir / "apt-get"
    recorder.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "apt-calls"}\n')
    recorder.chmod(0o755)
    return bin_dir


def _make(bin_dir: Path, user: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [*(user or []), "make", "-s", "-C", str(CHECKOUT), "system-packages"]
    command += [f"APT_GET={bin_dir / 'apt-get'}"]
    env = {"PATH": str(bin_dir), "HOME": str(bin_dir)}
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)


def test_as_root_missing_packages_are_installed_with_apt_get(tmp_path: Path) -> None:
    if not IS_ROOT:
        pytest.skip("apt-get is only run as root")
    result = _make(_tools(tmp_path))
    assert result.returncode == 0, result.stderr
    calls = (tmp_path / "apt-calls").read_text().splitlines()
    assert calls[0] == "update -qq"
    assert calls[1].startswith("install -y -qq bubblewrap")


def test_without_root_the_command_to_run_is_printed_and_the_run_stops(tmp_path: Path) -> None:
    bin_dir = _tools(tmp_path)
    user: list[str] = []
    if IS_ROOT:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("setpriv is not installed (needed to run make as another user)")
        user = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"]
        os.chmod(tmp_path, 0o755)
    result = _make(bin_dir, user)
    assert result.returncode != 0
    assert "sudo apt-get install bubblewrap" in result.stdout
    assert not (tmp_path / "apt-calls").exists()
