"""``conductor-gym pools list`` and ``conductor-gym pools check``: the pool presets, and
whether a pool's workers are ready to answer.

Contract.

:func:`list_pools` returns one row per pool preset: the ``*.toml`` files of
:data:`conductor_gym.pool.config.PRESET_DIR` and the names registered in code
(:data:`conductor_gym.pool.pool.POOL_PRESETS`, which take precedence over a file of the same
name, as in :func:`~conductor_gym.pool.pool.make_pool`). Each row has ``name``, ``workers``
(the number of workers ``n``), ``k`` (workers per episode: the file's ``k``, or ``n``
when it sets none), ``backends`` (sorted), ``description`` (the full text; the table
shows its first line, cut to :data:`DESCRIPTION_WIDTH` characters), ``source`` (the
file, or ``"code"``) and ``error`` (``None``, or the first problem of a preset that does
not load). Listing reads the files and builds :class:`~conductor_gym.workers.spec.WorkerSpec`
objects only: no worker is built and no backend is imported.

:func:`load_specs` resolves ``NAME_OR_PATH`` the way ``make_pool`` does (a code preset,
then a ``.toml`` path or a path with a separator, then a preset file) and raises
:class:`~conductor_gym.pool.config.PoolConfigError` for anything invalid or unknown.

Before anything is sent, ``pools check`` prints what goes where (each worker's key
variable -> host, :func:`credential_routes_of`). A pool file that would send a key the
policy of :mod:`conductor_gym.workers.credentials` does not allow (a variable that is
not a provider's API key, or a key bound to another host) is refused, exit 2, with one
line per refused route naming the worker and the field, unless
``--trust-pool-credentials`` is given.

:func:`check_pool` reports one :class:`WorkerCheck` per worker, in configuration order:

1. Credentials: for ``backend = "litellm"``,
   :func:`conductor_gym.workers.litellm.missing_credentials` (no network; it imports
   LiteLLM only for a provider model without ``api_key_env``); other backends need
   none. A worker with missing variables gets status ``"missing-keys"`` and is not
   pinged. A malformed backend option found here is ``"failed"`` (``ValueError``).
2. Ping (unless ``ping=False``): each remaining worker is built on its own with
   ``WorkerPool([spec]).workers`` (the pool's own build path: backend factory, then rate
   limits; no response cache, so no answer is replayed), then every worker is sent, at
   once, ``complete([{"role": "user", "content": "Reply with OK."}], max_tokens=1,
   temperature=0.0)`` under ``asyncio.wait_for(..., timeout_s)``. The pool entry's
   ``params`` are not sent: the ping checks the address, the key and the model name,
   not the generation settings. ``latency_ms`` is measured here with
   ``time.perf_counter`` around that call (failures too); tokens are the completion's.
   A failure is ``"failed"`` with ``error`` (the class of the underlying exception:
   a :class:`~conductor_gym.workers.base.WorkerError`'s ``__cause__`` when it has one),
   ``detail`` (its first line, shortened) and ``transient`` (from the ``WorkerError``;
   ``True`` for a timeout; ``None`` for any other exception, e.g. a backend that fails
   to build or import). LiteLLM is imported before the clock starts, so its import
   time is neither counted as latency nor spent from the timeout.

   Simulated workers answer only once bound to a task (``for_task``); they are pinged
   for real through ``worker.for_task(task)``, with ``task`` the first task of the
   procedural ``"offline"`` source. The ping does not contain that task's question, so
   the simulated answer is its "no question" reply: the check proves the profile, the
   binding and the call path work, and reports the simulator's token counts; the latency
   is the (near zero) time of the call, not the profile's simulated latency.

   Without the ping, a worker that passes step 1 has status ``"not-pinged"``.

``pools check`` exits 0 when no worker is ``"missing-keys"`` or ``"failed"``, 1 otherwise,
and 2 when the pool itself does not load (its problems go to stderr, one per line).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from conductor_gym.cli.command import CommandGroup, Subparsers
from conductor_gym.cli.table import text_table

if TYPE_CHECKING:
    from conductor_gym.workers.base import Worker
    from conductor_gym.workers.credentials import CredentialRoute
    from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "CHECK_COLUMNS",
    "DESCRIPTION_WIDTH",
    "LIST_COLUMNS",
    "PING_MESSAGES",
    "PoolsCommand",
    "WorkerCheck",
    "check_pool",
    "credential_routes_of",
    "format_checks",
    "format_list",
    "list_json",
    "list_pools",
    "load_specs",
]

LIST_COLUMNS = ("name", "workers", "k", "backends", "description")
"""The columns of the ``pools list`` table, in display order."""
CHECK_COLUMNS = ("worker", "backend", "status", "latency_ms", "tokens_in", "tokens_out", "detail")
"""The columns of the ``pools check`` table, in display order."""
DESCRIPTION_WIDTH = 72
"""Most characters of a description shown in the ``pools list`` table."""
DETAIL_WIDTH = 100
"""Most characters of an error message shown in the ``pools check`` table."""
PING_MESSAGES: tuple[Mapping[str, str], ...] = ({"role": "user", "content": "Reply with OK."},)
"""The one-token ping sent to every worker."""

BAD_STATUSES = frozenset({"missing-keys", "failed"})
# missing_credentials lists both for a Gemini model while neither is set; either suffices.
_GEMINI_KEYS = frozenset({"GEMINI_API_KEY", "GOOGLE_API_KEY"})
_ERROR_PREFIX = re.compile(r"(?:litellm\.)?\w*(?:Error|Exception)\s*[:-]\s*")
_OBJECT_REPR = re.compile(r"\S*<[^<>]* object at 0x[0-9a-fA-F]+>")


# ---------------------------------------------------------------- pools list


def _row(
    name: str, specs: Sequence[WorkerSpec], k: int | None, description: str, source: str
) -> dict[str, Any]:
    return {
        "name": name,
        "workers": len(specs),
        "k": len(specs) if k is None else k,
        "backends": sorted({spec.backend for spec in specs}),
        "description": description,
        "source": source,
        "error": None,
    }


def _error_row(name: str, source: str, error: Exception) -> dict[str, Any]:
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    return {
        "name": name,
        "workers": None,
        "k": None,
        "backends": [],
        "description": "",
        "source": source,
        "error": first,
    }


def list_pools() -> list[dict[str, Any]]:
    """One row per pool preset, sorted by name (see the module docstring)."""
    from conductor_gym.pool.config import PRESET_DIR, load_preset, preset_names
    from conductor_gym.pool.pool import POOL_PRESETS

    rows: dict[str, dict[str, Any]] = {}
    for name in preset_names():
        source = str(PRESET_DIR / f"{name}.toml")
        try:
            config = load_preset(name)
        except ValueError as exc:  # PoolConfigError included
            rows[name] = _error_row(name, source, exc)
            continue
        rows[name] = _row(name, config.specs, config.k, config.description, source)
    for name in POOL_PRESETS.names():
        make_specs = POOL_PRESETS.get(name)
        try:
            specs = make_specs()
        except Exception as exc:  # a third-party preset that fails: list it, broken
            rows[name] = _error_row(name, "code", exc)
            continue
        doc = (getattr(make_specs, "__doc__", None) or "").strip()
        rows[name] = _row(name, specs, None, doc, "code")
    return [rows[name] for name in sorted(rows)]


def list_json(rows: Sequence[Mapping[str, Any]]) -> str:
    """``rows`` as an indented JSON list (full descriptions)."""
    return json.dumps(list(rows), indent=2)


def _first_line(text: str, width: int) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= width else line[: width - 3].rstrip() + "..."


def format_list(rows: Sequence[Mapping[str, Any]]) -> str:
    """The ``pools list`` table: a broken preset shows ``error: ...`` as its description."""
    cells = []
    for row in rows:
        description = (
            f"error: {row['error']}" if row.get("error") else str(row.get("description") or "")
        )
        cells.append(
            {
                "name": row["name"],
                "workers": row.get("workers"),
                "k": row.get("k"),
                "backends": ",".join(row.get("backends") or []) or None,
                "description": _first_line(description, DESCRIPTION_WIDTH),
            }
        )
    return _table(LIST_COLUMNS, cells)


# ---------------------------------------------------------------- pools check


@dataclass(frozen=True)
class WorkerCheck:
    """What ``pools check`` found for one worker (see the module docstring).

    ``status`` is ``"ok"``, ``"missing-keys"``, ``"failed"`` or ``"not-pinged"``;
    ``missing`` names the unset environment variables; ``latency_ms`` and the token
    counts are ``None`` when no ping answered (a failed ping still has its latency).
    """

    worker: str
    backend: str
    status: str
    missing: tuple[str, ...] = ()
    latency_ms: float | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    error: str | None = None
    transient: bool | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        """Whether this worker does not fail the check."""
        return self.status not in BAD_STATUSES

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def load_specs(
    name_or_path: str, *, trust_credentials: bool = False
) -> tuple[str, tuple[WorkerSpec, ...]]:
    """The pool's name and its specs, resolved as ``make_pool`` resolves a string, with
    the same credential policy for a file (:mod:`conductor_gym.workers.credentials`).

    Raises:
        PoolConfigError: the file or preset is invalid (one line per problem), a code
            preset raises ``ValueError``, or the name is neither a preset nor a file.
        CredentialPolicyError: without ``trust_credentials``, the file would send a key
            where the policy does not allow (its ``routes`` say what goes where).
    """
    from conductor_gym.pool.config import (
        PoolConfigError,
        load_pool_file,
        load_preset,
        preset_names,
    )
    from conductor_gym.pool.pool import POOL_PRESETS

    if name_or_path in POOL_PRESETS:
        try:
            return name_or_path, tuple(POOL_PRESETS.get(name_or_path)())
        except ValueError as exc:
            raise PoolConfigError([f"{name_or_path}: {exc}"]) from None
    if name_or_path.endswith(".toml") or os.sep in name_or_path:
        config = load_pool_file(name_or_path)
    elif name_or_path in preset_names():
        config = load_preset(name_or_path)
    else:
        known = sorted({*POOL_PRESETS.names(), *preset_names()})
        raise PoolConfigError(
            [f"unknown pool {name_or_path!r}; give a .toml file or one of {known}"]
        )
    from conductor_gym.workers.credentials import check_credentials

    check_credentials(config.specs, trust=trust_credentials, source=name_or_path)
    return config.name, config.specs


def credential_routes_of(specs: Sequence[WorkerSpec]) -> tuple[CredentialRoute, ...]:
    """What each worker of ``specs`` would send where, trusted or not (no check)."""
    from conductor_gym.workers.credentials import check_credentials

    return check_credentials(specs, trust=True)


def _shorten(text: str, width: int = DETAIL_WIDTH) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 3].rstrip() + "..."


def _clean(message: str) -> str:
    """``message`` without LiteLLM's chain of class-name prefixes (``InternalServerError:
    litellm.InternalServerError: Hosted_vllmException - ...``) and object reprs."""
    message = " ".join(_OBJECT_REPR.sub("", message).split())
    while match := _ERROR_PREFIX.match(message):
        message = message[match.end() :]
    return message


def _failure(spec: WorkerSpec, exc: BaseException, latency_ms: float | None) -> WorkerCheck:
    from conductor_gym.workers.base import WorkerError

    transient: bool | None = None
    cause: BaseException = exc
    if isinstance(exc, WorkerError):
        transient = exc.transient
        cause = exc.__cause__ or exc
    elif isinstance(exc, TimeoutError):
        transient = True
    message = _clean(str(exc)) or type(exc).__name__
    kind = {True: "transient", False: "permanent", None: "error"}[transient]
    return WorkerCheck(
        worker=spec.name,
        backend=spec.backend,
        status="failed",
        latency_ms=latency_ms,
        error=type(cause).__name__,
        transient=transient,
        detail=f"{kind} {type(cause).__name__}: {message}",  # whole: --json never cuts
    )


def _credentials(spec: WorkerSpec) -> WorkerCheck | None:
    """A ``missing-keys`` or ``failed`` result, or ``None`` when ready to ping."""
    if spec.backend != "litellm":
        return None
    try:
        from conductor_gym.workers.litellm import missing_credentials

        missing = missing_credentials(spec)
    except Exception as exc:  # malformed backend options, LiteLLM not installed, ...
        return _failure(spec, exc, None)
    if not missing:
        return None
    return WorkerCheck(
        worker=spec.name,
        backend=spec.backend,
        status="missing-keys",
        missing=tuple(missing),
        detail="set " + (" or " if set(missing) == _GEMINI_KEYS else ", ").join(missing),
    )


def _ping_target(worker: Worker) -> tuple[Worker, str]:
    """The worker to call, bound to a procedural task when it needs one."""
    from conductor_gym.tasks import make_task_source

    task = make_task_source("offline")[0]
    bound = worker.for_task(task)
    return (worker, "") if bound is worker else (bound, f"bound to task {task.id}")


IN_PROCESS_BACKENDS = ("hf", "vllm")
"""Backends that load their model at the first call: ``pools check`` makes that call
first and reports its time as loading, so ``latency_ms`` is one answer's."""


