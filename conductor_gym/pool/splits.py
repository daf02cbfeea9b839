"""Pool splits: a training distribution of worker pools and held-out ones.

The paper fine-tunes with a random k-of-n subset of its seven workers per question; a
benchmark of generalisation also asks what a conductor does with workers, or pool sizes,
or an id order it never saw in training. A :class:`PoolSplit` names a distribution of
episode pools over a base pool's workers: which workers may be drawn, which pool sizes
``k``, whether every draw must include one of some workers, and whether the ordinal ids
``Model 0 .. Model k-1`` are shuffled. :class:`SplitPool` is a
:class:`~conductor_gym.pool.pool.WorkerPool` that draws from a split.

Use ``pool="<base>@<split>"`` anywhere a pool name is taken (``ConductorEnv``, the vector
env, ``Scorer``, ``evaluate --pool``), e.g. ``"sim-paper@train"``; a suite named
``"<suite>@<split>"`` (:mod:`conductor_gym.bench.suites`) evaluates on that split, and its
fingerprint includes the split's.

The splits (:data:`POOL_SPLITS`) are defined on the paper's seven worker names, shared by
``sim-paper``, ``paper-constrained`` and ``paper-unconstrained``. Two workers are held out
of training: ``gpt-5``, a strong worker with its own profile (the best coder, weaker at
maths than Gemini), and ``gemma-3-27b-it``, the weakest; an unseen worker is thus worth
finding in one case and worth avoiding in the other, and the conductor can tell which
only by what it sees, since workers are anonymous.

=====================  =========================  ===========  =============================
split                  workers                    sizes ``k``  draws
=====================  =========================  ===========  =============================
``train``              the other five             2, 3, 4      configuration order
``heldout-workers``    all seven                  2, 3, 4      at least one unseen worker
``heldout-sizes``      the training five          1, 5         configuration order
``heldout-shuffled``   the training five          2, 3, 4      ids shuffled, never in
                                                               configuration order
``heldout-full``       all seven                  7            the paper's full pool
=====================  =========================  ===========  =============================

Why these: ``heldout-workers`` shifts only who is in the pool (sizes as in training);
``heldout-sizes`` only how many (the same workers, sizes outside the training range:
alone with one worker, or with all five); ``heldout-shuffled`` only the id order (a
conductor that learned "Model 0 is the strong one" is caught out); ``heldout-full`` is
the paper's evaluation setting, both shifts at once. Disjointness, tested: no held-out
draw (an ordered tuple of workers) is ever a draw of ``train``.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from conductor_gym.errors import ConfigurationError
from conductor_gym.pool.pool import DEFAULT_POOL, PoolDraw, WorkerPool
from conductor_gym.workers.spec import WorkerSpec

if TYPE_CHECKING:
    from conductor_gym.workers.cache import ResponseCache

__all__ = [
    "HELD_OUT_WORKERS",
    "PAPER_WORKERS",
    "POOL_SPLITS",
    "TRAINING_WORKERS",
    "PoolSplit",
    "SplitPool",
    "get_pool_split",
    "parse_split_pool_name",
    "pool_split_names",
    "split_pool_name",
    "with_pool_split",
]

PAPER_WORKERS: tuple[str, ...] = (
    "gemini-2.5-pro",
    "claude-sonnet-4",
    "gpt-5",
    "deepseek-r1-distill-qwen-32b",
    "gemma-3-27b-it",
    "qwen3-32b-thinking",
    "qwen3-32b-direct",
)
"""The paper's seven workers, as the paper pools name them, in configuration order."""

HELD_OUT_WORKERS: tuple[str, ...] = ("gpt-5", "gemma-3-27b-it")
"""The workers no training draw contains (module docstring)."""

TRAINING_WORKERS: tuple[str, ...] = tuple(w for w in PAPER_WORKERS if w not in HELD_OUT_WORKERS)

_MAX_REDRAWS = 10_000


