"""Isolated execution of untrusted Python code (code graders, BigCodeBench-style tests).

Contract
--------
:func:`run_python` runs ``code`` in one fresh interpreter per call and returns an
:class:`ExecResult`; it never raises because of what the program did (only for invalid
arguments, ``ValueError``, or when no interpreter can be started at all, ``OSError``).

* The code is written to ``main.py`` in a private work directory created for the run
  (``files`` are written next to it) and removed afterwards, whatever happened. The
  program's working directory and ``HOME`` are that directory; ``sys.argv`` is
  ``[<path of main.py>, *argv]`` and ``sys.path[0]`` is the work directory, as for
  ``python main.py``.
* The interpreter is ``sys.executable`` started with ``-I -S``: ``PYTHON*`` variables and
  the user site are ignored and ``.pth`` hooks are not run, but the parent's
  site-packages (and plain path lines of its ``.pth`` files) are on ``sys.path``, so
  numpy, pandas etc. import as in the parent. ``exit``/``quit``/``help`` exist as usual.
* The environment is replaced by ``PATH`` (the interpreter's directory first), ``HOME``,
  ``LANG=C.UTF-8``, ``PYTHONDONTWRITEBYTECODE=1``, ``OMP_NUM_THREADS=1`` (and ``TMPDIR``
  where ``/tmp`` is shared with the host): no API keys or tokens reach the program.
* Limits: wall clock ``timeout_s`` (then the whole sandbox is killed with SIGKILL,
  descendants and processes ignoring signals included); address space ``memory_mb``;
  CPU ``ceil(timeout_s) + 1`` s; files written at most 16 MiB each; 256 open files;
  128 processes and threads (per run: see the threat model); no core dumps.
* The run ends when the main process exits: processes it left behind are killed.
* stdout and stderr are read concurrently; each keeps its first ``max_output_bytes``
  (``truncated`` is set when anything was dropped). A stream that keeps flooding past
  ``8 * max_output_bytes`` (at least 64 KiB) gets the sandbox killed (status
  ``"killed"``), so memory and time stay bounded. Output still buffered inside a killed
  program is lost.
* Status: ``"timeout"`` (wall limit, or the CPU limit), ``"memory"`` (``MemoryError`` or
  ``std::bad_alloc`` reported, or killed by the kernel with SIGKILL, i.e. the OOM killer),
  ``"crashed"`` (other non-zero exit or signal), ``"killed"`` (we killed it for flooding
  output), ``"ok"`` (exit status 0). ``exit_code`` is ``None`` when a signal ended it.
  Under bwrap a signal death is only visible as exit status ``128 + signal``, so such
  statuses are read as signals.
* Safe to call from many threads at once; the parent uses no signals (no SIGALRM), no
  ``preexec_fn``, and no shared state beyond the one-time isolation probe and the set
  of per-run uids in use (both behind locks).

Threat model
------------
The code comes from language models (or from benchmark tasks): usually well-meaning but
buggy, sometimes pathological (infinite loops, fork or memory bombs, huge output), and
possibly adversarial at the level of an ordinary unprivileged local user. The sandbox
must keep such code from changing the host (files outside the work dir, other
processes), from reading the parent's secrets (environment), from reaching the network,
and from outliving its time limit. What :func:`isolation` reports decides how well:

``"bwrap"`` (bubblewrap; preferred)
    New pid, network, IPC, UTS and cgroup namespaces; the host file system read-only
    (``--ro-bind / /``) with only the work dir writable, fresh ``/tmp`` and ``/dev/shm``
    (size-limited tmpfs), fresh ``/dev`` and ``/proc``; ``/root``, ``/home`` and the
    caller's home hidden (only the interpreter's own directories are mounted back);
    ``no_new_privs``; a new session (no terminal injection); killing bwrap kills every
    process of the sandbox (its pid-1 is also killed directly, and the run waits until
    the namespace is gone). As root, bwrap runs without a user namespace (inside one,
    uid 0 would still be the host's root: ``--uid`` only renames it) and the interpreter
    is started by ``setpriv`` as a fresh unprivileged uid/gid, chosen at random per run,
    with no supplementary groups and no capabilities (not even in the bounding set).
    Unprivileged callers get a user namespace instead, with nested user namespaces
    disabled where bwrap supports it (>= 0.8).
``"unshare"`` (root without usable bwrap)
    Only a new network namespace, plus the per-run uid: the program can read what any
    local user can read and write where any user can write (world-writable dirs such as
    ``/tmp``). Left-over processes are found and killed by their uid.
``"none"``
    Not a security boundary: rlimits, timeouts and the cleared environment only (plus
    the per-run uid as root). A warning is logged once. As an unprivileged caller, a
    process that leaves its process group (``setsid``) can survive the run, and the
    process-count limit is not applied (it would count all of the caller's processes).

The per-run uid (root only) matters because ``RLIMIT_NPROC`` counts every process of a
uid: with a shared uid such as ``nobody``, one fork bomb would starve every concurrent
sandbox, and concurrent runs could signal or ptrace each other. Without ``setpriv``
(util-linux) the bootstrap drops privileges itself; the process is then not "dumpable"
(its own ``/proc/self/fd`` and ``environ`` become unreadable to it). In ``"unshare"``
and ``"none"`` modes the interpreter and its libraries must be readable by other users
(a Python under a 0700 ``/root`` is not), otherwise the program fails to import.

Out of scope: kernel exploits (no seccomp filter), CPU and disk exhaustion beyond the
limits above (the work dir lives on the host's disk: at most the per-file limit times
the files written before the time limit), and timing side channels. Setting
``CONDUCTOR_SANDBOX_ISOLATION`` to ``unshare`` or ``none`` caps the isolation used (for
debugging); it never raises it.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import resource
import secrets
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any, Literal

__all__ = ["ExecResult", "isolation", "run_python"]

logger = logging.getLogger(__name__)

Status = Literal["ok", "timeout", "memory", "crashed", "killed"]
_Mode = Literal["bwrap", "unshare", "none"]
_MODES: tuple[_Mode, ...] = ("bwrap", "unshare", "none")

# Caps the isolation used ("unshare" or "none"; see the module docstring).
ISOLATION_ENV = "CONDUCTOR_SANDBOX_ISOLATION"
# Name of the program's file in the work dir (reserved: ``files`` may not use it).
MAIN_FILE = "main.py"

_FILE_SIZE_LIMIT = 16 << 20
_OPEN_FILES_LIMIT = 256
_PROCESS_LIMIT = 128
_TMPFS_BYTES = 64 << 20
_HIDDEN_TMPFS_BYTES = 1 << 20
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
_PROBE_CODE = "import json, sys; sys.stdout.write(json.dumps('ok'))"
_PROBE_TIMEOUT_S = 20.0

# Runs inside the sandboxed interpreter before the program: check (or, without setpriv,
# make) the switch to the run's uid, apply the rlimits, set sys.path/argv like
# `python main.py`, then execute main.py as __main__. It binds no module-level names
# that outlive it, and the traceback of an uncaught exception starts at the program's
# own frame, as it would normally.
# argv: -c UID GID DROP RLIMITS N PATH*N MAIN ARG... (UID -1: keep the caller's ids;
# DROP 0: setpriv already switched to UID, only check it).
_BOOTSTRAP = """\
def _prepare():
    import os, resource, site, sys
    a = sys.argv
    uid, gid = int(a[1]), int(a[2])
    if uid >= 0 and a[3] == "1":
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    if uid >= 0 and (os.getuid(), os.geteuid(), os.getgid(), os.getegid()) != (uid, uid, gid, gid):
        os._exit(125)
    for spec in a[4].split(","):
        res, soft, hard = (int(x) for x in spec.split(":"))
        resource.setrlimit(res, (soft, hard))
    n = int(a[5])
    sys.path.insert(0, os.getcwd())
    sys.path.extend(a[6:6 + n])
    sys.argv = a[6 + n:]
    site.setquit()
    site.setcopyright()
    site.sethelper()
    with open(sys.argv[0], "rb") as f:
        return compile(f.read(), sys.argv[0], "exec", dont_inherit=True)


