"""Read a stored run, and re-play its episodes through the env from their completions.

Contract.

* :func:`load_results` reads a results file (``conductor-gym evaluate --out``) or the
  episodes journal of a run (``<out>.episodes.jsonl``, finished or not) as
  :class:`~conductor_gym.bench.results.Results`, through the schema's own loaders.
* :class:`Replayer` rebuilds what a run ran: its suite (the recorded fingerprint must
  be the suite's now), its pool (the recorded workers must be the pool's) and its env
  arguments. :meth:`Replayer.replay` resets an env with a record's seed and task index,
  steps it with the record's completions and returns the new record with the step info
  (:class:`Replayed`). With ``graders`` (by default, the graders a re-scored file
  records), the final answer is then re-graded by other graders (:func:`regrade`): the
  workers always see the task as it is.
* **No backend is ever called.** A pool whose workers are all simulated is re-played as
  it is (the simulated pool is a function of the seeds and the messages). Any other pool
  needs the run's response cache, opened in mode ``"replay"``: a call the recorded run
  did not make raises :class:`~conductor_gym.workers.cache.ReplayMiss` inside the env,
  the episode ends as an infrastructure failure and :attr:`Replayed.miss` is true.

Errors that make a replay impossible (a changed suite, another pool, env arguments
recorded as type names only, a real pool without a cache, task data that needs a
download) raise :class:`ReplayError`, naming what differs.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, cast

from conductor_gym.bench.evaluate import episode_record
from conductor_gym.bench.results import EpisodeRecord, Results, aggregate, read_journal
from conductor_gym.bench.suites import EpisodeSpec, LimitedTasks, Suite, get_suite
from conductor_gym.core.budget import Budget
from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.execute import RetryPolicy
from conductor_gym.core.info import ResetInfo, StepInfo
from conductor_gym.core.reward import Outcome, RewardScheme, make_reward_scheme
from conductor_gym.graders import Grade, GraderError, grade
from conductor_gym.pool.base import WorkerPool, make_pool
from conductor_gym.tasks import ProceduralTasks, Task, TaskSource

__all__ = [
    "RECORDED",
    "GraderChoice",
    "ReplayError",
    "Replayed",
    "Replayer",
    "env_argument",
    "env_arguments",
    "grader_for",
    "is_simulated",
    "load_results",
    "offline_sources",
    "recorded_graders",
    "recorded_task",
    "regrade",
    "reward_scheme",
    "run_sources",
]

GraderChoice = str | Mapping[str, str] | None
"""Which grader grades a task: ``None`` its own; a name, every task; a mapping, the
tasks whose grader is a key (the others keep theirs)."""

RECORDED = "recorded"
"""For :class:`Replayer`: grade as the run was last graded (:func:`recorded_graders`)."""

# Recorded env arguments that json_safe wrote as {"type": name, **fields} and that can be
# rebuilt from those fields. (EnvConfig will record every argument as data.)
_REBUILT: dict[str, type[Any]] = {
    "RewardScheme": RewardScheme,
    "RetryPolicy": RetryPolicy,
    "Budget": Budget,
}
_POOL_ARGUMENTS = ("k", "shuffle_workers", "cache")  # recorded in the pool description


class ReplayError(ValueError):
    """A stored run cannot be re-played here (the message says what differs)."""


def load_results(path: str | os.PathLike[str]) -> Results:
    """The run in ``path``: a results JSON file, or an episodes journal (a JSON Lines
    file whose first line is ``{"header": ...}``), whose metrics are then computed from
    its records (``wall_time_s`` is 0: the run may not have finished). Raises
    ``ValueError`` (pydantic's ``ValidationError`` among them) for a malformed file."""
    path = Path(path)
    with path.open(encoding="utf-8") as handle:
        first = handle.readline()
    try:
        is_journal = isinstance(json.loads(first), dict) and "header" in json.loads(first)
    except ValueError:
        is_journal = False  # an indented results file: its first line is "{"
    if not is_journal:
        return Results.load(path)
    header, records = read_journal(path)
    repeats = int(header.get("repeats", 1))
    latest = {r.key: r for r in records}  # one record per episode
    sources = [s.get("name") for s in header.get("suite", {}).get("sources", ())]
    position = {name: n for n, name in enumerate(sources)}
    ordered = sorted(  # the order of evaluate's plan: repeat, source, task
        latest.values(),
        key=lambda r: (r.repeat, position.get(r.benchmark, len(position)), r.task_index),
    )
    return Results.model_validate(
        {
            **header,
            "wall_time_s": 0.0,
            "metrics": aggregate(ordered, repeats),
            "episodes": ordered,
        }
    )


def is_simulated(results: Results) -> bool:
    """Whether every worker of the run's pool is simulated (a replay then needs no cache)."""
    workers = results.pool.get("workers") or []
    return bool(workers) and all(
        isinstance(w, Mapping) and w.get("backend") == "simulated" for w in workers
    )


def offline_sources(suite: Suite) -> dict[str, TaskSource] | None:
    """The suite's task sources when every one can be read here without a download
    (procedural sources; others whose ``offline_available()`` says so), else ``None``."""
    sources = suite.sources  # building a source reads no data
    for source in sources.values():
        inner = source.source if isinstance(source, LimitedTasks) else source
        if isinstance(inner, ProceduralTasks):
            continue
        check = getattr(inner, "offline_available", None)
        if not (callable(check) and check()):
            return None
    return sources


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
    """The run's reward scheme (``env_kwargs.reward``); ``ValueError`` for a run whose
    reward blends two rounds (``initial_round_weight > 0``: the initial answer is not
    stored, so an outcome cannot be re-scored)."""
    if results.env_kwargs.get("initial_round_weight"):
        raise ValueError(
            "env_kwargs.initial_round_weight > 0: the reward blends the initial answer, "
            "which results do not store; this run cannot be re-scored"
        )
    return make_reward_scheme(env_argument("reward", results.env_kwargs.get("reward", "paper")))


def regrade(record: EpisodeRecord, task: Task, grader: str, scheme: RewardScheme) -> EpisodeRecord:
    """``record`` with its ``final_response`` graded anew by ``grader`` against ``task``:
    outcome, ``correct``, reward (``scheme``), ``final_answer`` and ``grade_reason``
    follow the new grade; a grader that fails makes it an infrastructure failure
    (``error={"kind": "grader", ...}``), as in the env. Records of episodes that were not
    graded (invalid plans, failures) come back as they are; a graded one without a
    stored response raises ``ValueError``."""
    if record.outcome not in ("correct", "wrong"):
        return record
    if record.final_response is None:
        raise ValueError(
            f"episode {record.key} stores no final answer (the file was written before "
            "answers were recorded): re-score it with replay instead"
        )
    try:
        verdict = grade(grader, record.final_response, task.reference, **task.metadata)
    except GraderError as exc:
        error = {"kind": "grader", "grader": grader, "message": str(exc)}
        failed = {"outcome": "error", "correct": False, "reward": 0.0, "error": error}
        return record.model_copy(update={**failed, "final_answer": None, "grade_reason": None})
    outcome = Outcome.CORRECT if verdict.correct else Outcome.WRONG
    update = {
        "outcome": outcome.value,
        "correct": verdict.correct,
        "reward": scheme(outcome),
        "final_answer": verdict.extracted,
        "grade_reason": verdict.reason,
    }
    return record.model_copy(update=update)


def env_argument(key: str, value: Any) -> Any:
    """One recorded env argument rebuilt from its JSON form (``{"type": "RewardScheme",
    ...}`` becomes the object); one recorded only as a type name (``"<PromptTemplates>"``)
    raises :class:`ReplayError`."""
    if isinstance(value, Mapping) and value.get("type") in _REBUILT:
        fields = {k: v for k, v in value.items() if k != "type"}
        return _REBUILT[str(value["type"])](**fields)
    if isinstance(value, str) and value.startswith("<") and value.endswith(">"):
        raise ReplayError(
            f"env_kwargs.{key} was recorded as {value!r}, a type name and not its data: "
            "the run cannot be re-played from the file"
        )
    return value


def env_arguments(recorded: Mapping[str, Any]) -> dict[str, Any]:
    """The env arguments of a run rebuilt from its recorded ``env_kwargs``
    (:func:`env_argument`); the pool's ``k``, ``shuffle_workers`` and ``cache`` are left
    to the pool."""
    return {
        key: env_argument(key, value)
        for key, value in recorded.items()
        if key not in _POOL_ARGUMENTS
    }


def run_sources(results: Results) -> dict[str, TaskSource]:
    """The task sources of the run's suite, checked: readable offline here, and with
    the recorded fingerprint (else :class:`ReplayError`)."""
    suite = get_suite(results.suite.name, limit=results.suite.limit)
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
    """

    record: EpisodeRecord
    info: dict[str, Any]
    task: Task
    completions: tuple[str, ...]
    miss: bool


def _recorded_actions(record: EpisodeRecord) -> list[str]:
    """What the agent answered, in order. An agent failure before any answer is recorded
    as ``completion=""`` with an ``"agent"`` error: nothing to play then."""
    agent_failed = record.outcome == "error" and (record.error or {}).get("kind") == "agent"
    if agent_failed and not record.completion and not record.followups:
        return []
    return [record.completion, *record.followups]


class Replayer:
    """Re-plays the episodes of ``results`` (module docstring).

    Args:
        results: The stored run.
        cache: The run's response-cache file, opened in replay mode (needed for any pool
            that is not all simulated).
        pool: The pool to rebuild (a preset name or a pool file) when the recorded name
            is not one (a pool file's name); its workers must be the recorded ones.
        graders: Which graders grade the tasks (:data:`GraderChoice`); by default
            (:data:`RECORDED`) those that graded the run (:func:`recorded_graders`), so
            the re-play of a re-scored file reproduces it.
    """

    def __init__(
        self,
        results: Results,
        *,
        cache: str | os.PathLike[str] | None = None,
        pool: str | os.PathLike[str] | None = None,
        graders: GraderChoice | Literal["recorded"] = RECORDED,
    ) -> None:
        self.results = results
        sources = run_sources(results)
        self.pool = self._pool(cache, pool)
        kwargs = env_arguments(results.env_kwargs)
        self.graders = recorded_graders(results) if graders == RECORDED else graders
        self.scheme = reward_scheme(results) if self.graders is not None else None
        self.sources = sources
        self.envs = {
            name: ConductorEnv(tasks=source, pool=self.pool, **kwargs)
            for name, source in self.sources.items()
        }

    def _pool(
        self, cache: str | os.PathLike[str] | None, pool: str | os.PathLike[str] | None
    ) -> WorkerPool:
        recorded = self.results.pool
        workers = recorded.get("workers") or []
        if cache is None and not is_simulated(self.results):
            backends = sorted({str(w.get("backend")) for w in workers if isinstance(w, Mapping)})
            raise ReplayError(
                f"pool {recorded.get('name')!r} has workers on backends {backends}: a replay "
                "without the run's response cache would call them; pass the cache"
            )
        spec = pool if pool is not None else recorded.get("name")
        if not isinstance(spec, str | os.PathLike):
            raise ReplayError("the run's pool has no name: pass the pool to rebuild")
        response_cache = None
        if cache is not None:
            from conductor_gym.workers.cache import ResponseCache

            try:
                response_cache = ResponseCache(cache, mode="replay")
            except FileNotFoundError as exc:
                raise ReplayError(str(exc)) from None
        try:
            built = make_pool(
                spec, k=recorded.get("k"), shuffle=recorded.get("shuffle"), cache=response_cache
            )
        except ValueError as exc:
            raise ReplayError(f"cannot rebuild the run's pool: {exc}") from None
        have = built.describe()["workers"]
        if have != workers:
            raise ReplayError(
                f"pool {os.fspath(spec)!r} has workers {have} but the run had {workers}: "
                "pass the run's own pool"
            )
        return built

    def replay(self, record: EpisodeRecord) -> Replayed:
        """Re-play one recorded episode (see :class:`Replayed`)."""
        task = recorded_task(self.sources, record)
        env = self.envs[record.benchmark]
        _, last = env.reset(seed=record.seed, options={"task_index": record.task_index})
        info: ResetInfo | StepInfo = last
        played: list[str] = []
        reward, done = 0.0, False
        for action in _recorded_actions(record):
            played.append(action)
            _, reward, terminated, truncated, info = env.step(action)
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
            graded = new.outcome in ("correct", "wrong")
            verdict = Grade(new.correct, new.final_answer, new.grade_reason or "")
            view: dict[str, Any] = {
                **info,
                "outcome": new.outcome,
                "grade": verdict if graded else None,
                "error": new.error if new.outcome == "error" else info.get("error"),
            }
            return Replayed(new, view, task, tuple(played), miss)
        return Replayed(new, dict(info), task, tuple(played), miss)

    def close(self) -> None:
        """Close the envs (and the cache's connection)."""
        for env in self.envs.values():
            env.close()
        if self.pool.cache is not None:
            self.pool.cache.close()
