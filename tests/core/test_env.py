from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import warnings
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env
from support import plan_text, solve_plan

import conductor_gym
from conductor_gym import ConductorEnv, WorkerSpec
from conductor_gym.graders import Grade, register_grader
from conductor_gym.tasks import make_task_source
from conductor_gym.workers.bound import RetryPolicy

STEP_KEYS = {
    "task_id", "task_index", "domain", "question", "pool", "num_workers", "max_steps",
    "round", "can_stop", "recursions_left", "forced_recursion", "self_worker_id",
    "rounds", "outcome", "plan", "parse_error", "trace", "grade", "initial_grade", "error",
    "worker_calls", "prompt_tokens", "completion_tokens", "cost_usd", "billed_usd",
    "cache_saved_usd", "latency_s",
}  # fmt: skip


def test_check_env_passes() -> None:
    env = gym.make("ConductorEnv-v0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the checker's warnings count as failures too
        check_env(env.unwrapped)


@pytest.mark.parametrize("env_id", ["ConductorEnv-v0", "conductor_gym:ConductorEnv-v0"])
def test_make_by_id(env_id: str) -> None:
    env = gym.make(env_id)
    obs, info = env.reset(seed=0)
    assert isinstance(env.unwrapped, ConductorEnv)
    assert obs.startswith("You are a conductor") and info["question"] in obs
    assert info["pool"] == tuple(env.unwrapped.pool.specs[i].name for i in range(7))


def test_reset_and_step_are_deterministic_for_a_seed() -> None:
    env = ConductorEnv()
    obs1, info1 = env.reset(seed=123)
    action = plan_text(
        [0, 3, 2],
        [f"Solve: {info1['question']}", "Check the work above.", "State the final answer."],
        [[], "all", [0, 1]],
    )
    _, r1, _, _, step1 = env.step(action)
    obs2, info2 = env.reset(seed=123)
    _, r2, _, _, step2 = env.step(action)
    assert (obs1, info1) == (obs2, info2)
    assert r1 == r2 and step1["trace"] == step2["trace"] and step1["grade"] == step2["grade"]
    other = {env.reset(seed=s)[1]["task_id"] for s in range(20)}
    assert len(other) > 10


def test_valid_plan_runs_and_is_graded() -> None:
    env = ConductorEnv(tasks="offline/arithmetic")
    rewards = []
    for seed in range(30):
        _, info = env.reset(seed=seed)
        _, reward, terminated, truncated, info = env.step(solve_plan(info["question"], 2))
        assert terminated and not truncated
        assert set(info) == STEP_KEYS
        assert info["outcome"] in ("correct", "wrong") and info["parse_error"] is None
        assert reward == (1.0 if info["grade"].correct else 0.5)
        assert info["worker_calls"] == 1 and info["trace"].steps[0].worker == "gpt-5"
        assert info["cost_usd"] == info["trace"].cost_usd > 0
        rewards.append(reward)
    assert set(rewards) == {1.0, 0.5}


@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("I would ask a model.", "no_lists"),
        ("model_id = [9]\nsubtasks = ['x']\naccess_list = [[]]", "unknown_worker"),
        ("model_id = []\nsubtasks = []\naccess_list = []", "empty_plan"),
        ("model_id = [0, best]\nsubtasks = ['x', 'y']\naccess_list = [[], []]", "syntax"),
    ],
)
def test_invalid_plans_score_zero_with_a_reason(action: str, reason: str) -> None:
    env = ConductorEnv()
    env.reset(seed=1)
    _, reward, terminated, truncated, info = env.step(action)
    assert (reward, terminated, truncated) == (0.0, True, False)
    assert info["outcome"] == "invalid" and info["parse_error"]["reason"] == reason
    assert info["parse_error"]["detail"]
    assert info["trace"] is None and info["worker_calls"] == 0


def test_too_many_steps_uses_the_env_limit() -> None:
    env = ConductorEnv(max_steps=2)
    _, info = env.reset(seed=0)
    action = plan_text([0, 1, 2], ["a", "b", "c"], [[], [], "all"])
    _, reward, *_, info = env.step(action)
    assert reward == 0.0 and info["parse_error"]["reason"] == "too_many_steps"
    assert "between 1 and 2 steps" in env.reset(seed=0)[0]


