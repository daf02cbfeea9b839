"""Run a plan: call each step's worker with the context its access list selects.

:func:`run_plan` is a coroutine so that many episodes share one event loop (the vector
env steps hundreds concurrently). Each call passes the worker's ``max_tokens`` and
``temperature`` (paper app. A: 4096 and 0.2) and a per-step ``seed`` derived from the
episode seed, so seeded backends (the simulated pool) reproduce an episode exactly.

Plans are graphs. A step's access list names the steps it reads (``[]`` none, a list of
indices those, ``"all"`` every earlier one); by default (``parallel=True``) each step
starts as soon as the steps it waits for have finished, so ``[[], [], "all"]`` costs two
call latencies, not three. The result is the one sequential execution (``parallel=False``,
each step after the previous) gives, step for step: the same messages, seeds, responses,
tokens, costs, trace and failure or budget outcome. The rules that make it so:

* **What a step waits for.** The steps it reads; every earlier step, if its worker
  aggregates calls (the conductor's self-worker runs an inner plan that charges the
  ledgers, spends the recursion budget and asks the policy, all in step order); and an
  earlier, identical call to the same greedy (``temperature == 0``) worker, so that a
  response cache answers the repeat from the first call, as it would in order.
* **Commit in step order.** A finished step's usage is charged to the ledgers, and its
  record joins the trace, only after every earlier step's. The run therefore ends at the
  first failing step in step order, with the steps before it as its trace, whatever
  finished first in time.
* **Budgets.** Before each call the ledgers are checked (a spent budget refuses it and
  nothing is spent). A step that started while an earlier step was still running is
  checked again at its turn to commit, against the ledgers charged with every earlier
  step: the very check sequential execution makes before that call. So when a budget runs
  out while two steps are in flight, the earlier step (in step order) is charged and
  completes; the later one is refused, and the run ends with
  :class:`~conductor_gym.workers.budget.BudgetExceeded` at it, as sequential execution
  would. Its call was made, though: it is kept in :attr:`Trace.discarded` and counted in
  each ledger's ``discarded_*`` figures, never in its budget figures (the decisions stay
  those of sequential execution). Steps still running when a run ends are cancelled.

Latency. :attr:`Trace.latency_s` is the plan's summed worker latency (how long it takes
with steps in order); :attr:`Trace.critical_path_s` the longest chain of steps that wait
for each other (how long it takes with steps in parallel, the physical limit). Each
:class:`StepRecord` carries its place on that timeline (``start_s``, ``finish_s``), the
same in both modes.

A worker failure is never an answer. Transient :class:`WorkerError`\\ s are retried with
jittered exponential backoff (:class:`RetryPolicy`); a permanent error, any other
exception raised by a backend, or a transient one that outlives its retries ends the
run with :class:`ExecutionError`, which carries the partial :class:`Trace`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from conductor_gym.core.prompts import DEFAULT_TEMPLATES, PromptTemplates
from conductor_gym.errors import InfrastructureError, PolicyError, SimulatorFault
from conductor_gym.plan import Plan
from conductor_gym.seeding import stream_seed
from conductor_gym.workers.base import Completion, Message, WorkerError
from conductor_gym.workers.bound import BoundWorker, RetryPolicy
from conductor_gym.workers.budget import BudgetExceeded, Ledger

__all__ = [
    "ExecutionError",
    "PlanCompletion",
    "PolicyFailure",
    "StepRecord",
    "Trace",
    "run_plan",
]


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
    start_s: float = 0.0
    """Where the step starts on the plan's latency timeline: the latest ``finish_s`` of
    the steps it waits for (0 for none). Set by :func:`run_plan`, equal in both modes."""
    finish_s: float = 0.0
    """``start_s`` plus the step's span: its ``latency_s``, or for a step that ran an
    inner plan (a :class:`PlanCompletion`), that plan's critical path."""

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["messages"] = [dict(m) for m in self.messages]
        data["visible"] = list(self.visible)
        return data


