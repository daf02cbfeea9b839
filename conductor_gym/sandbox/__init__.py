"""Isolated execution of untrusted Python code (code graders, BigCodeBench-style tests).

Contract
--------
:func:`run_python` runs ``code`` in one fresh interpreter per call and returns an
:class:`ExecResult`; it never raises because of what the program did (only for invalid
arguments, ``ValueError``, or when no interpreter can be started at all or no isolation
works on this machine, ``OSError``).

* The code is written to ``main.py`` in a private work directory created for the run
  (``files`` are written next to it) and removed afterwards, whatever happened. The
  program's working directory and ``HOME`` are that directory; ``sys.argv`` is
  ``[<path of main.py>, *argv]`` and ``sys.path[0]`` is the work directory, as for
  ``python main.py``.
* The interpreter is ``sys.executable`` started with ``-I -S``: ``PYTHON*`` variables and
  the user site are ignored and ``.pth`` hooks are not run, but the parent's
  site-packages (and the plain path lines of its ``.pth`` files that stay inside them)
  are on ``sys.path``, so numpy, pandas etc. import as in the parent. Path lines leading
  elsewhere (editable installs: source checkouts) are left out. ``exit``/``quit``/``help``
  exist as usual.
* The environment is replaced by ``PATH`` (the interpreter's directory first), ``HOME``,
  ``LANG=C.UTF-8``, ``PYTHONDONTWRITEBYTECODE=1``, ``OMP_NUM_THREADS=1`` (and ``TMPDIR``
  where ``/tmp`` is shared with the host): no API keys or tokens reach the program.
* Limits: wall clock ``timeout_s`` (then the whole sandbox is killed with SIGKILL,
  descendants and processes ignoring signals included); memory ``memory_mb`` for the
  whole run, all its processes together (a memory cgroup per run, :mod:`.cgroup`; where
  this process cannot create cgroups, a warning is logged once and the limit holds per
  process only), and address space ``memory_mb`` per process; CPU
  ``ceil(timeout_s) + 1`` s; files written at most 16 MiB each; 256 open files; 128
  processes and threads (per run: see the threat model); no core dumps.
* The run ends when the main process exits: processes it left behind are killed.
* stdout and stderr are read concurrently; each keeps its first ``max_output_bytes``
  (``truncated`` is set when anything was dropped). A stream that keeps flooding past
  ``8 * max_output_bytes`` (at least 64 KiB) gets the sandbox killed (status
  ``"killed"``), so memory and time stay bounded. Output still buffered inside a killed
  program is lost.
* Status: ``"timeout"`` (wall limit, or the CPU limit), ``"memory"`` (``MemoryError`` or
  ``std::bad_alloc`` reported, or killed by the kernel with SIGKILL, i.e. the OOM killer,
  or failed after the OOM killer took one of its processes),
  ``"crashed"`` (other non-zero exit or signal), ``"killed"`` (we killed it for flooding
  output), ``"ok"`` (exit status 0). ``exit_code`` is ``None`` when a signal ended it.
  Under bwrap and unshare a signal death is only visible as exit status
  ``128 + signal``, so such statuses are read as signals.
* Safe to call from many threads at once; the parent uses no signals (no SIGALRM), no
  ``preexec_fn``, and no shared state beyond the one-time isolation probe and the set
  of per-run uids in use (both behind locks).

Threat model
------------
The code comes from language models (or from benchmark tasks): usually well-meaning but
buggy, sometimes pathological (infinite loops, fork or memory bombs, huge output), and
possibly adversarial at the level of an ordinary unprivileged local user. The sandbox
must keep such code from changing the host (files outside the work dir, other
processes), from reading the parent's secrets (environment) or the host's files (task
data and benchmark answers above all), from reaching the network, and from outliving its
time limit. What :func:`isolation` reports decides how well:

What the program sees
    Under ``"bwrap"`` and ``"unshare"`` the program's file system is a minimal root
    built from an empty directory (:mod:`.view`): the system's program and library dirs
    (``/usr``'s ``bin``, ``lib``, ``include``, ``share`` and the like, read-only), a few
    ``/etc`` files (loader cache, ``passwd``, ``hosts``, time zone), a fresh ``/dev``,
    ``/proc`` (read-only: no process opens its own ``/proc/self/mem`` for writing),
    ``/tmp`` and ``/dev/shm`` (size-limited tmpfs), the interpreter (its
    executable and links, its standard library, the shared objects it maps, the
    site-packages dirs above; read-only) and the run's work dir. Nothing else of the host
    exists there: not the project checkout, task data or any ``data_dir``, dataset caches
    (``HF_HOME``), ``/root``, ``/home``, ``/var`` or ``/opt``, so benchmark answers
    stored on the host cannot be read. Dirs made to hold mount points are ``0755``, so
    an interpreter under a private dir (pyenv under a ``0700`` ``/root``) still works.

``"bwrap"`` (bubblewrap; preferred)
    New pid, network, IPC, UTS and cgroup namespaces; the view above with only the work
    dir writable (the root itself is remounted read-only); ``no_new_privs``; a new
    session (no terminal injection); killing bwrap kills every process of the sandbox
    (its pid-1 is also killed directly, and the run waits until the namespace is gone).
    As root, bwrap runs without a user namespace (inside one, uid 0 would still be the
    host's root: ``--uid`` only renames it) and the interpreter is started by
    ``setpriv`` as a fresh unprivileged uid/gid, chosen at random per run, with no
    supplementary groups and no capabilities (not even in the bounding set), and a
    seccomp filter refuses new user namespaces (:mod:`.seccomp`; x86-64 and AArch64),
    so the program cannot become "root" in one and mount file systems, and any way into
    a process's memory (``ptrace``, ``process_vm_readv``/``writev``, making a process
    dumpable again).
    Unprivileged callers get a user namespace instead, with nested user namespaces
    disabled where bwrap supports it (>= 0.8), and the same filter.
``"unshare"`` (root without usable bwrap)
    ``unshare`` (util-linux) gives new mount, pid, network, IPC and UTS namespaces; the
    interpreter builds the same view there itself, ``chroot`` s into it and drops to the
    per-run uid with no capabilities (bounding set emptied) and ``no_new_privs``, and
    installs the same seccomp filter as bwrap's (:mod:`.mountns`). A process without
    capabilities cannot leave a chroot, nor create a user namespace inside one.
    Left-over processes die with the pid namespace, and are also found and killed by
    their uid.
``"none"`` (only when ``CONDUCTOR_SANDBOX_ISOLATION=none`` asks for it)
    Not a security boundary: rlimits, timeouts and the cleared environment only (plus
    the per-run uid as root); the program sees the host's files. A warning is logged
    once. As an unprivileged caller, a process that leaves its process group
    (``setsid``) can survive the run, and the process-count limit is not applied (it
    would count all of the caller's processes). The interpreter must be executable by
    the run's uid (a Python under a ``0700`` ``/root`` is not; that is refused).

When neither bwrap nor unshare works (an unprivileged caller without bubblewrap, a
container that forbids namespaces), nothing is run: :func:`isolation` and
:func:`run_python` raise ``OSError`` with what each mode lacked and what to install. A
mode whose probe run fails (the interpreter cannot execute itself, or the loader fell
back to another Python's libraries) is not used.

The per-run uid (root only) matters because ``RLIMIT_NPROC`` counts every process of a
uid: with a shared uid such as ``nobody``, one fork bomb would starve every concurrent
sandbox, and concurrent runs could signal or ptrace each other. Without ``setpriv``
(util-linux) the bootstrap drops privileges itself in the ``"none"`` mode; the process
is then not "dumpable" (its own ``/proc/self/fd`` and ``environ`` become unreadable to
it).

The work dir is removed after every run whatever the program made of it (iteratively,
relative to directory descriptors: no depth, ``PATH_MAX`` or permission trick defeats
it, and symlinks are never followed); a run whose files could not be removed is
reported ``"crashed"`` (a failed run, never an exception).

Out of scope: kernel exploits (the seccomp filter refuses a few calls, not the kernel's
surface), CPU and disk exhaustion beyond the limits above (the work dir lives on the
host's disk: at most the per-file limit times the files written before the time
limit), timing side channels, and what the system's own dirs hold (a benchmark's
answers copied into ``/usr/share`` would be visible).
Setting ``CONDUCTOR_SANDBOX_ISOLATION`` to ``unshare`` caps the isolation used (for
debugging) and ``none`` turns it off; neither ever raises it.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, Sequence

# ``name as name``: re-exported, for callers and tests that use it from this package.
from .bootstrap import _site_paths as _site_paths
from .common import _PROCESS_LIMIT as _PROCESS_LIMIT
from .common import ISOLATION_ENV as ISOLATION_ENV
from .common import MAIN_FILE as MAIN_FILE
from .common import ExecResult
from .common import Status as Status
from .common import _Config as _Config
from .common import _Limits as _Limits
from .probe import _base_config as _base_config
from .probe import _candidate as _candidate
from .probe import _detect
from .probe import _probe as _probe
from .process import _run as _run
from .workdir import _check_files

__all__ = ["ExecResult", "isolation", "run_python"]

_config: _Config | OSError | None = None
_config_lock = threading.Lock()


def isolation() -> str:
    """Return the isolation :func:`run_python` uses here: ``"bwrap"``, ``"unshare"`` or
    ``"none"``.

    The first call probes the machine (runs a trivial program in each candidate mode,
    strongest first) and caches the answer. ``"none"`` only when
    ``CONDUCTOR_SANDBOX_ISOLATION=none`` asks for it (a warning is logged). Raises
    ``OSError`` (every call, probed once) when no isolation works here, saying why and
    what to install.
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


def _get_config() -> _Config:
    global _config
    with _config_lock:
        if _config is None:
            try:
                _config = _detect()
            except OSError as exc:
                _config = exc  # probed once: every later call gets the same answer
        if isinstance(_config, OSError):
            raise OSError(str(_config))
        return _config
