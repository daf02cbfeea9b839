"""What a confined program sees of the file system: a minimal root built from an empty
directory, the same for bwrap and unshare.

The view holds the system's program and library directories (``/usr``'s ``bin``, ``lib``,
``share`` and the like, and the ``/bin``-style links to them), the few ``/etc`` files the
C library and Python read, a fresh ``/dev``, ``/proc``, ``/tmp`` and ``/dev/shm``, and the
interpreter: its executable (every link on the way to it), the directories on its
``sys.path`` under ``-I -S``, the shared objects it maps at start-up, its ``pyvenv.cfg``
and the site-packages dirs the bootstrap adds. Then the run's work dir, writable. Nothing
else of the host exists in it: not the project checkout, not ``/root`` or ``/home`` (but
for the interpreter's own dirs inside them), not task data or dataset caches. Every
directory created to hold a mount point is ``0755``, so an interpreter kept under a
private dir (``/root/.pyenv`` with ``/root`` at ``0700``) is usable by the run's uid.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

from .common import _TMPFS_BYTES

_Kind = Literal["ro", "rw", "symlink", "dir", "tmpfs", "dev", "proc"]

# Below /usr only these: /usr/src and /usr/local/src (where container images often keep
# the application and its data), /usr/games and the like stay out.
_SYSTEM_DIRS = (
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libx32",
    "/usr/libexec",
    "/usr/include",
    "/usr/share",
    "/usr/local/bin",
    "/usr/local/sbin",
    "/usr/local/lib",
    "/usr/local/lib64",
    "/usr/local/include",
    "/usr/local/share",
)
# Top-level entries that are, on merged-/usr systems, links into /usr.
_SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# What the dynamic loader, the C library (users, hosts, time zone) and Python's standard
# library (mimetypes, platform) read from /etc.
_ETC_ENTRIES = (
    "alternatives",
    "group",
    "host.conf",
    "hosts",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "mime.types",
    "nsswitch.conf",
    "os-release",
    "passwd",
    "timezone",
)
# What the interpreter reports about itself: its sys.path without site, the files it has
# mapped (libpython when it is linked shared), its prefix.
_INTROSPECT = (
    "import json, sys\n"
    "maps = set()\n"
    "with open('/proc/self/maps') as f:\n"
    "    for line in f:\n"
    "        part = line.split(None, 5)\n"
    "        if len(part) == 6 and part[5].startswith('/'):\n"
    "            maps.add(part[5].strip())\n"
    "print(json.dumps({'path': sys.path, 'maps': sorted(maps), 'prefix': sys.prefix}))\n"
)


@dataclass(frozen=True)
class _Op:
    """One step of building the view: bind ``source`` at ``path`` read-only (``ro``) or
    writable (``rw``), make a ``symlink`` to ``source``, a ``dir`` (``0755``), a ``tmpfs``
    (``mode`` and ``size``), a fresh ``dev`` or ``proc``. ``path`` is inside the view."""

    kind: _Kind
    path: str
    source: str = ""
    mode: int = 0o755
    size: int = 0

    def as_args(self) -> list[str]:
        """The operation as the five arguments :mod:`.mountns` reads."""
        return [self.kind, self.path, self.source, str(self.mode), str(self.size)]


def _static_view(python: str, site_paths: Sequence[str]) -> tuple[_Op, ...]:
    """The view shared by every run with ``python`` (raises ``OSError`` if the interpreter
    cannot report its paths)."""
    builder = _Builder()
    for link in _SYSTEM_LINKS:
        if os.path.islink(link):
            builder.symlink(link, os.readlink(link))
        elif os.path.isdir(link):
            builder.bind(link)
    for path in _SYSTEM_DIRS:
        if os.path.isdir(path) and not os.path.islink(path):
            builder.bind(path)
    builder.ensure_dir("/etc")
    for name in _ETC_ENTRIES:
        path = os.path.join("/etc", name)
        if os.path.islink(path):
            builder.symlink(path, os.readlink(path))
        elif os.path.exists(path):
            builder.bind(path)
    builder.add(_Op("dev", "/dev"))
    builder.add(_Op("proc", "/proc"))
    for path in ("/tmp", "/dev/shm"):
        builder.add(_Op("tmpfs", path, mode=0o1777, size=_TMPFS_BYTES))
    for path in _interpreter_paths(python, site_paths):
        builder.bind(path)
    return tuple(builder.ops)


def _run_view(static: Sequence[_Op], workdir: str) -> tuple[_Op, ...]:
    """``static`` plus the run's work dir (writable) and the dirs that hold it."""
    builder = _Builder(static)
    builder.bind(workdir, writable=True)
    return tuple(builder.ops)


