"""Where a response cache may live, and opening a recorded one for reading only.

:func:`check_cache_path` turns the failures SQLite reports as a bare "unable to open
database file" into errors that name the path: a path that is a folder, a missing
folder, a file to replay that does not exist.

:func:`connect_read_only` opens a recorded cache without writing anything, so a replay
works from a read-only folder or file (a mounted dataset, a read-only share). The file
is opened with SQLite's ``mode=ro``. A cache is recorded in WAL mode, and a WAL database
opened that way still needs its ``-shm`` index, created in the file's folder; when that
fails in a read-only folder, the file is opened as ``immutable`` instead (no locks
and no index: SQLite reads the main file alone). That is exact only when no ``-wal``
file holds rows the main file lacks: a recorder that closed its cache cleanly leaves
none (the last connection checkpoints and removes it). When one does, the open is
refused with a :class:`~conductor_gym.workers.cache.CacheError` saying what to do.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from conductor_gym.errors import ConfigurationError

__all__ = ["check_cache_path", "connect_read_only"]


def check_cache_path(path: str, *, replay: bool) -> None:
    """Raise, naming ``path``, unless a cache can be opened there.

    Raises:
        IsADirectoryError: ``path`` is a folder.
        FileNotFoundError: Its folder does not exist; or, with ``replay``, the file.
        NotADirectoryError: What should be its folder is a file.
    """
    where = f"response cache {path!r}"
    if os.path.isdir(path):
        raise IsADirectoryError(
            f"{where} is a folder; give the path of a cache file in it, e.g. "
            f"{os.path.join(path, 'responses.sqlite')!r}"
        )
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.exists(folder):
        raise FileNotFoundError(f"{where}: its folder {folder!r} does not exist")
    if not os.path.isdir(folder):
        raise NotADirectoryError(f"{where}: {folder!r} is a file, not a folder")
    if replay and not os.path.exists(path):
        raise FileNotFoundError(f"replay: no recorded response cache at {path!r}")


def connect_read_only(path: str, *, timeout: float) -> sqlite3.Connection:
    """A connection to the existing database ``path`` that never writes (module
    docstring); autocommit. ``ConfigurationError`` (the caller words it) when a read-only
    folder keeps the ``-wal`` file's rows out of reach."""
    uri = Path(path).resolve().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=timeout, isolation_level=None)
    try:
        conn.execute("PRAGMA user_version").fetchone()  # the first read opens -shm
    except sqlite3.OperationalError as exc:
        conn.close()
        folder = os.path.dirname(os.path.abspath(path))
        if exc.sqlite_errorname != "SQLITE_CANTOPEN" or os.access(folder, os.W_OK):
            raise
        wal = f"{path}-wal"
        if os.path.exists(wal) and os.path.getsize(wal) > 0:
            raise ConfigurationError(
                f"its folder is read-only and {wal!r} holds rows not yet written into the "
                "file (the recording process did not close the cache); open it once where "
                "the folder is writable, or copy the file together with its -wal file"
            ) from None
        return sqlite3.connect(
            f"{uri}?mode=ro&immutable=1", uri=True, timeout=timeout, isolation_level=None
        )
    return conn
