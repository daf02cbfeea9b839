"""Shared machinery of the procedural families: the :class:`TaskFamily` base class,
the item it wraps in a task, config validation and numeric distractors.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, ClassVar, NamedTuple

from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks.base import Task

__all__ = ["TaskFamily"]


class _Item(NamedTuple):
    """What a family's builder produces; :meth:`TaskFamily.generate` wraps it in a Task."""

    kind: str
    question: str
    reference: str
    solution: str
    distractors: list[str]
    extra: dict[str, Any]


def _require(config: object, field_name: str, ok: bool, rule: str) -> None:
    if not ok:
        value = getattr(config, field_name)
        raise ConfigurationError(f"{type(config).__name__}.{field_name} {rule}, got {value!r}")


class TaskFamily(ABC):
    """A procedural task family: a frozen dataclass config that generates tasks.

    Subclasses set the class attributes ``name`` (the family name, used in task ids),
    ``profile`` (the paper benchmark it stands in for) and ``grader``, and implement
    :meth:`validate` and ``_build(rng)``.
    """

    name: ClassVar[str]
    profile: ClassVar[str]
    grader: ClassVar[str]

    def __post_init__(self) -> None:
        self.validate()

    @abstractmethod
    def validate(self) -> None:
        """Raise ``ConfigurationError`` naming the field if the config is inconsistent."""

    @abstractmethod
    def _build(self, rng: random.Random) -> _Item: ...

    def generate(self, index: int, seed: int) -> Task:
        """The task at ``index`` for ``seed``; the same arguments always give the same task."""
        item = self._build(random.Random(f"{seed}:{self.name}:{index}"))
        metadata: dict[str, Any] = {
            "profile": self.profile,
            "kind": item.kind,
            "solution": item.solution,
            "distractors": item.distractors,
            **item.extra,
        }
        return Task(
            id=f"{self.name}-{index}",
            question=item.question,
            reference=item.reference,
            grader=self.grader,
            domain=self.name,
            metadata=metadata,
        )


_PAD_OFFSETS = (1, -1, 2, -2, 10, -10, 3, -3, 5, -5)


def _numeric_distractors(
    answer: int, slips: Iterable[int], count: int, modulus: int | None = None
) -> list[str]:
    """The first ``count`` distinct slips that differ from ``answer``, padded with near misses.

    With ``modulus``, near misses wrap into ``0..modulus-1`` like the answer.
    """
    out: list[str] = []
    seen = {answer}
    pads = (answer + d if modulus is None else (answer + d) % modulus for d in _PAD_OFFSETS)
    for value in (*slips, *pads):
        if value not in seen:
            seen.add(value)
            out.append(str(value))
            if len(out) == count:
                break
    return out


def _lines(*lines: str) -> str:
    return "\n".join(lines)
