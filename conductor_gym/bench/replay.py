"""The one replay engine: a stored run's episodes played again through the env, from their
recorded completions, with no backend called. The leaderboard verifies entries with it,
``conductor-gym view`` shows each step with it and ``conductor-gym rescore --replay``
re-scores with it.

Contract.

* **What is rebuilt.** :class:`Replayer` rebuilds a run from its
  :class:`~conductor_gym.bench.results.Results`:

  - the task sources of its suite: those the caller checked (the board), else
    :func:`run_sources` (readable offline here, with the recorded fingerprint);
  - the env settings: :attr:`Results.env_kwargs` read by
    :meth:`EnvConfig.from_dict <conductor_gym.core.config.EnvConfig.from_dict>`, the
    only decoder of recorded settings (:func:`replay_config`); ``k``,
    ``shuffle_workers`` and ``cache`` are the pool's;
  - the pool: the workers the results record (:func:`worker_specs`; a ``v1`` file
    records none: the shipped preset its pool names, or the pool the caller names), with
    the recorded ``k``, ``shuffle`` and episode budget. Its workers must be the ones
    the pool description lists. The run's spending budget (``pool.run_budget``) is
    shared by every episode in completion order and is not rebuilt.

* **No backend is ever called.** Without a response cache, simulated workers answer
  themselves (an episode is then a pure function of its seed, its actions and the env
  settings) and a real worker makes the replay impossible. With the run's response cache
  (:class:`~conductor_gym.workers.cache.ResponseCache`, opened in ``"replay"`` mode,
  read only) every worker answers from it: a call the recorded run did not make raises
  :class:`~conductor_gym.workers.cache.ReplayMiss` inside the env, and the episode ends
  as an infrastructure failure (:attr:`Replayed.miss`). Real workers' cached answers are
  priced again from their tokens wherever the backend prices that way
  (:func:`reprices`: ``hf`` and ``vllm`` always, ``litellm`` when the pool file sets a
  price).

* **One episode.** :meth:`Replayer.replay` (:meth:`Replayer.areplay`, its coroutine)
  resets an env with the record's seed and task index, steps the recorded actions
  (``completion``, then each of ``followups``) until the env ends the episode, and
  returns :class:`Replayed`: the new record (the agent's planner usage is the
  record's), the last info, the task as graded, the actions played, whether the env
  ended the episode and whether a call missed the cache. With ``graders`` (by default
  those that graded a re-scored file, :func:`recorded_graders`) the final answer is then
  graded by another grader (:func:`regrade`): the workers always see the task as it is.

* **Re-running the agent.** With ``agent`` (a deterministic agent, rebuilt by the
  caller), each re-played round first asks the agent on the env's observation and info
  (with ``agent_seed`` as :func:`~conductor_gym.bench.evaluate.evaluate` derives it, the
  agent reseeded with it when it reseeds; one request per ``act_batch`` call at a time,
  through :class:`~conductor_gym.bench.evaluate.Batcher`) and keeps its answers in
  :attr:`Replayed.regenerated`; the recorded action is then played whatever it answered.
  :meth:`Replayer.verify` reports each round whose regenerated completion is not the
  recorded one as a :class:`Difference` of field :data:`AGENT_COMPLETION`.

* **Verification** (:meth:`Replayer.verify`, the leaderboard's): every episode is
  re-played (concurrently, each coroutine with its own envs) and must end exactly at its
  last recorded action (or still be running after it when the agent failed mid-episode),
  and its new record must equal the recorded one in every field the env decides
  (:data:`COMPARED`; floats within a relative 1e-9; ``error`` by its ``kind``). A
  recorded infrastructure failure replayed from a cache is compared on outcome and error
  kind only (the failed call is, by design, not in the cache). An episode that failed on
  the run's spending budget is listed in :attr:`Replay.skipped` (still an
  infrastructure failure, never a score). Each difference is a :class:`Difference`.
  The :class:`Replay` also says what ran: the env settings its envs were built with
  (:attr:`Replay.settings`, the non-default settings of :attr:`Replayer.config` as
  results record them) and the longest plan any re-played round executed
  (:attr:`Replay.longest_plan`), so a reader (the board's sections) follows what the
  re-play did rather than what the file claims.

* **Errors.** A run that cannot be re-played here raises :class:`ReplayError` (a
  :class:`~conductor_gym.errors.ConfigurationError`, so a ``ValueError``) naming what
  differs: a changed suite or one that needs downloads, settings
  :meth:`~conductor_gym.core.config.EnvConfig.from_dict` refuses (a ``conductor`` of
  an old file, a setting recorded as a type name), other workers than the recorded ones,
  a real pool without a cache, a cache that cannot be opened.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Literal, cast

from conductor_gym._loop import LoopRunner
from conductor_gym.bench.evaluate import Batcher, episode_record, recorded_settings
from conductor_gym.bench.results import EpisodeRecord, Results, WorkerRecord
from conductor_gym.bench.suites import EpisodeSpec, LimitedTasks, Suite, get_suite
from conductor_gym.core.agent import BaseAgent
from conductor_gym.core.config import EnvConfig
from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.info import ResetInfo, StepInfo
from conductor_gym.core.reward import Outcome, RewardScheme, make_reward_scheme
from conductor_gym.errors import ConfigurationError
from conductor_gym.graders import Grade, GraderError, grade
from conductor_gym.pool.pool import WorkerPool, make_pool
from conductor_gym.seeding import hash_seed
from conductor_gym.tasks import ProceduralTasks, Task, TaskSource
from conductor_gym.workers.base import Completion, Message, Worker, WorkerError
from conductor_gym.workers.budget import Budget
from conductor_gym.workers.cache import ResponseCache
from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "AGENT_COMPLETION",
    "COMPARED",
    "RECORDED",
    "Difference",
    "GraderChoice",
    "Replay",
    "ReplayError",
    "ReplayMethod",
    "Replayed",
    "Replayer",
    "compared_fields",
    "grader_for",
    "offline_sources",
    "real_backends",
    "recorded_graders",
    "recorded_task",
    "regrade",
    "replay_config",
    "replay_results",
    "reprices",
    "reward_scheme",
    "run_sources",
    "shipped_presets",
    "worker_specs",
]

ReplayMethod = Literal["simulated", "response cache"]
"""Where a replay's answers come from: the simulated workers, or the run's cache."""

GraderChoice = str | Mapping[str, str] | None
"""Which grader grades a task: ``None`` its own; a name, every task; a mapping, the
tasks whose grader is a key (the others keep theirs)."""

RECORDED = "recorded"
"""For :class:`Replayer`: grade as the run was last graded (:func:`recorded_graders`)."""

COMPARED = (
    "domain",
    "task_id",
    "outcome",
    "correct",
    "reward",
    "parse_error",
    "error",
    "steps",
    "worker_calls",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "latency_s",
    "final_answer",
)
"""The record fields a verified replay must reproduce (``error``: its ``kind``)."""

AGENT_COMPLETION = "agent completion"
"""The :class:`Difference` field of a round whose re-run agent answered otherwise."""

_AFTER_FAILURE = ("domain", "task_id", "outcome", "correct", "reward", "error")
"""What a cache replay compares for a recorded infrastructure failure."""

RELATIVE_TOLERANCE = 1e-9
_POOL_SETTINGS = ("k", "shuffle_workers", "cache")  # rebuilt from the pool's own record


class ReplayError(ConfigurationError):
    """A stored run cannot be re-played here; the message says what differs."""


# ------------------------------------------------------------------------------ the run


def offline_sources(suite: Suite, *, downloaded: bool = True) -> dict[str, TaskSource] | None:
    """The suite's task sources when every one can be read here without a download, else
    ``None``: the project's one "is this suite offline" check. Procedural sources always
    are; with ``downloaded``, so are the others whose ``offline_available()`` says their
    data is already here (the viewer and rescore). The leaderboard passes
    ``downloaded=False``: what it verifies must not depend on the maintainer's downloads."""
    sources = suite.sources  # building a source reads no data
    for source in sources.values():
        inner = source.source if isinstance(source, LimitedTasks) else source
        if isinstance(inner, ProceduralTasks):
            continue
        if not (downloaded and inner.offline_available() is True):
            return None
    return sources