def test_worker_exception_truncates_and_is_not_a_score() -> None:
    pool = [
        WorkerSpec(name="ok", backend="test-flaky", backend_options={"failures": 0}),
        WorkerSpec(name="down", backend="test-flaky", backend_options={"failures": 99}),
    ]
    env = ConductorEnv(pool=pool, retry=RetryPolicy(max_attempts=2, base_delay_s=0.0))
    _, info = env.reset(seed=0)
    action = plan_text([0, 1], [f"Solve: {info['question']}", "Check it."], [[], "all"])
    _, reward, terminated, truncated, info = env.step(action)
    assert (reward, terminated, truncated) == (0.0, False, True)
    assert info["outcome"] == "error" and info["grade"] is None
    assert info["error"]["worker"] == "down" and info["error"]["step"] == 1
    assert info["error"]["attempts"] == 2 and info["error"]["kind"] == "infrastructure"
    assert [s.worker for s in info["trace"].steps] == ["ok"]
    assert info["worker_calls"] == 1  # calls of completed steps


def test_reward_scheme_is_configurable() -> None:
    env = ConductorEnv(reward=conductor_gym.RewardScheme(correct=2.0, wrong=-1.0, invalid=-3.0))
    env.reset(seed=0)
    assert env.step("nothing here")[1] == -3.0
    env = ConductorEnv(reward="binary", tasks="offline/arithmetic")
    outcomes = set()
    for seed in range(20):
        _, info = env.reset(seed=seed)
        _, reward, *_, info = env.step(solve_plan(info["question"], 4))  # gemma: often wrong
        outcomes.add((info["outcome"], reward))
    assert outcomes == {("correct", 1.0), ("wrong", 0.0)}


def test_task_index_option_selects_the_task_without_changing_the_draw() -> None:
    env = ConductorEnv(k=3)
    _, plain = env.reset(seed=4)
    _, chosen = env.reset(seed=4, options={"task_index": 17})
    assert chosen["task_index"] == 17 and chosen["task_id"] == env.tasks[17].id
    assert chosen["pool"] == plain["pool"]
    with pytest.raises(ValueError, match=r"task_index'\]=99999 is outside"):
        env.reset(seed=4, options={"task_index": 99999})
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['task'\]"):
        env.reset(options={"task": 1})


def test_k_of_n_is_visible_to_the_conductor_only_as_ordinals() -> None:
    env = ConductorEnv(k=2, shuffle_workers=True)
    pools = set()
    for seed in range(30):
        obs, info = env.reset(seed=seed)
        assert info["num_workers"] == 2 and len(info["pool"]) == 2
        assert "Model 1" in obs and "Model 2\n" not in obs.split("AVAILABLE LANGUAGE MODELS:")[1]
        pools.add(info["pool"])
    assert len(pools) > 15


def test_step_before_reset_or_after_end_needs_reset() -> None:
    env = ConductorEnv()
    with pytest.raises(gym.error.ResetNeeded):
        env.step("x")
    env.reset(seed=0)
    env.step("x")
    with pytest.raises(gym.error.ResetNeeded):
        env.step("x")


