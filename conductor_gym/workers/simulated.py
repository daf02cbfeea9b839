r"""Simulated workers: a fast, seeded stand-in for a pool of LLMs (research and tests).

A simulated worker does not generate language; it decides, from what it was shown,
whether its answer is right, and writes a short real text ending in
``Final answer: \boxed{...}`` that the task's real grader then scores. It is
calibrated so that a one-step plan that gives a worker
the question reproduces the single-model accuracy the Conductor paper reports for that
model and benchmark in its constrained setting (arXiv 2512.04388, Table 7 for MATH500,
MMLU, RLPR, LiveCodeBench; Table 8 for AIME25, BigCodeBench, GPQA-Diamond; numbers in
:data:`PAPER_ACCURACY`). Offline procedural tasks name the benchmark whose profile they
borrow in ``task.metadata["profile"]`` (see :mod:`conductor_gym.tasks`).

Two simulator versions (:data:`VERSIONS`; the backend option ``version``; results
record it through :func:`simulator_version`):

* **v2** (default, pool ``sim-paper``) for the procedural task families: a worker
  *reads* its messages (:mod:`.sim_context`): it finds the problem instances they pose
  with each family's parser and solves them with a real solver
  (:mod:`conductor_gym.tasks.procedural.problems`), reads the shown answers (earlier
  steps' final answers and answers the conductor wrote into the subtask, both only
  *claims*), the stated results of sub-problems, and what its subtask asks
  (:mod:`.sim_instructions`); it then acts (:mod:`.sim_behaviour`) with a probability
  of success set by its calibrated skill, the problem's structural difficulty and
  lineage (:mod:`.sim_difficulty`). A wrong answer is a plausible slip of the problem
  it worked on; the task's real grader scores the reply. Hub benchmarks (MATH500 and
  the others, which no family parser reads) keep the v1 model below.
* **v1** (pool ``sim-paper-v1``): the structure-only model described next, kept so
  earlier results reproduce.

    What in a plan changes the outcome, and what does not (simulator v2; parameters of
:class:`SimDynamics`, per-family numbers in :data:`CHECK_BONUS` and
:data:`~conductor_gym.workers.sim_difficulty.SIZE_SCALE`). Each item: what in the plan;
its effect; the parameters; where the number comes from.

* **which worker a step goes to**: its skill on the problem's family. Parameters:
  ``PAPER_ACCURACY``. Source: paper Tables 7, 8 (one-step plans reproduce them).
* **whether the step's messages pose the problem**: no problem in view: it restates a shown
  answer or says the problem is missing. Parameters: family parsers. Source: rewrites (number
  words, separators, reordering) count; bags of words and fragments do not.
* **what the subtask asks**: solve, check/choose, vote, restate, unrelated reply, literal reply.
  Parameters: ``sim_instructions`` patterns. Source: our instruction model; unclear requests
  solve.
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
* **Code tasks** (grader ``code``): a correct worker writes the task's
  ``metadata["solution"]`` as a fenced Python block, which the real code grader runs in
  the sandbox. A task without a runnable solution (LiveCodeBench has none) cannot be
  answered correctly by the simulator: its simulated accuracy there is 0, not the paper's.
* **Tokens, cost, latency.** Completion tokens are log-normal around the model's mean
  for the profile (:data:`PROFILE_TOKEN_FACTOR` scales a per-model mean; the paper
  gives no per-model token counts, so these are our estimates). A draw above the call's
  ``max_tokens`` is cut there and loses its final answer, so budgets matter. Prompt
  tokens are estimated as characters / 4. Cost uses the per-million-token prices
  below (approximate public list prices, late 2025, for illustration; the open-weight
  models are priced as typical hosted endpoints). Latency is ``base + tokens /
  tokens_per_s``; it is reported, and only waited for (``asyncio.sleep``) when the
  backend option ``latency_scale`` is above 0 (default 0: no waiting).
* **Randomness.** Every call draws from ``Random(f"{seed}:{worker name}")`` and the
  latent ``s`` from string seeds of the task, so the same seed, worker and context give
  the same answer in any process; temperature is ignored.

The simulator needs the task's ground truth, which a real worker never gets: the env
binds it with :meth:`SimulatedWorker.for_task` for each episode. An unbound simulated
worker refuses to answer (a permanent :class:`WorkerError`).
"""