async def _ping(spec: WorkerSpec, worker: Worker, timeout_s: float) -> WorkerCheck:
    start = time.perf_counter()
    try:
        target, note = _ping_target(worker)
        if spec.backend in IN_PROCESS_BACKENDS:
            start = time.perf_counter()
            await asyncio.wait_for(
                target.complete(list(PING_MESSAGES), max_tokens=1, temperature=0.0),
                timeout_s,
            )
            loaded = f"model loaded in {(time.perf_counter() - start) * 1000:.0f} ms"
            note = f"{note}; {loaded}" if note else loaded
        start = time.perf_counter()
        completion = await asyncio.wait_for(
            target.complete(list(PING_MESSAGES), max_tokens=1, temperature=0.0),
            timeout_s,
        )
    except TimeoutError:
        latency_ms = (time.perf_counter() - start) * 1000
        error = TimeoutError(f"no answer within {timeout_s:g} s")
        return _failure(spec, error, latency_ms)
    except Exception as exc:
        return _failure(spec, exc, (time.perf_counter() - start) * 1000)
    latency_ms = (time.perf_counter() - start) * 1000
    answer = "answer " + _shorten(repr(completion.text), 24)
    return WorkerCheck(
        worker=spec.name,
        backend=spec.backend,
        status="ok",
        latency_ms=latency_ms,
        tokens_in=completion.prompt_tokens,
        tokens_out=completion.completion_tokens,
        detail="; ".join(part for part in (answer, f"model {completion.model}", note) if part),
    )


