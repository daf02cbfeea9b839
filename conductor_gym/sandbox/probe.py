"""Which isolation works on this machine: a configuration per candidate mode, strongest
first, each checked by running a trivial program before it is used."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from .bootstrap import _site_paths
from .common import (
    _MODES,
    _PROBE_CODE,
    _PROBE_TIMEOUT_S,
    ISOLATION_ENV,
    _Config,
    _Limits,
    _Mode,
    logger,
)
from .confine import _hidden_and_rebind
from .process import _run


def _detect() -> _Config:
    forced = os.environ.get(ISOLATION_ENV, "").strip().lower()
    candidates = _MODES[_MODES.index(forced) :] if forced in _MODES else _MODES
    failures: list[str] = []
    for mode in candidates:
        if mode == "none":
            break
        config, problem = _candidate(mode)
        if config is not None:
            probe_problem = _probe(config)
            if probe_problem is None:
                return config
            problem = probe_problem
        failures.append(f"{mode}: {problem}")
        logger.info("sandbox: %s isolation unavailable: %s", mode, problem)
    reason = "; ".join(failures) or f"capped by {ISOLATION_ENV}={forced}"
    logger.warning(
        "SANDBOX HAS NO ISOLATION: untrusted code will run with only rlimits, timeouts and "
        "a cleared environment. This is NOT a security boundary: it can read your files, "
        "use the network and write wherever this user can. Install bubblewrap "
        "(apt-get install bubblewrap) to fix this. (%s)",
        reason,
    )
    return _base_config("none")


def _base_config(mode: _Mode, tool: str | None = None, version: tuple[int, ...] = ()) -> _Config:
    python = sys.executable
    if not python:
        raise OSError("sys.executable is empty: cannot locate a Python interpreter")
    drop = os.geteuid() == 0
    setpriv = shutil.which("setpriv") if drop else None
    site_paths = _site_paths()
    hidden: tuple[str, ...] = ()
    rebind: tuple[str, ...] = ()
    if mode == "bwrap":
        hidden, rebind = _hidden_and_rebind(python, site_paths, drop)
    return _Config(mode, python, drop, setpriv, tool, version, site_paths, hidden, rebind)


def _candidate(mode: _Mode) -> tuple[_Config | None, str]:
    """A config for ``mode`` if its tool exists (not yet probed), else why not."""
    if mode == "bwrap":
        tool = shutil.which("bwrap")
        if tool is None:
            return None, "bwrap not found on PATH"
        version = _bwrap_version(tool)
        if version < (0, 5):
            return None, f"bwrap {version or 'of unknown version'} is older than 0.5"
        return _base_config("bwrap", tool, version), ""
    if os.geteuid() != 0:
        return None, "needs root"
    tool = shutil.which("unshare")
    if tool is None:
        return None, "unshare not found on PATH"
    return _base_config("unshare", tool), ""


def _bwrap_version(tool: str) -> tuple[int, ...]:
    try:
        out = subprocess.run(
            [tool, "--version"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    words = out.split()
    digits = words[-1].split(".") if words else []
    return tuple(int(d) for d in digits) if all(d.isdigit() for d in digits) else ()


def _probe(config: _Config) -> str | None:
    """Run a trivial program with ``config``: ``None`` if it works, else why not."""
    try:
        result = _run(
            config, _PROBE_CODE, "", _PROBE_TIMEOUT_S, _Limits(512 << 20, 30), {}, [], 4096
        )
    except OSError as exc:
        return f"cannot start: {exc}"
    if result.status == "ok" and result.stdout == '"ok"':
        return None
    detail = result.stderr.strip().splitlines()[-1:] or [f"exit {result.exit_code}"]
    return f"probe run {result.status}: {detail[0][:300]}"
