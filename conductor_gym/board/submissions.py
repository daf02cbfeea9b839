"""The leaderboard: submissions, their validation, and where each one goes.

A **submission** is one evaluation's results file (:class:`conductor_gym.bench.results.Results`,
as written by ``conductor-gym evaluate``) plus metadata about who ran what. On disk it is
``leaderboard/submissions/<slug>.json``::

    {"metadata": {"name": ..., "authors": [...], "agent": "<agent spec>",
                  "training_data": ..., "pool_setting": "constrained" | "unconstrained"
                  | "simulated", "date": "YYYY-MM-DD", "url": ..., "notes": ...,
                  "response_cache": "<slug>.sqlite", "response_cache_sha256": ...},
     "results": {...}}

A real-pool run ships its response cache (:class:`~conductor_gym.workers.cache.ResponseCache`,
the SQLite file ``evaluate --env cache=PATH`` wrote) as ``response_cache``: a plain file
name in the same folder, pinned by its SHA-256.

:func:`validate_submission` checks a submission the way a maintainer would before
accepting it, and reports every problem with its own message (``check: message``):

* ``file``: at most :data:`~conductor_gym.board.untrusted.MAX_FILE_BYTES`, UTF-8 JSON
  nested at most :data:`~conductor_gym.board.untrusted.MAX_JSON_DEPTH` deep, integers of
  at most :data:`~conductor_gym.board.untrusted.MAX_INT_DIGITS` digits;
* ``schema``: the file parses against :class:`Submission`, strictly as JSON (no unknown
  fields anywhere; an integer field takes no float, ``5e7`` included; bounded metadata
  text; ``url`` only ``http(s)``; ``response_cache`` a plain file name);
* ``metadata``: ``metadata.agent`` is the results' ``agent.spec``; the pool setting agrees
  with the workers' backends (``simulated`` exactly when every worker is simulated); the
  response cache exists, has at most
  :data:`~conductor_gym.board.untrusted.MAX_CACHE_BYTES` and the declared SHA-256;
* ``pool``: the worker records agree with the pool's description, a pool named after
  a shipped preset has that preset's workers, and no other pool's name looks like a
  preset's (:func:`~conductor_gym.board.sections.lookalike_preset`: not plain ASCII, or
  a preset's name up to case, separators, NFKC and look-alike letters, or extending it:
  a Cyrillic i in ``sim-paper``, ``sim-paper-2026``);
* ``env``: the paper's reward scheme, plan and recursion sizes within the board's bounds;
  every setting the agent declares (``agent.env_overrides``) is the one the run recorded
  (``evaluate`` applies and records them, so a genuine file never differs);
* ``graders``: the graders of the run's latest re-scoring (``rescored[-1].graders``)
  are registered here, replace graders the suite's tasks name, and carry the versions
  derived here from the installed graders' source
  (:func:`~conductor_gym.bench.rescore.grader_version`: the hash must match; a release
  number alone differing is a warning);
* ``suite``: the suite is registered with these sources; where its sources read offline,
  its sizes and fingerprints, recomputed here, are the declared ones and every episode
  names the suite's task at its index;
* ``repeats``, ``episodes``: the repeat indices are ``0..repeats-1``; every ``(benchmark,
  task_index, repeat)`` appears exactly once: none missing, duplicated or outside;
* ``seeds``: every episode's seed is ``episode_seed(results.seed, benchmark, task_index,
  repeat)`` (:mod:`conductor_gym.bench.suites`), so no repeat was chosen after the fact;
* ``episode``: each record is self-consistent (``correct == (outcome == Outcome.CORRECT)``, the
  reward is the paper's for the outcome);
* ``metrics``: every stored aggregate equals :func:`conductor_gym.bench.results.aggregate`
  recomputed from the episodes (floats within 1e-9, counts exactly);
* ``agent``: when ``results.agent.spec`` names a deterministic built-in agent
  (:mod:`conductor_gym.board.identity`), the agent rebuilt here records the same
  ``results.agent``, and, re-run on every re-played observation, writes every recorded
  completion (a cherry-picked or renamed run is refused); any other agent's entry is
  marked *self-reported completions*;
* ``cache``: a real pool's response cache is plausible, call by call and as a whole
  (token counts, prices, latencies: :mod:`conductor_gym.board.plausibility`), before
  anything is re-played from it;
* ``replay``: when every check above passed and the suite reads offline, every episode is
  re-played (:mod:`conductor_gym.bench.replay`) and must match field by field; its trust
  level (:data:`~conductor_gym.board.sections.TRUST_LEVELS`) says whether the simulator
  or the submitter's cache answered;
* ``cache`` (again, after a re-play from it): every row of the cache is one the
  episodes looked up (:mod:`conductor_gym.board.cache_use`): rows of other runs, or
  padding that would dilute a spot check, are refused.

Across entries (:func:`check_names`, run by :func:`load_submissions`, ``leaderboard
validate`` of several files and ``leaderboard submit``): an entry's ``name`` and
``agent_display_name`` never equal another entry's of another agent, compared by
:func:`~conductor_gym.board.sections.name_skeleton` (case, NFKC, separators and
look-alike letters aside); the entry that keeps a contested name is the re-derived one
(an agent re-run on validation), then the earlier date, then the first file.

An accepted submission then gets its :class:`~conductor_gym.board.sections.Placement`:
its section (env settings as the re-play ran them, graders in force with derived
versions), and ranked there or listed apart with every reason
(:mod:`conductor_gym.board.sections`); a declared env override that does not set the
section is a ``env`` warning naming it. The rendered board (Markdown, HTML, plot) is in
:mod:`conductor_gym.board.render`. This module imports pydantic at import time;
``import conductor_gym`` does not import it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import math
import re
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from conductor_gym.bench.results import Metrics, Results, aggregate
from conductor_gym.board.sections import (
    AgentIdentity,
    Placement,
    TrustLevel,
    Verification,
    excused_overrides,
    lookalike_preset,
    name_skeleton,
    offline_suite,
    place,
    ran_settings,
    task_graders,
)
from conductor_gym.board.untrusted import (
    MAX_CACHE_BYTES,
    MAX_FILE_BYTES,
    UntrustedInputError,
    check_depth,
    http_url,
    read_json_file,
    validate_strictly,
)
from conductor_gym.core.reward import Outcome

if TYPE_CHECKING:
    from conductor_gym.bench.replay import Replay
    from conductor_gym.core.agent import BaseAgent
    from conductor_gym.tasks import TaskSource

__all__ = [
    "DISPLAY_NAME_PATTERN",
    "MAX_PLAN_STEPS",
    "MAX_RECURSIONS",
    "MAX_REPEATS",
    "POOL_SETTINGS",
    "SUBMISSIONS_DIR",
    "Problem",
    "Report",
    "Submission",
    "SubmissionMetadata",
    "check_names",
    "load_submissions",
    "make_submission",
    "name_clashes",
    "slugify",
    "validate_file",
    "validate_submission",
]

PoolSetting = Literal["constrained", "unconstrained", "simulated"]
POOL_SETTINGS: tuple[str, ...] = ("constrained", "unconstrained", "simulated")
"""The pool settings a board is split by (paper §4: a constrained pool of open models,
an unconstrained one with frontier APIs; ``simulated``: the offline simulated pool)."""

SUBMISSIONS_DIR = "submissions"
TOLERANCE = 1e-9
"""Absolute tolerance when comparing stored and recomputed float metrics (recomputation
is deterministic and JSON round-trips floats exactly, so a match is in fact exact)."""

MAX_REPEATS = 64
MAX_PLAN_STEPS = 32
MAX_RECURSIONS = 8
"""Bounds on what a board entry may declare (a re-play does this much work per episode)."""

_MAX_LISTED = 5  # per-episode problems listed before "... and N more"
_ENUMERATED = 1_000_000  # most missing episodes looked up one by one
_FILE_NAME = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$"

DISPLAY_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,79}$"
"""An ``agent_display_name``: no path separator, colon or space, so it reads as one name."""


def _one_line(text: str) -> str:
    if re.search(r"[\x00-\x1f\x7f\u2028\u2029]", text):
        raise ValueError("must be one line without control characters")
    return text


class SubmissionMetadata(BaseModel):
    """Who submitted what (``agent`` is the agent spec the results were produced with).

    Text is bounded (``name`` 80 characters, each author 100, ``agent`` 200,
    ``training_data`` 500, ``url`` 500, ``notes`` 2000); ``url`` must be ``http(s)``.

    ``agent_display_name``: how the board's Agent column names an agent that cannot be
    re-run (a checkpoint, an LLM, an agent file), shown as ``<kind>:<display name>``
    (:func:`~conductor_gym.board.render.agent_label`) instead of the spec's local path;
    up to 80 letters, digits, ``.``, ``_``, ``+`` and ``-``. A built-in agent that
    validation re-runs is named by its spec alone and refuses one, so no entry can pose
    as one.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=80)
    authors: list[str] = Field(min_length=1, max_length=20)
    agent: str = Field(min_length=1, max_length=200)
    training_data: str = Field(max_length=500)
    pool_setting: PoolSetting
    date: dt.date
    url: str | None = Field(default=None, max_length=500)
    notes: str | None = Field(default=None, max_length=2000)
    response_cache: str | None = Field(default=None, pattern=_FILE_NAME)
    response_cache_sha256: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    agent_display_name: str | None = Field(default=None, pattern=DISPLAY_NAME_PATTERN)

    @field_validator("name", "agent")
    @classmethod
    def _single_line(cls, value: str) -> str:
        return _one_line(value)

    @field_validator("authors")
    @classmethod
    def _authors(cls, value: list[str]) -> list[str]:
        for author in value:
            if not 1 <= len(author) <= 100:
                raise ValueError("each author must have 1 to 100 characters")
            _one_line(author)
        return value

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not http_url(value):
            raise ValueError("must be an http:// or https:// URL with a host")
        return value

    @model_validator(mode="after")
    def _display_name_for_self_reported_agents(self) -> SubmissionMetadata:
        from conductor_gym.board.identity import is_rerunnable

        if self.agent_display_name is not None and is_rerunnable(self.agent):
            raise ValueError(
                f"agent_display_name: the built-in agent {self.agent!r} is re-run on "
                "validation and shown by its spec; a display name is for agents that cannot be "
                "(policy:, llm:, an agent file)"
            )
        return self


