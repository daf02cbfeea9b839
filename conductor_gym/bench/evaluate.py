"""Evaluate an agent on a suite: every task, ``repeats`` times, with resumable results.

Contract of :func:`evaluate` (and :func:`aevaluate`, its coroutine):

* **Episodes.** For each repeat ``r`` in ``0..repeats-1``, each source of the suite (in
  suite order) and each task index ``i`` of that source, one episode, reset with
  ``seed=`` :func:`conductor_gym.bench.suites.episode_seed` ``(seed, source, i, r)`` and
  ``options={"task_index": i}``. It is single-turn unless the env arguments enable
  recursion (``max_recursions``): then the agent is asked again on each new observation
  until the episode ends. Every env shares one :class:`~conductor_gym.pool.pool.WorkerPool`;
  a suite with a pool split (``"offline@heldout-workers"``) draws it over ``pool``.
* **Agents** act only through ``await agent.act_batch(observations, infos)``. Running
  episodes queue their requests; one ``act_batch`` call at a time takes up to
  ``concurrency`` of them. Each info the agent sees also carries ``agent_seed``, a seed
  derived from the episode seed and the round, for agents that sample.
  Reproducibility: an agent whose completions depend only on its inputs gives the same
  results whatever the batching. An agent with a sequential RNG is made so by a
  ``reseed(seed)`` method (the random planner has one): it is reseeded with
  ``agent_seed`` before each request, and its requests then go one per ``act_batch``
  call.
* **Agent-declared env arguments.** ``agent.env_overrides`` (a mapping, e.g.
  ``{"max_steps": 8}``) is applied to every env and recorded in ``env_kwargs`` and in
  ``agent["env_overrides"]``; a conflicting explicit env argument raises ``ValueError``.
* **Planner usage** goes to each episode's ``planner_tokens`` and ``planner_cost_usd``:
  from ``agent.last_usage`` after an ``act_batch`` call when it is a sequence aligned with
  that call's inputs (each ``None`` or a mapping or object with ``prompt_tokens``,
  ``completion_tokens``, ``cost_usd``); else from the completions the call appended to
  ``agent.completions`` (the ``llm:``/``policy:`` agents' log), each matched to the
  action with the same text, those left over (format retries) shared evenly.
* **Agent failures.** An :class:`~conductor_gym.agents.base.AgentError` (the agent's
  own model failed after its retries) makes the episodes it concerns infrastructure
  failures (outcome ``"error"``, ``error={"kind": "agent", ...}``), never scores; any
  other exception from the agent stops the run (finished episodes stay journaled).
* **Concurrency.** At most ``concurrency`` episodes are in flight, as coroutines
  stepping :meth:`ConductorEnv.astep` on one event loop.
* **Resumable.** With ``out`` (its folder is created when missing), every finished
  episode is appended (and flushed) as one JSON line of ``<out>.episodes.jsonl``, with a
  header beside it naming the run (suite fingerprint, agent, pool, env arguments, seed,
  repeats, env version:
  :func:`~conductor_gym.bench.results.open_journal`). With ``resume=True`` an existing
  journal with the same header is read: its scored episodes are kept and skipped, its
  infrastructure failures (outcome ``"error"``, never scored) are played again, so
  re-running a run that failed for infrastructure retries just what failed; a different
  header raises :class:`ResumeMismatchError` (how many episodes the journal holds, what
  differs, and to pass ``resume=False`` or another ``out``); a torn last line (a crash
  mid-write) is dropped. ``resume=False`` starts the journal afresh. At the end ``out``
  gets the :class:`~conductor_gym.bench.results.Results` JSON.
  Episodes are sorted into plan order, so a resumed run's results equal an
  uninterrupted run's (but for ``started_at`` and ``wall_time_s``).
* **Progress.** A tqdm bar on stderr (episodes, running accuracy, tokens, cost) when
  ``progress`` is true, stderr is a terminal and tqdm is installed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import importlib
import math
import os
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, cast

from conductor_gym._loop import run_sync
from conductor_gym._validate import is_int, require_int
from conductor_gym.bench.results import (
    SCHEMA,
    EpisodeRecord,
    Results,
    SuiteInfo,
    WorkerRecord,
    aggregate,
    journal_path,
    json_safe,
    open_journal,
)
from conductor_gym.bench.suites import (
    EpisodeSpec,
    Suite,
    TaskSelection,
    episode_plan,
    get_suite,
)
from conductor_gym.core.agent import Agent, AgentError, BaseAgent, as_base_agent
from conductor_gym.core.agent_spec import make_agent
from conductor_gym.core.config import EnvConfig
from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.episode import critical_path_s
from conductor_gym.core.info import ResetInfo, StepInfo
from conductor_gym.core.reward import Outcome
from conductor_gym.errors import ConfigurationError
from conductor_gym.pool.splits import with_pool_split
from conductor_gym.seeding import hash_seed
from conductor_gym.sim.worker import simulator_version

__all__ = [
    "Batcher",
    "aevaluate",
    "episode_record",
    "evaluate",
    "final_response",
    "recorded_settings",
    "run_config",
]

_RESERVED = ("tasks", "task_options")


def _resolve_agent(agent: str | Agent) -> tuple[BaseAgent, str]:
    """The agent with every hook declared, and the spec that names it."""
    if isinstance(agent, str):
        return as_base_agent(make_agent(agent)), agent
    resolved = as_base_agent(agent)
    spec = resolved.spec or f"{type(agent).__module__}:{type(agent).__qualname__}"
    return resolved, spec


def _describe_agent(agent: BaseAgent, spec: str, overrides: Mapping[str, Any]) -> dict[str, Any]:
    info: dict[str, Any] = json_safe(agent.describe())
    info.setdefault("name", agent.name)
    info["spec"] = spec
    if overrides:
        info["env_overrides"] = json_safe(overrides)
    info["seeding"] = "per-episode" if agent.reseeds else "agent"
    return info


def run_config(
    agent: BaseAgent, config: EnvConfig | None, settings: Mapping[str, Any]
) -> tuple[EnvConfig, dict[str, Any]]:
    """The run's config (``config`` with ``settings`` and the agent's ``env_overrides``
    applied) and the overrides. Raises :class:`~conductor_gym.errors.ConfigurationError`
    for a setting the suite gives (``tasks``, ``task_options``) or one that conflicts
    with the agent's overrides."""
    overrides = agent.env_overrides
    for key in _RESERVED:
        if key in settings or key in overrides:
            raise ConfigurationError(f"env setting {key!r} comes from the suite", field=key)
    for key, value in overrides.items():
        if key in settings and settings[key] != value:
            raise ConfigurationError(
                f"{settings[key]!r} conflicts with the agent's env_overrides {key}={value!r}",
                field=key,
            )
    explicit = {**settings, **overrides}
    return (config or EnvConfig()).replace(**explicit), dict(overrides)


