"""Hand-written reference plans for the simulated paper pool, as fixed-plan agents.

``reference:<plan>`` (:class:`ReferencePlan`) writes one of them for every question.
They measure the headroom that only orchestration unlocks offline: what a conductor
that writes good subtasks can reach on ``sim-paper``, next to the best single worker
and the oracle router (the best worker per family, one call). Each is a function
``question -> (model_ids, subtasks, access_list)`` over the ``sim-paper`` worker order
(0 Gemini 2.5 Pro, 1 Claude Sonnet 4, 2 GPT-5, 3 R1-Distill-Qwen-32B, 4 Gemma-3-27B,
5 Qwen3-32B thinking, 6 Qwen3-32B direct); the agent maps those workers to the episode's
``Model`` ids by name (``info["pool"]``), so it also plays a shuffled pool, and refuses an
episode whose pool lacks one. A plan may read the question, as a conductor does (it finds
the question's form with the simulator's own perception); it never sees the answer.

* :func:`solve_then_check`: Gemini, GPT-5 and Claude solve independently; one
  checker, seeing all three, checks the answers and gives the correct one;
* :func:`routed_check` (the best of them): the same, with the checker chosen by the
  question's form: GPT-5 (the strongest tracer) for programs, Gemini otherwise;
* :func:`decompose_arithmetic`: for an expression, one worker evaluates its largest
  sub-expression, a second solves the whole seeing that partial result.

The tests (``tests/sim/test_calibration.py``) hold the best of them at least 8
points above the best single worker on ``offline`` and 9 on ``offline-ood``, with the
oracle router below half of that margin.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import Plan as EpisodePlan
from conductor_gym.sim.perception import find_problems
from conductor_gym.sim.perception.arithmetic import ArithmeticProblem
from conductor_gym.sim.profiles import PAPER_PROFILES

from .fixed import FixedPlanAgent, episode_worker_id

__all__ = [
    "REFERENCE_PLANS",
    "SOLVE",
    "ReferencePlan",
    "decompose_arithmetic",
    "plan_completion",
    "routed_check",
    "solve_then_check",
]

Plan = tuple[list[int], list[str], list[list[int] | Literal["all"]]]
"""``(model_ids, subtasks, access_list)`` over the ``sim-paper`` worker order."""

PAPER_ORDER: tuple[str, ...] = tuple(PAPER_PROFILES)
"""The ``sim-paper`` workers' names, in the order the plans' ids count."""

SOLVE = "Solve the following problem and end your reply with the final answer.\n\n{question}"
CHECK = (
    "Check the answers above against the problem below and give the one that is "
    "correct as your final answer (work it out yourself if none is).\n\nProblem: {question}"
)
GEMINI, CLAUDE, GPT5 = 0, 1, 2


def solve_then_check(question: str, checker: int = GEMINI) -> Plan:
    """Three strong solvers, then one checker over their answers."""
    solve = SOLVE.format(question=question)
    return (
        [GEMINI, GPT5, CLAUDE, checker],
        [solve, solve, solve, CHECK.format(question=question)],
        [[], [], [], "all"],
    )


def routed_check(question: str) -> Plan:
    """:func:`solve_then_check` with GPT-5 checking programs and Gemini the rest."""
    found = find_problems(question).problems
    programs = bool(found) and found[-1].family.startswith("program_trace")
    return solve_then_check(question, GPT5 if programs else GEMINI)


def decompose_arithmetic(question: str, worker: int = GEMINI) -> Plan:
    """Largest sub-expression first, then the whole with that result in view (other
    questions: one step)."""
    found = find_problems(question).problems
    problem = found[-1] if found else None
    if not isinstance(problem, ArithmeticProblem) or isinstance(problem.node, int):
        return [worker], [SOLVE.format(question=question)], [[]]
    parts = [p for p in sorted(problem.sub_keys(), key=len) if p != problem.key]
    if not parts:
        return [worker], [SOLVE.format(question=question)], [[]]
    part = parts[-1].removeprefix("arithmetic:")
    return (
        [worker, worker],
        [f"What is {part}? End with the final answer.", SOLVE.format(question=question)],
        [[], [0]],
    )


REFERENCE_PLANS: dict[str, Callable[[str], Plan]] = {
    "solve_then_check": solve_then_check,
    "routed_check": routed_check,
    "decompose_arithmetic": decompose_arithmetic,
}
"""Every reference plan by name."""


def plan_completion(plan: Plan) -> str:
    """A conductor completion writing ``plan`` as the three lists."""
    model_ids, subtasks, access = plan
    return f"model_id = {model_ids!r}\nsubtasks = {subtasks!r}\naccess_list = {access!r}\n"


class ReferencePlan(FixedPlanAgent):
    """``reference:<plan>``: the reference plan named ``plan`` (:data:`REFERENCE_PLANS`)
    for every question, on the episode's own ids for the ``sim-paper`` workers it names."""

    why = "A hand-written reference plan for the simulated paper pool."

    def __init__(self, plan: str) -> None:
        if plan not in REFERENCE_PLANS:
            raise ConfigurationError(
                f"reference: unknown plan {plan!r}; the plans are {sorted(REFERENCE_PLANS)}"
            )
        self.plan_name = plan
        self.name = f"reference:{plan}"

    def required_max_steps(self, num_workers: int) -> int:
        return 4 if self.plan_name != "decompose_arithmetic" else 2

    def steps_for(self, info: Mapping[str, Any]) -> int:
        return len(self.plan(info).model_ids)

    def plan(self, info: Mapping[str, Any]) -> EpisodePlan:
        model_ids, subtasks, access = REFERENCE_PLANS[self.plan_name](str(info["question"]))
        ids = tuple(episode_worker_id(self.name, PAPER_ORDER[i], info) for i in model_ids)
        return EpisodePlan(
            ids,
            tuple(subtasks),
            tuple("all" if a == "all" else tuple(a) for a in access),
        )
