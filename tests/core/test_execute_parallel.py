"""Plans as graphs: steps run as soon as the steps they wait for have finished, with the
trace and outcome of running them in order (conductor_gym.core.execute)."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from conductor_gym.agents import RandomPlanner
from support import ScriptedConductor, plan_text

from conductor_gym import ConductorEnv, ConductorVectorEnv
from conductor_gym.core import env as env_module
from conductor_gym.core import execute, self_worker
from conductor_gym.core.execute import ExecutionError, Trace, run_plan
from conductor_gym.plan import Plan
from conductor_gym.sim.worker import paper_pool_specs
from conductor_gym.workers.base import Completion, Message, Worker, WorkerError
from conductor_gym.workers.bound import BoundWorker, RetryPolicy
from conductor_gym.workers.budget import Budget, BudgetExceeded, Ledger
from conductor_gym.workers.cache import CachedWorker, ResponseCache


class TimedWorker(Worker):
    """Test double: answers each subtask after a chosen real delay (to force which of
    two steps in flight finishes first), reports a chosen latency and logs when each
    call started and ended. ``fail`` names subtasks that fail permanently."""

    def __init__(
        self,
        name: str,
        delays: Mapping[str, float],
        *,
        latency: Mapping[str, float] | None = None,
        tokens: int = 10,
        fail: Sequence[str] = (),
    ) -> None:
        self.name = name
        self.delays = delays
        self.latency = latency or {}
        self.tokens = tokens
        self.fail = set(fail)
        self.log: list[tuple[str, str]] = []

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        subtask = messages[-1]["content"]
        self.log.append(("start", subtask))
        await asyncio.sleep(self.delays.get(subtask, 0.0))
        self.log.append(("end", subtask))
        if subtask in self.fail:
            raise WorkerError("injected permanent failure", transient=False, worker=self.name)
        latency = self.latency.get(subtask, 1.0)
        return Completion(f"answer to {subtask}", self.tokens, self.tokens, 0.01, latency, "t")


PARALLEL_THEN_AGGREGATE = Plan((0, 0, 0), ("a", "b", "c"), ((), (), "all"))
NO_DELAY = RetryPolicy(max_attempts=1, base_delay_s=0.0)


def run(plan: Plan, worker: Any, **kwargs: Any) -> Trace:
    workers = [worker if isinstance(worker, BoundWorker) else BoundWorker(worker)]
    return asyncio.run(run_plan(plan, workers, question="q", retry=NO_DELAY, **kwargs))


# -- overlap and the latency timeline -------------------------------------------------


def test_independent_steps_overlap_and_the_aggregator_waits() -> None:
    worker = TimedWorker("w", {"q\n\na": 0.05, "b": 0.05})
    trace = run(PARALLEL_THEN_AGGREGATE, worker)
    assert worker.log[:2] == [("start", "q\n\na"), ("start", "b")]  # both before either ends
    assert worker.log.index(("start", "c")) > max(
        worker.log.index(("end", "q\n\na")), worker.log.index(("end", "b"))
    )
    sequential = TimedWorker("w", {})
    run(PARALLEL_THEN_AGGREGATE, sequential, parallel=False)
    assert [event for event, _ in sequential.log] == ["start", "end"] * 3
    assert [m["content"] for m in trace.steps[2].messages] == [
        "a", "answer to q\n\na", "b", "answer to b", "c",
    ]  # fmt: skip


def test_the_timeline_follows_the_graph() -> None:
    latency = {"q\n\na": 1.0, "b": 2.0, "c": 3.0, "d": 0.5}
    plan = Plan((0, 0, 0, 0), ("a", "b", "c", "d"), ((), (), (0,), (1, 2)))
    trace = run(plan, TimedWorker("w", {}, latency=latency))
    assert [(s.start_s, s.finish_s) for s in trace.steps] == [
        (0.0, 1.0), (0.0, 2.0), (1.0, 4.0), (4.0, 4.5),
    ]  # fmt: skip
    assert trace.latency_s == 6.5 and trace.critical_path_s == 4.5
    data = trace.to_dict()
    assert data["critical_path_s"] == 4.5 and data["latency_s"] == 6.5


def test_a_chain_has_no_slack_and_all_means_every_earlier_step() -> None:
    trace = run(Plan((0, 0, 0), ("a", "b", "c"), ((), (0,), "all")), TimedWorker("w", {}))
    assert trace.critical_path_s == trace.latency_s == 3.0
    wide = run(Plan((0, 0, 0), ("a", "b", "c"), ((), (), ())), TimedWorker("w", {}))
    assert wide.critical_path_s == 1.0 and wide.latency_s == 3.0


def test_a_self_call_spans_its_inner_plans_critical_path_and_waits_for_every_earlier_step() -> None:
    inner = ScriptedConductor(plan_text([0, 1, 2], ["x", "y", "z"], [[], [], "all"]))
    env = ConductorEnv(max_recursions=1, conductor=inner)
    env.reset(seed=4)
    _, _, _, _, info = env.step(plan_text([0, 7, 1], ["a", "b", "c"], [[], [], []]))
    outer = info["trace"]
    (call,) = info["rounds"][0].self_calls
    inner_trace = call.trace
    assert inner_trace.critical_path_s < inner_trace.latency_s
    self_step = outer.steps[1]
    assert self_step.latency_s == pytest.approx(inner_trace.latency_s)
    assert self_step.start_s == outer.steps[0].finish_s  # it waited for step 0
    assert self_step.finish_s == pytest.approx(self_step.start_s + inner_trace.critical_path_s)
    assert outer.steps[2].start_s == 0.0  # step 2 reads nothing and need not wait


# -- the same episodes as sequential execution -----------------------------------------


@pytest.fixture
def sequential(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Run every plan (inner plans included) one step after another."""
    in_order = functools.partial(execute.run_plan, parallel=False)
    monkeypatch.setattr(env_module, "run_plan", in_order)
    monkeypatch.setattr(self_worker, "run_plan", in_order)
    yield


