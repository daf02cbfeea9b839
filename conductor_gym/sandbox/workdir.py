"""A run's private work directory: checking the caller's ``files``, writing them and the
program into it, and removing it afterwards whatever the program did to it."""

from __future__ import annotations

import contextlib
import os
import shutil
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
