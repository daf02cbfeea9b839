"""A full episode (reset + a 3-step plan) on the zero-latency simulated pool.

Target: under 1 ms per episode, grading excluded (the offline graders are cheap).
Run: ``make bench``.
"""

from __future__ import annotations

from support import plan_text

from conductor_gym import ConductorEnv


def test_full_episode_three_steps(benchmark) -> None:  # type: ignore[no-untyped-def]
    env = ConductorEnv()
    state = {"seed": 0}

    def episode() -> float:
        state["seed"] += 1
        _, info = env.reset(seed=state["seed"])
        action = plan_text(
            [0, 2, 1],
            [f"Solve: {info['question']}", "Check the work above.", "Give the final answer."],
            [[], "all", [1]],
        )
        return env.step(action)[1]

    reward = benchmark(episode)
    assert reward in (0.5, 1.0)


def test_grading_one_offline_answer(benchmark) -> None:  # type: ignore[no-untyped-def]
    """Grading alone, over the four offline families' graders, to subtract from the above."""
    from conductor_gym.graders import grade
    from conductor_gym.tasks import make_task_source

    tasks = [make_task_source("offline")[i] for i in range(4)]  # one task per family
    responses = [f"Checked.\n\nFinal answer: \\boxed{{{t.metadata['solution']}}}" for t in tasks]

    def grade_all() -> int:
        return sum(
            grade(t.grader, r, t.reference, **t.metadata).correct
            for t, r in zip(tasks, responses, strict=True)
        )

    assert benchmark(grade_all) == 4
