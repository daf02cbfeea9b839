"""Re-play a results file: run every recorded episode again and compare.

Contract. :func:`replay_results` rebuilds the run from what a
:class:`~conductor_gym.bench.results.Results` file records (the suite's task sources, the
pool from :attr:`~conductor_gym.bench.results.Results.workers`, the env arguments), then
for every :class:`~conductor_gym.bench.results.EpisodeRecord` resets an env with the
episode's seed and task index and steps the recorded actions (``completion``, then each
of ``followups`` for a multi-turn episode). The episode must end exactly at the last
recorded action (or still be running after it when the agent failed mid-episode), and
its replayed record must equal the recorded one in every field the env decides:
``domain``, ``task_id``, ``outcome``, ``correct``, ``reward``, ``parse_error``, the
error's ``kind``, ``steps``, ``worker_calls``, ``prompt_tokens``, ``completion_tokens``,
``cost_usd``, ``latency_s`` and ``final_answer`` (floats within a relative 1e-9). Each
difference is a :class:`Difference` naming the episode and the field. The planner's own
tokens and cost are the agent's, not the env's: they are taken as recorded.

Where the answers come from (:attr:`Replay.method`):

* ``"simulated"``: every worker is simulated, so an episode is a pure function of its
  seed, its actions and the env arguments; the workers are rebuilt from their records
  (``latency_scale`` set to 0: waiting changes nothing).
* ``"response cache"``: some worker is real. Its answers come from the submitted
  :class:`~conductor_gym.workers.cache.ResponseCache`, opened in ``"replay"`` mode: no
  backend is reached, and a call the recording never made is an infrastructure failure
  of the replay (``ReplayMiss``), which then differs from the record. Costs are priced
  again from the cached tokens wherever the backend prices that way (:func:`reprices`:
  ``hf`` and ``vllm`` always, ``litellm`` when the pool file sets a price); other costs
  are as the cache recorded them. A recorded infrastructure failure is compared on its
  outcome and error kind only (the failed call is, by design, not in the cache).

Not re-played: the run's spending budget (``pool.run_budget``) is shared by every
episode in completion order, so an episode that failed on it is listed in
:attr:`Replay.skipped` (still an infrastructure failure, never a score), and no other
episode may fail on it. A run whose env cannot be rebuilt (a ``conductor`` policy that
writes inner plans, an env argument this module does not know, a real pool without a
cache, a ``v1`` file whose pool is not a shipped preset) raises :class:`NotReplayable`
saying why.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from conductor_gym._loop import LoopRunner
from conductor_gym.bench.evaluate import episode_record
from conductor_gym.bench.rerun import grader_for, recorded_graders, regrade, reward_scheme
from conductor_gym.bench.results import EpisodeRecord, Results, WorkerRecord
from conductor_gym.bench.suites import EpisodeSpec
from conductor_gym.core.budget import Budget
from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.execute import RetryPolicy
from conductor_gym.core.prompts import FewShotExample, PromptTemplates
from conductor_gym.core.reward import RewardScheme
from conductor_gym.pool.base import WorkerPool, WorkerSpec, make_pool
from conductor_gym.workers.base import Completion, Message, Worker, WorkerError

if TYPE_CHECKING:
    from conductor_gym.tasks import TaskSource
    from conductor_gym.workers.cache import ResponseCache

__all__ = [
    "COMPARED",
    "Difference",
    "NotReplayable",
    "Replay",
    "ReplayMethod",
    "compared_fields",
    "env_arguments",
    "replay_results",
    "replay_specs",
    "reprices",
    "shipped_presets",
]

ReplayMethod = Literal["simulated", "response cache"]

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
"""The record fields a replay must reproduce (``error``: its ``kind``)."""

_AFTER_FAILURE = ("domain", "task_id", "outcome", "correct", "reward", "error")
"""What a cache replay compares for a recorded infrastructure failure."""

RELATIVE_TOLERANCE = 1e-9
_POOL_ARGUMENTS = ("k", "shuffle_workers", "cache")  # rebuilt from the pool's own record


class NotReplayable(ValueError):
    """The run cannot be re-played here; the message says why."""


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
    """What :func:`replay_results` found."""

    method: ReplayMethod
    episodes: int
    differences: list[Difference] = dataclasses.field(default_factory=list)
    skipped: list[tuple[tuple[str, int, int], str]] = dataclasses.field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every re-played episode matched."""
        return not self.differences


