"""The family registry and :class:`ProceduralTasks`, the source that interleaves them."""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence

from conductor_gym._validate import is_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks.base import Task, TaskSource, fingerprint_tasks
from conductor_gym.tasks.procedural.arithmetic import ArithmeticConfig, ModularConfig
from conductor_gym.tasks.procedural.base import TaskFamily
from conductor_gym.tasks.procedural.choice import MultipleChoiceConfig, MultipleChoiceHardConfig
from conductor_gym.tasks.procedural.countdown import CountdownConfig
from conductor_gym.tasks.procedural.trace import ProgramTraceConfig, ProgramTraceHardConfig

__all__ = ["FAMILIES", "IN_DOMAIN_FAMILIES", "OOD_FAMILIES", "ProceduralTasks"]

FAMILIES: dict[str, TaskFamily] = {
    config.name: config
    for config in (
        ArithmeticConfig(),
        MultipleChoiceConfig(),
        CountdownConfig(),
        ProgramTraceConfig(),
        ModularConfig(),
        MultipleChoiceHardConfig(),
        ProgramTraceHardConfig(),
    )
}
"""Every family with its default config, by name."""

IN_DOMAIN_FAMILIES = ("arithmetic", "multiple_choice", "countdown", "program_trace")
"""Families standing in for the paper's training benchmarks (MATH500, MMLU, RLPR, LCB)."""

OOD_FAMILIES = ("modular", "multiple_choice_hard", "program_trace_hard")
"""Families standing in for the paper's unseen benchmarks (AIME25, GPQA-Diamond, BCB)."""


class ProceduralTasks(TaskSource):
    """A finite, deterministic task source that interleaves procedural families.

    ``source[i]`` is item ``i // n`` of family ``families[i % n]`` (``n`` families), so
    every prefix is balanced across families. Tasks are generated on first access and
    cached.

    Args:
        families: Family names (keys of :data:`FAMILIES`) or family configs.
        size: Number of tasks (>= 1).
        seed: Seed of every item; the same arguments give the same tasks.
        name: The source's name (default ``"procedural/<families joined by +>"``).
    """

    def __init__(
        self,
        families: Sequence[str | TaskFamily],
        size: int,
        seed: int = 0,
        name: str | None = None,
    ) -> None:
        self._requested = families
        self.size = size
        self.seed = seed
        self.families: tuple[TaskFamily, ...]  # set by validate()
        self.validate()
        joined = "+".join(family.name for family in self.families)
        self.name: str = name or f"procedural/{joined}"
        self._cache: dict[int, Task] = {}
        self._fingerprint: str | None = None

    def validate(self) -> None:
        """Resolve the families and check every argument (a ``ConfigurationError`` names
        the problem)."""
        if isinstance(self._requested, str) or not self._requested:
            raise ConfigurationError(
                "families: give a non-empty sequence of family names or configs"
            )
        resolved: list[TaskFamily] = []
        for family in self._requested:
            if isinstance(family, TaskFamily):
                family.validate()
                resolved.append(family)
            elif family in FAMILIES:
                resolved.append(FAMILIES[family])
            else:
                raise ConfigurationError(
                    f"families: unknown family {family!r}; valid: {sorted(FAMILIES)}"
                )
        names = [fam.name for fam in resolved]
        if len(set(names)) != len(names):
            raise ConfigurationError(f"families: each family may appear once, got {names}")
        if not is_int(self.size) or self.size < 1:
            raise ConfigurationError(f"size: must be an int >= 1, got {self.size!r}")
        if not is_int(self.seed):
            raise ConfigurationError(f"seed: must be an int, got {self.seed!r}")
        self.families = tuple(resolved)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, index: int) -> Task:
        index = operator.index(index)
        if not 0 <= index < self.size:
            raise IndexError(f"task index {index} is outside 0..{self.size - 1}")
        task = self._cache.get(index)
        if task is None:
            family = self.families[index % len(self.families)]
            task = family.generate(index // len(self.families), self.seed)
            self._cache[index] = task
        return task

    def __iter__(self) -> Iterator[Task]:
        return (self[i] for i in range(self.size))

    def fingerprint(self) -> str:
        """Hash of every task's id, reference and grader (computed once)."""
        if self._fingerprint is None:
            self._fingerprint = fingerprint_tasks(iter(self))
        return self._fingerprint

    @property
    def expected_size(self) -> int:
        """The number of tasks (known without generating any)."""
        return len(self)

    def offline_available(self) -> bool:
        """Always: the tasks are generated here."""
        return True

    def __repr__(self) -> str:
        names = [fam.name for fam in self.families]
        return f"ProceduralTasks({names}, size={self.size}, seed={self.seed}, name={self.name!r})"
