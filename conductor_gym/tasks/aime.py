"""AIME 2025 (``opencompass/AIME2025``, configs ``AIME2025-I`` and ``AIME2025-II``): 30
problems with integer answers 0..999, graded by ``math``.

Source: the repository's ``aime2025-I.jsonl`` and ``aime2025-II.jsonl`` (split ``test``
of each config, 15 rows each, per the dataset card's ``configs``). Fields: ``question``
(str) and ``answer`` (the integer answer, as a string).

Contract. Problem ``k`` (1-based, file order) of part ``P`` (``"I"`` or ``"II"``, read
from the file name ``...-I.jsonl`` / ``...-II.jsonl``; other names keep their stem)
becomes ``Task(id=f"aime25/{P}-{k}", question=question, reference=<answer, stripped>,
grader="math")`` with ``metadata`` ``profile``, ``part`` and ``problem`` (``k``). All 30
are the test set (the paper evaluates on all of them); ``part`` restricts to one exam.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks.base import Task
from conductor_gym.tasks.dataset_source import DatasetTasks, SourceConfig
from conductor_gym.tasks.errors import TaskSourceError
from conductor_gym.tasks.hub import HubFiles, read_rows

__all__ = ["AIME25_SIZE", "Aime25Config", "Aime25Tasks"]

AIME25_SIZE = 30
"""Problems in AIME 2025 I and II together."""

_REPO = "opencompass/AIME2025"
_PART_FILES = {"I": "aime2025-I.jsonl", "II": "aime2025-II.jsonl"}
_PART = re.compile(r"-(I{1,2})$", re.IGNORECASE)


@dataclass(frozen=True)
class Aime25Config(SourceConfig):
    """Options of :class:`Aime25Tasks` (plus those of :class:`SourceConfig`).

    Attributes:
        part: ``"both"`` (default, 30 problems), ``"I"`` or ``"II"`` (15 each).
    """

    part: str = "both"

    def validate(self) -> None:
        """Check every field; ``ConfigurationError`` names the first bad one."""
        super().validate()
        if self.part not in ("both", "I", "II"):
            raise ConfigurationError(f"part: must be 'both', 'I' or 'II', got {self.part!r}")


class Aime25Tasks(DatasetTasks[Aime25Config]):
    """AIME 2025 as a task source (see the module docstring)."""

    domain = "aime25"

    @classmethod
    def default_config(cls) -> Aime25Config:
        """Both exams, dataset order."""
        return Aime25Config()

    def hub_files(self) -> HubFiles:
        """The JSON Lines file of each configured part."""
        parts = ("I", "II") if self.config.part == "both" else (self.config.part,)
        return HubFiles(_REPO, tuple(_PART_FILES[p] for p in parts), "json")

    def variant(self) -> str:
        """The part when only one is loaded."""
        return "" if self.config.part == "both" else self.config.part

    @property
    def expected_size(self) -> int:
        """30, or 15 for one part."""
        return AIME25_SIZE if self.config.part == "both" else AIME25_SIZE // 2

    def read(self) -> list[dict[str, Any]]:
        """Each file's rows, tagged with the part its file name gives (``_part``)."""
        files = self.hub_files()
        rows: list[dict[str, Any]] = []
        for path in self.resolve(files):
            match = _PART.search(path.stem)
            part = match.group(1).upper() if match else path.stem
            for row in read_rows(files.repo_id, [path], "json", cache_dir=self.config.cache_path):
                rows.append({**row, "_part": part})
        return rows

    def build(self, rows: list[dict[str, Any]]) -> list[Task]:
        """One ``math`` task per row, numbered within its part."""
        tasks = []
        counts: dict[str, int] = {}
        for n, row in enumerate(rows):
            part = str(row["_part"])
            counts[part] = counts.get(part, 0) + 1
            try:
                question = str(row["question"]).strip()
                answer = str(row["answer"]).strip()
            except KeyError as exc:
                raise TaskSourceError(
                    _REPO, f"row {n} lacks the field {exc}.", "Expected fields: question, answer."
                ) from exc
            tasks.append(
                self.task(
                    f"{part}-{counts[part]}",
                    question,
                    answer,
                    "math",
                    {"part": part, "problem": counts[part]},
                )
            )
        return tasks