class Submission(BaseModel):
    """A leaderboard entry: ``{"metadata": ..., "results": ...}``."""

    model_config = ConfigDict(extra="forbid", serialize_by_alias=True)

    metadata: SubmissionMetadata
    results: Results

    @classmethod
    def load(cls, path: str | Path) -> Submission:
        """Read and validate a submission file (raises pydantic's ``ValidationError``)."""
        return cls.model_validate_json(Path(path).read_text(encoding="utf-8"))

    def dump(self, path: str | Path) -> Path:
        """Write the submission as indented JSON; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=1) + "\n", encoding="utf-8")
        return path


@dataclass(frozen=True)
class Problem:
    """One finding: ``check`` names the check (``schema``, ``suite``, ``metrics`` ...)."""

    check: str
    message: str

    def __str__(self) -> str:
        return f"{self.check}: {self.message}"


@dataclass
class Report:
    """The outcome of validating one submission: accepted when there are no errors.

    ``placement`` (set when accepted) says where it goes and why; ``replay`` is what the
    re-play found (``None`` when it did not run).
    """

    source: str
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    submission: Submission | None = None
    placement: Placement | None = None
    replay: Replay | None = None

    @property
    def ok(self) -> bool:
        return not self.errors

    def error(self, check: str, message: str) -> None:
        self.errors.append(Problem(check, message))

    def warn(self, check: str, message: str) -> None:
        self.warnings.append(Problem(check, message))


def slugify(text: str) -> str:
    """A file-name slug: lower case, runs of other characters as ``-``."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:80].strip("-") or "entry"


