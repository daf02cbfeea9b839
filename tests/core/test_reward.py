"""Reward schemes: the paper's default, and cost-aware schemes that charge graded
episodes for their worker spending (conductor_gym.core.reward)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import ScriptedConductor, plan_text, solve_plan, write_tasks

from conductor_gym import ConductorEnv, WorkerSpec
from conductor_gym.core.reward import (
    REWARD_SCHEMES,
    Outcome,
    RewardScheme,
    Spend,
    make_reward_scheme,
    reward_scheme_names,
)
from conductor_gym.training.scoring import EpisodeRef, Scorer
from conductor_gym.workers.bound import RetryPolicy
from conductor_gym.workers.budget import Budget

THREE_STEPS = plan_text(
    [0, 1, 2], ["Solve the task.", "Check the answer above.", "Give the final answer."],
    [[], "all", [1]],
)  # fmt: skip


# -- arithmetic -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("scheme", "spend", "expected"),
    [
        (RewardScheme(cost_lambda=2.0, cost_unit="usd"), Spend(usd=0.1), 1.0 - 0.2),
        (RewardScheme(cost_lambda=0.05, cost_unit="ktokens"), Spend(tokens=3000), 1.0 - 0.15),
        (RewardScheme(cost_lambda=0.1, cost_unit="calls"), Spend(calls=4), 1.0 - 0.4),
        (RewardScheme(cost_lambda=0.1, cost_unit="calls"), Spend(usd=9.0, tokens=10**6), 1.0),
        (RewardScheme(cost_lambda=1.0, cost_unit="usd"), Spend(usd=5.0), 0.0),  # floor
        (RewardScheme(invalid=-1.0, cost_lambda=1.0), Spend(usd=1.5), -0.5),
        (RewardScheme(invalid=-1.0, cost_lambda=1.0), Spend(usd=3.0), -1.0),  # floor
        (RewardScheme(), Spend(usd=5.0, tokens=10**6, calls=9), 1.0),  # no price, no charge
    ],
)
def test_the_charge_is_lambda_times_spend_floored_at_invalid(
    scheme: RewardScheme, spend: Spend, expected: float
) -> None:
    assert scheme.charge(scheme(Outcome.CORRECT), spend) == pytest.approx(expected)


def test_presets_and_prices_by_name() -> None:
    assert REWARD_SCHEMES.get("paper") == RewardScheme() and not RewardScheme().cost_aware
    assert {"paper", "binary", "cost-usd", "cost-ktokens", "cost-calls"} <= set(
        reward_scheme_names()
    )
    for name in ("cost-usd", "cost-ktokens", "cost-calls"):
        preset = make_reward_scheme(name)
        assert preset.cost_aware and (preset.correct, preset.wrong, preset.invalid) == (1, 0.5, 0)
    assert make_reward_scheme("cost-usd").cost_unit == "usd"
    assert make_reward_scheme("cost-ktokens").cost_unit == "ktokens"
    assert make_reward_scheme("cost-calls:0.5") == RewardScheme(cost_lambda=0.5, cost_unit="calls")
    assert make_reward_scheme("paper:0") == RewardScheme()
    assert make_reward_scheme("binary:3").with_cost(4.0, "calls") == RewardScheme(
        wrong=0.0, cost_lambda=4.0, cost_unit="calls"
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope", r"unknown reward scheme 'nope'.*'cost-calls', 'cost-ktokens', 'cost-usd'"),
        ("cost-usd:much", r"the price after ':' must be a number"),
        ("cost-usd:-1", r"RewardScheme.cost_lambda must be >= 0"),
        ("cost-usd:inf", r"RewardScheme.cost_lambda must be finite"),
    ],
)
def test_bad_names_and_prices_are_named(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make_reward_scheme(spec)


def test_bad_fields_are_named() -> None:
    with pytest.raises(ValueError, match=r"RewardScheme\.cost_unit must be one of"):
        RewardScheme(cost_lambda=1.0, cost_unit="euros")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"RewardScheme\.cost_lambda must be a number"):
        RewardScheme(cost_lambda=True)


# -- in the env -------------------------------------------------------------------------


def play(reward: str | RewardScheme, seed: int, action: str | None = None, **kwargs: object):  # type: ignore[no-untyped-def]
    env = ConductorEnv(reward=reward, **kwargs)  # type: ignore[arg-type]
    env.reset(seed=seed)
    return env.step(action if action is not None else THREE_STEPS)


def test_the_paper_scheme_stays_the_default_and_charges_nothing() -> None:
    for seed in range(10):
        _, reward, _, _, info = play("paper", seed)
        assert reward == {"correct": 1.0, "wrong": 0.5}[info["outcome"]]
        assert play(RewardScheme(), seed)[1] == reward
        assert ConductorEnv().reward_scheme == RewardScheme()


@pytest.mark.parametrize(
    ("spec", "spent"),
    [
        ("cost-usd:7", lambda info: info["cost_usd"]),
        (
            "cost-ktokens:0.2",
            lambda info: (info["prompt_tokens"] + info["completion_tokens"]) / 1e3,
        ),
        ("cost-calls:0.1", lambda info: len(info["trace"].steps)),
    ],
)
def test_graded_episodes_pay_lambda_times_what_info_reports(spec: str, spent) -> None:  # type: ignore[no-untyped-def]
    scheme = make_reward_scheme(spec)
    for seed in range(10):
        _, reward, _, _, info = play(spec, seed)
        base = {"correct": 1.0, "wrong": 0.5}[info["outcome"]]
        assert spent(info) > 0 and reward == pytest.approx(
            max(0.0, base - scheme.cost_lambda * spent(info))
        )


def test_invalid_and_truncated_episodes_are_unaffected() -> None:
    _, reward, terminated, _, info = play("cost-usd:1000", 0, action="no plan here")
    assert terminated and info["outcome"] == "invalid" and reward == 0.0
    scheme = RewardScheme(invalid=-0.25, cost_lambda=1000.0)
    assert play(scheme, 0, action="no plan here")[1] == -0.25
    _, reward, _, truncated, info = play("cost-usd:1000", 0, episode_budget=Budget(max_calls=1))
    assert truncated and info["outcome"] == "error" and reward == 0.0 and info["cost_usd"] > 0


def test_retries_are_not_charged_as_calls(tmp_path: Path) -> None:
    flaky = WorkerSpec("flaky", backend="test-flaky", backend_options={"failures": 1})
    env = ConductorEnv(
        tasks=f"jsonl:{write_tasks(tmp_path / 't.jsonl')}",
        pool=[flaky],
        reward="cost-calls:0.1",
        retry=RetryPolicy(max_attempts=3, base_delay_s=0.0),
    )
    _, info = env.reset(seed=0)
    _, reward, _, _, info = env.step(solve_plan(info["question"]))
    assert info["worker_calls"] == 2 and len(info["trace"].steps) == 1
    assert reward == pytest.approx(0.5 - 0.1)  # wrong answer, one call charged


def test_an_inner_call_is_charged_by_its_own_steps() -> None:
    inner = ScriptedConductor(plan_text([0, 2], ["Solve it.", "Check it."], [[], "all"]))
    env = ConductorEnv(max_recursions=1, conductor=inner, reward="cost-calls:0.1")
    env.reset(seed=5)
    _, reward, _, _, info = env.step(plan_text([1, 7], ["Solve it.", "Plan a check."], [[], "all"]))
    assert info["worker_calls"] == 3  # outer step 0, then the inner plan's two steps
    base = {"correct": 1.0, "wrong": 0.5}[info["outcome"]]
    assert reward == pytest.approx(base - 0.3)


def test_the_charge_applies_once_to_a_blended_recursive_reward() -> None:
    agent_plans = [THREE_STEPS, plan_text([3], ["Check and restate the answer."], ["all"])]
    rewards = {}
    for spec in ("paper", "cost-usd:5"):
        env = ConductorEnv(max_recursions=1, initial_round_weight=0.25, reward=spec)
        env.reset(seed=11)
        env.step(agent_plans[0])
        *_, reward, _, _, info = env.step(agent_plans[1])
        rewards[spec] = (reward, info["cost_usd"])
    (blended, _), (charged, cost) = rewards["paper"], rewards["cost-usd:5"]
    assert charged == pytest.approx(max(0.0, blended - 5 * cost)) and cost > 0


def cheap_plan(question: str) -> str:
    return solve_plan(question, 2)


def costly_plan(question: str) -> str:
    solve = f"Solve: {question}"
    return plan_text(
        [0, 1, 2, 0, 1],
        [solve, solve, solve, "Compare the answers.", "Give the final answer."],
        [[], [], [], "all", "all"],
    )


def test_a_cheap_correct_plan_ranks_above_an_expensive_correct_one() -> None:
    for seed in range(200):
        env = ConductorEnv(reward="cost-usd")
        _, info = env.reset(seed=seed)
        cheap = env.step(cheap_plan(info["question"]))
        env.reset(seed=seed)
        costly = env.step(costly_plan(info["question"]))
        if cheap[4]["outcome"] == costly[4]["outcome"] == "correct":
            break
    else:
        pytest.fail("no seed where both plans answer correctly")
    assert cheap[4]["cost_usd"] < costly[4]["cost_usd"]
    assert cheap[1] > costly[1]  # the cost-aware reward prefers the cheap plan ...
    paper = ConductorEnv()
    paper.reset(seed=seed)
    assert paper.step(cheap_plan(info["question"]))[1] == 1.0  # ... the paper's ties them
    paper.reset(seed=seed)
    assert paper.step(costly_plan(info["question"]))[1] == 1.0


def test_trainers_get_the_scheme_through_the_scorer() -> None:
    refs = [EpisodeRef(task_index=i, group_seed=7) for i in range(4)]
    plain, priced = Scorer(), Scorer(reward="cost-ktokens:0.1")
    completions = [solve_plan(plain.tasks[r.task_index].question, 1) for r in refs]
    for a, b in zip(
        plain.score(refs, completions, rollout_seeds=[0] * 4),
        priced.score(refs, completions, rollout_seeds=[0] * 4),
        strict=True,
    ):
        tokens = a.info["prompt_tokens"] + a.info["completion_tokens"]
        assert b.reward == pytest.approx(max(0.0, a.reward - 0.1 * tokens / 1000))