@dataclass(frozen=True)
class PoolSplit:
    """A distribution of episode pools (module docstring).

    Attributes:
        name: The split's name.
        workers: The names of the base pool's workers that may be drawn.
        sizes: The pool sizes ``k`` drawn from, uniformly.
        must_include: When not empty, every draw includes at least one of these.
        shuffle: Shuffle the ordinal ids every episode; without it a draw keeps the
            base pool's configuration order.
        never_in_order: With ``shuffle``, a draw is never in configuration order.
        description: One line for listings.
    """

    name: str
    workers: tuple[str, ...]
    sizes: tuple[int, ...]
    must_include: tuple[str, ...] = ()
    shuffle: bool = False
    never_in_order: bool = False
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        where = f"PoolSplit(name={self.name!r})"
        if len(set(self.workers)) != len(self.workers) or not self.workers:
            raise ConfigurationError(f"{where}.workers must be distinct names, at least one")
        if not self.sizes or any(
            not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= len(self.workers)
            for k in self.sizes
        ):
            raise ConfigurationError(
                f"{where}.sizes must be ints in 1..{len(self.workers)} (its workers), "
                f"got {self.sizes!r}"
            )
        if unknown := sorted(set(self.must_include) - set(self.workers)):
            raise ConfigurationError(
                f"{where}.must_include names workers it cannot draw: {unknown}"
            )
        if self.never_in_order and (not self.shuffle or min(self.sizes) < 2):
            raise ConfigurationError(f"{where}.never_in_order needs shuffle and sizes >= 2")

    def fingerprint(self) -> str:
        """16 hex digits of the SHA-256 of what fixes the distribution (name and
        description excluded: the same draws give the same fingerprint)."""
        data = {
            "workers": list(self.workers),
            "sizes": sorted(self.sizes),
            "must_include": sorted(self.must_include),
            "shuffle": self.shuffle,
            "never_in_order": self.never_in_order,
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def describe(self) -> dict[str, Any]:
        """A JSON-ready description, with the fingerprint."""
        return {
            "name": self.name,
            "fingerprint": self.fingerprint(),
            "workers": list(self.workers),
            "sizes": list(self.sizes),
            "must_include": list(self.must_include),
            "shuffle": self.shuffle,
            "never_in_order": self.never_in_order,
        }

    def build(
        self,
        pool: str | os.PathLike[str] | WorkerPool | Sequence[WorkerSpec] = DEFAULT_POOL,
        *,
        cache: str | os.PathLike[str] | ResponseCache | None = None,
        trust_credentials: bool = False,
    ) -> SplitPool:
        """A :class:`SplitPool` drawing from this split over ``pool``'s workers (a name,
        file, specs or a ready pool, whose specs, budgets and cache are taken);
        ``trust_credentials`` as in :func:`~conductor_gym.pool.pool.make_pool`."""
        from conductor_gym.pool.pool import make_pool

        base = make_pool(pool, cache=cache, trust_credentials=trust_credentials)
        return SplitPool(
            base.specs,
            self,
            run_budget=base.run_ledger.budget,
            episode_budget=base.episode_budget,
            cache=base.cache,
            name=split_pool_name(base.name or "pool", self.name),
        )


class SplitPool(WorkerPool):
    """A :class:`~conductor_gym.pool.pool.WorkerPool` whose episodes draw from ``split``.

    Every configured worker is built as in any pool; :meth:`sample` draws the size, the
    workers and their order from the env's RNG, so a seed fixes the draw. ``k`` is the
    largest size of the split (what the action space must allow for).
    """

    def __init__(self, specs: Sequence[WorkerSpec], split: PoolSplit, **kwargs: Any) -> None:
        names = [spec.name for spec in specs]
        if missing := [w for w in split.workers if w not in names]:
            raise ConfigurationError(
                f"pool split {split.name!r}: the pool has no worker(s) {missing}; "
                f"its workers are {names}"
            )
        super().__init__(specs, k=max(split.sizes), shuffle=split.shuffle, **kwargs)
        self.split = split
        self._eligible = np.array([names.index(w) for w in split.workers])
        self._required = {names.index(w) for w in split.must_include}

    def sample(self, rng: np.random.Generator) -> PoolDraw:
        split = self.split
        sizes = split.sizes
        k = sizes[int(rng.integers(len(sizes)))] if len(sizes) > 1 else sizes[0]
        for _ in range(_MAX_REDRAWS):
            chosen = self._eligible[rng.choice(len(self._eligible), size=k, replace=False)]
            indices = [int(i) for i in chosen] if split.shuffle else sorted(int(i) for i in chosen)
            if self._required and not self._required.intersection(indices):
                continue
            if split.never_in_order and indices == sorted(indices):
                continue
            break
        else:  # pragma: no cover - validation makes every accepted draw likely
            raise RuntimeError(f"pool split {split.name!r}: no valid draw found")
        workers = self.workers
        return PoolDraw(
            specs=tuple(self.specs[i] for i in indices),
            workers=tuple(workers[i] for i in indices),
            indices=tuple(indices),
        )

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "split": self.split.describe()}

    def __repr__(self) -> str:
        return f"SplitPool(n={self.n}, split={self.split.name!r})"


