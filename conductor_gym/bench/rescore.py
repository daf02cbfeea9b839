"""``conductor-gym rescore``: re-score a stored run after a grader change, paying nothing.

Contract of :func:`rescore` (it returns a :class:`Rescored`; :func:`write_rescored`
writes it):

* **Mode ``"grade"``** (the default). Each episode's stored final ``answer`` is graded
  again, against its task as the run's suite holds it now (the suite's fingerprint must
  still be the recorded one), by the grader ``graders`` names
  (:data:`~conductor_gym.bench.replay.GraderChoice`: its own, one for every task, or a
  mapping from task grader to grader). The outcome (``correct``/``wrong``) follows the new
  grade, the reward the run's reward scheme (``env_kwargs.reward``); a grader that fails
  makes the episode an infrastructure failure (``error={"kind": "grader", ...}``), as in
  the env. Invalid plans and infrastructure failures were not graded and stay as they are.
  Only the grader runs: no worker, no env.
* **Mode ``"replay"``** (``replay=True``): every episode is re-run through the env from
  its recorded completions and seed (:class:`~conductor_gym.bench.replay.Replayer`), for
  changes beyond the grader (a prompt template, the plan parser, the simulator). A pool
  that is not all simulated needs the run's response cache (``cache``), read in replay
  mode: a call it lacks is a **miss**, never a request; the episode then ends as an
  infrastructure failure and is listed in :attr:`Rescored.misses`.
* **The new results** keep the run's fields (suite, pool, agent, env arguments, seed,
  ``started_at``), hold the new episodes and the metrics
  :func:`~conductor_gym.bench.results.aggregate` computes from them, and append a
  :class:`~conductor_gym.bench.results.RescoreInfo` to ``rescored`` naming the source
  file's SHA-256, the mode, each grader with its version (:func:`grader_version`) and the
  counts. They validate on the leaderboard as a result of their own; a re-play of them
  grades with the graders they record (:func:`conductor_gym.bench.replay.recorded_graders`,
  as the viewer's does). The old file is never touched (:func:`write_rescored` refuses
  to overwrite it, or any existing file unless told to).
* **Changes** (:class:`Change`): every episode whose outcome, reward or answer differs,
  with the old and new grade reasons.

Refused with ``ConfigurationError``: a run whose reward blends two rounds
(``initial_round_weight > 0``; the initial answer is not stored), and, in mode
``"grade"``, a graded episode without a stored answer (a file written before answers
were recorded: use mode ``"replay"``). Replay problems raise
:class:`~conductor_gym.bench.replay.ReplayError` (a ``ValueError``).
"""

from __future__ import annotations

import datetime
import hashlib
import inspect
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from conductor_gym.bench.replay import (
    GraderChoice,
    Replayer,
    grader_for,
    recorded_task,
    regrade,
    reward_scheme,
    run_sources,
)
from conductor_gym.bench.results import (
    EpisodeRecord,
    GraderInfo,
    Metrics,
    RescoreInfo,
    Results,
    aggregate,
    load_results,
)
from conductor_gym.core.reward import Outcome
from conductor_gym.errors import ConfigurationError
from conductor_gym.graders import get_grader

__all__ = [
    "Change",
    "Rescored",
    "default_output",
    "format_rescored",
    "grader_version",
    "rescore",
    "write_rescored",
]


def grader_version(name: str) -> str:
    """``"<package version>+<hash>"``: the hash is the first 12 hex digits of the SHA-256
    of the source of the module defining the grader ``name`` (its qualified name when
    the source cannot be read), so an edited grader gets a new version."""
    import conductor_gym

    fn = get_grader(name)
    try:
        source = inspect.getsource(inspect.getmodule(fn) or fn)
    except (OSError, TypeError):
        source = f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]
    return f"{conductor_gym.__version__}+{digest}"


