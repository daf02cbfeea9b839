"""A random planner: valid plans with no intelligence, the floor every conductor must beat."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import Access, Plan

from .base import BaseAgent

__all__ = ["RandomPlanner"]

_FIRST = "Solve this problem and end with the final answer: {question}"
_LATER = (
    "Here is the problem again: {question}\n"
    "Using the work shown above where it helps, solve it and end with the final answer."
)


class RandomPlanner(BaseAgent):
    """Writes a random valid plan for the episode described by ``info``.

    The plan has a uniform random length in ``1 .. info["max_steps"]`` (at most
    ``max_len``), uniform random workers among ``info["num_workers"]``, subtasks that
    restate ``info["question"]``, and access lists drawn uniformly from ``[]``,
    ``"all"`` and a random non-empty subset of earlier steps.

    In a recursive round where stopping is allowed (``info["can_stop"]``) it returns
    the empty plan with probability ``stop_prob``. It routes steps to the conductor
    itself (``info["self_worker_id"]``) only with ``self_calls=True``, and then no more
    often than the recursion budget left allows, so its plans stay valid. Seeded: the
    same seed and the same sequence of calls give the same plans.
    """

    name = "random"

    def __init__(
        self,
        seed: int | None = None,
        *,
        max_len: int = 5,
        stop_prob: float = 0.5,
        self_calls: bool = False,
    ) -> None:
        if max_len < 1:
            raise ConfigurationError("RandomPlanner: max_len must be >= 1")
        if not 0.0 <= stop_prob <= 1.0:
            raise ConfigurationError("RandomPlanner: stop_prob must be in [0, 1]")
        self.rng = random.Random(seed)
        self.max_len = max_len
        self.stop_prob = stop_prob
        self.self_calls = self_calls

    def reseed(self, seed: int | None) -> None:
        """Restart the planner's random stream (an evaluation harness reseeds it per
        episode, so results do not depend on how episodes are batched)."""
        self.rng.seed(seed)

    def _self_steps_allowed(self, info: Mapping[str, Any]) -> int:
        if not self.self_calls or info.get("self_worker_id") is None:
            return 0
        # A recursive round spends one inner call itself before its steps run.
        spent_by_round = 1 if int(info.get("round", 0)) > 0 else 0
        return max(0, int(info.get("recursions_left", 0)) - spent_by_round)

    def plan(self, info: Mapping[str, Any]) -> Plan:
        """A random plan (or, when ``info`` allows stopping, possibly the empty plan)."""
        if info.get("can_stop") and self.rng.random() < self.stop_prob:
            return Plan((), (), ())
        question = str(info["question"])
        num_workers = int(info["num_workers"])
        self_id = info.get("self_worker_id")
        self_left = self._self_steps_allowed(info)
        steps = self.rng.randint(1, min(self.max_len, int(info["max_steps"])))
        model_ids: list[int] = []
        for _ in range(steps):
            choices = [i for i in range(num_workers) if i != self_id or self_left > 0]
            chosen = self.rng.choice(choices)
            self_left -= chosen == self_id
            model_ids.append(chosen)
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
                chosen_steps = self.rng.sample(range(i), self.rng.randint(1, i))
                access.append(tuple(sorted(chosen_steps)))
        return Plan(model_ids=tuple(model_ids), subtasks=subtasks, access=tuple(access))

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        return "I pick a random workflow.\n" + self.plan(info).to_text()
