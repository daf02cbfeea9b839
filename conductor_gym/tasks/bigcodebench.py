"""BigCodeBench-Hard, "complete" prompts (``bigcode/bigcodebench-hard``): 148 library-heavy
Python function-completion tasks, graded by ``code`` (unittest).

Source: the parquet shard ``data/<split>-*.parquet``; the splits are release versions
(``v0.1.0_hf`` .. ``v0.1.4``, 148 rows each). Fields per the dataset card's
``dataset_info``: ``task_id``, ``complete_prompt``, ``instruct_prompt``,
``canonical_solution``, ``code_prompt``, ``test``, ``entry_point``, ``doc_struct``,
``libs`` (all strings; ``libs`` is a Python list literal such as ``"['numpy', 're']"``),
``q_idx`` (int64), ``question``, ``score`` (float64), ``_id``.

Contract (the ``code`` grader's input). Each row becomes ``Task(id="bigcodebench/<n>"``
for ``task_id`` ``"BigCodeBench/<n>"``, ``question=<instruction + complete_prompt in a
python block>``, ``reference=complete_prompt + canonical_solution`` (the canonical
program, runnable as is), ``grader="code")`` with ``metadata`` ``code_kind`` =
``"unittest"``, ``test_code`` (the ``test`` field: a ``unittest.TestCase`` class),
``entry_point``, ``libs`` (list of module names), ``task_id``, ``profile`` and
``solution`` (the canonical program in a python block, as a worker would answer).

Tasks whose libraries are not importable here are kept, not dropped or failed silently:
:meth:`BigCodeBenchTasks.missing_libraries` reports them.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass
from typing import Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks.base import Task
from conductor_gym.tasks.dataset_source import DatasetTasks, SourceConfig
from conductor_gym.tasks.errors import TaskSourceError
from conductor_gym.tasks.hub import HubFiles

__all__ = ["BCB_HARD_SIZE", "BigCodeBenchConfig", "BigCodeBenchTasks", "parse_libs"]

BCB_HARD_SIZE = 148
"""Tasks in BigCodeBench-Hard."""

_REPO = "bigcode/bigcodebench-hard"
_VERSIONS = ("v0.1.0_hf", "v0.1.1", "v0.1.2", "v0.1.3", "v0.1.4")


def parse_libs(text: Any) -> list[str]:
    """The ``libs`` field as a list of module names (a list, or a list literal string)."""
    value: Any = text
    if isinstance(text, str):
        try:
            value = ast.literal_eval(text) if text.strip() else []
        except (ValueError, SyntaxError) as exc:
            raise ValueError(f"libs is not a list literal: {text!r}") from exc
    if not isinstance(value, list | tuple) or not all(isinstance(x, str) for x in value):
        raise ValueError(f"libs must be a list of strings, got {text!r}")
    return [str(x).strip() for x in value if str(x).strip()]


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module.split(".")[0]) is not None
    except (ImportError, ValueError):
        return False


@dataclass(frozen=True)
class BigCodeBenchConfig(SourceConfig):
    """Options of :class:`BigCodeBenchTasks` (plus those of :class:`SourceConfig`).

    Attributes:
        split: The release (``"v0.1.4"`` default, down to ``"v0.1.0_hf"``).
    """

    split: str = "v0.1.4"

    def validate(self) -> None:
        """Check every field; ``ConfigurationError`` names the first bad one."""
        super().validate()
        if self.split not in _VERSIONS:
            raise ConfigurationError(f"split: must be one of {_VERSIONS}, got {self.split!r}")


class BigCodeBenchTasks(DatasetTasks[BigCodeBenchConfig]):
    """BigCodeBench-Hard (complete) as a task source (see the module docstring)."""

    domain = "bigcodebench"

    @classmethod
    def default_config(cls) -> BigCodeBenchConfig:
        """Release v0.1.4, dataset order."""
        return BigCodeBenchConfig()

    def hub_files(self) -> HubFiles:
        """The parquet shard of the configured release."""
        return HubFiles(_REPO, (f"data/{self.config.split}-*.parquet",), "parquet")

    @property
    def expected_size(self) -> int:
        """148."""
        return BCB_HARD_SIZE

    def build(self, rows: list[dict[str, Any]]) -> list[Task]:
        """One ``unittest`` code task per row."""
        tasks = []
        for n, row in enumerate(rows):
            try:
                task_id = str(row["task_id"])
                prompt = str(row["complete_prompt"])
                program = prompt + str(row["canonical_solution"])
                meta = {
                    "code_kind": "unittest",
                    "test_code": str(row["test"]),
                    "entry_point": str(row["entry_point"]),
                    "libs": parse_libs(row["libs"]),
                    "task_id": task_id,
                    "solution": f"```python\n{program.rstrip()}\n```",
                }
            except (KeyError, ValueError) as exc:
                raise TaskSourceError(
                    _REPO,
                    f"row {n} lacks a field or has a bad value ({exc!r}).",
                    "Expected fields: task_id, complete_prompt, canonical_solution, test, "
                    "entry_point, libs.",
                ) from exc
            question = (
                "Complete the following Python function so that it does what its docstring "
                "says. Give the whole code, imports and signature included, in one python "
                f"code block.\n\n```python\n{prompt.rstrip()}\n```"
            )
            local_id = task_id.split("/", 1)[1] if "/" in task_id else task_id
            tasks.append(self.task(local_id, question, program, "code", meta))
        return tasks

    def missing_libraries(self) -> dict[str, list[str]]:
        """Libraries the tasks import that are not importable here -> the task ids needing
        each (loads the data). Empty when every task can run in this environment."""
        missing: dict[str, list[str]] = {}
        verdicts: dict[str, bool] = {}
        for task in self.load():
            for lib in task.metadata["libs"]:
                if lib not in verdicts:
                    verdicts[lib] = _importable(lib)
                if not verdicts[lib]:
                    missing.setdefault(lib, []).append(task.id)
        return dict(sorted(missing.items()))
