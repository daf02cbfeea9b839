"""Per-worker concurrency and rate limits."""

from __future__ import annotations

import asyncio

import pytest
from support import CountingWorker, solve_plan

from conductor_gym import ConductorEnv, ConductorVectorEnv, WorkerSpec
from conductor_gym.pool.pool import WorkerPool
from conductor_gym.sim.worker import paper_pool_specs
from conductor_gym.workers.base import Completion
from conductor_gym.workers.limits import LimitedWorker, RateLimits


class VirtualClock:
    """A clock that advances only when a call sleeps, to check the limits' arithmetic
    exactly (the waits are what is tested, not how long the test takes)."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def completion(tokens: int) -> Completion:
    return Completion("ok", tokens, 0, 0.0, 0.0, "m")


def run_calls(limits: RateLimits, tokens: list[int]) -> None:
    async def main() -> None:
        for n in tokens:
            await limits.run(lambda n=n: asyncio.sleep(0, completion(n)))  # type: ignore[misc]

    asyncio.run(main())


def test_requests_per_minute_spaces_calls_beyond_the_burst() -> None:
    clock = VirtualClock()
    limits = RateLimits(requests_per_minute=2, clock=clock, sleep=clock.sleep)
    run_calls(limits, [1, 1, 1, 1])
    # two start at once (the bucket holds a minute's worth), then one every 30 s
    assert clock.sleeps == pytest.approx([30.0, 30.0])
    assert limits.waited_s == pytest.approx(60.0)


def test_tokens_per_minute_waits_for_the_bucket_to_refill() -> None:
    clock = VirtualClock()
    limits = RateLimits(tokens_per_minute=120, clock=clock, sleep=clock.sleep)
    run_calls(limits, [100, 80, 10])
    # 100 leaves 20; 80 leaves -60, so the third call waits 60 / (120/60 per s) = 30 s
    assert clock.sleeps == pytest.approx([30.0])


def test_bad_limits_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_concurrency"):
        RateLimits(max_concurrency=0)
    with pytest.raises(ValueError, match="requests_per_minute"):
        RateLimits(requests_per_minute=-1)
    with pytest.raises(ValueError, match=r"WorkerSpec\(name='w'\).tokens_per_minute"):
        WorkerSpec(name="w", tokens_per_minute=0)
    with pytest.raises(ValueError, match=r"WorkerSpec\(name='w'\).max_concurrency"):
        WorkerSpec(name="w", max_concurrency=0)


def test_max_concurrency_holds_across_a_vector_env() -> None:
    CountingWorker.peak = CountingWorker.in_flight = 0
    specs = [WorkerSpec(name="w", backend="test-counting", max_concurrency=3)]
    envs = ConductorVectorEnv(16, pool=WorkerPool(specs))
    _, infos = envs.reset(seed=0)
    envs.step([solve_plan(q) for q in infos["question"]])
    assert CountingWorker.peak == 3  # 16 episodes wanted the worker at once
    envs.close()


def test_without_limits_the_same_episodes_run_wider() -> None:
    CountingWorker.peak = CountingWorker.in_flight = 0
    envs = ConductorVectorEnv(16, pool=[WorkerSpec(name="w", backend="test-counting")])
    _, infos = envs.reset(seed=0)
    envs.step([solve_plan(q) for q in infos["question"]])
    assert CountingWorker.peak > 3
    envs.close()


def test_limited_simulated_workers_give_the_same_episodes() -> None:
    limited = [
        WorkerSpec(name=s.name, model=s.model, max_concurrency=2, requests_per_minute=10**6)
        for s in paper_pool_specs()
    ]
    pool = WorkerPool(limited)
    assert all(isinstance(w.worker, LimitedWorker) for w in pool.workers)
    plain, capped = ConductorEnv(), ConductorEnv(pool=pool)
    for seed in range(15):
        _, info = plain.reset(seed=seed)
        capped.reset(seed=seed)
        action = solve_plan(info["question"], seed % 7)
        a, b = plain.step(action), capped.step(action)
        assert a[1] == b[1] and a[4]["trace"] == b[4]["trace"]


def test_one_pool_serves_several_event_loops() -> None:
    pool = WorkerPool([WorkerSpec(name="w", backend="test-counting", max_concurrency=1)])
    env = ConductorEnv(tasks="offline/arithmetic", pool=pool)
    for seed in range(2):  # env.step runs on its own loop, astep on asyncio.run's loops
        _, info = env.reset(seed=seed)
        assert env.step(solve_plan(info["question"]))[4]["outcome"] in ("correct", "wrong")
        _, info = env.reset(seed=seed)
        result = asyncio.run(env.unwrapped.astep(solve_plan(info["question"])))
        assert result[4]["outcome"] in ("correct", "wrong")
