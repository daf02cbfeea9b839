"""Worker pools: which workers exist, and which an episode gets.

A :class:`WorkerSpec` describes one configured worker (a backend, a model, generation
settings, prices). A :class:`WorkerPool` holds ``n`` specs, builds each worker once per
process, and for every episode draws the ``k`` workers the conductor will see (paper
§3.2, adaptive worker selection): a random ``k``-subset of the ``n`` when ``k < n``, kept
in configuration order unless ``shuffle`` asks for a random order. The conductor only
ever sees ordinal ids ``Model 0 .. Model k-1``; :class:`PoolDraw` maps them back to names.

Backends register a factory by import path, so none is imported until a pool that
uses it is built (``import conductor_gym`` stays free of heavy dependencies). Each
worker is built once per pool and wrapped, when configured, in its rate limits
(:mod:`conductor_gym.workers.limits`) and then the response cache
(:mod:`conductor_gym.workers.cache`): a cache hit waits for no rate limit. The pool also
holds the run's spending :class:`~conductor_gym.workers.budget.Ledger`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from conductor_gym._validate import is_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.registry import Registry
from conductor_gym.workers.base import Worker
from conductor_gym.workers.bound import BoundWorker
from conductor_gym.workers.budget import Budget, Ledger
from conductor_gym.workers.limits import LimitedWorker, RateLimits
from conductor_gym.workers.spec import BACKENDS, WorkerSpec

if TYPE_CHECKING:
    from conductor_gym.workers.cache import ResponseCache

__all__ = [
    "DEFAULT_POOL",
    "POOL_PRESETS",
    "PoolDraw",
    "WorkerPool",
    "make_pool",
    "register_pool_preset",
]


@dataclass(frozen=True)
class PoolDraw:
    """The workers of one episode. Index ``i`` is what the conductor calls ``Model i``."""

    specs: tuple[WorkerSpec, ...]
    workers: tuple[BoundWorker, ...]
    indices: tuple[int, ...]
    """Positions of the drawn workers in the pool's configuration."""

    @property
    def names(self) -> tuple[str, ...]:
        """Real worker names in ordinal-id order."""
        return tuple(spec.name for spec in self.specs)

    def __len__(self) -> int:
        return len(self.specs)


