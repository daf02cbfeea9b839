"""A memory cgroup per run, so that ``memory_mb`` bounds the whole sandbox, not each
process.

``RLIMIT_AS`` is per process: five children of 700 MiB each stay under a 1 GiB limit and
hold 3.5 GiB together. Where this process may create cgroups (root, or a delegated
cgroup v2 subtree), every run gets a cgroup of its own whose memory limit is
``memory_mb`` (swap included, or none allowed) and, on v2, whose ``pids.max`` is the
process limit. The run's first process (a ``/bin/sh`` that then ``exec`` s bwrap, unshare
or the interpreter) moves itself in before anything else runs, so every process of the
run is charged to it, tmpfs pages written to ``/tmp`` included. When the total would pass
the limit the kernel's OOM killer kills a process of the run (reported as ``"memory"``).

Where is the cgroup made? v2: under this process's own cgroup when that is the root of
its hierarchy (a container's namespace root), else next to it (a cgroup with processes
cannot also have children with controllers). v1: under this process's memory cgroup.
The cgroup is removed after the run; on v2 ``cgroup.kill`` also kills whatever is left.
Where none can be made (an unprivileged caller without delegation, a read-only cgroup
file system), :func:`_cgroup_base` returns ``None`` and runs fall back to the
per-process limit (logged once).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import time
from dataclasses import dataclass

from .common import _PROCESS_LIMIT, logger

# The run's first process joins its cgroup, then becomes the real command.
_JOIN = 'echo $$ > "$0" && exec "$@"'
_SHELL = "/bin/sh"


@dataclass(frozen=True)
class _CgroupBase:
    """Where per-run cgroups are created: ``path`` (a directory of a cgroup file system)
    and the hierarchy's ``version`` (1 or 2)."""

    path: str
    version: int


@dataclass(frozen=True)
class _RunCgroup:
    """The cgroup of one run."""

    path: str
    version: int

    def join_command(self, command: list[str]) -> list[str]:
        """``command`` started inside this cgroup."""
        return [_SHELL, "-c", _JOIN, os.path.join(self.path, "cgroup.procs"), *command]

    def oom_kills(self) -> int:
        """How many processes of the run the OOM killer killed."""
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        try:
            with open(os.path.join(self.path, name)) as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "oom_kill":
                        return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def kill(self) -> None:
        """SIGKILL every process of the run (v2 only; v1 has no ``cgroup.kill``)."""
        if self.version == 2:
            _write_quietly(os.path.join(self.path, "cgroup.kill"), "1")

    def remove(self) -> None:
        """Remove the cgroup once its processes are gone (they may take a moment to be
        reaped after SIGKILL)."""
        deadline = time.monotonic() + 2.0
        while True:
            self.kill()
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError as exc:
                if exc.errno != errno.EBUSY or time.monotonic() >= deadline:
                    logger.warning("sandbox: could not remove cgroup %s: %s", self.path, exc)
                    return
            time.sleep(0.01)


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _write_quietly(path: str, value: str) -> None:
    with contextlib.suppress(OSError):
        _write(path, value)


def _mounts() -> list[tuple[str, str, str, set[str]]]:
    """``(root, mount point, fstype, super options)`` of each cgroup mount."""
    found = []
    try:
        with open("/proc/self/mountinfo") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            found.append((fields[3], fields[4], tail[0], set(tail[2].split(","))))
    return found


def _own_cgroups() -> dict[str, str]:
    """``{controller (or "" for v2): path}`` of this process."""
    own: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for name in controllers.split(",") if controllers else [""]:
                    own[name] = path
    except (OSError, ValueError):
        pass
    return own


def _inside(mount_root: str, mount_point: str, path: str) -> str | None:
    """Where the cgroup ``path`` of a hierarchy mounted at ``mount_point`` lies."""
    if mount_root != "/":
        if path != mount_root and not path.startswith(mount_root.rstrip("/") + "/"):
            return None
        path = path[len(mount_root) :] or "/"
    return os.path.normpath(mount_point + "/" + path.lstrip("/"))


def _candidates() -> list[_CgroupBase]:
    own = _own_cgroups()
    bases = []
    for root, point, fstype, options in _mounts():
        if fstype == "cgroup2" and "" in own:
            here = _inside(root, point, own[""])
            if here is None or not os.path.isdir(here):
                continue
            at_root = os.path.normpath(here) == os.path.normpath(point)
            base = here if at_root else os.path.dirname(here)
            bases.append(_CgroupBase(base, 2))
        elif fstype == "cgroup" and "memory" in options and "memory" in own:
            here = _inside(root, point, own["memory"])
            if here is not None and os.path.isdir(here):
                bases.append(_CgroupBase(here, 1))
    return bases


def _create(base: _CgroupBase, memory_bytes: int) -> _RunCgroup:
    """A new cgroup under ``base`` limited to ``memory_bytes``; raises ``OSError``."""
    if base.version == 2:
        # Enabling the controllers may fail when they are already enabled or cannot be
        # (the check below tells).
        _write_quietly(os.path.join(base.path, "cgroup.subtree_control"), "+memory +pids")
    path = os.path.join(base.path, f"conductor-sandbox-{os.getpid()}-{secrets.token_hex(6)}")
    os.mkdir(path, 0o755)
    group = _RunCgroup(path, base.version)
    try:
        if base.version == 2:
            _write(os.path.join(path, "memory.max"), str(memory_bytes))
            if os.path.exists(os.path.join(path, "memory.swap.max")):
                _write(os.path.join(path, "memory.swap.max"), "0")
            if os.path.exists(os.path.join(path, "pids.max")):
                _write(os.path.join(path, "pids.max"), str(_PROCESS_LIMIT))
        else:
            _write(os.path.join(path, "memory.limit_in_bytes"), str(memory_bytes))
            memsw = os.path.join(path, "memory.memsw.limit_in_bytes")
            if os.path.exists(memsw):
                _write(memsw, str(memory_bytes))
    except OSError:
        group.remove()
        raise
    return group


def _cgroup_base() -> _CgroupBase | None:
    """The first place where a memory-limited cgroup can be made here, found by making
    (and removing) one; ``None`` when there is none."""
    problems = []
    for base in _candidates():
        try:
            _create(base, 64 << 20).remove()
            return base
        except OSError as exc:
            problems.append(f"{base.path}: {exc.strerror or exc}")
    logger.warning(
        "sandbox: no memory cgroup can be created here (%s): memory_mb limits each process "
        "of a run, not the run as a whole",
        "; ".join(problems) or "no cgroup file system with the memory controller",
    )
    return None


def _run_cgroup(base: _CgroupBase | None, memory_bytes: int) -> _RunCgroup | None:
    """A run's cgroup under ``base``, or ``None`` (no base, or it failed: logged)."""
    if base is None:
        return None
    try:
        return _create(base, memory_bytes)
    except OSError as exc:
        logger.warning("sandbox: could not create the run's cgroup under %s: %s", base.path, exc)
        return None
