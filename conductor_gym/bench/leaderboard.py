"""The leaderboard: submissions and their validation.

A **submission** is one evaluation's results file (:class:`conductor_gym.bench.results.Results`,
as written by ``conductor-gym evaluate``) plus metadata about who ran what. On disk it is
``leaderboard/submissions/<slug>.json``::

    {"metadata": {"name": ..., "authors": [...], "agent": "<agent spec>",
                  "training_data": ..., "pool_setting": "constrained" | "unconstrained"
                  | "simulated", "date": "YYYY-MM-DD", "url": ..., "notes": ...},
     "results": {...}}

:func:`validate_submission` checks a submission the way a maintainer would before
accepting it, and reports every problem with its own message:

* ``schema``: the file parses against :class:`Submission` (no unknown fields anywhere);
* ``metadata``: ``metadata.agent`` is the results' ``agent.spec``; the pool setting agrees
  with the pool's backends (``simulated`` exactly when every worker is simulated);
* ``suite``: the suite exists with these sources and sizes (after the declared limit), and
  its fingerprint, recomputed here, is the declared one. A suite whose sources need
  downloads cannot be fingerprinted offline (no registry of known fingerprints exists
  yet): a *warning* says so, it is not a pass;
* ``repeats``: the declared repeat count matches the repeat indices of the episodes;
* ``episodes``: every ``(benchmark, task_index, repeat)`` appears exactly once: none
  missing, none duplicated, none outside the suite;
* ``episode``: each record is self-consistent: ``correct == (outcome == "correct")``, the
  reward is the paper's for the outcome (1 / 0.5 / 0; ``error``: 0; a run with another
  reward scheme is rejected) and the task id is the suite's task at that index (offline
  suites);
* ``metrics``: every stored aggregate equals :func:`conductor_gym.bench.results.aggregate`
  recomputed from the episodes (floats within 1e-9, counts exactly).

The rendered board (Markdown, HTML, plot) is in :mod:`conductor_gym.bench.leaderboard_render`.
This module imports pydantic at import time; ``import conductor_gym`` does not import it.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from conductor_gym.bench.results import Metrics, Results, aggregate

if TYPE_CHECKING:
    from conductor_gym.bench.suites import Suite
    from conductor_gym.tasks import TaskSource

__all__ = [
    "POOL_SETTINGS",
    "SUBMISSIONS_DIR",
    "Problem",
    "Report",
    "Submission",
    "SubmissionMetadata",
    "load_submissions",
    "make_submission",
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

_MAX_LISTED = 5  # per-episode problems listed before "... and N more"


class SubmissionMetadata(BaseModel):
    """Who submitted what (``agent`` is the agent spec the results were produced with)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=80)
    authors: list[str] = Field(min_length=1)
    agent: str = Field(min_length=1)
    training_data: str
    pool_setting: PoolSetting
    date: dt.date
    url: str | None = None
    notes: str | None = None


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
    """The outcome of validating one submission: accepted when there are no errors."""

    source: str
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    submission: Submission | None = None

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
    return slug or "entry"


# ------------------------------------------------------------------------------ entry points


def validate_file(path: str | Path) -> Report:
    """Validate the submission file at ``path`` (see the module docstring)."""
    report = Report(str(path))
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        report.error("schema", f"cannot read the file: {exc}")
        return report
    except json.JSONDecodeError as exc:
        report.error("schema", f"not JSON: {exc}")
        return report
    return validate_submission(raw, source=str(path))


def validate_submission(raw: Any, *, source: str = "<submission>") -> Report:
    """Validate a submission given as parsed JSON (or a :class:`Submission`)."""
    report = Report(source)
    if isinstance(raw, Submission):
        raw = raw.model_dump(mode="json")
    if isinstance(raw, Mapping) and "schema" in raw and "metadata" not in raw:
        report.error(
            "schema",
            "this is a results file, not a submission: wrap it with metadata using "
            "`conductor-gym leaderboard submit RESULTS --name ...`",
        )
        return report
    try:
        submission = Submission.model_validate(raw)
    except ValidationError as exc:
        for err in exc.errors():
            where = _location(err["loc"])
            report.error("schema", f"{where}: {err['msg']}" if where else err["msg"])
        return report
    report.submission = submission
    results = submission.results
    _check_metadata(submission, report)
    sizes = _check_suite(results, report)
    _check_repeats(results, report)
    _check_episode_set(results, sizes, report)
    _check_episodes(results, report)
    _check_metrics(results, report)
    return report


def load_submissions(directory: str | Path) -> list[tuple[Path, Report]]:
    """Validate every ``*.json`` under ``directory/submissions`` (sorted by file name)."""
    folder = Path(directory) / SUBMISSIONS_DIR
    return [(path, validate_file(path)) for path in sorted(folder.glob("*.json"))]