class WorkerPool:
    """``n`` configured workers, of which each episode sees ``k``.

    Args:
        specs: The workers (names must be unique).
        k: Workers per episode, ``1 <= k <= n``; ``None`` means all ``n``.
        shuffle: Shuffle the ordinal ids every episode. Without it the drawn workers
            keep their configuration order (with ``k = n``, ``Model i`` is always the
            ``i``-th configured worker, as in the paper's main setting).
        run_budget: Limits on worker use over every episode that uses this pool
            (:attr:`run_ledger` counts them).
        episode_budget: The default limits of each episode (an env's own
            ``episode_budget`` replaces it).
        cache: A :class:`~conductor_gym.workers.cache.ResponseCache` every worker
            reads and writes (or replays from), or ``None``.
        name: The preset or file the pool came from, for descriptions.
    """

    def __init__(
        self,
        specs: Sequence[WorkerSpec],
        *,
        k: int | None = None,
        shuffle: bool = False,
        run_budget: Budget | None = None,
        episode_budget: Budget | None = None,
        cache: ResponseCache | None = None,
        name: str | None = None,
    ) -> None:
        self.specs: tuple[WorkerSpec, ...] = tuple(specs)
        if not self.specs:
            raise ConfigurationError("needs at least one WorkerSpec", field="pool")
        for spec in self.specs:
            if not isinstance(spec, WorkerSpec):
                raise ConfigurationError(f"expected WorkerSpec entries, got {spec!r}", field="pool")
        names = [spec.name for spec in self.specs]
        if duplicates := sorted({n for n in names if names.count(n) > 1}):
            raise ConfigurationError(
                f"worker names must be unique; repeated: {duplicates}", field="pool"
            )
        n = len(self.specs)
        if k is None:
            k = n
        if not is_int(k) or not 1 <= k <= n:
            raise ConfigurationError(f"pool: k must be an int in 1..{n} (the pool size), got {k!r}")
        for label, budget in (("run_budget", run_budget), ("episode_budget", episode_budget)):
            if budget is not None and not isinstance(budget, Budget):
                raise ConfigurationError(f"{label} must be a Budget, got {budget!r}", field="pool")
        self.k = k
        self.shuffle = bool(shuffle)
        self.name = name
        self.cache = cache
        self.run_ledger = Ledger(run_budget or Budget(), scope="run")
        self.episode_budget = episode_budget or Budget()
        self._workers: tuple[BoundWorker, ...] | None = None

    @property
    def n(self) -> int:
        return len(self.specs)

    @property
    def workers(self) -> tuple[BoundWorker, ...]:
        """Every configured worker, built on first access and then shared."""
        if self._workers is None:
            self._workers = tuple(
                BoundWorker(
                    worker=self._build(spec),
                    max_tokens=spec.max_tokens,
                    temperature=spec.temperature,
                    params=spec.params,
                    system_prompt=spec.system_prompt,
                )
                for spec in self.specs
            )
        return self._workers

    def _build(self, spec: WorkerSpec) -> Worker:
        worker = BACKENDS.get(spec.backend)(spec)
        if not isinstance(worker, Worker):
            raise ConfigurationError(
                f"WorkerSpec(name={spec.name!r}).backend: backend {spec.backend!r} built a "
                f"{type(worker).__name__}, which is not a Worker (subclass "
                "conductor_gym.workers.Worker for its name, complete, for_task and "
                "aggregates_calls)",
                field="backend",
            )
        limits = RateLimits(
            max_concurrency=spec.max_concurrency,
            requests_per_minute=spec.requests_per_minute,
            tokens_per_minute=spec.tokens_per_minute,
        )
        if limits.active:
            worker = LimitedWorker(worker, limits)
        if self.cache is not None and self.cache.mode != "off":
            from conductor_gym.workers.cache import CachedWorker

            # Real models answer by model; a simulated worker's answers also depend on its
            # name (it seeds its draws with it), so two entries must not share rows.
            model = spec.name if spec.backend == "simulated" else spec.model_name
            worker = CachedWorker(worker, self.cache, f"{spec.backend}/{model}")
        return worker

    def sample(self, rng: np.random.Generator) -> PoolDraw:
        """Draw the workers of one episode from ``rng`` (no draw is made when ``k = n``
        and ``shuffle`` is off, so the RNG stream is then left untouched)."""
        n, k = self.n, self.k
        if k == n and not self.shuffle:
            indices = tuple(range(n))
        else:
            chosen = rng.choice(n, size=k, replace=False)
            indices = tuple(int(i) for i in (chosen if self.shuffle else np.sort(chosen)))
        workers = self.workers
        return PoolDraw(
            specs=tuple(self.specs[i] for i in indices),
            workers=tuple(workers[i] for i in indices),
            indices=indices,
        )

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description (names, backends, models, k, shuffle)."""
        return {
            "name": self.name,
            "k": self.k,
            "shuffle": self.shuffle,
            "run_budget": self.run_ledger.budget.to_dict(),
            "episode_budget": self.episode_budget.to_dict(),
            "cache": None if self.cache is None else self.cache.mode,
            "workers": [
                {"name": s.name, "backend": s.backend, "model": s.model_name} for s in self.specs
            ],
        }

    def __repr__(self) -> str:
        return f"WorkerPool(n={self.n}, k={self.k}, shuffle={self.shuffle})"


DEFAULT_POOL = "sim-paper"
"""The pool every entry point uses when none is given: the paper's seven workers, simulated."""

POOL_PRESETS: Registry[Callable[[], list[WorkerSpec]]] = Registry("pool preset", field="pool")
"""Pools registered in code: name -> function returning the specs. The presets that ship
with the package are files in ``conductor_gym/pool/presets/`` (:mod:`conductor_gym.pool.config`)."""


