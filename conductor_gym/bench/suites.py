"""Evaluation suites: named, fixed lists of task sources with one combined fingerprint.

Contract. A :class:`Suite` is a name and an ordered tuple of :class:`SuiteSource` (a name
in the suite, the registry name of a task source and the options fixing its split). Its
task sources are built on first access of :attr:`Suite.sources` (building a benchmark
loader reads nothing; the data is read when a source is first indexed, sized or
fingerprinted), so :func:`get_suite` and :func:`list_suites` never download.

``limit=N`` keeps the first ``N`` tasks of every source (a quick run); it is part of every
source's fingerprint (the hash of the tasks actually run) and recorded in
:meth:`Suite.info`. :meth:`Suite.fingerprint` is the first 16 hex digits of the SHA-256 of
the JSON list ``[[name, source fingerprint, size], ...]`` in suite order: the same
questions in the same order give the same fingerprint, whatever the suite is called.

=================  ==========================================================================
suite              sources (splits as the paper evaluates, see ``conductor_gym.tasks``)
=================  ==========================================================================
``offline``        ``offline`` (procedural stand-ins, 2000 tasks)
``offline-160``    ``offline``, its first 160 tasks (40 per family): a fixed subset with its
                   own fingerprint, for agents too slow or costly for the whole suite
``offline-ood``    ``offline-ood`` (harder procedural stand-ins, 1500 tasks)
``paper-train4``   ``math500`` (hash-split test, 100), ``mmlu`` (test, 14042), ``rlpr``
                   (hash-split test, 15540), ``livecodebench`` (test = v6, 175)
``paper-ood3``     ``aime25`` (30), ``bigcodebench`` (hard, complete, v0.1.4, 148),
                   ``gpqa-diamond`` (198, gated)
``jsonl:<path>``   one source: the JSON Lines file, named after the file's stem
=================  ==========================================================================

Pool splits. ``"<suite>@<split>"`` is the suite's tasks on the pools of a pool split
(:mod:`conductor_gym.pool.splits`: ``train``, ``heldout-workers``, ``heldout-sizes``,
``heldout-shuffled``, ``heldout-full``), e.g. ``"offline@heldout-workers"``. Its episodes
draw their pools from the split (``evaluate`` applies it to the pool it is given), and its
fingerprint hashes ``["pool-split", <split fingerprint>]`` after the sources: the same
questions on other pools are another benchmark, and a leaderboard that keys its sections
by suite keeps them apart. A suite without a split keeps the fingerprint it always had.
:data:`POOL_SPLIT_SUITES` lists the pairings ``conductor-gym suites list`` shows.

:func:`episode_plan` lists the episodes of a run over a suite: for each repeat ``r``, each
source (suite order) and each task index ``i``, an :class:`EpisodeSpec` whose reset seed
is :func:`episode_seed` ``(seed, source, i, r)``, the first 63 bits of the SHA-256 of
``json.dumps(["conductor-gym/evaluate", seed, source, i, r])``.

Task selection. A :class:`TaskSelection` plays some of a suite's tasks: a range of task
indices ``A:B`` (``A`` included, ``B`` not, either may be left out), the tasks a file
lists (task ids or task indices, one per line; ``#`` starts a comment), and/or a named
split of :data:`TASK_SPLITS` (``heldout``: the tasks whose :func:`task_split` is
``heldout``, a quarter of them by a hash of the task id; ``fit``: the others), all of
them that are given at once. The suite, its fingerprint and every episode's index and
seed stay those of the whole suite, so the episodes of a selection are the same
episodes a whole run plays (a run re-plays and fits them as any other), and the
selection is recorded in the results (``suite.tasks``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import operator
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conductor_gym._validate import is_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.pool.splits import POOL_SPLITS, get_pool_split
from conductor_gym.seeding import hash_seed
from conductor_gym.tasks import Task, TaskSource, fingerprint_tasks, make_task_source
from conductor_gym.tasks.jsonl import JSONL_PREFIX

__all__ = [
    "POOL_SPLIT_SUITES",
    "SUITES",
    "TASK_SPLITS",
    "EpisodeSpec",
    "LimitedTasks",
    "Suite",
    "SuiteSource",
    "TaskSelection",
    "episode_plan",
    "episode_seed",
    "get_suite",
    "list_suites",
    "task_split",
]


@dataclass(frozen=True)
class SuiteSource:
    """One source of a suite: ``name`` in the suite (the ``benchmark`` of its episodes),
    the registry name ``source`` and the ``options`` fixing its split."""

    name: str
    source: str
    options: Mapping[str, Any] = field(default_factory=dict)


class LimitedTasks(TaskSource):
    """The first ``limit`` tasks of ``source`` (all of them if it has fewer)."""

    def __init__(self, source: TaskSource, limit: int) -> None:
        self.source = source
        self.limit = limit
        self.name: str = source.name
        self._fingerprint: str | None = None

    def __len__(self) -> int:
        return min(self.limit, len(self.source))

    @property
    def expected_size(self) -> int | None:
        full = self.source.expected_size
        return None if full is None else min(self.limit, full)

    def offline_available(self) -> bool | None:
        return self.source.offline_available()

    def __getitem__(self, index: int) -> Task:
        index = operator.index(index)
        if not 0 <= index < len(self):
            raise IndexError(f"task index {index} is outside 0..{len(self) - 1}")
        return self.source[index]

    def __iter__(self) -> Iterator[Task]:
        return (self.source[i] for i in range(len(self)))

    def fingerprint(self) -> str:
        """Hash of the kept tasks' ids, references and graders, in order."""
        if self._fingerprint is None:
            self._fingerprint = fingerprint_tasks(iter(self))
        return self._fingerprint


