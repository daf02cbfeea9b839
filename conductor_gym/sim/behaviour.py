"""What a simulated worker (simulator ``v2``) answers, given what it read.

:func:`decide` maps a :class:`~conductor_gym.sim.context.Reading`, the model's
skill and one call's random draws to a reply: a mode (what it did) and a final answer
(``None``: the reply carries none). The rules, with the :class:`Skill` parameters:

* **literal / unrelated** requests are done as asked: the literal text, or an
  unrelated reply with no final answer;
* **no problem in view**: restate the last shown answer (probability ``relay``), or
  say the problem is missing;
* **restate** with candidates: the most recent one (probability ``relay``);
* **vote** with candidates: the most frequent one (probability ``relay``); a tie is
  checked like a check request among the tied answers;
* **check** with candidates: the worker makes its own attempt and a verification
  attempt at the target with the family's ``check_bonus``, less ``candidate_penalty``
  per distinct candidate beyond ``candidate_free``. When verification succeeds it keeps
  a correct candidate if one is shown; otherwise it rejects them and gives its own
  answer (a slip that repeats no rejected answer when its attempt failed), except that
  a model failing the problem systematically (:attr:`Skill.weak`) takes a candidate
  equal to its own habitual slip for right. When verification fails it cannot tell and
  gives its own answer;
* **solve** (and any request with nothing to act on): an attempt at the target. Facts
  about its sub-problems are used with probability ``trust_partial``: the target then
  shrinks to what is left (easier), and a wrong fact carries into the answer. Visible
  candidates act as hints: a right attempt is misled with probability
  ``mislead * (share wrong)``, a wrong one rescued with ``refine_gain * (share right)``.

A failed attempt answers a plausible slip of the problem (common slips more often;
with probability ``habit`` the model's own habitual one) or, when solving with
candidates in view, repeats a wrong one with probability ``echo_wrong``. Every attempt
in a call with more than ``context_free_responses`` earlier responses in view loses
``context_penalty`` of threshold per extra response.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from conductor_gym.sim.context import Candidate, Reading
from conductor_gym.sim.perception import Problem
from conductor_gym.sim.replies import ReplyMode

__all__ = ["Decision", "Draws", "Skill", "decide"]


@dataclass(frozen=True)
class Draws:
    """One call's random numbers, drawn in a fixed order whatever the call does."""

    solve: float
    verify: float
    trust: float
    pick: float
    wrong: float
    relay: float
    partial: float
    anchor: float = 1.0
    """Simulator v3.1 only (drawn by it after the others; 1.0: never anchored)."""
    hint: float = 0.0
    """Simulator v3.1 only: which stated fact the worker takes up."""

    @classmethod
    def draw(cls, rng: random.Random) -> Draws:
        """One call's draws from ``rng``, in the fixed order."""
        return cls(
            rng.gauss(0.0, 1.0),
            rng.gauss(0.0, 1.0),
            rng.random(),
            rng.random(),
            rng.random(),
            rng.random(),
            rng.random(),
        )


@dataclass(frozen=True)
class Skill:
    """A model's parameters for :func:`decide` (module docstring)."""

    model: str
    attempt: Callable[[Problem, float, float], bool]
    """``attempt(problem, noise, bonus)``: whether an attempt with this noise succeeds."""
    weak: Callable[[Problem], bool]
    """Whether the model fails ``problem`` systematically (its fixed part alone, without
    per-call noise, is past its threshold): then its own habitual slip looks right."""
    check_bonus: Callable[[str], float]
    relay: float
    habit: float
    trust_partial: float
    mislead: float
    refine_gain: float
    echo_wrong: float
    candidate_free: int
    candidate_penalty: float
    context_bonus: float
    """The long-context threshold shift of this call (0 or negative)."""
    anchor: Callable[[str], float] = lambda _family: 0.0
    """Per family, the probability that a checker who cannot tell right from wrong takes
    the shown answer instead of its own (simulator v3.1; 0 before)."""
    reject_sway: float = 0.0
    """Simulator v3.1: a checker that verified the shown answers wrong still takes the one
    most of them give with probability ``reject_sway * anchor(family)`` (a shown wrong
    answer sways even a capable checker, less often than one who cannot tell)."""
    one_fact: bool = False
    """Simulator v3.1: the worker takes up one stated fact (drawn), not every one that
    applies; one that does not apply distracts (``hint_distract``)."""
    hint_trust: float = 1.0
    """Simulator v3.1: ``trust_partial`` is multiplied by this for a fact the conductor
    stated (rather than a worker worked out)."""
    hint_distract: float = 0.0
    """Simulator v3.1: threshold lost when the fact taken up does not apply."""


@dataclass(frozen=True)
class Decision:
    """``mode``: literal, unrelated, refuse, relay, vote, check or solve; ``answer``: the
    final answer written, if any; ``problem``: the target it worked on."""

    mode: ReplyMode
    answer: str | None
    problem: Problem | None = None


def _key(answer: str) -> str:
    return answer.replace(" ", "").lower()


@lru_cache(maxsize=1 << 16)
def _habit(key: str, model: str) -> float:
    """A number fixed per (problem, model): which slip this model tends to make."""
    return random.Random(f"slip:{key}:{model}").random()


def _slip(problem: Problem, skill: Skill, draws: Draws, avoid: Sequence[str] = ()) -> str | None:
    """The wrong answer of a failed attempt: usually the model's own habitual slip on
    this problem (probability ``habit``), else one drawn for this call; common slips
    are likelier either way. Answers in ``avoid`` (rejected ones) are not repeated."""
    avoided = {_key(a) for a in avoid}
    slips = [s for s in problem.slips() if _key(s) not in avoided] or list(problem.slips())
    if not slips:
        return None
    u = _habit(problem.key, skill.model) if draws.pick < skill.habit else draws.wrong
    return slips[int(len(slips) * u * u)]