_NOT_RECORDED = (*_RESERVED, "pool")
"""Settings results do not record as settings: the suite gives the tasks; the pool is
recorded as the results' ``pool`` and ``workers``."""


def recorded_settings(config: EnvConfig) -> dict[str, Any]:
    """The env settings as results record them (``Results.env_kwargs``): the settings of
    ``config`` that are not :class:`EnvConfig`'s defaults, as :meth:`EnvConfig.to_dict`
    writes them, less :data:`_NOT_RECORDED`. A cache given as an object (not a file) is
    not recorded: no record can reopen it."""
    kept = {name: getattr(config, name) for name in EnvConfig.model_fields}
    for name in _NOT_RECORDED:
        del kept[name]
    if not (kept["cache"] is None or isinstance(kept["cache"], str)):
        kept["cache"] = None
    data = EnvConfig(**kept).to_dict()
    defaults = EnvConfig().to_dict()
    return {name: data[name] for name in kept if data[name] != defaults[name]}


_Usage = tuple[int, int, float]
"""``(prompt_tokens, completion_tokens, cost_usd)``."""


def _cost(item: Any) -> _Usage:
    """The :data:`_Usage` of a usage mapping or object."""

    def get(key: str) -> float:
        value = item.get(key, 0) if isinstance(item, Mapping) else getattr(item, key, 0)
        return float(value or 0)

    return int(get("prompt_tokens")), int(get("completion_tokens")), get("cost_usd")


