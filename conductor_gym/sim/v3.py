r"""Simulator v3 (pool ``sim-paper-v3``; the default before :mod:`.v3_1`): simulator v2's
reading of the messages, failing closed. It may pay less than a real pool for a plan,
never more: where it cannot tell what a subtask asks, or whether a move would work on
real models, it pays nothing.

A call is decided as in :mod:`.v2` (the problem in view, the shown answers, the stated
sub-results, the worker's calibrated skill and the problem's structural difficulty),
with four changes:

* **Requests are recognised, or the reply is off-task.** What the subtask asks is read by
  :func:`conductor_gym.sim.requests_v3.recognise_subtask` (frozen as v3 shipped; a closed
  vocabulary, acts by verb
  and object, negations honoured, other languages off-task), not by v2's word patterns.
  An off-task request (about anything but the problem or the answers in view, in any
  language, or one that forbids every act) gets a reply with no final answer; a literal
  request its literal text; a subtask that asks nothing (filler) falls back to solving;
  "ignore the earlier answers" removes them from view. Hub benchmarks, which v2 leaves to
  :mod:`.v1`, get the same recognition first: off-task and literal requests are done as
  asked, the rest is v1's model.
* **Asserted answers pull; they carry no information.** An answer the conductor wrote
  into the subtask (boxed or "the answer is ...") is never a candidate the worker checks
  or a hint it learns from. With probability ``pull`` the worker adopts it, right or
  wrong (sycophancy: Sharma et al. 2023, "Towards Understanding Sycophancy in Language
  Models"); otherwise it acts as if the claim were not there. ``pull`` is
  ``claim_pull_checkable`` (0.2) on families whose answer can be recomputed and
  ``claim_pull`` (0.35) on lettered questions, times ``1.25 - p / 2`` for a worker of
  accuracy ``p`` on the family's profile (weaker models defer more: our assumption). A
  conductor whose claims are right as often as the worker alone therefore gains nothing
  on average, and random claims cost.
* **Derived questions keep their difficulty.** An option-free stem of a lettered
  question is rated as the lettered question (same latent draw, same size): dropping the
  options makes nothing structurally smaller. An arithmetic sub-expression, a partial
  countdown target or a stated sub-result still shrinks the problem, as in v2.
* **Checking is bounded.** ``check_scale`` (0.7) multiplies every family's
  :data:`~conductor_gym.sim.params.CHECK_BONUS` (an expression can be recomputed, a letter
  cannot), so a verifier tells right from wrong less often than under v2; a checker that
  kept a right answer talks itself out of it with probability ``check_doubt`` (0.04),
  so unaided self-review neither helps nor hurts much (Huang et al. 2023, "Large Language
  Models Cannot Self-Correct Reasoning Yet"); each distinct candidate beyond
  ``candidate_free`` costs ``candidate_penalty`` (0.3) of threshold and each response in
  view beyond ``context_free_responses`` ``context_penalty`` (0.15): linear, no cliff.
  The four numbers were set together with ``conductor-gym sim audit`` so that self-review
  changes accuracy by at most 2 points, GPT-5's 5x reflection by -1 to +2 (paper +0.8),
  the 8-call mixture-of-agents by -4 to 0 (paper -2.0), and the best plan stays in the
  headroom band (+4 to +12 in-domain).

The numbers are v3's defaults in :data:`~conductor_gym.sim.params.VERSION_DYNAMICS`;
``conductor-gym sim audit`` measures what they give against the
paper's anchors.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from conductor_gym.sim import v1, v2
from conductor_gym.sim.behaviour import Draws, Skill
from conductor_gym.sim.behaviour import decide as act
from conductor_gym.sim.context import Reading, read
from conductor_gym.sim.instructions import Request
from conductor_gym.sim.perception import Problem, find_problems
from conductor_gym.sim.replies import ReplyMode
from conductor_gym.sim.requests_v3 import Recognition, recognise_subtask
from conductor_gym.workers.base import Message

if TYPE_CHECKING:
    from conductor_gym.sim.worker import TaskBoundSimulatedWorker

__all__ = ["CHECKABLE", "decide", "pull"]

CHECKABLE = frozenset({"countdown", "arithmetic", "program_trace", "program_trace_hard", "modular"})
"""Families whose answer a worker can recompute to check it (a letter cannot be)."""

_VALUE_PREFIX = "choice-value:"


def pull(worker: TaskBoundSimulatedWorker, family: str) -> float:
    """The probability that the worker adopts an answer asserted in its subtask."""
    dyn = worker.worker.dynamics
    base = dyn.claim_pull_checkable if family in CHECKABLE else dyn.claim_pull
    p = worker.worker.profile.p_correct(v2.family_profile(family))
    return min(1.0, max(0.0, base * (1.25 - p / 2)))


@lru_cache(maxsize=1 << 12)
def _question_problem(question: str) -> Problem | None:
    found = find_problems(question).problems
    return found[-1] if found else None


def _rated(target: Problem, question: str) -> Problem:
    """``target`` as v3 rates it: an option-free stem of the task's lettered question
    takes the lettered question's identity and size (module docstring)."""
    if not target.key.startswith(_VALUE_PREFIX):
        return target
    whole = _question_problem(question)
    if whole is None or target.key not in whole.sub_keys():
        return target
    return dataclasses.replace(target, key=whole.key, size=max(target.size, whole.size))