# ------------------------------------------------------------------------------ entry points


def validate_file(
    path: str | Path,
    *,
    max_bytes: int = MAX_FILE_BYTES,
    cache: str | Path | None = None,
    replay: bool = True,
) -> Report:
    """Validate the submission file at ``path`` (see the module docstring); its
    ``response_cache`` is looked up beside it (``cache`` and ``replay``: as for
    :func:`validate_submission`)."""
    try:
        raw = read_json_file(path, max_bytes=max_bytes)
    except UntrustedInputError as exc:
        report = Report(str(path))
        report.error("file", str(exc))
        return report
    return validate_submission(
        raw, source=str(path), folder=Path(path).parent, cache=cache, replay=replay
    )


def validate_submission(
    raw: Any,
    *,
    source: str = "<submission>",
    folder: str | Path | None = None,
    cache: str | Path | None = None,
    replay: bool = True,
) -> Report:
    """Validate a submission given as parsed JSON (or a :class:`Submission`).

    ``folder`` is where its ``response_cache`` file lies; ``cache`` gives the cache file
    directly instead (checked against ``response_cache_sha256`` when that is declared).
    ``replay=False`` skips the re-play (the entry is then unverified).
    """
    report = Report(source)
    if isinstance(raw, Submission):
        raw = raw.model_dump(mode="json")
    try:
        check_depth(raw)
    except UntrustedInputError as exc:
        report.error("file", str(exc))
        return report
    if isinstance(raw, Mapping) and "schema" in raw and "metadata" not in raw:
        report.error(
            "schema",
            "this is a results file, not a submission: wrap it with metadata using "
            "`conductor-gym leaderboard submit RESULTS --name ...`",
        )
        return report
    try:
        submission = validate_strictly(Submission, raw)  # 5e7 is no int: strict, as JSON
    except UntrustedInputError as exc:
        report.error("schema", str(exc))
        return report
    except ValidationError as exc:
        for err in exc.errors():
            where = _location(err["loc"])
            report.error("schema", f"{where}: {err['msg']}" if where else err["msg"])
        return report
    report.submission = submission
    results = submission.results
    cache_file = _check_metadata(submission, folder, cache, report)
    _check_pool(results, report)
    _check_env(results, report)
    _check_declared_env(results, report)
    _check_graders(results, report)
    sources = _check_suite(results, report)
    _check_repeats(results, report)
    _check_episode_set(results, report)
    _check_seeds(results, report)
    _check_episodes(results, report)
    _check_metrics(results, report)
    if not report.ok:
        return report
    agent = _rerun_agent(results, report) if replay else None
    with contextlib.ExitStack() as stack:
        if cache_file is not None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="cg-replay-")))
            digest = submission.metadata.response_cache_sha256
            cache_file = _pinned_copy(cache_file, digest, folder, report)
            if report.ok and replay:
                _check_cache(results, cache_file, report)
        if report.ok:
            verification = _replay(results, sources, cache_file, replay, report, agent)
        if report.ok and cache_file is not None and report.replay is not None:
            _check_cache_use(cache_file, report.replay, report)
    if report.ok:
        setting = submission.metadata.pool_setting
        identity = _identity(results, agent, report)
        report.placement = place(
            results, setting, verification, replay=report.replay, identity=identity
        )
        _warn_unexcused(results, report)
    return report


def load_submissions(
    directory: str | Path, *, progress: Callable[[int, int, Path, Report], None] | None = None
) -> list[tuple[Path, Report]]:
    """Validate every ``*.json`` under ``directory/submissions`` (sorted by file name),
    then their names across entries (:func:`check_names`); ``progress(i, n, path,
    report)`` is called as each of the ``n`` files is validated.

    Each file is validated on its own: a bad one gets its report and spoils no other.
    """
    folder = Path(directory) / SUBMISSIONS_DIR
    paths = sorted(folder.glob("*.json"))
    loaded = []
    for index, path in enumerate(paths, 1):
        loaded.append((path, _validate_apart(path)))
        if progress is not None:
            progress(index, len(paths), path, loaded[-1][1])
    check_names([report for _, report in loaded])
    return loaded


def _claims(submission: Submission) -> list[tuple[str, str]]:
    """The names an entry shows, as ``(what, name)``: its name, its display name and its
    agent spec."""
    meta = submission.metadata
    shown = [("name", meta.name)]
    if meta.agent_display_name:
        shown.append(("agent_display_name", meta.agent_display_name))
    return [*shown, ("agent", meta.agent)]


def name_clashes(submission: Submission, others: Iterable[Submission]) -> list[str]:
    """Each name of ``submission`` (``name``, ``agent_display_name``) that equals a name,
    display name or agent spec of one of ``others`` run by another agent, compared by
    :func:`~conductor_gym.board.sections.name_skeleton`, as one message each."""
    spec = submission.metadata.agent
    taken: dict[str, tuple[str, Submission]] = {}
    for other in others:
        if other.metadata.agent != spec:
            for what, name in _claims(other):
                taken.setdefault(name_skeleton(name), (what, other))
    found = []
    for what, name in _claims(submission)[:-1]:  # its own spec is its own
        hit = taken.get(name_skeleton(name))
        if hit is not None:
            their, other = hit
            found.append(
                f"{what} {name!r} is the {their} {getattr(other.metadata, their)!r} of the "
                f"entry {other.metadata.name!r} (agent {other.metadata.agent!r}), up to case, "
                "NFKC, separators and look-alike letters: a name belongs to one agent"
            )
    return found


