"""The results schema of ``conductor-gym evaluate`` and of leaderboard submissions.

Contract. A results file is one JSON object, :class:`Results` (schema
``"conductor-gym/results/v4"``), holding what ran (env version, suite with its
fingerprints, pool, every worker's settings, agent, env settings, repeats, seed), one
:class:`EpisodeRecord` per episode, and :class:`Metrics` per benchmark and ``"overall"``,
computed by :func:`aggregate`, a pure, deterministic function of the records (a
leaderboard recomputes the metrics from the episodes and compares, and re-plays the
episodes, :mod:`conductor_gym.bench.replay`), and per task family (the episodes'
``domain``, over every benchmark) in ``domain_metrics`` (:func:`aggregate_domains`). Every
model forbids unknown fields.

The env settings are recorded once, in :attr:`Results.env_kwargs`: the settings of the
run's :class:`~conductor_gym.core.config.EnvConfig` that are not its defaults, as
:meth:`~conductor_gym.core.config.EnvConfig.to_dict` writes them, less the task source
(the suite's) and the pool (recorded as :attr:`Results.pool` and
:attr:`Results.workers`). :meth:`~conductor_gym.core.config.EnvConfig.from_dict` reads
them back (:mod:`conductor_gym.bench.replay`).

Versions. ``v4`` adds ``domain_metrics``: always computed from the episodes (a stored
copy is recomputed when read, so it can never disagree with them), written only by ``v4``
files (an older file keeps its tag and is written without it, so older readers, which
forbid unknown keys, still read it). ``v3`` records the env settings once: ``v2`` had a second copy,
``env_config``, that nothing read, and wrote a dataclass setting as
``{"type": "RewardScheme", ...}``. ``v2`` added :attr:`Results.workers` (one
:class:`WorkerRecord` per configured worker: what a re-play needs to rebuild the pool)
and :attr:`EpisodeRecord.final_answer`. Older files still load (:meth:`Results.load`,
:func:`load_results`) and keep their tag: their ``env_config`` is dropped, their
``env_kwargs`` read as ``v3`` writes them (a ``{"type": name, **fields}`` setting as its
fields; ``render_mode``, which never changed an episode, left out); a ``v1`` file's
``workers`` and ``final_answer`` are ``None``. A simulated worker's record names its
simulator version in ``options``; one recorded without it (files written while v2 was the
default) reads as :data:`UNVERSIONED_SIMULATOR`, so it re-plays on the simulator it ran,
and such a file's pool ``sim-paper`` reads as ``sim-paper-v2``, the name that preset has now.

Metric definitions (:func:`aggregate`), over a set of episodes:

* ``n``: every episode, infrastructure failures included.
* ``infra_failures``: episodes with outcome ``"error"`` (a worker failed after retries,
  the grader failed, or a budget ran out). An infrastructure failure is not a score: it
  is counted in ``n`` and here, and **excluded** from ``accuracy``, ``mean_reward``,
  ``parse_failure_rate`` and their standard errors. The *scored* episodes are the others.
* ``accuracy``: mean of ``correct`` over the scored episodes (0.0 when there are none).
* ``mean_reward``: mean of ``reward`` over the scored episodes (0.0 when there are none).
* ``accuracy_se`` / ``mean_reward_se``: the paper's standard error over repeats: take the
  mean over the scored episodes of each repeat (``repeat`` index) that has any, then the
  sample standard deviation (``ddof=1``) of those per-repeat means divided by the square
  root of their number. ``None`` when ``repeats < 2`` or fewer than two repeats have a
  scored episode.
* ``parse_failure_rate``: fraction of the scored episodes whose outcome is
  ``"invalid"`` (the plan did not parse or was rejected).
* ``mean_steps``: mean of ``steps`` over the episodes with ``steps > 0`` (those whose
  plan parsed): steps per plan, summed over the rounds of a multi-turn episode.
* ``mean_worker_calls``, ``tokens_per_sample`` (``prompt_tokens + completion_tokens +
  planner_tokens``), ``cost_per_sample_usd`` (``cost_usd + planner_cost_usd``): means over
  **all** episodes, failures included (what was spent was spent).

Sums use :func:`math.fsum`, so the result does not depend on the order of the records.

The episodes journal (:func:`open_journal`) is the resumable form of a run in progress:
``<out>.episodes.jsonl`` holds one :class:`EpisodeRecord` per line in order of completion
and nothing else, so ``pandas.read_json(path, lines=True)`` reads it as a table with exact
integer seeds (63-bit seeds stay ``int64``); the header naming the run is beside it, in
``<out>.episodes.jsonl.header`` (:func:`journal_header_path`: a name no ``*.json`` glob
matches, so ``sim fit runs*.json`` reads results files only). Journals of the older forms
(a first line ``{"header": {...}}``, whose empty cells made pandas read every seed as a
float; a header in ``<out>.episodes.header.json``) still read, and are rewritten in the
new form when a run resumes them.

:func:`load_runs` reads many files for a command: a file that is no results file (a
journal header, any other JSON) is skipped with a message, a malformed results file
raises.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    computed_field,
    model_serializer,
    model_validator,
)

from conductor_gym.core.reward import Outcome
from conductor_gym.errors import ConfigurationError

if TYPE_CHECKING:
    from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "OUTCOMES",
    "SCHEMA",
    "SCHEMAS",
    "EpisodeRecord",
    "GraderInfo",
    "Metrics",
    "RescoreInfo",
    "Results",
    "ResumeMismatchError",
    "SourceInfo",
    "SuiteInfo",
    "WorkerRecord",
    "aggregate",
    "aggregate_domains",
    "format_usd",
    "is_journal",
    "journal_header_path",
    "journal_path",
    "json_safe",
    "load_results",
    "load_runs",
    "not_results",
    "open_journal",
    "read_journal",
]

SchemaTag = Literal[
    "conductor-gym/results/v1",
    "conductor-gym/results/v2",
    "conductor-gym/results/v3",
    "conductor-gym/results/v4",
]
SCHEMA: SchemaTag = "conductor-gym/results/v4"
"""The ``schema`` value of every :class:`Results` file this version writes."""

SCHEMAS: tuple[SchemaTag, ...] = (
    "conductor-gym/results/v1",
    "conductor-gym/results/v2",
    "conductor-gym/results/v3",
    SCHEMA,
)
"""Every ``schema`` value :meth:`Results.load` reads, oldest first."""

RECORDED_OPTIONS = ("simulated",)
"""Backends whose ``backend_options`` a :class:`WorkerRecord` keeps: the simulated
backend's options change its answers; real backends' options hold endpoints and
credentials, never recorded (their answers re-play from the response cache)."""

UNVERSIONED_SIMULATOR = "v2"
"""The simulator version of a simulated worker recorded without a ``version`` option: the
default when every such file was written (simulator v2 was the default from the first
file with worker records until v3; records written since name their version)."""

OUTCOMES = tuple(o.value for o in Outcome)
"""Episode outcomes as files hold them: the :class:`~conductor_gym.core.reward.Outcome`
values the env reports in ``info["outcome"]``."""

OVERALL = "overall"
"""The metrics key over every benchmark."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EpisodeRecord(_Model):
    """One finished episode.

    Attributes:
        benchmark: The suite's name for the task source the task came from (``"offline"``,
            ``"math500"``, ...).
        domain: The task's domain.
        task_index: Index of the task in its source (``reset(options={"task_index": ...})``).
        task_id: The task's id.
        repeat: Which repeat of the task this is (0-based).
        seed: The env's ``reset`` seed.
        reward: The env's final reward (0.0 for an infrastructure failure).
        outcome: The :class:`~conductor_gym.core.reward.Outcome`; files hold its value
            (``"correct"``, ``"wrong"``, ``"invalid"`` or ``"error"``), read back into
            the enum (any other value is a validation error naming ``outcome``).
        correct: ``outcome == Outcome.CORRECT``.
        parse_error: The reason code of an invalid plan (``"no_lists"``, ...), else ``None``.
        error: The env's ``info["error"]`` for an infrastructure failure, else ``None``.
        steps: Plan steps over every round (0 when the first plan did not parse).
        worker_calls, prompt_tokens, completion_tokens, cost_usd, latency_s: The env's
            totals over every round (worker usage only); ``latency_s`` sums the calls'
            latencies (the steps run one after another).
        critical_path_s: The episode's latency with each step run as soon as the steps
            it waits for have finished (:func:`conductor_gym.core.episode.critical_path_s`);
            ``None`` in results written before it was recorded.
        planner_tokens, planner_cost_usd: What the agent itself spent writing the plans,
            when it reports it (0 otherwise).
        completion: The agent's first action; ``followups``: its actions in later rounds.
        final_response: The response that was graded (the last executed step's), or
            ``None`` when no answer was graded (an invalid plan, a failure, or a file
            written before answers were recorded); ``final_answer`` and ``grade_reason``:
            what the grader read from it (``Grade.extracted``) and why it judged so.
            ``conductor-gym rescore`` re-grades ``final_response`` without calling a
            worker.
    """

    benchmark: str
    domain: str
    task_index: int = Field(ge=0)
    task_id: str
    repeat: int = Field(ge=0)
    seed: int
    reward: float
    outcome: Outcome
    correct: bool
    parse_error: str | None = None
    error: dict[str, Any] | None = None
    steps: int = Field(ge=0)
    worker_calls: int = Field(ge=0)
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    cost_usd: float
    latency_s: float
    critical_path_s: float | None = None
    planner_tokens: int = Field(default=0, ge=0)
    planner_cost_usd: float = 0.0
    completion: str
    followups: list[str] = Field(default_factory=list)
    final_response: str | None = None
    final_answer: str | None = None
    grade_reason: str | None = None

    @property
    def key(self) -> tuple[str, int, int]:
        """``(benchmark, task_index, repeat)``: what identifies the episode in a run."""
        return (self.benchmark, self.task_index, self.repeat)


