"""GPQA-Diamond (``Idavidrein/gpqa``, config ``gpqa_diamond``): 198 graduate science
questions, graded by ``choice``. The dataset is **gated**: accept its terms on the Hub
and set ``HF_TOKEN`` (see :class:`~conductor_gym.tasks.errors.TaskSourceError`).

Source: the repository's ``gpqa_diamond.csv`` (its only split, ``train``). Columns used,
per the dataset card's ``dataset_info``: ``Question``, ``Correct Answer``, ``Incorrect
Answer 1``, ``Incorrect Answer 2``, ``Incorrect Answer 3``, ``Record ID``, ``High-level
domain``, ``Subdomain`` (all strings; the file has some 60 more columns about its
writing and validation, which are ignored).

Contract. The four options are shuffled per item: option ``i`` (0 = the correct answer,
1..3 = the incorrect answers in column order) is placed by ascending
``sha256(f"gpqa-diamond:{option_seed}:{record_id}:{i}")``, so the permutation depends
only on the item's ``Record ID`` (and ``option_seed``, default 0), never on the order or
the seed of the source. Each row becomes ``Task(id="gpqa-diamond/<Record ID>",
question=<stem and "A) ..." lines>, reference=<letter of the correct answer>,
grader="choice")`` with ``metadata`` ``profile``, ``num_choices`` (4), ``record_id``,
``high_level_domain``, ``subdomain``, ``solution`` and ``distractors``. ``subset`` may
also be ``"gpqa_main"`` (448) or ``"gpqa_extended"`` (546).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conductor_gym._validate import is_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks.base import Task
from conductor_gym.tasks.dataset_source import DatasetTasks, SourceConfig
from conductor_gym.tasks.errors import TaskSourceError
from conductor_gym.tasks.formatting import lettered_question, option_letters
from conductor_gym.tasks.hub import HubFiles
from conductor_gym.tasks.splits import hash_rank

__all__ = ["GPQA_SIZES", "GpqaConfig", "GpqaTasks", "option_permutation"]

GPQA_SIZES = {"gpqa_diamond": 198, "gpqa_main": 448, "gpqa_extended": 546}
"""Questions per subset (GPQA paper)."""

_REPO = "Idavidrein/gpqa"
_OPTION_COLUMNS = (
    "Correct Answer",
    "Incorrect Answer 1",
    "Incorrect Answer 2",
    "Incorrect Answer 3",
)


def option_permutation(record_id: str, option_seed: int = 0) -> list[int]:
    """``order[k]`` = the original option (0 = correct) shown at position ``k``."""
    keys = [f"{record_id}:{i}" for i in range(len(_OPTION_COLUMNS))]
    return hash_rank(keys, f"gpqa-diamond:{option_seed}")


@dataclass(frozen=True)
class GpqaConfig(SourceConfig):
    """Options of :class:`GpqaTasks` (plus those of :class:`SourceConfig`).

    Attributes:
        subset: ``"gpqa_diamond"`` (default), ``"gpqa_main"`` or ``"gpqa_extended"``.
        option_seed: Changes every item's option permutation (default 0).
    """

    subset: str = "gpqa_diamond"
    option_seed: int = 0

    def validate(self) -> None:
        """Check every field; ``ConfigurationError`` names the first bad one."""
        super().validate()
        if self.subset not in GPQA_SIZES:
            raise ConfigurationError(
                f"subset: must be one of {sorted(GPQA_SIZES)}, got {self.subset!r}"
            )
        if not is_int(self.option_seed):
            raise ConfigurationError(f"option_seed: must be an int, got {self.option_seed!r}")


class GpqaTasks(DatasetTasks[GpqaConfig]):
    """GPQA (Diamond by default) as a task source (see the module docstring)."""

    domain = "gpqa-diamond"

    @classmethod
    def default_config(cls) -> GpqaConfig:
        """Diamond, option seed 0, dataset order."""
        return GpqaConfig()

    def hub_files(self) -> HubFiles:
        """``<subset>.csv`` of the gated ``Idavidrein/gpqa``."""
        return HubFiles(_REPO, (f"{self.config.subset}.csv",), "csv", gated=True)

    def variant(self) -> str:
        """The subset when it is not Diamond."""
        return "" if self.config.subset == "gpqa_diamond" else self.config.subset

    @property
    def expected_size(self) -> int:
        """198 for Diamond (448 main, 546 extended)."""
        return GPQA_SIZES[self.config.subset]

    def build(self, rows: list[dict[str, Any]]) -> list[Task]:
        """One lettered ``choice`` task per row, options permuted per item."""
        tasks = []
        letters = option_letters(len(_OPTION_COLUMNS))
        for n, row in enumerate(rows):
            try:
                record_id = str(row.get("Record ID") or "").strip() or f"row{n}"
                options = [str(row[column]).strip() for column in _OPTION_COLUMNS]
                stem = str(row["Question"]).strip()
            except KeyError as exc:
                raise TaskSourceError(
                    _REPO,
                    f"row {n} lacks the column {exc}.",
                    f"Expected columns: Question, {', '.join(_OPTION_COLUMNS)}, Record ID.",
                ) from exc
            if not stem or not all(options):
                raise TaskSourceError(
                    _REPO, f"row {n} ({record_id}) has an empty question or option."
                )
            order = option_permutation(record_id, self.config.option_seed)
            reference = letters[order.index(0)]
            tasks.append(
                self.task(
                    record_id,
                    lettered_question(stem, [options[i] for i in order]),
                    reference,
                    "choice",
                    {
                        "num_choices": len(options),
                        "record_id": record_id,
                        "high_level_domain": str(row.get("High-level domain") or ""),
                        "subdomain": str(row.get("Subdomain") or ""),
                        "solution": reference,
                        "distractors": [x for x in letters if x != reference],
                    },
                )
            )
        return tasks
