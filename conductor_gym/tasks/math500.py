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
from conductor_gym.tasks.dataset_source import DatasetTasks, SourceConfig
from conductor_gym.tasks.errors import TaskSourceError
from conductor_gym.tasks.hub import HubFiles
from conductor_gym.tasks.splits import SPLITS, hash_split, split_sizes

__all__ = ["MATH500_SIZE", "Math500Config", "Math500Tasks"]

MATH500_SIZE = 500
"""Problems in MATH-500."""

_FILES = HubFiles("HuggingFaceH4/MATH-500", ("test.jsonl",), "json")


@dataclass(frozen=True)
class Math500Config(SourceConfig):
    """Options of :class:`Math500Tasks` (plus those of :class:`SourceConfig`).

    Attributes:
        split: ``"test"`` (the paper's 100), ``"train"`` (its 300), ``"val"`` (the other
            100) or ``"all"`` (500).
    """

    split: str = "test"

    def validate(self) -> None:
        """Check every field; ``ValueError`` names the first bad one."""
        super().validate()
        if self.split not in SPLITS:
            raise ValueError(f"split: must be one of {SPLITS}, got {self.split!r}")


class Math500Tasks(DatasetTasks[Math500Config]):
    """MATH500 as a task source (see the module docstring)."""

    domain = "math500"

    @classmethod
    def default_config(cls) -> Math500Config:
        """Test split, dataset order."""
        return Math500Config()

    def hub_files(self) -> HubFiles:
        """``HuggingFaceH4/MATH-500``'s ``test.jsonl``."""
        return _FILES

    def variant(self) -> str:
        """The split when it is not ``"test"``."""
        return "" if self.config.split == "test" else self.config.split

    @property
    def expected_size(self) -> int:
        """100 (test), 300 (train), 100 (val) or 500 (all)."""
        sizes = split_sizes(MATH500_SIZE)
        return {"test": sizes.test, "val": sizes.val, "train": sizes.train}.get(
            self.config.split, MATH500_SIZE
        )

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
