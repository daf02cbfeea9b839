"""Plausibility checks of a submitted response cache: is each cached call one a real
worker could have answered?

Contract. A real pool's entry re-plays from the response cache its submitter ships
(:mod:`conductor_gym.bench.replay`): the replay proves the results follow from the
cache, not that the cache holds what the workers said. A cache is the submitter's
claim, so before the re-play :func:`check_cache` reads every row that answers one of
the pool's real workers (the row's requested model is ``"<backend>/<model>"`` of a
worker; other rows are never re-played and only counted) and checks, with the
**documented estimate** of :data:`CHARS_PER_TOKEN` characters per token (no tokenizer is
downloaded, and none is needed to catch a forged count):

==================  =========================================================================
check               a cached call is implausible when
==================  =========================================================================
request             its ``request`` is not the JSON of a call (model, messages with text
                    contents, ``max_tokens``)
completion tokens   ``completion_tokens`` is above the request's ``max_tokens``, below
                    ``len(text) / MAX_CHARS_PER_TOKEN`` (rounded down) or above the text's
                    UTF-8 bytes plus :data:`SPECIAL_TOKENS` (no tokenizer makes a token
                    of under one byte)
prompt tokens       ``prompt_tokens`` is below the messages' characters /
                    :data:`MAX_CHARS_PER_TOKEN` (rounded down) or above their UTF-8 bytes
                    plus :data:`TEMPLATE_TOKENS` per message and :data:`SPECIAL_TOKENS`
whole cache         all its tokens are outside :data:`TOKEN_FACTOR` times (either way) of
                    the estimate ``characters / CHARS_PER_TOKEN`` over every call
prices              where the pool file's price table priced the call (``hf``, ``vllm``, or
                    a worker with prices: :func:`~conductor_gym.bench.replay.reprices`),
                    ``cost_usd`` is not its tokens at those prices (relative
                    :data:`PRICE_TOLERANCE`); costs from LiteLLM's price map are not
                    checked here (a warning says so)
latency             ``latency_s`` is not finite, under :data:`MIN_LATENCY_S` or over
                    :data:`MAX_LATENCY_S`, or its completion tokens came faster than
                    :data:`MAX_TOKENS_PER_S`
==================  =========================================================================

Every check that finds anything is one problem (:class:`CacheProblem`: its check, how
many calls, the first few keys with what is wrong). At most :data:`MAX_ROWS` rows are
read; a larger cache is itself a problem.
"""

from __future__ import annotations

import contextlib
import json
import math
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "CHARS_PER_TOKEN",
    "MAX_CHARS_PER_TOKEN",
    "MAX_LATENCY_S",
    "MAX_ROWS",
    "MAX_TOKENS_PER_S",
    "MIN_LATENCY_S",
    "PRICE_TOLERANCE",
    "SPECIAL_TOKENS",
    "TEMPLATE_TOKENS",
    "TOKEN_FACTOR",
    "CacheCheck",
    "CacheProblem",
    "CachedCall",
    "cached_calls",
    "check_cache",
    "key_model",
]

CHARS_PER_TOKEN = 4.0
"""The documented estimate: about four characters of text per token (English prose and
code with BPE tokenizers; digits and symbols run shorter)."""

TOKEN_FACTOR = 3.0
"""How far a whole cache's tokens may stray from the estimate, either way."""

MAX_CHARS_PER_TOKEN = 12.0
"""Most characters one cached call may average per token (tokenizers' long tokens are
rare words; a text averages far fewer)."""

SPECIAL_TOKENS = 8
"""Tokens a call may count beyond its text (begin and end markers)."""

TEMPLATE_TOKENS = 16
"""Tokens a chat template may add per message (role markers, separators)."""

PRICE_TOLERANCE = 1e-6
"""Relative tolerance of a cached cost against its tokens at the pool file's prices."""

MIN_LATENCY_S = 1e-3
"""Fastest plausible call: a network round trip and one forward pass take longer."""

MAX_LATENCY_S = 3600.0
"""Slowest plausible call (an hour)."""

MAX_TOKENS_PER_S = 5000.0
"""Fastest plausible generation of one call (the fastest hosted endpoints stream some
hundreds to a few thousand tokens a second)."""

MAX_ROWS = 200_000
"""Most rows read from one cache."""

_MAX_LISTED = 5
_MAX_VALUE_BYTES = 16 * 2**20