def _part(total: int, parts: int, rank: int) -> int:
    """Share ``rank`` of ``total`` split into ``parts`` integers that differ by at most 1."""
    return total // parts + (1 if rank % parts < total % parts else 0)


def _usage(agent: BaseAgent, actions: Sequence[str], before: int | None) -> list[_Usage]:
    """Planner usage per action of the last ``act_batch`` call (module docstring):
    ``agent.last_usage`` when aligned, else the new ``agent.completions`` matched to the
    actions by text, the unmatched rest shared evenly; else nothing."""
    n = len(actions)
    aligned = agent.last_usage
    if aligned is not None and len(aligned) == n:
        return [(0, 0, 0.0) if item is None else _cost(item) for item in aligned]
    log = agent.completions
    if before is None or log is None:
        return [(0, 0, 0.0)] * n
    unused: dict[str, list[_Usage]] = {}
    for item in log[before:]:
        unused.setdefault(str(getattr(item, "text", "")), []).append(_cost(item))
    matched = [unused[a].pop(0) if unused.get(a) else None for a in actions]
    rest = [u for group in unused.values() for u in group]
    share = [i for i, m in enumerate(matched) if m is None] or list(range(n))
    prompt, completion = sum(u[0] for u in rest), sum(u[1] for u in rest)
    cost = math.fsum(u[2] for u in rest)
    result = [m or (0, 0, 0.0) for m in matched]
    k = len(share)
    for rank, i in enumerate(share):
        p, c, usd = result[i]
        # The completion remainder continues where the prompt remainder stopped, so each
        # share's total tokens are the even split of prompt + completion tokens.
        result[i] = (
            p + _part(prompt, k, rank),
            c + _part(completion, k, rank - prompt % k),
            usd + cost / k,
        )
    return result


def _spent(last: StepInfo | None) -> dict[str, Any]:
    """The record fields of what an episode spent (nothing when its agent failed before
    the first plan)."""
    if last is None:
        return dict(steps=0, worker_calls=0, prompt_tokens=0, completion_tokens=0,
                    cost_usd=0.0, latency_s=0.0)  # fmt: skip
    return {
        "steps": sum(len(r.plan) for r in last["rounds"] if r.plan is not None),
        "worker_calls": last["worker_calls"],
        "prompt_tokens": last["prompt_tokens"],
        "completion_tokens": last["completion_tokens"],
        "cost_usd": last["cost_usd"],
        "latency_s": last["latency_s"],
    }


_Answer = tuple[str | None, int, int, float, dict[str, Any] | None]
"""An agent's answer to one request: action (``None`` on failure), prompt tokens,
completion tokens, cost, error."""


@dataclasses.dataclass
class _Request:
    observation: str
    info: dict[str, Any]
    seed: int
    future: asyncio.Future[_Answer]


