"""Helpers shared by the sandbox tests (``test_sandbox_*.py``): skips for what this
machine's isolation cannot show, and looks at the host's processes.

Tests that rely on a particular isolation skip when this machine does not provide it
(``isolation()`` says what it does); run as root with bubblewrap installed, none skip.
"""

from __future__ import annotations

import os
import time

import pytest

from conductor_gym.sandbox import ExecResult, isolation

IS_ROOT = os.geteuid() == 0


def _require_bwrap() -> None:
    if isolation() != "bwrap":
        pytest.skip(f"needs bubblewrap isolation (this machine: {isolation()})")


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
