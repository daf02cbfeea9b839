"""What a simulated worker reads in its messages: the problem, the answers, the request.

:func:`read` walks the chat in order (system messages are ignored):

* a **user** turn poses the problem instances its text holds
  (:func:`~conductor_gym.sim.perception.find_problems`); the last one posed
  so far is the *current* problem. Results it states (``36 + 50 = 86``) are facts, and
  a final answer written into it ("the answer is 42", ``\\boxed{42}``) is a *claim*
  about the current problem: a candidate to check, never the truth;
* an **assistant** turn's final answer is an answer to the problem that was current
  before it (refusals, replies without a final answer and final "answers" that are
  not a number, an option letter or an expression give none);
* the **target** is the current problem after the last turn: the last one the worker's
  own subtask poses, else the most recent one posed earlier;
* answers (and claims) to the target are its *candidates*; answers to one of its
  sub-problems (a sub-expression, a partial countdown target, an option's value) are
  *facts* the worker may build on;
* the **request** is what the last user turn asks once its problem statements are
  blanked out (:func:`~conductor_gym.sim.instructions.classify`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from types import MappingProxyType

from conductor_gym.graders.extract import final_answer
from conductor_gym.sim.instructions import Request, classify
from conductor_gym.sim.perception import Fact, Problem, find_problems
from conductor_gym.sim.replies import RELAY_LEAD

__all__ = ["Candidate", "Reading", "read"]


@dataclass(frozen=True)
class Candidate:
    """A final answer to the target in view: ``claim`` when the conductor wrote it."""

    answer: str
    correct: bool
    claim: bool = False


@dataclass(frozen=True)
class Reading:
    """Everything a worker acts on (module docstring).

    Attributes:
        request: What the subtask asks.
        target: The problem to answer, or ``None`` when no problem is in view.
        candidates: Answers to the target in view, in order of appearance.
        shown: Every final answer of an earlier assistant turn, in order.
        facts: Stated results of the target's sub-problems, by sub-problem key.
        tokens: Estimated prompt tokens (characters / 4).
        responses: Earlier assistant turns in view.
    """

    request: Request
    target: Problem | None
    candidates: tuple[Candidate, ...]
    shown: tuple[str, ...]
    facts: Mapping[str, Fact]
    tokens: int
    responses: int
    hints: frozenset[str] = frozenset()
    """Keys of the facts that were stated in user turns (written by the conductor, not
    worked out by a worker)."""


_ANSWER_SHAPED = re.compile(r"\s*\(?[A-F]\)?\.?\s*|[-+*/() \t]*\d[\d+\-*/() \t]*")


def _answer_shaped(answer: str) -> bool:
    """A number, an option letter or an arithmetic expression: something that can be
    an answer to a procedural problem (prose after "answer:" is not)."""
    return _ANSWER_SHAPED.fullmatch(answer) is not None


def _is_part(part: Problem, whole: Problem, sub_keys: frozenset[str]) -> bool:
    if part.key in sub_keys:
        return True
    return part.family == whole.family == "countdown" and part.key != whole.key


def _unworked(content: str, answer: str) -> bool:
    """Whether a reply only states ``answer``: the text around it is a relay lead
    (:data:`~conductor_gym.sim.replies.RELAY_LEAD`) or fewer than four words."""
    if content.lstrip().startswith(RELAY_LEAD):
        return True
    rest = content.replace(answer, " ")
    rest = re.sub(
        r"\\(?:boxed|fbox)\s*\{\s*\}|final\s+answer|answer|[^\w\s]", " ", rest, flags=re.I
    )
    return len(rest.split()) < 4


@lru_cache(maxsize=1 << 14)
def read(
    turns: tuple[tuple[str, str], ...], *, orphans: bool = False, unworked_claims: bool = False
) -> Reading:
    """Read a chat given as ``((role, content), ...)`` (module docstring).

    Simulator v3.1's reading (both ``False`` before it): ``orphans`` attributes an answer
    given while no problem was in view (the question was where the reader cannot see it,
    e.g. only in the first worker's message) to the target; ``unworked_claims`` reads an
    earlier answer that only states itself (a literal or relayed reply, no work shown) as
    a claim, like an answer the conductor wrote into a subtask."""
    current: Problem | None = None
    answers: list[tuple[Problem | None, str, bool]] = []  # (problem, answer, claim)
    stated: dict[str, Fact] = {}
    hinted: set[str] = set()
    request = Request("solve")
    chars = 0
    responses = 0
    for role, content in turns:
        chars += len(content)
        if role == "system":
            continue
        if role == "assistant":
            responses += 1
            found_answer = final_answer(content)
            if found_answer is None and unworked_claims and _answer_shaped(content.strip()):
                found_answer = (content.strip(), "bare")  # a bare literal reply
            if found_answer is not None and _answer_shaped(found_answer[0]):
                unworked = unworked_claims and _unworked(content, found_answer[0])
                answers.append((current, found_answer[0], unworked))
            continue
        found = find_problems(content)
        if found.problems:
            current = found.problems[-1]
        for key, value, right in found.stated:
            stated[key] = Fact(key, value, right)
            hinted.add(key)
        claimed = final_answer(found.rest)
        if claimed is not None and _answer_shaped(claimed[0]):
            answers.append((current, claimed[0], True))
        request = classify(found.rest)
    target = current
    candidates: list[Candidate] = []
    facts: dict[str, Fact] = {}
    if target is not None:
        sub_keys = target.sub_keys()
        facts.update((k, f) for k, f in stated.items() if k in sub_keys)
        for problem, answer, claim in answers:
            if problem is None:
                if not orphans:
                    continue
                problem = target
            if problem.key == target.key:
                candidates.append(Candidate(answer, target.check(answer), claim))
            elif _is_part(problem, target, sub_keys):
                facts[problem.key] = Fact(problem.key, answer, problem.check(answer))
                if claim:
                    hinted.add(problem.key)
    shown = tuple(answer for _, answer, claim in answers if not claim)
    return Reading(
        request=request,
        target=target,
        candidates=tuple(candidates),
        shown=shown,
        facts=MappingProxyType(facts),
        tokens=chars // 4,
        responses=responses,
        hints=frozenset(k for k in hinted if k in facts),
    )