class Batcher:
    """Collects the running episodes' requests into ``act_batch`` calls, one at a time.

    An :class:`~conductor_gym.agents.base.AgentError` (the agent's model failed after its
    retries) fails only the requests it concerns: a failed batch is retried one request
    per call, and a request that fails alone gets an ``{"kind": "agent", ...}`` error.
    Any other exception fails every waiting request (the run stops).
    """

    def __init__(self, agent: BaseAgent, max_batch: int) -> None:
        self.agent = agent
        self.max_batch = 1 if agent.reseeds else max_batch
        self._queue: list[_Request] = []
        self._drainer: asyncio.Task[None] | None = None

    async def act(self, observation: str, info: dict[str, Any], seed: int) -> _Answer:
        future: asyncio.Future[_Answer] = asyncio.get_running_loop().create_future()
        self._queue.append(_Request(observation, {**info, "agent_seed": seed}, seed, future))
        if self._drainer is None or self._drainer.done():
            self._drainer = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        await asyncio.sleep(0)  # let every episode that is ready queue its request
        while self._queue:
            batch, self._queue = self._queue[: self.max_batch], self._queue[self.max_batch :]
            try:
                answers = await self._call(batch)
            except Exception as exc:
                for request in (*batch, *self._queue):
                    if not request.future.done():
                        request.future.set_exception(exc)
                self._queue = []
                return
            for request, answer in zip(batch, answers, strict=True):
                if not request.future.done():
                    request.future.set_result(answer)

    def close(self) -> None:
        """Stop; a ``KeyboardInterrupt`` from the agent has already left the loop, so
        mark it retrieved (asyncio would log it again)."""
        if self._drainer is not None and not self._drainer.done():
            self._drainer.cancel()
        elif self._drainer is not None and not self._drainer.cancelled():
            self._drainer.exception()

    async def _call(self, batch: list[_Request]) -> list[_Answer]:
        try:
            return await self._ask(batch)
        except AgentError as exc:
            if len(batch) == 1:
                return [(None, 0, 0, 0.0, exc.to_dict())]
        return [(await self._call([request]))[0] for request in batch]

    async def _ask(self, batch: list[_Request]) -> list[_Answer]:
        if self.agent.reseeds:
            self.agent.reseed(batch[0].seed)
        log = self.agent.completions
        before = len(log) if log is not None else None
        actions = await self.agent.act_batch(
            [r.observation for r in batch], [r.info for r in batch]
        )
        if len(actions) != len(batch) or not all(isinstance(a, str) for a in actions):
            raise TypeError(f"act_batch must return {len(batch)} strings, got {actions!r:.200}")
        usage = _usage(self.agent, actions, before)
        return [(a, p, c, usd, None) for a, (p, c, usd) in zip(actions, usage, strict=True)]


async def _play(env: ConductorEnv, spec: EpisodeSpec, batcher: Batcher) -> EpisodeRecord:
    observation, info = env.reset(seed=spec.seed, options={"task_index": spec.task_index})
    actions: list[str] = []
    planner_tokens, planner_cost, reward = 0, 0.0, 0.0
    while True:
        action, prompt_tokens, completion_tokens, cost, failure = await batcher.act(
            observation, dict(info), hash_seed("agent", spec.seed, len(actions))
        )
        planner_tokens += prompt_tokens + completion_tokens
        planner_cost += cost
        if action is None:
            break
        actions.append(action)
        observation, reward, terminated, truncated, info = await env.astep(action)
        if terminated or truncated:
            break
    return episode_record(spec, info, actions, reward, failure, planner_tokens, planner_cost)


def final_response(rounds: Sequence[Any]) -> str | None:
    """The answer an episode ends on: the last executed step's response over ``rounds``
    (a stop round runs nothing and keeps the previous answer)."""
    for round_ in reversed(rounds):
        if round_.trace is not None and round_.trace.steps:
            return str(round_.trace.final_response)
    return None


def episode_record(
    spec: EpisodeSpec,
    info: ResetInfo | StepInfo,
    actions: Sequence[str],
    reward: float,
    failure: Mapping[str, Any] | None = None,
    planner_tokens: int = 0,
    planner_cost: float = 0.0,
) -> EpisodeRecord:
    """The record of one episode played from ``spec``'s reset: ``info`` is the env's last
    info (after ``reset`` when no action was taken), ``actions`` the agent's actions,
    ``reward`` the last step's reward and ``failure`` the agent's error (which makes the
    episode an infrastructure failure)."""
    last = cast(StepInfo, info) if "rounds" in info else None  # a step was played
    ended = None if failure else last
    outcome = Outcome.ERROR if ended is None else ended["outcome"]
    assert outcome is not None, "an episode is recorded once it has ended"
    parse_error = None if ended is None else ended["parse_error"]
    error = failure or (None if last is None else last["error"])
    grade = None if ended is None else ended["grade"]
    return EpisodeRecord(
        benchmark=spec.benchmark,
        domain=info["domain"],
        task_index=spec.task_index,
        task_id=info["task_id"],
        repeat=spec.repeat,
        seed=spec.seed,
        reward=0.0 if failure else float(reward),
        outcome=outcome,
        correct=outcome == Outcome.CORRECT,
        parse_error=str(parse_error["reason"]) if parse_error else None,
        error=json_safe(error) if error else None,
        **_spent(last),
        critical_path_s=critical_path_s(last["rounds"]) if last is not None else 0.0,
        planner_tokens=planner_tokens,
        planner_cost_usd=planner_cost,
        completion=actions[0] if actions else "",
        followups=list(actions[1:]),
        final_response=final_response(last["rounds"]) if grade and last else None,
        final_answer=grade.extracted if grade is not None else None,
        grade_reason=grade.reason if grade is not None else None,
    )