def _prepare_backends(specs: Sequence[WorkerSpec]) -> None:
    """Import LiteLLM before any clock starts (its import takes seconds); a failure
    here is left for the ping to report per worker."""
    if any(spec.backend == "litellm" for spec in specs):
        from conductor_gym.workers import litellm as litellm_worker

        with contextlib.suppress(ImportError):
            litellm_worker._litellm()


async def _ping_all(specs: Sequence[WorkerSpec], timeout_s: float) -> dict[str, WorkerCheck]:
    from conductor_gym.pool.pool import WorkerPool

    _prepare_backends(specs)
    results: dict[str, WorkerCheck] = {}
    jobs: list[tuple[WorkerSpec, Worker]] = []
    for spec in specs:
        try:
            jobs.append((spec, WorkerPool([spec]).workers[0].worker))
        except Exception as exc:  # the backend is not installed, bad options, ...
            results[spec.name] = _failure(spec, exc, None)
    checks = await asyncio.gather(*(_ping(spec, worker, timeout_s) for spec, worker in jobs))
    results.update((check.worker, check) for check in checks)
    return results


def check_pool(
    specs: Sequence[WorkerSpec], *, timeout_s: float = 30.0, ping: bool = True
) -> list[WorkerCheck]:
    """Check every worker of ``specs`` (module docstring); results in ``specs`` order."""
    if not (timeout_s > 0):
        raise ValueError(f"timeout_s must be > 0, got {timeout_s!r}")
    results: dict[str, WorkerCheck] = {}
    ready: list[WorkerSpec] = []
    for spec in specs:
        problem = _credentials(spec)
        if problem is not None:
            results[spec.name] = problem
        else:
            ready.append(spec)
    if ping:
        results.update(asyncio.run(_ping_all(ready, timeout_s)))
    else:
        for spec in ready:
            results[spec.name] = WorkerCheck(spec.name, spec.backend, "not-pinged")
    return [results[spec.name] for spec in specs]