def _run():
    import sys
    g = globals()
    prepare = g.pop("_prepare")
    del g["_run"]
    try:
        code = prepare()
        g["__file__"] = sys.argv[0]
        g["__cached__"] = None
        exec(code, g)
    except SystemExit:
        raise
    except BaseException as e:
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename == "<string>":
            tb = tb.tb_next
        sys.excepthook(type(e), e.with_traceback(tb), tb)
        sys.exit(1)


_run()
"""


@dataclass(frozen=True)
class ExecResult:
    """Outcome of one :func:`run_python` call.

    ``status`` is one of ``"ok"``, ``"timeout"``, ``"memory"``, ``"crashed"`` and
    ``"killed"`` (see the module docstring); ``stdout``/``stderr`` are the captured
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
    hidden: tuple[str, ...] = ()
    rebind: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Limits:
    memory_bytes: int
    cpu_s: int


_config: _Config | None = None
_config_lock = threading.Lock()
_uids_in_use: set[int] = set()
_uids_lock = threading.Lock()


def isolation() -> str:
    """Return the isolation :func:`run_python` uses here: ``"bwrap"``, ``"unshare"`` or
    ``"none"``.

    The first call probes the machine (runs a trivial program in each candidate mode,
    strongest first) and caches the answer; it logs a warning when nothing better than
    ``"none"`` works.
    """
    return _get_config().mode