class _Progress:
    """The tqdm bar (or nothing) with running accuracy, tokens and cost."""

    def __init__(self, total: int, done: Sequence[EpisodeRecord], enabled: bool) -> None:
        self.scored = self.correct = self.tokens = 0
        self.cost = 0.0
        for record in done:
            self._count(record)
        self.bar: Any = None
        if enabled and sys.stderr.isatty():
            try:
                tqdm = importlib.import_module("tqdm").tqdm
            except ImportError:
                return
            self.bar = tqdm(total=total, initial=len(done), unit="ep", desc="evaluate")
            self.bar.set_postfix_str(self._postfix(), refresh=False)

    def _count(self, record: EpisodeRecord) -> None:
        self.scored += record.outcome != Outcome.ERROR
        self.correct += record.correct
        self.tokens += record.prompt_tokens + record.completion_tokens + record.planner_tokens
        self.cost += record.cost_usd + record.planner_cost_usd

    def _postfix(self) -> str:
        accuracy = self.correct / self.scored if self.scored else 0.0
        return f"acc={accuracy:.3f} tokens={self.tokens:,} cost=${self.cost:.4f}"

    def add(self, record: EpisodeRecord) -> None:
        self._count(record)
        if self.bar is not None:
            self.bar.set_postfix_str(self._postfix(), refresh=False)
            self.bar.update(1)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


