"""The child side of a run: the bootstrap script the sandboxed interpreter runs before the
program, the site-packages paths it puts on ``sys.path`` and the rlimits it applies."""

from __future__ import annotations

import os
import resource

from .common import _FILE_SIZE_LIMIT, _OPEN_FILES_LIMIT, _PROCESS_LIMIT, _Limits

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


def _site_paths() -> tuple[str, ...]:
    """The parent's site-packages dirs plus the plain path lines of their ``.pth`` files
    that lead to dirs inside them.

    Import lines of ``.pth`` files are skipped: they run code at start-up (editable-install
    finders, setuptools' distutils shim) and cost ~10 ms per run for nothing a sandboxed
    program needs. Path lines leading out of the site dirs are skipped too: those are
    editable installs, whose dirs are source checkouts (with their tests and data), which
    the sandbox must not show.
    """
    import site

    sitedirs = [d for d in dict.fromkeys(site.getsitepackages()) if os.path.isdir(d)]
    paths: list[str] = []
    for sitedir in sitedirs:
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
                inside = any(path.startswith(d.rstrip("/") + "/") for d in sitedirs)
                if inside and os.path.isdir(path) and path not in paths:
                    paths.append(path)
    return tuple(paths)


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
