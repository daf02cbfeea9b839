"""A persistent response cache for workers (SQLite): record a run, replay it exactly.

:class:`CachedWorker` wraps any :class:`~conductor_gym.workers.base.Worker`. Each call is
looked up by :func:`cache_key`, a SHA-256 of the canonical JSON of what determines the
answer: the model, the full message list, ``max_tokens``, ``temperature``, the extra
``params`` and the *sample*:

* a greedy call (``temperature == 0``) has sample ``None``: calls that differ only in
  their seed share one row, since greedy decoding ignores the seed;
* a sampled call (``temperature > 0``) has the call's ``seed`` as its sample (the env
  derives it from the episode seed and the step), so a replay returns the very sample
  that was recorded while a training run with fresh seeds still sees independent ones;
* a sampled call without a seed asks for a fresh, unrepeatable sample: it is never
  cached (``"read-write"`` passes it through to the worker; ``"replay"`` refuses it,
  since no recorded row can stand for a sample that was never identified).

Modes (:data:`CacheMode`): ``"off"`` never opens or creates the file; ``"read-write"``
answers hits from the cache and calls the worker on a miss, storing the answer;
``"replay"`` answers only from the cache and raises :class:`ReplayMiss` on a miss, so a
recorded run replays with no backend reachable. Replay only reads: it works from a
read-only folder or file (:mod:`conductor_gym.workers.cache_files`).

A recording may come from a stranger (a leaderboard submission ships one), so a file is
a response cache only when it holds exactly the cache's schema: the one plain table
``responses`` with the cache's columns, declared as this module declares it, and nothing
else (no view, trigger, index or other table; no generated column); any other file is
refused with a :class:`CacheError` saying what it holds, before any row is read. Replay
reads under two bounds: every value read is at most ``max_value_bytes`` long
(:data:`MAX_VALUE_BYTES`, SQLite's own length limit) and every statement runs at most
``max_query_steps`` SQLite virtual-machine steps (:data:`MAX_QUERY_STEPS`, counted by a
progress handler); a read over either bound raises :class:`CacheError`.

Several processes may write one cache file at once (WAL journal, a busy timeout, one
short transaction per row, ``INSERT OR IGNORE`` so the first answer for a key wins). All
SQLite work of a :class:`ResponseCache` runs on one dedicated thread that owns the
connection; coroutines await it through ``loop.run_in_executor``, so no event loop ever
blocks on the disk, and any number of event loops may use the cache over its lifetime.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, get_args

from conductor_gym.errors import ConfigurationError
from conductor_gym.workers.base import Completion, Message, Worker, WorkerError
from conductor_gym.workers.cache_files import check_cache_path, connect_read_only

if TYPE_CHECKING:
    from conductor_gym.tasks.base import Task

__all__ = [
    "SCHEMA_VERSION",
    "CacheError",
    "CacheMode",
    "CachedWorker",
    "ReplayMiss",
    "ResponseCache",
    "cache_key",
    "cache_request",
    "is_cacheable",
]

CacheMode = Literal["off", "read-write", "replay"]

SCHEMA_VERSION = 1
"""Stored in ``PRAGMA user_version``; a file with another version is refused."""

BUSY_TIMEOUT_S = 30.0

MAX_VALUE_BYTES = 16 * 2**20
"""Longest text a replay reads from one column (16 MiB; a recorded request with every
earlier step in view is some tens of KiB)."""

MAX_QUERY_STEPS = 10_000_000
"""Most SQLite virtual-machine steps one replay statement may run (a lookup by key takes
a few hundred; ten million take well under a second)."""

_SCHEMA = """
CREATE TABLE responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd REAL NOT NULL,
    latency_s REAL NOT NULL,
    created_at TEXT NOT NULL
) WITHOUT ROWID
"""
_INSERT = """INSERT OR IGNORE INTO responses
    (key, model, request, text, prompt_tokens, completion_tokens, cost_usd, latency_s, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"""
_SELECT = (
    "SELECT text, prompt_tokens, completion_tokens, cost_usd, latency_s, model "
    "FROM responses WHERE key = ?"
)

_TABLE = ("table", "responses")

_T = TypeVar("_T")


@functools.cache
def _expected_columns() -> list[tuple[Any, ...]]:
    """``PRAGMA table_xinfo`` of the cache's table, as SQLite reports it here."""
    with contextlib.closing(sqlite3.connect(":memory:")) as conn:
        conn.execute(_SCHEMA)
        return [tuple(row) for row in conn.execute("PRAGMA table_xinfo(responses)")]


class CacheError(ConfigurationError, RuntimeError):
    """The cache file cannot be used: not a SQLite database, not a response cache, a
    schema version this code does not read, not writable (``"read-write"``), or (in
    replay) no recorded cache at all."""


class ReplayMiss(WorkerError):
    """A replayed run made a call the recorded run did not make (always permanent)."""

    def __init__(self, message: str, *, worker: str | None = None, key: str | None = None) -> None:
        super().__init__(message, transient=False, worker=worker)
        self.key = key


# -- keys ---------------------------------------------------------------------------------


def _canonical(value: Any) -> str:
    # ASCII escapes keep the text encodable whatever it holds (lone surrogates included).
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


def is_cacheable(temperature: float, seed: int | None) -> bool:
    """Whether a call can be cached: greedy, or sampled with a seed naming the sample."""
    return temperature <= 0 or seed is not None


def cache_request(
    model: str,
    messages: Sequence[Message],
    *,
    max_tokens: int,
    temperature: float,
    seed: int | None,
    params: Mapping[str, Any],
) -> dict[str, Any]:
    """The JSON-ready description of a call that its cache key hashes.

    Keys: ``model``, ``messages``, ``max_tokens``, ``temperature``, ``params`` and
    ``sample`` (``seed`` when ``temperature > 0``, else ``None``).

    Raises:
        ValueError: A sampled call without a seed (not cacheable, see the module).
        TypeError: A parameter or the messages are not JSON-serialisable (the message
            names the parameter).
    """
    if not is_cacheable(temperature, seed):
        raise ValueError(
            f"a sampled call (temperature={temperature}) without a seed is not cacheable"
        )
    for name, value in params.items():
        try:
            _canonical(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"cache key: param {name!r}={value!r} is not JSON-serialisable ({exc}); "
                "cached calls take only JSON values as params"
            ) from None
    request = {
        "model": str(model),
        "messages": [dict(m) for m in messages],
        "max_tokens": int(max_tokens),
        # 0 and 0.0 are one temperature: never let int/float spelling split a key.
        "temperature": float(temperature),
        "params": dict(params),
        "sample": seed if temperature > 0 else None,
    }
    try:
        _canonical(request["messages"])
    except (TypeError, ValueError) as exc:
        raise TypeError(f"cache key: messages are not JSON-serialisable ({exc})") from None
    return request


def _request_key(request: Mapping[str, Any]) -> str:
    return hashlib.sha256(_canonical(request).encode("ascii")).hexdigest()


def cache_key(
    model: str,
    messages: Sequence[Message],
    *,
    max_tokens: int,
    temperature: float,
    seed: int | None,
    params: Mapping[str, Any],
) -> str:
    """SHA-256 (hex) of the canonical JSON of :func:`cache_request`'s description
    (sorted keys, no whitespace); same errors."""
    return _request_key(
        cache_request(
            model,
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            params=params,
        )
    )


# -- the store ----------------------------------------------------------------------------


class ResponseCache:
    """A response cache in the SQLite file ``path`` (created in ``"read-write"`` mode).

    Each row holds exactly: ``key``; ``model`` (the model the *backend reported* in its
    :class:`Completion`); ``request`` (the canonical JSON of :func:`cache_request`,
    which names the requested model); the answer's ``text``, ``prompt_tokens``,
    ``completion_tokens``, ``cost_usd`` and ``latency_s`` (of the original call); and
    ``created_at`` (UTC, ISO 8601). Nothing else is stored: the cache sees only calls
    and answers, never a backend's options or credentials.

    Args:
        path: The database file.
        mode: ``"off"`` (never touches the file), ``"read-write"`` or ``"replay"``
            (the file must exist and is only read: a read-only file or folder will do,
            see :mod:`conductor_gym.workers.cache_files`).
        max_value_bytes: In replay, the longest value read (module docstring).
        max_query_steps: In replay, the most SQLite steps of one statement.

    Raises:
        ConfigurationError: An unknown ``mode``.
        IsADirectoryError: ``path`` is a folder.
        FileNotFoundError: The folder of ``path`` does not exist, or ``"replay"`` of a
            file that does not exist.
        NotADirectoryError: What should be the folder of ``path`` is a file.
        CacheError: The file is not a usable response cache (see :class:`CacheError`;
            a file with anything but the cache's schema among them), or ``"read-write"``
            cannot write it (a read-only file or folder). In replay, :meth:`get` raises
            it too for a read over a bound.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: CacheMode = "read-write",
        *,
        max_value_bytes: int = MAX_VALUE_BYTES,
        max_query_steps: int = MAX_QUERY_STEPS,
    ) -> None:
        if mode not in get_args(CacheMode):
            raise ConfigurationError(
                f"mode: unknown cache mode {mode!r}; choose one of {get_args(CacheMode)}"
            )
        bounds = {"max_value_bytes": max_value_bytes, "max_query_steps": max_query_steps}
        for name, bound in bounds.items():
            if isinstance(bound, bool) or not isinstance(bound, int) or bound < 1:
                raise ConfigurationError(f"{name} must be an int >= 1, got {bound!r}")
        self.path = os.fspath(path)
        self.mode: CacheMode = mode
        self._max_value_bytes = max_value_bytes
        self._max_query_steps = max_query_steps
        self._steps = 0  # progress-handler calls of the running statement (replay)
        self._stats = {"hits": 0, "misses": 0, "writes": 0, "uncached": 0}
        self._stats_lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None  # used only on the executor's thread
        self._executor: ThreadPoolExecutor | None = None
        if mode == "off":
            return
        check_cache_path(self.path, replay=mode == "replay")
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="response-cache")
        try:
            self._executor.submit(self._open).result()
        except BaseException:
            self.close()
            raise

    # -- public API -------------------------------------------------------------------

    async def get(self, key: str) -> Completion | None:
        """The stored answer for ``key`` (``cached=True``, original accounting), or
        ``None``. Always ``None`` in mode ``"off"``."""
        if self.mode == "off":
            return None
        return await self._run(self._get, key)

    async def put(self, request: Mapping[str, Any], completion: Completion) -> str:
        """Store ``completion`` as the answer to ``request`` (a :func:`cache_request`
        result) unless the key already has one; return the key.

        The row is committed when this returns (its own transaction). Mode ``"off"``
        stores nothing; ``"replay"`` raises ``RuntimeError``."""
        key = _request_key(request)
        if self.mode == "off":
            return key
        if self.mode == "replay":
            raise RuntimeError(f"ResponseCache({self.path!r}) is in replay mode: it never writes")
        row = (
            key,
            completion.model,
            _canonical(dict(request)),
            completion.text,
            int(completion.prompt_tokens),
            int(completion.completion_tokens),
            float(completion.cost_usd),
            float(completion.latency_s),
            datetime.now(UTC).isoformat(timespec="seconds"),
        )
        await self._run(self._put, row)
        return key

    def stats(self) -> dict[str, int]:
        """This process's ``hits``, ``misses``, ``writes`` (rows this process inserted)
        and ``uncached`` (sampled calls without a seed, passed through)."""
        with self._stats_lock:
            return dict(self._stats)

    def close(self) -> None:
        """Finish pending work, close the connection and stop the thread (idempotent)."""
        executor, self._executor = self._executor, None
        if executor is None:
            return
        executor.submit(self._close_connection)
        executor.shutdown(wait=True)

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResponseCache({self.path!r}, mode={self.mode!r})"

    # -- internals: the methods passed to _run run on the executor's thread ------------

    def _count(self, name: str) -> None:
        with self._stats_lock:
            self._stats[name] += 1

    async def _run(self, fn: Callable[..., _T], *args: Any) -> _T:
        executor = self._executor
        if executor is None:
            raise RuntimeError(f"ResponseCache({self.path!r}) is closed")
        return await asyncio.get_running_loop().run_in_executor(executor, fn, *args)

    def _open(self) -> None:
        where = f"response cache {self.path!r}"
        try:
            if self.mode == "replay":
                conn = connect_read_only(self.path, timeout=BUSY_TIMEOUT_S)
            else:
                # Autocommit (isolation_level=None): each INSERT is its own transaction.
                conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except ValueError as exc:
            raise CacheError(f"{where}: cannot replay it: {exc}") from None
        except sqlite3.Error as exc:
            raise CacheError(f"{where}: cannot open it ({exc})") from exc
        self._conn = conn
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            if self.mode == "replay":
                self._bound(conn)
                version = self._one("PRAGMA user_version")[0]
                self._check_version(conn, version, where, creating=False)
                self._check_schema(where)
            else:
                self._writable(conn, where)
                # IMMEDIATE: two processes creating one new file must not both create it.
                conn.execute("BEGIN IMMEDIATE")
                try:
                    version = conn.execute("PRAGMA user_version").fetchone()[0]
                    if self._check_version(conn, version, where, creating=True):
                        conn.execute(_SCHEMA)
                        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    else:
                        self._check_schema(where)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
        except sqlite3.DatabaseError as exc:
            self._close_connection()
            if self.mode != "replay" and isinstance(exc, sqlite3.OperationalError):
                hint = "a recording can be replayed read-only with mode='replay'"
                raise CacheError(f"{where}: cannot write it ({exc}); {hint}") from exc
            raise CacheError(f"{where}: not a usable SQLite database ({exc})") from exc
        except BaseException:
            self._close_connection()
            raise

    @staticmethod
    def _writable(conn: sqlite3.Connection, where: str) -> None:
        journal = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(journal).lower() != "wal":
            raise CacheError(f"{where}: cannot use WAL journaling (got {journal!r})")
        # With WAL, NORMAL syncs only at checkpoints: a committed row is in the WAL
        # file (the OS has it) when the commit returns, so a process killed with -9
        # loses nothing committed and never corrupts the file. Only an OS crash or
        # power loss may drop the last commits, which a cache can afford.
        conn.execute("PRAGMA synchronous = NORMAL")

    @staticmethod
    def _check_version(
        conn: sqlite3.Connection, version: int, where: str, *, creating: bool
    ) -> bool:
        """Raise unless the file holds this schema; ``True`` when it is new and empty."""
        if version == SCHEMA_VERSION:
            return False
        if version != 0:
            raise CacheError(
                f"{where}: schema version {version}, but this conductor-gym reads version "
                f"{SCHEMA_VERSION}; use a new cache file (or the matching conductor-gym)"
            )
        tables = conn.execute("SELECT name FROM sqlite_master").fetchall()
        if tables:
            raise CacheError(
                f"{where}: an SQLite database that is not a response cache "
                f"(it has {sorted(t[0] for t in tables)} and no cache schema version)"
            )
        if not creating:
            raise CacheError(f"{where}: empty file, not a recorded response cache")
        return True

    def _bound(self, conn: sqlite3.Connection) -> None:
        """Put the replay bounds (module docstring) on ``conn``."""
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, self._max_value_bytes)
        # Functions in a schema run only when SQLite deems them innocuous; the schema
        # check refuses such files anyway, this keeps them inert until it has.
        conn.execute("PRAGMA trusted_schema = OFF")
        every = min(1000, self._max_query_steps)
        allowed = self._max_query_steps // every

        def progress() -> int:
            self._steps += 1
            return 1 if self._steps > allowed else 0

        conn.set_progress_handler(progress, every)

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> Any:
        """The first row of ``sql``, under the replay bounds when they are set."""
        rows = self._all(sql, args, limit=1)
        return rows[0] if rows else None

    def _all(self, sql: str, args: tuple[Any, ...] = (), *, limit: int = 64) -> list[Any]:
        """At most ``limit`` rows of ``sql``; a read over a replay bound is a CacheError."""
        assert self._conn is not None
        self._steps = 0
        try:
            return self._conn.execute(sql, args).fetchmany(limit)
        except sqlite3.OperationalError as exc:
            if exc.sqlite_errorname != "SQLITE_INTERRUPT":
                raise
            raise CacheError(
                f"response cache {self.path!r}: a read ran over {self._max_query_steps:,} "
                "SQLite steps and was stopped"
            ) from None
        except sqlite3.DataError as exc:
            if exc.sqlite_errorname != "SQLITE_TOOBIG":
                raise
            raise CacheError(
                f"response cache {self.path!r}: a value over {self._max_value_bytes:,} bytes "
                "was refused"
            ) from None

    def _check_schema(self, where: str) -> None:
        """Raise unless the file holds exactly the cache's one table (module docstring)."""
        objects = self._all("SELECT type, name, sql FROM sqlite_master ORDER BY type, name")
        others = [f"{kind} {name!r}" for kind, name, _ in objects if (kind, name) != _TABLE]
        if others or not objects:
            held = ", ".join(others[:5]) + (", ..." if len(others) > 5 else "")
            raise CacheError(
                f"{where}: not a plain response cache: it holds {held or 'no table'}; a "
                "response cache holds the one table 'responses' and nothing else"
            )
        columns = [tuple(row) for row in self._all("PRAGMA table_xinfo(responses)")]
        if columns != _expected_columns():
            generated = [row[1] for row in columns if row[6]]
            what = (
                f"generated column(s) {generated}"
                if generated
                else f"columns {[f'{row[1]} {row[2]}' for row in columns]}"
            )
            raise CacheError(
                f"{where}: table 'responses' has {what}, not the cache's columns "
                f"{[f'{row[1]} {row[2]}' for row in _expected_columns()]}"
            )
        if " ".join(str(objects[0][2]).split()) != " ".join(_SCHEMA.split()):
            raise CacheError(
                f"{where}: table 'responses' is not declared as a response cache declares "
                "it (constraints or options differ)"
            )

    def _get(self, key: str) -> Completion | None:
        assert self._conn is not None
        row = self._one(_SELECT, (key,))
        self._count("hits" if row is not None else "misses")
        if row is None:
            return None
        text, prompt_tokens, completion_tokens, cost_usd, latency_s, model = row
        return Completion(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=cost_usd,
            latency_s=latency_s,
            model=model,
            cached=True,
        )

    def _put(self, row: tuple[Any, ...]) -> None:
        assert self._conn is not None
        if self._conn.execute(_INSERT, row).rowcount == 1:
            self._count("writes")

    def _close_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


# -- the worker ---------------------------------------------------------------------------


class CachedWorker(Worker):
    """``worker`` behind ``cache``: same ``name``, same protocol.

    A hit returns the stored :class:`Completion` with ``cached=True`` and the original
    call's text, tokens, cost and latency (a replayed trace equals the recorded one but
    for that flag). A miss calls ``worker`` and stores its answer (``"read-write"``) or
    raises :class:`ReplayMiss` (``"replay"``). :class:`WorkerError`\\ s of ``worker``
    propagate unchanged and are never stored. Mode ``"off"`` always calls ``worker``.

    ``model`` is the model identifier that enters the key: workers that share it (and
    the rest of a call) share rows, so it must name what really answers (e.g. the
    backend's model id, not a pool label).

    When ``worker`` binds tasks (has ``for_task``, as simulated workers do), so does
    this one: ``for_task(task)`` returns a :class:`CachedWorker` around the bound worker,
    with the same cache (see :func:`conductor_gym.core.episode.bind_task`). Otherwise it has
    no ``for_task`` and is used as it is, like the worker it wraps.
    """

    def __init__(self, worker: Worker, cache: ResponseCache, model: str) -> None:
        self.name = worker.name
        self.worker = worker
        self.cache = cache
        self.model = model

    def for_task(self, task: Task) -> Worker:
        bound = self.worker.for_task(task)
        return self if bound is self.worker else CachedWorker(bound, self.cache, self.model)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        cache = self.cache

        async def call() -> Completion:
            return await self.worker.complete(
                messages, max_tokens=max_tokens, temperature=temperature, seed=seed, **params
            )

        if cache.mode == "off":
            return await call()
        if not is_cacheable(temperature, seed):
            if cache.mode == "replay":
                raise ReplayMiss(
                    f"worker {self.name!r}: a sampled call (temperature={temperature}) "
                    "without a seed cannot be replayed: no recorded row identifies a fresh "
                    "sample; pass a seed (the env always does)",
                    worker=self.name,
                )
            cache._count("uncached")
            return await call()
        request = cache_request(
            self.model,
            messages,
            max_tokens=max_tokens,
            temperature=temperature,
            seed=seed,
            params=params,
        )
        key = _request_key(request)
        hit = await cache.get(key)
        if hit is not None:
            return hit
        if cache.mode == "replay":
            raise ReplayMiss(
                f"worker {self.name!r}: the recorded run has no such call "
                f"(cache key {key[:12]}) in {cache.path!r}",
                worker=self.name,
                key=key,
            )
        completion = await call()
        # Anything but a well-formed Completion is left for run_plan to reject, unstored.
        if isinstance(completion, Completion) and isinstance(completion.text, str):
            await cache.put(request, dataclasses.replace(completion, cached=False))
        return completion

    def __repr__(self) -> str:
        # Not the wrapped worker's repr: it may show client settings.
        return f"CachedWorker({self.name!r}, {self.cache!r}, model={self.model!r})"
