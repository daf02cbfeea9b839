"""Which isolation works on this machine: a configuration per candidate mode, strongest
first, each checked by running a trivial program before it is used."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys

from .bootstrap import _site_paths
from .cgroup import _cgroup_base, _CgroupBase
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
from .process import _run
from .view import _static_view


def _detect() -> _Config:
    """The strongest isolation that works here, probed; ``"none"`` only when
    :data:`ISOLATION_ENV` asks for it. Raises ``OSError`` saying why and what to install
    when nothing works."""
    forced = os.environ.get(ISOLATION_ENV, "").strip().lower()
    if forced == "none":
        config = _base_config("none")
        problem = _probe(config)
        if problem is not None:
            raise OSError(f"sandbox: {ISOLATION_ENV}=none, but {problem}")
        logger.warning(
            "SANDBOX HAS NO ISOLATION (%s=none): untrusted code will run with only rlimits, "
            "timeouts and a cleared environment. This is NOT a security boundary: it can "
            "read your files (benchmark answers included), use the network and write "
            "wherever this user can.",
            ISOLATION_ENV,
        )
        return config
    candidates = _MODES[_MODES.index(forced) :] if forced in _MODES else _MODES
    failures: list[str] = []
    for mode in candidates:
        if mode == "none":
            break
        candidate, problem = _candidate(mode)
        if candidate is not None:
            probe_problem = _probe(candidate)
            if probe_problem is None:
                return candidate
            problem = probe_problem
        failures.append(f"{mode}: {problem}")
        logger.info("sandbox: %s isolation unavailable: %s", mode, problem)
    raise OSError(
        "sandbox: no isolation works on this machine, so untrusted code is not run ("
        + "; ".join(failures)
        + "). Install bubblewrap (as root: apt-get install bubblewrap), run as root (for "
        f"the unshare mode), or set {ISOLATION_ENV}=none to run programs unconfined "
        "(NOT a security boundary: they can read this machine's files)."
    )


def _base_config(
    mode: _Mode, tool: str | None = None, version: tuple[int, ...] = (), python: str = ""
) -> _Config:
    """The configuration of ``mode`` with ``python`` (default: this interpreter); raises
    ``OSError`` when the interpreter cannot be located or cannot report its paths."""
    python = python or sys.executable
    if not python:
        raise OSError("sys.executable is empty: cannot locate a Python interpreter")
    drop = os.geteuid() == 0
    setpriv = shutil.which("setpriv") if drop else None
    site_paths = _site_paths()
    view = _static_view(python, site_paths) if mode != "none" else ()
    cgroup = _shared_cgroup_base()
    return _Config(mode, python, drop, setpriv, tool, version, site_paths, view, cgroup)


@functools.cache
def _shared_cgroup_base() -> _CgroupBase | None:
    """:func:`.cgroup._cgroup_base`, looked for once per process."""
    return _cgroup_base()


def _candidate(mode: _Mode) -> tuple[_Config | None, str]:
    """A config for ``mode`` if its tool exists (not yet probed), else why not."""
    if mode == "bwrap":
        tool = shutil.which("bwrap")
        if tool is None:
            return None, "bwrap not found on PATH"
        version = _bwrap_version(tool)
        if version < (0, 5):
            return None, f"bwrap {version or 'of unknown version'} is older than 0.5"
        return _try_config("bwrap", tool, version)
    if os.geteuid() != 0:
        return None, "needs root"
    tool = shutil.which("unshare")
    if tool is None:
        return None, "unshare not found on PATH"
    return _try_config("unshare", tool)


def _try_config(
    mode: _Mode, tool: str, version: tuple[int, ...] = ()
) -> tuple[_Config | None, str]:
    try:
        return _base_config(mode, tool, version), ""
    except OSError as exc:
        return None, str(exc)


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
    """Run a trivial program with ``config``: ``None`` if it works, else why not.

    Working means: the program runs, its interpreter is the one configured (not another
    Python the dynamic loader fell back to) and it may execute that interpreter again
    (programs start subprocesses of ``sys.executable``).
    """
    try:
        result = _run(
            config, _PROBE_CODE, "", _PROBE_TIMEOUT_S, _Limits(512 << 20, 30), {}, [], 4096
        )
    except OSError as exc:
        return f"cannot start: {exc}"
    if result.status != "ok":
        detail = result.stderr.strip().splitlines()[-1:] or [f"exit {result.exit_code}"]
        return f"probe run {result.status}: {detail[0][:300]}"
    try:
        version, executable = json.loads(result.stdout)
    except ValueError:
        return f"probe run printed {result.stdout[:200]!r}"
    if not executable:
        return (
            f"the sandbox's user may not execute {config.python} (a directory on its path "
            "is closed to other users, such as a home at mode 0700)"
        )
    if config.python == sys.executable and version != sys.version:
        return (
            f"the sandboxed interpreter reports Python {version.split()[0]}, this one is "
            f"{sys.version.split()[0]}: its own libraries were out of reach"
        )
    return None