def run_sources(results: Results) -> dict[str, TaskSource]:
    """The task sources of the run's suite, checked: readable offline here, and with
    the recorded fingerprint (else :class:`ReplayError`)."""
    try:
        suite = get_suite(results.suite.name, limit=results.suite.limit)
    except (KeyError, ValueError) as exc:
        raise ReplayError(f"suite {results.suite.name!r}: {exc}") from None
    sources = offline_sources(suite)
    if sources is None:
        raise ReplayError(
            f"suite {results.suite.name!r} reads datasets that are not available "
            "offline here: download them first (see `conductor-gym tasks list`)"
        )
    fingerprint = suite.fingerprint()
    if fingerprint != results.suite.fingerprint:
        raise ReplayError(
            f"suite {results.suite.name!r} now has fingerprint {fingerprint!r}, the run "
            f"recorded {results.suite.fingerprint!r}: its tasks changed since the run"
        )
    return sources


def recorded_task(sources: Mapping[str, TaskSource], record: EpisodeRecord) -> Task:
    """The record's task in ``sources``; :class:`ReplayError` if the task at that index
    is not the recorded one."""
    source = sources.get(record.benchmark)
    if source is None or not 0 <= record.task_index < len(source):
        raise ReplayError(f"episode {record.key} is outside the suite")
    task = source[record.task_index]
    if task.id != record.task_id:
        raise ReplayError(
            f"episode {record.key}: the suite's task is {task.id!r}, the record has "
            f"{record.task_id!r}"
        )
    return task