def play(envs: ConductorVectorEnv, seed: int, agent_seed: int) -> list[Any]:
    _, infos = envs.reset(seed=seed)
    agent = RandomPlanner(seed=agent_seed)
    keys = ("question", "num_workers", "max_steps")
    actions = [agent.act("", {k: infos[k][i] for k in keys}) for i in range(envs.num_envs)]
    _, rewards, _, truncated, step_infos = envs.step(actions)
    final = step_infos["final_info"]
    return [rewards.tolist(), truncated.tolist(), list(final["trace"]), list(final["error"])]


def test_random_plans_on_sleeping_workers_match_sequential_execution(
    request: pytest.FixtureRequest,
) -> None:
    def episodes() -> list[Any]:
        envs = ConductorVectorEnv(48, pool=paper_pool_specs(latency_scale=2e-4))
        try:
            return [play(envs, seed=s, agent_seed=s) for s in (0, 1)]
        finally:
            envs.close()

    parallel = episodes()
    request.getfixturevalue("sequential")
    assert parallel == episodes()
    traces = [t for batch in parallel for t in batch[2]]
    assert any(t.critical_path_s < t.latency_s for t in traces)  # overlap really happened


def test_recursive_episodes_with_self_calls_match_sequential_execution(
    request: pytest.FixtureRequest,
) -> None:
    def episodes() -> list[Any]:
        agent = RandomPlanner(seed=3, self_calls=True)
        env = ConductorEnv(max_recursions=2, conductor=agent)
        out = []
        for seed in range(30):
            agent.reseed(seed)
            obs, info = env.reset(seed=seed)
            done = False
            while not done:
                obs, reward, terminated, truncated, info = env.step(agent.act(obs, info))
                done = terminated or truncated
            out.append((reward, info["outcome"], info["rounds"], info["latency_s"]))
        return out

    parallel = episodes()
    request.getfixturevalue("sequential")
    assert parallel == episodes()
    assert any(call for _, _, rounds, _ in parallel for r in rounds for call in r.self_calls)


# -- budgets and failures while steps are in flight ------------------------------------


@pytest.mark.parametrize("first_to_finish", ["a", "b"])
@pytest.mark.parametrize("budget", [Budget(max_tokens=1), Budget(max_calls=1)])
def test_a_budget_spent_while_two_steps_are_in_flight_refuses_the_later_step(
    first_to_finish: str, budget: Budget
) -> None:
    """Steps 0 and 1 run at once; step 0 spends the budget. Whichever finishes first,
    step 0 is charged and step 1 is refused, as in sequential execution; step 1's call
    is kept as discarded and counted apart."""
    delays = {"q\n\na": 0.0, "b": 0.0}
    delays["q\n\na" if first_to_finish == "b" else "b"] = 0.05
    outcomes = []
    for parallel in (True, False):
        worker = TimedWorker("w", delays)
        ledger = Ledger(budget, scope="episode")
        with pytest.raises(BudgetExceeded) as caught:
            run(PARALLEL_THEN_AGGREGATE, worker, ledgers=[ledger], parallel=parallel)
        error = caught.value
        outcomes.append((error.to_dict(), error.trace, ledger.calls, ledger.tokens))
        if parallel:
            assert worker.log[:2] == [("start", "q\n\na"), ("start", "b")]
            assert [s.index for s in error.trace.discarded] == [1]
            assert (ledger.discarded_calls, ledger.discarded_tokens) == (1, 20)
            assert ledger.discarded_usd == pytest.approx(0.01)
            assert ledger.to_dict()["discarded_calls"] == 1
        else:
            assert error.trace.discarded == () and ledger.discarded_calls == 0
    assert outcomes[0] == outcomes[1]
    assert [s.index for s in outcomes[0][1].steps] == [0] and outcomes[0][2] == 1


