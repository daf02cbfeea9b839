r"""Simulator v1 (pool ``sim-paper-v1``, and hub benchmarks under v2): a worker sees
the question or not, and counts how many earlier answers are right.

The v1 model of a call (parameters in :class:`SimDynamics`), with ``p`` the worker's
accuracy on the task's profile:

* **Its own attempt.** Each call makes an attempt that succeeds with probability ``p``,
  and attempts are correlated the way real models' are: a question that is hard for
  one model tends to be hard for the others, and a model that fails a question at
  temperature 0.2 mostly fails it again. Formally the attempt succeeds when
  ``sqrt(call_correlation) * s + sqrt(1 - call_correlation) * e < Phi^-1(p)``, where
  ``e`` is fresh standard normal noise per call and ``s`` is a standard normal fixed per
  (task, model): ``sqrt(task_correlation) * d + sqrt(1 - task_correlation) * m`` with
  ``d`` the task's difficulty, shared by all models, and ``m`` the model's own part.
  Two calls of one model on a task correlate with ``call_correlation`` (default 0.8),
  two models with ``call_correlation * task_correlation`` (0.4), so resampling one model
  gains little while models with different blind spots complement each other (the
  paper's 5x self-reflection and 8-call MoA rows gain little over single models).
* **Seeing the question.** The worker sees the question if its non-assistant messages
  contain it verbatim, or contain every number of the question and at least
  ``word_coverage`` of its distinct words of four or more letters (a faithful
  paraphrase). A worker that does not see the question cannot solve it.
* **Earlier answers.** Each assistant turn in the context is an earlier answer; the
  task's grader says whether it is right. Let ``c`` be the fraction that are right.

  ================================  =====================================================
  sees question, no earlier answer  correct iff its attempt succeeds: P = p
  sees question and answers         a successful attempt is kept unless misled
                                    (probability ``mislead (1 - c)``); a failed one is
                                    rescued with probability ``refine_gain c``: on
                                    average P = p + refine_gain (1 - p) c - mislead p (1 - c)
  only earlier answers              P = relay c (it can restate, not solve)
  neither                           says it lacks the problem; no final answer (wrong)
  ================================  =====================================================

  A wrong worker that saw wrong earlier answers repeats one of them with probability
  ``echo_wrong`` (errors propagate); otherwise it gives a distractor.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from functools import lru_cache
from statistics import NormalDist
from typing import TYPE_CHECKING

from conductor_gym.graders import get_grader
from conductor_gym.sim.replies import ReplyMode
from conductor_gym.workers.base import Message

if TYPE_CHECKING:
    from conductor_gym.sim.worker import TaskBoundSimulatedWorker

__all__ = ["decide", "sees_question"]

_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[a-z]{4,}")
_NORMAL = NormalDist()


def _threshold(p: float) -> float:
    """``z`` with ``P(N(0, 1) < z) = p`` (infinite at 0 and 1)."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    return _NORMAL.inv_cdf(p)


@lru_cache(maxsize=1 << 16)
def _task_model_latent(task_id: str, question: str, model: str, task_correlation: float) -> float:
    """A standard normal fixed for (task, model): how hard this task is for this model.

    It mixes a difficulty shared by every model (weight ``task_correlation``) with a
    part of the model's own; string seeds make it the same in every process.
    """
    shared = random.Random(f"difficulty:{task_id}:{question}").gauss(0.0, 1.0)
    own = random.Random(f"difficulty:{task_id}:{question}:{model}").gauss(0.0, 1.0)
    return math.sqrt(task_correlation) * shared + math.sqrt(1.0 - task_correlation) * own


@lru_cache(maxsize=1 << 12)
def _question_tokens(question: str) -> tuple[frozenset[str], frozenset[str]]:
    """The numbers and the words of four or more letters in ``question``."""
    return frozenset(_NUMBER.findall(question)), frozenset(_WORD.findall(question.lower()))


def sees_question(question: str, text: str, word_coverage: float) -> bool:
    """Whether ``text`` carries the task's question (verbatim or a faithful paraphrase)."""
    if question in text:
        return True
    numbers, words = _question_tokens(question)
    if not numbers <= set(_NUMBER.findall(text)):
        return False
    if not words:
        return bool(numbers)
    shared = len(words & set(_WORD.findall(text.lower())))
    return shared >= word_coverage * len(words)


def _attempt(bound: TaskBoundSimulatedWorker) -> tuple[float, float, float]:
    """``(skill, noise scale, threshold)``: an attempt succeeds when
    ``skill + noise scale * N(0, 1) < threshold`` (module docstring)."""
    dyn = bound.worker.dynamics
    task = bound.task
    latent = _task_model_latent(
        task.id, task.question, bound.worker.profile.key, dyn.task_correlation
    )
    return (
        math.sqrt(dyn.call_correlation) * latent,
        math.sqrt(1.0 - dyn.call_correlation),
        _threshold(bound.worker.profile.p_correct(task.profile)),
    )


def decide(
    bound: TaskBoundSimulatedWorker, messages: Sequence[Message], rng: random.Random
) -> tuple[ReplyMode, str | None]:
    """Simulator v1: question visibility and earlier answers' correctness only."""
    dyn = bound.worker.dynamics
    asked = "\n".join(m["content"] for m in messages if m["role"] != "assistant")
    grader = get_grader(bound.task.grader)
    earlier = [
        grader(m["content"], bound.task.reference, bound.task.metadata)
        for m in messages
        if m["role"] == "assistant"
    ]
    wrong_earlier = [g.extracted for g in earlier if not g.correct and g.extracted]
    sees = bound.sees_question(asked)
    # The worker's own attempt; marginally P(solved) = p, correlated across calls
    # and models through the task's latent difficulty (module docstring).
    skill, noise, threshold = _attempt(bound)
    solved = skill + noise * rng.gauss(0.0, 1.0) < threshold
    if not earlier:
        mode = ReplyMode.SOLVE if sees else ReplyMode.NONE
        ok = solved and sees
    else:
        c = sum(g.correct for g in earlier) / len(earlier)
        if sees:
            mode = ReplyMode.REFINE
            if solved:
                ok = rng.random() >= dyn.mislead * (1 - c)
            else:
                ok = rng.random() < dyn.refine_gain * c
        else:
            mode, ok = ReplyMode.RELAY, rng.random() < dyn.relay * c

    if mode is ReplyMode.NONE:
        answer: str | None = None
    elif ok:
        answer = bound.correct_answer()
    elif wrong_earlier and rng.random() < dyn.echo_wrong:
        answer = rng.choice(wrong_earlier)
    else:
        answer = bound.wrong_answer(rng)
    return mode, answer