def replay_config(results: Results) -> EnvConfig:
    """The run's env settings (:attr:`Results.env_kwargs`, less the pool's ``k``,
    ``shuffle_workers`` and ``cache``) read by :meth:`EnvConfig.from_dict`; a setting it
    refuses raises :class:`ReplayError` naming it."""
    settings = {k: v for k, v in results.env_kwargs.items() if k not in _POOL_SETTINGS}
    try:
        return EnvConfig.from_dict(settings, where="env_kwargs")
    except (TypeError, ValueError) as exc:  # ConfigurationError among them
        message = str(exc)
        where = "" if message.startswith("env_kwargs") else "env_kwargs."
        raise ReplayError(f"{where}{message}") from None


# -------------------------------------------------------------------------------- grading


def grader_for(choice: GraderChoice, task_grader: str) -> str:
    """The grader that grades a task whose own grader is ``task_grader``."""
    if choice is None:
        return task_grader
    if isinstance(choice, str):
        return choice
    return choice.get(task_grader, task_grader)


def recorded_graders(results: Results) -> dict[str, str] | None:
    """The graders that graded ``results``: from its latest re-scoring, each task grader
    replaced by another (``None`` when it was never re-scored or kept every grader)."""
    if not results.rescored:
        return None
    graders = results.rescored[-1].graders
    return {task: g.name for task, g in graders.items() if g.name != task} or None


def reward_scheme(results: Results) -> RewardScheme:
    """The run's reward scheme (``env_kwargs.reward``, read by
    :meth:`EnvConfig.from_dict`); ``ConfigurationError`` for a run whose reward blends two rounds
    (``initial_round_weight > 0``: the initial answer is not stored, so an outcome cannot
    be re-scored)."""
    if results.env_kwargs.get("initial_round_weight"):
        raise ConfigurationError(
            "env_kwargs.initial_round_weight > 0: the reward blends the initial answer, "
            "which results do not store; this run cannot be re-scored"
        )
    recorded = {"reward": results.env_kwargs.get("reward", "paper")}
    try:
        spec = EnvConfig.from_dict(recorded, where="env_kwargs").reward
    except (TypeError, ValueError) as exc:
        raise ReplayError(f"env_kwargs.{exc}") from None
    return make_reward_scheme(spec)


def regrade(record: EpisodeRecord, task: Task, grader: str, scheme: RewardScheme) -> EpisodeRecord:
    """``record`` with its ``final_response`` graded anew by ``grader`` against ``task``:
    outcome, ``correct``, reward (``scheme``), ``final_answer`` and ``grade_reason``
    follow the new grade; a grader that fails makes it an infrastructure failure
    (``error={"kind": "grader", ...}``), as in the env. Records of episodes that were not
    graded (invalid plans, failures) come back as they are; a graded one without a
    stored response raises ``ConfigurationError``."""
    if record.outcome not in (Outcome.CORRECT, Outcome.WRONG):
        return record
    if record.final_response is None:
        raise ConfigurationError(
            f"episode {record.key} stores no final answer (the file was written before "
            "answers were recorded): re-score it with replay instead"
        )
    try:
        verdict = grade(grader, record.final_response, task.reference, **task.metadata)
    except GraderError as exc:
        error = {"kind": "grader", "grader": grader, "message": str(exc)}
        failed = {"outcome": Outcome.ERROR, "correct": False, "reward": 0.0, "error": error}
        return record.model_copy(update={**failed, "final_answer": None, "grade_reason": None})
    outcome = Outcome.CORRECT if verdict.correct else Outcome.WRONG
    update = {
        "outcome": outcome,
        "correct": verdict.correct,
        "reward": scheme(outcome),
        "final_answer": verdict.extracted,
        "grade_reason": verdict.reason,
    }
    return record.model_copy(update=update)


