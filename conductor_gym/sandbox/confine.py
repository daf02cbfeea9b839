"""How a run is confined: the command line that starts it (bwrap, unshare or the bare
interpreter, with setpriv as root), its environment, the directories bwrap hides and mounts
back, and the per-run uids of the privilege drop."""

from __future__ import annotations

import os
import secrets
import stat
import sys
import threading
from collections.abc import Sequence
from pathlib import PurePosixPath

from .bootstrap import _BOOTSTRAP, _rlimits
from .common import _HIDDEN_TMPFS_BYTES, _TMPFS_BYTES, _UID_BASE, _UID_SPAN, _Config, _Limits

_uids_in_use: set[int] = set()
_uids_lock = threading.Lock()


def _hidden_and_rebind(
    python: str, site_paths: Sequence[str], drop: bool
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Which dirs bwrap covers with an empty tmpfs, and which interpreter dirs inside them
    it mounts back (read-only) so the program can still import from them."""
    needed: list[str] = []
    for path in (
        sys.prefix,
        sys.exec_prefix,
        sys.base_prefix,
        sys.base_exec_prefix,
        os.path.dirname(python),
        os.path.dirname(os.path.realpath(python)),
        *site_paths,
    ):
        for candidate in (os.path.abspath(path), os.path.realpath(path)):
            if os.path.isdir(candidate) and candidate not in needed:
                needed.append(candidate)
    hidden = {"/root", "/home"}
    home = os.path.realpath(os.path.expanduser("~"))
    if home.count("/") >= 2 or home == "/root":
        hidden.add(home)
    if drop:
        # Directories the unprivileged uid cannot traverse (e.g. a 0700 /root holding a
        # pyenv Python) are replaced by a traversable tmpfs holding just what is needed.
        for path in needed:
            blocked = _first_untraversable_ancestor(path)
            if blocked is not None:
                hidden.add(blocked)
    hidden = {h for h in hidden if os.path.isdir(h) and h != "/"}
    top_hidden = _outermost(hidden)
    covers = (*top_hidden, "/tmp", "/dev/shm")
    rebind = [p for p in needed if any(_is_within(p, h) for h in covers)]
    return tuple(top_hidden), tuple(_outermost(rebind))


def _first_untraversable_ancestor(path: str) -> str | None:
    parts = PurePosixPath(path).parts
    for i in range(2, len(parts) + 1):
        ancestor = str(PurePosixPath(*parts[:i]))
        try:
            mode = os.stat(ancestor).st_mode
        except OSError:
            return None
        if not mode & stat.S_IXOTH:
            return ancestor
    return None


def _is_within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _outermost(paths: set[str] | Sequence[str]) -> list[str]:
    """Sorted paths, dropping those inside another one of them."""
    result: list[str] = []
    for path in sorted(set(paths), key=lambda p: (p.count("/"), p)):
        if not any(_is_within(path, kept) for kept in result):
            result.append(path)
    return sorted(result)


def _claim_uid() -> int:
    with _uids_lock:
        while True:
            uid = _UID_BASE + secrets.randbelow(_UID_SPAN)
            if uid not in _uids_in_use:
                _uids_in_use.add(uid)
                return uid


def _release_uid(uid: int) -> None:
    with _uids_lock:
        _uids_in_use.discard(uid)


def _environment(config: _Config, workdir: str) -> dict[str, str]:
    env = {
        "PATH": os.pathsep.join([os.path.dirname(config.python), "/usr/local/bin:/usr/bin:/bin"]),
        "HOME": workdir,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OMP_NUM_THREADS": "1",
    }
    if config.mode != "bwrap":
        env["TMPDIR"] = workdir
    return env


def _command(
    config: _Config,
    workdir: str,
    main: str,
    uid: int | None,
    limits: _Limits,
    argv: list[str],
    info_fd: int | None = None,
) -> list[str]:
    # Without bwrap and without a uid of its own, RLIMIT_NPROC would count all of the
    # caller's processes, which can already exceed any sensible limit.
    with_nproc = config.mode == "bwrap" or uid is not None
    ids = [str(uid), str(uid)] if uid is not None else ["-1", "-1"]
    # Prefer setpriv: the interpreter is then exec'd after the switch, so it stays
    # "dumpable" (a process that calls setuid() itself is not, and cannot even read its
    # own /proc/self/fd or /proc/self/environ).
    setpriv: list[str] = []
    if uid is not None and config.setpriv is not None:
        setpriv = [config.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        setpriv += ["--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]
    python = [
        *setpriv,
        config.python,
        "-I",
        "-S",
        "-c",
        _BOOTSTRAP,
        *ids,
        "0" if setpriv else "1",
        _rlimits(limits, with_nproc),
        str(len(config.site_paths)),
        *config.site_paths,
        main,
        *argv,
    ]
    if config.mode == "none":
        return python
    assert config.tool is not None
    if config.mode == "unshare":
        return [config.tool, "--net", "--", *python]
    cmd = [config.tool]
    if config.drop_privileges:
        # No user namespace as root: inside one, root stays the host's root.
        cmd += ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        cmd += ["--unshare-cgroup-try"]
    else:
        cmd += ["--unshare-all", "--unshare-user"]
        if config.bwrap_version >= (0, 8):
            cmd += ["--disable-userns"]
    cmd += ["--die-with-parent", "--new-session", "--clearenv"]
    if info_fd is not None:
        cmd += ["--info-fd", str(info_fd)]
    for key, value in _environment(config, workdir).items():
        cmd += ["--setenv", key, value]
    cmd += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    sized = config.bwrap_version >= (0, 7)
    for path in ("/tmp", "/dev/shm"):
        cmd += ["--perms", "1777"] + (["--size", str(_TMPFS_BYTES)] if sized else [])
        cmd += ["--tmpfs", path]
    for path in config.hidden:
        cmd += ["--perms", "0755"] + (["--size", str(_HIDDEN_TMPFS_BYTES)] if sized else [])
        cmd += ["--tmpfs", path]
    covers = (*config.hidden, "/tmp", "/dev/shm")
    made: set[str] = set()
    for path in config.rebind:
        cmd += _mount_point_dirs(path, covers, made)
        cmd += ["--ro-bind", path, path]
    cmd += _mount_point_dirs(workdir, covers, made)
    cmd += ["--bind", workdir, workdir, "--chdir", workdir, "--", *python]
    return cmd


def _mount_point_dirs(path: str, covers: Sequence[str], made: set[str]) -> list[str]:
    """bwrap arguments creating the missing parents of ``path`` inside a tmpfs as 0755:
    bwrap would create them 0700, untraversable for the unprivileged uid."""
    args: list[str] = []
    parts = PurePosixPath(path).parts
    for i in range(2, len(parts)):
        parent = str(PurePosixPath(*parts[:i]))
        inside = any(_is_within(parent, c) and parent != c for c in covers)
        if inside and parent not in made:
            made.add(parent)
            args += ["--perms", "0755", "--dir", parent]
    return args
