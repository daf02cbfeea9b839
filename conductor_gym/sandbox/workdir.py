"""A run's private work directory: checking the caller's ``files``, writing them and the
program into it, and removing it afterwards whatever the program did to it."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import PurePosixPath

from .common import MAIN_FILE


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


def _remove_tree(path: str) -> bool:
    """Remove ``path`` whatever the program made of it; whether it is gone.

    Iterative, and relative to directory descriptors: a tree of any depth (far past the
    recursion limit, and past ``PATH_MAX``) or width costs one open descriptor and a list
    of pending names per level. Symlinks are unlinked, never followed (the program may
    have pointed them at the caller's files). Directories the program made unreadable
    are given back their permissions first (only possible when it runs as the caller's
    uid: root ignores them anyway). Never raises.
    """
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = _open_dir(path, flags, None)
    except FileNotFoundError:
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(path)
        return not os.path.lexists(path)
    names: list[str] = []  # the path from ``path`` down to the current dir
    pending = [_empty(fd)]  # per level: the subdirs still to remove
    try:
        while True:
            if pending[-1]:
                name = pending[-1].pop()
                try:
                    child = _open_dir(name, flags, fd)
                except OSError:
                    continue
                os.close(fd)
                fd = child
                names.append(name)
                pending.append(_empty(fd))
                continue
            pending.pop()
            if not names:
                break
            parent = os.open("..", flags, dir_fd=fd)
            os.close(fd)
            fd = parent
            with contextlib.suppress(OSError):
                os.rmdir(names.pop(), dir_fd=fd)
    except OSError:
        pass
    finally:
        os.close(fd)
    with contextlib.suppress(OSError):
        os.rmdir(path)
    return not os.path.lexists(path)


def _open_dir(name: str, flags: int, dir_fd: int | None) -> int:
    """A descriptor of the directory ``name`` (never through a symlink), made listable
    first if the program took that away."""
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except PermissionError:
        os.chmod(name, 0o700, dir_fd=dir_fd)
        return os.open(name, flags, dir_fd=dir_fd)


def _empty(fd: int) -> list[str]:
    """Unlink everything in the directory ``fd`` but its subdirectories (emptied first
    when that is cheap: an empty one is removed at once); the names of those left."""
    with contextlib.suppress(OSError):
        os.fchmod(fd, 0o700)
    subdirs: list[str] = []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        try:
                            os.rmdir(entry.name, dir_fd=fd)
                        except OSError:
                            subdirs.append(entry.name)
                    else:
                        os.unlink(entry.name, dir_fd=fd)
                except OSError:
                    continue
    except OSError:
        pass
    return subdirs
