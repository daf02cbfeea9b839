"""Helpers shared by the sandbox tests (``test_sandbox_*.py``): skips for what this
machine's isolation cannot show, configurations of each confining mode, and looks at the
host's processes.

Tests that rely on a particular isolation skip when this machine does not provide it
(``isolation()`` says what it does); run as root with bubblewrap installed, none skip.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import sys
import time
from pathlib import Path

import pytest
from support import unavailable

from conductor_gym import sandbox
from conductor_gym.sandbox import ExecResult, isolation

IS_ROOT = os.geteuid() == 0


@functools.cache
def _mode_config(mode: str, python: str = "") -> sandbox._Config | str:
    """A probed configuration of ``mode`` (``"bwrap"`` or ``"unshare"``) with ``python``
    (default: this interpreter), or why there is none."""
    config, problem = sandbox._candidate(mode)  # type: ignore[arg-type]
    if config is not None and python:
        try:
            config = sandbox._base_config(config.mode, config.tool, config.bwrap_version, python)
        except OSError as exc:
            return str(exc)
    if config is None:
        return problem
    return sandbox._probe(config) or config


def _confined(mode: str, python: str = "") -> sandbox._Config:
    """:func:`_mode_config` for a test, which skips (or, under
    ``CONDUCTOR_GYM_REQUIRE_EXTRAS=1``, fails) where ``mode`` does not work here."""
    if mode == "unshare" and not IS_ROOT:
        pytest.skip("the unshare mode needs root")
    config = _mode_config(mode, python)
    if isinstance(config, str):
        what = "bubblewrap" if mode == "bwrap" else "the unshare mode"
        unavailable(what, config)
    return config


def _python_the_sandbox_uid_can_run() -> str | None:
    """An interpreter of this Python's version that other users may execute (for the
    ``none`` mode, which has no view to make a Python under a private dir reachable)."""

    def reachable(path: str) -> bool:
        real = os.path.realpath(path)
        parts = Path(real).parents
        return all(os.stat(p).st_mode & stat.S_IXOTH for p in parts) and bool(
            os.stat(real).st_mode & stat.S_IXOTH
        )

    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (sys.executable, shutil.which(version), f"/usr/bin/{version}"):
        if candidate and os.path.exists(candidate) and reachable(candidate):
            return candidate
    return None


def _require_isolation() -> None:
    if isolation() == "none":
        pytest.skip("needs bwrap or unshare isolation (this machine: none)")


def _require_process_limit() -> None:
    # RLIMIT_NPROC is only applied where it cannot count the caller's own processes.
    if isolation() != "bwrap" and not IS_ROOT:
        pytest.skip("the process limit needs bwrap or root")


def _pids_with(token: str) -> list[int]:
    """Host pids whose command line contains ``token``."""
    found = []
    needle = token.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                if needle in f.read():
                    found.append(int(name))
        except OSError:
            continue
    return found


def _leftovers(token: str) -> list[int]:
    """Processes carrying ``token`` once run_python has returned. Under bwrap the sandbox
    waits for its pid namespace to be torn down, so none may remain at all; elsewhere
    SIGKILL is asynchronous, so allow the kernel a moment to finish the job."""
    pids = _pids_with(token)
    if isolation() == "bwrap":
        return pids
    deadline = time.monotonic() + 2.0
    while pids and time.monotonic() < deadline:
        time.sleep(0.02)
        pids = _pids_with(token)
    return pids


def _host_tasks() -> int:
    """Threads on the whole host (the kernel's count in /proc/loadavg): cheap enough to
    sample while a fork bomb is running, unlike a scan of /proc."""
    with open("/proc/loadavg") as f:
        return int(f.read().split()[3].split("/")[1])


def _lines(result: ExecResult) -> list[str]:
    return result.stdout.splitlines()
