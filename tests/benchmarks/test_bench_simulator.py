"""Simulator speed, v1, v2, v3 and v3.1 side by side: a cold reset and 3-step episode on
the zero-latency paper pool of each version (target: 1 ms median for v3.1, the default
``sim-paper``) and reading a 1 KB context for problems (under 200 us). Run: ``make bench``."""

from __future__ import annotations

import pytest
from support import plan_text

from conductor_gym import ConductorEnv
from conductor_gym.sim.perception import find_problems
from conductor_gym.tasks import make_task_source


@pytest.mark.parametrize("pool", ["sim-paper-v1", "sim-paper-v2", "sim-paper-v3", "sim-paper"])
def test_episode_three_steps(benchmark, pool: str) -> None:  # type: ignore[no-untyped-def]
    env = ConductorEnv(pool=pool)
    state = {"seed": 0}

    def episode() -> float:
        state["seed"] += 1
        _, info = env.reset(seed=state["seed"])
        q = info["question"]
        action = plan_text(
            [0, 2, 1],
            [f"Solve: {q}", f"Solve: {q}", f"Check the answers above.\n\n{q}"],
            [[], [], "all"],
        )
        return env.step(action)[1]

    assert benchmark(episode) in (0.5, 1.0)


def test_parse_a_1kb_context(benchmark) -> None:  # type: ignore[no-untyped-def]
    tasks = make_task_source("offline", size=8)
    text = "\n\n".join(t.question for t in tasks)[:1024]
    state = {"n": 0}

    def parse() -> int:
        # A fresh text each call (a varying suffix), so the cache does not answer it.
        state["n"] += 1
        return len(find_problems(f"{text} #{state['n']}").problems)

    assert benchmark(parse) >= 2
