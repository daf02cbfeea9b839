"""The task interface: what an episode asks, and how its answer is judged."""

from __future__ import annotations

import hashlib
import json
import operator
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["LoadedTasks", "Task", "TaskSource", "fingerprint_tasks"]


@dataclass(frozen=True)
class Task:
    """One question with its reference answer.

    Attributes:
        id: Stable identifier, unique within its source (e.g. ``"arithmetic/17"``).
        question: The text shown to the conductor and, through subtasks, to workers.
        reference: The gold answer, in the form the grader named by ``grader`` expects.
        grader: Name of a registered grader (see :mod:`conductor_gym.graders`).
        domain: The benchmark or task family the question belongs to (used to report
            results per benchmark and to pick simulated worker skills).
        metadata: Extra grader inputs and facts about the item (JSON-serialisable).
            Keys used by the library: ``"profile"`` (the paper benchmark whose worker
            accuracies the simulated pool uses for this task; defaults to ``domain``),
            ``"solution"`` (one correct answer written as a worker would write it) and
            ``"distractors"`` (plausible wrong answers, used by simulated workers).
    """

    id: str
    question: str
    reference: str
    grader: str
    domain: str
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def profile(self) -> str:
        """The paper benchmark whose single-model accuracies describe this task."""
        return str(self.metadata.get("profile", self.domain))


@runtime_checkable
class TaskSource(Protocol):
    """A finite, indexable, deterministic collection of tasks.

    ``source[i]`` must return the same task every time for the same source
    configuration, so an episode is fixed by its seed. Sources subclass this protocol to
    get the optional hooks with their defaults (:attr:`expected_size`,
    :meth:`offline_available`).
    """

    name: str

    def __len__(self) -> int: ...

    def __getitem__(self, index: int) -> Task: ...

    def __iter__(self) -> Iterator[Task]: ...

    def fingerprint(self) -> str:
        """A hash of every task's id and reference, so results name their questions."""
        ...

    @property
    def expected_size(self) -> int | None:
        """The size on the full data when known without loading it (default ``None``:
        unknown), for listings."""
        return None

    def offline_available(self) -> bool | None:
        """Whether the tasks can be read here without the network, decided without
        loading them (default ``None``: unknown, which every caller treats as no)."""
        return None


def fingerprint_tasks(tasks: Iterator[Task] | list[Task]) -> str:
    """SHA-256 (hex, first 16 chars) over ``(id, reference, grader)`` of ``tasks`` in order."""
    digest = hashlib.sha256()
    for task in tasks:
        digest.update(json.dumps([task.id, task.reference, task.grader]).encode())
        digest.update(b"\n")
    return digest.hexdigest()[:16]


class LoadedTasks(TaskSource, ABC):
    """Base of task sources that read their tasks into a list on first use.

    Subclasses implement :meth:`load` (returning the same list every time, cached);
    indexing, length, iteration and :meth:`fingerprint` (computed once) follow from it.
    """

    name: str
    _fingerprint: str | None = None

    @abstractmethod
    def load(self) -> list[Task]:
        """Every task, in order (read on the first call, then cached)."""

    def __len__(self) -> int:
        return len(self.load())

    def __getitem__(self, index: int) -> Task:
        tasks = self.load()
        index = operator.index(index)
        if not 0 <= index < len(tasks):
            raise IndexError(f"task index {index} is outside 0..{len(tasks) - 1}")
        return tasks[index]

    def __iter__(self) -> Iterator[Task]:
        return iter(self.load())

    def fingerprint(self) -> str:
        """Hash of every task's id, reference and grader, in order (computed once)."""
        if self._fingerprint is None:
            self._fingerprint = fingerprint_tasks(self.load())
        return self._fingerprint
