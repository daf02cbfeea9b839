"""The ``"unshare"`` mode's confinement, run by the sandboxed interpreter itself before the
bootstrap: it builds the view (:mod:`.view`) in its own mount namespace, enters it and drops
root.

``unshare --mount --pid --net --ipc --uts --fork --kill-child`` starts the interpreter as
root and as pid 1 of new namespaces. This script then mounts a tmpfs on the (empty) root
dir the parent made for the run, builds the view's operations inside it with mount(2)
(through ctypes: no helper processes), makes that tmpfs read-only and ``chroot`` s into it.
It forks: the child empties the capability bounding set, switches to the run's uid and
gid with no supplementary groups, sets ``no_new_privs``, makes itself dumpable again
(so that it can read its own ``/proc/self``) and installs the run's seccomp filter
(:mod:`.seccomp`, which refuses making a process dumpable from then on), then goes on
into the bootstrap and the program. The parent stays pid 1, outside the program's reach
(another uid), reaps orphans and exits with the program's status, ``128 + signal`` for a
signal death, as bwrap does; its exit takes down every process left in the pid namespace.

A chroot is enough here because the program never holds a capability: it cannot
``chroot`` again, and the kernel refuses a new user namespace inside a chroot. Any
failure before the program starts is written to stderr and exits with status 126.
argv: -c ROOT WORKDIR FILTER N (FILTER: the seccomp filter in hex, ``-`` for none), then
N view operations as 5 arguments each (kind, path, source,
mode, size; :class:`.view._Op`), then the bootstrap's (see :mod:`.bootstrap`). No json:
importing it would cost more than the rest of this script.
"""

from __future__ import annotations

_CONFINE = """\
def _confine():
    import ctypes, os, sys
    a = sys.argv
    root, workdir, seccomp, n = a[1], a[2], a[3], 5 * int(a[4])
    ops = [a[i:i + 5] for i in range(5, 5 + n, 5)]
    del a[1:5 + n]
    uid, gid = int(a[1]), int(a[2])
    libc = ctypes.CDLL(None, use_errno=True)
    RDONLY, NOSUID, NODEV, NOEXEC, REMOUNT, BIND, REC, PRIVATE = (
        1, 2, 4, 8, 32, 4096, 16384, 1 << 18)

    def check(rc, what):
        if rc != 0:
            errno = ctypes.get_errno()
            raise OSError(errno, f"{what}: {os.strerror(errno)}")

    def mount(source, target, fstype, flags, data=None):
        args = [None if s is None else s.encode() for s in (source, target, fstype, data)]
        check(libc.mount(args[0], args[1], args[2], ctypes.c_ulong(flags), args[3]),
              f"mount {target}")

    def bind(source, target, flags):
        if not os.path.lexists(target):
            if os.path.isdir(source):
                os.mkdir(target)
            else:
                open(target, "x").close()
        mount(source, target, None, BIND)
        keep = os.statvfs(source).f_flag & (RDONLY | NOSUID | NODEV | NOEXEC)
        mount(None, target, None, BIND | REMOUNT | flags | keep)

    try:
        os.umask(0o022)
        last_cap = int(open("/proc/sys/kernel/cap_last_cap").read())
        mount(None, "/", None, REC | PRIVATE)
        mount("tmpfs", root, "tmpfs", NOSUID | NODEV, "mode=0755,size=1m")
        for kind, path, source, mode, size in ops:
            mode, target = int(mode), root + path
            if kind in ("ro", "rw"):
                bind(source, target, NOSUID | NODEV | (RDONLY if kind == "ro" else 0))
            elif kind == "symlink":
                os.symlink(source, target)
            elif kind == "dir":
                os.makedirs(target, exist_ok=True)
                os.chmod(target, mode)
            elif kind == "tmpfs":
                os.makedirs(target, exist_ok=True)
                mount("tmpfs", target, "tmpfs", NOSUID | NODEV, f"mode={mode:o},size={size}")
            elif kind == "proc":
                os.makedirs(target, exist_ok=True)
                # read-only: no process opens its own /proc/self/mem for writing
                mount("proc", target, "proc", NOSUID | NODEV | NOEXEC | RDONLY)
            elif kind == "dev":
                os.makedirs(target, exist_ok=True)
                mount("tmpfs", target, "tmpfs", NOSUID | NOEXEC, "mode=0755,size=64k")
                for name in ("null", "zero", "full", "random", "urandom", "tty"):
                    if os.path.exists("/dev/" + name):
                        bind("/dev/" + name, target + "/" + name, NOSUID | NOEXEC)
                for name, link in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                                   ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
                    os.symlink(link, target + "/" + name)
                os.mkdir(target + "/shm")
            else:
                raise ValueError(f"unknown view operation {kind!r}")
        mount(None, root, None, REMOUNT | RDONLY | NOSUID | NODEV)
        os.chroot(root)
        os.chdir(workdir)
        pid = os.fork()
    except BaseException as exc:
        sys.stderr.write(f"sandbox: cannot confine the program: {exc}\\n")
        sys.stderr.flush()
        os._exit(126)
    if pid:
        null = os.open("/dev/null", os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        while True:
            try:
                done, status = os.wait()
            except ChildProcessError:
                os._exit(126)
            if done == pid:
                code = os.waitstatus_to_exitcode(status)
                os._exit(code if code >= 0 else 128 - code)
    try:
        for cap in range(last_cap + 1):
            check(libc.prctl(24, cap, 0, 0, 0), "dropping a capability")
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        check(libc.prctl(38, 1, 0, 0, 0), "setting no_new_privs")
        check(libc.prctl(4, 1, 0, 0, 0), "setting dumpable")
        if seccomp != "-":
            program = ctypes.create_string_buffer(bytes.fromhex(seccomp))

            class Program(ctypes.Structure):
                _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

            fprog = Program(len(program.raw) // 8, ctypes.addressof(program))
            check(libc.prctl(22, 2, ctypes.byref(fprog), 0, 0), "installing seccomp")
    except BaseException as exc:
        sys.stderr.write(f"sandbox: cannot drop privileges: {exc}\\n")
        sys.stderr.flush()
        os._exit(126)
    a[3] = "0"


_confine()
del _confine
"""
