"""Run a plan: call each step's worker in order with the context its access list selects.

:func:`run_plan` is a coroutine so that many episodes share one event loop (the vector
env steps hundreds concurrently). Steps run one after another: step ``i`` may read the
answers of earlier steps. Each call passes the worker's ``max_tokens`` and
``temperature`` (paper app. A: 4096 and 0.2) and a per-step ``seed`` derived from the
episode seed, so seeded backends (the simulated pool) reproduce an episode exactly.

A worker failure is never an answer. Transient :class:`WorkerError`\\ s are retried with
jittered exponential backoff (:class:`RetryPolicy`); a permanent error, any other
exception raised by a backend, or a transient one that outlives its retries ends the
run with :class:`ExecutionError`, which carries the partial :class:`Trace`.

Spending limits (:mod:`conductor_gym.core.budget`) are checked before every call against each
ledger passed in ``ledgers`` and charged after it; a spent budget ends the run with
:class:`~conductor_gym.core.budget.BudgetExceeded`, whose ``trace`` holds the steps completed.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from types import MappingProxyType
from typing import Any

from conductor_gym._validate import require_int
from conductor_gym.core.budget import BudgetExceeded, Ledger
from conductor_gym.core.prompts import DEFAULT_TEMPLATES, PromptTemplates
from conductor_gym.errors import InfrastructureError, PolicyError
from conductor_gym.plan import Plan
from conductor_gym.workers.base import Completion, Message, Worker, WorkerError

__all__ = [
    "BoundWorker",
    "ExecutionError",
    "PolicyFailure",
    "RetryPolicy",
    "StepRecord",
    "Trace",
    "run_plan",
    "step_seed",
]

_SEED_MASK = (1 << 63) - 1


def step_seed(episode_seed: int, step: int) -> int:
    """The seed passed to step ``step``'s worker (a fixed mix of the two numbers)."""
    return (episode_seed * 0x9E3779B97F4A7C15 + (step + 1) * 0xBF58476D1CE4E5B9) & _SEED_MASK


@dataclass(frozen=True)
class BoundWorker:
    """A worker together with the generation settings of its pool entry."""

    worker: Worker
    max_tokens: int = 4096
    temperature: float = 0.2
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def name(self) -> str:
        return self.worker.name


@dataclass(frozen=True)
class RetryPolicy:
    """How transient worker failures are retried.

    Attempt ``a`` (1-based) that fails transiently waits
    ``uniform(0, min(max_delay_s, base_delay_s * 2 ** (a - 1)))`` seconds ("full jitter")
    before the next attempt, up to ``max_attempts`` attempts in all.
    """

    max_attempts: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0

    def __post_init__(self) -> None:
        require_int("RetryPolicy.max_attempts", self.max_attempts)
        if self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ValueError("RetryPolicy delays must be >= 0")

    def delay(self, attempt: int) -> float:
        cap = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return random.uniform(0.0, cap) if cap > 0 else 0.0


@dataclass(frozen=True)
class StepRecord:
    """What happened at one step."""

    index: int
    model_id: int
    worker: str
    """The real worker name (the conductor only saw ``Model {model_id}``)."""
    subtask: str
    visible: tuple[int, ...]
    """Earlier steps whose subtask and answer this worker saw."""
    messages: tuple[Message, ...]
    response: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    attempts: int
    cached: bool = False
    """The response came from the response cache (nothing was billed for it)."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["messages"] = [dict(m) for m in self.messages]
        data["visible"] = list(self.visible)
        return data


@dataclass(frozen=True)
class Trace:
    """Every step of one executed plan, with totals."""

    steps: tuple[StepRecord, ...] = ()

    @property
    def final_response(self) -> str | None:
        """The last step's answer (the plan's answer), or ``None`` for no steps."""
        return self.steps[-1].response if self.steps else None

    @property
    def worker_calls(self) -> int:
        """Calls made, retries included."""
        return sum(s.attempts for s in self.steps)

    @property
    def prompt_tokens(self) -> int:
        return sum(s.prompt_tokens for s in self.steps)

    @property
    def completion_tokens(self) -> int:
        return sum(s.completion_tokens for s in self.steps)

    @property
    def cost_usd(self) -> float:
        return sum(s.cost_usd for s in self.steps)

    @property
    def latency_s(self) -> float:
        """Summed worker latency: the plan's critical path, since steps run in order."""
        return sum(s.latency_s for s in self.steps)

    @property
    def billed_usd(self) -> float:
        """Cost of the steps that called a backend (cached steps cost nothing again)."""
        return sum(s.cost_usd for s in self.steps if not s.cached)

    @property
    def cache_saved_usd(self) -> float:
        """Recorded cost of the steps answered from the response cache."""
        return sum(s.cost_usd for s in self.steps if s.cached)

    def to_dict(self) -> dict[str, Any]:
        return {
            "steps": [s.to_dict() for s in self.steps],
            "final_response": self.final_response,
            "worker_calls": self.worker_calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "billed_usd": self.billed_usd,
            "cache_saved_usd": self.cache_saved_usd,
            "latency_s": self.latency_s,
        }