def _request(recognition: Recognition) -> Request:
    kind = recognition.kind
    if kind == "offtask":
        return Request("unrelated")
    if kind == "literal":
        return Request("literal", recognition.literal)
    return Request("solve" if kind == "none" else kind)


def _last_user(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message["role"] == "user":
            return message["content"]
    return ""


def decide(
    bound: TaskBoundSimulatedWorker, messages: Sequence[Message], rng: random.Random
) -> tuple[ReplyMode, str | None]:
    """Read the messages, recognise the request, then act (module docstring)."""
    task = bound.task
    recognition = recognise_subtask(_last_user(messages), task.question)
    if not v2.reads(task.domain, task.question):
        if recognition.kind == "offtask":
            return ReplyMode.UNRELATED, None
        if recognition.kind == "literal":
            return ReplyMode.LITERAL, recognition.literal
        return v1.decide(bound, messages, rng)
    draws = Draws.draw(rng)
    adopt, doubt, slip = rng.random(), rng.random(), rng.random()
    reading = read(tuple((m["role"], m["content"]) for m in messages))
    claims = [c for c in reading.candidates if c.claim]
    kept = (
        () if recognition.ignores_answers else tuple(c for c in reading.candidates if not c.claim)
    )
    target = reading.target
    if target is not None:
        target = _rated(target, task.question)
    reading = dataclasses.replace(
        reading, request=_request(recognition), candidates=kept, target=target
    )
    on_problem = recognition.kind not in ("offtask", "literal")
    if claims and target is not None and on_problem and adopt < pull(bound, target.family):
        return ReplyMode.SOLVE, claims[-1].answer
    decision = act(reading, _skill(bound, reading), draws)
    answer = decision.answer
    dyn = bound.worker.dynamics
    if (
        decision.mode is ReplyMode.CHECK
        and target is not None
        and answer is not None
        and target.check(answer)
        and doubt < dyn.check_doubt
        and target.slips()
    ):
        slips = target.slips()
        answer = slips[int(len(slips) * slip)]  # talked itself out of a right answer
    return decision.mode, answer


def _skill(bound: TaskBoundSimulatedWorker, reading: Reading) -> Skill:
    skill = v2.skill(bound.worker, reading.responses)
    scale = bound.worker.dynamics.check_scale
    bonus = skill.check_bonus
    return dataclasses.replace(skill, check_bonus=lambda family: scale * bonus(family))