def test_a_budget_spent_before_a_step_starts_refuses_it_without_a_call() -> None:
    worker = TimedWorker("w", {"q\n\na": 0.02})
    ledger = Ledger(Budget(max_calls=2))
    plan = Plan((0, 0, 0, 0), ("a", "b", "c", "d"), ((), (0,), (1,), ()))
    with pytest.raises(BudgetExceeded) as caught:
        run(plan, worker, ledgers=[ledger])
    # step 3 ran with step 0 and is discarded; step 2 was refused before any call
    assert [s.index for s in caught.value.trace.steps] == [0, 1]
    assert [s.index for s in caught.value.trace.discarded] == [3]
    assert ("start", "c") not in worker.log and ledger.calls == 2


@pytest.mark.parametrize("slow", ["a", "b"])
def test_a_failure_in_flight_ends_the_run_at_the_first_failing_step_in_step_order(
    slow: str,
) -> None:
    first = "q\n\na"
    delays = {first: 0.05 if slow == "a" else 0.0, "b": 0.05 if slow == "b" else 0.0}
    errors = []
    for parallel in (True, False):
        worker = TimedWorker("w", delays, fail=["b"])
        with pytest.raises(ExecutionError) as caught:
            run(PARALLEL_THEN_AGGREGATE, worker, parallel=parallel)
        errors.append((caught.value.to_dict(), caught.value.trace))
        assert ("start", "c") not in worker.log
    assert errors[0] == errors[1] and errors[0][0]["step"] == 1
    assert [s.index for s in errors[0][1].steps] == [0]


def test_an_earlier_failure_discards_a_later_step_that_finished_first() -> None:
    worker = TimedWorker("w", {"q\n\na": 0.05}, fail=["q\n\na"])
    ledger = Ledger()
    with pytest.raises(ExecutionError) as caught:
        run(PARALLEL_THEN_AGGREGATE, worker, ledgers=[ledger])
    assert caught.value.step == 0 and caught.value.trace.steps == ()
    assert [s.response for s in caught.value.trace.discarded] == ["answer to b"]
    assert ledger.calls == 0 and ledger.discarded_calls == 1


def test_steps_still_running_when_the_run_ends_are_cancelled() -> None:
    worker = TimedWorker("w", {"b": 5.0}, fail=["q\n\na"])
    start = time.perf_counter()
    with pytest.raises(ExecutionError):
        run(PARALLEL_THEN_AGGREGATE, worker)
    assert time.perf_counter() - start < 2.0 and ("end", "b") not in worker.log


# -- identical greedy calls and the response cache -------------------------------------


def test_an_identical_greedy_call_waits_so_the_cache_answers_it(tmp_path: Path) -> None:
    plan = Plan((0, 0, 0), ("same", "same", "other"), ((), (), ()))
    traces = []
    for parallel in (True, False):
        with ResponseCache(tmp_path / f"{parallel}.sqlite") as cache:
            timed = TimedWorker("w", {"q\n\nsame": 0.02})
            bound = BoundWorker(CachedWorker(timed, cache, "test/w"), temperature=0.0)
            trace = run(plan, bound, question_to_all_workers=True, parallel=parallel)
        traces.append(trace)
        if parallel:  # the different call ran alongside; the repeat waited
            assert timed.log == [
                ("start", "q\n\nsame"), ("start", "q\n\nother"),
                ("end", "q\n\nother"), ("end", "q\n\nsame"),
            ]  # fmt: skip
    assert traces[0] == traces[1]
    assert [s.cached for s in traces[0].steps] == [False, True, False]
    assert traces[0].steps[1].start_s == traces[0].steps[0].finish_s