from __future__ import annotations

import asyncio
import math
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from statistics import NormalDist
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conductor_gym.graders import get_grader
from conductor_gym.tasks.base import Task
from conductor_gym.tasks.procedural.problems import Problem
from conductor_gym.workers.base import Completion, Message, WorkerError
from conductor_gym.workers.sim_behaviour import Skill, context_bonus
from conductor_gym.workers.sim_difficulty import latent, threshold
from conductor_gym.workers.sim_profiles import (
    PAPER_ACCURACY,
    PAPER_PROFILES,
    PROFILE_TOKEN_FACTOR,
    SimProfile,
)

if TYPE_CHECKING:
    from conductor_gym.pool.base import WorkerPool, WorkerSpec

__all__ = [
    "CHECK_BONUS",
    "DEFAULT_VERSION",
    "PAPER_ACCURACY",
    "PAPER_PROFILES",
    "PROFILE_TOKEN_FACTOR",
    "VERSIONS",
    "SimDynamics",
    "SimProfile",
    "SimulatedWorker",
    "make_simulated_worker",
    "paper_pool_specs",
    "simulator_version",
    "spec_version",
]


CHECK_BONUS: dict[str, float] = {
    "countdown": 2.0,
    "arithmetic": 0.8,
    "program_trace": 1.3,
    "program_trace_hard": 1.3,
    "modular": 1.2,
    "multiple_choice": 0.4,
    "multiple_choice_hard": 0.4,
}
"""How much easier checking a shown answer is than solving, per family (threshold
shift, simulator v2): a countdown expression is checked by evaluating it, a traced
value by re-running the loop, an option only by redoing most of the work."""

VERSIONS = ("v1", "v2")
"""Simulator versions; ``v2`` (the default) reads its instructions, ``v1`` is the
structure-only model of earlier results (preset ``sim-paper-v1``)."""
DEFAULT_VERSION = "v2"

VERSION_DYNAMICS: dict[str, dict[str, Any]] = {
    "v1": {},
    "v2": {"call_correlation": 0.97, "relay": 0.98},
}
"""Per version, the :class:`SimDynamics` defaults it overrides (options override these)."""


@dataclass(frozen=True)
class SimDynamics:
    """How context changes a simulated worker's chance of being right (module docstring)."""

    refine_gain: float = 0.5
    mislead: float = 0.3
    relay: float = 0.95
    echo_wrong: float = 0.5
    word_coverage: float = 0.6
    token_sigma: float = 0.3
    task_correlation: float = 0.5
    call_correlation: float = 0.8
    # Simulator v2 only (see the module docstring's table).
    structure_share: float = 0.6
    lineage_share: float = 0.6
    habit: float = 0.8
    trust_partial: float = 0.8
    candidate_free: int = 2
    candidate_penalty: float = 0.6
    context_free_responses: int = 4
    context_penalty: float = 0.2
    check_bonus: Mapping[str, float] = field(default_factory=lambda: dict(CHECK_BONUS))

    def __post_init__(self) -> None:
        for name in (
            "refine_gain",
            "mislead",
            "relay",
            "echo_wrong",
            "word_coverage",
            "task_correlation",
            "call_correlation",
            "structure_share",
            "lineage_share",
            "habit",
            "trust_partial",
        ):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"SimDynamics.{name} must be in [0, 1], got {value!r}")
        for name in ("token_sigma", "candidate_penalty", "context_penalty"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"SimDynamics.{name} must be >= 0")
        for name in ("candidate_free", "context_free_responses"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"SimDynamics.{name} must be an int >= 0, got {value!r}")
        bonus = dict(self.check_bonus)
        if unknown := sorted(set(bonus) - set(CHECK_BONUS)):
            raise ValueError(f"SimDynamics.check_bonus: unknown families {unknown}")
        object.__setattr__(self, "check_bonus", MappingProxyType({**CHECK_BONUS, **bonus}))


