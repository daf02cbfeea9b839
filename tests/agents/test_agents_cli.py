from __future__ import annotations

import asyncio

import pytest
from conductor_gym.agents import Agent, RandomPlanner, make_agent

from conductor_gym import ConductorEnv, parse_plan
from conductor_gym.cli.main import main


def test_random_planner_always_writes_valid_plans() -> None:
    env = ConductorEnv(k=3, shuffle_workers=True)
    agent = RandomPlanner(seed=0)
    lengths, accesses, outcomes = set(), set(), set()
    for seed in range(500):
        obs, info = env.reset(seed=seed)
        action = agent.act(obs, info)
        plan = parse_plan(action, info["num_workers"], info["max_steps"])
        assert all(info["question"] in s for s in plan.subtasks)
        lengths.add(len(plan))
        accesses.update("all" if a == "all" else len(a) for a in plan.access)
        _, _, _, _, step_info = env.step(action)
        outcomes.add(step_info["outcome"])
    assert lengths == {1, 2, 3, 4, 5}
    assert {"all", 0, 1, 2} <= accesses
    assert outcomes == {"correct", "wrong"}  # never "invalid"


def test_random_planner_is_seeded() -> None:
    info = {"question": "What is 2 + 2?", "num_workers": 4, "max_steps": 5}
    a = [RandomPlanner(seed=3).act("", info) for _ in range(3)]
    b = RandomPlanner(seed=3)
    assert (
        a[0] == b.act("", info)
        and len({RandomPlanner(seed=s).act("", info) for s in range(20)}) > 10
    )


def test_act_batch_and_registry() -> None:
    agent = make_agent("random", seed=1)
    assert isinstance(agent, Agent)
    infos = [{"question": f"q{i}", "num_workers": 2, "max_steps": 3} for i in range(4)]
    plans = asyncio.run(agent.act_batch([""] * 4, infos))
    assert len(plans) == 4 and all("model_id = " in p for p in plans)
    with pytest.raises(ValueError, match=r"agent spec 'smart': unknown agent 'smart'; valid forms"):
        make_agent("smart")


def test_cli_demo_prints_rewards_and_a_trace(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--episodes", "3", "--seed", "5"]) == 0
    out = capsys.readouterr().out
    assert out.count("episode ") >= 3 and "mean reward over 3 episodes" in out
    assert "trace of episode 0:" in out and "step 0: Model" in out


def test_cli_tasks_list_shows_every_source(capsys: pytest.CaptureFixture[str]) -> None:
    from conductor_gym.tasks import task_source_names

    assert main(["tasks", "list"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line for line in out.splitlines()[2:]}
    assert set(task_source_names()) <= set(rows)
    assert rows["offline"].split()[1] == "2000" and rows["offline"].rstrip().endswith("yes")
    assert rows["math500"].split()[1] == "100"
