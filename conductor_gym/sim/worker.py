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

Versions side by side (:mod:`.versions`, a lazy registry with capability flags; the
backend option ``version``; results record it through :func:`simulator_version`):
:mod:`.v3_1` (the default, pool ``sim-paper``) is v3 closing the tricks an outside
optimizer found; :mod:`.v3` (pool ``sim-paper-v3``) reads its messages failing closed;
:mod:`.v2` (pool ``sim-paper-v2``) reads them as the results before v3 did; :mod:`.v1`
(pool ``sim-paper-v1``) is the structure-only model of the first results, and the model
v2 and later keep for hub benchmarks. Each
version's module says what in a plan changes the outcome, with every parameter
(:class:`~conductor_gym.sim.params.SimDynamics`) and its source. This module holds what
they share: the worker, its tokens, cost and latency, and the backend factory (the reply
modes and texts are in :mod:`.replies`). Anything a version raises while deciding or
writing a reply, other than the library's own errors, is a :class:`SimulatorFault` (a
simulator bug), never a worker infrastructure failure.

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
  backend option ``latency_scale`` is above 0 (default 0: no waiting). A pool fitted to
  recorded episodes (``conductor-gym sim fit``) sets them per worker with the backend
  options ``tokens`` (profile -> mean completion tokens, replacing ``tokens_mean *
  PROFILE_TOKEN_FACTOR`` for that profile), ``latency_base_s`` and ``tokens_per_s``;
  without them (every preset) nothing changes. The spread is ``dynamics.token_sigma``.
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
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from conductor_gym.errors import ConductorGymError, SimulatorFault
from conductor_gym.sim import v1
from conductor_gym.sim.params import DEFAULT_VERSION, VERSION_DYNAMICS, VERSIONS, SimDynamics
from conductor_gym.sim.profiles import PAPER_PROFILES, PROFILE_TOKEN_FACTOR, SimProfile
from conductor_gym.sim.replies import SHORT_MODES, ReplyMode, reply_text
from conductor_gym.sim.versions import SIM_VERSIONS
from conductor_gym.tasks.base import Task
from conductor_gym.workers.base import Completion, Message, Worker, WorkerError

if TYPE_CHECKING:
    from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "DECIDE",
    "SimulatedWorker",
    "TaskBoundSimulatedWorker",
    "make_simulated_worker",
    "paper_pool_specs",
    "simulator_version",
    "spec_version",
]


DECIDE = SIM_VERSIONS
"""Each version's decision for a call (:data:`~conductor_gym.sim.versions.SIM_VERSIONS`, a
lazy registry: ``DECIDE.get(version)``)."""


