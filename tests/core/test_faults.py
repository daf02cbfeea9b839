"""Fault injection: a pool whose every worker fails 30 % of its calls transiently.

Retries must make the faults invisible to every episode that completes (same reward,
same answers as a fault-free run), and an episode whose retries run out must end
truncated with the failing worker and error class named, never scored as wrong.
"""

from __future__ import annotations

import dataclasses

import pytest
from support import FaultyWorker, plan_text

from conductor_gym import ConductorEnv
from conductor_gym.pool.pool import WorkerPool
from conductor_gym.sim.worker import make_simulated_worker, paper_pool_specs
from conductor_gym.workers.bound import RetryPolicy
from conductor_gym.workers.spec import WorkerSpec, register_backend

EPISODES = 240


@pytest.fixture(scope="module", autouse=True)
def _faulty_backend() -> None:
    def build(spec: WorkerSpec) -> FaultyWorker:
        options = dict(spec.backend_options)
        inner = dataclasses.replace(spec, backend="simulated", backend_options={})
        return FaultyWorker(make_simulated_worker(inner), options["rate"], options["seed"])

    register_backend("test-faulty", build)


def faulty_pool(rate: float) -> WorkerPool:
    return WorkerPool(
        [
            dataclasses.replace(
                spec, backend="test-faulty", backend_options={"rate": rate, "seed": i}
            )
            for i, spec in enumerate(paper_pool_specs())
        ]
    )


def play(env: ConductorEnv, seed: int) -> tuple[float, bool, dict[str, object]]:
    _, info = env.reset(seed=seed)
    ids = [seed % 7, (seed + 3) % 7, (seed + 5) % 7]
    action = plan_text(
        ids,
        ["Solve the task.", "Check the answer above.", "State the final answer."],
        [[], "all", [1]],
    )
    _, reward, terminated, truncated, info = env.step(action)
    assert terminated != truncated
    return float(reward), truncated, info


def test_retries_hide_transient_faults_and_exhausted_retries_truncate() -> None:
    retry = RetryPolicy(max_attempts=3, base_delay_s=0.0)
    clean = ConductorEnv(retry=retry)
    faulty = ConductorEnv(pool=faulty_pool(0.3), retry=retry)
    completed = truncated_count = retried = 0
    for seed in range(EPISODES):
        reward, truncated, info = play(faulty, seed)
        clean_reward, _, clean_info = play(clean, seed)
        if truncated:
            truncated_count += 1
            error = info["error"]
            assert reward == 0.0 and info["outcome"] == "error"
            assert error["kind"] == "infrastructure" and error["transient"] is True  # type: ignore[index]
            assert error["attempts"] == 3 and error["error_type"] == "WorkerError"  # type: ignore[index]
            step = error["step"]  # type: ignore[index]
            assert error["worker"] == clean_info["trace"].steps[step].worker  # type: ignore[index, union-attr]
            # the steps before the failure match the fault-free run's
            done = info["trace"].steps  # type: ignore[union-attr]
            assert [s.response for s in done] == [
                s.response
                for s in clean_info["trace"].steps[: len(done)]  # type: ignore[union-attr]
            ]
        else:
            completed += 1
            assert reward == clean_reward and info["outcome"] == clean_info["outcome"]
            ours, theirs = info["trace"].steps, clean_info["trace"].steps  # type: ignore[union-attr]
            assert [s.response for s in ours] == [s.response for s in theirs]
            retried += info["worker_calls"] > clean_info["worker_calls"]  # type: ignore[operator]
    # 30 % faults, 3 attempts: a step fails for good with p = 0.027, a 3-step plan ~8 %
    assert completed > 0.8 * EPISODES and truncated_count > 0 and retried > EPISODES / 2


def test_without_retries_a_transient_fault_is_still_not_a_score() -> None:
    env = ConductorEnv(pool=faulty_pool(0.3), retry=RetryPolicy(max_attempts=1))
    outcomes = [play(env, seed)[2]["outcome"] for seed in range(60)]
    assert "error" in outcomes and {"correct", "wrong"} & set(outcomes)
    assert "invalid" not in outcomes