# ------------------------------------------------------------------------- env arguments


def _fields(value: Any, cls: type, where: str) -> dict[str, Any]:
    """The fields of a dataclass as :func:`~conductor_gym.bench.results.json_safe` wrote it."""
    if not isinstance(value, Mapping) or value.get("type") != cls.__name__:
        raise NotReplayable(f"env_kwargs.{where}: expected a recorded {cls.__name__}")
    names = {f.name for f in dataclasses.fields(cls)}
    fields = {k: v for k, v in value.items() if k != "type"}
    if unknown := sorted(set(fields) - names):
        raise NotReplayable(f"env_kwargs.{where}: unknown {cls.__name__} fields {unknown}")
    return fields


def _reward(value: Any) -> Any:
    if isinstance(value, str):
        return value
    return RewardScheme(**_fields(value, RewardScheme, "reward"))


def _templates(value: Any) -> PromptTemplates:
    fields = _fields(value, PromptTemplates, "templates")
    if "examples" in fields:
        examples = fields["examples"]
        if not isinstance(examples, list):
            raise NotReplayable("env_kwargs.templates.examples: expected a list")
        fields["examples"] = tuple(
            FewShotExample(**_fields(e, FewShotExample, "templates.examples")) for e in examples
        )
    return PromptTemplates(**fields)


def _same(value: Any) -> Any:
    return value


_DECODERS: dict[str, Callable[[Any], Any]] = {
    "max_steps": _same,
    "max_recursions": _same,
    "force_recursion": _same,
    "initial_round_weight": _same,
    "question_to_all_workers": _same,
    "max_plan_chars": _same,
    "reward": _reward,
    "templates": _templates,
    "retry": lambda v: RetryPolicy(**_fields(v, RetryPolicy, "retry")),
    "episode_budget": lambda v: Budget(**_fields(v, Budget, "episode_budget")),
}


def env_arguments(env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """:class:`~conductor_gym.core.env.ConductorEnv` arguments from the recorded
    ``env_kwargs`` (pool arguments and ``render_mode`` left out: the pool is rebuilt from
    its own record). Raises :class:`NotReplayable` naming an argument it cannot rebuild."""
    arguments: dict[str, Any] = {}
    for key, value in env_kwargs.items():
        if key in _POOL_ARGUMENTS or key == "render_mode":
            continue
        if key == "conductor":
            raise NotReplayable(
                "env_kwargs.conductor: the conductor's inner plans (self-calls) are written "
                "by its policy during the run and are not recorded"
            )
        decoder = _DECODERS.get(key)
        if decoder is None:
            raise NotReplayable(f"env_kwargs.{key}: this argument cannot be rebuilt for a replay")
        try:
            arguments[key] = decoder(value)
        except (TypeError, ValueError) as exc:
            raise NotReplayable(f"env_kwargs.{key}: {exc}") from None
    return arguments


# ---------------------------------------------------------------------------------- pool


def _spec(record: WorkerRecord) -> WorkerSpec:
    options = dict(record.options)
    if record.backend == "simulated":
        options.pop("latency_scale", None)
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
        )
    except ValueError as exc:
        raise NotReplayable(f"workers: {exc}") from None


def shipped_presets() -> set[str]:
    """The pool names a results file may claim as presets: the files shipped in
    ``conductor_gym/pool/presets/`` and the pools registered in code. (Only these are
    ever built from a recorded name: a name is never opened as a path.)"""
    from conductor_gym.pool.base import POOL_PRESETS
    from conductor_gym.pool.config import preset_names

    return {*preset_names(), *POOL_PRESETS}