class Metrics(_Model):
    """Aggregates over a set of episodes (definitions in the module docstring)."""

    n: int
    accuracy: float
    accuracy_se: float | None
    mean_reward: float
    mean_reward_se: float | None
    parse_failure_rate: float
    infra_failures: int
    mean_steps: float
    mean_worker_calls: float
    tokens_per_sample: float
    cost_per_sample_usd: float


class WorkerRecord(_Model):
    """One configured worker, as a re-play rebuilds it (the
    :class:`~conductor_gym.workers.spec.WorkerSpec` fields that change answers or prices).

    ``options`` are the ``backend_options`` for the backends in :data:`RECORDED_OPTIONS`
    and ``{}`` for the others (credentials and endpoints are never recorded);
    ``system_prompt`` is written only when the worker has one, so the records (and the
    fingerprints over them) of workers without one are as they were.
    """

    name: str
    backend: str
    model: str
    max_tokens: int
    temperature: float
    params: dict[str, Any] = Field(default_factory=dict)
    options: dict[str, Any] = Field(default_factory=dict)
    price_in_per_mtok: float | None = None
    price_out_per_mtok: float | None = None
    system_prompt: str | None = Field(default=None, exclude_if=lambda value: value is None)

    @classmethod
    def from_spec(cls, spec: WorkerSpec) -> WorkerRecord:
        """The record of ``spec`` (a simulated worker's with its simulator version named,
        so that the record keeps meaning the same worker when the default version moves)."""
        options = dict(spec.backend_options) if spec.backend in RECORDED_OPTIONS else {}
        if spec.backend == "simulated":
            from conductor_gym.sim.params import DEFAULT_VERSION

            options.setdefault("version", DEFAULT_VERSION)
        return cls(
            name=spec.name,
            backend=spec.backend,
            model=spec.model_name,
            max_tokens=spec.max_tokens,
            temperature=float(spec.temperature),
            params=json_safe(dict(spec.params)),
            options=json_safe(options),
            price_in_per_mtok=spec.price_in_per_mtok,
            price_out_per_mtok=spec.price_out_per_mtok,
            system_prompt=spec.system_prompt,
        )