# ----------------------------------------------------------------------------------- checks


def _location(loc: Iterable[int | str]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")


def _check_metadata(submission: Submission, report: Report) -> None:
    meta, results = submission.metadata, submission.results
    spec = results.agent.get("spec")
    if spec != meta.agent:
        report.error(
            "metadata",
            f"metadata.agent is {meta.agent!r} but the results were produced by agent "
            f"{spec!r} (results.agent.spec)",
        )
    backends = _pool_backends(results.pool)
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


def _pool_backends(pool: Mapping[str, Any]) -> set[str]:
    workers = pool.get("workers")
    if not isinstance(workers, list):
        return set()
    return {str(w["backend"]) for w in workers if isinstance(w, Mapping) and "backend" in w}


def _offline_sources(suite: Suite) -> dict[str, TaskSource] | None:
    """The suite's task sources when all of them can be read here without a download
    (procedural sources, JSON Lines files that exist), else ``None``."""
    from conductor_gym.bench.suites import LimitedTasks
    from conductor_gym.tasks import JsonlTasks, ProceduralTasks

    sources = suite.sources  # building a source reads no data
    for source in sources.values():
        inner = source.source if isinstance(source, LimitedTasks) else source
        if isinstance(inner, JsonlTasks) and inner.offline_available():
            continue
        if not isinstance(inner, ProceduralTasks):
            return None
    return sources


def _check_suite(results: Results, report: Report) -> dict[str, int] | None:
    """Check the declared suite against the registry. Returns the expected size of each
    source (``None`` when the suite is unknown)."""
    from conductor_gym.bench.suites import get_suite

    declared = results.suite
    try:
        suite = get_suite(declared.name, limit=declared.limit)
    except ValueError as exc:
        report.error("suite", str(exc))
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
    sources = _offline_sources(suite)
    if sources is None:
        report.warn(
            "suite",
            f"fingerprint not checkable offline: suite {declared.name!r} reads datasets that "
            "need downloads and no known fingerprint is registered for it; the declared "
            f"fingerprint {declared.fingerprint!r} and sizes were not verified",
        )
        return got_sizes
    info = suite.info()
    sizes = {s["name"]: int(s["size"]) for s in info["sources"]}
    if sizes != got_sizes:
        report.error(
            "suite",
            f"suite {declared.name!r}"
            + (f" with limit {declared.limit}" if declared.limit is not None else "")
            + f" has source sizes {sizes} but the results declare {got_sizes}",
        )
    if info["fingerprint"] != declared.fingerprint:
        report.error(
            "suite",
            f"fingerprint {declared.fingerprint!r} is not the fingerprint of suite "
            f"{declared.name!r}"
            + (f" with limit {declared.limit}" if declared.limit is not None else "")
            + f" ({info['fingerprint']!r}): the results were run on other questions",
        )
    for want, have in zip(info["sources"], declared.sources, strict=True):
        if want["fingerprint"] != have.fingerprint:
            report.error(
                "suite",
                f"source {have.name!r}: fingerprint {have.fingerprint!r}, expected "
                f"{want['fingerprint']!r}",
            )
    _check_task_ids(results, sources, report)
    return sizes


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
    seen = sorted({e.repeat for e in results.episodes})
    if results.repeats < 1 or seen != list(range(results.repeats)):
        report.error(
            "repeats",
            f"the results declare repeats={results.repeats} but the episodes carry repeat "
            f"indices {seen}",
        )


def _check_episode_set(results: Results, sizes: Mapping[str, int] | None, report: Report) -> None:
    counts = Counter(e.key for e in results.episodes)
    duplicated = sorted(key for key, count in counts.items() if count > 1)
    if duplicated:
        report.error(
            "episodes",
            f"{len(duplicated)} duplicated episode(s) (benchmark, task_index, repeat): "
            + _listing([f"{k} x{counts[k]}" for k in duplicated]),
        )
    if sizes is None:
        return
    want = {
        (name, i, r) for name, size in sizes.items() for i in range(size)
        for r in range(results.repeats)
    }  # fmt: skip
    missing = sorted(want - counts.keys())
    extra = sorted(counts.keys() - want)
    if missing:
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
        if e.correct != (e.outcome == "correct"):
            bad_correct.append(f"{key} correct={e.correct} with outcome {e.outcome!r}")
        if scheme is not None:
            want = 0.0 if e.outcome == "error" else scheme[e.outcome]
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
) -> Submission:
    """Wrap ``results`` with metadata (``agent`` is taken from ``results.agent["spec"]``).

    Raises pydantic's ``ValidationError`` for bad metadata; does not validate the results
    (use :func:`validate_submission`).
    """
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
        }
    )
    return Submission(metadata=metadata, results=results)
