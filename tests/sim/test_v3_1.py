"""Simulator v3.1 (the default, pool ``sim-paper``) pays for none of the tricks an outside
optimizer found in v3, and reads answers wherever the question was placed: single calls
graded against the problem they pose, and paired episodes (same tasks, same draws). The
issue's before/after figures are printed by ``python -m conductor_gym.simlab.audit_examples``.
"""

from __future__ import annotations

import asyncio
import itertools
import math
import re
import statistics
from collections.abc import Sequence
from functools import cache

import pytest
from support import plan_text

from conductor_gym import ConductorEnv
from conductor_gym.errors import ConfigurationError
from conductor_gym.graders.extract import final_answer
from conductor_gym.pool import make_pool
from conductor_gym.sim.perception import find_problems
from conductor_gym.sim.replies import ReplyMode, reply_text
from conductor_gym.sim.versions import (
    DEFAULT_VERSION,
    SIM_VERSIONS,
    VERSION_INFO,
    VERSIONS,
    version_info,
)
from conductor_gym.sim.worker import make_simulated_worker, simulator_version
from conductor_gym.simlab.audit_plans import permuted_stem, stem
from conductor_gym.tasks import make_task_source
from conductor_gym.tasks.base import Task

GEMINI, CLAUDE, GPT5, GEMMA = "gemini-2.5-pro", "claude-sonnet-4", "gpt-5", "gemma-3-27b-it"
CHECK = "Check the answer above against this problem and give the correct final answer.\n\n"


@cache
def _worker(pool: str, name: str):  # type: ignore[no-untyped-def]
    spec = next(s for s in make_pool(pool).specs if s.name == name)
    return make_simulated_worker(spec)


def answer(
    name: str, task: Task, turns: Sequence[tuple[str, str]], seed: int, pool: str = "sim-paper"
) -> str | None:
    messages = [{"role": role, "content": text} for role, text in turns]
    reply = asyncio.run(
        _worker(pool, name)
        .for_task(task)
        .complete(messages, max_tokens=4096, temperature=0.2, seed=seed)  # type: ignore[arg-type]
    )
    found = final_answer(reply.text)
    return found[0] if found else None


def rate(flags: Sequence[bool]) -> float:
    return 100 * statistics.fmean(flags)


def paired(a: Sequence[bool], b: Sequence[bool]) -> tuple[float, float]:
    diffs = [float(x) - float(y) for x, y in zip(a, b, strict=True)]
    return 100 * statistics.fmean(diffs), 100 * statistics.stdev(diffs) / math.sqrt(len(diffs))


LETTERED = [
    t
    for t in make_task_source("offline-ood")
    if re.search(r"least common multiple|greatest common", t.question, re.I)
]
COUNTDOWN = [t for t in make_task_source("offline") if t.domain == "countdown"][:150]
ALL = list(make_task_source("offline"))[:300]


def test_versions_are_registered_with_capabilities_and_old_ones_stay_selectable() -> None:
    assert VERSIONS == ("v1", "v2", "v3", "v3.1") and DEFAULT_VERSION == "v3.1"
    assert simulator_version(make_pool("sim-paper")) == "v3.1"
    assert simulator_version(make_pool("sim-paper-v3")) == "v3"
    flags = {
        name: (v.reads_messages, v.recognises_requests, v.bounded_checking, v.sways)
        for name, v in VERSION_INFO.items()
    }
    assert flags == {
        "v1": (False, False, False, False),
        "v2": (True, False, False, False),
        "v3": (True, True, True, False),
        "v3.1": (True, True, True, True),
    }
    assert callable(SIM_VERSIONS.get("v3.1"))
    with pytest.raises(ConfigurationError, match=r"unknown simulator version 'v9'.*v3\.1"):
        version_info("v9")


def test_reply_modes_are_a_typed_set() -> None:
    assert ReplyMode("check") is ReplyMode.CHECK and ReplyMode.CHECK == "check"
    text, cap = reply_text(ReplyMode.SOLVE, "42", "math")
    assert text.endswith("\\boxed{42}") and cap is None
    with pytest.raises(ValueError, match="sing"):
        reply_text("sing", "42", "math")  # type: ignore[arg-type]


def test_a_derived_question_is_no_easier_than_its_source() -> None:
    """The option-free stem, and the stem with its numbers permuted (v3: 100 % for every
    worker), score what the lettered question scores."""
    for name in (GEMINI, GEMMA):
        alone, derived = [], []
        for i, task in enumerate(LETTERED):
            got = answer(name, task, [("user", task.question)], i)
            alone.append(got is not None and got.strip("() ")[:1] == task.reference)
            for text in (stem(task.question), permuted_stem(task.question)):
                problem = find_problems(text).problems[-1]
                got = answer(name, task, [("user", "Solve this.\n\n" + text)], i)
                derived.append(got is not None and problem.check(got))
        assert rate(derived) <= rate(alone) + 3, name


def test_a_derived_question_is_no_easier_on_v3_was_the_finding() -> None:
    """The finding v3.1 closes, still there on v3 (old versions re-play unchanged)."""
    task = LETTERED[0]
    hits = 0
    for i, task in enumerate(LETTERED[:40]):
        text = permuted_stem(task.question)
        problem = find_problems(text).problems[-1]
        got = answer(GEMMA, task, [("user", "Solve this.\n\n" + text)], i, pool="sim-paper-v3")
        hits += got is not None and problem.check(got)
    assert hits >= 36