def key_model(spec: WorkerSpec) -> str:
    """The model a real worker's cached calls request (``"<backend>/<model>"``, as the
    pool keys a cached real worker)."""
    return f"{spec.backend}/{spec.model_name}"


@dataclass(frozen=True)
class CachedCall:
    """One row of a response cache: the call (``request``, decoded) and its answer."""

    key: str
    request: Mapping[str, Any]
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float

    @property
    def model(self) -> str:
        """The requested model (``""`` when the request names none)."""
        model = self.request.get("model")
        return model if isinstance(model, str) else ""

    def messages(self) -> list[Mapping[str, Any]] | None:
        """The request's messages, or ``None`` when they are not messages with text."""
        messages = self.request.get("messages")
        if not isinstance(messages, list) or not messages:
            return None
        for m in messages:
            if not isinstance(m, Mapping) or not isinstance(m.get("content"), str):
                return None
        return messages


@dataclass(frozen=True)
class CacheProblem:
    """One check that found implausible calls (``message`` says which and why)."""

    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.check}: {self.message}"


@dataclass
class CacheCheck:
    """What :func:`check_cache` found: the calls checked, the rows no worker of the pool
    requests (never re-played), the problems and the warnings."""

    checked: int = 0
    other_rows: int = 0
    problems: list[CacheProblem] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def cached_calls(path: str | Path, *, limit: int = MAX_ROWS) -> Iterator[CachedCall]:
    """The rows of the response cache ``path`` (at most ``limit``), read only. The file
    must hold exactly the cache's schema (checked by opening it as a
    :class:`~conductor_gym.workers.cache.ResponseCache` in replay mode first).

    Raises:
        CacheError: Not a response cache, or a value over 16 MiB.
        OSError: The file cannot be read.
    """
    from conductor_gym.workers.cache import CacheError, ResponseCache
    from conductor_gym.workers.cache_files import connect_read_only

    ResponseCache(path, mode="replay").close()  # the schema check, before any row is read
    with contextlib.closing(connect_read_only(str(path), timeout=5.0)) as conn:
        conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, _MAX_VALUE_BYTES)
        conn.execute("PRAGMA trusted_schema = OFF")
        rows = conn.execute(
            "SELECT key, request, text, prompt_tokens, completion_tokens, cost_usd, latency_s "
            "FROM responses ORDER BY key"
        )
        try:
            for n, row in enumerate(rows):
                if n >= limit:
                    return
                key, request, text, prompt, completion, cost, latency = row
                try:
                    decoded = json.loads(request)
                except (TypeError, ValueError):
                    decoded = None
                yield CachedCall(
                    key=str(key),
                    request=decoded if isinstance(decoded, dict) else {},
                    text=str(text),
                    prompt_tokens=int(prompt),
                    completion_tokens=int(completion),
                    cost_usd=float(cost),
                    latency_s=float(latency),
                )
        except sqlite3.DataError as exc:
            raise CacheError(f"response cache {str(path)!r}: {exc}") from None


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _listing(items: Sequence[str]) -> str:
    shown = "; ".join(items[:_MAX_LISTED])
    more = len(items) - _MAX_LISTED
    return shown + (f"; ... and {more} more" if more > 0 else "")


def _completion_problem(call: CachedCall) -> str | None:
    tokens, text = call.completion_tokens, call.text
    max_tokens = call.request.get("max_tokens")
    low = math.floor(len(text) / MAX_CHARS_PER_TOKEN)
    high = _bytes(text) + SPECIAL_TOKENS
    if isinstance(max_tokens, int) and tokens > max_tokens:
        return f"completion_tokens {tokens} above the request's max_tokens {max_tokens}"
    if not low <= tokens <= high:
        return (
            f"completion_tokens {tokens} for a {len(text)}-character answer (plausible: "
            f"{low}..{high})"
        )
    return None


def _prompt_problem(call: CachedCall, messages: Sequence[Mapping[str, Any]]) -> str | None:
    contents = [str(m["content"]) for m in messages]
    chars = sum(len(c) for c in contents)
    low = math.floor(chars / MAX_CHARS_PER_TOKEN)
    high = sum(_bytes(c) for c in contents) + TEMPLATE_TOKENS * len(contents) + SPECIAL_TOKENS
    if not low <= call.prompt_tokens <= high:
        return (
            f"prompt_tokens {call.prompt_tokens} for {chars} characters in "
            f"{len(contents)} message(s) (plausible: {low}..{high})"
        )
    return None