# ----------------------------------------------------------------------------------- pool


def shipped_presets() -> set[str]:
    """The pool names a results file may claim as presets: the files shipped in
    ``conductor_gym/pool/presets/`` and the pools registered in code. (Only these are
    ever built from a recorded name: a name is never opened as a path.)"""
    from conductor_gym.pool.config import preset_names
    from conductor_gym.pool.pool import POOL_PRESETS

    return {*preset_names(), *POOL_PRESETS}


def _spec(record: WorkerRecord) -> WorkerSpec:
    options = dict(record.options)
    if record.backend == "simulated":
        options.pop("latency_scale", None)  # waiting changes no answer
    try:
        return WorkerSpec(
            name=record.name,
            backend=record.backend,
            model=record.model,
            max_tokens=record.max_tokens,
            temperature=record.temperature,
            params=record.params,
            backend_options=options,
            price_in_per_mtok=record.price_in_per_mtok,
            price_out_per_mtok=record.price_out_per_mtok,
            system_prompt=record.system_prompt,
        )
    except ValueError as exc:
        raise ReplayError(f"workers: {exc}") from None


def _named_specs(results: Results, name: str | os.PathLike[str]) -> list[WorkerSpec]:
    """The workers of the pool ``name`` (a preset or a pool file), which must be the ones
    the results describe."""
    try:
        pool = make_pool(name)
    except ValueError as exc:
        raise ReplayError(f"cannot rebuild the run's pool: {exc}") from None
    have, workers = pool.describe()["workers"], results.pool.get("workers")
    if have != workers:
        raise ReplayError(
            f"pool {os.fspath(name)!r} has workers {have} but the run had {workers}: "
            "pass the run's own pool"
        )
    return list(pool.specs)


def worker_specs(results: Results, pool: str | os.PathLike[str] | None = None) -> list[WorkerSpec]:
    """The workers a replay builds: those of ``pool`` (a preset name or a pool file) when
    given, else the recorded ones (:attr:`Results.workers`), else, for a ``v1`` file,
    those of the shipped preset its pool names. The workers must be the ones the results
    describe (else :class:`ReplayError`)."""
    if pool is not None:
        return _named_specs(results, pool)
    if results.workers is None:
        name = results.pool.get("name")
        if not isinstance(name, str) or name not in shipped_presets():
            raise ReplayError(
                f"results schema {results.schema_!r} records no worker settings and pool "
                f"{name!r} is not a shipped preset: re-run evaluate to record them"
            )
        return _named_specs(results, name)
    if not results.workers:
        raise ReplayError("workers: the results record no worker")
    return [_spec(record) for record in results.workers]


def real_backends(results: Results) -> list[str]:
    """The backends other than ``"simulated"`` of the run's workers, as its worker records
    and its pool description name them (sorted; empty for an all-simulated pool)."""
    backends = {w.backend for w in results.workers or ()}
    described = results.pool.get("workers")
    if isinstance(described, list):
        backends |= {str(w.get("backend")) for w in described if isinstance(w, Mapping)}
    return sorted(backends - {"simulated"})


def reprices(spec: WorkerSpec) -> bool:
    """Whether the backend prices a call as tokens times the spec's prices, so a replay
    prices cached answers again rather than trusting the cost the cache stored."""
    if spec.backend in ("hf", "vllm"):
        return True
    priced = spec.price_in_per_mtok is not None or spec.price_out_per_mtok is not None
    return spec.backend == "litellm" and priced


class _NoBackend(Worker):
    """What stands behind a real worker in a replay: the cache answers, nothing else."""

    def __init__(self, name: str) -> None:
        self.name = name

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        raise WorkerError("replay: no backend is reached", transient=False, worker=self.name)