class Suite:
    """A named list of task sources (see the module docstring).

    Args:
        name: The suite's name.
        specs: Its sources, in order (names unique).
        description: One line for listings.
        limit: Keep only the first ``limit`` tasks of each source (``None``: all).
        pool_split: The name of the pool split its episodes draw their pools from
            (:mod:`conductor_gym.pool.splits`), or ``None`` for the pool as given.
        source_options: Per suite-source name, extra options for its factory that do not
            change the tasks (``cache_dir``, ``data_dir``, ``token``, ...).
    """

    def __init__(
        self,
        name: str,
        specs: tuple[SuiteSource, ...],
        *,
        description: str = "",
        limit: int | None = None,
        source_options: Mapping[str, Mapping[str, Any]] | None = None,
        pool_split: str | None = None,
    ) -> None:
        if pool_split is not None:
            get_pool_split(pool_split)  # an unknown split fails here, listing the splits
        if not specs:
            raise ConfigurationError(f"suite {name!r}: give at least one source")
        names = [spec.name for spec in specs]
        if len(set(names)) != len(names):
            raise ConfigurationError(f"suite {name!r}: source names repeat: {names}")
        if limit is not None and (not is_int(limit) or limit < 1):
            raise ConfigurationError(f"limit: must be an int >= 1 or None, got {limit!r}")
        options = dict(source_options or {})
        if unknown := sorted(set(options) - set(names)):
            raise ConfigurationError(f"source_options: unknown sources {unknown}; valid: {names}")
        self.name = name
        self.specs = specs
        self.description = description
        self.limit = limit
        self.source_options = options
        self.pool_split = pool_split
        self._sources: dict[str, TaskSource] | None = None

    @property
    def sources(self) -> dict[str, TaskSource]:
        """Suite-source name -> task source, built on first access (cut to ``limit``)."""
        if self._sources is None:
            built: dict[str, TaskSource] = {}
            for spec in self.specs:
                kwargs = {**spec.options, **self.source_options.get(spec.name, {})}
                source = make_task_source(spec.source, **kwargs)
                built[spec.name] = LimitedTasks(source, self.limit) if self.limit else source
            self._sources = built
        return self._sources

    def with_limit(self, limit: int | None) -> Suite:
        """The same suite with another ``limit``."""
        return Suite(
            self.name,
            self.specs,
            description=self.description,
            limit=limit,
            source_options=self.source_options,
            pool_split=self.pool_split,
        )

    def info(self) -> dict[str, Any]:
        """``{"name", "fingerprint", "sources": [{"name", "fingerprint", "size"}], "limit"}``
        (the :class:`~conductor_gym.bench.results.SuiteInfo` fields; reads every source)."""
        sources = [
            {"name": name, "fingerprint": source.fingerprint(), "size": len(source)}
            for name, source in self.sources.items()
        ]
        rows: list[list[Any]] = [[s["name"], s["fingerprint"], s["size"]] for s in sources]
        if self.pool_split is not None:
            rows.append(["pool-split", get_pool_split(self.pool_split).fingerprint()])
        digest = hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]
        return {"name": self.name, "fingerprint": digest, "sources": sources, "limit": self.limit}

    def fingerprint(self) -> str:
        """The combined fingerprint (module docstring; reads every source)."""
        return str(self.info()["fingerprint"])

    def __repr__(self) -> str:
        names = [spec.name for spec in self.specs]
        split = f", pool_split={self.pool_split!r}" if self.pool_split else ""
        return f"Suite({self.name!r}, {names}, limit={self.limit}{split})"


