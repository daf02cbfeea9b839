"""``compact:<path>``: a policy trained on the compact plan action, played as a conductor.

The policy is the small actor-critic network that
:mod:`conductor_gym.trainers.classic.ppo_compact` trains on
:class:`~conductor_gym.CompactPlanAction` (:mod:`conductor_gym.training.compact_network`,
shared by the trainer and this agent). The trainer writes ``policy.pt``: the network's
weights and everything needed to read an episode the way it trained (the question
families, the worker names of the pool, ``k``, ``max_steps``, the role templates).

Contract:

* the observation is
  :func:`~conductor_gym.training.compact_network.observation_features`: the question's family
  (``info["domain"]``; a family the policy never saw reads as none of them) and, per
  ``Model i``, the name of the worker the episode lists there (``info["pool"]``). Never
  the question's text, an answer or a worker's skill;
* :meth:`CompactPolicy.act` plays the greedy structure (each entry's most likely value,
  a step's worker chosen after the earlier steps' workers): deterministic, so the same
  observation always gives the same plan; the plan's subtasks are the training run's
  role templates (:class:`~conductor_gym.core.compact_action.RoleTemplates`), the first
  step carrying the question;
* an episode the policy cannot read raises ``ConfigurationError`` at act time: a pool of
  another size than the ``k`` it trained with, or a worker name its pool did not have;
  a plan longer than the env's ``max_steps`` is never written (``env_overrides`` asks
  for the ``max_steps`` it trained with when that is over the default 5);
* a missing or foreign ``path`` fails at construction with a one-line
  ``ConfigurationError`` (field ``agent``); torch is imported only then, never by
  importing this module;
* :meth:`describe` records the checkpoint's SHA-256 (``checkpoint_sha256``), which the
  leaderboard shows beside the entry's self-reported completions.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from conductor_gym.core.compact_action import RoleTemplates, structure_from_vector
from conductor_gym.errors import ConfigurationError
from conductor_gym.training.compact_network import (
    load_policy,
    observation_features,
    sample_actions,
)

from .base import DEFAULT_MAX_STEPS, BaseAgent
from .fixed import stop_text
from .policy import checkpoint_sha256

__all__ = ["CompactPolicy"]


class CompactPolicy(BaseAgent):
    """``compact:<path>``: the greedy plans of a compact-action policy (module docstring).

    Args:
        path: A ``policy.pt`` (``ppo_compact`` writes one in its ``--output-dir``;
            :func:`~conductor_gym.training.compact_network.save_policy`).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        self.name = f"compact:{self.path}"
        if not Path(self.path).is_file():
            raise ConfigurationError(
                f"compact:{self.path}: no such file (give a policy.pt that ppo_compact wrote)",
                field="agent",
            )
        try:
            self.network, self.shape = load_policy(self.path)
        except ValueError as error:
            raise ConfigurationError(f"compact:{error}", field="agent") from error
        self.templates = RoleTemplates(self.shape.roles)
        self._attempt = self.templates.names.index("attempt")

    @property
    def spec(self) -> str:  # type: ignore[override]  # derived from the path, read-only
        return self.name

    def required_max_steps(self, num_workers: int) -> int:
        return self.shape.max_steps

    @property
    def env_overrides(self) -> dict[str, Any]:
        steps = self.shape.max_steps
        return {"max_steps": steps} if steps > DEFAULT_MAX_STEPS else {}

    def vector(self, domain: str, pool: Sequence[str]) -> np.ndarray:
        """The greedy action vector for a question of family ``domain`` and the drawn
        worker names ``pool`` (``Model i`` is ``pool[i]``)."""
        import torch

        try:
            features, names = observation_features(
                self.shape.families, self.shape.names, self.shape.k, domain, pool
            )
        except ValueError as error:
            raise ConfigurationError(f"{self.name}: {error}", field="agent") from error
        with torch.no_grad():
            action, *_ = sample_actions(
                self.network,
                torch.from_numpy(features[None]),
                torch.from_numpy(names[None]),
                self.shape.max_steps,
                self._attempt,
                greedy=True,
            )
        chosen: np.ndarray = action[0].numpy()
        return chosen

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        if info.get("can_stop"):
            return stop_text()
        allowed = int(info["max_steps"])
        if self.shape.max_steps > allowed:
            raise ConfigurationError(
                f"{self.name}: writes plans of up to {self.shape.max_steps} steps but the env "
                f"allows max_steps={allowed}; build the env with max_steps={self.shape.max_steps}"
            )
        vector = self.vector(str(info["domain"]), list(info["pool"]))
        structure = structure_from_vector(
            vector, max_steps=self.shape.max_steps, role_names=self.templates.names
        )
        plan = structure.plan(str(info["question"]), self.templates)
        return f"Compact plan: {structure.to_text()}\n{plan.to_text()}"

    def describe(self) -> dict[str, Any]:
        """Settings for result files, with the checkpoint's hash."""
        return {
            "name": self.name,
            "path": self.path,
            "k": self.shape.k,
            "max_steps": self.shape.max_steps,
            "families": list(self.shape.families),
            "checkpoint_sha256": checkpoint_sha256(self.path),
        }