def _latency_problem(call: CachedCall) -> str | None:
    latency = call.latency_s
    if not math.isfinite(latency) or not MIN_LATENCY_S <= latency <= MAX_LATENCY_S:
        return f"latency_s {latency!r} (plausible: {MIN_LATENCY_S:g}..{MAX_LATENCY_S:g} s)"
    rate = call.completion_tokens / latency
    if rate > MAX_TOKENS_PER_S:
        return (
            f"{call.completion_tokens} tokens in {latency:.4g} s, {rate:,.0f} tokens/s "
            f"(plausible: at most {MAX_TOKENS_PER_S:,.0f})"
        )
    return None


def _price_problem(call: CachedCall, spec: WorkerSpec) -> str | None:
    price_in, price_out = spec.price_in_per_mtok or 0.0, spec.price_out_per_mtok or 0.0
    want = (call.prompt_tokens * price_in + call.completion_tokens * price_out) / 1e6
    have = call.cost_usd
    if math.isfinite(have) and abs(have - want) <= 1e-12 + PRICE_TOLERANCE * abs(want):
        return None
    return (
        f"cost_usd {have!r}, but {call.prompt_tokens} + {call.completion_tokens} tokens at "
        f"the pool file's {price_in:g} / {price_out:g} USD per million give {want:.6g}"
    )


def check_cache(path: str | Path, specs: Sequence[WorkerSpec]) -> CacheCheck:
    """Check every cached call of the pool's real workers (module docstring).

    ``specs``: the run's workers (simulated ones are ignored). Raises as
    :func:`cached_calls` for a file that is not a readable response cache.
    """
    from conductor_gym.bench.replay import reprices

    real = {key_model(s): s for s in specs if s.backend != "simulated"}
    found = CacheCheck()
    bad: dict[str, list[str]] = {
        "request": [],
        "completion tokens": [],
        "prompt tokens": [],
        "prices": [],
        "latency": [],
    }
    chars = tokens = 0
    unchecked_prices = 0
    rows = 0
    for call in cached_calls(path, limit=MAX_ROWS + 1):
        rows += 1
        if rows > MAX_ROWS:
            found.problems.append(
                CacheProblem("cache", f"more than {MAX_ROWS:,} cached calls: not checked")
            )
            return found
        spec = real.get(call.model)
        if spec is None:
            found.other_rows += 1
            continue
        found.checked += 1
        where = f"key {call.key[:12]} ({call.model})"
        messages = call.messages()
        if messages is None or not isinstance(call.request.get("max_tokens"), int):
            bad["request"].append(f"{where}: the request is not a call with text messages")
            continue
        if problem := _completion_problem(call):
            bad["completion tokens"].append(f"{where}: {problem}")
        if problem := _prompt_problem(call, messages):
            bad["prompt tokens"].append(f"{where}: {problem}")
        if reprices(spec):
            if problem := _price_problem(call, spec):
                bad["prices"].append(f"{where}: {problem}")
        else:
            unchecked_prices += 1
        if problem := _latency_problem(call):
            bad["latency"].append(f"{where}: {problem}")
        chars += len(call.text) + sum(len(str(m["content"])) for m in messages)
        tokens += call.prompt_tokens + call.completion_tokens
    for check, items in bad.items():
        if items:
            found.problems.append(
                CacheProblem(
                    check,
                    f"{len(items)} of {found.checked} cached call(s) implausible: "
                    + _listing(items),
                )
            )
    estimate = chars / CHARS_PER_TOKEN
    if found.checked and not estimate / TOKEN_FACTOR <= tokens <= estimate * TOKEN_FACTOR:
        found.problems.append(
            CacheProblem(
                "whole cache",
                f"its {found.checked} call(s) count {tokens:,} tokens for {chars:,} characters "
                f"of messages and answers; the estimate of {CHARS_PER_TOKEN:g} characters per "
                f"token gives {estimate:,.0f}, and the board accepts "
                f"{estimate / TOKEN_FACTOR:,.0f}..{estimate * TOKEN_FACTOR:,.0f}",
            )
        )
    if unchecked_prices:
        found.warnings.append(
            f"the costs of {unchecked_prices} cached call(s) come from LiteLLM's price map "
            "and were not checked here (a pool file with prices makes them checkable)"
        )
    return found
