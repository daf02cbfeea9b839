"""The spot check of a submitted response cache: re-ask the live endpoints a random sample
of the cached calls and report how often they agree.

Contract. :func:`spot_check` takes a submission's results, its response cache and a pool
file (or preset) naming the live endpoints of the run's workers (the results record no
addresses or keys; the pool's workers, by name, backend and model, must be the ones the
results describe). It draws ``sample`` of the cached calls of those workers **that the
episodes use** (the rows their re-play from the cache looks up:
:func:`~conductor_gym.board.cache_use.episode_calls`; any other row is padding, counted
in :attr:`SpotCheck.padding` and never drawn) with ``random.Random(seed).sample`` over
their keys sorted. The seed is drawn from the operating system's randomness
(:func:`secrets.randbits`) unless given, so no submitter can know in advance which rows
will be checked; it is recorded in :attr:`SpotCheck.seed` and printed, so a check can be
re-run with ``--seed``. Each drawn request is sent again exactly as
recorded (messages, ``max_tokens``, ``temperature``, params and the sample's seed) to
its worker, built from the pool's spec with no cache, and compares:

* ``exact``: the live text is the cached text (whitespace at the ends aside);
* ``same answer``: else both give the same final answer (:func:`final_answer`: the last
  ``\\boxed{...}``, else what follows the last ``answer:``, else the last number);
* ``differs``: neither; ``failed``: the live call raised a worker error (not counted
  in the agreement).

:attr:`SpotCheck.agreement` is the share of answered calls that agree (``exact`` or
``same answer``). A genuine cache recorded at temperature 0 (or with seeds, on a server
that honours them) agrees on (nearly) every call; a fabricated one does not. The command
is ``conductor-gym leaderboard spot-check``.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from conductor_gym.bench.results import Results
from conductor_gym.board.plausibility import CachedCall, cached_calls, key_model
from conductor_gym.errors import ConfigurationError
from conductor_gym.workers.base import Worker, WorkerError
from conductor_gym.workers.spec import WorkerSpec

__all__ = ["SEED_BITS", "Agreement", "SpotCall", "SpotCheck", "final_answer", "spot_check"]

SEED_BITS = 63
"""Bits of a spot check's drawn seed (:func:`secrets.randbits`)."""

Agreement = Literal["exact", "same answer", "differs", "failed"]