class _Repriced(Worker):
    """A cached worker whose answers are priced from their tokens and the spec's prices."""

    def __init__(self, worker: Worker, spec: WorkerSpec) -> None:
        self.name = worker.name
        self.worker = worker
        self.price_in = spec.price_in_per_mtok or 0.0
        self.price_out = spec.price_out_per_mtok or 0.0

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        answer = await self.worker.complete(
            messages, max_tokens=max_tokens, temperature=temperature, seed=seed, **params
        )
        cost = answer.prompt_tokens * self.price_in + answer.completion_tokens * self.price_out
        return dataclasses.replace(answer, cost_usd=cost / 1e6)


class _ReplayPool(WorkerPool):
    """The recorded pool: simulated workers as built (answering from the cache when there
    is one), real workers answered by the cache only."""

    def _build(self, spec: WorkerSpec) -> Worker:
        if spec.backend == "simulated":
            return super()._build(spec)
        from conductor_gym.workers.cache import CachedWorker

        assert self.cache is not None
        # The key's model is the one WorkerPool gives a cached real worker.
        model = f"{spec.backend}/{spec.model_name}"
        worker: Worker = CachedWorker(_NoBackend(spec.name), self.cache, model)
        return _Repriced(worker, spec) if reprices(spec) else worker


def _budget(value: Any, where: str) -> Budget:
    if value is None:
        return Budget()
    if not isinstance(value, Mapping):
        raise ReplayError(f"pool.{where}: expected a budget mapping, got {value!r}")
    try:
        return Budget(**value)
    except (TypeError, ValueError) as exc:
        raise ReplayError(f"pool.{where}: {exc}") from None


class _LookupLog(ResponseCache):
    """The run's response cache in replay mode, noting the key of every lookup."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        super().__init__(path, mode="replay")
        self.looked_up: set[str] = set()

    async def get(self, key: str) -> Completion | None:
        self.looked_up.add(key)
        return await super().get(key)


def _open_cache(cache: str | os.PathLike[str]) -> _LookupLog:
    from conductor_gym.workers.cache import CacheError

    try:
        return _LookupLog(cache)
    except (OSError, CacheError) as exc:
        raise ReplayError(f"response cache: {exc}") from None


def _replay_pool(
    results: Results, specs: Sequence[WorkerSpec], cache: ResponseCache | None
) -> _ReplayPool:
    k, shuffle = results.pool.get("k"), results.pool.get("shuffle", False)
    if not isinstance(k, int) or not isinstance(shuffle, bool):
        raise ReplayError(f"pool: k={k!r} and shuffle={shuffle!r} must be an int and a bool")
    name = results.pool.get("name")
    try:
        pool = _ReplayPool(
            specs,
            k=k,
            shuffle=shuffle,
            episode_budget=_budget(results.pool.get("episode_budget"), "episode_budget"),
            cache=cache,
            name=name if isinstance(name, str) else "replay",
        )
    except ValueError as exc:
        raise ReplayError(f"pool: {exc}") from None
    have, workers = pool.describe()["workers"], results.pool.get("workers")
    if have != workers:
        raise ReplayError(
            f"the worker records {have} are not the workers the pool describes ({workers})"
        )
    return pool


# --------------------------------------------------------------------------------- replay


@dataclass(frozen=True)
class Replayed:
    """One re-played episode.

    Attributes:
        record: The new record (the agent's planner usage is the old record's: the agent
            is not asked again).
        info: The env's last step info (or the reset info when nothing was played).
        task: The task as graded (its ``grader`` the one that graded it).
        completions: The completions played, in round order.
        miss: A step's call was not in the response cache (nothing was called instead).
        ended: The env ended the episode (terminated or truncated) at the last one.
        regenerated: With a re-run agent, what it answered before each played
            completion (``None`` for a round it failed); ``None`` without one.
    """

    record: EpisodeRecord
    info: dict[str, Any]
    task: Task
    completions: tuple[str, ...]
    miss: bool
    ended: bool = True
    regenerated: tuple[str | None, ...] | None = None


@dataclasses.dataclass(frozen=True)
class Difference:
    """One field of one episode that the replay did not reproduce."""

    key: tuple[str, int, int]
    field: str
    recorded: Any
    replayed: Any

    def __str__(self) -> str:
        return f"{self.key} {self.field}: recorded {self.recorded!r}, re-played {self.replayed!r}"


@dataclasses.dataclass
class Replay:
    """What :meth:`Replayer.verify` found.

    ``settings``: the env settings the re-play's envs ran with that are not
    :class:`~conductor_gym.core.config.EnvConfig`'s defaults, as results record them
    (:func:`~conductor_gym.bench.evaluate.recorded_settings` of :attr:`Replayer.config`;
    the pool's ``k``, ``shuffle_workers`` and ``cache`` are the pool's, never here).
    ``longest_plan``: the most steps of any one plan a re-played round executed (0 when
    no plan parsed). ``cache_keys``: the keys of the response-cache rows the re-played
    calls looked up (empty without a cache): the calls the episodes use.
    """

    method: ReplayMethod
    episodes: int
    differences: list[Difference] = dataclasses.field(default_factory=list)
    skipped: list[tuple[tuple[str, int, int], str]] = dataclasses.field(default_factory=list)
    settings: dict[str, Any] = dataclasses.field(default_factory=dict)
    longest_plan: int = 0
    cache_keys: frozenset[str] = frozenset()

    @property
    def ok(self) -> bool:
        """Every re-played episode matched."""
        return not self.differences


def _agent_failed(record: EpisodeRecord) -> bool:
    return record.outcome == Outcome.ERROR and (record.error or {}).get("kind") == "agent"


def _actions(record: EpisodeRecord) -> list[str]:
    """What the agent answered, in order. An agent failure before any answer is recorded
    as ``completion=""`` with an ``"agent"`` error: nothing to play then."""
    if _agent_failed(record) and not record.completion and not record.followups:
        return []
    return [record.completion, *record.followups]


def _longest_plan(info: Mapping[str, Any]) -> int:
    """The most steps of a plan in the episode's rounds (0 when none parsed)."""
    plans = [r.plan for r in info.get("rounds", ()) if r.plan is not None]
    return max((len(plan.model_ids) for plan in plans), default=0)


