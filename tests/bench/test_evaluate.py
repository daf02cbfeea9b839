"""``evaluate``: metrics, the Results file, agents' env overrides, planner usage, batching."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from conductor_gym.agents import RandomPlanner
from conductor_gym.agents.base import AgentError, BaseAgent
from support import solve_plan

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import Results
from conductor_gym.workers.base import Completion


class SolveAgent(BaseAgent):
    """A deterministic planner with no RNG: worker ``task_index % 3`` solves the question.

    Records the size of every ``act_batch`` call."""

    name = "solve"

    def __init__(self) -> None:
        self.batches: list[int] = []

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        return solve_plan(str(info["question"]), int(info["task_index"]) % 3)

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        self.batches.append(len(observations))
        return await super().act_batch(observations, infos)


def test_random_agent_on_offline_gives_plausible_metrics(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    results = evaluate("random", "offline", repeats=2, limit=50, out=out, progress=False)
    m = results.metrics["overall"]
    assert set(results.metrics) == {"overall", "offline"}
    assert m == results.metrics["offline"]
    assert m.n == 100 and m.infra_failures == 0 and m.parse_failure_rate == 0.0
    assert 0.3 < m.accuracy < 0.8 and 0.65 < m.mean_reward < 0.9
    assert m.accuracy_se is not None and 0 < m.accuracy_se < 0.2
    assert 1 <= m.mean_steps <= 5 and m.mean_worker_calls >= m.mean_steps
    assert m.tokens_per_sample > 100 and m.cost_per_sample_usd > 0
    assert results.suite.limit == 50 and results.suite.sources[0].size == 50
    assert results.agent["spec"] == "random" and results.agent["seeding"] == "per-episode"
    assert results.pool["name"] == "sim-paper" and results.repeats == 2
    data = json.loads(out.read_text())
    assert list(data)[:3] == ["schema", "env_id", "env_version"]
    assert set(data) == {
        "schema", "env_id", "env_version", "suite", "pool", "workers", "agent", "env_kwargs",
        "repeats", "seed", "started_at", "wall_time_s", "metrics", "episodes", "domain_metrics",
    }  # fmt: skip
    assert data["schema"] == "conductor-gym/results/v4"
    assert [w["name"] for w in data["workers"]] == [w["name"] for w in data["pool"]["workers"]]
    assert data["workers"][2] == {
        "name": "gpt-5", "backend": "simulated", "model": "gpt-5", "max_tokens": 4096,
        "temperature": 0.2, "params": {}, "options": {"version": "v3.1"}, "price_in_per_mtok": None,
        "price_out_per_mtok": None,
    }  # fmt: skip
    right = [e for e in results.episodes if e.outcome == "correct"]
    assert right and all(e.final_answer is not None for e in right)
    assert all(e.final_answer is None for e in results.episodes if e.outcome == "invalid")
    loaded = Results.load(out)
    assert loaded == results
    loaded.dump(tmp_path / "again.json")
    assert Results.load(tmp_path / "again.json") == results
    first = results.episodes[0]
    assert (first.benchmark, first.repeat, first.task_index) == ("offline", 0, 0)
    assert first.domain == "arithmetic" and "model_id" in first.completion
    # Same arguments, same episodes (the random planner is reseeded per episode).
    again = evaluate("random", "offline", repeats=2, limit=50, progress=False, concurrency=7)
    assert again.episodes == results.episodes and again.metrics == results.metrics


def test_batches_follow_concurrency_and_results_do_not() -> None:
    small, large = SolveAgent(), SolveAgent()
    a = evaluate(small, "offline", repeats=1, limit=40, concurrency=8, progress=False)
    b = evaluate(large, "offline", repeats=1, limit=40, concurrency=64, progress=False)
    assert max(small.batches) <= 8 and max(small.batches) > 1 and sum(small.batches) == 40
    assert max(large.batches) > 8
    assert a.episodes == b.episodes and a.agent["seeding"] == "agent"
    assert a.agent["spec"].endswith(":SolveAgent")


class WideAgent(SolveAgent):
    """Declares the env it needs: plans of up to 8 steps."""

    @property
    def env_overrides(self) -> dict[str, Any]:
        return {"max_steps": 8}

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        assert info["max_steps"] == 8
        return super().act(observation, info)


def test_agent_env_overrides_are_applied_and_recorded() -> None:
    results = evaluate(WideAgent(), "offline", repeats=1, limit=4, progress=False, k=3)
    assert results.env_kwargs == {"k": 3, "max_steps": 8}
    assert results.agent["env_overrides"] == {"max_steps": 8}
    assert results.pool["k"] == 3
    with pytest.raises(ValueError, match="conflicts with the agent's env_overrides"):
        evaluate(WideAgent(), "offline", repeats=1, limit=4, progress=False, max_steps=5)
    with pytest.raises(ValueError, match="'tasks'"):
        evaluate(SolveAgent(), "offline", repeats=1, limit=4, progress=False, tasks="offline")


class MeteredAgent(SolveAgent):
    """Reports its own usage: ``last_usage`` aligned with the last call."""

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        actions = await super().act_batch(observations, infos)
        self.last_usage = [
            {"prompt_tokens": 10, "completion_tokens": int(i["task_index"]), "cost_usd": 0.5}
            for i in infos
        ]
        return actions


class LoggingAgent(SolveAgent):
    """Keeps a log of completions in order of arrival (as the llm: agents do)."""

    def __init__(self) -> None:
        super().__init__()
        self.completions: list[Completion] = []

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        actions = await super().act_batch(observations, infos)
        for action, info in reversed(list(zip(actions, infos, strict=True))):
            tokens = int(info["task_index"])
            self.completions.append(Completion(action, 100, tokens, 0.25, 0.0, "planner"))
        self.completions.append(Completion("a discarded format retry", 3, 3, 1.0, 0.0, "p"))
        return actions


def test_planner_usage_is_recorded() -> None:
    results = evaluate(MeteredAgent(), "offline", repeats=1, limit=6, progress=False)
    assert [e.planner_tokens for e in results.episodes] == [10 + i for i in range(6)]
    assert all(e.planner_cost_usd == 0.5 for e in results.episodes)
    base = evaluate(SolveAgent(), "offline", repeats=1, limit=6, progress=False)
    spent = results.metrics["overall"].tokens_per_sample - base.metrics["overall"].tokens_per_sample
    assert spent == pytest.approx(10 + 2.5)
    agent = LoggingAgent()
    logged = evaluate(agent, "offline", repeats=1, limit=6, progress=False)
    # Matched by text; the unmatched retry is shared over the call's episodes.
    calls = len(agent.batches)
    assert sum(e.planner_tokens for e in logged.episodes) == 600 + 15 + 6 * calls
    assert sum(e.planner_cost_usd for e in logged.episodes) == pytest.approx(6 * 0.25 + calls)


class FailingAgent(SolveAgent):
    """Fault injection: the agent's own model fails (after its retries) on odd tasks."""

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        if int(info["task_index"]) % 2:
            raise AgentError("planner model: 503 after 3 attempts", transient=True)
        return super().act(observation, info)