_BOXED = re.compile(r"\\boxed\{([^{}]*(?:\{[^{}]*\}[^{}]*)*)\}")
_ANSWER = re.compile(r"answer\s*(?:is)?\s*[:=]\s*(.+)", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def final_answer(text: str) -> str | None:
    """The final answer a text states (module docstring), stripped; ``None`` if none."""
    if boxed := _BOXED.findall(text):
        return str(boxed[-1]).strip()
    if said := _ANSWER.findall(text):
        return str(said[-1]).strip().rstrip(".").strip()
    if numbers := _NUMBER.findall(text):
        return str(numbers[-1])
    return None


@dataclass(frozen=True)
class SpotCall:
    """One re-asked call: its key, worker, agreement and the two texts (cut to 200
    characters) and token counts."""

    key: str
    worker: str
    agreement: Agreement
    cached: str
    live: str
    cached_tokens: int
    live_tokens: int | None

    def __str__(self) -> str:
        tokens = f"tokens cached {self.cached_tokens}, live {self.live_tokens}"
        return (
            f"{self.key[:12]} {self.worker}: {self.agreement} ({tokens}); cached "
            f"{self.cached[:60]!r}, live {self.live[:60]!r}"
        )


@dataclass
class SpotCheck:
    """What :func:`spot_check` found: ``rows`` the cached calls the episodes use (the
    ones drawn from), ``padding`` the cached rows of the run's workers they do not use,
    ``seed`` the seed of the draw."""

    rows: int
    seed: int
    padding: int = 0
    calls: list[SpotCall] = field(default_factory=list)

    @property
    def answered(self) -> list[SpotCall]:
        """The calls the live endpoint answered."""
        return [c for c in self.calls if c.agreement != "failed"]

    @property
    def agreement(self) -> float:
        """Share of the answered calls that agree (0.0 when none was answered)."""
        answered = self.answered
        agree = sum(c.agreement in ("exact", "same answer") for c in answered)
        return agree / len(answered) if answered else 0.0

    def summary(self) -> str:
        """One line: sampled, answered, agreeing, exact, the agreement share, the seed
        and the padding rows."""
        exact = sum(c.agreement == "exact" for c in self.calls)
        same = sum(c.agreement == "same answer" for c in self.calls)
        failed = len(self.calls) - len(self.answered)
        padding = (
            f"; {self.padding} cached row(s) no episode uses (padding, never drawn)"
            if self.padding
            else ""
        )
        return (
            f"spot check: {len(self.calls)} of {self.rows} cached call(s) re-asked, "
            f"{failed} failed; {exact} exact, {same} same answer: agreement "
            f"{100 * self.agreement:.1f} % (seed {self.seed}){padding}"
        )


async def _ask(worker: Worker, call: CachedCall) -> tuple[str, int] | WorkerError:
    request = call.request
    params = request.get("params")
    temperature = request.get("temperature", 0.0)
    sample = request.get("sample")
    try:
        answer = await worker.complete(
            list(call.messages() or ()),
            max_tokens=int(request["max_tokens"]),
            temperature=float(temperature) if isinstance(temperature, int | float) else 0.0,
            seed=sample if isinstance(sample, int) else None,
            **(params if isinstance(params, dict) else {}),
        )
    except WorkerError as exc:
        return exc
    return answer.text, answer.completion_tokens


def _compare(cached: str, live: str) -> Agreement:
    if cached.strip() == live.strip():
        return "exact"
    want, have = final_answer(cached), final_answer(live)
    return "same answer" if want is not None and want == have else "differs"


def spot_check(
    results: Results,
    cache: str | os.PathLike[str],
    pool: str | os.PathLike[str],
    *,
    sample: int = 20,
    seed: int | None = None,
    trust_credentials: bool = False,
) -> SpotCheck:
    """Re-ask ``sample`` of the cached calls the episodes use, drawn with ``seed`` (by
    default a fresh one from :func:`secrets.randbits`; module docstring);
    ``trust_credentials`` as for :func:`~conductor_gym.pool.pool.make_pool` (a pool file
    that sends a non-provider key variable to its address).

    Raises:
        ConfigurationError: ``pool`` cannot be built or its workers are not the ones the
            results describe; ``cache`` is not a response cache (``CacheError``); the
            run cannot be re-played from it (``ReplayError``: then which rows its
            episodes use is unknown); ``sample`` is below 1 or ``seed`` not an int.
            (A ``ValueError`` each.)
    """
    from conductor_gym.board.cache_use import episode_calls
    from conductor_gym.pool.pool import make_pool
    from conductor_gym.workers.spec import BACKENDS

    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 1:
        raise ConfigurationError(f"sample must be an int >= 1, got {sample!r}", field="sample")
    if seed is None:
        seed = secrets.randbits(SEED_BITS)
    elif isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigurationError(f"seed must be an int, got {seed!r}", field="seed")
    built = make_pool(pool, trust_credentials=trust_credentials)
    if built.describe()["workers"] != results.pool.get("workers"):
        raise ConfigurationError(
            f"pool {os.fspath(pool)!r} has workers {built.describe()['workers']} but the run "
            f"had {results.pool.get('workers')}: pass a pool file of the run's workers"
        )
    specs: Sequence[WorkerSpec] = built.specs
    by_model = {key_model(s): s for s in specs if s.backend != "simulated"}
    used = episode_calls(results, cache)
    calls = [
        c
        for c in cached_calls(os.fspath(cache))
        if c.model in by_model and c.messages() is not None
    ]
    calls = [c for c in calls if isinstance(c.request.get("max_tokens"), int)]
    drawn = [c for c in calls if c.key in used]
    chosen = random.Random(seed).sample(drawn, min(sample, len(drawn)))
    workers: dict[str, Worker] = {}
    for model in {c.model for c in chosen}:
        spec = by_model[model]
        workers[model] = BACKENDS.get(spec.backend)(spec)
    found = SpotCheck(rows=len(drawn), seed=seed, padding=len(calls) - len(drawn))

    async def run() -> list[tuple[str, int] | WorkerError]:
        return [await _ask(workers[c.model], c) for c in chosen]

    for call, live in zip(chosen, asyncio.run(run()), strict=True):
        name = by_model[call.model].name
        if isinstance(live, WorkerError):
            text = f"{type(live).__name__}: {live}"[:200]
            found.calls.append(
                SpotCall(
                    call.key, name, "failed", call.text[:200], text, call.completion_tokens, None
                )
            )
            continue
        found.calls.append(
            SpotCall(
                call.key,
                name,
                _compare(call.text, live[0]),
                call.text[:200],
                live[0][:200],
                call.completion_tokens,
                live[1],
            )
        )
    return found
