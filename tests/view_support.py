"""A scripted conductor and stored runs for the viewer and re-scoring tests.

:class:`ScriptedConductor` is a real agent (the library's ``BaseAgent``) whose plan
depends only on the task index, so a run of it holds every kind of first plan the viewer
must show: a three-step plan with ``"all"`` access, a one-step plan, and three invalid
plans (an unknown worker, no lists, a string left open). In a recursive round it stops
(three empty lists).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from conductor_gym.agents.base import BaseAgent
from support import plan_text

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import Results

KINDS = ("three_steps", "one_step", "unknown_worker", "no_lists", "open_string")
"""The first plan of task ``i`` is of kind ``KINDS[i % 5]``."""

OPEN_STRING = (
    "Let me split the work.\n"
    "model_id = [0, 1]\n"
    'subtasks = ["Solve the problem, then\n'
    '"Check it."]\n'
    "access_list = [[], [0]]\n"
)


class ScriptedConductor(BaseAgent):
    """Writes the plan of kind ``KINDS[task_index % 5]`` (module docstring)."""

    name = "scripted"
    spec = "tests:ScriptedConductor"

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        if info.get("rounds"):  # a plan ran: this is a recursive round
            return "The answer stands.\nmodel_id = []\nsubtasks = []\naccess_list = []\n"
        question = str(info["question"])
        kind = KINDS[int(info["task_index"]) % len(KINDS)]
        if kind == "three_steps":
            return plan_text(
                [1, 2, 0],
                [f"Solve: {question}", "Check the answer above.", "Give the final answer."],
                [[], [0], "all"],
            )
        if kind == "one_step":
            return plan_text([2], [f"Solve this and give the final answer: {question}"], [[]])
        if kind == "unknown_worker":
            return plan_text([0, 99], [f"Solve: {question}", "Answer."], [[], [0]])
        if kind == "no_lists":
            return "I would ask the strongest model to solve it."
        return OPEN_STRING


def scripted_run(out: Path, *, limit: int = 15, repeats: int = 2, **env: Any) -> Results:
    """A run of :class:`ScriptedConductor` on the offline suite (simulated pool), written
    to ``out`` (and its journal)."""
    return evaluate(
        ScriptedConductor(),
        "offline",
        repeats=repeats,
        limit=limit,
        seed=11,
        out=out,
        progress=False,
        **env,
    )


def as_real_pool(results: Results) -> Results:
    """``results`` relabelled as a run on real (LiteLLM) workers: what a replay must not
    call without the run's response cache."""
    real = results.model_copy(deep=True)
    for worker in real.pool["workers"]:
        worker["backend"] = "litellm"
    return real