class SourceInfo(_Model):
    """One task source of a suite: its name in the suite, fingerprint and size run."""

    name: str
    fingerprint: str
    size: int


class SuiteInfo(_Model):
    """The suite a run used. ``limit``: tasks per source when the run was cut short."""

    name: str
    fingerprint: str
    sources: list[SourceInfo]
    limit: int | None = None
    tasks: dict[str, Any] | None = None
    """The task selection when the run played some of the suite's tasks
    (:class:`~conductor_gym.bench.suites.TaskSelection`), else ``None``."""


class GraderInfo(_Model):
    """A grader that graded a rescored run: its registry ``name`` and ``version`` (the
    package version and a hash of the source of the module defining it)."""

    name: str
    version: str


class RescoreInfo(_Model):
    """How a results file was re-scored from another (``conductor-gym rescore``).

    ``source_sha256`` is the SHA-256 of the file re-scored; ``mode`` is ``"grade"`` (the
    stored answers re-graded) or ``"replay"`` (the episodes re-run through the env from
    their recorded completions); ``graders`` maps each task grader name to the grader
    that graded it; ``changed`` and ``misses`` count the episodes whose outcome, reward
    or answer changed and those a replay could not answer from its cache.
    """

    at: str
    conductor_gym_version: str
    source: str
    source_sha256: str
    mode: Literal["grade", "replay"]
    graders: dict[str, GraderInfo]
    changed: int = Field(ge=0)
    misses: int = Field(ge=0)