@dataclass(frozen=True)
class Change:
    """One episode whose outcome, reward or answer changed.

    ``why`` names the fields that differ (``"outcome"``, ``"reward"``, ``"final_response"``;
    ``"miss"`` for a replay that found a call missing from the cache); ``new_error`` is
    the message of a new infrastructure failure (a grader that failed, a miss).
    """

    key: tuple[str, int, int]
    task_id: str
    old_outcome: Outcome
    new_outcome: Outcome
    old_reward: float
    new_reward: float
    old_reason: str | None
    new_reason: str | None
    old_extracted: str | None
    new_extracted: str | None
    why: tuple[str, ...]
    new_error: str | None = None


@dataclass
class Rescored:
    """The outcome of :func:`rescore`: the new ``results``, the ``changes``, the keys of
    the episodes a replay ``misses`` and the source's metrics (``before``)."""

    results: Results
    changes: list[Change]
    misses: list[tuple[str, int, int]]
    before: dict[str, Metrics]
    mode: Literal["grade", "replay"] = "grade"
    graders: dict[str, GraderInfo] = field(default_factory=dict)


def _change(old: EpisodeRecord, new: EpisodeRecord, miss: bool) -> Change | None:
    compared = ("outcome", "reward", "final_response")
    why = [name for name in compared if getattr(old, name) != getattr(new, name)]
    if old.final_response is None and why == ["final_response"]:
        why = []  # an older file stored no response: recording one is no change
    if miss:
        why.append("miss")
    if not why:
        return None
    return Change(
        key=old.key,
        task_id=old.task_id,
        old_outcome=old.outcome,
        new_outcome=new.outcome,
        old_reward=old.reward,
        new_reward=new.reward,
        old_reason=old.grade_reason,
        new_reason=new.grade_reason,
        old_extracted=old.final_answer,
        new_extracted=new.final_answer,
        why=tuple(why),
        new_error=str(new.error.get("message")) if new.error and new.error != old.error else None,
    )


def _source_digest(source: Results | str | os.PathLike[str]) -> tuple[Results, str, str]:
    if isinstance(source, Results):
        text = source.to_json().encode("utf-8")
        return source, "<results>", hashlib.sha256(text).hexdigest()
    path = Path(source)
    return load_results(path), path.name, hashlib.sha256(path.read_bytes()).hexdigest()


def rescore(
    source: Results | str | os.PathLike[str],
    *,
    graders: GraderChoice = None,
    replay: bool = False,
    cache: str | os.PathLike[str] | None = None,
    pool: str | os.PathLike[str] | None = None,
) -> Rescored:
    """Re-score the run ``source`` (a :class:`Results`, a results file or a journal);
    see the module docstring. ``cache`` and ``pool`` apply to ``replay`` only."""
    import conductor_gym

    if not replay and (cache is not None or pool is not None):
        raise ConfigurationError("cache and pool re-build the env: they need replay=True")
    results, name, digest = _source_digest(source)
    scheme = reward_scheme(results)
    sources = run_sources(results)
    used: dict[str, str] = {}  # task grader -> the grader that graded it
    episodes: list[EpisodeRecord] = []
    changes: list[Change] = []
    misses: list[tuple[str, int, int]] = []
    replayer = None
    if replay:
        replayer = Replayer(results, sources=sources, cache=cache, pool=pool, graders=graders)
    try:
        for record in results.episodes:
            task = recorded_task(sources, record)
            used[task.grader] = grader_for(graders, task.grader)
            miss = False
            if replayer is not None:
                replayed = replayer.replay(record)
                new, miss = replayed.record, replayed.miss
            else:
                new = regrade(record, task, used[task.grader], scheme)
            episodes.append(new)
            if miss:
                misses.append(record.key)
            if change := _change(record, new, miss):
                changes.append(change)
    finally:
        if replayer is not None:
            replayer.close()
    infos = {
        task: GraderInfo(name=grader, version=grader_version(grader))
        for task, grader in sorted(used.items())
    }
    mode: Literal["grade", "replay"] = "replay" if replay else "grade"
    note = RescoreInfo(
        at=datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        conductor_gym_version=conductor_gym.__version__,
        source=name,
        source_sha256=digest,
        mode=mode,
        graders=infos,
        changed=len(changes),
        misses=len(misses),
    )
    new_results = results.model_copy(
        update={
            "episodes": episodes,
            "metrics": aggregate(episodes, results.repeats),
            "rescored": [*(results.rescored or []), note],
        }
    )
    return Rescored(new_results, changes, misses, dict(results.metrics), mode, infos)