def run_python(
    code: str,
    *,
    stdin: str = "",
    timeout_s: float = 10.0,
    memory_mb: int = 512,
    files: Mapping[str, str | bytes] | None = None,
    argv: Sequence[str] = (),
    max_output_bytes: int = 1 << 20,
) -> ExecResult:
    """Run ``code`` as ``main.py`` in a fresh, isolated Python process and report how it
    went (see the module docstring for the isolation, limits and statuses).

    ``stdin`` is fed to the program (UTF-8); ``files`` maps relative paths to contents
    written into the work dir before the run (absolute paths, ``..`` components and the
    name ``main.py`` are rejected with ``ValueError``); ``argv`` follows ``main.py`` in
    ``sys.argv``. Thread-safe.
    """
    if not math.isfinite(timeout_s) or timeout_s <= 0:
        raise ValueError(f"timeout_s must be a positive number, got {timeout_s!r}")
    if memory_mb <= 0:
        raise ValueError(f"memory_mb must be positive, got {memory_mb!r}")
    if max_output_bytes < 0:
        raise ValueError(f"max_output_bytes must be >= 0, got {max_output_bytes!r}")
    extra_files = _check_files(files or {})
    args = [str(a) for a in argv]
    limits = _Limits(memory_bytes=memory_mb << 20, cpu_s=math.ceil(timeout_s) + 1)
    return _run(_get_config(), code, stdin, timeout_s, limits, extra_files, args, max_output_bytes)


# --------------------------------------------------------------------------- set-up


def _get_config() -> _Config:
    global _config
    with _config_lock:
        if _config is None:
            _config = _detect()
        return _config


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


def _site_paths() -> tuple[str, ...]:
    """The parent's site-packages dirs plus the plain path lines of their ``.pth`` files.

    Import lines of ``.pth`` files are skipped: they run code at start-up (editable-install
    finders, setuptools' distutils shim) and cost ~10 ms per run for nothing a sandboxed
    program needs.
    """
    import site

    paths: list[str] = []
    for sitedir in site.getsitepackages():
        if not os.path.isdir(sitedir) or sitedir in paths:
            continue
        paths.append(sitedir)
        try:
            names = sorted(os.listdir(sitedir))
        except OSError:
            continue
        for name in names:
            if not name.endswith(".pth") or name.startswith("."):
                continue
            try:
                with open(os.path.join(sitedir, name), encoding="utf-8") as f:
                    lines = f.read().splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            for line in lines:
                line = line.rstrip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                path = os.path.abspath(os.path.join(sitedir, line))
                if os.path.isdir(path) and path not in paths:
                    paths.append(path)
    return tuple(paths)


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


def _check_files(files: Mapping[str, str | bytes]) -> dict[str, bytes]:
    checked: dict[str, bytes] = {}
    entry: tuple[object, object]
    for entry in files.items():
        name, content = entry
        if not isinstance(name, str) or not name:
            raise ValueError(f"file names must be non-empty strings, got {name!r}")
        path = PurePosixPath(name)
        if path.is_absolute():
            raise ValueError(f"file paths must be relative, got {name!r}")
        if ".." in path.parts or not path.parts:
            raise ValueError(f"file paths must stay inside the work dir, got {name!r}")
        if path == PurePosixPath(MAIN_FILE):
            raise ValueError(f"{MAIN_FILE!r} is reserved for the program itself")
        if isinstance(content, str):
            checked[str(path)] = content.encode("utf-8")
        elif isinstance(content, bytes | bytearray):
            checked[str(path)] = bytes(content)
        else:
            raise ValueError(f"contents of {name!r} must be str or bytes")
    return checked


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