def _one(name: str, **options: Any) -> SuiteSource:
    return SuiteSource(name, name, options)


SUITES: dict[str, tuple[str, tuple[SuiteSource, ...]]] = {
    "offline": ("procedural stand-ins, offline default", (_one("offline"),)),
    "offline-160": (
        "the first 160 offline tasks (40 per family), a fixed subset",
        (_one("offline", size=160),),
    ),
    "offline-ood": ("harder procedural stand-ins, unseen families", (_one("offline-ood"),)),
    "paper-train4": (
        "the paper's in-domain test sets (Table 7)",
        (
            _one("math500", split="test"),
            _one("mmlu", split="test"),
            _one("rlpr", split="test"),
            _one("livecodebench", split="test"),
        ),
    ),
    "paper-ood3": (
        "the paper's out-of-domain test sets (Table 8)",
        (_one("aime25"), _one("bigcodebench"), _one("gpqa-diamond")),
    ),
}
"""Suite name -> (description, sources)."""

POOL_SPLIT_SUITES: tuple[str, ...] = (
    "offline@train",
    "offline@heldout-workers",
    "offline@heldout-sizes",
    "offline@heldout-shuffled",
    "offline@heldout-full",
    "offline-ood@heldout-full",
)
"""The suite and pool split pairings that ``list_suites`` shows (any pairing works)."""


def get_suite(
    name: str,
    *,
    limit: int | None = None,
    source_options: Mapping[str, Mapping[str, Any]] | None = None,
) -> Suite:
    """The suite called ``name`` (a key of :data:`SUITES` or ``"jsonl:<path>"``, either
    followed by ``@<pool split>``).

    Builds no task source. An unknown name raises ``ConfigurationError`` listing the suites.
    """
    base, sep, split = name.rpartition("@")
    if sep and base and split in POOL_SPLITS:
        suite = get_suite(base, limit=limit, source_options=source_options)
        return Suite(
            name,
            suite.specs,
            description=f"{suite.description}; pools: {POOL_SPLITS[split].description}",
            limit=limit,
            source_options=source_options,
            pool_split=split,
        )
    if name.startswith(JSONL_PREFIX):
        path = name[len(JSONL_PREFIX) :]
        if not path:
            raise ConfigurationError(f"suite {name!r}: give a file after {JSONL_PREFIX!r}")
        description = f"the tasks of {path}"
        specs: tuple[SuiteSource, ...] = (SuiteSource(Path(path).stem, name),)
        return Suite(
            name, specs, description=description, limit=limit, source_options=source_options
        )
    try:
        description, specs = SUITES[name]
    except KeyError:
        raise ConfigurationError(
            f"unknown suite {name!r}; choose one of {sorted(SUITES)} or {JSONL_PREFIX}<path>"
            f", optionally followed by @<pool split> ({', '.join(POOL_SPLITS)})"
        ) from None
    return Suite(name, specs, description=description, limit=limit, source_options=source_options)


def list_suites() -> list[dict[str, Any]]:
    """One row per suite (``name``, ``sources``, ``size``, ``description``), plus
    ``jsonl:<path>``. ``size`` is the total known without reading data, else ``None``."""
    rows: list[dict[str, Any]] = []
    for name in (*SUITES, *POOL_SPLIT_SUITES):
        suite = get_suite(name)
        total: int | None = 0
        for spec in suite.specs:
            source = make_task_source(spec.source, **spec.options)  # lazy: reads nothing
            # Loaders know their size without data; procedural sources generate lazily.
            size = source.expected_size
            total = total + size if total is not None and isinstance(size, int) else None
        rows.append(
            {
                "name": name,
                "sources": ", ".join(spec.name for spec in suite.specs),
                "size": total,
                "description": suite.description,
            }
        )
    rows.append(
        {
            "name": f"{JSONL_PREFIX}<path>",
            "sources": "the file",
            "size": None,
            "description": "any JSON Lines task file",
        }
    )
    return rows


@dataclasses.dataclass(frozen=True)
class EpisodeSpec:
    """One episode of a run: which task, which repeat, which reset seed."""

    benchmark: str
    task_index: int
    repeat: int
    seed: int

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.benchmark, self.task_index, self.repeat)


