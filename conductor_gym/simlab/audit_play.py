"""How :mod:`conductor_gym.simlab.audit` plays its plans: paired runs on seed blocks.

A :class:`Player` plays :class:`~conductor_gym.simlab.audit_plans.AuditPlan` objects on
blocks of seeds of a suite (optionally a subset of its tasks: one family, or the
lettered questions), memoises each plan's outcomes as a *run* that grows on the same
seeds (a screen is the first part of a full play), counts every episode toward the
audit's budget, and saves its runs to a checkpoint an interrupted audit resumes from.
:class:`Scored` is a plan's outcomes on one block; :func:`paired` the mean difference of
two such and its paired standard error.
"""

from __future__ import annotations

import math
import pickle
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.reward import Outcome
from conductor_gym.errors import ConfigurationError
from conductor_gym.simlab.audit_plans import AuditPlan, Worker
from conductor_gym.tasks.base import Task

__all__ = ["Player", "Scored", "lettered", "paired"]

_CHECKPOINT_FORMAT = "runs-2"
"""Written into a checkpoint's identity: a file of an older audit is refused, not misread."""


@dataclass(frozen=True)
class Scored:
    """A plan's correct/incorrect outcome per seed of one block of one suite."""

    plan: AuditPlan
    tasks: str
    outcomes: tuple[bool, ...]

    @property
    def accuracy(self) -> float:
        return 100.0 * sum(self.outcomes) / len(self.outcomes)

    def versus(self, other: Scored) -> tuple[float, float]:
        """``(mean difference, its paired SE)`` in points, ``self - other``."""
        return paired(self.outcomes, other.outcomes)


def paired(a: Sequence[bool], b: Sequence[bool]) -> tuple[float, float]:
    diffs = [float(x) - float(y) for x, y in zip(a, b, strict=True)]
    mean = statistics.fmean(diffs)
    se = statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else 0.0
    return 100.0 * mean, 100.0 * se


