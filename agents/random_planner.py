"""A random planner: valid plans with no intelligence, the floor every conductor must beat."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from conductor_gym.plan import Access, Plan

from .base import BaseAgent

__all__ = ["RandomPlanner"]

_FIRST = "Solve this problem and end with the final answer: {question}"
_LATER = (
    "Here is the problem again: {question}\n"
    "Using the work shown above where it helps, solve it and end with the final answer."
)


class RandomPlanner(BaseAgent):
    """Writes a random valid plan for the episode in ``info``.

    The plan has a uniform random length in ``1 .. info["max_steps"]`` (at most
    ``max_len``), uniform random workers among ``info["num_workers"]``, subtasks that
    restate ``info["question"]``, and access lists drawn uniformly from ``[]``,
    ``"all"`` and a random non-empty subset of earlier steps. Seeded: the same seed and
    the same sequence of calls give the same plans.
    """

    name = "random"

    def __init__(self, seed: int | None = None, *, max_len: int = 5) -> None:
        if max_len < 1:
            raise ValueError("RandomPlanner: max_len must be >= 1")
        self.rng = random.Random(seed)
        self.max_len = max_len

    def plan(self, info: Mapping[str, Any]) -> Plan:
        """A random plan for an episode described by reset's ``info``."""
        question = str(info["question"])
        num_workers = int(info["num_workers"])
        steps = self.rng.randint(1, min(self.max_len, int(info["max_steps"])))
        model_ids = tuple(self.rng.randrange(num_workers) for _ in range(steps))
        subtasks = tuple(
            (_FIRST if i == 0 else _LATER).format(question=question) for i in range(steps)
        )
        access: list[Access] = []
        for i in range(steps):
            kind = self.rng.randrange(3) if i > 0 else 0
            if kind == 0:
                access.append(())
            elif kind == 1:
                access.append("all")
            else:
                chosen = self.rng.sample(range(i), self.rng.randint(1, i))
                access.append(tuple(sorted(chosen)))
        return Plan(model_ids=model_ids, subtasks=subtasks, access=tuple(access))

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        return "I pick a random workflow.\n" + self.plan(info).to_text()