def _populate(workdir: str, code: str, files: Mapping[str, bytes], uid: int | None) -> str:
    main = os.path.join(workdir, MAIN_FILE)
    with open(main, "wb") as f:
        f.write(code.encode("utf-8", errors="surrogatepass"))
    for name, content in files.items():
        target = os.path.join(workdir, name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as f:
            f.write(content)
    if uid is not None:
        os.chown(workdir, uid, uid)
        for root, dirs, names in os.walk(workdir):
            for entry in (*dirs, *names):
                os.chown(os.path.join(root, entry), uid, uid, follow_symlinks=False)
    return main


def _remove_tree(path: str) -> None:
    """Remove ``path`` even if the program took permissions away from its own dirs (only
    possible when it runs as the caller's uid: root ignores them anyway)."""
    try:
        shutil.rmtree(path)
        return
    except OSError:
        pass
    # Top-down, so each dir is made listable before os.walk descends into it. Symlinks
    # are never followed: the program may have pointed them at the caller's files.
    with contextlib.suppress(OSError):
        os.chmod(path, 0o700)
    for root, dirs, _ in os.walk(path):
        for name in dirs:
            child = os.path.join(root, name)
            if not os.path.islink(child):
                with contextlib.suppress(OSError):
                    os.chmod(child, 0o700)
    shutil.rmtree(path, ignore_errors=True)


def _rlimits(limits: _Limits, with_nproc: bool) -> str:
    wanted = [
        (resource.RLIMIT_AS, limits.memory_bytes, limits.memory_bytes),
        # The soft CPU limit delivers SIGXCPU (reported as "timeout"); the hard one,
        # a second later, SIGKILL for programs that ignore it.
        (resource.RLIMIT_CPU, limits.cpu_s, limits.cpu_s + 1),
        (resource.RLIMIT_FSIZE, _FILE_SIZE_LIMIT, _FILE_SIZE_LIMIT),
        (resource.RLIMIT_NOFILE, _OPEN_FILES_LIMIT, _OPEN_FILES_LIMIT),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    if with_nproc:
        wanted.append((resource.RLIMIT_NPROC, _PROCESS_LIMIT, _PROCESS_LIMIT))
    specs = []
    for res, soft, hard in wanted:
        # The limits are set after the privilege drop, which cannot raise a hard limit:
        # stay at or below the inherited one.
        _, current_hard = resource.getrlimit(res)
        if current_hard != resource.RLIM_INFINITY:
            hard = min(hard, current_hard)
        specs.append(f"{res}:{min(soft, hard)}:{hard}")
    return ",".join(specs)


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


# --------------------------------------------------------------------------- running


class _Sink:
    """Keeps the first ``cap`` bytes of a stream, its size and its last few KiB."""

    __slots__ = ("cap", "kept", "seen", "tail")

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.kept = bytearray()
        self.seen = 0
        self.tail = b""

    def feed(self, data: bytes) -> None:
        self.seen += len(data)
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += data[:room]
        self.tail = (self.tail + data)[-_STDERR_TAIL:]

    def text(self) -> str:
        return self.kept.decode("utf-8", errors="replace")


def _run(
    config: _Config,
    code: str,
    stdin: str,
    timeout_s: float,
    limits: _Limits,
    files: Mapping[str, bytes],
    argv: list[str],
    max_output_bytes: int,
) -> ExecResult:
    uid = _claim_uid() if config.drop_privileges else None
    workdir = tempfile.mkdtemp(prefix="conductor-sandbox-")
    info_r, info_w = os.pipe() if config.mode == "bwrap" else (-1, -1)
    try:
        main = _populate(workdir, code, files, uid)
        info_fd = info_w if info_w >= 0 else None
        cmd = _command(config, workdir, main, uid, limits, argv, info_fd)
        start = time.monotonic()
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workdir,
            env=_environment(config, workdir),
            start_new_session=True,
            close_fds=True,
            pass_fds=(info_w,) if info_w >= 0 else (),
        )
        if info_w >= 0:
            os.close(info_w)
            info_w = -1
        supervision = _Supervision(config, proc, uid, start, info_r)
        info_r = -1  # owned by the supervision now
        data = stdin.encode("utf-8", errors="surrogatepass")
        return supervision.run(data, timeout_s, max_output_bytes)
    finally:
        for fd in (info_r, info_w):
            if fd >= 0:
                os.close(fd)
        _remove_tree(workdir)
        if uid is not None:
            _release_uid(uid)


class _Supervision:
    """One running sandbox: feeds its stdin, collects its output, enforces the wall-clock
    and output limits and makes sure nothing of it survives :meth:`run`."""

    def __init__(
        self,
        config: _Config,
        proc: subprocess.Popen[bytes],
        uid: int | None,
        start: float,
        info_fd: int,
    ) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.config = config
        self.proc = proc
        self.uid = uid
        self.start = start
        self.stdin = proc.stdin
        self.sel = selectors.DefaultSelector()
        self.info_fd = info_fd
        self.info = b""
        self.ns_init_pidfd: int | None = None
        self.pidfd = _pidfd_open(proc.pid)
        self.reason: Literal["timeout", "flood"] | None = None
        self.exited = False
        self.drain_until: float | None = None

    def run(self, stdin: bytes, timeout_s: float, max_output_bytes: int) -> ExecResult:
        proc = self.proc
        assert proc.stdout is not None and proc.stderr is not None
        out, err = _Sink(max_output_bytes), _Sink(max_output_bytes)
        try:
            self._loop(stdin, timeout_s, max_output_bytes, out, err)
            proc.wait()
            self._await_namespace_teardown()
        finally:
            if proc.returncode is None:
                self._kill_all()
                proc.wait()
            self._close()
        wall_s = time.monotonic() - self.start
        truncated = out.seen > len(out.kept) or err.seen > len(err.kept)
        status, exit_code = _classify(self.config, proc.returncode, self.reason, err.tail)
        return ExecResult(status, out.text(), err.text(), exit_code, wall_s, truncated)

    def _loop(
        self, pending: bytes, timeout_s: float, max_output_bytes: int, out: _Sink, err: _Sink
    ) -> None:
        proc, sel = self.proc, self.sel
        assert proc.stdout is not None and proc.stderr is not None
        deadline = self.start + timeout_s
        flood_limit = _FLOOD_FACTOR * max(max_output_bytes, _MIN_FLOOD_BYTES // _FLOOD_FACTOR)
        sinks = {proc.stdout.fileno(): out, proc.stderr.fileno(): err}
        for fd in sinks:
            sel.register(fd, selectors.EVENT_READ, "out")
        if pending:
            os.set_blocking(self.stdin.fileno(), False)
            sel.register(self.stdin.fileno(), selectors.EVENT_WRITE, "in")
        else:
            _close_quietly(self.stdin)
        if self.pidfd is not None:
            sel.register(self.pidfd, selectors.EVENT_READ, "exit")
        if self.info_fd >= 0:
            sel.register(self.info_fd, selectors.EVENT_READ, "info")

        while sinks or not self.exited:
            now = time.monotonic()
            if not self.exited and self.pidfd is None and proc.poll() is not None:
                self._on_exit()
                continue
            if self.drain_until is not None and now >= self.drain_until:
                return
            if not self.exited and self.reason is None and now >= deadline:
                self._kill("timeout")
                continue
            until = self.drain_until if self.drain_until is not None else deadline
            wait = max(0.0, until - now)
            if self.pidfd is None:
                wait = min(wait, 0.01)
            for key, _ in sel.select(wait):
                fd = int(key.fd)
                if key.data == "exit":
                    sel.unregister(fd)
                    self._on_exit()
                elif key.data == "in":
                    pending = _feed_stdin(self.stdin, pending)
                    if not pending:
                        sel.unregister(fd)
                        _close_quietly(self.stdin)
                elif key.data == "info":
                    self._on_info(fd)
                else:
                    data = _read(fd)
                    if not data:
                        sel.unregister(fd)
                        del sinks[fd]
                    else:
                        sinks[fd].feed(data)
                        if sinks[fd].seen > flood_limit:
                            self._kill("flood")

    def _on_exit(self) -> None:
        self.exited = True
        # Whatever the main process left behind dies with it.
        self._kill(None)

    def _kill(self, why: Literal["timeout", "flood"] | None) -> None:
        if self.reason is None and not self.exited:
            self.reason = why
        self._kill_all()
        if self.drain_until is None:
            self.drain_until = time.monotonic() + _DRAIN_GRACE_S

    def _kill_all(self) -> None:
        _kill_sandbox(self.proc, self.uid, self.config)
        if self.ns_init_pidfd is not None:
            # bwrap's --die-with-parent already takes the namespace down with bwrap;
            # killing its init directly does not depend on that (it leads a session of
            # its own, out of reach of the process-group kill).
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self.ns_init_pidfd, signal.SIGKILL)

    def _on_info(self, fd: int) -> None:
        """Read bwrap's --info-fd JSON and pin the sandbox's pid-namespace init with a
        pidfd: once that process is gone, so is every process of the sandbox."""
        data = _read(fd)
        self.info += data[:4096]
        if data:
            return
        self.sel.unregister(fd)
        os.close(fd)
        self.info_fd = -1
        match = re.search(rb'"child-pid"\s*:\s*(\d+)', self.info)
        if match is None:
            return
        # Killing this process (pid 1 of the sandbox's pid namespace) kills the sandbox.
        pid = int(match.group(1))
        pidfd = _pidfd_open(pid)
        # The pidfd pins the process; checking its parent afterwards proves it is ours
        # and not an unrelated process that reused the pid.
        if pidfd is not None and _parent_pid(pid) != self.proc.pid:
            os.close(pidfd)
            pidfd = None
        self.ns_init_pidfd = pidfd

    def _await_namespace_teardown(self) -> None:
        if self.ns_init_pidfd is None:
            return
        with selectors.DefaultSelector() as sel:
            sel.register(self.ns_init_pidfd, selectors.EVENT_READ)
            if not sel.select(_DRAIN_GRACE_S):
                logger.warning("sandbox: bwrap's pid namespace outlived its sandbox")

    def _close(self) -> None:
        self.sel.close()
        for fd in (self.pidfd, self.ns_init_pidfd, self.info_fd):
            if fd is not None and fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.pidfd = self.ns_init_pidfd = None
        self.info_fd = -1
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            _close_quietly(stream)


def _parent_pid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return int(fields[1])
    except (OSError, IndexError, ValueError):
        return None


def _classify(
    config: _Config, returncode: int, reason: str | None, stderr_tail: bytes
) -> tuple[Status, int | None]:
    if reason == "timeout":
        return "timeout", None
    if reason == "flood":
        return "killed", None
    signum: int | None = None
    if returncode < 0:
        signum = -returncode
    elif config.mode == "bwrap" and 128 < returncode <= 128 + 64:
        signum = returncode - 128
    memory = any(marker.encode() in stderr_tail for marker in _MEMORY_MARKERS)
    if signum is not None:
        if signum == signal.SIGXCPU:
            return "timeout", None
        if signum == signal.SIGKILL or memory:
            return "memory", None
        return "crashed", None
    if returncode == 0:
        return "ok", 0
    return ("memory" if memory else "crashed"), returncode


def _pidfd_open(pid: int) -> int | None:
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        fd: int = opener(pid)
    except OSError:
        return None
    return fd


def _feed_stdin(stream: Any, pending: bytes) -> bytes:
    try:
        written = os.write(stream.fileno(), pending[:_READ_CHUNK])
    except BlockingIOError:
        return pending
    except OSError:
        # The program closed its stdin or exited: the rest is not wanted.
        return b""
    return pending[written:]


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, _READ_CHUNK)
    except OSError:
        return b""


def _close_quietly(stream: Any) -> None:
    if stream is not None:
        with contextlib.suppress(OSError):
            stream.close()


def _kill_sandbox(proc: subprocess.Popen[bytes], uid: int | None, config: _Config) -> None:
    """SIGKILL everything the run started.

    With a pidfd the main process is only reaped after this (``proc.wait`` comes later),
    so its pid, which is also the process group id, cannot have been reused meanwhile.
    """
    # The main process leads its own session, so it cannot have left this group; no
    # proc.kill(): Popen.send_signal would reap it first.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    # bwrap's pid namespace already took every process down with it; elsewhere a
    # descendant may have left the process group (setsid), but not the run's uid.
    if uid is not None and config.mode != "bwrap":
        _kill_uid(uid)


def _kill_uid(uid: int) -> None:
    """Kill every process of ``uid`` at once: kill(-1) from a process running as ``uid``
    is atomic with respect to fork, unlike scanning /proc."""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(
            ["/bin/sh", "-c", "kill -9 -1"],
            user=uid,
            group=uid,
            extra_groups=[],
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=10,
            check=False,
        )