def _precedence(report: Report) -> tuple[int, str, str]:
    """Who keeps a contested name: a re-derived entry, then the earlier date, then the
    first file."""
    assert report.submission is not None
    rederived = report.placement is not None and report.placement.identity.check == "re-run"
    return (0 if rederived else 1, report.submission.metadata.date.isoformat(), report.source)


def check_names(reports: Sequence[Report]) -> None:
    """Refuse (a ``metadata`` error in its report) every accepted entry whose name or
    display name another accepted entry of another agent already shows (module
    docstring): the first by :func:`_precedence` keeps it."""
    accepted = sorted((r for r in reports if r.ok and r.submission), key=_precedence)
    kept: list[Submission] = []
    for report in accepted:
        assert report.submission is not None
        clashes = name_clashes(report.submission, kept)
        for clash in clashes:
            report.error("metadata", clash)
        if clashes:
            report.placement = None
        else:
            kept.append(report.submission)


def _validate_apart(path: Path) -> Report:
    """:func:`validate_file`, with anything unforeseen in one file turned into that file's
    rejection, so one file never stops a board from rendering."""
    try:
        return validate_file(path)
    except Exception as exc:
        report = Report(str(path))
        report.error("file", f"validation failed: {type(exc).__name__}: {exc}"[:500])
        return report


# ----------------------------------------------------------------------------------- checks