POOL_SPLITS: dict[str, PoolSplit] = {
    split.name: split
    for split in (
        PoolSplit(
            "train",
            TRAINING_WORKERS,
            (2, 3, 4),
            description="training distribution: five of the seven workers, k in 2..4",
        ),
        PoolSplit(
            "heldout-workers",
            PAPER_WORKERS,
            (2, 3, 4),
            must_include=HELD_OUT_WORKERS,
            description="the two unseen workers mixed in: every draw has at least one",
        ),
        PoolSplit(
            "heldout-sizes",
            TRAINING_WORKERS,
            (1, 5),
            description="the training workers at pool sizes outside the training range",
        ),
        PoolSplit(
            "heldout-shuffled",
            TRAINING_WORKERS,
            (2, 3, 4),
            shuffle=True,
            never_in_order=True,
            description="the training draws with ids shuffled, never in training order",
        ),
        PoolSplit(
            "heldout-full",
            PAPER_WORKERS,
            (7,),
            description="all seven workers, unseen ones included (the paper's setting)",
        ),
    )
}
"""Split name -> :class:`PoolSplit` (module docstring)."""


def pool_split_names() -> list[str]:
    """The named splits, in registry order."""
    return list(POOL_SPLITS)


def get_pool_split(name: str) -> PoolSplit:
    """The split called ``name``; an unknown name lists the splits."""
    try:
        return POOL_SPLITS[name]
    except KeyError:
        raise ConfigurationError(
            f"pool split: unknown split {name!r}; choose one of {pool_split_names()}"
        ) from None


def split_pool_name(base: str, split: str) -> str:
    """``"<base>@<split>"``: how a pool name asks for a split."""
    return f"{base}@{split}"


def parse_split_pool_name(name: str) -> tuple[str, str] | None:
    """``(base, split)`` when ``name`` is ``"<base>@<split>"`` with a known split (a file
    path whose name holds an ``@`` is left alone), else ``None``."""
    base, sep, split = name.rpartition("@")
    if not sep or not base or split not in POOL_SPLITS:
        return None
    return base, split


def with_pool_split(
    pool: str | os.PathLike[str] | WorkerPool | Sequence[WorkerSpec], split: str
) -> str | WorkerPool:
    """``pool`` drawing from the split ``split`` (a suite's): ``"<base>@<split>"`` for a
    name, a :class:`SplitPool` for specs or a ready pool. A pool that already names
    another split is an error."""
    chosen = get_pool_split(split)
    if isinstance(pool, SplitPool):
        if pool.split.fingerprint() != chosen.fingerprint():
            raise ConfigurationError(
                f"draws from split {pool.split.name!r} but the suite asks for {split!r}",
                field="pool",
            )
        return pool
    if isinstance(pool, str | os.PathLike):
        name = os.fspath(pool)
        parsed = parse_split_pool_name(name)
        if parsed is not None and parsed[1] != split:
            raise ConfigurationError(
                f"pool {name!r} names split {parsed[1]!r} but the suite asks for {split!r}"
            )
        return name if parsed is not None else split_pool_name(name, split)
    return chosen.build(pool)
