from __future__ import annotations

import asyncio

import pytest
from support import FlakyWorker

from conductor_gym.core.execute import ExecutionError, run_plan
from conductor_gym.plan import Plan
from conductor_gym.pool.pool import make_pool
from conductor_gym.seeding import stream_seed
from conductor_gym.tasks import Task
from conductor_gym.workers.base import Worker
from conductor_gym.workers.bound import BoundWorker, RetryPolicy

TASK = Task(
    id="t-1",
    question="Compute 12 * 12 + 7.",
    reference="151",
    grader="numeric",
    domain="arithmetic",
    metadata={"profile": "math500", "solution": "151", "distractors": ["144", "152", "161"]},
)
NO_RETRY_DELAY = RetryPolicy(max_attempts=3, base_delay_s=0.0)


def sim_workers(k: int = 3) -> tuple[BoundWorker, ...]:
    draw = make_pool("sim-paper").workers[:k]
    return tuple(
        BoundWorker(b.worker.for_task(TASK), b.max_tokens, b.temperature)  # type: ignore[attr-defined]
        for b in draw
    )


def test_trace_of_a_three_step_plan(three_step_plan: Plan) -> None:
    workers = sim_workers()
    trace = asyncio.run(run_plan(three_step_plan, workers, question=TASK.question, seed=5))
    assert [s.index for s in trace.steps] == [0, 1, 2]
    assert [s.worker for s in trace.steps] == ["gemini-2.5-pro", "claude-sonnet-4", "gpt-5"]
    assert [s.subtask for s in trace.steps] == list(three_step_plan.subtasks)
    assert [s.visible for s in trace.steps] == [(), (0,), (1,)]
    # step 2 sees only step 1's subtask and answer, then its own subtask
    assert [(m["role"], m["content"]) for m in trace.steps[2].messages] == [
        ("user", "Check the answer above."),
        ("assistant", trace.steps[1].response),
        ("user", "Give the final answer."),
    ]
    assert trace.steps[0].messages[-1]["content"].startswith(TASK.question)
    assert trace.final_response == trace.steps[2].response
    assert trace.worker_calls == 3
    assert trace.prompt_tokens == sum(s.prompt_tokens for s in trace.steps) > 0
    assert trace.completion_tokens > 0 and trace.cost_usd > 0 and trace.latency_s > 0
    assert all(s.attempts == 1 for s in trace.steps)
    data = trace.to_dict()
    assert data["final_response"] == trace.final_response and len(data["steps"]) == 3


def test_same_seed_same_trace_and_seeds_differ_per_step(three_step_plan: Plan) -> None:
    a = asyncio.run(run_plan(three_step_plan, sim_workers(), question=TASK.question, seed=7))
    b = asyncio.run(run_plan(three_step_plan, sim_workers(), question=TASK.question, seed=7))
    assert a == b
    assert len({stream_seed(7, i) for i in range(5)}) == 5


def test_transient_failures_are_retried() -> None:
    flaky = FlakyWorker("flaky", failures=2)
    plan = Plan((0,), ("Solve.",), ((),))
    trace = asyncio.run(run_plan(plan, [BoundWorker(flaky)], question="q", retry=NO_RETRY_DELAY))
    assert flaky.calls == 3 and trace.steps[0].attempts == 3 and trace.worker_calls == 3


@pytest.mark.parametrize(
    ("worker", "attempts", "transient", "error_type"),
    [
        (FlakyWorker("w", failures=9), 3, True, "WorkerError"),
        (FlakyWorker("w", failures=9, transient=False), 1, False, "WorkerError"),
        (
            FlakyWorker("w", failures=9, error=ConnectionResetError),
            1,
            False,
            "ConnectionResetError",
        ),
    ],
    ids=["retries-exhausted", "permanent", "unexpected-exception"],
)
def test_failures_raise_execution_error_with_partial_trace(
    worker: FlakyWorker, attempts: int, transient: bool, error_type: str
) -> None:
    good = FlakyWorker("good", failures=0)
    plan = Plan((0, 1), ("Solve.", "Check."), ((), "all"))
    with pytest.raises(ExecutionError) as caught:
        asyncio.run(
            run_plan(
                plan, [BoundWorker(good), BoundWorker(worker)], question="q", retry=NO_RETRY_DELAY
            )
        )
    err = caught.value
    assert err.step == 1 and err.worker == "w" and err.attempts == attempts
    assert [s.worker for s in err.trace.steps] == ["good"]
    info = err.to_dict()
    assert info["kind"] == "infrastructure" and info["transient"] is transient
    assert info["error_type"] == error_type and info["worker"] == "w"


def test_backend_returning_a_non_completion_is_an_error() -> None:
    class Broken(Worker):
        name = "broken"

        async def complete(self, messages, **kwargs):  # type: ignore[no-untyped-def]
            return "an error string pretending to be an answer"

    plan = Plan((0,), ("Solve.",), ((),))
    with pytest.raises(ExecutionError, match="not a Completion"):
        asyncio.run(run_plan(plan, [BoundWorker(Broken())], question="q"))  # type: ignore[arg-type]


def test_retry_policy_backoff_is_bounded() -> None:
    policy = RetryPolicy(max_attempts=5, base_delay_s=0.5, max_delay_s=2.0)
    assert all(0.0 <= policy.delay(a) <= min(2.0, 0.5 * 2 ** (a - 1)) for a in range(1, 8))
    with pytest.raises(ValueError, match="max_attempts must be an int >= 1"):
        RetryPolicy(max_attempts=0)
