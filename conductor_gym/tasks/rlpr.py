"""RLPR (``openbmb/RLPR-Train-Dataset``): general-domain reasoning questions with short
reference answers (from WebInstruct), graded by ``freeform``.

Source: the repository's ``rlpr_train.parquet`` (split ``train``, the only one). Fields,
per the dataset card ("data_source, prompt, ability, reward_model, extra_info") and the
verl-style schema it follows: ``data_source`` (str), ``prompt`` (list of ``{"role",
"content"}`` chat messages: a system instruction, then the user's question), ``ability``
(str, the question's field), ``reward_model`` (struct with ``ground_truth`` (str) and
``style``), ``extra_info`` (struct, not used).

Contract. Row ``n`` becomes ``Task(id=f"rlpr/{n}", question=<content of the last user
message, stripped; the system instruction is dropped>, reference=ground_truth,
grader="freeform")`` with ``metadata`` ``profile``, ``ability`` and ``data_source``.

Split. The paper holds a test set out of this training dataset: 77,700 rows, 46,620
train, 15,540 test (so 60 % / 20 %, the last 20 % unused). We reproduce those
proportions exactly with :func:`~conductor_gym.tasks.splits.hash_split`, salt ``"rlpr"``,
keyed by each row's content (``question + "\\x00" + ground_truth``, so the split does not
depend on file order): by ascending ``sha256("rlpr:" + key)`` the first
``round(n / 5)`` rows are ``test``, the next ``round(n / 5)`` ``val`` (unused) and the
remaining ``train``; on 77,700 rows that is 15,540 / 15,540 / 46,620. Which rows the
paper held out is not published, so only the sizes match.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from conductor_gym.tasks.base import Task
from conductor_gym.tasks.dataset_source import HashSplitTasks, SplitConfig
from conductor_gym.tasks.errors import TaskSourceError
from conductor_gym.tasks.hub import HubFiles
from conductor_gym.tasks.splits import hash_split

__all__ = ["RLPR_SIZE", "RlprConfig", "RlprTasks", "user_question"]

RLPR_SIZE = 77_700
"""Rows of the RLPR training dataset, as the Conductor paper reports."""

_FILES = HubFiles("openbmb/RLPR-Train-Dataset", ("rlpr_train.parquet",), "parquet")


def user_question(prompt: Any) -> str:
    """The content of the last ``user`` message of a chat ``prompt`` (stripped).

    Raises ``ValueError`` if ``prompt`` is not a list of messages with a user turn.
    """
    if isinstance(prompt, str):
        return prompt.strip()
    if not isinstance(prompt, list):
        raise ValueError(f"prompt is a {type(prompt).__name__}, not a list of messages")
    contents = [
        str(message.get("content") or "")
        for message in prompt
        if isinstance(message, dict) and message.get("role") == "user"
    ]
    if not contents or not contents[-1].strip():
        raise ValueError("prompt has no non-empty user message")
    return contents[-1].strip()


@dataclass(frozen=True)
class RlprConfig(SplitConfig):
    """Options of :class:`RlprTasks` (plus those of :class:`SourceConfig`).

    Attributes:
        split: ``"test"`` (default; 20 %), ``"train"`` (60 %), ``"val"`` (the unused
            20 %) or ``"all"``.
    """


class RlprTasks(HashSplitTasks[RlprConfig]):
    """RLPR as a task source (see the module docstring)."""

    total_size = RLPR_SIZE
    domain = "rlpr"

    @classmethod
    def default_config(cls) -> RlprConfig:
        """Test split, dataset order."""
        return RlprConfig()

    def hub_files(self) -> HubFiles:
        """``openbmb/RLPR-Train-Dataset``'s ``rlpr_train.parquet``."""
        return _FILES

    def build(self, rows: list[dict[str, Any]]) -> list[Task]:
        """One ``freeform`` task per row."""
        tasks = []
        for n, row in enumerate(rows):
            try:
                question = user_question(row["prompt"])
                reward = row["reward_model"]
                answer = str(reward["ground_truth"]).strip()
            except (KeyError, TypeError, ValueError) as exc:
                raise TaskSourceError(
                    _FILES.repo_id,
                    f"row {n} lacks a field or has a bad value ({exc!r}).",
                    "Expected fields: data_source, prompt (chat messages), ability, "
                    "reward_model.ground_truth.",
                ) from exc
            if not answer:
                raise TaskSourceError(_FILES.repo_id, f"row {n} has an empty ground_truth.")
            tasks.append(
                self.task(
                    str(n),
                    question,
                    answer,
                    "freeform",
                    {
                        "ability": str(row.get("ability") or ""),
                        "data_source": str(row.get("data_source") or ""),
                    },
                )
            )
        return tasks

    def select(self, tasks: list[Task]) -> list[Task]:
        """The configured part of the content-keyed hash split."""
        keys = [f"{task.question}\x00{task.reference}" for task in tasks]
        return [tasks[i] for i in hash_split(keys, self.domain)[self.config.split]]