class Player:
    """Plays :class:`AuditPlan` objects on seed blocks of suites, memoised, counting
    every episode played; ``k`` and ``shuffle`` are the pool's draw (a randomised pool
    when either is set: its workers are then the positions ``0 .. k-1``).

    A *run* is a plan's outcomes on one block of one suite, optionally on one subset of
    its tasks (a family's name, or ``"lettered"``): the block's seeds in order, those
    whose task is in the subset. A run grows: a screen plays its first ``n`` episodes
    and a later full evaluation plays only the rest, on the same seeds."""

    def __init__(
        self, pool: Any, seed: int, per_plan: int, *, k: int | None = None, shuffle: bool = False
    ) -> None:
        self.pool = pool
        self.seed = seed
        self.per_plan = per_plan
        self.k = k
        self.shuffle = shuffle
        self.randomised = k is not None or shuffle
        self.episodes = 0
        self._envs: dict[tuple[str, int], ConductorEnv] = {}
        self._runs: dict[tuple[Any, ...], list[bool]] = {}
        self._plans: dict[tuple[Any, ...], AuditPlan] = {}
        self._credited: dict[tuple[Any, ...], int] = {}
        self._seeds: dict[tuple[str, int, str | None], list[int]] = {}
        self._domains: dict[tuple[str, int], str] = {}
        self._checkpoint: Path | None = None
        self._identity: tuple[Any, ...] = ()
        self._since_save = 0

    def resume(self, path: Path, identity: tuple[Any, ...]) -> None:
        """Save runs to ``path`` from now on, and replay those saved there by an audit of
        the same ``identity`` (its arguments); another audit's file raises."""
        self._checkpoint, self._identity = path, (_CHECKPOINT_FORMAT, *identity)
        if not path.exists():
            return
        with path.open("rb") as handle:
            saved = pickle.load(handle)
        if saved.get("identity") != self._identity:
            raise ConfigurationError(
                f"audit: checkpoint {str(path)!r} was written by another audit "
                f"({saved.get('identity')}); remove it or give another path"
            )
        self._runs = {key: list(run) for key, run in saved["runs"].items()}

    def save(self, *, force: bool = False) -> None:
        """Write the checkpoint (every 50 evaluations, or now with ``force``)."""
        self._since_save += 1
        if self._checkpoint is None or not (force or self._since_save >= 50):
            return
        self._since_save = 0
        partial = self._checkpoint.with_suffix(self._checkpoint.suffix + ".partial")
        with partial.open("wb") as handle:
            pickle.dump({"identity": self._identity, "runs": self._runs}, handle)
        partial.replace(self._checkpoint)

    def env(self, tasks: str, max_steps: int) -> ConductorEnv:
        key = (tasks, max_steps)
        if key not in self._envs:
            self._envs[key] = ConductorEnv(
                tasks=tasks,
                pool=self.pool,
                max_steps=max_steps,
                k=self.k,
                shuffle_workers=self.shuffle,
            )
        return self._envs[key]

    def names(self, tasks: str) -> tuple[Worker, ...]:
        """The workers plans choose among: the pool's names in fixed order, or the
        positions ``0 .. k-1`` of a randomised pool."""
        env = self.env(tasks, 5)
        _, info = env.reset(seed=self.seed)
        if self.randomised:
            return tuple(range(int(info["num_workers"])))
        return tuple(info["pool"])

    def tried(self, plan: AuditPlan, tasks: str, block: int, subset: str | None = None) -> bool:
        """Whether ``plan`` was played on that block (and subset) at all, a screen too."""
        return self._credited.get(self._key(plan, tasks, block, subset), 0) > 0

    def _key(self, plan: AuditPlan, tasks: str, block: int, subset: str | None) -> tuple[Any, ...]:
        return (plan.key(), tasks, block, subset)

    def played(self, plan: AuditPlan, tasks: str, block: int, subset: str | None = None) -> bool:
        """Whether ``plan`` was played in full on that block (and subset) of ``tasks``."""
        key = self._key(plan, tasks, block, subset)
        return self._credited.get(key, 0) >= len(self.seeds(tasks, block, subset))

    def scored(self, tasks: str, block: int, subset: str | None = None) -> list[Scored]:
        """Every plan played in full on that block (and subset) of ``tasks``, in the
        order they were first played."""
        full = len(self.seeds(tasks, block, subset))
        return [
            Scored(self._plans[key], tasks, tuple(self._runs[key][:full]))
            for key, credited in self._credited.items()
            if key[1:] == (tasks, block, subset) and credited >= full
        ]

    def domain(self, tasks: str, seed: int) -> str:
        """The question family (task domain) the env draws at ``seed``."""
        if (tasks, seed) not in self._domains:
            env = self.env(tasks, 5)
            _, info = env.reset(seed=seed)
            self._domains[tasks, seed] = env.tasks[info["task_index"]].domain
        return self._domains[tasks, seed]

    def seeds(self, tasks: str, block: int, subset: str | None = None) -> list[int]:
        """The ``per_plan`` seeds of a block (of its subset: a family, or ``"lettered"``;
        fewer when the subset is rare: at most ``50 * per_plan`` seeds are looked at)."""
        key = (tasks, block, subset)
        if key not in self._seeds:
            start = self.seed + block * 1_000_003
            if subset is None:
                chosen = list(range(start, start + self.per_plan))
            else:
                chosen = []
                env = self.env(tasks, 5)
                for seed in range(start, start + 50 * self.per_plan):
                    if subset == "lettered":
                        _, info = env.reset(seed=seed)
                        inside = lettered(env.tasks[info["task_index"]])
                    else:
                        inside = self.domain(tasks, seed) == subset
                    if inside:
                        chosen.append(seed)
                        if len(chosen) == self.per_plan:
                            break
            self._seeds[key] = chosen
        return self._seeds[key]

    def families(self, tasks: str, block: int) -> list[str]:
        """The question family (task domain) of each episode of a block, in order."""
        return [self.domain(tasks, seed) for seed in self.seeds(tasks, block)]

    def play(
        self,
        plan: AuditPlan,
        tasks: str,
        block: int,
        *,
        subset: str | None = None,
        n: int | None = None,
    ) -> Scored:
        """``plan``'s outcomes on the block (its ``subset``; ``n``: only its first ``n``
        episodes, a screen). Every episode newly asked for counts once toward the budget,
        also when a checkpoint already holds it (so a resumed audit spends its budget
        exactly as an uninterrupted one)."""
        seeds = self.seeds(tasks, block, subset)
        wanted = len(seeds) if n is None else min(n, len(seeds))
        key = self._key(plan, tasks, block, subset)
        self._plans.setdefault(key, plan)
        run = self._runs.setdefault(key, [])
        credited = self._credited.get(key, 0)
        if credited < wanted:
            if len(run) < wanted:
                env = self.env(tasks, max(5, len(plan.steps)))
                for seed in seeds[len(run) : wanted]:
                    _, info = env.reset(seed=seed)
                    task = env.tasks[info["task_index"]]
                    completion = plan.completion(info, task, random.Random(f"claim:{seed}"))
                    _, _, _, _, step_info = env.step(completion)
                    run.append(step_info["outcome"] is Outcome.CORRECT)
            self.episodes += wanted - credited
            self._credited[key] = wanted
            self.save()
        return Scored(plan, tasks, tuple(run[:wanted]))


def lettered(task: Task) -> bool:
    return "num_choices" in task.metadata
