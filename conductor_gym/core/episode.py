"""The state of one conductor episode, and its rounds."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conductor_gym._validate import is_int
from conductor_gym.core.execute import StepRecord, Trace
from conductor_gym.core.info import ParseError, Totals
from conductor_gym.core.reward import Spend
from conductor_gym.core.self_worker import SELF_WORKER_NAME, RecursionBudget, SelfCall, SelfWorker
from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import Plan
from conductor_gym.pool.pool import PoolDraw
from conductor_gym.tasks import Task
from conductor_gym.workers.bound import BoundWorker
from conductor_gym.workers.budget import Ledger

__all__ = [
    "ENV_REASONS",
    "EpisodeState",
    "Round",
    "bind_task",
    "critical_path_s",
    "draw_forced",
    "option_task_index",
]

ENV_REASONS: dict[str, str] = {
    "empty_plan": (
        "three empty lists return the current answer in a recursive round; the first plan "
        "of an episode needs at least one step"
    ),
    "recursion_required": (
        "this episode must make an inner call (forced recursion): three empty lists are not "
        "accepted before one"
    ),
}
"""Invalid-plan reasons the env adds to :data:`conductor_gym.plan.REASONS` (and their
details); ``"recursion_budget"`` comes from :mod:`conductor_gym.core.self_worker`."""


@dataclass(frozen=True)
class Round:
    """One plan of an episode: round 0 answers the question, later rounds re-plan.

    ``plan`` is ``None`` when the completion did not parse (``parse_error`` says why);
    the empty plan (stop) has no trace. ``self_calls`` lists the inner conductor calls
    made by this round's steps.
    """

    index: int
    plan: Plan | None
    trace: Trace | None
    parse_error: ParseError | None = None
    self_calls: tuple[SelfCall, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "plan": self.plan.to_dict() if self.plan is not None else None,
            "trace": self.trace.to_dict() if self.trace is not None else None,
            "parse_error": self.parse_error,
            "self_calls": [c.to_dict() for c in self.self_calls],
        }


@dataclass
class EpisodeState:
    task: Task
    task_index: int
    draw: PoolDraw
    workers: tuple[BoundWorker, ...]
    self_worker: SelfWorker | None
    seed: int
    budget: RecursionBudget
    force_recursion: bool
    observation: str
    ledgers: tuple[Ledger, ...] = ()
    """The episode's spending ledger, then the run's (the pool's)."""
    rounds: list[Round] = field(default_factory=list)
    answer: str | None = None
    last_subtask: str = ""
    initial_answer: str | None = None
    done: bool = False

    @property
    def self_id(self) -> int | None:
        return self.self_worker.self_id if self.self_worker is not None else None

    def self_calls_since(self, start: int) -> tuple[SelfCall, ...]:
        """Inner conductor calls made after the first ``start`` of them."""
        return tuple(self.self_worker.calls[start:]) if self.self_worker is not None else ()

    @property
    def self_call_count(self) -> int:
        return len(self.self_worker.calls) if self.self_worker is not None else 0

    def inner_calls(self, max_recursions: int) -> int:
        return max_recursions - self.budget.left

    def _worker_steps(self) -> list[StepRecord]:
        """Every step that called a real worker, in every round and inner call (a
        self-call step stands for its inner plan, whose steps are counted instead)."""
        traces = [r.trace for r in self.rounds if r.trace is not None]
        inner = [c.trace for r in self.rounds for c in r.self_calls]
        return [s for t in (*traces, *inner) for s in t.steps if s.worker != SELF_WORKER_NAME]

    def spend(self) -> Spend:
        """What the episode's plans spent on workers, for cost-aware rewards."""
        traces = [r.trace for r in self.rounds if r.trace is not None]
        return Spend(
            usd=sum(t.cost_usd for t in traces),
            tokens=sum(t.prompt_tokens + t.completion_tokens for t in traces),
            calls=len(self._worker_steps()),
        )

    def totals(self) -> Totals:
        """Accounting over every round and inner call so far."""
        traces = [r.trace for r in self.rounds if r.trace is not None]
        real = self._worker_steps()
        return {
            "worker_calls": sum(step.attempts for step in real),
            # A self-call step's completion already carries its inner plan's totals.
            "prompt_tokens": sum(t.prompt_tokens for t in traces),
            "completion_tokens": sum(t.completion_tokens for t in traces),
            "cost_usd": sum(t.cost_usd for t in traces),
            "billed_usd": sum(step.cost_usd for step in real if not step.cached),
            "cache_saved_usd": sum(step.cost_usd for step in real if step.cached),
            "latency_s": sum(t.latency_s for t in traces),
        }


def critical_path_s(rounds: Sequence[Round]) -> float:
    """An episode's latency with every plan's steps run as soon as they may: the sum of
    its rounds' critical paths (rounds run one after another; an inner call counts with
    its own plan's critical path). Compare ``info["latency_s"]``, the summed latency."""
    return sum(r.trace.critical_path_s for r in rounds if r.trace is not None)


def bind_task(bound: BoundWorker, task: Task) -> BoundWorker:
    """``bound`` with its worker for ``task`` (:meth:`~conductor_gym.workers.base.Worker.for_task`:
    simulated backends need the task's ground truth; real ones are used as they are)."""
    worker = bound.worker.for_task(task)
    return bound if worker is bound.worker else dataclasses.replace(bound, worker=worker)


def option_task_index(options: dict[str, Any], drawn: int, num_tasks: int) -> int:
    """The task of a reset: ``options["task_index"]`` when given (validated), else the
    index the env drew (drawn either way, so the rest of the draw does not depend on it)."""
    if "task_index" not in options:
        return drawn
    index = options["task_index"]
    if not is_int(index):
        raise ConfigurationError("reset: options['task_index'] must be an int")
    if not 0 <= index < num_tasks:
        raise ConfigurationError(
            f"reset: options['task_index']={index} is outside 0..{num_tasks - 1}"
        )
    return int(index)


def draw_forced(
    force_recursion: bool | float,
    rng: np.random.Generator,
    options: dict[str, Any],
    max_recursions: int,
) -> bool:
    """Whether a reset's episode must recurse: ``options["force_recursion"]`` when given
    (validated), else ``force_recursion`` (a probability is drawn from ``rng``, and is
    drawn whether or not the option overrides it, so the rest of the draw is the same)."""
    forced = bool(force_recursion)
    if not isinstance(force_recursion, bool) and 0.0 < force_recursion < 1.0:
        forced = bool(rng.random() < force_recursion)
    if "force_recursion" not in options:
        return forced
    forced = options["force_recursion"]
    if not isinstance(forced, bool):
        raise ConfigurationError("reset: options['force_recursion'] must be a bool")
    if forced and max_recursions == 0:
        raise ConfigurationError("reset: force_recursion needs max_recursions >= 1")
    return forced