def test_non_string_action_is_a_type_error() -> None:
    env = ConductorEnv()
    env.reset(seed=0)
    with pytest.raises(TypeError, match="action must be a str"):
        env.step(["model_id"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"tasks": "nope"}, r"unknown task source 'nope'"),
        ({"pool": "nope"}, r"pool: unknown preset 'nope'"),
        (
            {"reward": "nope"},
            r"reward: unknown reward scheme 'nope'; registered: \['binary', 'cost-calls'",
        ),
        ({"max_steps": 0}, r"max_steps: must be an int >= 1"),
        ({"k": 8}, r"k must be an int in 1\.\.7"),
        ({"render_mode": "human"}, r"render_mode: unknown mode 'human'"),
        ({"max_plan_chars": 0}, r"max_plan_chars: must be an int >= 1"),
    ],
)
def test_bad_construction_arguments_fail_early(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ConductorEnv(**kwargs)  # type: ignore[arg-type]


def test_render_ansi_shows_the_trace() -> None:
    env = ConductorEnv(render_mode="ansi")
    _, info = env.reset(seed=2)
    assert "awaiting a plan" in str(env.render())
    env.step(plan_text([1, 2], [f"Solve: {info['question']}", "Check."], [[], [0]]))
    text = str(env.render())
    assert "step 0: Model 1 (claude-sonnet-4)" in text and "step 1: Model 2 (gpt-5)" in text
    assert "outcome:" in text and "grade:" in text


def test_question_to_all_workers_changes_what_later_steps_see() -> None:
    action_for = lambda q: plan_text([0, 1], [f"Solve: {q}", "Answer it."], [[], []])  # noqa: E731
    for flag, expected in ((False, False), (True, True)):
        env = ConductorEnv(question_to_all_workers=flag)
        _, info = env.reset(seed=0)
        _, _, _, _, info = env.step(action_for(info["question"]))
        assert (info["question"] in info["trace"].steps[1].messages[-1]["content"]) is expected


def test_astep_and_step_inside_a_running_loop() -> None:
    env = ConductorEnv()

    async def main() -> tuple[float, float]:
        _, info = env.reset(seed=0)
        awaited = await env.astep(solve_plan(info["question"]))
        env.reset(seed=0)
        blocking = env.step(solve_plan(info["question"]))  # runs on a helper thread
        return awaited[1], blocking[1]

    awaited, blocking = asyncio.run(main())
    assert awaited == blocking


def test_custom_task_source_object() -> None:
    source = make_task_source("offline/countdown")
    env = ConductorEnv(tasks=source)
    _, info = env.reset(seed=0)
    assert info["domain"] == "countdown" and env.tasks is source


def test_spaces_admit_every_character() -> None:
    env = ConductorEnv()
    weird = "∑ x² ≠ 中文 \x00\t\n \\boxed{½} 🙂 \U0010ffff"
    assert weird in env.action_space and "" in env.action_space
    assert weird in env.observation_space and "" not in env.observation_space
    assert "x" * 65537 not in env.action_space
    assert env.action_space.sample() in env.action_space


def test_episodes_replay_identically_in_another_process() -> None:
    code = (
        "import json, conductor_gym\n"
        "from conductor_gym.agents import RandomPlanner\n"
        "env, agent = conductor_gym.ConductorEnv(k=4, shuffle_workers=True), RandomPlanner(1)\n"
        "out = []\n"
        "for seed in range(25):\n"
        "    obs, info = env.reset(seed=seed)\n"
        "    _, r, _, _, info = env.step(agent.act(obs, info))\n"
        "    out.append([r, info['pool'], info['trace'].to_dict()])\n"
        "print(json.dumps(out))\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": hash_seed},
        ).stdout
        for hash_seed in ("1", "2")
    ]
    assert runs[0] == runs[1] and len(json.loads(runs[0])) == 25


def test_blocking_graders_run_off_the_loop_thread(tmp_path: Path) -> None:
    threads: dict[str, str] = {}

    def recorder(name: str) -> Any:
        def grader(response: str, reference: str, metadata: Any) -> Grade:
            threads[name] = threading.current_thread().name
            return Grade(reference in response, None, "recorded")

        return grader

    register_grader("test-blocking", blocking=True)(recorder("test-blocking"))
    register_grader("test-inline")(recorder("test-inline"))
    path = tmp_path / "tasks.jsonl"
    path.write_text(
        "".join(
            json.dumps({"question": "What is 6 * 7?", "answer": "42", "grader": g}) + "\n"
            for g in ("test-blocking", "test-inline")
        )
    )
    env = ConductorEnv(tasks=f"jsonl:{path}")
    for index in (0, 1):
        _, info = env.reset(seed=0, options={"task_index": index})
        env.step(solve_plan(info["question"]))
    assert threads["test-inline"] == threading.main_thread().name
    assert threads["test-blocking"] != threading.main_thread().name