def _interpreter_paths(python: str, site_paths: Sequence[str]) -> list[str]:
    """Every host path the interpreter needs, executable and links included."""
    try:
        out = subprocess.run(
            [python, "-I", "-S", "-c", _INTROSPECT],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            cwd="/",
        ).stdout
        report = json.loads(out)
    except (subprocess.SubprocessError, ValueError) as exc:
        raise OSError(f"{python} could not report its own paths: {exc}") from None
    paths: list[str] = []
    for link in _link_chain(python):
        paths.append(os.path.dirname(link))
    prefix = str(report["prefix"])
    paths += [p for p in report["path"] if p]
    paths += [p for p in report["maps"] if os.path.isfile(p)]
    paths.append(os.path.join(prefix, "pyvenv.cfg"))
    paths += site_paths
    found: list[str] = []
    for path in paths:
        for candidate in (os.path.abspath(path), os.path.realpath(path)):
            if os.path.exists(candidate) and candidate not in found:
                found.append(candidate)
    # Outer dirs first, so that what they already show is not bound again.
    return sorted(found, key=lambda p: p.count("/"))


def _link_chain(path: str) -> list[str]:
    """``path`` and every symbolic link it leads through, ending with the real file."""
    chain = [os.path.abspath(path)]
    while os.path.islink(chain[-1]) and len(chain) < 40:
        target = os.readlink(chain[-1])
        chain.append(os.path.normpath(os.path.join(os.path.dirname(chain[-1]), target)))
    chain.append(os.path.realpath(path))
    return chain


def _is_within(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


class _Builder:
    """Collects :class:`_Op` s, skipping paths the view already shows and creating the
    directories a new mount point needs (``0755``; bwrap and mkdir would otherwise pick
    their own modes)."""

    def __init__(self, ops: Iterable[_Op] = ()) -> None:
        self.ops: list[_Op] = list(ops)

    def add(self, op: _Op) -> None:
        self.ops.append(op)

    def _owner(self, path: str) -> _Op | None:
        """The last op whose mount (or made dir) contains ``path``."""
        for op in reversed(self.ops):
            if op.kind != "symlink" and _is_within(path, op.path):
                return op
        return None

    def ensure_dir(self, path: str) -> None:
        owner = self._owner(path)
        if owner is not None and owner.kind in ("ro", "rw"):
            return  # the host's own dir, shown by a bind (it exists: we bind host paths)
        if owner is not None and owner.path == path:
            return
        parent = str(PurePosixPath(path).parent)
        if parent != path:
            self.ensure_dir(parent)
        if path != "/":
            self.ops.append(_Op("dir", path))

    def bind(self, path: str, writable: bool = False) -> None:
        owner = self._owner(path)
        if owner is not None and owner.kind == "ro" and not writable:
            return  # already visible, read-only
        self.ensure_dir(str(PurePosixPath(path).parent))
        self.ops.append(_Op("rw" if writable else "ro", path, path))

    def symlink(self, path: str, target: str) -> None:
        self.ensure_dir(str(PurePosixPath(path).parent))
        self.ops.append(_Op("symlink", path, target))


def _bwrap_args(ops: Sequence[_Op], sized: bool) -> list[str]:
    """The view as bwrap options (``sized``: bwrap >= 0.7 accepts ``--size``)."""
    args: list[str] = []
    for op in ops:
        if op.kind == "ro":
            args += ["--ro-bind", op.source, op.path]
        elif op.kind == "rw":
            args += ["--bind", op.source, op.path]
        elif op.kind == "symlink":
            args += ["--symlink", op.source, op.path]
        elif op.kind == "dir":
            args += ["--perms", f"{op.mode:04o}", "--dir", op.path]
        elif op.kind == "tmpfs":
            args += ["--perms", f"{op.mode:04o}"]
            args += ["--size", str(op.size)] if sized else []
            args += ["--tmpfs", op.path]
        elif op.kind == "dev":
            args += ["--dev", op.path]
        else:
            # read-only: no process opens its own /proc/self/mem for writing
            args += ["--proc", op.path, "--remount-ro", op.path]
    return args
