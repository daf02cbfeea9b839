"""Tasks from a local JSON Lines file: ``make_task_source("jsonl:/path/to/file.jsonl")``.

Contract. Each non-blank line is a JSON object with

* ``question`` (str), ``answer`` (str, or a number written as its JSON text) and
  ``grader`` (str, a grader name such as ``"math"``, ``"choice"``, ``"freeform"``), all
  required;
* optional ``id`` (default ``f"{stem}/{k}"``, ``k`` the 0-based index among the file's
  objects, ``stem`` the file name without suffix), ``domain`` (default ``stem``) and
  ``metadata`` (an object; ``metadata["profile"]`` defaults to the domain).

The file is read lazily (first ``len()``, indexing, iteration or :meth:`JsonlTasks.load`)
with the standard library only. Order is file order, or with ``shuffle=True`` the seeded
hash order of :func:`~conductor_gym.tasks.splits.shuffled` (salt ``f"jsonl:{seed}"``: it
depends only on the ids and the seed). A missing file, bad JSON, a missing field or a
duplicate id raises :class:`~conductor_gym.tasks.errors.TaskSourceError` naming
``path:line``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from conductor_gym._validate import is_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks.base import LoadedTasks, Task
from conductor_gym.tasks.errors import TaskSourceError
from conductor_gym.tasks.splits import shuffled

__all__ = ["JSONL_PREFIX", "JsonlTasks"]

JSONL_PREFIX = "jsonl:"
"""The registry prefix: ``"jsonl:<path>"`` names a :class:`JsonlTasks`."""


class JsonlTasks(LoadedTasks):
    """A task source over a local JSON Lines file (see the module docstring).

    Args:
        path: The file.
        name: The source's name (default ``f"jsonl:{path}"``).
        seed: Seed of the order when ``shuffle`` is true.
        shuffle: Seeded hash order instead of file order.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        name: str | None = None,
        seed: int = 0,
        shuffle: bool = False,
    ) -> None:
        if not str(path):
            raise ConfigurationError("path: give the JSON Lines file to read")
        if not is_int(seed):
            raise ConfigurationError(f"seed: must be an int, got {seed!r}")
        self.path = Path(path)
        self.name: str = name or f"{JSONL_PREFIX}{path}"
        self.seed = seed
        self.shuffle = bool(shuffle)
        self._tasks: list[Task] | None = None

    @property
    def expected_size(self) -> None:
        """Unknown until the file is read."""
        return None

    def offline_available(self) -> bool:
        """Whether the file exists (a local file needs no network)."""
        return self.path.is_file()

    def _task(self, line: int, index: int, record: Any) -> Task:
        where = f"{self.path}:{line}"
        if not isinstance(record, dict):
            raise TaskSourceError(str(self.path), f"{where} is not a JSON object.")
        missing = [key for key in ("question", "answer", "grader") if key not in record]
        if missing:
            raise TaskSourceError(
                str(self.path),
                f"{where} lacks {missing}.",
                "Each line needs question, answer and grader (optional: id, domain, metadata).",
            )
        question, answer, grader = record["question"], record["answer"], record["grader"]
        if not isinstance(question, str) or not question.strip():
            raise TaskSourceError(str(self.path), f"{where}: question must be a non-empty string.")
        if isinstance(answer, bool) or not isinstance(answer, str | int | float):
            raise TaskSourceError(str(self.path), f"{where}: answer must be a string or a number.")
        if not isinstance(grader, str) or not grader:
            raise TaskSourceError(str(self.path), f"{where}: grader must be a grader name.")
        metadata = record.get("metadata", {})
        if not isinstance(metadata, dict):
            raise TaskSourceError(str(self.path), f"{where}: metadata must be an object.")
        stem = self.path.stem
        domain = str(record.get("domain") or stem)
        task_id = str(record["id"]) if record.get("id") is not None else f"{stem}/{index}"
        reference = answer if isinstance(answer, str) else json.dumps(answer)
        return Task(
            id=task_id,
            question=question,
            reference=reference,
            grader=grader,
            domain=domain,
            metadata={"profile": domain, **metadata},
        )

    def load(self) -> list[Task]:
        """Read and parse the file (once)."""
        if self._tasks is not None:
            return self._tasks
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError as exc:
            raise TaskSourceError(
                str(self.path), f"cannot read the file ({exc.strerror or exc}).", "Check the path."
            ) from exc
        tasks: list[Task] = []
        seen: dict[str, int] = {}
        for line_number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise TaskSourceError(
                    str(self.path), f"{self.path}:{line_number} is not valid JSON ({exc.msg})."
                ) from exc
            task = self._task(line_number, len(tasks), record)
            if task.id in seen:
                raise TaskSourceError(
                    str(self.path),
                    f"{self.path}:{line_number} repeats the id {task.id!r} "
                    f"(first on line {seen[task.id]}).",
                )
            seen[task.id] = line_number
            tasks.append(task)
        if not tasks:
            raise TaskSourceError(str(self.path), "the file holds no tasks.")
        if self.shuffle:
            tasks = shuffled(tasks, [t.id for t in tasks], "jsonl", self.seed)
        self._tasks = tasks
        return tasks

    def __repr__(self) -> str:
        return f"JsonlTasks({str(self.path)!r}, seed={self.seed}, shuffle={self.shuffle})"