@dataclass(frozen=True)
class Trace:
    """Every step of one executed plan, with totals.

    ``discarded`` holds the calls that parallel execution made but threw away because an
    earlier step (in step order) ended the run first (see the module docstring); they are
    no part of the plan's answer or totals, and not compared by ``==``, so a trace equals
    the sequential run's.
    """

    steps: tuple[StepRecord, ...] = ()
    discarded: tuple[StepRecord, ...] = field(default=(), compare=False)

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
        """Summed worker latency: how long the plan takes with its steps run in order."""
        return sum(s.latency_s for s in self.steps)

    @property
    def critical_path_s(self) -> float:
        """The latency of the longest chain of steps that wait for each other: how long
        the plan takes with each step run as soon as it may (``max(finish_s)``)."""
        return max((s.finish_s for s in self.steps), default=0.0)

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
            "critical_path_s": self.critical_path_s,
            "discarded": [s.to_dict() for s in self.discarded],
        }


@dataclass(frozen=True)
class PlanCompletion(Completion):
    """A completion that stands for an inner plan (the conductor's self-worker returns
    one): its ``latency_s`` sums the inner steps', ``critical_path_s`` is the inner
    plan's critical path, the step's span on the outer timeline."""

    critical_path_s: float = 0.0


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
                bound.messages(messages),
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
        except (PolicyFailure, BudgetExceeded, SimulatorFault):
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
    parallel: bool = True,
) -> Trace:
    """Execute ``plan`` on ``workers`` (``workers[i]`` is ``Model i``).

    Args:
        plan: A parsed plan whose model ids index ``workers``.
        workers: The episode's workers with their generation settings.
        question: The user question (given to the first step, or to all with
            ``question_to_all_workers``).
        seed: Episode seed; step ``i`` is called with
            :func:`~conductor_gym.seeding.stream_seed` ``(seed, i)``. ``None`` passes no seed.
        templates: How worker messages are written.
        question_to_all_workers: Prefix every step's subtask with the question
            (off by default, as in the paper: only the first step gets it).
        retry: Retry policy for transient failures (default :class:`RetryPolicy`).
        prior: ``(subtask, answer)`` turns from before this plan (in a recursive round,
            the previous round's final step), seen by every step whose access is ``"all"``.
        ledgers: Budgets to check before and charge after every call (the episode's and
            the run's). A worker whose ``aggregates_calls`` is true (the conductor's
            self-worker) is not charged: the calls inside it already were.
        parallel: Start each step as soon as the steps it waits for have finished
            (default); ``False`` runs one step after another. Both give the same trace
            and outcome (module docstring).

    Returns:
        The trace of every step.

    Raises:
        ExecutionError: A worker failed permanently or ran out of retries.
        PolicyFailure: A step routed to the conductor itself got no valid plan.
        BudgetExceeded: A ledger's budget was spent before a step (``trace`` attribute:
            the steps completed).
    """
    run = _PlanRun(
        plan,
        workers,
        question=question,
        seed=seed,
        templates=templates,
        question_to_all_workers=question_to_all_workers,
        retry=retry or RetryPolicy(),
        prior=prior,
        ledgers=ledgers,
        parallel=parallel,
    )
    return await run.execute()


def _aggregates(bound: BoundWorker) -> bool:
    return bound.worker.aggregates_calls


_Outcome = tuple[Completion, int] | BaseException
"""A finished call: the completion and attempts made, or what it raised."""


