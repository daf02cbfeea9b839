"""MATH500 (``HuggingFaceH4/MATH-500``): 500 competition maths problems, graded by ``math``.

Source: the repository's ``test.jsonl`` (its only split, ``test``). Fields per the dataset
card's ``dataset_info``: ``problem`` (str), ``solution`` (str), ``answer`` (str),
``subject`` (str), ``level`` (int64), ``unique_id`` (str, e.g. ``"test/algebra/1.json"``).

Contract. Each row becomes ``Task(id="math500/<unique_id>", question=problem,
reference=answer, grader="math")`` with ``metadata`` ``profile``, ``subject``, ``level``,
``unique_id``. The Conductor paper uses a 300 train / 100 test split of the 500 problems
without saying which; ours is fixed by :func:`~conductor_gym.tasks.splits.hash_split` with
salt ``"math500"`` over ``unique_id``: ordered by ``sha256("math500:" + unique_id)``, the
first 100 are ``test``, the next 100 ``val`` (unused by the paper) and the last 300
``train``. ``split`` is ``"test"`` (default), ``"train"``, ``"val"`` or ``"all"``; each
keeps dataset order unless ``shuffle=True``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conductor_gym.tasks.base import Task
from conductor_gym.tasks.dataset_source import HashSplitTasks, SplitConfig
from conductor_gym.tasks.errors import TaskSourceError
from conductor_gym.tasks.hub import HubFiles
from conductor_gym.tasks.splits import hash_split

__all__ = ["MATH500_SIZE", "Math500Config", "Math500Tasks"]

MATH500_SIZE = 500
"""Problems in MATH-500."""

_FILES = HubFiles("HuggingFaceH4/MATH-500", ("test.jsonl",), "json")


@dataclass(frozen=True)
class Math500Config(SplitConfig):
    """Options of :class:`Math500Tasks` (plus those of :class:`SourceConfig`).

    Attributes:
        split: ``"test"`` (the paper's 100), ``"train"`` (its 300), ``"val"`` (the other
            100) or ``"all"`` (500).
    """


class Math500Tasks(HashSplitTasks[Math500Config]):
    """MATH500 as a task source (see the module docstring)."""

    total_size = MATH500_SIZE
    domain = "math500"

    @classmethod
    def default_config(cls) -> Math500Config:
        """Test split, dataset order."""
        return Math500Config()

    def hub_files(self) -> HubFiles:
        """``HuggingFaceH4/MATH-500``'s ``test.jsonl``."""
        return _FILES

    def build(self, rows: list[dict[str, Any]]) -> list[Task]:
        """One ``math`` task per row."""
        tasks = []
        for n, row in enumerate(rows):
            try:
                unique_id = str(row["unique_id"])
                tasks.append(
                    self.task(
                        unique_id,
                        str(row["problem"]).strip(),
                        str(row["answer"]).strip(),
                        "math",
                        {
                            "subject": str(row["subject"]),
                            "level": int(row["level"]),
                            "unique_id": unique_id,
                        },
                    )
                )
            except (KeyError, TypeError, ValueError) as exc:
                raise TaskSourceError(
                    _FILES.repo_id,
                    f"row {n} lacks a field or has a bad value ({exc!r}).",
                    "Expected fields: problem, solution, answer, subject, level, unique_id.",
                ) from exc
        return tasks

    def select(self, tasks: list[Task]) -> list[Task]:
        """The configured part of the hash split over ``unique_id``."""
        keys = [str(task.metadata["unique_id"]) for task in tasks]
        return [tasks[i] for i in hash_split(keys, self.domain)[self.config.split]]