def _preset_specs(results: Results) -> list[WorkerSpec]:
    """A ``v1`` file's workers: the shipped preset it names, if its description matches."""
    name = results.pool.get("name")
    if not isinstance(name, str) or name not in shipped_presets():
        raise NotReplayable(
            f"results schema {results.schema_!r} records no worker settings and pool "
            f"{name!r} is not a shipped preset: re-run evaluate to record them"
        )
    pool = make_pool(name)
    described = pool.describe()["workers"]
    if described != results.pool.get("workers"):
        raise NotReplayable(
            f"results schema {results.schema_!r} records no worker settings and the workers "
            f"of preset {name!r} are not the ones the results describe"
        )
    return list(pool.specs)


def replay_specs(results: Results) -> list[WorkerSpec]:
    """The worker specs a replay builds: from :attr:`Results.workers`, or for a ``v1``
    file from the shipped preset its pool names (raises :class:`NotReplayable`)."""
    if results.workers is None:
        return _preset_specs(results)
    if not results.workers:
        raise NotReplayable("workers: the results record no worker")
    return [_spec(record) for record in results.workers]


def reprices(spec: WorkerSpec) -> bool:
    """Whether the backend prices a call as tokens times the spec's prices, so a replay
    prices cached answers again rather than trusting the cost the cache stored."""
    if spec.backend in ("hf", "vllm"):
        return True
    priced = spec.price_in_per_mtok is not None or spec.price_out_per_mtok is not None
    return spec.backend == "litellm" and priced


class _NoBackend:
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


class _Repriced:
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
    """The recorded pool with real workers answered only by ``replay_cache``."""

    def __init__(
        self,
        specs: Sequence[WorkerSpec],
        *,
        k: int,
        shuffle: bool,
        episode_budget: Budget,
        replay_cache: ResponseCache | None,
    ) -> None:
        super().__init__(specs, k=k, shuffle=shuffle, episode_budget=episode_budget, name="replay")
        self.replay_cache = replay_cache

    def _build(self, spec: WorkerSpec) -> Worker:
        if spec.backend == "simulated":
            return super()._build(spec)
        from conductor_gym.workers.cache import CachedWorker

        assert self.replay_cache is not None
        # The key's model is the one WorkerPool gives a cached real worker.
        model = f"{spec.backend}/{spec.model_name}"
        worker: Worker = CachedWorker(_NoBackend(spec.name), self.replay_cache, model)
        return _Repriced(worker, spec) if reprices(spec) else worker


def _budget(value: Any, where: str) -> Budget:
    if value is None:
        return Budget()
    if not isinstance(value, Mapping):
        raise NotReplayable(f"pool.{where}: expected a budget mapping, got {value!r}")
    try:
        return Budget(**value)
    except (TypeError, ValueError) as exc:
        raise NotReplayable(f"pool.{where}: {exc}") from None


def _pool(results: Results, cache: ResponseCache | None) -> tuple[_ReplayPool, ReplayMethod]:
    specs = replay_specs(results)
    real = sorted({s.backend for s in specs if s.backend != "simulated"})
    if real and cache is None:
        raise NotReplayable(
            f"the pool has real workers ({', '.join(real)}) and no response cache was "
            "given: their answers cannot be re-played offline"
        )
    k, shuffle = results.pool.get("k"), results.pool.get("shuffle", False)
    if not isinstance(k, int) or not isinstance(shuffle, bool):
        raise NotReplayable(f"pool: k={k!r} and shuffle={shuffle!r} must be an int and a bool")
    try:
        pool = _ReplayPool(
            specs,
            k=k,
            shuffle=shuffle,
            episode_budget=_budget(results.pool.get("episode_budget"), "episode_budget"),
            replay_cache=cache if real else None,
        )
    except ValueError as exc:
        raise NotReplayable(f"pool: {exc}") from None
    return pool, "response cache" if real else "simulated"


# -------------------------------------------------------------------------------- replay


def _actions(record: EpisodeRecord) -> list[str]:
    if _agent_failed(record) and record.completion == "" and not record.followups:
        return []  # the agent failed before its first action
    return [record.completion, *record.followups]


def _agent_failed(record: EpisodeRecord) -> bool:
    return record.outcome == "error" and (record.error or {}).get("kind") == "agent"


def _run_budget_failure(record: EpisodeRecord) -> bool:
    error = record.error or {}
    budget = error.get("kind") == "budget" and error.get("scope") == "run"
    return record.outcome == "error" and budget


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


