"""Types, limits and constants shared by the modules of :mod:`conductor_gym.sandbox` (its
docstring states the contract they implement)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from .cgroup import _CgroupBase
    from .view import _Op

# One logger for the whole package: ``conductor_gym.sandbox``.
logger = logging.getLogger(__package__)

Status = Literal["ok", "timeout", "memory", "crashed", "killed"]
_Mode = Literal["bwrap", "unshare", "none"]
_MODES: tuple[_Mode, ...] = ("bwrap", "unshare", "none")

# Caps the isolation used ("unshare" or "none"; see the package docstring).
ISOLATION_ENV = "CONDUCTOR_SANDBOX_ISOLATION"
# Name of the program's file in the work dir (reserved: ``files`` may not use it).
MAIN_FILE = "main.py"

_FILE_SIZE_LIMIT = 16 << 20
_OPEN_FILES_LIMIT = 256
_PROCESS_LIMIT = 128
_TMPFS_BYTES = 64 << 20
_FLOOD_FACTOR = 8
_MIN_FLOOD_BYTES = 64 << 10
_READ_CHUNK = 1 << 16
_STDERR_TAIL = 4096
# After the main process exits (or is killed), how long to keep collecting output that
# is still in flight before closing the pipes.
_DRAIN_GRACE_S = 1.0
# Per-run uids come from a range no distribution or systemd hands out (systemd's
# container ranges end at 0x6FFFFFFF) and stay below 2**31 (signed uid_t bugs).
_UID_BASE = 0x7000_0000
_UID_SPAN = 0x0800_0000
_MEMORY_MARKERS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory")
_PROBE_CODE = (
    "import json, os, sys\nprint(json.dumps([sys.version, os.access(sys.executable, os.X_OK)]))\n"
)
_PROBE_TIMEOUT_S = 20.0


@dataclass(frozen=True)
class ExecResult:
    """Outcome of one :func:`run_python` call.

    ``status`` is one of ``"ok"``, ``"timeout"``, ``"memory"``, ``"crashed"`` and
    ``"killed"`` (see the package docstring); ``stdout``/``stderr`` are the captured
    streams, each cut at ``max_output_bytes`` and decoded as UTF-8 with replacement;
    ``exit_code`` is the exit status, or ``None`` when a signal (or the sandbox's kill)
    ended the program; ``wall_s`` is the wall-clock time of the run; ``truncated`` says
    that output was cut at the cap.
    """

    status: Status
    stdout: str
    stderr: str
    exit_code: int | None
    wall_s: float
    truncated: bool


@dataclass(frozen=True)
class _Config:
    """How runs are launched on this machine (decided once, see :func:`isolation`)."""

    mode: _Mode
    python: str
    drop_privileges: bool
    setpriv: str | None = None
    tool: str | None = None
    bwrap_version: tuple[int, ...] = ()
    site_paths: tuple[str, ...] = ()
    # What bwrap and unshare show the program (mode "none" has no view).
    view: tuple[_Op, ...] = ()
    # Where each run's memory cgroup is made (None: memory is limited per process).
    cgroup: _CgroupBase | None = None


@dataclass(frozen=True)
class _Limits:
    memory_bytes: int
    cpu_s: int