def test_a_failing_planner_is_an_infrastructure_failure_not_a_score() -> None:
    results = evaluate(FailingAgent(), "offline", repeats=2, limit=6, progress=False)
    m = results.metrics["overall"]
    assert m.n == 12 and m.infra_failures == 6
    failed = [e for e in results.episodes if e.outcome == "error"]
    assert {e.task_index % 2 for e in failed} == {1}
    assert failed[0].error == {
        "kind": "agent",
        "message": "planner model: 503 after 3 attempts",
        "transient": True,
    }
    assert failed[0].completion == "" and failed[0].reward == 0.0
    good = evaluate(SolveAgent(), "offline", repeats=2, limit=6, progress=False)
    even = [e for e in good.episodes if e.task_index % 2 == 0]
    assert m.accuracy == pytest.approx(sum(e.correct for e in even) / len(even))


def test_recursion_loops_the_agent_over_rounds() -> None:
    agent = RandomPlanner(stop_prob=0.5)
    results = evaluate(agent, "offline", repeats=1, limit=30, progress=False, max_recursions=2)
    assert results.env_kwargs == {"max_recursions": 2}
    rounds = [len(e.followups) for e in results.episodes]
    assert set(rounds) <= {0, 1, 2} and max(rounds) >= 1
    assert all(e.outcome in ("correct", "wrong") for e in results.episodes)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="repeats"):
        evaluate("random", "offline", repeats=0, progress=False)
    with pytest.raises(ValueError, match="no-such-agent"):
        evaluate("no-such-agent", "offline", repeats=1, limit=1, progress=False)