async def _replay_one(
    env: ConductorEnv,
    record: EpisodeRecord,
    method: ReplayMethod,
    compared: tuple[str, ...],
    results: Results,
) -> list[Difference]:
    key = record.key
    _, info = env.reset(seed=record.seed, options={"task_index": record.task_index})
    actions = _actions(record)
    reward, done, taken = 0.0, False, 0
    for action in actions:
        if done:
            break
        _, reward, terminated, truncated, info = await env.astep(action)
        done, taken = terminated or truncated, taken + 1
    differences = []
    if taken < len(actions):
        differences.append(Difference(key, "actions taken", len(actions), taken))
    elif _agent_failed(record) == done:
        want = "running (the agent failed)" if _agent_failed(record) else "ended"
        have = "ended" if done else "running after the last recorded action"
        differences.append(Difference(key, "episode end", want, have))
    if differences:
        return differences
    spec = EpisodeSpec(record.benchmark, record.task_index, record.repeat, record.seed)
    failure = record.error if _agent_failed(record) else None
    replayed = episode_record(spec, info, actions, reward, failure)
    if graders := recorded_graders(results):  # a re-scored file: graded as it was re-scored
        task = env.tasks[record.task_index]
        grader = grader_for(graders, task.grader)
        replayed = regrade(replayed, task, grader, reward_scheme(results))
    failed = method == "response cache" and record.outcome == "error"
    fields = _AFTER_FAILURE if failed else compared
    for field in fields:
        old: Any = getattr(record, field)
        new: Any = getattr(replayed, field)
        if _differs(field, old, new):
            if field == "error":
                old, new = (old or {}).get("kind"), (new or {}).get("kind")
            differences.append(Difference(key, field, old, new))
    return differences


async def _replay_all(
    results: Results,
    sources: Mapping[str, TaskSource],
    pool: WorkerPool,
    arguments: Mapping[str, Any],
    method: ReplayMethod,
    concurrency: int,
) -> Replay:
    run_budget = not _budget(results.pool.get("run_budget"), "run_budget").unlimited
    report = Replay(method, episodes=0)
    compared = compared_fields(results)
    todo: list[EpisodeRecord] = []
    for record in results.episodes:
        if record.benchmark not in sources:
            raise NotReplayable(f"episode {record.key}: no source {record.benchmark!r} here")
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
                    env = ConductorEnv(tasks=sources[record.benchmark], pool=pool, **arguments)
                    envs[record.benchmark] = env
                try:
                    differences = await _replay_one(env, record, method, compared, results)
                except Exception as exc:  # untrusted arguments may break an episode anywhere
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
    order = {record.key: n for n, record in enumerate(results.episodes)}
    for _, differences in sorted(found, key=lambda item: order[item[0]]):
        report.differences.extend(differences)
    return report


def replay_results(
    results: Results,
    sources: Mapping[str, TaskSource],
    *,
    cache: str | os.PathLike[str] | None = None,
    concurrency: int = 16,
) -> Replay:
    """Re-play every episode of ``results`` on ``sources`` (suite-source name -> the task
    source the run used) and compare (module docstring). ``cache``: the run's response
    cache file, needed when the pool has real workers (opened in replay mode, read only).

    Raises :class:`NotReplayable` when the run cannot be rebuilt here.
    """
    arguments = env_arguments(results.env_kwargs)
    opened: ResponseCache | None = None
    if cache is not None and any(w.backend != "simulated" for w in replay_specs(results)):
        from conductor_gym.workers.cache import CacheError, ResponseCache

        try:
            opened = ResponseCache(cache, mode="replay")
        except (OSError, CacheError) as exc:
            raise NotReplayable(f"response cache: {exc}") from None
    try:
        pool, method = _pool(results, opened)
        try:
            ConductorEnv(tasks=next(iter(sources.values())), pool=pool, **arguments).close()
        except (TypeError, ValueError) as exc:
            raise NotReplayable(f"env_kwargs: {exc}") from None
        runner = LoopRunner()
        with contextlib.closing(runner):
            return runner.run(_replay_all(results, sources, pool, arguments, method, concurrency))
    finally:
        if opened is not None:
            opened.close()