async def aevaluate(
    agent: str | Agent,
    suite: str | Suite,
    *,
    config: EnvConfig | None = None,
    repeats: int = 4,
    seed: int = 0,
    concurrency: int = 64,
    out: str | os.PathLike[str] | None = None,
    resume: bool = True,
    limit: int | None = None,
    progress: bool = True,
    task_selection: TaskSelection | None = None,
    **settings: Any,
) -> Results:
    """:func:`evaluate` as a coroutine, for callers that already run an event loop."""
    require_int("repeats", repeats)
    require_int("concurrency", concurrency)
    if not is_int(seed):
        raise ConfigurationError(f"seed: must be an int, got {seed!r}")
    clock = time.monotonic()
    if isinstance(suite, str):
        suite = get_suite(suite, limit=limit)
    elif limit is not None:
        suite = suite.with_limit(limit)
    agent, spec = _resolve_agent(agent)
    the_config, overrides = run_config(agent, config, settings)
    if suite.pool_split is not None:  # the suite pairs its tasks with a pool split
        the_config = the_config.replace(pool=with_pool_split(the_config.pool, suite.pool_split))
    # A cache this run opens from a path is closed at its end, so the file is complete.
    owns_cache = isinstance(the_config.cache, str | os.PathLike)
    shared_pool = the_config.build_pool()
    configs = {
        name: the_config.replace(
            tasks=source, pool=shared_pool, k=None, shuffle_workers=None, cache=None
        )
        for name, source in suite.sources.items()
    }
    envs = {name: [ConductorEnv(configs[name])] for name in suite.sources}
    import conductor_gym

    header: dict[str, Any] = {
        "schema": SCHEMA,
        "env_id": conductor_gym.ENV_ID,
        "env_version": conductor_gym.__version__,
        "suite": SuiteInfo.model_validate(
            {**suite.info(), "tasks": None if task_selection is None else task_selection.info()}
        ).model_dump(),
        # which simulator answered (issue 11: v1 / v2), so results say it in words too
        "pool": {**json_safe(shared_pool.describe()), "simulator": simulator_version(shared_pool)},
        "workers": [WorkerRecord.from_spec(s).model_dump(mode="json") for s in shared_pool.specs],
        "agent": _describe_agent(agent, spec, overrides),
        # the settings, once (the pool is recorded as "pool" and "workers")
        "env_kwargs": recorded_settings(the_config),
        "repeats": repeats,
        "seed": seed,
        "started_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }
    plan = episode_plan(suite, repeats, seed, task_selection)
    if not plan and task_selection is not None:
        raise ConfigurationError(
            f"suite {suite.name!r}: the task selection {task_selection.info()} keeps no task"
        )
    order = {s.key: n for n, s in enumerate(plan)}
    journal: IO[str] | None = None
    done: dict[tuple[str, int, int], EpisodeRecord] = {}
    started_at = header["started_at"]
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        journal, loaded, started_at = open_journal(journal_path(out), header, resume)
        latest = {r.key: r for r in loaded if r.key in order}  # a retried failure: its last
        done = {key: r for key, r in latest.items() if r.outcome != Outcome.ERROR}
    todo = iter([s for s in plan if s.key not in done])
    batcher = Batcher(agent, concurrency)
    bar = _Progress(len(plan), list(done.values()), progress)

    async def worker(todo: Iterator[EpisodeSpec]) -> None:
        for episode in todo:
            idle = envs[episode.benchmark]
            env = idle.pop() if idle else ConductorEnv(configs[episode.benchmark])
            try:
                record = await _play(env, episode, batcher)
            finally:
                idle.append(env)
            done[record.key] = record
            if journal is not None:
                journal.write(record.model_dump_json() + "\n")
                journal.flush()
            bar.add(record)

    tasks = [asyncio.create_task(worker(todo)) for _ in range(min(concurrency, len(plan)))]
    try:
        await asyncio.gather(*tasks)
    finally:
        for task in tasks:
            task.cancel()
        batcher.close()
        bar.close()
        if journal is not None:
            journal.close()
        for idle in envs.values():
            for env in idle:
                env.close()
        if owns_cache and shared_pool.cache is not None:
            shared_pool.cache.close()
    episodes = sorted(done.values(), key=lambda r: order[r.key])
    results = Results(
        env_id=header["env_id"],
        env_version=header["env_version"],
        suite=header["suite"],
        pool=header["pool"],
        workers=header["workers"],
        agent=header["agent"],
        env_kwargs=header["env_kwargs"],
        repeats=repeats,
        seed=seed,
        started_at=started_at,
        wall_time_s=time.monotonic() - clock,
        metrics=aggregate(episodes, repeats),
        episodes=episodes,
    )
    if out is not None:
        results.dump(out)
    return results


def evaluate(
    agent: str | Agent,
    suite: str | Suite,
    *,
    config: EnvConfig | None = None,
    repeats: int = 4,
    seed: int = 0,
    concurrency: int = 64,
    out: str | os.PathLike[str] | None = None,
    resume: bool = True,
    limit: int | None = None,
    progress: bool = True,
    task_selection: TaskSelection | None = None,
    **settings: Any,
) -> Results:
    """Run ``agent`` (an :class:`~conductor_gym.agents.Agent` or a ``make_agent`` spec) on
    every task of ``suite`` (a :class:`~conductor_gym.bench.suites.Suite` or a suite name)
    ``repeats`` times and return the :class:`~conductor_gym.bench.results.Results` (module
    docstring). ``limit`` keeps the first ``limit`` tasks of each source; ``task_selection`` (a
    :class:`~conductor_gym.bench.suites.TaskSelection`) plays some of them, each with the
    index and seed it has in a whole run, and is recorded in ``suite.tasks``. The episodes'
    settings are ``config`` (an :class:`~conductor_gym.core.config.EnvConfig`, default: all
    defaults) with ``settings`` (its fields as keywords: ``pool``, ``k``,
    ``shuffle_workers``, ``max_steps``, ``reward``, ``cache``, ...) and the agent's
    ``env_overrides`` applied; the suite gives the tasks."""
    coroutine = aevaluate(
        agent,
        suite,
        config=config,
        repeats=repeats,
        seed=seed,
        concurrency=concurrency,
        out=out,
        resume=resume,
        limit=limit,
        progress=progress,
        task_selection=task_selection,
        **settings,
    )
    return run_sync(coroutine)
