r"""Simulator v2 (pool ``sim-paper-v2``; the default before :mod:`.v3`) for the procedural
task families: a worker *reads* its messages (:mod:`.context`): it finds the problem
instances they pose with each family's parser and solves them with a real solver
(:mod:`.perception`), reads
the shown answers (earlier steps' final answers and answers the conductor wrote into the
subtask, both only *claims*), the stated results of sub-problems, and what its subtask
asks (:mod:`.instructions`); it then acts (:mod:`.behaviour`) with a probability of
success set by its calibrated skill, the problem's structural difficulty and lineage
(:mod:`.difficulty`). A wrong answer is a plausible slip of the problem it worked on;
the task's real grader scores the reply. Hub benchmarks (MATH500 and the others, which
no family parser reads) keep the v1 model (:mod:`.v1`).

What in a plan changes the outcome, and what does not (simulator v2; parameters of
:class:`SimDynamics`, per-family numbers in :data:`CHECK_BONUS` and
:data:`~conductor_gym.sim.difficulty.SIZE_SCALE`). Each item: what in the plan;
its effect; the parameters; where the number comes from.

* **which worker a step goes to**: its skill on the problem's family. Parameters:
  ``PAPER_ACCURACY``. Source: paper Tables 7, 8 (one-step plans reproduce them).
* **whether the step's messages pose the problem**: no problem in view: it restates a shown
  answer or says the problem is missing. Parameters: family parsers. Source: rewrites (number
  words, separators, reordering) count; bags of words and fragments do not.
* **what the subtask asks**: solve, check/choose, vote, restate, unrelated reply, literal reply.
  Parameters: the patterns of :mod:`.instructions`. Source: our instruction model; unclear
  requests solve.
* **the problem's structure (operators, nesting, numbers needed, program steps, modulus)**:
  harder for every model. Parameters: ``structure_share`` 0.6, ``SIZE_SCALE``. Source: sizes
  measured on the generated tasks; share our choice.
* **shown answers to the problem (earlier steps, or claims written into the subtask)**: checked
  when asked to check: kept if recognised right, rejected if recognised wrong. Parameters:
  ``check_bonus`` (countdown 2.0, traces 1.3, modular 1.2, arithmetic 0.8, choice 0.4). Source:
  checkability of each form; set with the headroom and 5x self-reflection targets.
* **the same, when asked to solve**: hints: a right attempt misled, a wrong one rescued.
  Parameters: ``mislead`` 0.3, ``refine_gain`` 0.5, ``echo_wrong`` 0.5. Source: v1 values.
* **distinct candidates beyond 2**: checking harder. Parameters: ``candidate_free`` 2,
  ``candidate_penalty`` 0.6. Source: set so the 8-call MoA stays below the best single worker
  (paper -2.0).
* **earlier responses in view beyond 4**: every attempt harder. Parameters:
  ``context_free_responses`` 4, ``context_penalty`` 0.2. Source: same MoA target.
* **a model checking what it gets wrong systematically**: its own habitual slip looks right to
  it. Parameters: ``habit`` 0.8. Source: set so 5x self-reflection gains -1..+3 (paper +0.8).
* **correct / wrong partial results (sub-expression, partial countdown target, an option's
  value)**: the problem shrinks / the error carries into the answer. Parameters:
  ``trust_partial`` 0.8. Source: our choice.
* **the same model called twice**: nearly the same outcome. Parameters: ``call_correlation``
  0.97. Source: set with the 5x consensus (within 2 points) and reflection targets.
* **two models**: complementary blind spots; the two Qwen3-32B modes share more. Parameters:
  ``task_correlation`` 0.5, ``lineage_share`` 0.6. Source: v1 value; our estimate.
* **a restate or vote request**: the shown answer, almost always. Parameters: ``relay`` 0.98.
  Source: our choice.
* **a small ``max_tokens``**: the reply is cut before its final answer. Parameters: per-model
  token means. Source: our estimates.
* **filler, politeness, "think step by step", repeated sentences, longer subtasks, temperature,
  worker or task names**: nothing. Source: by construction; tested with exact paired outcomes.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from conductor_gym.sim import v1
from conductor_gym.sim.behaviour import Draws, Skill, context_bonus
from conductor_gym.sim.behaviour import decide as act
from conductor_gym.sim.context import read
from conductor_gym.sim.difficulty import latent, threshold
from conductor_gym.sim.perception import Problem, find_problems
from conductor_gym.sim.replies import ReplyMode
from conductor_gym.workers.base import Message

if TYPE_CHECKING:
    from conductor_gym.sim.worker import SimulatedWorker, TaskBoundSimulatedWorker

__all__ = ["decide", "family_profile", "reads", "skill"]


@lru_cache(maxsize=64)
def family_profile(family: str) -> str:
    """The benchmark profile a procedural family borrows (its accuracies)."""
    from conductor_gym.tasks.procedural.source import FAMILIES

    return FAMILIES[family].profile


@lru_cache(maxsize=1 << 12)
def reads(domain: str, question: str) -> bool:
    """Whether v2 reads a task of ``domain`` asking ``question``: a procedural family
    whose parser finds the problem (other tasks keep the v1 model)."""
    from conductor_gym.tasks.procedural.source import FAMILIES

    return domain in FAMILIES and bool(find_problems(question).problems)


def _fixed_part(worker: SimulatedWorker, problem: Problem) -> tuple[float, float]:
    """``(sqrt(call_correlation) * L, t)`` for ``problem``."""
    dyn = worker.dynamics
    family = problem.family
    a = math.sqrt(dyn.call_correlation * dyn.task_correlation * dyn.structure(family))
    p = worker.profile.p_correct(family_profile(family))
    t = threshold(p, family, a)
    level = latent(
        problem.key,
        family,
        problem.size,
        worker.profile.key,
        worker.profile.lineage,
        task_correlation=dyn.task_correlation,
        structure_share=dyn.structure(family),
        lineage_share=dyn.lineage_share,
    )
    return math.sqrt(dyn.call_correlation) * level, t


def skill(worker: SimulatedWorker, responses: int) -> Skill:
    """The model's :class:`~conductor_gym.sim.behaviour.Skill` for a call with
    ``responses`` earlier responses in view (:mod:`conductor_gym.sim.difficulty`)."""
    dyn = worker.dynamics

    def attempt(problem: Problem, noise: float, bonus: float) -> bool:
        fixed, t = _fixed_part(worker, problem)
        return fixed + math.sqrt(1.0 - dyn.call_correlation) * noise < t + bonus

    def weak(problem: Problem) -> bool:
        fixed, t = _fixed_part(worker, problem)
        return fixed >= t

    return Skill(
        model=worker.profile.key,
        attempt=attempt,
        weak=weak,
        check_bonus=dyn.check_bonus.__getitem__,
        relay=dyn.relay,
        habit=dyn.habit,
        trust_partial=dyn.trust_partial,
        mislead=dyn.mislead,
        refine_gain=dyn.refine_gain,
        echo_wrong=dyn.echo_wrong,
        candidate_free=dyn.candidate_free,
        candidate_penalty=dyn.candidate_penalty,
        context_bonus=context_bonus(responses, dyn.context_free_responses, dyn.context_penalty),
    )


def decide(
    bound: TaskBoundSimulatedWorker, messages: Sequence[Message], rng: random.Random
) -> tuple[ReplyMode, str | None]:
    """Read the messages, then act; a task v2 does not read is decided by v1."""
    if not reads(bound.task.domain, bound.task.question):
        return v1.decide(bound, messages, rng)
    draws = Draws.draw(rng)
    reading = read(tuple((m["role"], m["content"]) for m in messages))
    decision = act(reading, skill(bound.worker, reading.responses), draws)
    return decision.mode, decision.answer
