"""The conductor as one of its own workers (paper §3.2).

When the env is given the conductor's policy and a recursion budget, it offers the
conductor itself as one more worker. A step routed to it becomes an inner conductor
call: the policy reads a conductor prompt whose question is that step's chat (its
earlier turns and its subtask), writes a plan, the plan runs on the episode's workers,
and its final answer is the step's response. Each inner call spends one unit of the
episode's recursion budget, the same budget that recursive rounds spend.

An inner plan that does not parse, is empty, or needs more budget than is left is the
conductor's own failure: :class:`~conductor_gym.core.execute.PolicyFailure`, which makes the
episode an invalid plan, never an infrastructure error.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from conductor_gym.core.execute import PlanCompletion, PolicyFailure, Trace, run_plan
from conductor_gym.core.prompts import PromptTemplates
from conductor_gym.plan import Plan, PlanParseError, parse_plan
from conductor_gym.workers.base import Completion, Message, Worker
from conductor_gym.workers.bound import BoundWorker, RetryPolicy
from conductor_gym.workers.budget import Ledger

__all__ = [
    "SELF_WORKER_NAME",
    "ConductorPolicy",
    "RecursionBudget",
    "SelfCall",
    "SelfWorker",
    "ask_policy",
    "check_self_steps",
]

SELF_WORKER_NAME = "conductor (self)"


@runtime_checkable
class _BatchAgent(Protocol):
    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]: ...


ConductorPolicy = _BatchAgent | Callable[[str, Mapping[str, Any]], str | Awaitable[str]]
"""An :class:`~conductor_gym.agents.Agent`, or a function ``(observation, info) -> str``
(which may be a coroutine function)."""


async def ask_policy(policy: ConductorPolicy, observation: str, info: Mapping[str, Any]) -> str:
    """One completion from ``policy`` (an agent's ``act_batch`` is preferred)."""
    if isinstance(policy, _BatchAgent):
        completion: object = (await policy.act_batch([observation], [info]))[0]
    else:
        completion = policy(observation, info)
        if inspect.isawaitable(completion):
            completion = await completion
    if not isinstance(completion, str):
        raise TypeError(f"the conductor policy returned {type(completion).__name__}, not a str")
    return completion


@dataclass
class RecursionBudget:
    """Inner conductor calls (recursive rounds and self-calls) an episode may still make."""

    left: int


@dataclass(frozen=True)
class SelfCall:
    """One inner call of the conductor: the question it got, its plan, and the trace."""

    question: str
    completion: str
    plan: Plan
    trace: Trace

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "completion": self.completion,
            "plan": self.plan.to_dict(),
            "trace": self.trace.to_dict(),
        }


@dataclass
class SelfWorker(Worker):
    """The conductor offered as worker ``self_id`` of one episode (see module docstring).

    ``workers`` is the episode's full worker list, this one included, so inner plans may
    route to it again while the budget lasts. ``calls`` collects every inner call, at
    any depth, in the order they finished. ``ledgers`` are the episode's spending
    ledgers: inner plans are charged against them call by call, so this worker's own
    completion (which sums them) is not charged again (``aggregates_calls``).
    """

    aggregates_calls: ClassVar[bool] = True

    policy: ConductorPolicy
    self_id: int
    budget: RecursionBudget
    templates: PromptTemplates
    max_steps: int
    max_plan_chars: int
    retry: RetryPolicy
    question_to_all_workers: bool = False
    workers: tuple[BoundWorker, ...] = ()
    calls: list[SelfCall] = field(default_factory=list)
    ledgers: tuple[Ledger, ...] = ()
    name: str = SELF_WORKER_NAME

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        if self.budget.left < 1:
            raise PolicyFailure(
                "recursion_budget", "a step called the conductor itself with no budget left"
            )
        self.budget.left -= 1
        question = self.templates.self_call_question(messages)
        k = len(self.workers)
        names = tuple(w.name for w in self.workers)
        observation = self.templates.conductor_prompt(
            question, k, self.max_steps, self_id=self.self_id, names=names
        )
        info = {
            "question": question,
            "pool": names,
            "num_workers": k,
            "max_steps": self.max_steps,
            "round": 0,
            "can_stop": False,
            "self_call": True,
            "self_worker_id": self.self_id,
            "recursions_left": self.budget.left,
        }
        completion = await ask_policy(self.policy, observation, info)
        try:
            plan = parse_plan(completion, k, self.max_steps, max_chars=self.max_plan_chars)
        except PlanParseError as exc:
            raise PolicyFailure(
                exc.reason, f"in an inner call of the conductor: {exc.detail}"
            ) from exc
        if plan.is_empty:
            raise PolicyFailure("empty_plan", "an inner call of the conductor wrote no steps")
        check_self_steps(plan, self.self_id, self.budget)
        trace = await run_plan(
            plan,
            self.workers,
            question=question,
            seed=seed,
            templates=self.templates,
            question_to_all_workers=self.question_to_all_workers,
            retry=self.retry,
            ledgers=self.ledgers,
        )
        self.calls.append(SelfCall(question, completion, plan, trace))
        return PlanCompletion(
            text=trace.final_response or "",
            prompt_tokens=trace.prompt_tokens,
            completion_tokens=trace.completion_tokens,
            cost_usd=trace.cost_usd,
            latency_s=trace.latency_s,
            model="conductor",
            critical_path_s=trace.critical_path_s,
        )


def check_self_steps(plan: Plan, self_id: int | None, budget: RecursionBudget) -> None:
    """Raise :class:`PolicyFailure` if ``plan`` calls the conductor more often than the
    budget allows (checked before anything runs)."""
    if self_id is None:
        return
    wanted = plan.model_ids.count(self_id)
    if wanted > budget.left:
        raise PolicyFailure(
            "recursion_budget",
            f"the plan routes {wanted} step(s) to the conductor itself (Model {self_id}) "
            f"but only {budget.left} inner call(s) are left",
        )