class SimulatedWorker(Worker):
    """A simulated model with a :class:`SimProfile`; bind a task with :meth:`for_task`."""

    def __init__(
        self,
        name: str,
        profile: SimProfile,
        *,
        dynamics: SimDynamics | None = None,
        latency_scale: float = 0.0,
        version: str = DEFAULT_VERSION,
        tokens: Mapping[str, float] | None = None,
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
        self.tokens: Mapping[str, float] = MappingProxyType(dict(tokens or {}))
        """Mean completion tokens per task profile, where fitted (the backend option
        ``tokens``); a profile it lacks uses ``profile.tokens_mean`` times
        :data:`PROFILE_TOKEN_FACTOR`."""

    def for_task(self, task: Task) -> TaskBoundSimulatedWorker:
        """This worker, able to answer ``task`` (the env calls this once per episode)."""
        return TaskBoundSimulatedWorker(self, task)

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


class TaskBoundSimulatedWorker(Worker):
    """A :class:`SimulatedWorker` that knows the ground truth of one task."""

    def __init__(self, parent: SimulatedWorker, task: Task) -> None:
        # Kept cheap: the env binds every worker of the pool at each reset, and most are
        # never called; what a call needs is derived on first use.
        self.name = parent.name
        self.worker = parent
        self.task = task

    def sees_question(self, text: str) -> bool:
        """Whether ``text`` carries the task's question (verbatim or a faithful paraphrase)."""
        return v1.sees_question(self.task.question, text, self.worker.dynamics.word_coverage)

    def wrong_answer(self, rng: random.Random) -> str | None:
        """A plausible wrong final answer: a distractor, a near number or another letter."""
        distractors = self.task.metadata.get("distractors")
        if distractors:
            return str(rng.choice(list(distractors)))
        reference = self.task.reference.strip()
        if re.fullmatch(r"-?\d+", reference):
            return str(int(reference) + rng.choice((-2, -1, 1, 2, 10)))
        if re.fullmatch(r"[A-Z]", reference):
            n = int(self.task.metadata.get("num_choices", 4))
            others = [chr(65 + i) for i in range(n) if chr(65 + i) != reference]
            return rng.choice(others) if others else None
        return None

    def correct_answer(self) -> str | None:
        """The final answer a correct worker writes (``None``: it has none to write)."""
        solution = self.task.metadata.get("solution")
        if solution is not None:
            return str(solution)
        # A code task's reference is a hash of its tests, not a program: without a
        # runnable solution the simulator has nothing correct to write.
        return None if self.task.grader == "code" else self.task.reference

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        rng = random.Random(f"{seed}:{self.name}") if seed is not None else random.Random()
        version = self.worker.version
        try:
            text, tokens = self._reply(messages, max_tokens, rng)
        except ConductorGymError:  # our own errors (a grader set-up error) pass as they are
            raise
        except Exception as exc:  # a simulator bug: raised through, never a worker failure
            raise SimulatorFault(
                f"simulator {version} failed for worker {self.name!r} on task "
                f"{self.task.id!r}: {type(exc).__name__}: {exc}"
            ) from exc
        profile = self.worker.profile
        prompt_tokens = sum(len(m["content"]) for m in messages) // 4 + 4 * len(messages)
        cost = (
            prompt_tokens * profile.price_in_per_mtok + tokens * profile.price_out_per_mtok
        ) / 1e6
        latency = profile.latency_base_s + tokens / profile.tokens_per_s
        if self.worker.latency_scale > 0:
            await asyncio.sleep(latency * self.worker.latency_scale)
        return Completion(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=tokens,
            cost_usd=cost,
            latency_s=latency,
            model=f"simulated/{profile.key}",
        )

    def _reply(
        self, messages: Sequence[Message], max_tokens: int, rng: random.Random
    ) -> tuple[str, int]:
        """The reply's text and completion tokens: the version's decision, written out."""
        mode, answer = DECIDE.get(self.worker.version)(self, messages, rng)
        mode = ReplyMode(mode)
        profile = self.worker.profile
        mean = self.worker.tokens.get(self.task.profile) or (
            profile.tokens_mean * PROFILE_TOKEN_FACTOR.get(self.task.profile, 1.0)
        )
        sigma = self.worker.dynamics.token_sigma
        tokens = max(1, round(rng.lognormvariate(math.log(mean) - sigma * sigma / 2, sigma)))
        share = SHORT_MODES.get(mode)
        short = share is not None and tokens * share <= max_tokens
        if short:
            tokens = max(1, round(tokens * (share or 1.0)))
        cut = not short and tokens > max_tokens
        text, cap = reply_text(mode, answer, self.task.grader, cut=cut)
        if cut and cap is None:  # ran out of budget before writing the final answer
            tokens = max_tokens
        elif cap is not None:
            tokens = min(tokens, cap)
        return text, tokens

    def __repr__(self) -> str:
        return f"SimulatedWorker({self.name!r}, task={self.task.id!r})"


_OPTIONS = (
    "latency_scale",
    "accuracy",
    "dynamics",
    "version",
    "tokens",
    "latency_base_s",
    "tokens_per_s",
)


def _positive(where: str, value: object, *, zero: bool = False) -> float:
    """``value`` as a float, > 0 (>= 0 with ``zero``), else a ``ValueError`` naming ``where``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and (number >= 0 if zero else number > 0):
            return number
    raise ValueError(f"{where} must be a number {'>= 0' if zero else '> 0'}, got {value!r}")


def make_simulated_worker(spec: WorkerSpec) -> SimulatedWorker:
    """Backend factory for ``backend="simulated"``.

    ``spec.model`` names a profile in :data:`PAPER_PROFILES`. ``backend_options`` may
    set ``latency_scale`` (float), ``accuracy`` (profile -> probability, overriding
    the table), ``dynamics`` (a mapping of :class:`SimDynamics` fields) and
    ``version`` (one of :data:`VERSIONS`, default :data:`DEFAULT_VERSION`), and the
    fitted cost model (module docstring): ``tokens`` (profile -> mean completion tokens,
    > 0), ``latency_base_s`` (>= 0) and ``tokens_per_s`` (> 0), each replacing the
    profile's. Prices in the spec override the profile's.
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
        latency_base_s=(
            _positive(
                f"{where}.backend_options.latency_base_s", options["latency_base_s"], zero=True
            )
            if "latency_base_s" in options
            else profile.latency_base_s
        ),
        tokens_per_s=(
            _positive(f"{where}.backend_options.tokens_per_s", options["tokens_per_s"])
            if "tokens_per_s" in options
            else profile.tokens_per_s
        ),
        lineage=profile.lineage,
    )
    tokens = options.get("tokens", {})
    if not isinstance(tokens, Mapping):
        raise ValueError(f"{where}.backend_options.tokens must be a table profile -> tokens")
    fitted_tokens = {
        str(name): _positive(f"{where}.backend_options.tokens[{name!r}]", value)
        for name, value in tokens.items()
    }
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
        tokens=fitted_tokens,
    )


def spec_version(spec: WorkerSpec) -> str | None:
    """The simulator version a spec selects (``None`` for a non-simulated worker)."""
    if spec.backend != "simulated":
        return None
    return str(spec.backend_options.get("version", DEFAULT_VERSION))


@runtime_checkable
class _HasSpecs(Protocol):
    """A pool, as far as :func:`simulator_version` reads one (the simulator sits below
    :mod:`conductor_gym.pool` and does not import it)."""

    @property
    def specs(self) -> Sequence[WorkerSpec]: ...


def simulator_version(pool: _HasSpecs | Sequence[WorkerSpec]) -> str | None:
    """The simulator version of a pool's (a :class:`~conductor_gym.pool.pool.WorkerPool`'s)
    or a list of specs' simulated workers, for results to record: ``"v1"``, ``"v2"``,
    ``None`` when no worker is simulated, or the versions joined by ``"+"`` when a pool
    mixes them."""
    specs = pool.specs if isinstance(pool, _HasSpecs) else pool
    versions = sorted({v for spec in specs if (v := spec_version(spec)) is not None})
    return "+".join(versions) if versions else None


def paper_pool_specs(
    latency_scale: float = 0.0, version: str = DEFAULT_VERSION
) -> list[WorkerSpec]:
    """The ``sim-paper`` pool (``sim-paper-v2`` with ``version="v2"``, and so on): the
    paper's seven workers, simulated, at 4096 max tokens and temperature 0.2 (the
    constrained setting, app. A). Every spec names its version, so a record of it stays
    the same pool when the default version moves."""
    from conductor_gym.workers.spec import WorkerSpec

    options: dict[str, Any] = {"latency_scale": latency_scale} if latency_scale else {}
    options["version"] = version
    return [
        WorkerSpec(name=key, backend="simulated", model=key, backend_options=options)
        for key in PAPER_PROFILES
    ]
