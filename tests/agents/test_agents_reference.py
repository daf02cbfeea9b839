"""The reference plans as agents (``reference:<plan>``): the same plan as the plain
functions on the unshuffled paper pool, the same workers by name on a shuffled one, and
clear refusals (an unknown plan, an episode whose pool lacks a worker the plan names)."""

from __future__ import annotations

import pytest
from conductor_gym.agents import make_agent
from conductor_gym.agents.reference import PAPER_ORDER, REFERENCE_PLANS, ReferencePlan

from conductor_gym import ConductorEnv, parse_plan


@pytest.mark.parametrize("name", sorted(REFERENCE_PLANS))
def test_agent_writes_the_function_plan_on_the_paper_order(name: str) -> None:
    agent = make_agent(f"reference:{name}")
    assert isinstance(agent, ReferencePlan) and agent.spec == f"reference:{name}"
    env = ConductorEnv(tasks="offline", shuffle_workers=False)
    for seed in range(20):
        obs, info = env.reset(seed=seed)
        plan = parse_plan(agent.act(obs, info), num_workers=info["num_workers"])
        model_ids, subtasks, access = REFERENCE_PLANS[name](info["question"])
        assert list(plan.model_ids) == model_ids and list(plan.subtasks) == subtasks
        assert [a if a == "all" else list(a) for a in plan.access] == access
        _, _, terminated, _, step_info = env.step(agent.act(obs, info))
        assert terminated and step_info["parse_error"] is None


def test_agent_follows_the_workers_by_name_on_a_shuffled_pool() -> None:
    agent = make_agent("reference:routed_check")
    env = ConductorEnv(tasks="offline", shuffle_workers=True)
    for seed in range(20):
        obs, info = env.reset(seed=seed)
        plan = parse_plan(agent.act(obs, info), num_workers=info["num_workers"])
        model_ids, _, _ = REFERENCE_PLANS["routed_check"](info["question"])
        assert [info["pool"][i] for i in plan.model_ids] == [PAPER_ORDER[i] for i in model_ids]


def test_unknown_plan_and_missing_worker_are_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown plan 'best'; the plans are \["):
        ReferencePlan("best")
    agent = ReferencePlan("solve_then_check")
    info = {"question": "What is 2 + 3?", "num_workers": 2, "max_steps": 5,
            "pool": ("gemini-2.5-pro", "qwen3-32b")}  # fmt: skip
    with pytest.raises(ValueError, match=r"worker 'gpt-5' is not in this episode's pool"):
        agent.act("", info)
