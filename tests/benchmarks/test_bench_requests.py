"""Request recogniser speed (simulator v3 reads every worker call's subtask once):
recognising a typical 1 KB subtask, as the first step sees it (four offline questions with
their problems blanked, then a conductor's check request), target under 1 ms median.
Run: ``make bench``."""

from __future__ import annotations

from conductor_gym.sim.requests import prepare, recognise
from conductor_gym.tasks import make_task_source

REQUEST = (
    "You are a careful grader. Review the answers above, identify any arithmetic errors, "
    "and pick the correct final answer. Put it in a box. Think step by step and be careful "
    "with the order of operations; do not trust the earlier responses blindly."
)


def test_recognise_a_1kb_subtask(benchmark) -> None:  # type: ignore[no-untyped-def]
    tasks = list(make_task_source("offline", size=8))[:4]
    text = prepare("\n\n".join(t.question for t in tasks) + "\n\n" + REQUEST)
    assert 700 <= len(text) <= 1400
    state = {"n": 0}

    def read() -> str:
        # A fresh text each call (a trailing number, which asks nothing), so the cache
        # does not answer it.
        state["n"] += 1
        return recognise(f"{text}\n{state['n']}").kind

    assert benchmark(read) == "check"


V31_REQUEST = (
    "## Role\nYou are a seasoned competition coach reviewing your students' work.\n"
    "## Task\n1. Go over the answers above with a fine-tooth comb.\n2. Sanity-check each "
    "one against the problem; chek the arithmetic methodically.\n3. Giv the final answr "
    "in a box. Do not just trust the earlier responses."
)


def test_recognise_a_v31_style_subtask(benchmark) -> None:  # type: ignore[no-untyped-def]
    """Simulator v3.1's open-vocabulary reading on a markdown, role-play, typo subtask
    beside the same blanked questions (every word outside v3's vocabulary is looked at)."""
    tasks = list(make_task_source("offline", size=8))[:4]
    text = prepare("\n\n".join(t.question for t in tasks) + "\n\n" + V31_REQUEST)
    state = {"n": 0}

    def read() -> str:
        state["n"] += 1
        return recognise(f"{text}\n{state['n']}").kind

    assert benchmark(read) == "check"
