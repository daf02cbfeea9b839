"""Calibration splits: procedural tasks guaranteed disjoint from a test source.

Agents that are fitted before they are evaluated (``best-single`` chooses a worker per
domain) must never see the test questions. :class:`CalibrationTasks` is a split of the
offline procedural families that cannot overlap the ``offline`` suite:

* **ids.** A procedural family generates item ``j`` as task ``f"{family}-{j}"`` from
  ``random.Random(f"{seed}:{family}:{j}")``. ``ProceduralTasks`` (and so ``offline``,
  ``offline-ood`` and ``offline/<family>``) uses the items ``j < size / families``;
  this split uses the items ``j >= offset`` (default :data:`CALIBRATION_OFFSET`, one
  million), so no id can coincide with a procedural test source of fewer than a
  million tasks per family. The streams differ, so the items are independent draws of
  the same generator: same domains, same difficulty profile.
* **questions.** Small answer spaces make a generator repeat itself (about 1 % of the
  calibration items of seed 0 ask a question that ``offline`` also asks). Every item
  whose id or question occurs in ``exclude`` (default: the ``offline`` source) is
  skipped and the next item of its family is taken instead, so no question overlaps
  either, by construction and not by chance.

Positions interleave the families as ``ProceduralTasks`` does (position ``i`` belongs to
family ``i % n``), so every prefix is balanced across domains.
"""

from __future__ import annotations

from collections.abc import Sequence

from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks import IN_DOMAIN_FAMILIES, Task, TaskSource, make_task_source
from conductor_gym.tasks.base import LoadedTasks
from conductor_gym.tasks.procedural import ProceduralTasks, TaskFamily

__all__ = ["CALIBRATION_OFFSET", "CalibrationTasks", "calibration_split_for"]

CALIBRATION_OFFSET = 1_000_000
"""First per-family item index of a calibration split."""


class CalibrationTasks(LoadedTasks):
    """``size`` procedural tasks disjoint from ``exclude`` (module docstring).

    Args:
        families: Family names or configs (default: the ``offline`` families).
        size: Number of tasks (>= 1).
        seed: Generator seed (default 0, the ``offline`` seed).
        offset: First item index per family (>= 0).
        exclude: The test source, or its registered name, whose ids and questions are
            left out (``None``: nothing is left out, only the offset separates them).
        name: The split's name.
    """

    def __init__(
        self,
        families: Sequence[str | TaskFamily] = IN_DOMAIN_FAMILIES,
        size: int = 400,
        seed: int = 0,
        *,
        offset: int = CALIBRATION_OFFSET,
        exclude: TaskSource | str | None = "offline",
        name: str = "offline-calibration",
    ) -> None:
        # ProceduralTasks validates families, size and seed the same way.
        self._families = ProceduralTasks(families, size=size, seed=seed).families
        if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
            raise ConfigurationError(f"offset: must be an int >= 0, got {offset!r}")
        self.size = size
        self.seed = seed
        self.offset = offset
        self.exclude = make_task_source(exclude) if isinstance(exclude, str) else exclude
        self.name = name
        self._tasks: list[Task] | None = None

    def load(self) -> list[Task]:
        if self._tasks is None:
            ids: set[str] = set()
            questions: set[str] = set()
            if self.exclude is not None:
                for task in self.exclude:
                    ids.add(task.id)
                    questions.add(task.question)
            cursors = dict.fromkeys(range(len(self._families)), self.offset)
            tasks: list[Task] = []
            for position in range(self.size):
                slot = position % len(self._families)
                family = self._families[slot]
                while True:
                    task = family.generate(cursors[slot], self.seed)
                    cursors[slot] += 1
                    if task.id not in ids and task.question not in questions:
                        break
                tasks.append(task)
            self._tasks = tasks
        return self._tasks

    def __repr__(self) -> str:
        names = [family.name for family in self._families]
        return (
            f"CalibrationTasks({names}, size={self.size}, seed={self.seed}, "
            f"offset={self.offset}, name={self.name!r})"
        )


def calibration_split_for(test: TaskSource | str, size: int = 400) -> CalibrationTasks:
    """The default calibration split for a procedural test source (``"offline"``,
    ``"offline-ood"``, ``"offline/<family>"`` or a ``ProceduralTasks``): its families
    and seed, disjoint from it.

    Raises:
        ConfigurationError: ``test`` is not procedural; a benchmark has its own held-out
            splits (e.g. ``make_task_source("math500", split="val")``): pass one.
    """
    source = make_task_source(test) if isinstance(test, str) else test
    if not isinstance(source, ProceduralTasks):
        raise ConfigurationError(
            f"no default calibration split for task source {source.name!r}: pass "
            "tasks=<a split disjoint from the test split>, e.g. "
            "make_task_source('math500', split='val')"
        )
    return CalibrationTasks(
        source.families,
        size=size,
        seed=source.seed,
        exclude=source,
        name=f"{source.name}-calibration",
    )