class _PlanRun:
    """The state of one :func:`run_plan` call: steps started, finished and committed.

    ``committed`` steps (a prefix, in step order) have been charged and recorded; a step
    is *running* while its call task exists, *finished* once its outcome is in
    ``outcomes``. The loop commits what it can, starts what it may, then waits for any
    running call. A step that is the only one able to run is awaited in place (no task):
    chains, the common case, cost no more than a plain loop.
    """

    def __init__(
        self,
        plan: Plan,
        workers: Sequence[BoundWorker],
        *,
        question: str,
        seed: int | None,
        templates: PromptTemplates,
        question_to_all_workers: bool,
        retry: RetryPolicy,
        prior: Sequence[tuple[str, str]],
        ledgers: Sequence[Ledger],
        parallel: bool,
    ) -> None:
        self.plan = plan
        self.bound = [workers[m] for m in plan.model_ids]
        self.question = question
        self.seed = seed
        self.templates = templates
        self.question_to_all_workers = question_to_all_workers
        self.retry = retry
        self.prior = prior
        self.ledgers = ledgers
        self.parallel = parallel
        n = len(plan)
        self.records: list[StepRecord] = []
        self.discarded: list[StepRecord] = []
        self.running: dict[int, asyncio.Task[tuple[Completion, int]]] = {}
        self.outcomes: dict[int, _Outcome] = {}
        self.messages: list[list[Message] | None] = [None] * n
        self.responses: list[str] = [""] * n
        self.start_s = [0.0] * n
        self.speculative: set[int] = set()
        self.refused: dict[int, BudgetExceeded] = {}
        self.horizon = n
        """No step at or after it starts: an earlier one is known to fail or be refused."""
        self._wake: asyncio.Future[None] | None = None

    @property
    def committed(self) -> int:
        return len(self.records)

    async def execute(self) -> Trace:
        n = len(self.plan)
        try:
            while True:
                self._commit_ready()
                if self.committed == n:
                    return Trace(tuple(self.records))
                ready = self._start_ready()
                if len(ready) == 1 and not self.running:
                    await self._run_in_place(*ready[0])
                else:
                    for i, messages in ready:
                        self._launch(i, messages)
                    await self._wait()
        except (BudgetExceeded, ExecutionError) as exc:
            await self._stop()
            exc.trace = Trace(tuple(self.records), tuple(self.discarded))
            raise
        finally:
            await self._stop()

    # -- starting ----------------------------------------------------------------------

    def _ok(self, j: int) -> bool:
        """Step ``j`` finished with an answer."""
        return j in self.outcomes and not isinstance(self.outcomes[j], BaseException)

    def _answer(self, j: int) -> tuple[Completion, int]:
        outcome = self.outcomes[j]
        assert not isinstance(outcome, BaseException)
        return outcome

    def _waits_for(self, i: int, messages: list[Message]) -> tuple[int, ...]:
        """The earlier steps step ``i`` waits for (module docstring), in step order."""
        if _aggregates(self.bound[i]):
            return tuple(range(i))
        reads = set(self.plan.visible(i))
        if self.bound[i].temperature == 0:
            same = [j for j in range(i) if self.bound[j] is self.bound[i]]
            reads.update(j for j in same if self.messages[j] == messages)
        return tuple(sorted(reads))

    def _may_start(self, i: int) -> list[Message] | None:
        """Step ``i``'s messages if it may start now, else ``None``."""
        if not self.parallel or _aggregates(self.bound[i]):
            if i != self.committed:
                return None
        elif not all(self._ok(j) for j in self.plan.visible(i)):
            return None
        messages = self.messages[i]
        if messages is None:
            for j in self.plan.visible(i):
                self.responses[j] = self._answer(j)[0].text
            messages = self.templates.worker_messages(
                self.question,
                self.plan,
                i,
                self.responses,
                question_to_all_workers=self.question_to_all_workers,
                prior=self.prior,
            )
            self.messages[i] = messages  # fixed once the steps it reads have answered
        if self.bound[i].temperature == 0:
            for j in range(self.committed, i):
                same = self.bound[j] is self.bound[i]
                if same and not self._ok(j) and self.messages[j] in (None, messages):
                    return None  # an identical greedy call may still come first
        return messages

    def _start_ready(self) -> list[tuple[int, list[Message]]]:
        """The steps that may start now, budget-checked; raise a refusal that sequential
        execution would meet now."""
        ready: list[tuple[int, list[Message]]] = []
        for i in range(self.committed, self.horizon):
            if i in self.running or i in self.outcomes or i in self.refused:
                continue
            messages = self._may_start(i)
            if messages is None:
                continue
            try:
                for ledger in self.ledgers:
                    ledger.check()
            except BudgetExceeded as exc:
                if i == self.committed:
                    raise
                self.refused[i] = exc  # decided at its turn to commit
                self.horizon = i + 1  # every later step would be refused too
                break
            if i > self.committed:
                self.speculative.add(i)
            waits = self._waits_for(i, messages)
            self.start_s[i] = max((self._finish_s(j) for j in waits), default=0.0)
            ready.append((i, messages))
        return ready

    def _seed(self, i: int) -> int | None:
        return None if self.seed is None else stream_seed(self.seed, i)

    async def _run_in_place(self, i: int, messages: list[Message]) -> None:
        try:
            self._finished(i, await _call(self.bound[i], messages, self._seed(i), self.retry))
        except (_Failed, PolicyFailure, BudgetExceeded) as exc:
            self._finished(i, exc)

    def _launch(self, i: int, messages: list[Message]) -> None:
        task = asyncio.create_task(_call(self.bound[i], messages, self._seed(i), self.retry))
        task.add_done_callback(self._wake_up)
        self.running[i] = task

    def _wake_up(self, _task: asyncio.Task[tuple[Completion, int]]) -> None:
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)

    async def _wait(self) -> None:
        """Until a running call finishes (at once if one already has); move the finished
        ones to ``outcomes``."""
        if not self._harvest():
            self._wake = asyncio.get_running_loop().create_future()
            await self._wake
            self._harvest()

    def _harvest(self) -> bool:
        done = [(i, t) for i, t in self.running.items() if t.done()]
        for i, task in done:
            del self.running[i]
            if not task.cancelled():
                error = task.exception()
                self._finished(i, error if error is not None else task.result())
        return bool(done)

    def _finished(self, i: int, outcome: _Outcome) -> None:
        self.outcomes[i] = outcome
        if isinstance(outcome, BaseException):
            self.horizon = min(self.horizon, i + 1)

    def _finish_s(self, j: int) -> float:
        completion = self._answer(j)[0]
        span = (
            completion.critical_path_s
            if isinstance(completion, PlanCompletion)
            else completion.latency_s
        )
        return self.start_s[j] + span

    # -- committing --------------------------------------------------------------------

    def _commit_ready(self) -> None:
        """Charge and record finished steps in step order; raise the first failure."""
        while self.committed < len(self.plan):
            i = self.committed
            if i in self.refused:
                for ledger in self.ledgers:
                    ledger.check()  # raises: ledgers only grow since the refusal
                raise self.refused[i]
            if i not in self.outcomes:
                return
            outcome = self.outcomes[i]
            if isinstance(outcome, _Failed):
                raise ExecutionError(
                    step=i,
                    worker=self.bound[i].name,
                    error=outcome.error,
                    attempts=outcome.attempts,
                    trace=Trace(tuple(self.records)),
                ) from outcome.error
            if isinstance(outcome, BaseException):
                raise outcome
            completion = outcome[0]
            if i in self.speculative:
                try:
                    for ledger in self.ledgers:
                        ledger.check()  # the check sequential execution makes before i
                except BudgetExceeded:
                    self._discard(i)
                    raise
            if not _aggregates(self.bound[i]):
                for ledger in self.ledgers:
                    ledger.charge(completion)
            self.records.append(self._record(i))

    def _record(self, i: int) -> StepRecord:
        completion, attempts = self._answer(i)
        messages = self.messages[i]
        assert messages is not None
        return StepRecord(
            index=i,
            model_id=self.plan.model_ids[i],
            worker=self.bound[i].name,
            subtask=self.plan.subtasks[i],
            visible=self.plan.visible(i),
            messages=tuple(messages),
            response=completion.text,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            cost_usd=completion.cost_usd,
            latency_s=completion.latency_s,
            attempts=attempts,
            cached=completion.cached,
            start_s=self.start_s[i],
            finish_s=self._finish_s(i),
        )

    def _discard(self, i: int) -> None:
        """Keep a finished call that will not be committed in ``discarded`` and count it
        in the ledgers' ``discarded_*`` figures."""
        if not _aggregates(self.bound[i]):
            for ledger in self.ledgers:
                ledger.discard(self._answer(i)[0])
        self.discarded.append(self._record(i))

    async def _stop(self) -> None:
        """Cancel the calls still running; keep the finished, uncommitted answers as
        discarded (once: they are forgotten afterwards)."""
        running = list(self.running.values())
        for task in running:
            task.cancel()
        if running:
            await asyncio.gather(*running, return_exceptions=True)
            self._harvest()
        self.running.clear()
        kept = {d.index for d in self.discarded}
        for i in sorted(self.outcomes):
            if i >= self.committed and i not in kept and self._ok(i):
                self._discard(i)
        self.outcomes.clear()