def episode_seed(seed: int, benchmark: str, task_index: int, repeat: int) -> int:
    """The env reset seed of one episode (a pure function of its four arguments)."""
    return hash_seed(seed, benchmark, task_index, repeat)


TASK_SPLITS = ("fit", "heldout")
"""The named task splits (module docstring)."""


def task_split(task_id: str) -> str:
    """``"heldout"`` for a quarter of task ids (a hash of the id), else ``"fit"``."""
    return "heldout" if hash_seed("conductor-gym/task-split", task_id) % 4 == 0 else "fit"


@dataclass(frozen=True)
class TaskSelection:
    """Which of a suite's tasks a run plays (module docstring): ``start``/``stop`` a range
    of indices, ``listed`` the entries of a tasks ``file``, ``split`` one of
    :data:`TASK_SPLITS`; ``None`` keeps every task."""

    start: int | None = None
    stop: int | None = None
    file: str | None = None
    listed: tuple[str, ...] | None = None
    split: str | None = None

    def __post_init__(self) -> None:
        if self.split is not None and self.split not in TASK_SPLITS:
            raise ConfigurationError(
                f"task split: unknown {self.split!r}; valid: {list(TASK_SPLITS)}"
            )
        for name in ("start", "stop"):
            value = getattr(self, name)
            if value is not None and (not is_int(value) or value < 0):
                raise ConfigurationError(f"task range: {name} must be an int >= 0, got {value!r}")
        if self.start is not None and self.stop is not None and self.stop <= self.start:
            raise ConfigurationError(f"task range {self.start}:{self.stop} is empty")

    @classmethod
    def build(
        cls,
        task_range: str | None = None,
        tasks_from: str | os.PathLike[str] | None = None,
        split: str | None = None,
    ) -> TaskSelection | None:
        """A selection from the ``evaluate`` flags (``--task-range A:B``, ``--tasks-from
        FILE``, ``--task-split NAME``); ``None`` when none is given. Bad input raises
        ``ConfigurationError`` naming the flag."""
        if task_range is None and tasks_from is None and split is None:
            return None
        start = stop = None
        if task_range is not None:
            first, colon, last = task_range.partition(":")
            try:
                start = int(first) if first.strip() else None
                stop = int(last) if last.strip() else None
            except ValueError:
                colon = ""
            if not colon:
                raise ConfigurationError(
                    f"--task-range: expected A:B (task indices), got {task_range!r}"
                )
        listed = None
        if tasks_from is not None:
            try:
                text = Path(tasks_from).read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigurationError(f"--tasks-from: cannot read {tasks_from}: {exc}") from None
            listed = tuple(
                entry for line in text.splitlines() if (entry := line.split("#")[0].strip())
            )
            if not listed:
                raise ConfigurationError(f"--tasks-from: {tasks_from} lists no task")
        return cls(
            start, stop, None if tasks_from is None else os.fspath(tasks_from), listed, split
        )

    def indices(self, source: TaskSource) -> list[int]:
        """The kept task indices of ``source``, in order (reads its tasks' ids only when a
        file or a split is given)."""
        size = len(source)
        kept = range(self.start or 0, min(size, size if self.stop is None else self.stop))
        if self.listed is None and self.split is None:
            return list(kept)
        ids = [source[i].id for i in kept]
        out = []
        wanted = set(self.listed or ())
        for i, task_id in zip(kept, ids, strict=True):
            if self.listed is not None and task_id not in wanted and str(i) not in wanted:
                continue
            if self.split is not None and task_split(task_id) != self.split:
                continue
            out.append(i)
        return out

    def info(self) -> dict[str, Any]:
        """What results record (``suite.tasks``)."""
        out: dict[str, Any] = {}
        if self.start is not None or self.stop is not None:
            out["range"] = [self.start, self.stop]
        if self.listed is not None:
            out["file"] = self.file
            out["listed"] = len(self.listed)
        if self.split is not None:
            out["split"] = self.split
        return out


def episode_plan(
    suite: Suite, repeats: int, seed: int, tasks: TaskSelection | None = None
) -> list[EpisodeSpec]:
    """Every episode of a run, in plan order (repeat, then source, then task index);
    ``tasks`` keeps some of the tasks (module docstring)."""
    kept = {
        name: (range(len(source)) if tasks is None else tasks.indices(source))
        for name, source in suite.sources.items()
    }
    return [
        EpisodeSpec(name, i, r, episode_seed(seed, name, i, r))
        for r in range(repeats)
        for name in suite.sources
        for i in kept[name]
    ]
