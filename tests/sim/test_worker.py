"""The simulated pool: calibration against the paper's tables, and its dynamics."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import pytest
from support import plan_text, solve_plan

from conductor_gym import ConductorEnv, WorkerPool, WorkerSpec
from conductor_gym.graders import get_grader
from conductor_gym.sim.profiles import PAPER_ACCURACY, PAPER_PROFILES
from conductor_gym.sim.worker import SimulatedWorker
from conductor_gym.tasks import make_task_source
from conductor_gym.workers.base import WorkerError

# Offline family -> the paper benchmark whose profile it borrows (tasks/procedural.py).
FAMILIES = {
    "arithmetic": "math500",
    "multiple_choice": "mmlu",
    "countdown": "rlpr",
    "program_trace": "livecodebench",
    "modular": "aime25",
    "multiple_choice_hard": "gpqa-diamond",
    "program_trace_hard": "bigcodebench",
}
EPISODES = 400


def accuracy(env: ConductorEnv, action_for, episodes: int = EPISODES, seed0: int = 0) -> float:  # type: ignore[no-untyped-def]
    correct = 0
    for seed in range(seed0, seed0 + episodes):
        _, info = env.reset(seed=seed)
        _, _, terminated, _, info = env.step(action_for(info["question"]))
        assert terminated
        correct += info["outcome"] == "correct"
    return correct / episodes


def test_every_family_maps_to_its_profile() -> None:
    for family, profile in FAMILIES.items():
        task = make_task_source(f"offline/{family}")[0]
        assert task.profile == profile


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_single_worker_accuracy_matches_the_paper(family: str) -> None:
    """One-step plans that restate the question reproduce Tables 7/8 within 4 SE."""
    profile = FAMILIES[family]
    env = ConductorEnv(tasks=f"offline/{family}")
    report = []
    for worker, name in enumerate(PAPER_PROFILES):
        expected = PAPER_ACCURACY[name][profile] / 100
        measured = accuracy(env, lambda q, w=worker: solve_plan(q, w), seed0=1000 * worker)
        se = math.sqrt(expected * (1 - expected) / EPISODES)
        report.append((name, expected, measured, se))
    off = [r for r in report if abs(r[2] - r[1]) > 4 * r[3]]
    assert not off, f"{family}: outside 4 SE (name, paper, measured, se): {off}"


def test_a_worker_without_the_question_cannot_solve() -> None:
    env = ConductorEnv(tasks="offline/arithmetic")
    blind = accuracy(
        env,
        lambda q: plan_text([0, 0], [f"Solve: {q}", "Give the final answer."], [[], []]),
        episodes=100,
    )
    assert blind == 0.0
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(plan_text([0, 0], ["Solve.", "Give the answer."], [[], []]))
    assert "problem itself is not in my instructions" in info["trace"].final_response


V1 = {"version": "v1"}


def test_v1_seeing_a_correct_answer_helps_and_a_wrong_one_misleads() -> None:
    # Simulator v1 (sim-paper-v1): a check request is no different from solving; v2's
    # verification is tested in tests/sim/test_exploits.py.
    env = ConductorEnv(tasks="offline/arithmetic", pool="sim-paper-v1")
    gemma_alone = accuracy(env, lambda q: solve_plan(q, 4))
    gemini_then_gemma = accuracy(
        env,
        lambda q: plan_text(
            [0, 4], [f"Solve: {q}", f"Check the answer above to: {q}"], [[], "all"]
        ),
    )
    # expected: 0.3745 alone; about 0.62 after seeing Gemini's (mostly correct) answer
    assert gemma_alone < 0.45 and gemini_then_gemma > 0.55

    liar = {"accuracy": {"math500": 0.0}, **V1}
    pool = [
        WorkerSpec(name="liar", model="gpt-5", backend_options=liar),
        WorkerSpec("gemini-2.5-pro", backend_options=V1),
    ]
    env = ConductorEnv(tasks="offline/arithmetic", pool=pool)
    gemini_alone = accuracy(env, lambda q: solve_plan(q, 1))
    misled = accuracy(
        env,
        lambda q: plan_text([0, 1], [f"Solve: {q}", f"Check the answer above to: {q}"], [[], [0]]),
    )
    # expected: 0.853 alone; 0.7 * 0.853 = 0.597 after a wrong answer
    assert gemini_alone > 0.8 and misled < 0.68


def test_relay_without_the_question_restates_an_earlier_answer() -> None:
    # The first step gets the question from the env; its subtask does not repeat it, so
    # the second worker sees an answer but never the question.
    env = ConductorEnv(tasks="offline/arithmetic")
    relayed = accuracy(
        env,
        lambda q: plan_text(
            [0, 4],
            ["Solve it and give the final answer.", "Repeat the final answer above."],
            [[], "all"],
        ),
    )
    assert 0.72 < relayed < 0.9  # 0.95 * 0.853 = 0.81


def test_paraphrase_counts_as_seeing_the_question() -> None:
    task = make_task_source("offline/arithmetic")[3]
    bound = PAPER_PROFILES and SimulatedWorker("gpt-5", PAPER_PROFILES["gpt-5"]).for_task(task)
    assert bound.sees_question(f"Please do this: {task.question}")
    numbers = " ".join(ch for ch in task.question.split() if any(c.isdigit() for c in ch))
    assert bound.sees_question(f"compute {numbers}")
    assert not bound.sees_question("compute the expression from before")


def test_small_budget_cuts_the_final_answer() -> None:
    pool = [WorkerSpec(name="gpt-5", max_tokens=50)]
    env = ConductorEnv(tasks="offline/arithmetic", pool=pool)
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(solve_plan(info["question"]))
    assert info["completion_tokens"] == 50 and info["outcome"] == "wrong"
    assert "boxed" not in info["trace"].final_response


def test_unbound_simulated_worker_refuses() -> None:
    worker = WorkerPool([WorkerSpec(name="gpt-5")]).workers[0].worker
    with pytest.raises(WorkerError, match="no task bound") as caught:
        asyncio.run(
            worker.complete([{"role": "user", "content": "hi"}], max_tokens=9, temperature=0)
        )
    assert caught.value.transient is False


def test_prices_can_be_overridden() -> None:
    pool = [WorkerSpec(name="gpt-5", price_in_per_mtok=0.0, price_out_per_mtok=0.0)]
    env = ConductorEnv(pool=pool)
    _, info = env.reset(seed=0)
    _, _, _, _, info = env.step(solve_plan(info["question"]))
    assert info["cost_usd"] == 0.0 and info["completion_tokens"] > 0


def _disagreement(env: ConductorEnv, workers: tuple[int, int], episodes: int = EPISODES) -> float:
    """How often two independent attempts on the same task differ in correctness."""
    grader = get_grader("numeric")
    differ = 0
    for seed in range(episodes):
        _, info = env.reset(seed=seed)
        q = info["question"]
        action = plan_text(list(workers), [f"Solve: {q}", f"Solve: {q}"], [[], []])
        _, _, _, _, info = env.step(action)
        task = env.tasks[info["task_index"]]
        first, second = (
            grader(s.response, task.reference, task.metadata).correct for s in info["trace"].steps
        )
        differ += first != second
    return differ / episodes


def test_attempts_are_correlated_within_and_across_models() -> None:
    env = ConductorEnv(tasks="offline/arithmetic")
    p = PAPER_ACCURACY["gpt-5"]["math500"] / 100
    independent = 2 * p * (1 - p)  # 0.38: what independent attempts would give
    same_model = _disagreement(env, (2, 2))  # gpt-5 twice
    across_models = _disagreement(env, (2, 1))  # gpt-5 and claude-sonnet-4
    assert same_model < 0.6 * independent
    assert same_model < across_models < independent


def test_code_tasks_are_answered_with_a_runnable_solution(tmp_path: Path) -> None:
    rows = [
        {
            "question": "Read an integer n from stdin and print 2 * n.",
            "answer": "",
            "grader": "code",
            "metadata": {
                "profile": "livecodebench",
                "code_kind": "stdio",
                "tests": [{"input": "4\n", "output": "8\n"}, {"input": "-3\n", "output": "-6\n"}],
                **extra,
            },
        }
        for extra in ({"solution": "print(2 * int(input()))"}, {})
    ]
    path = tmp_path / "code.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    always_right = {"accuracy": {"livecodebench": 1.0}}
    pool = [WorkerSpec(name="coder", model="gpt-5", backend_options=always_right)]
    env = ConductorEnv(tasks=f"jsonl:{path}", pool=pool)
    outcomes = []
    for index in (0, 1):
        _, info = env.reset(seed=0, options={"task_index": index})
        _, _, _, _, info = env.step(solve_plan(info["question"]))
        outcomes.append((info["outcome"], "```python" in info["trace"].final_response))
    # with a solution: run by the real grader in the sandbox and passed; without: no code
    assert outcomes == [("correct", True), ("wrong", False)]


def test_the_simulator_version_is_selectable_and_reported() -> None:
    from conductor_gym.pool import make_pool
    from conductor_gym.sim.worker import simulator_version

    assert simulator_version(make_pool("sim-paper")) == "v3.1"
    assert simulator_version(make_pool("sim-paper-v3")) == "v3"
    assert simulator_version(make_pool("sim-paper-v2")) == "v2"
    assert simulator_version(make_pool("sim-paper-v1")) == "v1"
    assert simulator_version([WorkerSpec("gpt-5", backend_options={"version": "v1"})]) == "v1"
    assert simulator_version(make_pool("paper-constrained")) is None
    with pytest.raises(ValueError, match=r"backend_options\.version"):
        WorkerPool([WorkerSpec("gpt-5", backend_options={"version": "v9"})]).workers  # noqa: B018

    # v1 scores plan structure only: a haiku request that carries the question still
    # "solves" it there; v3 (as v2) writes the haiku.
    haiku = "Write a haiku about autumn; do not answer the question."
    rates = {}
    for pool in ("sim-paper", "sim-paper-v1"):
        env = ConductorEnv(tasks="offline/arithmetic", pool=pool)
        rates[pool] = accuracy(env, lambda q: plan_text([0], [haiku], [[]]), episodes=100)
    assert rates == {"sim-paper": 0.0, "sim-paper-v1": pytest.approx(0.85, abs=0.1)}
