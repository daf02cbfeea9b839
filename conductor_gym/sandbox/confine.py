"""How a run is confined: the command line that starts it (bwrap, unshare or the bare
interpreter, with setpriv as root), its environment and the per-run uids of the privilege
drop."""

from __future__ import annotations

import os
import secrets
import threading

from .bootstrap import _BOOTSTRAP, _rlimits
from .common import _UID_BASE, _UID_SPAN, _Config, _Limits
from .mountns import _CONFINE
from .seccomp import _userns_filter
from .view import _bwrap_args, _run_view

_uids_in_use: set[int] = set()
_uids_lock = threading.Lock()


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
    if config.mode == "none":
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
    root: str | None = None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The command line of one run. ``root`` is the empty dir the ``"unshare"`` mode builds
    its view in; ``info_fd`` receives bwrap's ``--info-fd`` report; ``seccomp_fd`` holds
    the seccomp filter bwrap installs (:mod:`.seccomp`)."""
    # Without bwrap and without a uid of its own, RLIMIT_NPROC would count all of the
    # caller's processes, which can already exceed any sensible limit.
    with_nproc = config.mode == "bwrap" or uid is not None
    ids = [str(uid), str(uid)] if uid is not None else ["-1", "-1"]
    # The unshare mode's confinement drops privileges itself (after building the view);
    # elsewhere prefer setpriv: the interpreter is then exec'd after the switch, so it
    # stays "dumpable" (a process that calls setuid() itself is not, and cannot even read
    # its own /proc/self/fd or /proc/self/environ).
    setpriv: list[str] = []
    if uid is not None and config.setpriv is not None and config.mode != "unshare":
        setpriv = [config.setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        setpriv += ["--no-new-privs", "--inh-caps=-all", "--bounding-set=-all", "--"]
    script, confine_args = _BOOTSTRAP, []
    if config.mode == "unshare":
        assert root is not None
        view = _run_view(config.view, workdir)
        program = _userns_filter()
        confine_args = [root, workdir, program.hex() if program else "-", str(len(view))]
        confine_args += [arg for op in view for arg in op.as_args()]
        script = _CONFINE + _BOOTSTRAP
    python = [
        *setpriv,
        config.python,
        "-I",
        "-S",
        "-c",
        script,
        *confine_args,
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
        namespaces = ["--mount", "--pid", "--net", "--ipc", "--uts"]
        return [config.tool, *namespaces, "--fork", "--kill-child", "--", *python]
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
    if seccomp_fd is not None:
        cmd += ["--seccomp", str(seccomp_fd)]
    for key, value in _environment(config, workdir).items():
        cmd += ["--setenv", key, value]
    cmd += _bwrap_args(_run_view(config.view, workdir), config.bwrap_version >= (0, 7))
    cmd += ["--remount-ro", "/", "--chdir", workdir, "--", *python]
    return cmd