def _location(loc: Iterable[int | str]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def _backends(results: Results) -> set[str]:
    if results.workers is not None:
        return {w.backend for w in results.workers}
    workers = results.pool.get("workers")
    if not isinstance(workers, list):
        return set()
    return {str(w["backend"]) for w in workers if isinstance(w, Mapping) and "backend" in w}


def _check_metadata(
    submission: Submission, folder: str | Path | None, cache: str | Path | None, report: Report
) -> Path | None:
    """The metadata checks; returns the response cache file to re-play from, if any."""
    meta, results = submission.metadata, submission.results
    spec = results.agent.get("spec")
    if spec != meta.agent:
        report.error(
            "metadata",
            f"metadata.agent is {meta.agent!r} but the results were produced by agent "
            f"{spec!r} (results.agent.spec)",
        )
    backends = _backends(results)
    if backends:
        simulated = backends == {"simulated"}
        if meta.pool_setting == "simulated" and not simulated:
            report.error(
                "metadata",
                f"pool_setting is 'simulated' but the pool uses backends {sorted(backends)}",
            )
        elif meta.pool_setting != "simulated" and "simulated" in backends:
            report.error(
                "metadata",
                f"pool_setting is {meta.pool_setting!r} but the pool has simulated workers; "
                "use pool_setting 'simulated'",
            )
    if cache is None and meta.response_cache is not None and folder is not None:
        cache = Path(folder) / meta.response_cache
    if cache is None:
        return None
    path = Path(cache)
    if not path.is_file():
        report.error("metadata", f"response_cache {path.name!r}: no such file beside the entry")
        return None
    if (size := path.stat().st_size) > MAX_CACHE_BYTES:
        report.error(
            "metadata",
            f"response_cache {path.name!r} is {size:,} bytes, over the "
            f"{MAX_CACHE_BYTES:,}-byte limit",
        )
        return None
    return path


def _pinned_copy(path: Path, digest: str | None, folder: Path, report: Report) -> Path:
    """Copy the cache file into ``folder`` while hashing it; the replay reads the copy, so
    what is re-played is exactly the bytes the digest pins (a write-ahead log left beside
    the file is not part of the submission, and the submitted file is never written)."""
    copy = folder / "responses.sqlite"
    sha = hashlib.sha256()
    with path.open("rb") as source, copy.open("wb") as target:
        while chunk := source.read(1 << 20):
            sha.update(chunk)
            target.write(chunk)
    if digest is not None and sha.hexdigest() != digest:
        report.error(
            "metadata",
            f"response_cache {path.name!r} has SHA-256 {sha.hexdigest()[:16]}..., not the "
            f"declared {digest[:16]}...",
        )
    wal = path.with_name(path.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        report.warn(
            "metadata",
            f"{wal.name} (an unmerged write-ahead log) is ignored: only {path.name!r} is "
            "re-played; rebuild the submission with `leaderboard submit --cache`",
        )
    return copy


def _check_pool(results: Results, report: Report) -> None:
    from conductor_gym.bench.replay import ReplayError, shipped_presets, worker_specs
    from conductor_gym.bench.results import WorkerRecord

    if results.workers is not None:
        described = [
            {"name": w.name, "backend": w.backend, "model": w.model} for w in results.workers
        ]
        if described != results.pool.get("workers"):
            report.error(
                "pool",
                "the worker records (results.workers) are not the workers the pool describes "
                "(results.pool.workers)",
            )
            return
    name = results.pool.get("name")
    if isinstance(name, str) and (lookalike := lookalike_preset(name)):
        report.error("pool", lookalike)
        return
    if results.workers is None or not isinstance(name, str) or name not in shipped_presets():
        return
    from conductor_gym.pool.pool import make_pool

    def comparable(records: Iterable[WorkerRecord]) -> list[dict[str, Any]]:
        rows = [r.model_dump(mode="json") for r in records]
        for row in rows:
            row["options"].pop("latency_scale", None)
        return rows

    def preset_workers(preset: str) -> list[dict[str, Any]]:
        return comparable(WorkerRecord.from_spec(spec) for spec in make_pool(preset).specs)

    try:
        recorded = [WorkerRecord.from_spec(spec) for spec in worker_specs(results)]
    except ReplayError as exc:
        report.error("pool", str(exc))
        return
    preset = preset_workers(name)
    # a preset that follows the current simulator ("sim-paper") held an older version's
    # workers when an older run recorded it: those are its pinned preset's ("sim-paper-v3")
    versions = {r.options.get("version") for r in recorded if r.backend == "simulated"}
    pinned = [f"{name}-{v}" for v in versions if f"{name}-{v}" in shipped_presets()]
    if len(pinned) == 1 and comparable(recorded) == preset_workers(pinned[0]):
        return
    if comparable(recorded) != preset:
        differing = [
            f"{have['name']!r}"
            for have, want in zip(comparable(recorded), preset, strict=False)
            if have != want
        ] or ["the number of workers"]
        report.error(
            "pool",
            f"pool {name!r} is a shipped preset, but the results' workers differ from it "
            f"({', '.join(differing[:_MAX_LISTED])}): name a custom pool after its file",
        )


def _check_env(results: Results, report: Report) -> None:
    kwargs = results.env_kwargs
    for key, bound in (("max_steps", MAX_PLAN_STEPS), ("max_recursions", MAX_RECURSIONS)):
        value = kwargs.get(key)
        if value is not None and (not isinstance(value, int) or not 0 <= value <= bound):
            report.error("env", f"env_kwargs.{key} is {value!r}: the board allows 0..{bound}")
    if results.repeats > MAX_REPEATS:
        allowed = f"the board allows at most {MAX_REPEATS}"
        report.error("repeats", f"repeats={results.repeats}: {allowed}")


def _check_declared_env(results: Results, report: Report) -> None:
    """Every setting in ``agent.env_overrides`` is the one the run's env had: the
    recorded ``env_kwargs`` as the re-play decodes them (a default when not recorded)."""
    from conductor_gym.bench.replay import ReplayError, replay_config
    from conductor_gym.core.config import CONFIG_FIELDS, EnvConfig

    declared = results.agent.get("env_overrides")
    if declared is None:
        return
    if not isinstance(declared, Mapping):
        report.error("env", f"agent.env_overrides is {declared!r}: expected a mapping")
        return
    try:
        ran = replay_config(results).to_dict()
    except (ReplayError, TypeError, ValueError):
        return  # the recorded settings themselves are refused: the re-play says why
    pool = {"k", "shuffle_workers", "cache"}  # the pool's, compared as recorded
    for key, value in sorted(declared.items(), key=lambda item: str(item[0])):
        where = f"agent.env_overrides.{key}"
        if key not in CONFIG_FIELDS:
            report.error("env", f"{where}: {key!r} is not an env setting")
            continue
        if key in pool:
            had = results.env_kwargs.get(key)
            claimed = value
        else:
            had = ran[key]
            try:
                claimed = EnvConfig().replace(**{key: value}).to_dict()[key]
            except (TypeError, ValueError) as exc:
                report.error("env", f"{where} is {value!r}: {exc}")
                continue
        if claimed != had:
            report.error(
                "env",
                f"{where} is {value!r}, but the run's env (env_kwargs) had {key}={had!r}: "
                "evaluate applies and records an agent's declared settings, so a genuine "
                "file never differs",
            )


def _warn_unexcused(results: Results, report: Report) -> None:
    """A warning naming each declared override that does not set the section."""
    declared = results.agent.get("env_overrides")
    if not isinstance(declared, Mapping) or not declared:
        return
    excused = excused_overrides(results, report.replay)
    ran = ran_settings(results, report.replay)
    kept = sorted(str(key) for key in declared if key not in excused and key in ran)
    if not kept:
        return
    longest = report.replay.longest_plan if report.replay is not None else None
    played = f"; the longest re-played plan has {longest} step(s)" if longest else ""
    report.warn(
        "env",
        f"agent.env_overrides declares {', '.join(f'{k}={declared[k]!r}' for k in kept)}: "
        "part of this entry's section all the same (only a max_steps above the default "
        f"that the re-played plans fill is the agent's own need{played}), so it is "
        "compared with runs of the same env only",
    )


def _check_graders(results: Results, report: Report) -> None:
    """The latest re-scoring's graders: registered, replacing graders the suite's
    tasks name, with the versions derived from the installed graders."""
    from conductor_gym.bench.rescore import grader_version

    if not results.rescored:
        return
    index = len(results.rescored) - 1
    own = task_graders(results.suite.name, results.suite.limit)
    names = {g for graders in own.values() for g in graders} if own is not None else None
    for task, claim in sorted(results.rescored[-1].graders.items()):
        where = f"rescored[{index}].graders[{task!r}]"
        if names is not None and task not in names:
            report.error(
                "graders",
                f"{where}: no task of suite {results.suite.name!r} is graded by {task!r} "
                f"(its tasks' graders: {sorted(names)})",
            )
            continue
        try:
            derived = grader_version(claim.name)
        except KeyError as exc:  # UnknownNameError, listing the registered graders
            found = exc.args[0] if exc.args else exc
            report.error("graders", f"{where}: {claim.name!r} is not registered here ({found})")
            continue
        if claim.version == derived:
            continue
        release, _, digest = claim.version.partition("+")
        want_release, _, want_digest = derived.partition("+")
        if digest != want_digest:
            report.error(
                "graders",
                f"{where}: grader {claim.name!r} claims version {claim.version!r}, but the "
                f"installed grader's source gives {derived!r}: re-score the run with "
                "this grader (`conductor-gym rescore`)",
            )
        else:
            report.warn(
                "graders",
                f"{where}: grader {claim.name!r} was recorded as release {release!r}; its "
                f"source is unchanged in the installed {want_release!r} (hash "
                f"{want_digest}), whose version the section uses",
            )


def _check_suite(results: Results, report: Report) -> dict[str, TaskSource] | None:
    """Check the declared suite against the registry. Returns its task sources when they
    read offline (then sizes, fingerprints and task ids are checked), else ``None``."""
    from conductor_gym.bench.suites import SUITES, get_suite

    declared = results.suite
    if declared.name.startswith("jsonl:"):
        report.warn(
            "suite",
            f"suite {declared.name!r} is a file on the submitter's machine: it is not "
            "opened here, and its fingerprint and episodes were not checked",
        )
        return None
    try:  # a named suite, or one paired with a pool split ("offline@heldout-workers")
        suite = get_suite(declared.name)
    except (ValueError, KeyError):
        report.error(
            "suite",
            f"unknown suite {declared.name!r}; the board's suites: {sorted(SUITES)} "
            "(each also as '<suite>@<pool split>')",
        )
        return None
    names = [spec.name for spec in suite.specs]
    got_sizes = {s.name: s.size for s in declared.sources}
    if list(got_sizes) != names:
        report.error(
            "suite",
            f"suite {declared.name!r} has sources {names} but the results declare "
            f"{list(got_sizes)}",
        )
        return None
    found = offline_suite(declared.name, declared.limit)
    if found is None:
        report.warn(
            "suite",
            f"fingerprint not checkable offline: suite {declared.name!r} reads datasets that "
            "need downloads and no known fingerprint is registered for it; the declared "
            f"fingerprint {declared.fingerprint!r} and sizes were not verified",
        )
        return None
    suite, info = found
    limit = f" with limit {declared.limit}" if declared.limit is not None else ""
    sizes = {s["name"]: int(s["size"]) for s in info["sources"]}
    if sizes != got_sizes:
        report.error(
            "suite",
            f"suite {declared.name!r}{limit} has source sizes {sizes} but the results declare "
            f"{got_sizes}",
        )
    if info["fingerprint"] != declared.fingerprint:
        report.error(
            "suite",
            f"fingerprint {declared.fingerprint!r} is not the fingerprint of suite "
            f"{declared.name!r}{limit} ({info['fingerprint']!r}): the results were run on "
            "other questions",
        )
    for want, have in zip(info["sources"], declared.sources, strict=True):
        if want["fingerprint"] != have.fingerprint:
            report.error(
                "suite",
                f"source {have.name!r}: fingerprint {have.fingerprint!r}, expected "
                f"{want['fingerprint']!r}",
            )
    _check_task_ids(results, suite.sources, report)
    return suite.sources


def _check_task_ids(results: Results, sources: Mapping[str, TaskSource], report: Report) -> None:
    wrong: list[str] = []
    for e in results.episodes:
        source = sources.get(e.benchmark)
        if source is None or not 0 <= e.task_index < len(source):
            continue  # reported by the episode-set check
        if source[e.task_index].id != e.task_id:
            wrong.append(
                f"{e.key} has task_id {e.task_id!r}, the suite's task is "
                f"{source[e.task_index].id!r}"
            )
    if wrong:
        report.error("episode", f"{len(wrong)} episode(s) name the wrong task: " + _listing(wrong))


def _check_repeats(results: Results, report: Report) -> None:
    if results.repeats > MAX_REPEATS:
        return  # reported by the env check; never build a range of its size
    seen = sorted({e.repeat for e in results.episodes})
    if results.repeats < 1 or seen != list(range(results.repeats)):
        shown = seen if len(seen) <= 2 * MAX_REPEATS else [*seen[:MAX_REPEATS], "..."]
        report.error(
            "repeats",
            f"the results declare repeats={results.repeats} but the episodes carry repeat "
            f"indices {shown}",
        )


def _check_episode_set(results: Results, report: Report) -> None:
    counts = Counter(e.key for e in results.episodes)
    duplicated = sorted(key for key, count in counts.items() if count > 1)
    if duplicated:
        report.error(
            "episodes",
            f"{len(duplicated)} duplicated episode(s) (benchmark, task_index, repeat): "
            + _listing([f"{k} x{counts[k]}" for k in duplicated]),
        )
    sizes = {s.name: s.size for s in results.suite.sources}
    repeats = results.repeats

    def inside(key: tuple[str, int, int]) -> bool:
        name, index, repeat = key
        return name in sizes and 0 <= index < sizes[name] and 0 <= repeat < repeats

    extra = sorted(key for key in counts if not inside(key))
    missing_count = sum(sizes.values()) * repeats - (len(counts) - len(extra))
    if missing_count > _ENUMERATED:  # a declared set too large to list (or to build)
        report.error("episodes", f"{missing_count} missing episode(s) (too many to list)")
    elif missing_count > 0:
        want = ((n, i, r) for n, size in sizes.items() for i in range(size) for r in range(repeats))
        missing = sorted(key for key in want if key not in counts)
        report.error(
            "episodes",
            f"{len(missing)} missing episode(s) (benchmark, task_index, repeat): "
            + _listing([str(k) for k in missing]),
        )
    if extra:
        report.error(
            "episodes",
            f"{len(extra)} episode(s) outside the suite's tasks and repeats: "
            + _listing([str(k) for k in extra]),
        )


def _check_seeds(results: Results, report: Report) -> None:
    from conductor_gym.bench.suites import episode_seed

    wrong = [
        f"{e.key} has seed {e.seed}, not {episode_seed(results.seed, *e.key)}"
        for e in results.episodes
        if e.seed != episode_seed(results.seed, *e.key)
    ]
    if wrong:
        report.error(
            "seeds",
            f"{len(wrong)} episode(s) whose seed is not the one the run's seed "
            f"{results.seed} derives for their task and repeat: " + _listing(wrong),
        )


def _reward_scheme(results: Results, report: Report) -> dict[str, float] | None:
    """The paper's rewards, or ``None`` (with the problem reported) when the run used
    others: a board compares rewards under one scheme only."""
    from conductor_gym.core.reward import REWARD_SCHEMES

    scheme = REWARD_SCHEMES.get("paper")  # 1 / 0.5 / 0
    paper = {"correct": scheme.correct, "wrong": scheme.wrong, "invalid": scheme.invalid}
    spec = results.env_kwargs.get("reward", "paper")
    if isinstance(spec, Mapping) and {k: spec.get(k) for k in paper} == paper:
        spec = "paper"  # a RewardScheme object equal to the paper's, as evaluate records it
    if spec != "paper":
        report.error("episode", f"env_kwargs.reward is {spec!r}: the board needs the paper's")
        return None
    if results.env_kwargs.get("initial_round_weight"):
        report.warn("episode", "rewards blend two rounds (initial_round_weight): not checked")
        return None
    return paper


def _check_episodes(results: Results, report: Report) -> None:
    scheme = _reward_scheme(results, report)
    bad_correct: list[str] = []
    bad_reward: list[str] = []
    for e in results.episodes:
        key = str(e.key)
        if e.correct != (e.outcome == Outcome.CORRECT):
            bad_correct.append(f"{key} correct={e.correct} with outcome {e.outcome!r}")
        if scheme is not None:
            want = 0.0 if e.outcome == Outcome.ERROR else scheme[e.outcome]
            if not _close(e.reward, want):
                bad_reward.append(f"{key} reward {e.reward!r} with outcome {e.outcome!r}")
    if bad_correct:
        report.error(
            "episode",
            f"{len(bad_correct)} episode(s) whose correct flag contradicts the outcome: "
            + _listing(bad_correct),
        )
    if bad_reward and scheme is not None:
        rule = ", ".join(f"{k} {v:g}" for k, v in scheme.items())
        report.error(
            "episode",
            f"{len(bad_reward)} episode(s) whose reward is not the scheme's reward for the "
            f"outcome ({rule}, error 0): " + _listing(bad_reward),
        )


def _check_metrics(results: Results, report: Report) -> None:
    try:
        recomputed = aggregate(results.episodes, results.repeats)
    except (ValueError, ZeroDivisionError) as exc:
        report.error("metrics", f"cannot recompute the aggregates from the episodes: {exc}")
        return
    stored = results.metrics
    for key in sorted(set(stored) | set(recomputed)):
        if key not in recomputed:
            report.error("metrics", f"metrics[{key!r}] is stored but no episode belongs to it")
        elif key not in stored:
            report.error("metrics", f"metrics[{key!r}] is missing (the episodes have it)")
        else:
            _compare_metrics(key, stored[key], recomputed[key], report)


def _compare_metrics(key: str, stored: Metrics, recomputed: Metrics, report: Report) -> None:
    diffs = [
        f"{name} {getattr(stored, name)!r} (the episodes give {getattr(recomputed, name)!r})"
        for name in type(stored).model_fields
        if not _close(getattr(stored, name), getattr(recomputed, name))
    ]
    if diffs:
        report.error("metrics", f"metrics[{key!r}] differs from the episodes: " + "; ".join(diffs))


def _rerun_agent(results: Results, report: Report) -> BaseAgent | None:
    """The built-in agent to re-run (:mod:`conductor_gym.board.identity`), or ``None``
    for an agent that cannot be re-run; a spec the registry refuses, or a recorded
    description that is not the rebuilt agent's, is an ``agent`` error."""
    from conductor_gym.board.identity import description_differences, is_rerunnable, rerun_agent

    spec = str(results.agent.get("spec", ""))
    if not is_rerunnable(spec):
        return None
    try:
        agent = rerun_agent(spec)
    except ValueError as exc:
        report.error("agent", f"results.agent.spec {spec!r} names a built-in agent, but: {exc}")
        return None
    if differences := description_differences(results, agent):
        report.error(
            "agent",
            f"results.agent is not what the built-in agent {spec!r} records ("
            + _listing(differences)
            + "): re-run evaluate with that agent",
        )
        return None
    return agent


def _identity(results: Results, agent: BaseAgent | None, report: Report) -> AgentIdentity:
    from conductor_gym.board.identity import self_reported

    if agent is None:
        return self_reported(results)
    if report.replay is None:
        return AgentIdentity(
            "self-reported completions", "not re-run: the episodes were not re-played"
        )
    return AgentIdentity("re-run", f"{report.replay.episodes} episodes")


def _check_cache(results: Results, cache: Path, report: Report) -> None:
    """The plausibility checks of the cache a real pool re-plays from
    (:mod:`conductor_gym.board.plausibility`): each finding is a ``cache`` error."""
    from conductor_gym.bench.replay import ReplayError, real_backends, worker_specs
    from conductor_gym.board.plausibility import check_cache
    from conductor_gym.workers.cache import CacheError

    if not real_backends(results):
        return  # a simulated pool is re-played by the simulator, never from a cache
    try:
        found = check_cache(cache, worker_specs(results))
    except ReplayError:
        return  # the re-play says why the workers cannot be rebuilt
    except (CacheError, OSError) as exc:
        report.error("cache", f"the response cache cannot be read: {exc}")
        return
    for problem in found.problems:
        report.error(
            "cache", f"{problem} (the cache is the submitter's claim; see `leaderboard spot-check`)"
        )
    for warning in found.warnings:
        report.warn("cache", warning)


def _check_cache_use(cache: Path, replayed: Replay, report: Report) -> None:
    """Every row of the re-played cache is one the episodes looked up
    (:mod:`conductor_gym.board.cache_use`); unused rows are a ``cache`` error."""
    from conductor_gym.board.cache_use import cache_keys
    from conductor_gym.workers.cache import CacheError

    if replayed.method != "response cache":
        return
    try:
        rows = cache_keys(cache)
    except (CacheError, OSError) as exc:
        report.error("cache", f"the response cache cannot be read: {exc}")
        return
    unused = sorted(rows - replayed.cache_keys)
    if unused:
        report.error(
            "cache",
            f"{len(unused)} of {len(rows)} cached row(s) are used by no episode of this "
            "entry (padding, or other runs' calls: a spot check drawn from them would "
            "re-ask calls that prove nothing about these results): ship only the run's own "
            "calls (`leaderboard submit --cache` writes that copy); unused keys: "
            + _listing([key[:12] for key in unused]),
        )


def _replay(
    results: Results,
    sources: Mapping[str, TaskSource] | None,
    cache: Path | None,
    enabled: bool,
    report: Report,
    agent: BaseAgent | None = None,
) -> Verification:
    """Re-play the episodes when possible (re-running ``agent`` when given); a
    difference is a ``replay`` error, a completion the re-run agent does not write an
    ``agent`` error."""
    from conductor_gym.bench.replay import (
        AGENT_COMPLETION,
        ReplayError,
        real_backends,
        replay_results,
    )

    if not enabled:
        return Verification("unverified", "not re-played (validation without replay)")
    if sources is None:
        return Verification(
            "unverified",
            f"suite {results.suite.name!r} cannot be re-played offline (its tasks "
            "need downloads or are a local file)",
        )
    if cache is None and (real := real_backends(results)):
        return Verification(
            "unverified",
            f"the pool has real workers ({', '.join(real)}) and no response cache was "
            "given: their answers cannot be re-played offline",
        )
    try:
        replayed = replay_results(results, sources, cache=cache, agent=agent)
    except ReplayError as exc:
        return Verification("unverified", str(exc))
    report.replay = replayed
    authored = [d for d in replayed.differences if d.field == AGENT_COMPLETION]
    played = [d for d in replayed.differences if d.field != AGENT_COMPLETION]
    if played:
        fields = Counter(d.field for d in played)
        episodes = len({d.key for d in played})
        summary = ", ".join(f"{name} x{count}" for name, count in sorted(fields.items()))
        report.error(
            "replay",
            f"{episodes} episode(s) differ when re-played ({summary}): "
            + _listing([str(d) for d in played]),
        )
    if authored:
        spec = results.agent.get("spec")
        episodes = len({d.key for d in authored})
        report.error(
            "agent",
            f"{episodes} of {replayed.episodes} episode(s) have completions that the built-in "
            f"agent {spec!r}, re-run here on the same observations, does not write: these "
            "results are not that agent's (an agent's entry holds its own completions "
            "only; a renamed or cherry-picked run is refused): "
            + _listing([f"{d.key} {_first_difference(d.recorded, d.replayed)}" for d in authored]),
        )
    if replayed.method == "response cache":
        how = f"{replayed.episodes} episodes from the submitter's response cache"
        trust: TrustLevel = "cache re-play"
    else:
        how = f"{replayed.episodes} episodes"
        trust = "simulated re-play"
    if replayed.skipped:
        how += f", {len(replayed.skipped)} run-budget failure(s) not re-played"
    return Verification(trust, how)


def _first_difference(recorded: Any, rerun: Any) -> str:
    """Where two completions first differ, with a little of each from there."""
    if not isinstance(recorded, str) or not isinstance(rerun, str):
        return f"recorded {recorded!r:.60}, re-run {rerun!r:.60}"
    at = next(
        (i for i, (a, b) in enumerate(zip(recorded, rerun, strict=False)) if a != b),
        min(len(recorded), len(rerun)),
    )
    start = max(0, at - 10)
    return (
        f"from character {at}: recorded {recorded[start : at + 20]!r}, re-run "
        f"{rerun[start : at + 20]!r}"
    )


def _close(have: Any, want: Any) -> bool:
    if isinstance(have, float) or isinstance(want, float):
        if not isinstance(have, int | float) or not isinstance(want, int | float):
            return False
        if math.isnan(have) or math.isnan(want):
            return math.isnan(have) and math.isnan(want)
        return abs(have - want) <= TOLERANCE
    return bool(have == want)


def _listing(items: list[str]) -> str:
    shown = "; ".join(items[:_MAX_LISTED])
    more = len(items) - _MAX_LISTED
    return shown + (f"; ... and {more} more" if more > 0 else "")


def _checkpoint(path: Path) -> None:
    """Move what a still-open writer left in the cache's write-ahead log into the file
    itself, so the one file shipped holds every recorded answer."""
    import sqlite3

    if not path.is_file():
        raise FileNotFoundError(f"response cache {str(path)!r}: no such file")
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def make_submission(
    results: Results,
    *,
    name: str,
    authors: list[str],
    training_data: str,
    pool_setting: str,
    date: dt.date | None = None,
    url: str | None = None,
    notes: str | None = None,
    response_cache: str | Path | None = None,
    agent_display_name: str | None = None,
) -> Submission:
    """Wrap ``results`` with metadata (``agent`` is taken from ``results.agent["spec"]``).

    ``agent_display_name``: the name the board shows for a self-reported agent instead of
    its spec's path (:class:`SubmissionMetadata`).

    ``response_cache``: the run's response-cache file; its write-ahead log is folded into
    it first, then the submission names it by its file name and pins its SHA-256 (the
    file must then lie beside the submission).
    Raises pydantic's ``ValidationError`` for bad metadata; does not validate the results
    (use :func:`validate_submission`).
    """
    cache_name = cache_digest = None
    if response_cache is not None:
        _checkpoint(Path(response_cache))
        cache_name = Path(response_cache).name
        cache_digest = hashlib.sha256(Path(response_cache).read_bytes()).hexdigest()
    metadata = SubmissionMetadata.model_validate(
        {
            "name": name,
            "authors": authors,
            "agent": str(results.agent.get("spec", "")),
            "training_data": training_data,
            "pool_setting": pool_setting,
            "date": date or dt.datetime.now(dt.UTC).date(),
            "url": url,
            "notes": notes,
            "response_cache": cache_name,
            "response_cache_sha256": cache_digest,
            "agent_display_name": agent_display_name,
        }
    )
    return Submission(metadata=metadata, results=results)
