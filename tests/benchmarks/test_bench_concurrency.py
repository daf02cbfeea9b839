"""Many episodes on one event loop, with workers that take real time to answer.

256 random plans (1 to 5 steps, mean 3) run through :class:`ConductorVectorEnv` on the
simulated paper pool, whose workers sleep their modelled latency scaled so that the mean
call takes 50 ms. Plans run concurrently, and the steps of a plan run as soon as the steps
they read have finished, so the ideal wall time is the longest graph critical path among
the plans (``Trace.critical_path_s``); running each plan's steps in order, it would be the
longest summed latency (``Trace.latency_s``).

Targets (figures in the issue notes, ``make bench``):

* ``wall / critical_path <= 1.10`` (``extra_info["overhead_ratio_median"]``, no cache);
* against the same plans with their steps run in order (``run_plan(parallel=False)``):
  identical episodes, and the speed-up of the batch's wall time
  (``extra_info["batch_speedup"]``, sequential wall / parallel wall) and of the mean
  episode (``extra_info["episode_latency_cut"]``, ``1 - mean critical path / mean summed
  latency``);
* replaying the same run from the response cache is several times faster than
  recording it (``extra_info["replay_speedup"]``), since no worker sleeps; the recording
  run's own ratio (cache writes included) is reported as ``record_overhead_ratio``.
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import time
from pathlib import Path
from typing import Any

import pytest
from conductor_gym.agents import RandomPlanner

from conductor_gym import ConductorEnv, ConductorVectorEnv
from conductor_gym.core import env as env_module
from conductor_gym.core import execute
from conductor_gym.pool.pool import WorkerPool
from conductor_gym.sim.worker import paper_pool_specs
from conductor_gym.workers.cache import ResponseCache

N = 256
MEAN_CALL_S = 0.05


def latency_scale() -> float:
    """The scale that makes the simulated pool's mean call last ``MEAN_CALL_S``."""
    env, agent = ConductorEnv(), RandomPlanner(seed=0)
    latencies = []
    for seed in range(300):
        obs, info = env.reset(seed=seed)
        trace = env.step(agent.act(obs, info))[4]["trace"]
        latencies += [step.latency_s for step in trace.steps] if trace else []
    return MEAN_CALL_S / (sum(latencies) / len(latencies))


def pool(scale: float, cache: ResponseCache | None = None) -> WorkerPool:
    specs = [
        dataclasses.replace(spec, backend_options={"latency_scale": scale})
        for spec in paper_pool_specs()
    ]
    return WorkerPool(specs, cache=cache)


def run(envs: ConductorVectorEnv, seed: int = 0) -> tuple[float, dict[str, Any]]:
    agent = RandomPlanner(seed=seed)
    obs, infos = envs.reset(seed=seed)
    actions = [
        agent.act(obs[i], {key: infos[key][i] for key in ("question", "num_workers", "max_steps")})
        for i in range(N)
    ]
    gc.collect()  # the previous round's garbage is not this round's cost
    start = time.perf_counter()
    _, _, terminated, truncated, step_infos = envs.step(actions)
    wall = time.perf_counter() - start
    assert (terminated | truncated).all()
    return wall, step_infos["final_info"]


def critical_path(final: dict[str, Any], scale: float) -> float:
    """The longest graph critical path among the plans, in (scaled) wall seconds."""
    return max(t.critical_path_s for t in final["trace"] if t is not None) * scale


