"""The instruction model of the simulated workers: what a subtask asks for.

A simulated worker reads its own subtask (the last user message, with the problem
statements it poses blanked out, so a question's "Compute" or "Answer with the
letter" does not count as a request) and decides which of a few requests it makes.
Requests are recognised by *what is asked of which object*, one documented pattern
per request, never by the presence of one keyword anywhere; the first that matches,
in this order, wins:

==========  ==========================================================================
request     recognised by (case-insensitive; see the patterns below)
==========  ==========================================================================
literal     a reply verb (reply, respond, answer, output, print, say, write, return)
            then "word / number / string / text / letter / digit X" ending the clause:
            reply with X
unrelated   an instruction not to answer ("do not / don't / never answer, solve,
            compute ... the question"), a request for other writing (write / compose
            / tell / create a haiku, poem, story, essay, song, joke, letter, recipe,
            limerick, sonnet), translate, or "ignore" the question or what is above
vote        choosing by agreement: majority, most of them / most common / most
            frequent, agree(d) on, consensus, vote
check       checking or choosing among shown answers: check, verify, validate,
            confirm, review, critique, double-check, proofread, audit, revise, fix;
            correct it / the answer / any errors; mistake(s), error(s); choose,
            pick, select, which of the answers, compare, the best answer,
            aggregate, combine, synthesise, weigh, reconcile
restate     relaying: repeat, restate, relay, copy, echo, reformat, rephrase,
            format, report, return, state, give, output or write ... the answer /
            result / response ... above / earlier / previous / given / shown
solve       anything else: an explicit "solve / compute / ..." request, an unclear
            one (".", filler, an empty subtask) or none falls back to solving what
            the worker sees
==========  ==========================================================================

Wording that asks for nothing different ("think step by step", "please", "carefully",
repeated sentences) matches none of the patterns and so changes nothing. A check,
vote or restate request with no answer in view has nothing to act on and falls back
to solving. The model of what each request then does is in
:mod:`conductor_gym.sim.worker`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

__all__ = ["REQUESTS", "Request", "RequestKind", "classify"]

RequestKind = Literal["literal", "unrelated", "vote", "check", "restate", "solve"]
REQUESTS: tuple[RequestKind, ...] = ("literal", "unrelated", "vote", "check", "restate", "solve")
"""The requests, in the order they are tried."""

_I = re.IGNORECASE
_LITERAL = re.compile(
    r"\b(?:reply|respond|answer|output|print|say|write|return)\b[^.\n]{0,30}?"
    r"\b(?:word|number|string|text|letter|digit)\s+[\"'`]?(?P<literal>[\w-]{1,40})[\"'`]?\s*(?:[.!;,]|$)",
    _I,
)
_UNRELATED = re.compile(
    r"\b(?:do\s+not|don'?t|never|must\s+not)\s+(?:\w+\s+){0,2}?"
    r"(?:answer|solve|compute|calculate|evaluate|work\s+out|address)\b"
    r"|\b(?:write|compose|draft|tell|create|make\s+up)\b[^.\n]{0,30}?"
    r"\b(?:haiku|poem|story|essay|song|joke|letter|recipe|limerick|sonnet)s?\b"
    r"|\btranslate\b"
    r"|\bignore\b[^.\n]{0,30}?\b(?:above|previous|earlier|everything|all|instructions?|question|problem)\b",
    _I,
)
_VOTE = re.compile(
    r"\bmajority\b|\bmost\s+(?:of\s+them|of\s+the\s+\w+|common|frequent)\b|\bagree[ds]?\b"
    r"|\bconsensus\b|\bvote\b",
    _I,
)
_CHECK = re.compile(
    r"\b(?:check|verify|validate|confirm|review|critique|double[- ]check|proofread|audit"
    r"|revise|fix)\b"
    r"|\bcorrect\s+(?:it|this|that|them|any|errors?|mistakes?"
    r"|the\s+(?:answers?|solutions?|work|responses?|mistakes?|errors?))\b"
    r"|\b(?:mistakes?|errors?)\b"
    r"|\b(?:choose|pick|select|compare|aggregate|combine|synthesi[sz]e|weigh|reconcile)\b"
    r"|\bwhich\s+(?:of\s+the\s+)?(?:answers?|responses?|solutions?|one)\b|\bbest\s+answer\b",
    _I,
)
_RESTATE = re.compile(
    r"\b(?:repeat|restate|relay|copy|echo|reformat|rephrase|format|report|return|state|give"
    r"|output|write)\b[^.\n]{0,40}?\b(?:answer|result|response)s?\b[^.\n]{0,30}?"
    r"\b(?:above|earlier|previous|given|shown|before)\b",
    _I,
)


@dataclass(frozen=True)
class Request:
    """What a subtask asks: ``kind``, and for ``literal`` the text to reply with."""

    kind: RequestKind
    literal: str | None = None


@lru_cache(maxsize=1 << 14)
def classify(instruction: str) -> Request:
    """The request ``instruction`` makes (module docstring)."""
    literal = _LITERAL.search(instruction)
    if literal is not None:
        return Request("literal", literal.group("literal"))
    for kind, pattern in (
        ("unrelated", _UNRELATED),
        ("vote", _VOTE),
        ("check", _CHECK),
        ("restate", _RESTATE),
    ):
        if pattern.search(instruction):
            return Request(kind)  # type: ignore[arg-type]
    return Request("solve")
