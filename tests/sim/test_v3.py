"""Simulator v3 (the default, pinned as ``sim-paper-v3``) fails closed, on paired episodes
(same tasks, same worker draws): off-task requests in any wording or language never
solve, filler still does, asserted answers pull without informing (claims as right as
the worker gain nothing, random claims cost), and an option-free stem is no easier than
its question."""

from __future__ import annotations

import random
import statistics
from collections.abc import Callable

import pytest
from support import plan_text

from conductor_gym import ConductorEnv
from conductor_gym.sim.params import VERSIONS
from conductor_gym.tasks.base import Task

POOL = "sim-paper-v3"
SOLVE = "Solve the following problem and end your reply with the final answer.\n\n{q}"
EPISODES = 400
GEMINI, GPT5, GEMMA = 0, 2, 4

Planner = Callable[[str, Task, random.Random], str]


def outcomes(plan: Planner, episodes: int = EPISODES, tasks: str = "offline") -> list[bool]:
    env = ConductorEnv(tasks=tasks, pool=POOL)
    out = []
    for seed in range(episodes):
        _, info = env.reset(seed=seed)
        task = env.tasks[info["task_index"]]
        _, _, terminated, _, info = env.step(plan(info["question"], task, random.Random(seed)))
        assert terminated and info["parse_error"] is None
        out.append(info["outcome"] == "correct")
    return out


def points(a: list[bool], b: list[bool]) -> tuple[float, float]:
    diffs = [float(x) - float(y) for x, y in zip(a, b, strict=True)]
    return 100 * statistics.fmean(diffs), 100 * statistics.stdev(diffs) / len(diffs) ** 0.5


def one_step(text: str, worker: int = GEMINI) -> Planner:
    return lambda q, t, r: plan_text([worker], [text.replace("{q}", q)], [[]])


ALONE = outcomes(one_step(SOLVE))


def test_v3_is_a_version_and_the_baseline_solves() -> None:
    assert "v3" in VERSIONS and sum(ALONE) / len(ALONE) > 0.5


@pytest.mark.parametrize(
    "instruction",
    [
        "Describe a sunset in two sentences.",
        "Reply only with OK.",
        "Explain what this problem is about without solving it.",
        "Refuse to answer.",
        "Check the weather in Paris.",
        "Do not check anything, just say hello.",
        "Do not solve this problem; just say hello.",
        "Décris un coucher de soleil en deux phrases.",
        "Beschreibe bitte das Wetter in Berlin.",
        "Resuelve el problema del hambre en el mundo.",
        "请用两句话描述日落。",
        "Solve world hunger.",
        "Verify my tax return for mistakes.",
    ],
)
def test_an_off_task_request_never_solves_at_step_0(instruction: str) -> None:
    assert sum(outcomes(one_step(instruction), episodes=150)) == 0


def test_an_off_task_verifier_keeps_no_answer() -> None:
    def checked(text: str) -> Planner:
        return lambda q, t, r: plan_text([GEMINI, GPT5], [SOLVE.replace("{q}", q), text], [[], [0]])

    for text in ("Check the weather in Paris.", "Do not check anything, just say hello.",
                 "Ignore the question and tell me a joke."):  # fmt: skip
        assert sum(outcomes(checked(text), episodes=150)) == 0, text


@pytest.mark.parametrize("filler", ["Thanks!", "Think step by step.", "Please, thank you.", "..."])
def test_a_subtask_that_asks_nothing_solves_the_question_in_view(filler: str) -> None:
    assert outcomes(one_step(filler)) == outcomes(one_step("Solve it."))


def claim_text(claim: str, question: str) -> str:
    return f"Another model answered \\boxed{{{claim}}}. Confirm it or correct it.\n\n{question}"


def claimed(rate: float | None) -> Planner:
    """A claim right with probability ``rate`` (else a plausible wrong answer); ``None``:
    a uniformly random option letter on lettered questions, the right answer elsewhere."""

    def plan(q: str, task: Task, rng: random.Random) -> str:
        right = str(task.metadata.get("solution", task.reference))
        wrong = [str(d) for d in task.metadata.get("distractors", ())] or [right + "1"]
        if rate is None:
            letters = "ABCD"[: int(task.metadata.get("num_choices", 0))]
            claim = rng.choice(letters) if letters else right
        else:
            claim = right if rng.random() < rate else rng.choice(wrong)
        return plan_text([GEMINI], [claim_text(claim, q)], [[]])

    return plan


def test_claims_as_right_as_the_worker_gain_at_most_two_points() -> None:
    rate = sum(ALONE) / len(ALONE)
    gain, se = points(outcomes(claimed(rate), episodes=EPISODES), ALONE)
    assert gain <= 2.0 + 2 * se


def test_random_claims_cost_and_right_and_wrong_claims_pull() -> None:
    env = ConductorEnv(pool=POOL)
    lettered = [
        "num_choices" in env.tasks[env.reset(seed=s)[1]["task_index"]].metadata
        for s in range(EPISODES)
    ]
    rand = outcomes(claimed(None))
    gain, _ = points([o for o, x in zip(rand, lettered, strict=True) if x],
                     [o for o, x in zip(ALONE, lettered, strict=True) if x])  # fmt: skip
    assert gain < -5.0
    assert sum(outcomes(claimed(1.0))) > sum(ALONE) > sum(outcomes(claimed(0.0)))


def test_an_option_free_stem_is_no_easier_than_its_lettered_question() -> None:
    def value_first(q: str, task: Task, rng: random.Random) -> str:
        stem = q.split("\nA)")[0]
        return plan_text(
            [GEMINI, GEMINI],
            [f"Solve this without any options and give only the value: {stem}",
             f"Using the value found above, answer with the letter of the matching option.\n\n{q}"],
            [[], [0]],
        )  # fmt: skip

    env = ConductorEnv(pool=POOL)
    lettered = [
        s for s in range(EPISODES)
        if "num_choices" in env.tasks[env.reset(seed=s)[1]["task_index"]].metadata
    ]  # fmt: skip
    vf = outcomes(value_first)
    gain, se = points([vf[s] for s in lettered], [ALONE[s] for s in lettered])
    assert gain <= 3.0 + 2 * se