def test_vector_env_overlaps_worker_latency(benchmark) -> None:  # type: ignore[no-untyped-def]
    scale = latency_scale()
    envs = ConductorVectorEnv(N, pool=pool(scale), max_concurrency=N)
    run(envs, seed=99)  # warm-up: first-use imports and allocations
    ratios: list[float] = []

    def one_round() -> None:
        wall, final = run(envs, seed=len(ratios))
        ratios.append(wall / critical_path(final, scale))

    benchmark.pedantic(one_round, rounds=5, iterations=1)
    ratios.sort()
    benchmark.extra_info.update(overhead_ratio_median=ratios[len(ratios) // 2], ratios=ratios)
    print(f"wall / critical path over {len(ratios)} rounds: {[round(r, 3) for r in ratios]}")
    assert ratios and all(r > 0.9 for r in ratios)  # no run can beat its own critical path
    envs.close()


def test_parallel_steps_against_sequential_steps_on_the_same_plans(  # type: ignore[no-untyped-def]
    benchmark, monkeypatch: pytest.MonkeyPatch
) -> None:
    scale = latency_scale()
    envs = ConductorVectorEnv(N, pool=pool(scale), max_concurrency=N)
    run(envs, seed=99)  # warm-up
    walls: dict[bool, list[float]] = {True: [], False: []}
    finals: dict[bool, list[dict[str, Any]]] = {True: [], False: []}

    def both_modes() -> None:
        seed = len(walls[True])
        for parallel in (True, False):
            monkeypatch.setattr(
                env_module, "run_plan", functools.partial(execute.run_plan, parallel=parallel)
            )
            wall, final = run(envs, seed=seed)
            walls[parallel].append(wall)
            finals[parallel].append(final)

    benchmark.pedantic(both_modes, rounds=3, iterations=1)
    envs.close()
    for a, b in zip(finals[True], finals[False], strict=True):
        assert list(a["trace"]) == list(b["trace"]) and list(a["outcome"]) == list(b["outcome"])
    traces = [t for final in finals[True] for t in final["trace"] if t is not None]
    summed = sum(t.latency_s for t in traces) / len(traces)
    critical = sum(t.critical_path_s for t in traces) / len(traces)
    longest = [
        (max(t.latency_s for t in f["trace"] if t), critical_path(f, 1.0)) for f in finals[True]
    ]
    figures = {
        "parallel_wall_s": sorted(walls[True]),
        "sequential_wall_s": sorted(walls[False]),
        "batch_speedup": [s / p for s, p in zip(walls[False], walls[True], strict=True)],
        "longest_summed_over_longest_critical": [s / c for s, c in longest],
        "parallel_overhead_ratio": [
            w / critical_path(f, scale) for w, f in zip(walls[True], finals[True], strict=True)
        ],
        "sequential_overhead_ratio": [
            w / (s * scale) for w, (s, _) in zip(walls[False], longest, strict=True)
        ],
        "episode_latency_cut": 1 - critical / summed,
    }
    benchmark.extra_info.update(figures)
    for key, value in figures.items():
        shown = [round(v, 3) for v in value] if isinstance(value, list) else round(value, 3)
        print(f"{key}: {shown}")


def test_replay_from_the_cache_beats_the_recorded_run(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    scale = latency_scale()
    db = tmp_path / "bench.sqlite"
    with ResponseCache(db) as cache:
        recorder = ConductorVectorEnv(N, pool=pool(scale, cache), max_concurrency=N)
        record_wall, final = run(recorder)
        record_ratio = record_wall / critical_path(final, scale)
        recorder.close()
    with ResponseCache(db, mode="replay") as replay_cache:
        replayer = ConductorVectorEnv(N, pool=pool(scale, replay_cache), max_concurrency=N)
        walls: list[float] = []

        def replay() -> None:
            wall, final = run(replayer)
            assert all(s.cached for t in final["trace"] if t for s in t.steps)
            walls.append(wall)

        benchmark.pedantic(replay, rounds=3, iterations=1)
        replayer.close()
    figures = {
        "record_wall_s": record_wall,
        "record_overhead_ratio": record_ratio,
        "replay_wall_s": min(walls),
        "replay_speedup": record_wall / min(walls),
    }
    benchmark.extra_info.update(figures)
    print(" ".join(f"{k}={v:.3f}" for k, v in figures.items()))
