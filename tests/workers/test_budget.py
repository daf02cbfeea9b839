"""Spending budgets: per episode (env) and per run (pool); a spent budget truncates."""

from __future__ import annotations

import pytest
from support import plan_text, solve_plan

from conductor_gym import ConductorEnv
from conductor_gym.pool.pool import WorkerPool
from conductor_gym.sim.worker import paper_pool_specs
from conductor_gym.workers.base import Completion
from conductor_gym.workers.budget import Budget, BudgetExceeded, Ledger

THREE_STEPS = plan_text(
    [0, 1, 2], ["Solve the task.", "Check the answer above.", "Give the final answer."],
    [[], "all", [1]],
)  # fmt: skip


def test_episode_call_budget_truncates_with_the_steps_done() -> None:
    env = ConductorEnv(episode_budget=Budget(max_calls=2))
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(THREE_STEPS)
    assert truncated and not terminated and reward == 0.0
    assert info["outcome"] == "error"
    error = info["error"]
    assert error["kind"] == "budget" and error["scope"] == "episode"
    assert error["limit"] == "max_calls" and error["limit_value"] == 2 and error["spent"] == 2
    assert len(info["trace"].steps) == 2 and info["worker_calls"] == 2


def test_the_call_that_crosses_a_token_limit_completes_and_the_next_is_refused() -> None:
    env = ConductorEnv(episode_budget=Budget(max_tokens=1))
    env.reset(seed=3)
    _, _, _, truncated, info = env.step(THREE_STEPS)
    assert truncated and info["error"]["limit"] == "max_tokens"
    (step,) = info["trace"].steps
    assert info["error"]["spent"] == step.prompt_tokens + step.completion_tokens > 1


def test_within_budget_nothing_changes() -> None:
    plain, budgeted = ConductorEnv(), ConductorEnv(episode_budget=Budget(3, 10**6, 100.0))
    for seed in range(20):
        plain.reset(seed=seed)
        budgeted.reset(seed=seed)
        a, b = plain.step(THREE_STEPS), budgeted.step(THREE_STEPS)
        assert a[1:4] == b[1:4] and a[4]["trace"] == b[4]["trace"]


def test_run_budget_is_shared_by_every_episode_of_the_pool() -> None:
    pool = WorkerPool(paper_pool_specs(), run_budget=Budget(max_usd=0.02))
    env = ConductorEnv(pool=pool)
    costs, outcomes = [], []
    for seed in range(200):
        _, info = env.reset(seed=seed)
        _, _, _, truncated, info = env.step(solve_plan(info["question"], seed % 7))
        outcomes.append(info["outcome"])
        costs.append(info["cost_usd"])
        if truncated:
            assert info["error"]["scope"] == "run" and info["error"]["limit"] == "max_usd"
    first_stop = outcomes.index("error")
    assert first_stop > 0 and set(outcomes[first_stop:]) == {"error"}  # spent stays spent
    ledger = pool.run_ledger
    assert ledger.calls == first_stop and ledger.cost_usd == pytest.approx(sum(costs))
    assert ledger.cost_usd >= 0.02 > ledger.cost_usd - max(costs)
    assert ledger.billed_usd == pytest.approx(ledger.cost_usd) and ledger.cache_saved_usd == 0


def test_self_calls_charge_inner_calls_once() -> None:
    from support import ScriptedConductor

    inner = ScriptedConductor(plan_text([0, 2], ["Solve it.", "Check it."], [[], "all"]))
    pool = WorkerPool(paper_pool_specs())
    env = ConductorEnv(pool=pool, max_recursions=1, conductor=inner)
    _, info = env.reset(seed=5)
    _, _, _, _, info = env.step(plan_text([1, 7], ["Solve it.", "Plan a check."], [[], "all"]))
    assert info["worker_calls"] == 3 == pool.run_ledger.calls
    assert pool.run_ledger.tokens == info["prompt_tokens"] + info["completion_tokens"]


def test_a_spent_budget_inside_a_self_call_truncates_the_episode() -> None:
    from support import ScriptedConductor

    inner = ScriptedConductor(plan_text([0, 2], ["Solve it.", "Check it."], [[], "all"]))
    env = ConductorEnv(max_recursions=1, conductor=inner, episode_budget=Budget(max_calls=2))
    env.reset(seed=5)
    _, reward, _, truncated, info = env.step(
        plan_text([1, 7], ["Solve it.", "Plan a check."], [[], "all"])
    )
    assert truncated and reward == 0.0 and info["error"]["kind"] == "budget"
    assert [s.worker for s in info["trace"].steps] == ["claude-sonnet-4"]  # outer step 0 only


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"max_calls": 0}, "max_calls"),
        ({"max_tokens": 1.5}, "max_tokens"),
        ({"max_usd": -1.0}, "max_usd"),
        ({"max_usd": float("nan")}, "max_usd"),
        ({"max_usd": True}, "max_usd"),
    ],
)
def test_bad_budgets_name_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=f"Budget.{field}"):
        Budget(**kwargs)  # type: ignore[arg-type]


def test_budget_arguments_are_checked_at_construction() -> None:
    with pytest.raises(ValueError, match="episode_budget"):
        ConductorEnv(episode_budget=3)
    # the JSON form that configs record is read back as a Budget
    assert ConductorEnv(episode_budget={"max_calls": 3}).episode_budget == Budget(max_calls=3)
    with pytest.raises(ValueError, match="run_budget must be a Budget"):
        WorkerPool(paper_pool_specs(), run_budget=5)  # type: ignore[arg-type]


def test_ledger_separates_billed_and_cache_saved_cost() -> None:
    ledger = Ledger(Budget(max_calls=2), scope="run")
    ledger.charge(Completion("a", 10, 5, 0.25, 1.0, "m"))
    ledger.charge(Completion("b", 10, 5, 0.5, 1.0, "m", cached=True))
    assert (ledger.calls, ledger.tokens) == (2, 30)
    assert (ledger.billed_usd, ledger.cache_saved_usd, ledger.cost_usd) == (0.25, 0.5, 0.75)
    with pytest.raises(BudgetExceeded, match="run budget spent: max_calls=2"):
        ledger.check()