class ExecutionError(InfrastructureError, RuntimeError):
    """A worker could not answer: the run stopped at ``step``.

    Attributes:
        step: Index of the step that failed.
        worker: Real name of the worker that failed.
        error: The underlying :class:`WorkerError`.
        attempts: Calls made for that step.
        trace: The steps completed before the failure.
    """

    def __init__(
        self, *, step: int, worker: str, error: WorkerError, attempts: int, trace: Trace
    ) -> None:
        kind = "transient" if error.transient else "permanent"
        super().__init__(
            f"step {step}: worker {worker!r} failed after {attempts} attempt(s) ({kind}): {error}"
        )
        self.step = step
        self.worker = worker
        self.error = error
        self.attempts = attempts
        self.trace = trace

    def to_dict(self) -> dict[str, Any]:
        cause = self.error.__cause__
        return {
            "kind": "infrastructure",
            "step": self.step,
            "worker": self.worker,
            "attempts": self.attempts,
            "transient": self.error.transient,
            # the backend's own exception class, else the WorkerError subclass raised
            "error_type": type(cause if cause is not None else self.error).__name__,
            "message": str(self.error),
        }


class PolicyFailure(PolicyError):
    """A step failed because of the conductor's own output, not the infrastructure: an
    inner call of the conductor (a step routed to itself) wrote no valid plan. The
    episode is an invalid plan (reward for ``invalid``), never a truncation.

    Attributes:
        reason: Machine-readable code (a :data:`conductor_gym.plan.REASONS` entry, or
            an env-level one such as ``"empty_plan"`` or ``"recursion_budget"``).
        detail: What was wrong, and where.
    """


async def _call(
    bound: BoundWorker, messages: list[Message], seed: int | None, retry: RetryPolicy
) -> tuple[Completion, int]:
    """Call ``bound`` with retries; return the completion and the attempts made."""
    attempt = 0
    while True:
        attempt += 1
        try:
            completion = await bound.worker.complete(
                messages,
                max_tokens=bound.max_tokens,
                temperature=bound.temperature,
                seed=seed,
                **bound.params,
            )
            if not isinstance(completion, Completion) or not isinstance(completion.text, str):
                raise WorkerError(
                    f"backend returned {type(completion).__name__}, not a Completion",
                    transient=False,
                    worker=bound.name,
                )
            return completion, attempt
        except WorkerError as exc:
            if not exc.transient or attempt >= retry.max_attempts:
                exc.worker = exc.worker or bound.name
                raise _Failed(exc, attempt) from exc
        except (PolicyFailure, BudgetExceeded):
            raise
        except Exception as exc:  # an unexpected backend exception is a permanent failure
            error = WorkerError(f"{type(exc).__name__}: {exc}", transient=False, worker=bound.name)
            error.__cause__ = exc
            raise _Failed(error, attempt) from exc
        await asyncio.sleep(retry.delay(attempt))


class _Failed(Exception):
    def __init__(self, error: WorkerError, attempts: int) -> None:
        super().__init__(str(error))
        self.error = error
        self.attempts = attempts


async def run_plan(
    plan: Plan,
    workers: Sequence[BoundWorker],
    *,
    question: str,
    seed: int | None = None,
    templates: PromptTemplates = DEFAULT_TEMPLATES,
    question_to_all_workers: bool = False,
    retry: RetryPolicy | None = None,
    prior: Sequence[tuple[str, str]] = (),
    ledgers: Sequence[Ledger] = (),
) -> Trace:
    """Execute ``plan`` on ``workers`` (``workers[i]`` is ``Model i``).

    Args:
        plan: A parsed plan whose model ids index ``workers``.
        workers: The episode's workers with their generation settings.
        question: The user question (given to the first step, or to all with
            ``question_to_all_workers``).
        seed: Episode seed; step ``i`` is called with ``step_seed(seed, i)``. ``None``
            passes no seed.
        templates: How worker messages are written.
        question_to_all_workers: Prefix every step's subtask with the question
            (off by default, as in the paper: only the first step gets it).
        retry: Retry policy for transient failures (default :class:`RetryPolicy`).
        prior: ``(subtask, answer)`` turns from before this plan (in a recursive round,
            the previous round's final step), seen by every step whose access is ``"all"``.
        ledgers: Budgets to check before and charge after every call (the episode's and
            the run's). A worker whose ``aggregates_calls`` is true (the conductor's
            self-worker) is not charged: the calls inside it already were.

    Returns:
        The trace of every step.

    Raises:
        ExecutionError: A worker failed permanently or ran out of retries.
        PolicyFailure: A step routed to the conductor itself got no valid plan.
        BudgetExceeded: A ledger's budget was spent before a step (``trace`` attribute:
            the steps completed).
    """
    retry = retry or RetryPolicy()
    records: list[StepRecord] = []
    responses: list[str] = []
    for i, (model_id, subtask) in enumerate(zip(plan.model_ids, plan.subtasks, strict=True)):
        bound = workers[model_id]
        messages = templates.worker_messages(
            question,
            plan,
            i,
            responses,
            question_to_all_workers=question_to_all_workers,
            prior=prior,
        )
        try:
            for ledger in ledgers:
                ledger.check()
            completion, attempts = await _call(
                bound, messages, None if seed is None else step_seed(seed, i), retry
            )
        except BudgetExceeded as exc:
            exc.trace = Trace(tuple(records))
            raise
        except _Failed as failed:
            raise ExecutionError(
                step=i,
                worker=bound.name,
                error=failed.error,
                attempts=failed.attempts,
                trace=Trace(tuple(records)),
            ) from failed.error
        if not getattr(bound.worker, "aggregates_calls", False):
            for ledger in ledgers:
                ledger.charge(completion)
        responses.append(completion.text)
        records.append(
            StepRecord(
                index=i,
                model_id=model_id,
                worker=bound.name,
                subtask=subtask,
                visible=plan.visible(i),
                messages=tuple(messages),
                response=completion.text,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                cost_usd=completion.cost_usd,
                latency_s=completion.latency_s,
                attempts=attempts,
                cached=completion.cached,
            )
        )
    return Trace(tuple(records))