def _most_frequent(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The candidates given most often (one per distinct answer), in order of appearance."""
    counts = Counter(_key(c.answer) for c in candidates)
    top = max(counts.values())
    tied: dict[str, Candidate] = {}
    for c in candidates:
        if counts[_key(c.answer)] == top:
            tied.setdefault(_key(c.answer), c)
    return list(tied.values())


def _own(
    problem: Problem, answer: str | None, skill: Skill, draws: Draws, bonus: float | None = None
) -> tuple[bool, str | None]:
    """The worker's own attempt: ``(solved, its answer)``; ``bonus`` defaults to the
    call's context shift."""
    shift = skill.context_bonus if bonus is None else bonus
    if answer is not None and skill.attempt(problem, draws.solve, shift):
        return True, answer
    return False, _slip(problem, skill, draws)


def _solve(reading: Reading, target: Problem, skill: Skill, draws: Draws) -> str | None:
    problem, answer = target, target.answer
    bonus = skill.context_bonus
    if reading.facts and skill.one_fact:
        keys = sorted(reading.facts)
        key = keys[min(int(draws.hint * len(keys)), len(keys) - 1)]
        trust = skill.trust_partial * (skill.hint_trust if key in reading.hints else 1.0)
        if draws.partial < trust:
            reduced = target.reduce({key: reading.facts[key]})
            if reduced is not None:
                problem, answer = reduced[0], reduced[0].answer
            else:
                bonus -= skill.hint_distract
    elif reading.facts and draws.partial < skill.trust_partial:
        reduced = target.reduce(reading.facts)
        if reduced is not None:
            problem, answer = reduced[0], reduced[0].answer
    solved, own = _own(problem, answer, skill, draws, bonus)
    candidates = reading.candidates
    if candidates:
        right = [c.answer for c in candidates if c.correct]
        wrong = [c.answer for c in candidates if not c.correct]
        share = len(right) / len(candidates)
        if solved and wrong and draws.trust < skill.mislead * (1 - share):
            return wrong[int(draws.pick * len(wrong))]
        if not solved and right and draws.trust < skill.refine_gain * share:
            return right[int(draws.pick * len(right))]
        if not solved and wrong and draws.relay < skill.echo_wrong:
            return wrong[int(draws.pick * len(wrong))]
    return own


def _check(
    target: Problem, candidates: Sequence[Candidate], skill: Skill, draws: Draws
) -> str | None:
    """Check shown candidates against the worker's own work (module docstring)."""
    distinct = {_key(c.answer): c for c in candidates}
    bonus = (
        skill.check_bonus(target.family)
        - skill.candidate_penalty * max(0, len(distinct) - skill.candidate_free)
        + skill.context_bonus
    )
    solved, own = _own(target, target.answer, skill, draws)
    if skill.attempt(target, draws.verify, bonus):
        right = [c for c in candidates if c.correct]
        if right:
            return max(
                right, key=lambda c: sum(_key(x.answer) == _key(c.answer) for x in right)
            ).answer
        habitual = _habitual(target, skill) if skill.weak(target) else None
        blind = [c for c in candidates if _key(c.answer) == habitual]
        if blind:
            return blind[0].answer  # its own systematic slip looks right to it
        if draws.anchor < skill.reject_sway * skill.anchor(target.family):
            return _most_frequent(list(reversed(candidates)))[0].answer  # swayed anyway
        if solved:
            return own
        return _slip(target, skill, draws, avoid=[c.answer for c in candidates])
    # It cannot tell which shown answer is right: it gives its own, or (anchoring,
    # simulator v3.1) takes the shown answer most of them give (the latest on a tie).
    if draws.anchor < skill.anchor(target.family):
        return _most_frequent(list(reversed(candidates)))[0].answer
    return own


def _habitual(problem: Problem, skill: Skill) -> str | None:
    slips = problem.slips()
    if not slips:
        return None
    u = _habit(problem.key, skill.model)
    return _key(slips[int(len(slips) * u * u)])


def decide(reading: Reading, skill: Skill, draws: Draws) -> Decision:
    """The reply to ``reading`` (module docstring)."""
    request = reading.request
    if request.kind == "literal":
        return Decision(ReplyMode.LITERAL, request.literal)
    if request.kind == "unrelated":
        return Decision(ReplyMode.UNRELATED, None)
    target = reading.target
    if target is None:
        if reading.shown:
            return Decision(
                ReplyMode.RELAY, reading.shown[-1] if draws.relay < skill.relay else None
            )
        return Decision(ReplyMode.REFUSE, None)
    candidates = reading.candidates
    if candidates and request.kind == "restate":
        answer = candidates[-1].answer if draws.relay < skill.relay else None
        return Decision(ReplyMode.RELAY, answer, target)
    if candidates and request.kind == "vote":
        tied = _most_frequent(candidates)
        if len(tied) == 1:
            return Decision(
                ReplyMode.VOTE, tied[0].answer if draws.relay < skill.relay else None, target
            )
        return Decision(ReplyMode.VOTE, _check(target, tied, skill, draws), target)
    if candidates and request.kind == "check":
        return Decision(ReplyMode.CHECK, _check(target, candidates, skill, draws), target)
    return Decision(ReplyMode.SOLVE, _solve(reading, target, skill, draws), target)


def context_bonus(responses: int, free_responses: int, penalty: float) -> float:
    """The (non-positive) threshold shift of a call that has ``responses`` earlier
    responses in view: ``-penalty`` per response beyond ``free_responses``."""
    return -penalty * max(0, responses - free_responses)