class Results(_Model):
    """A whole evaluation run (see the module docstring).

    The JSON key ``schema`` is the attribute ``schema_`` (pydantic reserves ``schema``);
    dumps always write ``schema``.

    ``started_at`` is when the run first started (ISO 8601, UTC); ``wall_time_s`` the
    wall time of the invocation that finished it. ``workers``: every configured worker of
    the pool, in pool order (``None`` in ``v1`` files). ``env_kwargs``: the env settings
    (module docstring). ``domain_metrics``: :func:`aggregate_domains` of the episodes,
    computed, never stored state (module docstring). ``rescored`` is ``None`` for a file
    written by ``evaluate``; a re-scored file lists every re-scoring that led to it,
    oldest first (:class:`RescoreInfo`).
    """

    schema_: SchemaTag = Field(default=SCHEMA, alias="schema")
    env_id: str
    env_version: str
    suite: SuiteInfo
    pool: dict[str, Any]
    workers: list[WorkerRecord] | None = None
    agent: dict[str, Any]
    env_kwargs: dict[str, Any]
    repeats: int = Field(ge=1)
    seed: int
    started_at: str
    wall_time_s: float
    metrics: dict[str, Metrics]
    episodes: list[EpisodeRecord]
    rescored: list[RescoreInfo] | None = None

    model_config = ConfigDict(
        extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )

    @model_validator(mode="before")
    @classmethod
    def _read_older(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        data = dict(data)
        data.pop("domain_metrics", None)  # computed from the episodes, never trusted
        if data.get("schema", data.get("schema_")) in _BEFORE_V3:
            data.pop("env_config", None)  # v2's second copy of the settings, never read
            if isinstance(data.get("env_kwargs"), Mapping):
                data["env_kwargs"] = {
                    key: value for key, value in data["env_kwargs"].items() if key != "render_mode"
                }
        if isinstance(data.get("env_kwargs"), Mapping):
            data["env_kwargs"] = {key: _untagged(v) for key, v in data["env_kwargs"].items()}
        if isinstance(data.get("workers"), list):
            versioned = [_versioned(record) for record in data["workers"]]
            if versioned != data["workers"] and isinstance(data.get("pool"), Mapping):
                data["pool"] = _pinned_pool(data["pool"])
            data["workers"] = versioned
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def domain_metrics(self) -> dict[str, Metrics]:
        """:class:`Metrics` per task family (episode ``domain``), over every benchmark."""
        return aggregate_domains(self.episodes, self.repeats)

    @model_serializer(mode="wrap")
    def _drop_unset_rescored(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A file evaluate wrote has no "rescored" key at all (older readers keep reading it).
        data: dict[str, Any] = handler(self)
        if self.rescored is None:
            data.pop("rescored", None)
        if self.schema_ in _OLDER:  # an older file stays readable by older readers
            data.pop("domain_metrics", None)
        return data

    def to_json(self) -> str:
        """The JSON text (``schema`` first, indented)."""
        return self.model_dump_json(indent=1)

    def dump(self, path: str | os.PathLike[str]) -> None:
        """Write the JSON to ``path`` atomically (a temporary file, then a rename),
        creating its folder when missing."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        tmp.write_text(self.to_json() + "\n", encoding="utf-8")
        tmp.replace(target)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Results:
        """Read and validate a results file (``pydantic.ValidationError`` if malformed)."""
        return cls.model_validate(json.loads(Path(path).read_text(encoding="utf-8")))


_OLDER = ("conductor-gym/results/v1", "conductor-gym/results/v2", "conductor-gym/results/v3")

_BEFORE_V3 = ("conductor-gym/results/v1", "conductor-gym/results/v2")

_TAGGED = ("RewardScheme", "RetryPolicy", "Budget", "PromptTemplates", "FewShotExample")
"""The dataclass settings older files wrote as ``{"type": name, **fields}``."""


def _untagged(value: Any) -> Any:
    """A setting as :meth:`~conductor_gym.core.config.EnvConfig.to_dict` writes it: the
    fields of a ``{"type": name, **fields}`` dataclass form (older files), recursively."""
    if isinstance(value, Mapping):
        fields = {str(k): _untagged(v) for k, v in value.items()}
        if fields.get("type") in _TAGGED:
            del fields["type"]
        return fields
    if isinstance(value, list):
        return [_untagged(v) for v in value]
    return value


def _versioned(record: Any) -> Any:
    """A worker record as this version writes it: a simulated worker's ``options`` name
    its simulator version (:data:`UNVERSIONED_SIMULATOR` where an older file left it to
    the default of its day)."""
    if not isinstance(record, Mapping) or record.get("backend") != "simulated":
        return record
    options = record.get("options", {})
    if not isinstance(options, Mapping) or "version" in options:
        return record
    return {**record, "options": {**options, "version": UNVERSIONED_SIMULATOR}}


def _pinned_pool(pool: Mapping[str, Any]) -> Mapping[str, Any]:
    """A pool description of a file recorded before simulated workers named their version:
    ``sim-paper`` (and its splits, ``sim-paper@train``) then meant the preset now pinned as
    ``sim-paper-v2``, and reads as that name, so that the shipped preset it claims is the
    one it ran."""
    name = pool.get("name")
    if not isinstance(name, str) or name.split("@")[0] != "sim-paper":
        return pool
    return {**pool, "name": f"sim-paper-{UNVERSIONED_SIMULATOR}{name[len('sim-paper') :]}"}


def load_results(path: str | os.PathLike[str]) -> Results:
    """The run in ``path``: a results JSON file, or an episodes journal (:func:`is_journal`),
    whose metrics are then computed from its records (``wall_time_s`` is 0: the run may
    not have finished). Files of every version in :data:`SCHEMAS` read (module docstring).
    Raises ``ValueError`` (pydantic's ``ValidationError`` among them) for a malformed
    file."""
    path = Path(path)
    if not is_journal(path):
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


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def _repeat_se(groups: dict[int, list[float]], repeats: int) -> float | None:
    """Standard error over repeats: sample std (ddof=1) of per-repeat means / sqrt(R)."""
    means = [_mean(values) for _, values in sorted(groups.items()) if values]
    if repeats < 2 or len(means) < 2:
        return None
    centre = _mean(means)
    variance = math.fsum((m - centre) ** 2 for m in means) / (len(means) - 1)
    return math.sqrt(variance) / math.sqrt(len(means))


def _metrics(episodes: Sequence[EpisodeRecord], repeats: int) -> Metrics:
    scored = [e for e in episodes if e.outcome != Outcome.ERROR]
    correct: dict[int, list[float]] = {}
    reward: dict[int, list[float]] = {}
    for e in scored:
        correct.setdefault(e.repeat, []).append(1.0 if e.correct else 0.0)
        reward.setdefault(e.repeat, []).append(e.reward)
    planned = [float(e.steps) for e in episodes if e.steps > 0]
    return Metrics(
        n=len(episodes),
        accuracy=_mean([1.0 if e.correct else 0.0 for e in scored]),
        accuracy_se=_repeat_se(correct, repeats),
        mean_reward=_mean([e.reward for e in scored]),
        mean_reward_se=_repeat_se(reward, repeats),
        parse_failure_rate=_mean([1.0 if e.outcome == Outcome.INVALID else 0.0 for e in scored]),
        infra_failures=len(episodes) - len(scored),
        mean_steps=_mean(planned),
        mean_worker_calls=_mean([float(e.worker_calls) for e in episodes]),
        tokens_per_sample=_mean(
            [float(e.prompt_tokens + e.completion_tokens + e.planner_tokens) for e in episodes]
        ),
        cost_per_sample_usd=_mean([e.cost_usd + e.planner_cost_usd for e in episodes]),
    )


def aggregate(episodes: Sequence[EpisodeRecord], repeats: int) -> dict[str, Metrics]:
    """Metrics ``"overall"`` and per benchmark (sorted by name) of ``episodes``.

    ``repeats`` is the number of repeats the run asked for (``< 2``: no standard errors).
    A benchmark named ``"overall"`` raises ``ValueError``.
    """
    benchmarks = sorted({e.benchmark for e in episodes})
    if OVERALL in benchmarks:
        raise ValueError(f"a benchmark may not be named {OVERALL!r}")
    result = {OVERALL: _metrics(episodes, repeats)}
    for name in benchmarks:
        result[name] = _metrics([e for e in episodes if e.benchmark == name], repeats)
    return result


def aggregate_domains(episodes: Sequence[EpisodeRecord], repeats: int) -> dict[str, Metrics]:
    """Metrics per task family: one entry per episode ``domain`` (sorted), each over the
    episodes of that domain in every benchmark, with :func:`aggregate`'s definitions."""
    domains = sorted({e.domain for e in episodes})
    return {name: _metrics([e for e in episodes if e.domain == name], repeats) for name in domains}


class ResumeMismatchError(ConfigurationError):
    """An episodes journal belongs to a different run than the one asked for."""


def json_safe(value: Any) -> Any:
    """``value`` as JSON data: containers recursively, dataclasses and ``to_dict()``
    objects as dicts, paths as strings, anything else as ``"<TypeName>"``."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        return {"type": type(value).__name__, **json_safe(fields)}
    to_dict = getattr(value, "to_dict", None)
    if callable(to_dict):
        return json_safe(to_dict())
    return f"<{type(value).__qualname__}>"


def journal_path(out: str | os.PathLike[str]) -> Path:
    """Where the episodes of a run writing ``out`` are journaled: ``<out>.episodes.jsonl``."""
    return Path(f"{os.fspath(out)}.episodes.jsonl")


def journal_header_path(journal: str | os.PathLike[str]) -> Path:
    """Where the header of the journal ``journal`` is: ``run.json.episodes.jsonl`` ->
    ``run.json.episodes.jsonl.header``."""
    path = Path(journal)
    return path.with_name(path.name + ".header")


def _old_header_path(journal: Path) -> Path:
    """Where earlier versions put the header: ``run.json.episodes.header.json``."""
    return journal.with_name(journal.name.removesuffix(".jsonl") + ".header.json")


def not_results(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is not a results file or an episodes journal (``None`` when it is one,
    or when it may be one that is malformed: reading it says what is wrong)."""
    path = Path(path)
    if path.name.endswith((".header.json", ".jsonl.header")):
        return "an episodes journal's header, not a results file"
    if is_journal(path) or path.suffix == ".jsonl":
        return None
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(found, dict):
        return "not a JSON object"
    schema = found.get("schema")
    if isinstance(schema, str) and schema.startswith("conductor-gym/results/"):
        return None
    if schema is None and "episodes" in found and "suite" in found:
        return None
    return f"no results schema ({str(schema or 'none')[:60]})"


def load_runs(
    paths: Sequence[str | os.PathLike[str]],
) -> tuple[list[tuple[Path, Results]], list[str]]:
    """The runs of ``paths`` (:func:`load_results`) and one message per file skipped
    because it is no results file (:func:`not_results`); a malformed results file raises
    ``ValueError`` (pydantic's ``ValidationError`` among them) or ``OSError``."""
    runs: list[tuple[Path, Results]] = []
    skipped: list[str] = []
    for given in paths:
        path = Path(given)
        if (why := not_results(path)) is not None:
            skipped.append(f"{path}: skipped, {why}")
            continue
        runs.append((path, load_results(path)))
    return runs, skipped


def _header_line(line: str) -> dict[str, Any] | None:
    """The header of an older journal's first line ``{"header": {...}}``, else ``None``."""
    try:
        found = json.loads(line)
    except ValueError:
        return None
    header = found.get("header") if isinstance(found, dict) else None
    return header if isinstance(header, dict) else None


def is_journal(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is an episodes journal: its header file is beside it, or (the older
    form) its first line is ``{"header": {...}}``."""
    path = Path(path)
    if journal_header_path(path).is_file() or _old_header_path(path).is_file():
        return True
    with path.open(encoding="utf-8") as handle:
        return _header_line(handle.readline()) is not None


def _read_header(path: Path, lines: list[str]) -> tuple[dict[str, Any] | None, int]:
    """The run header of the journal ``path`` (its sidecar, else an older journal's first
    line) and how many of ``lines`` it took (0 or 1)."""
    old = _header_line(lines[0]) if lines else None
    if old is not None:
        return old, 1
    sidecar = journal_header_path(path)
    if not sidecar.is_file():
        sidecar = _old_header_path(path)
    try:
        found = json.loads(sidecar.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, 0
    header = found.get("header") if isinstance(found, dict) else None
    return (header if isinstance(header, dict) else None), 0


def _write_header(path: Path, header: Mapping[str, Any]) -> None:
    sidecar = journal_header_path(path)
    tmp = sidecar.with_name(sidecar.name + ".tmp")
    tmp.write_text(json.dumps({"header": header}, indent=1) + "\n", encoding="utf-8")
    tmp.replace(sidecar)
    _old_header_path(path).unlink(missing_ok=True)  # an older run's, now rewritten


def _journal_records(path: Path, lines: list[str], skip: int = 0) -> list[EpisodeRecord]:
    """The records of ``lines`` after the first ``skip``; a torn last line is dropped."""
    records: list[EpisodeRecord] = []
    body = [(n, line) for n, line in enumerate(lines[skip:], start=skip + 1) if line.strip()]
    for position, (number, line) in enumerate(body):
        try:
            records.append(EpisodeRecord.model_validate_json(line))
        except ValueError as exc:
            if position == len(body) - 1 and lines[-1]:
                break  # a torn last line (no newline after it): the run died mid-write
            raise ResumeMismatchError(
                f"{path}:{number} is not an episode record{_field_at_fault(exc)}"
            ) from None
    return records


def _field_at_fault(exc: ValueError) -> str:
    """`` (field: what is wrong)`` for a record that parsed as JSON but not as an
    :class:`EpisodeRecord` (an unknown ``outcome``, ...); ``""`` for text that is not JSON."""
    if not isinstance(exc, ValidationError):
        return ""
    first = exc.errors()[0]
    if first["type"] == "json_invalid" or not first["loc"]:
        return ""
    return f" ({'.'.join(map(str, first['loc']))}: {first['msg']})"


def read_journal(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[EpisodeRecord]]:
    """The header and the records of an episodes journal, read without changing it (a
    torn last line is dropped; a journal without a header or with a malformed record line
    raises :class:`ResumeMismatchError`, a ``ValueError``)."""
    path = Path(path)
    lines = path.read_text(encoding="utf-8").split("\n")
    header, skip = _read_header(path, lines)
    if header is None:
        raise ResumeMismatchError(
            f"{path} has no run header ({journal_header_path(path)} is missing or unreadable)"
        )
    return header, _journal_records(path, lines, skip)


def open_journal(
    path: Path, header: dict[str, Any], resume: bool
) -> tuple[IO[str], list[EpisodeRecord], str]:
    """Open the episodes journal for appending; return it, the records it already holds
    and the run's ``started_at``.

    Without ``resume``, or when there is no journal yet, a new, empty journal is started
    and ``header`` written beside it (:func:`journal_header_path`). With ``resume`` an
    existing journal must carry the same header (``started_at`` aside), else
    :class:`ResumeMismatchError` says how many episode lines it holds, names the differing
    keys and the ways on (``--no-resume``/``resume=False`` starts it afresh, or a new
    ``--out``); a torn last line (a crash mid-write) is dropped, and the journal is
    rewritten with the good records (an older journal in the new form).
    """
    started_at = str(header["started_at"])
    if not (resume and path.is_file() and path.stat().st_size > 0):
        _write_header(path, header)
        return path.open("w", encoding="utf-8"), [], started_at
    lines = path.read_text(encoding="utf-8").split("\n")
    found, skip = _read_header(path, lines)
    held = sum(1 for line in lines[skip:] if line.strip())
    afresh = "pass --no-resume (resume=False) to start it afresh, or a new --out (out=)"
    if found is None or not isinstance(found.get("started_at"), str):
        raise ResumeMismatchError(
            f"{path} holds {held} episode line(s) but no run header "
            f"({journal_header_path(path)} is missing or unreadable); {afresh}"
        )
    found = dict(found)
    started_at = str(found.pop("started_at"))
    wanted = {k: v for k, v in json.loads(json.dumps(header)).items() if k != "started_at"}
    if found != wanted:
        keys = sorted(k for k in set(found) | set(wanted) if found.get(k) != wanted.get(k))
        raise ResumeMismatchError(
            f"{path} holds {held} episode line(s) of a different run (it differs in "
            f"{', '.join(keys)}); {afresh}"
        )
    records = _journal_records(path, lines, skip)
    _write_header(path, {**found, "started_at": started_at})
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    tmp.replace(path)
    return path.open("a", encoding="utf-8"), records, started_at


def format_usd(value: float) -> str:
    """Dollars for a table: two significant digits below a cent, never in exponent
    notation (``$0.000015``, ``$0.0069``), three decimals from a cent up (``$0.026``)."""
    if value == 0 or not math.isfinite(value):
        return "$0" if value == 0 else f"${value}"
    if abs(value) >= 0.01:
        return f"${value:.3f}"
    decimals = 1 - math.floor(math.log10(abs(float(f"{value:.2g}"))))
    return f"${value:.{decimals}f}"
