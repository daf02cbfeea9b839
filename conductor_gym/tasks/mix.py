"""Task mixtures: :class:`MixedTasks` and the paper's training mix, ``paper-train``.

The Conductor paper trains on 960 problems from MATH500, MMLU, RLPR and LiveCodeBench v1,
"selected for difficulty and diversity", without per-domain counts. ``paper-train`` is
our documented, seeded reconstruction:

==================  ====================================  ==========  ===================
domain              pool                                  picked      strata / difficulty
==================  ====================================  ==========  ===================
``math500``         the 300-problem ``train`` hash split   240         subject / level
``mmlu``            ``auxiliary_train`` (99,842)            240         subject (*) / none
``rlpr``            the ``train`` hash split (46,620)       240         ability / none
``livecodebench``   ``release_v1`` (400)                    240         platform / difficulty
total                                                     960
==================  ====================================  ==========  ===================

(*) ``auxiliary_train`` rows have an empty subject, so MMLU is one stratum there.

Selection (:func:`stratified_pick`), per domain: group the pool by stratum; within a
stratum order tasks hardest first (MATH level 5 before 1; LiveCodeBench hard, medium,
easy), ties by ``sha256(f"{salt}:{task.id}")`` with ``salt = f"paper-train:{seed}:
{domain}"``; then take one task from each stratum in turn (strata in the hash order of
their names under the same salt) until the quota is met, skipping exhausted strata. So
every stratum gets the same count (within one) when it has enough tasks, which is the
"diversity", and each stratum gives its hardest tasks, which is the "difficulty". A pool
smaller than the quota is taken whole.

:class:`MixedTasks` is the general tool: a lazy task source over several sources, each
optionally cut to a quota by :func:`stratified_pick`, interleaved round-robin (so every
prefix is balanced across sources) or, with ``shuffle=True``, in the seeded hash order
of :func:`~conductor_gym.tasks.splits.shuffled`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from conductor_gym._validate import is_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks.base import LoadedTasks, Task, TaskSource
from conductor_gym.tasks.splits import hash_rank, shuffled

__all__ = [
    "PAPER_TRAIN_PER_DOMAIN",
    "PAPER_TRAIN_POOLS",
    "PAPER_TRAIN_SIZE",
    "MixedTasks",
    "paper_train_mix",
    "stratified_pick",
]

PAPER_TRAIN_SIZE = 960
"""Training problems in the paper."""

PAPER_TRAIN_PER_DOMAIN = 240
"""Our per-domain quota (960 / 4)."""

PAPER_TRAIN_POOLS: dict[str, dict[str, Any]] = {
    "math500": {"split": "train"},
    "mmlu": {"split": "auxiliary_train"},
    "rlpr": {"split": "train"},
    "livecodebench": {"split": "train"},
}
"""Registry name -> the options selecting its training pool."""

_LCB_DIFFICULTY = {"easy": 0, "medium": 1, "hard": 2}


def _meta(key: str) -> Callable[[Task], str]:
    return lambda task: str(task.metadata.get(key) or "")


def _level(task: Task) -> int:
    try:
        return int(task.metadata.get("level") or 0)
    except (TypeError, ValueError):
        return 0


def _lcb_difficulty(task: Task) -> int:
    return _LCB_DIFFICULTY.get(str(task.metadata.get("difficulty") or "").lower(), 0)


def _no_difficulty(task: Task) -> int:
    return 0


STRATA: dict[str, tuple[Callable[[Task], str], Callable[[Task], int]]] = {
    "math500": (_meta("subject"), _level),
    "mmlu": (_meta("subject"), _no_difficulty),
    "rlpr": (_meta("ability"), _no_difficulty),
    "livecodebench": (_meta("platform"), _lcb_difficulty),
}
"""Domain -> (stratum of a task, difficulty of a task: higher is harder)."""


def stratified_pick(tasks: Sequence[Task], count: int, salt: str) -> list[Task]:
    """Pick ``count`` of ``tasks``: strata in turn, hardest first (see the module docstring).

    Strata and difficulty come from :data:`STRATA` by each task's domain (one stratum and
    no difficulty for other domains). The result is in pick order.
    """
    if count < 0:
        raise ConfigurationError(f"count: must be >= 0, got {count}")
    groups: dict[str, list[Task]] = {}
    for task in tasks:
        stratum, _ = STRATA.get(task.domain, (_meta("__none__"), _no_difficulty))
        groups.setdefault(stratum(task), []).append(task)

    def tie(task: Task) -> str:
        return hashlib.sha256(f"{salt}:{task.id}".encode()).hexdigest()

    for group in groups.values():
        group.sort(key=lambda t: (-STRATA.get(t.domain, (None, _no_difficulty))[1](t), tie(t)))
    names = list(groups)
    queues = [groups[names[i]] for i in hash_rank(names, salt)]
    picked: list[Task] = []
    depth = 0
    while len(picked) < count and any(depth < len(queue) for queue in queues):
        for queue in queues:
            if depth < len(queue) and len(picked) < count:
                picked.append(queue[depth])
        depth += 1
    return picked


class MixedTasks(LoadedTasks):
    """A lazy task source over several sources (see the module docstring).

    Args:
        sources: The sources, loaded on first access.
        name: The mixture's name.
        per_source: Quota per source (:func:`stratified_pick`); ``None`` keeps all tasks.
        seed: Seed of the selection and of the order when ``shuffle`` is true.
        shuffle: Seeded hash order instead of round-robin interleaving.
        expected_size: The size on the full data, if known (for listings).
    """

    def __init__(
        self,
        sources: Sequence[TaskSource],
        *,
        name: str = "mixed",
        per_source: int | None = None,
        seed: int = 0,
        shuffle: bool = False,
        expected_size: int | None = None,
    ) -> None:
        if not sources:
            raise ConfigurationError("sources: give at least one task source")
        if per_source is not None and (not is_int(per_source) or per_source < 1):
            raise ConfigurationError(f"per_source: must be an int >= 1 or None, got {per_source!r}")
        if not is_int(seed):
            raise ConfigurationError(f"seed: must be an int, got {seed!r}")
        self.sources = tuple(sources)
        self.name: str = name
        self.per_source = per_source
        self.seed = seed
        self.shuffle = bool(shuffle)
        self._expected_size = expected_size
        self._tasks: list[Task] | None = None

    @property
    def expected_size(self) -> int | None:
        """The size on the full data, if known without loading."""
        return self._expected_size

    def offline_available(self) -> bool:
        """Whether every source can load without the network (``False`` if unknown)."""
        return all(source.offline_available() is True for source in self.sources)

    def _part(self, source: TaskSource) -> list[Task]:
        tasks = list(source)
        if self.per_source is None:
            return tasks
        domain = tasks[0].domain if tasks else source.name
        return stratified_pick(tasks, self.per_source, f"{self.name}:{self.seed}:{domain}")

    def load(self) -> list[Task]:
        """Load every source, pick and order (once)."""
        if self._tasks is not None:
            return self._tasks
        parts = [self._part(source) for source in self.sources]
        mixed: list[Task] = []
        for depth in range(max(len(part) for part in parts)):
            mixed.extend(part[depth] for part in parts if depth < len(part))
        ids = [task.id for task in mixed]
        if len(set(ids)) != len(ids):
            dupes = sorted({i for i in ids if ids.count(i) > 1})[:5]
            raise ConfigurationError(f"{self.name}: task ids repeat across sources: {dupes}")
        if self.shuffle:
            mixed = shuffled(mixed, ids, self.name, self.seed)
        self._tasks = mixed
        return mixed

    def counts(self) -> dict[str, int]:
        """Tasks per domain (loads the data)."""
        result: dict[str, int] = {}
        for task in self.load():
            result[task.domain] = result.get(task.domain, 0) + 1
        return result

    def __repr__(self) -> str:
        names = [source.name for source in self.sources]
        return (
            f"MixedTasks({names}, name={self.name!r}, per_source={self.per_source}, "
            f"seed={self.seed}, shuffle={self.shuffle})"
        )


def paper_train_mix(
    *,
    seed: int = 0,
    shuffle: bool = False,
    per_domain: int = PAPER_TRAIN_PER_DOMAIN,
    cache_dir: str | None = None,
    source_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> MixedTasks:
    """The ``paper-train`` mixture (module docstring); nothing is read until it is used.

    Args:
        seed: Seed of the selection (ties) and of the order with ``shuffle``.
        shuffle: Seeded hash order instead of round-robin interleaving by domain.
        per_domain: Quota per domain (240 gives the paper's 960).
        cache_dir: Passed to every source.
        source_options: Per registry name, extra options for that source (for example
            ``{"math500": {"data_dir": "..."}}``); they override the pool's split.
    """
    from conductor_gym.tasks import make_task_source

    options = dict(source_options or {})
    unknown = sorted(set(options) - set(PAPER_TRAIN_POOLS))
    if unknown:
        raise ConfigurationError(
            f"source_options: unknown sources {unknown}; valid: {list(PAPER_TRAIN_POOLS)}"
        )
    sources = []
    for name, pool in PAPER_TRAIN_POOLS.items():
        kwargs: dict[str, Any] = {**pool, "cache_dir": cache_dir, **options.get(name, {})}
        sources.append(make_task_source(name, **kwargs))
    return MixedTasks(
        sources,
        name="paper-train",
        per_source=per_domain,
        seed=seed,
        shuffle=shuffle,
        expected_size=per_domain * len(sources) if per_domain == PAPER_TRAIN_PER_DOMAIN else None,
    )