def format_checks(checks: Sequence[WorkerCheck]) -> str:
    """The ``pools check`` table (latency in whole milliseconds)."""
    cells = []
    for check in checks:
        row = check.to_dict()
        row["latency_ms"] = None if check.latency_ms is None else f"{check.latency_ms:.0f}"
        row["detail"] = _shorten(check.detail)
        cells.append(row)
    return _table(CHECK_COLUMNS, cells)


# ---------------------------------------------------------------- shared


def _cell(value: Any) -> str:
    return "-" if value is None or value == "" else str(value)


def _table(columns: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> str:
    """``rows`` as a left-aligned text table with a header (``None`` shown as ``-``)."""
    cells = [[c.replace("_", " ") for c in columns]]
    cells += [[_cell(row.get(c)) for c in columns] for row in rows]
    return text_table(cells[0], cells[1:])


# ---------------------------------------------------------------- the command


class PoolsCommand(CommandGroup):
    """``conductor-gym pools list [--json]`` and ``pools check NAME_OR_PATH`` (module
    docstring)."""

    name = "pools"
    help = "worker pools"

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        pools = self.add_parser(subparsers)
        commands = pools.add_subparsers(dest="pools_command", required=True)
        listing = commands.add_parser(
            "list", help="every pool preset: workers, k, backends, description"
        )
        listing.add_argument("--json", action="store_true", help="print a JSON list")
        listing.set_defaults(handler=_list)
        check = commands.add_parser(
            "check", help="credentials and a one-token ping for every worker of a pool"
        )
        check.add_argument("pool", metavar="NAME_OR_PATH", help="a preset or a .toml file")
        check.add_argument(
            "--timeout", type=_positive_seconds, default=30.0, help="seconds per ping (default 30)"
        )
        check.add_argument(
            "--skip-ping", action="store_true", help="check credentials only; build nothing"
        )
        check.add_argument("--json", action="store_true", help="print a JSON list")
        check.add_argument(
            "--trust-pool-credentials", action="store_true",
            help="send the keys the pool file names wherever it says (default: only a "
            "provider's API-key variables, to its hosts or to loopback)",
        )  # fmt: skip
        check.set_defaults(handler=_check)
        return pools


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return value


def _list(args: argparse.Namespace) -> int:
    rows = list_pools()
    print(list_json(rows) if args.json else format_list(rows))
    return 0


def _check(args: argparse.Namespace) -> int:
    from conductor_gym.pool.config import PoolConfigError
    from conductor_gym.workers.credentials import CredentialPolicyError, format_routes

    try:
        name, specs = load_specs(args.pool, trust_credentials=args.trust_pool_credentials)
    except PoolConfigError as exc:
        for line in exc.errors:
            print(line, file=sys.stderr)
        return 2
    except CredentialPolicyError as exc:
        print(format_routes(exc.routes))
        for line in exc.problems:
            print(line, file=sys.stderr)
        return 2
    ping = "no ping" if args.skip_ping else f"ping timeout {args.timeout:g} s"
    workers = f"{len(specs)} worker" + ("" if len(specs) == 1 else "s")
    say = sys.stderr if args.json else sys.stdout  # --json: stdout holds the JSON only
    print(f"pool {name!r}: {workers}, {ping}", file=say)
    # before anything is sent
    print(format_routes(credential_routes_of(specs)), file=say, flush=True)
    checks = check_pool(specs, timeout_s=args.timeout, ping=not args.skip_ping)
    print(list_json([c.to_dict() for c in checks]) if args.json else format_checks(checks))
    return 0 if all(check.ok for check in checks) else 1