def register_pool_preset(name: str, specs: str | Callable[[], list[WorkerSpec]]) -> None:
    """Register a named pool in code so ``make_pool(name)`` and ``gym.make(..., pool=name)``
    find it (it takes precedence over a preset file of the same name); a name taken by
    another function raises."""
    POOL_PRESETS.register(name, specs)


def make_pool(
    pool: str | os.PathLike[str] | WorkerPool | Sequence[WorkerSpec],
    *,
    k: int | None = None,
    shuffle: bool | None = None,
    cache: str | os.PathLike[str] | ResponseCache | None = None,
    trust_credentials: bool = False,
) -> WorkerPool:
    """Build a :class:`WorkerPool` from a preset name, a pool file, specs, or a pool.

    Args:
        pool: A name registered with :func:`register_pool_preset`, a preset shipped in
            ``conductor_gym/pool/presets/`` (``"sim-paper"``, ``"local-smol"``,
            ``"paper-constrained"``, ``"paper-unconstrained"``), the path of a TOML pool
            file, either followed by ``@<split>`` to draw from a pool split
            (:mod:`conductor_gym.pool.splits`, e.g. ``"sim-paper@train"``), a list of
            :class:`WorkerSpec`, or a ready :class:`WorkerPool`.
        k, shuffle: Override the file's (or the default) draw.
        cache: A response-cache path (read-write) or a
            :class:`~conductor_gym.workers.cache.ResponseCache`.
        trust_credentials: Send every key a pool file names wherever it says. Off, a
            pool file (or preset file) may send only a provider's API-key variable to
            that provider's hosts or to loopback
            (:mod:`conductor_gym.workers.credentials`); anything else raises
            :class:`~conductor_gym.workers.credentials.CredentialPolicyError` naming
            the worker and the field. Specs given in code are not checked.

    ``k``, ``shuffle`` and ``cache`` cannot be applied to a ready :class:`WorkerPool`
    (it already fixes them): that is an error.
    """
    if isinstance(pool, WorkerPool):
        if k is not None or shuffle is not None or cache is not None:
            raise ConfigurationError(
                "k, shuffle_workers and cache cannot override a ready WorkerPool", field="pool"
            )
        return pool
    if isinstance(cache, str | os.PathLike):
        from conductor_gym.workers.cache import ResponseCache

        cache = ResponseCache(cache)
    if isinstance(pool, str | os.PathLike):
        name = os.fspath(pool)
        from conductor_gym.pool import splits

        if (parsed := splits.parse_split_pool_name(name)) is not None:
            if k is not None or shuffle is not None:
                raise ConfigurationError(
                    f"k and shuffle_workers cannot override pool split {name!r}: "
                    "the split draws the sizes and the order",
                    field="pool",
                )
            return splits.get_pool_split(parsed[1]).build(
                parsed[0], cache=cache, trust_credentials=trust_credentials
            )
        if name in POOL_PRESETS:
            return WorkerPool(
                POOL_PRESETS.get(name)(), k=k, shuffle=bool(shuffle), cache=cache, name=name
            )
        from conductor_gym.pool import config as pool_config

        if name.endswith(".toml") or os.sep in name:
            config = pool_config.load_pool_file(name)
        elif name in pool_config.preset_names():
            config = pool_config.load_preset(name)
        else:
            known = sorted({*POOL_PRESETS.names(), *pool_config.preset_names()})
            raise ConfigurationError(
                f"unknown preset {name!r}; choose one of {known} or give a .toml file",
                field="pool",
            )
        _check_file_credentials(config.specs, name, trust_credentials)
        return WorkerPool(
            config.specs,
            k=config.k if k is None else k,
            shuffle=config.shuffle if shuffle is None else shuffle,
            run_budget=config.run_budget,
            episode_budget=config.episode_budget,
            cache=cache,
            name=config.name,
        )
    return WorkerPool(pool, k=k, shuffle=bool(shuffle), cache=cache)


def _check_file_credentials(specs: Sequence[WorkerSpec], source: str, trust: bool) -> None:
    """Refuse a pool file's credential routes that the policy does not allow."""
    from conductor_gym.workers.credentials import check_credentials

    check_credentials(specs, trust=trust, source=source)
