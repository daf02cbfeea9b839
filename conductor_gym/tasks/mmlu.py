"""MMLU (``cais/mmlu``, config ``all``): 4-option questions on 57 subjects, graded by ``choice``.

Source: the parquet shards ``all/<split>-*.parquet``. Fields per the dataset card's
``dataset_info`` (config ``all``): ``question`` (str), ``subject`` (str), ``choices``
(sequence of str), ``answer`` (ClassLabel with names ``A``..``D``, stored as an int).
Splits: ``test`` (14,042, the paper's evaluation set), ``validation`` (1,531), ``dev``
(285) and ``auxiliary_train`` (99,842, the training pool; its ``subject`` is empty).

Contract. Row ``n`` of a split becomes ``Task(id=f"mmlu/<split>/<n>", question=<the
stem, one "A) ..." line per choice, an instruction to answer with the letter>,
reference="ABCD"[answer], grader="choice")`` with ``metadata`` ``profile``,
``num_choices``, ``subject``, ``solution`` (the letter) and ``distractors`` (the other
letters). ``split`` takes the Hub split names; ``"train"`` is an alias of
``"auxiliary_train"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks.base import Task
from conductor_gym.tasks.dataset_source import DatasetTasks, SourceConfig
from conductor_gym.tasks.errors import TaskSourceError
from conductor_gym.tasks.formatting import lettered_question, option_letters
from conductor_gym.tasks.hub import HubFiles

__all__ = ["MMLU_SIZES", "MmluConfig", "MmluTasks"]

MMLU_SIZES = {"test": 14042, "validation": 1531, "dev": 285, "auxiliary_train": 99842}
"""Rows per split of ``cais/mmlu`` config ``all`` (dataset card)."""

_REPO = "cais/mmlu"
_ALIASES = {"train": "auxiliary_train"}


@dataclass(frozen=True)
class MmluConfig(SourceConfig):
    """Options of :class:`MmluTasks` (plus those of :class:`SourceConfig`).

    Attributes:
        split: ``"test"`` (default), ``"validation"``, ``"dev"``, ``"auxiliary_train"``
            or its alias ``"train"``.
    """

    split: str = "test"

    @property
    def hub_split(self) -> str:
        """The Hub split name (aliases resolved)."""
        return _ALIASES.get(self.split, self.split)

    def validate(self) -> None:
        """Check every field; ``ConfigurationError`` names the first bad one."""
        super().validate()
        if self.hub_split not in MMLU_SIZES:
            valid = sorted([*MMLU_SIZES, *_ALIASES])
            raise ConfigurationError(f"split: must be one of {valid}, got {self.split!r}")


class MmluTasks(DatasetTasks[MmluConfig]):
    """MMLU as a task source (see the module docstring)."""

    domain = "mmlu"

    @classmethod
    def default_config(cls) -> MmluConfig:
        """Test split, dataset order."""
        return MmluConfig()

    def hub_files(self) -> HubFiles:
        """The parquet shards of the configured split of config ``all``."""
        return HubFiles(_REPO, (f"all/{self.config.hub_split}-*.parquet",), "parquet")

    def variant(self) -> str:
        """The Hub split when it is not ``"test"``."""
        return "" if self.config.hub_split == "test" else self.config.hub_split

    @property
    def expected_size(self) -> int:
        """The dataset card's row count for the split."""
        return MMLU_SIZES[self.config.hub_split]

    def build(self, rows: list[dict[str, Any]]) -> list[Task]:
        """One lettered ``choice`` task per row."""
        split = self.config.hub_split
        tasks = []
        for n, row in enumerate(rows):
            try:
                choices = [str(choice).strip() for choice in row["choices"]]
                letters = option_letters(len(choices))
                answer = int(row["answer"])
                reference = letters[answer]
            except (KeyError, TypeError, ValueError, IndexError) as exc:
                raise TaskSourceError(
                    _REPO,
                    f"{split} row {n} lacks a field or has a bad value ({exc!r}).",
                    "Expected fields: question, subject, choices (list), answer (index).",
                ) from exc
            tasks.append(
                self.task(
                    f"{split}/{n}",
                    lettered_question(str(row["question"]), choices),
                    reference,
                    "choice",
                    {
                        "num_choices": len(choices),
                        "subject": str(row.get("subject") or ""),
                        "solution": reference,
                        "distractors": [x for x in letters if x != reference],
                    },
                )
            )
        return tasks