_NUMBER = re.compile(r"\d+")
_WORD = re.compile(r"[a-z]{4,}")

_NO_QUESTION = (
    "I cannot answer this: the problem itself is not in my instructions or in the "
    "earlier messages, so I do not know what to solve."
)
_LEADS = {
    "solve": "I worked through the problem step by step and checked the result.",
    "refine": "I compared the earlier answer with my own work on the problem.",
    "relay": "Going by the earlier answer shown above.",
    "check": "I checked the answers shown above against the problem.",
    "vote": "I compared the answers shown above and took the one most of them give.",
}
_UNRELATED = (
    "Here is what you asked for instead; it does not address the problem, so it has "
    "no final answer."
)
# Replies that restate rather than work: their share of a full reply's tokens.
_SHORT_MODES = {"relay": 0.25, "vote": 0.35}


def _reply(mode: str, answer: str | None, grader: str) -> str:
    """A worked reply in ``mode`` ending in ``answer`` (or saying it found none)."""
    if answer is None:
        return _LEADS[mode] + " I could not reach a confident final answer."
    if grader == "code":
        fenced = answer if answer.lstrip().startswith("```") else f"```python\n{answer}\n```"
        return f"{_LEADS[mode]}\n\n{fenced}"
    return f"{_LEADS[mode]}\n\nFinal answer: \\boxed{{{answer}}}"


_NORMAL = NormalDist()


@lru_cache(maxsize=64)
def _family_profile(family: str) -> str:
    from conductor_gym.tasks.procedural.source import FAMILIES

    return FAMILIES[family].profile


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


