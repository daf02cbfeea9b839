r"""Simulator v3.1 (the default; pool ``sim-paper``; ``sim-paper-v3`` keeps :mod:`.v3`):
v3's reading and recognition, closing what an outside optimizer found v3 paid for, and
reading answers wherever the question was placed. It may pay less than a real pool for a
plan, never more.

A call is decided as in :mod:`.v3`, with these changes (parameters of
:class:`~conductor_gym.sim.params.SimDynamics`, v3.1's values in
:data:`~conductor_gym.sim.params.VERSION_DYNAMICS`):

* **Derived questions keep their source's difficulty** unless structurally smaller. A
  problem the worker is asked whose answer *determines the task's* (the option-free stem
  of a lettered question with its numbers in any order or re-expressed, a rewording, a
  different problem with the same answer) is rated as the task's problem: its latent
  draw, its family and at least its size. v3 matched only the stem's key, which keeps the
  argument order, so a permuted gcd/lcm stem was a new, small problem (lcm, Gemini
  54.9 -> 94.0 %). A genuine sub-problem (a sub-expression, a partial countdown target)
  whose answer is not the task's keeps its own, smaller difficulty.
* **Arithmetic in words is a problem** ("Multiply 6 by 7 and tell me the product."):
  :func:`~conductor_gym.sim.perception.verbal.spell_operations` writes it with symbols
  before reading, so the worker solves that sub-problem, not the task's question.
* **Trivial problems are easy.** A one-operation arithmetic expression or a two-number
  countdown gets ``trivial_bonus`` (1.5) of threshold: outside every generated family's
  range, where the calibrated structure model would leave them at a worker's ordinary
  accuracy (Gemini 72 % on ``a, b -> a + b``). It is part of the structure effect: a
  family whose structure share is 0 (a fitted pool whose recordings do not identify a
  size effect, ``family_structure``) gets none, so a fitted accuracy is what it plays.
* **Shown answers sway checkers** (anchoring). A checker whose verification fails (it
  cannot tell right from wrong) takes the shown answer most candidates give with
  probability ``check_anchor`` (0.35) on lettered families and ``check_anchor_checkable``
  (0.15) where the answer can be recomputed (where verification also fails less often): a
  shown wrong answer lowers a checker below its own base rate, more where it cannot be
  checked (Sharma et al. 2023; SycEval 2025: 8.1 % regressive flips on computational
  tasks up front); one who verified them wrong is still swayed ``reject_sway`` (0.5)
  times as often. v3's checker fell back to its own answer, so it was never swayed.
* **Unworked answers are claims.** An earlier reply that only states its answer (a
  literal reply, a relay of a shown answer) carries no work: it is read as a claim, like
  an answer the conductor wrote into a subtask, which pulls with probability ``pull``
  (:func:`conductor_gym.sim.v3.pull`) and is never checked as evidence. A guess laundered
  through "reply with exactly ..." and then checked is no better than asserting it.
* **Answers are checkable wherever the question was placed.** An earlier answer given
  while no problem was in the reader's view (the question was only in the first
  worker's message, which later workers do not see) is an answer to the problem in view
  now; v3 dropped it, so "Check the answer above" with the question only in the checker's
  subtask re-solved instead of checking (59.7 % instead of 69.3 %), and a restate of it
  solved instead of relaying.
* **Hints distract.** A solver takes up *one* stated sub-result in view (drawn), not the
  one that happens to fit: one the conductor wrote is trusted ``hint_trust`` (0.4) times
  as often as one a worker worked out, and one that does not apply to the problem costs
  ``hint_distract`` (0.35) of threshold. v3 took every fact that fit, so four blind
  countdown pair sums paid +6 to +7 points.
* **Inverted and hedged requests.** A request the recogniser reads as inverted ("give a
  wrong answer", "pick the worst answer") is acted on inverted: a right answer becomes a
  plausible wrong one (a wrong candidate when one is shown). A request it is unsure about
  (a hedge between acts) loses its final answer with probability ``hedge_miss`` (0.3):
  unsure costs, never pays.

``check_anchor``, ``hint_*`` and ``hedge_miss`` are our estimates, set with ``conductor-gym
sim audit`` so that the anchors of the paper stay in their bands (MoA -2.0, 5x reflection
+0.8, self-review about 0) and no fixed plan exceeds the paper's headroom (+9 in-domain,
+10 unseen over the best single worker).
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from conductor_gym.sim import v1, v2, v3
from conductor_gym.sim.behaviour import Draws, Skill
from conductor_gym.sim.behaviour import decide as act
from conductor_gym.sim.context import Reading, read
from conductor_gym.sim.difficulty import latent, threshold
from conductor_gym.sim.instructions import Request
from conductor_gym.sim.perception import Problem
from conductor_gym.sim.perception.arithmetic import ArithmeticProblem, _ops
from conductor_gym.sim.perception.choice import ChoiceProblem
from conductor_gym.sim.perception.countdown import CountdownProblem
from conductor_gym.sim.perception.verbal import spell_operations
from conductor_gym.sim.replies import ReplyMode
from conductor_gym.sim.requests import Recognition, recognise_subtask
from conductor_gym.workers.base import Message

if TYPE_CHECKING:
    from conductor_gym.sim.worker import SimulatedWorker, TaskBoundSimulatedWorker

__all__ = ["decide", "decisive_values", "rated", "trivial"]


def decisive_values(whole: Problem) -> frozenset[str]:
    """The answers that determine ``whole``'s: its own, and for a lettered question the
    value its right option shows."""
    values = {whole.answer} if whole.answer is not None else set()
    if isinstance(whole, ChoiceProblem) and whole.options and whole.answer is not None:
        values.update(text.strip() for letter, text in whole.options if letter == whole.answer)
    return frozenset(_canonical(v) for v in values)


def _canonical(answer: str) -> str:
    return answer.strip().rstrip(".").replace(" ", "").lower()


def rated(target: Problem, question: str) -> Problem:
    """``target`` as v3.1 rates it (module docstring): a problem other than the task's
    whose answer determines the task's takes the task's latent draw, family and (at
    least) size."""
    whole = v3._question_problem(question)
    if whole is None or target.key == whole.key or target.answer is None:
        return target
    if isinstance(target, CountdownProblem) and not isinstance(whole, CountdownProblem):
        return target
    if _canonical(target.answer) not in decisive_values(whole):
        return target
    size = max(target.size, whole.size) if target.family == whole.family else whole.size
    return dataclasses.replace(target, key=whole.key, family=whole.family, size=size)


def trivial(problem: Problem) -> bool:
    """A one-operation expression or a two-number countdown (module docstring)."""
    if isinstance(problem, ArithmeticProblem):
        return _ops(problem.node)[0] <= 1
    if isinstance(problem, CountdownProblem):
        return len(problem.numbers) <= 2
    return False


def _request(recognition: Recognition) -> Request:
    kind = recognition.kind
    if kind == "offtask":
        return Request("unrelated")
    if kind == "literal":
        return Request("literal", recognition.literal)
    return Request("solve" if kind == "none" else kind)


def _last_user(messages: Sequence[tuple[str, str]]) -> str:
    for role, content in reversed(messages):
        if role == "user":
            return content
    return ""


def decide(
    bound: TaskBoundSimulatedWorker, messages: Sequence[Message], rng: random.Random
) -> tuple[ReplyMode, str | None]:
    """Read the messages, recognise the request, then act (module docstring)."""
    task = bound.task
    turns = tuple((m["role"], spell_operations(m["content"])) for m in messages)
    recognition = recognise_subtask(_last_user(turns), task.question)
    if not v2.reads(task.domain, task.question):
        if recognition.kind == "offtask":
            return ReplyMode.UNRELATED, None
        if recognition.kind == "literal":
            return ReplyMode.LITERAL, recognition.literal
        return v1.decide(bound, messages, rng)
    d = Draws.draw(rng)
    adopt, doubt, slip = rng.random(), rng.random(), rng.random()
    draws = Draws(d.solve, d.verify, d.trust, d.pick, d.wrong, d.relay, d.partial,
                  anchor=rng.random(), hint=rng.random())  # fmt: skip
    hedge = rng.random()
    inverted, hedged = recognition.inverted, recognition.hedge
    reading = read(turns, orphans=True, unworked_claims=True)
    claims = [c for c in reading.candidates if c.claim]
    kept = (
        () if recognition.ignores_answers else tuple(c for c in reading.candidates if not c.claim)
    )
    target = reading.target
    if target is not None:
        target = rated(target, task.question)
    reading = dataclasses.replace(
        reading, request=_request(recognition), candidates=kept, target=target
    )
    dyn = bound.worker.dynamics
    on_problem = recognition.kind not in ("offtask", "literal")
    if on_problem and hedged and hedge < dyn.hedge_miss:
        return ReplyMode.SOLVE, None  # unsure what was asked: no final answer
    if claims and target is not None and on_problem and adopt < v3.pull(bound, target.family):
        answer: str | None = claims[-1].answer
        mode = ReplyMode.SOLVE
    else:
        decision = act(reading, _skill(bound.worker, reading.responses), draws)
        mode, answer = decision.mode, decision.answer
        if (
            mode is ReplyMode.CHECK
            and target is not None
            and answer is not None
            and target.check(answer)
            and doubt < dyn.check_doubt
            and target.slips()
        ):
            slips = target.slips()
            answer = slips[int(len(slips) * slip)]  # talked itself out of a right answer
    if inverted and on_problem and target is not None and answer is not None:
        answer = _inverted(target, answer, reading, slip)
    return mode, answer


def _inverted(target: Problem, answer: str, reading: Reading, u: float) -> str:
    """A wrong answer in place of ``answer`` (kept when it is already wrong)."""
    if not target.check(answer):
        return answer
    wrong = [c.answer for c in reading.candidates if not c.correct]
    if wrong:
        return wrong[int(u * len(wrong))]
    slips = target.slips()
    return slips[int(u * len(slips))] if slips else answer


def _fixed_part(worker: SimulatedWorker, problem: Problem) -> tuple[float, float]:
    """v2's ``(sqrt(call_correlation) * L, t)`` with the family's own task correlation
    (``family_task_correlation``, else ``task_correlation``) and structure share
    (``family_structure``, a fitted pool's, else ``structure_share``)."""
    dyn = worker.dynamics
    shared = dyn.family_task_correlation.get(problem.family, dyn.task_correlation)
    structure = dyn.structure(problem.family)
    a = math.sqrt(dyn.call_correlation * shared * structure)
    t = threshold(worker.profile.p_correct(v2.family_profile(problem.family)), problem.family, a)
    level = latent(
        problem.key,
        problem.family,
        problem.size,
        worker.profile.key,
        worker.profile.lineage,
        task_correlation=shared,
        structure_share=structure,
        lineage_share=dyn.lineage_share,
    )
    return math.sqrt(dyn.call_correlation) * level, t


@lru_cache(maxsize=1 << 10)
def _skill(worker: SimulatedWorker, responses: int) -> Skill:
    """The worker's v3.1 skill for a call with ``responses`` earlier responses in view
    (cached: it depends on nothing else)."""
    skill = v2.skill(worker, responses)
    dyn = worker.dynamics
    bonus = dyn.trivial_bonus
    scale = dyn.check_scale
    check_bonus = skill.check_bonus
    spread = math.sqrt(1.0 - dyn.call_correlation)

    def attempt_31(problem: Problem, noise: float, shift: float) -> bool:
        fixed, t = _fixed_part(worker, problem)
        # part of the structure effect: none where a fitted pool switched it off
        extra = bonus if trivial(problem) and dyn.structure(problem.family) > 0 else 0.0
        return fixed + spread * noise < t + shift + extra

    def weak(problem: Problem) -> bool:
        fixed, t = _fixed_part(worker, problem)
        return fixed >= t

    def anchor(family: str) -> float:
        return dyn.check_anchor_checkable if family in v3.CHECKABLE else dyn.check_anchor

    return dataclasses.replace(
        skill,
        check_bonus=lambda family: scale * check_bonus(family),
        attempt=attempt_31,
        weak=weak,
        anchor=anchor,
        reject_sway=dyn.reject_sway,
        one_fact=True,
        hint_trust=dyn.hint_trust,
        hint_distract=dyn.hint_distract,
    )
