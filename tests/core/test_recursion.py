"""Recursive conductors: multi-turn episodes, the conductor as its own worker, forced
recursion and the initial-round reward weight (paper §3.2, app. A)."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import pytest
from conductor_gym.agents import RandomPlanner
from gymnasium.utils.env_checker import check_env
from support import ScriptedConductor, plan_text, solve_plan

import conductor_gym  # noqa: F401  (registers the env)
from conductor_gym import ConductorEnv, ConductorVectorEnv, WorkerSpec
from conductor_gym.graders import grade
from conductor_gym.workers.bound import RetryPolicy

STOP = "model_id = []\nsubtasks = []\naccess_list = []"


def verify_plan(question: str, worker: int = 1) -> str:
    return plan_text([worker], [f"Check the answer above to: {question}"], ["all"])


def fixed_pool(**dynamics: float) -> list[WorkerSpec]:
    """Model 0 is always wrong, Model 1 always right (on arithmetic), so rewards are exact."""
    options = {"dynamics": dynamics} if dynamics else {}
    return [
        WorkerSpec("wrong", model="gpt-5", backend_options={"accuracy": {"math500": 0.0}}),
        WorkerSpec(
            "right",
            model="gpt-5",
            backend_options={"accuracy": {"math500": 1.0}, **options},
        ),
    ]


def test_two_recursive_rounds_then_stop() -> None:
    env = ConductorEnv(tasks="offline/arithmetic", max_recursions=2)
    obs, info = env.reset(seed=3)
    q = info["question"]
    assert info["round"] == 0 and info["can_stop"] is False and info["recursions_left"] == 2

    first = plan_text([0, 2], [f"Solve: {q}", f"Check it: {q}"], [[], "all"])
    obs, reward, terminated, truncated, info = env.step(first)
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["outcome"] is None and info["round"] == 0 and info["recursions_left"] == 2
    answer = info["trace"].final_response
    assert "CURRENT FINAL ANSWER:\n" + answer in obs and "three empty lists" in obs

    obs, reward, terminated, truncated, info = env.step(verify_plan(q))
    assert (reward, terminated, truncated) == (0.0, False, False)
    assert info["round"] == 1 and info["recursions_left"] == 1
    seen = [m["content"] for m in info["trace"].steps[0].messages]
    # "all" in a recursive round shows the previous round's final step first
    assert seen[:2] == [f"Check it: {q}", answer]

    obs, reward, terminated, truncated, info = env.step(STOP)
    assert terminated and not truncated and info["round"] == 2
    assert [r.index for r in info["rounds"]] == [0, 1, 2]
    assert info["rounds"][2].plan.is_empty and info["rounds"][2].trace is None
    final = info["rounds"][1].trace.final_response
    task = env.tasks[info["task_index"]]
    assert info["grade"] == grade(task.grader, final, task.reference, **task.metadata)
    assert reward == (1.0 if info["grade"].correct else 0.5)
    assert info["worker_calls"] == 3  # 2 steps in round 0, 1 in round 1
    assert info["prompt_tokens"] == sum(r.trace.prompt_tokens for r in info["rounds"][:2])


def test_the_recursion_budget_ends_the_episode() -> None:
    env = ConductorEnv(max_recursions=1)
    _, info = env.reset(seed=0)
    _, _, terminated, _, info = env.step(solve_plan(info["question"]))
    assert not terminated and info["recursions_left"] == 1
    _, reward, terminated, _, info = env.step(verify_plan(info["question"]))
    assert terminated and reward in (0.5, 1.0) and info["recursions_left"] == 0
    assert info["worker_calls"] == 2
    with pytest.raises(gym.error.ResetNeeded):
        env.step(STOP)


def test_empty_plan_at_the_root_is_invalid_with_recursion_too() -> None:
    env = ConductorEnv(max_recursions=2)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(STOP)
    assert (reward, terminated) == (0.0, True) and info["parse_error"]["reason"] == "empty_plan"


def test_an_invalid_inner_round_ends_the_episode_with_zero() -> None:
    env = ConductorEnv(max_recursions=2)
    _, info = env.reset(seed=0)
    env.step(solve_plan(info["question"]))
    _, reward, terminated, _, info = env.step(
        "model_id = [7]\nsubtasks = ['x']\naccess_list = [[]]"
    )
    assert (reward, terminated, info["outcome"]) == (0.0, True, "invalid")
    assert info["parse_error"]["reason"] == "unknown_worker" and len(info["rounds"]) == 2


def test_forced_recursion_cannot_stop_before_an_inner_call() -> None:
    env = ConductorEnv(max_recursions=2, force_recursion=True)
    _, info = env.reset(seed=1)
    assert info["forced_recursion"] is True
    obs, _, _, _, info = env.step(solve_plan(info["question"]))
    assert info["can_stop"] is False and "three empty lists are not accepted" in obs
    _, reward, terminated, _, info = env.step(STOP)
    assert (reward, terminated) == (0.0, True)
    assert info["parse_error"]["reason"] == "recursion_required"

    _, info = env.reset(seed=1)
    env.step(solve_plan(info["question"]))
    obs, _, terminated, _, info = env.step(verify_plan(info["question"]))
    assert not terminated and info["can_stop"] is True and "three empty lists" in obs
    _, reward, terminated, _, info = env.step(STOP)
    assert terminated and reward in (0.5, 1.0)


def test_forced_fraction_is_drawn_per_episode_and_seeded() -> None:
    env = ConductorEnv(max_recursions=1, force_recursion=0.5)
    draws = [env.reset(seed=s)[1]["forced_recursion"] for s in range(400)]
    assert 150 < sum(draws) < 250
    assert draws == [env.reset(seed=s)[1]["forced_recursion"] for s in range(400)]
    plain = ConductorEnv(max_recursions=1)
    assert [plain.reset(seed=s)[1]["task_id"] for s in range(20)] == [
        env.reset(seed=s)[1]["task_id"] for s in range(20)
    ]
    assert env.reset(seed=0, options={"force_recursion": False})[1]["forced_recursion"] is False


def test_initial_round_weight_mixes_first_and_final_rewards() -> None:
    env = ConductorEnv(
        tasks="offline/arithmetic",
        pool=fixed_pool(mislead=0.0),
        max_recursions=1,
        initial_round_weight=0.25,
    )
    _, info = env.reset(seed=0)
    q = info["question"]
    env.step(solve_plan(q, worker=0))  # always wrong: 0.5
    _, reward, _, _, info = env.step(verify_plan(q, worker=1))  # always right: 1.0
    assert info["initial_grade"].correct is False and info["grade"].correct is True
    assert reward == pytest.approx((0.25 * 0.5 + 1.0) / 1.25)

    _, info = env.reset(seed=0)
    env.step(solve_plan(q, worker=1))
    _, reward, _, _, info = env.step(verify_plan(q, worker=1))
    assert reward == 1.0  # right in both rounds

    plain = ConductorEnv(tasks="offline/arithmetic", pool=fixed_pool(mislead=0.0), max_recursions=1)
    _, info = plain.reset(seed=0)
    plain.step(solve_plan(q, worker=0))
    _, reward, _, _, info = plain.step(verify_plan(q, worker=1))
    assert reward == 1.0 and info["initial_grade"] is None  # the default: final answer only


def test_stopping_right_after_the_first_plan_scores_that_plan() -> None:
    env = ConductorEnv(
        tasks="offline/arithmetic", pool=fixed_pool(), max_recursions=1, initial_round_weight=0.25
    )
    _, info = env.reset(seed=0)
    env.step(solve_plan(info["question"], worker=0))
    _, reward, _, _, info = env.step(STOP)
    assert reward == 0.5 and info["initial_grade"] == info["grade"]


def test_a_self_worker_step_runs_an_inner_plan() -> None:
    inner = ScriptedConductor(
        plan_text([0, 2], ["Solve the task given to you.", "Check the answer above."], [[], "all"])
    )
    env = ConductorEnv(tasks="offline/arithmetic", max_recursions=1, conductor=inner)
    obs, info = env.reset(seed=5)
    assert info["num_workers"] == 8 and info["self_worker_id"] == 7
    assert info["pool"][-1] == "conductor (self)" and "Model 7 (yourself" in obs
    q = info["question"]
    action = plan_text(
        [1, 7], [f"Solve: {q}", f"Plan a careful check of the answer to: {q}"], [[], "all"]
    )
    _, reward, terminated, _, info = env.step(action)
    assert terminated and reward in (0.5, 1.0)  # the self-call spent the only inner call
    (call,) = info["rounds"][0].self_calls
    assert len(call.plan) == 2 and [s.worker for s in call.trace.steps] == [
        "gemini-2.5-pro",
        "gpt-5",
    ]
    outer = info["trace"].steps[1]
    assert outer.worker == "conductor (self)" and outer.response == call.trace.final_response
    assert outer.completion_tokens == call.trace.completion_tokens
    # the inner conductor saw step 0's turn and the step's own subtask as its question
    _, inner_info = inner.seen[0]
    assert inner_info["self_call"] is True and inner_info["question"].endswith(
        f"Plan a careful check of the answer to: {q}"
    )
    assert info["trace"].steps[0].response in inner_info["question"]
    assert info["worker_calls"] == 3  # one outer real call + two inner ones


def test_self_calls_are_bounded_by_the_budget() -> None:
    inner = ScriptedConductor(plan_text([0], ["Solve it."], [[]]))
    env = ConductorEnv(max_recursions=1, conductor=inner)
    _, info = env.reset(seed=0)
    action = plan_text([7, 7], ["a", "b"], [[], "all"])
    _, reward, terminated, _, info = env.step(action)
    assert (reward, terminated) == (0.0, True)
    assert info["parse_error"]["reason"] == "recursion_budget" and inner.seen == []


def test_an_invalid_inner_plan_is_the_conductors_failure() -> None:
    env = ConductorEnv(max_recursions=2, conductor=ScriptedConductor("no plan at all"))
    _, info = env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(plan_text([7], ["Do it."], [[]]))
    assert (reward, terminated, truncated, info["outcome"]) == (0.0, True, False, "invalid")
    assert info["parse_error"]["reason"] == "no_lists"
    assert "inner call of the conductor" in info["parse_error"]["detail"]


def test_agents_and_coroutines_serve_as_the_conductor() -> None:
    async def async_conductor(observation: str, info: Mapping[str, Any]) -> str:
        await asyncio.sleep(0)
        return plan_text([0], ["Solve the task given to you."], [[]])

    for policy in (async_conductor, RandomPlanner(seed=0)):
        env = ConductorEnv(max_recursions=1, conductor=policy)
        _, info = env.reset(seed=2)
        _, _, terminated, _, info = env.step(plan_text([7], [f"Solve: {info['question']}"], [[]]))
        assert terminated and info["outcome"] in ("correct", "wrong")
        assert len(info["rounds"][0].self_calls) == 1


def test_without_a_conductor_no_self_worker_is_offered() -> None:
    env = ConductorEnv(max_recursions=2)
    obs, info = env.reset(seed=0)
    assert info["self_worker_id"] is None and info["num_workers"] == 7 and "(yourself" not in obs
    with pytest.raises(ValueError, match="only with max_recursions >= 1"):
        ConductorEnv(conductor=RandomPlanner(seed=0))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"max_recursions": -1}, "max_recursions: must be an int >= 0"),
        ({"force_recursion": True}, "force_recursion: needs max_recursions >= 1"),
        ({"max_recursions": 1, "force_recursion": 1.5}, "force_recursion: must be a bool"),
        ({"initial_round_weight": -0.1}, "initial_round_weight: must be a number >= 0"),
    ],
)
def test_bad_recursion_arguments(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ConductorEnv(**kwargs)


def test_rounds_replay_identically_for_a_seed() -> None:
    def play(seed: int) -> list[Any]:
        env = ConductorEnv(max_recursions=2, k=4, shuffle_workers=True)
        agent = RandomPlanner(seed=seed, stop_prob=0.3)
        obs, info = env.reset(seed=seed)
        out, terminated = [], False
        while not terminated:
            obs, reward, terminated, _, info = env.step(agent.act(obs, info))
            out.append((reward, info["trace"]))
        return out

    runs = [play(s) for s in range(30)]
    assert runs == [play(s) for s in range(30)]
    assert {len(r) for r in runs} == {2, 3}  # stopped after round 1, or ran out of budget


def test_check_env_passes_with_recursion() -> None:
    for kwargs in (
        {"max_recursions": 2},
        {"max_recursions": 1, "force_recursion": True, "conductor": RandomPlanner(seed=0)},
    ):
        env = gym.make("ConductorEnv-v0", **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)


def test_vector_env_runs_multi_turn_episodes() -> None:
    envs = ConductorVectorEnv(8, max_recursions=1)
    agent = RandomPlanner(seed=0, stop_prob=0.5)
    obs, infos = envs.reset(seed=0)
    finished = 0
    for _ in range(4):
        actions = [
            agent.act(
                o,
                {
                    key: infos[key][i]
                    for key in ("question", "num_workers", "max_steps", "can_stop")
                },
            )
            for i, o in enumerate(obs)
        ]
        obs, rewards, terminated, _, infos = envs.step(actions)
        finished += int(terminated.sum())
        assert ((rewards == 0.0) | terminated).all()  # only finished episodes are rewarded
    assert finished >= 8


def test_a_worker_failure_in_a_recursive_round_truncates() -> None:
    pool = [
        WorkerSpec(name="ok", backend="test-flaky", backend_options={"failures": 0}),
        WorkerSpec(name="down", backend="test-flaky", backend_options={"failures": 99}),
    ]
    env = ConductorEnv(pool=pool, max_recursions=1, retry=RetryPolicy(max_attempts=1))
    _, info = env.reset(seed=0)
    env.step(plan_text([0], [f"Solve: {info['question']}"], [[]]))
    _, reward, terminated, truncated, info = env.step(plan_text([1], ["Check."], ["all"]))
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["error"]["worker"] == "down" and len(info["rounds"]) == 2


def test_render_shows_every_round() -> None:
    env = ConductorEnv(max_recursions=1, render_mode="ansi")
    _, info = env.reset(seed=0)
    env.step(solve_plan(info["question"]))
    env.step(verify_plan(info["question"]))
    text = str(env.render())
    assert "-- round 0" in text and "-- round 1" in text and "outcome:" in text