class SimulatedWorker:
    """A simulated model with a :class:`SimProfile`; bind a task with :meth:`for_task`."""

    def __init__(
        self,
        name: str,
        profile: SimProfile,
        *,
        dynamics: SimDynamics | None = None,
        latency_scale: float = 0.0,
        version: str = DEFAULT_VERSION,
    ) -> None:
        if latency_scale < 0:
            raise ValueError(f"simulated worker {name!r}: latency_scale must be >= 0")
        if version not in VERSIONS:
            raise ValueError(
                f"simulated worker {name!r}: unknown version {version!r}; valid: {list(VERSIONS)}"
            )
        self.name = name
        self.profile = profile
        self.dynamics = dynamics or SimDynamics(**VERSION_DYNAMICS[version])
        self.latency_scale = latency_scale
        self.version = version

    def attempt(self, problem: Problem, noise: float, bonus: float) -> bool:
        """Whether this model's attempt at ``problem`` with per-call ``noise`` succeeds
        (simulator v2; :mod:`conductor_gym.workers.sim_difficulty`)."""
        fixed, t = self._fixed_part(problem)
        return fixed + math.sqrt(1.0 - self.dynamics.call_correlation) * noise < t + bonus

    def weak(self, problem: Problem) -> bool:
        """Whether this model fails ``problem`` systematically (without call noise)."""
        fixed, t = self._fixed_part(problem)
        return fixed >= t

    def _fixed_part(self, problem: Problem) -> tuple[float, float]:
        """``(sqrt(call_correlation) * L, t)`` for ``problem``."""
        dyn = self.dynamics
        family = problem.family
        a = math.sqrt(dyn.call_correlation * dyn.task_correlation * dyn.structure_share)
        p = self.profile.p_correct(_family_profile(family))
        t = threshold(p, family, a)
        level = latent(
            problem.key,
            family,
            problem.size,
            self.profile.key,
            self.profile.lineage,
            task_correlation=dyn.task_correlation,
            structure_share=dyn.structure_share,
            lineage_share=dyn.lineage_share,
        )
        return math.sqrt(dyn.call_correlation) * level, t

    def skill(self, responses: int) -> Skill:
        """This model's :class:`~conductor_gym.workers.sim_behaviour.Skill` for a call
        with ``responses`` earlier responses in view."""
        dyn = self.dynamics
        return Skill(
            model=self.profile.key,
            attempt=self.attempt,
            weak=self.weak,
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

    def for_task(self, task: Task) -> _TaskBoundSimulatedWorker:
        """This worker, able to answer ``task`` (the env calls this once per episode)."""
        return _TaskBoundSimulatedWorker(self, task)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        raise WorkerError(
            f"simulated worker {self.name!r} has no task bound: call for_task(task) first",
            transient=False,
            worker=self.name,
        )

    def __repr__(self) -> str:
        return (
            f"SimulatedWorker({self.name!r}, profile={self.profile.key!r}, "
            f"version={self.version!r})"
        )


class _TaskBoundSimulatedWorker:
    """A :class:`SimulatedWorker` that knows the ground truth of one task."""

    def __init__(self, parent: SimulatedWorker, task: Task) -> None:
        # Kept cheap: the env binds every worker of the pool at each reset, and most are
        # never called; what a call needs is derived on first use.
        self.name = parent.name
        self._parent = parent
        self._task = task

    @cached_property
    def _attempt(self) -> tuple[float, float, float]:
        """``(skill, noise scale, threshold)``: an attempt succeeds when
        ``skill + noise scale * N(0, 1) < threshold`` (module docstring)."""
        dyn = self._parent.dynamics
        task = self._task
        latent = _task_model_latent(
            task.id, task.question, self._parent.profile.key, dyn.task_correlation
        )
        return (
            math.sqrt(dyn.call_correlation) * latent,
            math.sqrt(1.0 - dyn.call_correlation),
            _threshold(self._parent.profile.p_correct(task.profile)),
        )

    def sees_question(self, text: str) -> bool:
        """Whether ``text`` carries the task's question (verbatim or a faithful paraphrase)."""
        if self._task.question in text:
            return True
        numbers, words = _question_tokens(self._task.question)
        if not numbers <= set(_NUMBER.findall(text)):
            return False
        if not words:
            return bool(numbers)
        shared = len(words & set(_WORD.findall(text.lower())))
        return shared >= self._parent.dynamics.word_coverage * len(words)

    def _wrong_answer(self, rng: random.Random) -> str | None:
        distractors = self._task.metadata.get("distractors")
        if distractors:
            return str(rng.choice(list(distractors)))
        reference = self._task.reference.strip()
        if re.fullmatch(r"-?\d+", reference):
            return str(int(reference) + rng.choice((-2, -1, 1, 2, 10)))
        if re.fullmatch(r"[A-Z]", reference):
            n = int(self._task.metadata.get("num_choices", 4))
            others = [chr(65 + i) for i in range(n) if chr(65 + i) != reference]
            return rng.choice(others) if others else None
        return None

    def _correct_answer(self) -> str | None:
        solution = self._task.metadata.get("solution")
        if solution is not None:
            return str(solution)
        # A code task's reference is a hash of its tests, not a program: without a
        # runnable solution the simulator has nothing correct to write.
        return None if self._task.grader == "code" else self._task.reference

    def _decide_v1(self, messages: Sequence[Message], rng: random.Random) -> tuple[str, str | None]:
        """Simulator v1: question visibility and earlier answers' correctness only."""
        dyn = self._parent.dynamics
        asked = "\n".join(m["content"] for m in messages if m["role"] != "assistant")
        grader = get_grader(self._task.grader)
        earlier = [
            grader(m["content"], self._task.reference, self._task.metadata)
            for m in messages
            if m["role"] == "assistant"
        ]
        wrong_earlier = [g.extracted for g in earlier if not g.correct and g.extracted]
        sees = self.sees_question(asked)
        # The worker's own attempt; marginally P(solved) = p, correlated across calls
        # and models through the task's latent difficulty (module docstring).
        skill, noise, threshold = self._attempt
        solved = skill + noise * rng.gauss(0.0, 1.0) < threshold
        if not earlier:
            mode = "solve" if sees else "none"
            ok = solved and sees
        else:
            c = sum(g.correct for g in earlier) / len(earlier)
            if sees:
                mode = "refine"
                if solved:
                    ok = rng.random() >= dyn.mislead * (1 - c)
                else:
                    ok = rng.random() < dyn.refine_gain * c
            else:
                mode, ok = "relay", rng.random() < dyn.relay * c

        if mode == "none":
            answer: str | None = None
        elif ok:
            answer = self._correct_answer()
        elif wrong_earlier and rng.random() < dyn.echo_wrong:
            answer = rng.choice(wrong_earlier)
        else:
            answer = self._wrong_answer(rng)
        return mode, answer

    @cached_property
    def _procedural(self) -> bool:
        """Whether the task is of a procedural family whose question the v2 simulator
        parses (hub benchmarks keep the v1 model)."""
        from conductor_gym.tasks.procedural.problems import find_problems
        from conductor_gym.tasks.procedural.source import FAMILIES

        return self._task.domain in FAMILIES and bool(find_problems(self._task.question).problems)

    def _decide_v2(self, messages: Sequence[Message], rng: random.Random) -> tuple[str, str | None]:
        """Simulator v2: read the messages, then act (:mod:`.sim_behaviour`)."""
        from conductor_gym.workers.sim_behaviour import Draws, decide
        from conductor_gym.workers.sim_context import read

        draws = Draws(
            rng.gauss(0.0, 1.0),
            rng.gauss(0.0, 1.0),
            rng.random(),
            rng.random(),
            rng.random(),
            rng.random(),
            rng.random(),
        )
        reading = read(tuple((m["role"], m["content"]) for m in messages))
        decision = decide(reading, self._parent.skill(reading.responses), draws)
        return decision.mode, decision.answer

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        dyn = self._parent.dynamics
        rng = random.Random(f"{seed}:{self.name}") if seed is not None else random.Random()
        if self._parent.version == "v2" and self._procedural:
            mode, answer = self._decide_v2(messages, rng)
        else:
            mode, answer = self._decide_v1(messages, rng)
        profile = self._parent.profile
        mean = profile.tokens_mean * PROFILE_TOKEN_FACTOR.get(self._task.profile, 1.0)
        sigma = dyn.token_sigma
        tokens = max(1, round(rng.lognormvariate(math.log(mean) - sigma * sigma / 2, sigma)))
        if mode in ("none", "refuse"):
            text = _NO_QUESTION
            tokens = min(tokens, 60)
        elif mode == "literal":
            text = answer or ""
            tokens = min(tokens, 8)
        elif mode == "unrelated":
            text = _UNRELATED
            tokens = min(tokens, 120)
        elif mode in _SHORT_MODES and tokens * _SHORT_MODES[mode] <= max_tokens:
            tokens = max(1, round(tokens * _SHORT_MODES[mode]))
            text = _reply(mode, answer, self._task.grader)
        elif tokens > max_tokens:
            # Ran out of budget before writing the final answer.
            text = _LEADS[mode] + " ..."
            tokens = max_tokens
        else:
            text = _reply(mode, answer, self._task.grader)

        prompt_tokens = sum(len(m["content"]) for m in messages) // 4 + 4 * len(messages)
        cost = (
            prompt_tokens * profile.price_in_per_mtok + tokens * profile.price_out_per_mtok
        ) / 1e6
        latency = profile.latency_base_s + tokens / profile.tokens_per_s
        if self._parent.latency_scale > 0:
            await asyncio.sleep(latency * self._parent.latency_scale)
        return Completion(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=tokens,
            cost_usd=cost,
            latency_s=latency,
            model=f"simulated/{profile.key}",
        )

    def __repr__(self) -> str:
        return f"SimulatedWorker({self.name!r}, task={self._task.id!r})"


_OPTIONS = ("latency_scale", "accuracy", "dynamics", "version")


def make_simulated_worker(spec: WorkerSpec) -> SimulatedWorker:
    """Backend factory for ``backend="simulated"``.

    ``spec.model`` names a profile in :data:`PAPER_PROFILES`. ``backend_options`` may
    set ``latency_scale`` (float), ``accuracy`` (profile -> probability, overriding
    the table), ``dynamics`` (a mapping of :class:`SimDynamics` fields) and
    ``version`` (one of :data:`VERSIONS`, default :data:`DEFAULT_VERSION`). Prices in
    the spec override the profile's.
    """
    where = f"WorkerSpec(name={spec.name!r})"
    key = spec.model_name
    if key not in PAPER_PROFILES:
        raise ValueError(
            f"{where}.model: unknown simulated profile {key!r}; choose one of "
            f"{sorted(PAPER_PROFILES)}"
        )
    options = dict(spec.backend_options)
    if unknown := sorted(set(options) - set(_OPTIONS)):
        raise ValueError(
            f"{where}.backend_options: unknown option(s) {unknown} for the simulated "
            f"backend; valid: {list(_OPTIONS)}"
        )
    profile = PAPER_PROFILES[key]
    accuracy = dict(profile.accuracy)
    for name, value in dict(options.get("accuracy", {})).items():
        if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
            raise ValueError(f"{where}.backend_options.accuracy[{name!r}] must be in [0, 1]")
        accuracy[name] = float(value)
    profile = SimProfile(
        key=profile.key,
        accuracy=accuracy,
        tokens_mean=profile.tokens_mean,
        price_in_per_mtok=(
            profile.price_in_per_mtok if spec.price_in_per_mtok is None else spec.price_in_per_mtok
        ),
        price_out_per_mtok=(
            profile.price_out_per_mtok
            if spec.price_out_per_mtok is None
            else spec.price_out_per_mtok
        ),
        latency_base_s=profile.latency_base_s,
        tokens_per_s=profile.tokens_per_s,
        lineage=profile.lineage,
    )
    version = options.get("version", DEFAULT_VERSION)
    if version not in VERSIONS:
        raise ValueError(
            f"{where}.backend_options.version: unknown simulator version {version!r}; "
            f"valid: {list(VERSIONS)}"
        )
    try:
        dynamics = SimDynamics(**{**VERSION_DYNAMICS[version], **dict(options.get("dynamics", {}))})
    except TypeError as exc:
        raise ValueError(f"{where}.backend_options.dynamics: {exc}") from None
    return SimulatedWorker(
        spec.name,
        profile,
        dynamics=dynamics,
        latency_scale=float(options.get("latency_scale", 0.0)),
        version=version,
    )


def spec_version(spec: WorkerSpec) -> str | None:
    """The simulator version a spec selects (``None`` for a non-simulated worker)."""
    if spec.backend != "simulated":
        return None
    return str(spec.backend_options.get("version", DEFAULT_VERSION))


def simulator_version(pool: WorkerPool | Sequence[WorkerSpec]) -> str | None:
    """The simulator version of a pool's simulated workers, for results to record:
    ``"v1"``, ``"v2"``, ``None`` when no worker is simulated, or the versions joined
    by ``"+"`` when a pool mixes them."""
    from conductor_gym.pool.base import WorkerPool

    specs = pool.specs if isinstance(pool, WorkerPool) else pool
    versions = sorted({v for spec in specs if (v := spec_version(spec)) is not None})
    return "+".join(versions) if versions else None


def paper_pool_specs(
    latency_scale: float = 0.0, version: str = DEFAULT_VERSION
) -> list[WorkerSpec]:
    """The ``sim-paper`` pool (``sim-paper-v1`` with ``version="v1"``): the paper's seven
    workers, simulated, at 4096 max tokens and temperature 0.2 (the constrained
    setting, app. A)."""
    from conductor_gym.pool.base import WorkerSpec

    options: dict[str, Any] = {"latency_scale": latency_scale} if latency_scale else {}
    if version != DEFAULT_VERSION:
        options["version"] = version
    return [
        WorkerSpec(name=key, backend="simulated", model=key, backend_options=options)
        for key in PAPER_PROFILES
    ]
