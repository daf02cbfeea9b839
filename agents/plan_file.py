"""``plan:<path>``: the same plan, read from a file, for every question.

The file holds a plan in the env's text format (the lists ``model_id``, ``subtasks`` and
``access_list``, as :meth:`~conductor_gym.plan.Plan.to_text` writes them) whose subtasks
may hold the placeholder ``{question}``; at act time each one is replaced by the
episode's question (``info["question"]``) with a plain text replacement, so braces in a
question or a subtask are safe. The model ids are the episode's ``Model i`` positions:
under shuffled ids (``EnvConfig(shuffle_workers=True)``, ``k``) the plan asks whichever
workers landed there. The format and its rules are in :mod:`conductor_gym.plan.template`;
``conductor-gym sim audit --save-plans DIR`` writes the best fixed plans it finds as such
files, and :meth:`FixedPlan.write` writes one from a :class:`~conductor_gym.plan.Plan`.

Contract, as the other fixed agents (:mod:`.fixed`):

* the file is read and checked when the agent is built: a missing or unreadable file, a
  text the plan parser refuses (its reason is in the message), the empty plan, or no
  ``{question}`` in any subtask raises :class:`~conductor_gym.errors.ConfigurationError`
  (a ``ValueError``) naming the path;
* an id the episode does not have (``>= info["num_workers"]``, or the conductor itself)
  raises ``ValueError`` at act time, naming the agent, the id and the valid range;
* :attr:`env_overrides` is ``{"max_steps": n}`` for a plan of ``n > 5`` steps (``{}``
  otherwise), and ``act`` refuses an env that allows fewer steps than the plan has;
* in a recursive round where stopping is allowed (``info["can_stop"]``) it stops.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conductor_gym.plan import Plan
from conductor_gym.plan.template import fill_question, read_plan_file, write_plan_file

from .fixed import FixedPlanAgent, episode_worker_id

__all__ = ["FixedPlan"]


class FixedPlan(FixedPlanAgent):
    """``plan:<path>``: the plan in the file at ``path`` (module docstring).

    Attributes:
        path: The path as given (the spec is ``plan:<path>``).
        template: The plan read from the file, ``{question}`` still in its subtasks.
    """

    why = "A fixed plan, the same for every question."

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)
        self.template = read_plan_file(self.path)
        self.name = f"plan:{self.path}"

    @staticmethod
    def write(path: str | os.PathLike[str], plan: Plan, *, comment: str = "") -> Path:
        """Write ``plan`` (subtasks holding ``{question}``) as a plan file that
        ``plan:<path>`` plays; ``comment`` lines go first, as ``#`` lines. Raises
        :class:`~conductor_gym.errors.ConfigurationError` for a plan the agent would
        refuse (see :func:`conductor_gym.plan.write_plan_file`)."""
        return write_plan_file(path, plan, comment=comment)

    def required_max_steps(self, num_workers: int) -> int:
        return len(self.template)

    def plan(self, info: Mapping[str, Any]) -> Plan:
        ids = tuple(episode_worker_id(self.name, m, info) for m in self.template.model_ids)
        filled = fill_question(self.template, str(info["question"]))
        return Plan(ids, filled.subtasks, filled.access)
