"""Replaying a response cache from a read-only folder or file, and errors that name the path.

Read-only is made real: as root (who ignores file permissions) the replay runs in a
subprocess under ``unshare --mount`` with the folder or file bind-mounted read-only, so
writes fail with EROFS whoever tries; as another user the folder or file loses its
write permission. Each replaying subprocess first shows that it cannot write there.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from cache_writer import own_row
from support import unavailable

from conductor_gym.workers.cache import CacheError, ResponseCache, cache_request

ROWS = 3
TESTS = Path(__file__).resolve().parents[1]
ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")])),
}
"""The subprocesses import ``cache_writer`` from ``tests/``."""
IS_ROOT = os.geteuid() == 0
_MOUNT_RO = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'

# argv: cache path, a path to try writing, mode. Prints JSON: whether the write went
# through, then the replayed texts (recorded row order) or the error.
REPLAY = """
import asyncio, json, sys
from conductor_gym.workers.cache import ResponseCache, cache_key

path, probe, mode = sys.argv[1:4]
try:
    with open(probe, "ab"):
        pass
    writable = True
except OSError:
    writable = False
out = {"writable": writable}
try:
    with ResponseCache(path, mode=mode) as cache:
        keys = [cache_key(**args) for args in json.loads(sys.argv[4])]
        out["texts"] = [getattr(asyncio.run(cache.get(k)), "text", None) for k in keys]
except Exception as exc:
    out["error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def record(db: Path, *, close: bool = True) -> list[str]:
    """Record :data:`ROWS` rows into ``db``; their texts. ``close=False``: the recording
    process exits without closing the cache, leaving its rows in the ``-wal`` file."""
    code = (
        "import asyncio, os, sys\n"
        "from cache_writer import own_row\n"
        "from conductor_gym.workers.cache import ResponseCache\n"
        "cache = ResponseCache(sys.argv[1])\n"
        f"for i in range({ROWS}):\n"
        "    asyncio.run(cache.put(*own_row(0, i)))\n"
        f"cache.close() if {close} else os._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(db)], check=True, timeout=60, env=ENV)
    return [own_row(0, i)[1].text for i in range(ROWS)]


def key_args() -> str:
    args: list[dict[str, Any]] = []
    for i in range(ROWS):
        request = own_row(0, i)[0]
        args.append(
            {
                "model": request["model"],
                "messages": request["messages"],
                "max_tokens": request["max_tokens"],
                "temperature": request["temperature"],
                "seed": request["sample"],
                "params": request["params"],
            }
        )
    assert [cache_request(**a) for a in args] == [own_row(0, i)[0] for i in range(ROWS)]
    return json.dumps(args)


@contextmanager
def _read_only_permissions(target: Path) -> Iterator[None]:
    modes = {p: p.stat().st_mode for p in (target, *target.glob("*"))}
    writes = stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH
    try:
        for path, mode in modes.items():
            path.chmod(mode & ~writes)
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


def run_read_only(target: Path, argv: Sequence[str]) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with ``target`` (a folder or file) read-only for it (module docstring)."""
    if IS_ROOT:
        command = ["unshare", "--mount", "sh", "-c", _MOUNT_RO, str(target), *argv]
        probe = subprocess.run(
            ["unshare", "--mount", "sh", "-c", _MOUNT_RO, str(target), "true"],
            capture_output=True,
            text=True,
        )
        if probe.returncode != 0:
            unavailable("a read-only bind mount (unshare --mount as root)", probe.stderr)
        return subprocess.run(command, capture_output=True, text=True, timeout=120, env=ENV)
    with _read_only_permissions(target):
        return subprocess.run(list(argv), capture_output=True, text=True, timeout=120, env=ENV)


def replay(target: Path, db: Path, probe: Path, mode: str = "replay") -> dict[str, Any]:
    done = run_read_only(
        target, [sys.executable, "-c", REPLAY, str(db), str(probe), mode, key_args()]
    )
    assert done.returncode == 0, done.stderr
    out: dict[str, Any] = json.loads(done.stdout)
    assert out["writable"] is False  # the read-only view is real
    return out


def test_replay_from_a_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "recording"
    folder.mkdir()
    db = folder / "responses.sqlite"
    texts = record(db)
    before = sorted(p.name for p in folder.iterdir())
    assert before == ["responses.sqlite"]  # closed cleanly: no -wal, no -shm
    out = replay(folder, db, folder / "probe")
    assert out == {"writable": False, "texts": texts}
    assert sorted(p.name for p in folder.iterdir()) == before


def test_replay_of_a_read_only_file_in_a_writable_folder(tmp_path: Path) -> None:
    db = tmp_path / "responses.sqlite"
    texts = record(db)
    assert replay(db, db, db) == {"writable": False, "texts": texts}


def test_read_write_in_a_read_only_folder_says_so(tmp_path: Path) -> None:
    folder = tmp_path / "recording"
    folder.mkdir()
    db = folder / "responses.sqlite"
    record(db)
    out = replay(folder, db, folder / "probe", mode="read-write")
    assert out["error"].startswith(f"CacheError: response cache {str(db)!r}: cannot write it")
    assert "mode='replay'" in out["error"]


def test_unclosed_recording_in_a_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "recording"
    folder.mkdir()
    db = folder / "responses.sqlite"
    texts = record(db, close=False)
    assert (folder / "responses.sqlite-wal").stat().st_size > 0
    # With its -shm index beside it, SQLite reads the -wal rows without writing.
    assert replay(folder, db, folder / "probe") == {"writable": False, "texts": texts}
    # Without it they are out of reach: refused, rather than replayed without them.
    (folder / "responses.sqlite-shm").unlink()
    out = replay(folder, db, folder / "probe")
    assert out["error"].startswith(f"CacheError: response cache {str(db)!r}: cannot replay it")
    assert "responses.sqlite-wal" in out["error"]


@pytest.mark.parametrize("mode", ["read-write", "replay"])
def test_a_folder_or_a_missing_folder_is_named(tmp_path: Path, mode: Any) -> None:
    with pytest.raises(IsADirectoryError, match="is a folder") as caught:
        ResponseCache(tmp_path, mode=mode)
    assert repr(str(tmp_path)) in str(caught.value)
    missing = tmp_path / "no-such-folder" / "responses.sqlite"
    with pytest.raises(FileNotFoundError, match="does not exist") as missed:
        ResponseCache(missing, mode=mode)
    assert repr(str(missing.parent)) in str(missed.value)
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("x")
    with pytest.raises(NotADirectoryError, match="not a folder"):
        ResponseCache(not_a_folder / "responses.sqlite", mode=mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


def test_unopenable_file_is_a_cache_error_naming_it(tmp_path: Path) -> None:
    if IS_ROOT:
        pytest.skip("root opens any file: the read-only mount tests cover root")
    db = tmp_path / "responses.sqlite"
    record(db)
    db.chmod(0)
    try:
        with pytest.raises(CacheError, match=r"cannot open it|not a usable") as caught:
            ResponseCache(db, mode="replay")
    finally:
        db.chmod(0o644)
    assert repr(str(db)) in str(caught.value)