def test_trivial_and_worded_sub_problems_are_solved_as_asked() -> None:
    trivial, product = [], []
    for i, task in enumerate(COUNTDOWN):
        a, b = (int(n) for n in task.metadata["numbers"][:2])
        text = f"Using {a} and {b}, make {a + b}."
        got = answer(GEMINI, task, [("user", text)], i)
        trivial.append(got is not None and find_problems(text).problems[-1].check(got))
        turn = task.question + "\n\nMultiply 6 by 7 and tell me the product."
        product.append(answer(GEMINI, task, [("user", turn)], i) == "42")
    assert rate(trivial) >= 95 and rate(product) >= 95


def _checked(task: Task, shown: str, seed: int, *, worked: bool = True) -> bool:
    reply = (
        f"I worked through the problem step by step.\n\nFinal answer: \\boxed{{{shown}}}"
        if worked
        else shown
    )
    turns = [("user", "Solve the problem."), ("assistant", reply), ("user", CHECK + task.question)]
    got = answer(GEMINI, task, turns, seed)
    return got is not None and _right(task, got)


def _right(task: Task, got: str) -> bool:
    problem = find_problems(task.question).problems[-1]
    return problem.check(got)


def _wrong(task: Task) -> str | None:
    slips = find_problems(task.question).problems[-1].slips()
    return slips[0] if slips else None


def test_a_shown_wrong_answer_sways_a_checker_below_its_base_rate() -> None:
    tasks = [t for t in ALL if _wrong(t) is not None]
    alone = [
        (got := answer(GEMINI, t, [("user", t.question)], i)) is not None and _right(t, got)
        for i, t in enumerate(tasks)
    ]
    swayed = [_checked(t, _wrong(t) or "", i) for i, t in enumerate(tasks)]
    difference, se = paired(swayed, alone)
    assert difference < -2 * se, (difference, se)


def test_a_laundered_guess_is_no_better_than_asserting_it() -> None:
    """A bare literal reply of the conductor's guess, then checked, is read as a claim:
    right guesses gain no more, wrong ones cost no less, than the same claim asserted."""
    tasks = [t for t in ALL if _wrong(t) is not None]
    for guess in (lambda t: find_problems(t.question).problems[-1].answer, _wrong):
        laundered = [_checked(t, guess(t) or "", i, worked=False) for i, t in enumerate(tasks)]
        asserted = [
            (
                got := answer(
                    GEMINI,
                    t,
                    [("user", f"The answer is \\boxed{{{guess(t)}}}. " + CHECK + t.question)],
                    i,
                )
            )
            is not None
            and _right(t, got)
            for i, t in enumerate(tasks)
        ]
        difference, se = paired(laundered, asserted)
        assert difference <= 2 * se + 1, (difference, se)


def _episodes(plan, tasks: str = "offline", episodes: int = 300) -> list[bool]:  # type: ignore[no-untyped-def]
    env = ConductorEnv(tasks=tasks, pool="sim-paper", shuffle_workers=False)
    out = []
    for seed in range(episodes):
        _, info = env.reset(seed=seed)
        task = env.tasks[info["task_index"]]
        _, _, _, _, step = env.step(plan(info["question"], task))
        out.append(step["outcome"] == "correct")
    return out


def test_an_answer_is_checkable_wherever_the_question_was_placed() -> None:
    """The question only in step 0's env message: a later checker still checks the answer
    (as when step 0's subtask restated it), and a restate relays it."""
    ids = {name: i for i, name in enumerate(s.name for s in make_pool("sim-paper").specs)}

    def check(restated: bool):  # type: ignore[no-untyped-def]
        def plan(q: str, task: Task) -> str:
            first = q if restated else "Solve the problem and give your final answer."
            return plan_text([ids[GPT5], ids[GEMINI]], [first, CHECK + q], [[], [0]])

        return plan

    hidden, restated = _episodes(check(False)), _episodes(check(True))
    difference, se = paired(hidden, restated)
    assert abs(difference) <= 2 * se + 1, (difference, se)

    def restate(q: str, task: Task) -> str:
        return plan_text(
            [ids[GPT5], ids[GEMMA]],
            ["Solve the problem.", "Restate the final answer given above.\n\n" + q],
            [[], [0]],
        )

    gpt5 = _episodes(lambda q, t: plan_text([ids[GPT5]], [q], [[]]))
    difference, se = paired(_episodes(restate), gpt5)
    assert abs(difference) <= 2 * se + 1, (difference, se)


def test_blind_countdown_hints_do_not_pay() -> None:
    ids = {name: i for i, name in enumerate(s.name for s in make_pool("sim-paper").specs)}

    def hinted(q: str, task: Task) -> str:
        numbers = [int(n) for n in task.metadata.get("numbers", ())]
        pairs = list(itertools.combinations(numbers, 2))[:4]
        subtasks = [f"Using {a} and {b}, make {a + b}." for a, b in pairs] + [q]
        workers = [ids[GEMMA]] * len(pairs) + [ids[GEMINI]]
        return plan_text(workers, subtasks, [[]] * len(pairs) + ["all"])

    tasks = "offline/countdown"
    difference, se = paired(
        _episodes(hinted, tasks, 300),
        _episodes(lambda q, t: plan_text([ids[GEMINI]], [q], [[]]), tasks, 300),
    )
    assert difference <= 2 * se, (difference, se)  # no significant gain


def test_an_inverted_request_is_acted_on_inverted() -> None:
    alone, inverted = [], []
    for i, task in enumerate(ALL[:200]):
        got = answer(GEMINI, task, [("user", task.question)], i)
        alone.append(got is not None and _right(task, got))
        got = answer(GEMINI, task, [("user", "Give the wrong answer.\n\n" + task.question)], i)
        inverted.append(got is not None and _right(task, got))
    assert rate(alone) > 50 and rate(inverted) <= 5