def default_output(source: str | os.PathLike[str]) -> Path:
    """Where a re-scored copy of ``source`` goes by default: ``run.json`` ->
    ``run.rescored.json`` (a journal ``run.json.episodes.jsonl`` -> ``run.rescored.json``)."""
    path = Path(source)
    name = path.name.removesuffix(".episodes.jsonl")
    stem = name[: -len(".json")] if name.endswith(".json") else Path(name).stem
    return path.with_name(f"{stem}.rescored.json")


def write_rescored(
    rescored: Rescored,
    out: str | os.PathLike[str],
    *,
    source: str | os.PathLike[str] | None = None,
    force: bool = False,
) -> Path:
    """Write the new results to ``out``. Refuses (``FileExistsError``) to write over
    ``source`` ever, or over any existing file unless ``force``."""
    target = Path(out)
    if source is not None and target.resolve() == Path(source).resolve():
        raise FileExistsError(f"{target}: a re-scored file never replaces the one it re-scores")
    if target.exists() and not force:
        raise FileExistsError(f"{target} exists: choose another output or force")
    rescored.results.dump(target)
    return target


def _figure(metrics: Mapping[str, Metrics], key: str, name: str) -> float | None:
    m = metrics.get(key)
    return None if m is None else float(getattr(m, name))


def format_rescored(rescored: Rescored, *, limit: int | None = None) -> str:
    """A plain-text report: the graders, every change (old and new outcome, reward,
    extracted answer and grade reason), the misses and the metrics before and after."""
    results = rescored.results
    lines = [f"mode {rescored.mode}; graders:"]
    for task, info in rescored.graders.items():
        lines.append(f"  {task} -> {info.name} (version {info.version})")
    n = len(results.episodes)
    lines.append(f"{len(rescored.changes)} of {n} episode(s) changed")
    shown: Sequence[Change] = rescored.changes[:limit] if limit else rescored.changes
    for c in shown:
        lines.append(
            f"  {c.key} {c.task_id}: {c.old_outcome} -> {c.new_outcome}, reward "
            f"{c.old_reward:g} -> {c.new_reward:g} ({', '.join(c.why)})"
        )
        if c.old_reason != c.new_reason or c.old_extracted != c.new_extracted:
            lines.append(f"      old: {c.old_extracted!r}: {c.old_reason}")
            if c.new_error is not None:
                lines.append(f"      new: infrastructure failure: {c.new_error}")
            else:
                lines.append(f"      new: {c.new_extracted!r}: {c.new_reason}")
    if len(shown) < len(rescored.changes):
        lines.append(f"  ... and {len(rescored.changes) - len(shown)} more")
    if rescored.misses:
        lines.append(
            f"{len(rescored.misses)} episode(s) missed the response cache (nothing was "
            "called; they count as infrastructure failures): "
            + ", ".join(str(k) for k in rescored.misses[:10])
            + (" ..." if len(rescored.misses) > 10 else "")
        )
    for key in sorted(results.metrics, key=lambda k: (k != "overall", k)):
        parts = []
        for label, name in (("accuracy", "accuracy"), ("reward", "mean_reward")):
            old, new = _figure(rescored.before, key, name), _figure(results.metrics, key, name)
            was = "n/a" if old is None else f"{old:.4f}"
            parts.append(f"{label} {was} -> {new:.4f}")
        lines.append(f"{key}: " + ", ".join(parts))
    return "\n".join(lines)