def _run_budget_failure(record: EpisodeRecord) -> bool:
    error = record.error or {}
    budget = error.get("kind") == "budget" and error.get("scope") == "run"
    return record.outcome == Outcome.ERROR and budget


def _differs(field: str, recorded: Any, replayed: Any) -> bool:
    if field == "error":
        return (recorded or {}).get("kind") != (replayed or {}).get("kind")
    if isinstance(recorded, float) and isinstance(replayed, float):
        return not math.isclose(recorded, replayed, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-12)
    return bool(recorded != replayed) or type(recorded) is not type(replayed)


def compared_fields(results: Results) -> tuple[str, ...]:
    """:data:`COMPARED`, less ``final_answer`` for a ``v1`` file (which does not record it)."""
    if results.workers is None:
        return tuple(f for f in COMPARED if f != "final_answer")
    return COMPARED


class Replayer:
    """Re-plays the episodes of ``results`` (module docstring); close it when done (or use
    it as a context manager).

    Args:
        results: The stored run.
        sources: The run's task sources, already checked by the caller (suite name ->
            source); by default :func:`run_sources`.
        cache: The run's response-cache file, opened in replay mode: every worker then
            answers from it (needed for any pool that is not all simulated).
        pool: The pool whose workers to rebuild (a preset name or a pool file) instead
            of the recorded ones; they must be the ones the results describe.
        graders: Which graders grade the tasks (:data:`GraderChoice`); by default
            (:data:`RECORDED`) those that graded the run (:func:`recorded_graders`), so
            the re-play of a re-scored file reproduces it.
        agent: A deterministic agent to re-run on every re-played round (module
            docstring); ``None``: the recorded completions are only played.

    Attributes:
        config: The run's env settings as :func:`replay_config` decodes them (no task
            source or pool): what every env of the re-play is built from.

    Raises:
        ReplayError: The run cannot be re-played here (module docstring).
    """

    def __init__(
        self,
        results: Results,
        *,
        sources: Mapping[str, TaskSource] | None = None,
        cache: str | os.PathLike[str] | None = None,
        pool: str | os.PathLike[str] | None = None,
        graders: GraderChoice | Literal["recorded"] = RECORDED,
        agent: BaseAgent | None = None,
    ) -> None:
        self.results = results
        self.agent = agent
        self._batcher: Batcher | None = None
        self.sources = dict(sources) if sources is not None else run_sources(results)
        if not self.sources:
            raise ReplayError(f"suite {results.suite.name!r} has no task source")
        config = replay_config(results)
        self.config: EnvConfig = config
        self.graders = recorded_graders(results) if graders == RECORDED else graders
        try:
            self.scheme = reward_scheme(results) if self.graders is not None else None
        except ValueError as exc:
            raise ReplayError(str(exc)) from None
        specs = worker_specs(results, pool)
        real = real_backends(results)
        if cache is None and real:
            raise ReplayError(
                f"pool {results.pool.get('name')!r} has workers on backends {real}: a replay "
                "without the run's response cache would call them; pass the cache"
            )
        self.method: ReplayMethod = "simulated" if cache is None else "response cache"
        opened = None if cache is None else _open_cache(cache)
        try:
            self.pool: WorkerPool = _replay_pool(results, specs, opened)
            self.configs = {
                name: config.replace(tasks=source, pool=self.pool)
                for name, source in self.sources.items()
            }
            self._envs = {name: ConductorEnv(c) for name, c in self.configs.items()}
        except (TypeError, ValueError) as exc:
            if opened is not None:
                opened.close()
            if isinstance(exc, ReplayError):
                raise
            raise ReplayError(f"env_kwargs: {exc}") from None
        self._runner = LoopRunner()

    def __enter__(self) -> Replayer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # -- one episode ---------------------------------------------------------------

    def replay(self, record: EpisodeRecord) -> Replayed:
        """Re-play one recorded episode (see :class:`Replayed`)."""
        env = self._envs.get(record.benchmark)
        if env is None:
            raise ReplayError(f"episode {record.key} is outside the suite")
        return self._runner.run(self.areplay(record, env))

    async def areplay(self, record: EpisodeRecord, env: ConductorEnv) -> Replayed:
        """:meth:`replay` as a coroutine, on ``env`` (one of :attr:`configs`' envs that no
        other coroutine steps meanwhile)."""
        task = recorded_task(self.sources, record)
        observation, last = env.reset(seed=record.seed, options={"task_index": record.task_index})
        info: ResetInfo | StepInfo = last
        played: list[str] = []
        regenerated: list[str | None] | None = None if self.agent is None else []
        reward, done = 0.0, False
        for action in _actions(record):
            if regenerated is not None:
                regenerated.append(await self._ask(observation, info, record.seed, len(played)))
            played.append(action)
            observation, reward, terminated, truncated, info = await env.astep(action)
            if terminated or truncated:
                done = True
                break
        failure = None
        if not done:  # the agent failed before the env ended the episode: keep its error
            failure = record.error or {"kind": "agent", "message": "no further completion"}
        spec = EpisodeSpec(record.benchmark, record.task_index, record.repeat, record.seed)
        new = episode_record(
            spec,
            info,
            played,
            float(reward),
            failure,
            record.planner_tokens,
            record.planner_cost_usd,
        )
        error = cast(StepInfo, info)["error"] if done else None
        miss = isinstance(error, Mapping) and error.get("error_type") == "ReplayMiss"
        grader = grader_for(self.graders, task.grader)
        if grader != task.grader and self.scheme is not None:
            # Graded after the episode: the workers saw the task as it is (a simulated
            # worker reads its task); only the verdict on the final answer is another's.
            new = regrade(new, task, grader, self.scheme)
            task = dataclasses.replace(task, grader=grader)
            graded = new.outcome in (Outcome.CORRECT, Outcome.WRONG)
            verdict = Grade(new.correct, new.final_answer, new.grade_reason or "")
            view: dict[str, Any] = {
                **info,
                "outcome": new.outcome,
                "grade": verdict if graded else None,
                "error": new.error if new.outcome == Outcome.ERROR else info.get("error"),
            }
            view_info = view
        else:
            view_info = dict(info)
        again = None if regenerated is None else tuple(regenerated)
        return Replayed(new, view_info, task, tuple(played), miss, done, again)

    async def _ask(
        self, observation: str, info: ResetInfo | StepInfo, seed: int, round_: int
    ) -> str | None:
        """The re-run agent's answer for one round, as evaluate asks it (``None`` when
        the agent failed with its own error)."""
        assert self.agent is not None
        if self._batcher is None:
            self._batcher = Batcher(self.agent, max_batch=16)
        answer = await self._batcher.act(observation, dict(info), hash_seed("agent", seed, round_))
        return answer[0]

    # -- verification --------------------------------------------------------------

    def verify(self, concurrency: int = 16) -> Replay:
        """Re-play every episode and compare (module docstring), ``concurrency``
        episodes at a time."""
        return self._runner.run(self.averify(concurrency))

    def _compare(
        self, record: EpisodeRecord, replayed: Replayed, compared: tuple[str, ...]
    ) -> list[Difference]:
        key, actions = record.key, _actions(record)
        differences = []
        if len(replayed.completions) < len(actions):
            differences.append(
                Difference(key, "actions taken", len(actions), len(replayed.completions))
            )
        elif _agent_failed(record) == replayed.ended:
            want = "running (the agent failed)" if _agent_failed(record) else "ended"
            have = "ended" if replayed.ended else "running after the last recorded action"
            differences.append(Difference(key, "episode end", want, have))
        if differences:
            return differences
        for again, action in zip(replayed.regenerated or (), actions, strict=False):
            if again != action:
                differences.append(Difference(key, AGENT_COMPLETION, action, again))
        failed = self.method == "response cache" and record.outcome == Outcome.ERROR
        for field in _AFTER_FAILURE if failed else compared:
            old: Any = getattr(record, field)
            new: Any = getattr(replayed.record, field)
            if _differs(field, old, new):
                if field == "error":
                    old, new = (old or {}).get("kind"), (new or {}).get("kind")
                differences.append(Difference(key, field, old, new))
        return differences

    async def averify(self, concurrency: int = 16) -> Replay:
        """:meth:`verify` as a coroutine."""
        results = self.results
        self._batcher = None  # one per event loop: a fresh one for this verification
        run_budget = not _budget(results.pool.get("run_budget"), "run_budget").unlimited
        report = Replay(self.method, episodes=0, settings=recorded_settings(self.config))
        log = self.pool.cache if isinstance(self.pool.cache, _LookupLog) else None
        if log is not None:
            log.looked_up.clear()
        compared = compared_fields(results)
        todo: list[EpisodeRecord] = []
        for record in results.episodes:
            if record.benchmark not in self.sources:
                raise ReplayError(f"episode {record.key}: no source {record.benchmark!r} here")
            if _run_budget_failure(record) and run_budget:
                report.skipped.append((record.key, "failed on the run's shared spending budget"))
            else:
                todo.append(record)
        queue = iter(todo)
        found: list[tuple[tuple[str, int, int], list[Difference]]] = []

        async def worker() -> None:
            envs: dict[str, ConductorEnv] = {}
            try:
                for record in queue:
                    env = envs.get(record.benchmark)
                    if env is None:
                        env = envs[record.benchmark] = ConductorEnv(self.configs[record.benchmark])
                    try:
                        replayed = await self.areplay(record, env)
                        differences = self._compare(record, replayed, compared)
                        longest = _longest_plan(replayed.info)
                        report.longest_plan = max(report.longest_plan, longest)
                    except Exception as exc:  # untrusted settings may break an episode anywhere
                        failure = f"{type(exc).__name__}: {exc}"[:300]
                        differences = [Difference(record.key, "replay", "an episode", failure)]
                        env.close()
                        del envs[record.benchmark]
                    found.append((record.key, differences))
            finally:
                for env in envs.values():
                    env.close()

        await asyncio.gather(*(worker() for _ in range(max(1, min(concurrency, len(todo))))))
        report.episodes = len(todo)
        if log is not None:
            report.cache_keys = frozenset(log.looked_up)
        order = {record.key: n for n, record in enumerate(results.episodes)}
        for _, differences in sorted(found, key=lambda item: order[item[0]]):
            report.differences.extend(differences)
        return report

    def close(self) -> None:
        """Close the envs, the event loop and the cache's connection (idempotent)."""
        for env in self._envs.values():
            env.close()
        self._envs = {}
        if self._batcher is not None:
            self._batcher.close()
            self._batcher = None
        self._runner.close()
        if self.pool.cache is not None:
            self.pool.cache.close()


def replay_results(
    results: Results,
    sources: Mapping[str, TaskSource],
    *,
    cache: str | os.PathLike[str] | None = None,
    concurrency: int = 16,
    agent: BaseAgent | None = None,
) -> Replay:
    """Verify ``results`` on ``sources`` (suite-source name -> the task source the run
    used): :meth:`Replayer.verify` of a :class:`Replayer` built for it (re-running
    ``agent`` when given), then closed. ``cache`` is read only when the pool has real
    workers: a simulated pool is re-played by the simulator itself, which no submitted
    file can forge. Raises :class:`ReplayError` when the run cannot be rebuilt here."""
    cache = cache if real_backends(results) else None
    replayer = Replayer(results, sources=sources, cache=cache, agent=agent)
    with contextlib.closing(replayer):
        return replayer.verify(concurrency)
