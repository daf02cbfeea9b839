"""``conductor-gym view``: a stored run, or a list of traces, as one self-contained page.

Contract. :func:`build_view` reads an input and returns the page data that
:func:`conductor_gym.core.render_html.render_page` draws; :func:`write_view` writes the
page (one HTML file: inline CSS and script, nothing loaded from the network). Inputs:

* a **results file** (``conductor-gym evaluate --out``) or an **episodes journal**
  (``<out>.episodes.jsonl``, read with :func:`conductor_gym.bench.results.load_results`);
* a **trace list**: a JSON array, or JSON Lines, of step infos as
  :func:`conductor_gym.bench.results.json_safe` writes them, each optionally with
  ``completions`` (the agent's texts, in round order), ``reference``, ``grader`` and
  ``reward``.

For a run the page has:

* a **summary**: the metrics of :func:`conductor_gym.bench.results.aggregate` (the file's
  own definitions) overall, per benchmark and per family (task domain), a histogram of
  steps per episode (over every round; 0 for a first plan that did not parse) and the
  worker use (steps routed to each worker, and episodes using it);
* **every episode**: the record's figures as stored (outcome, reward, tokens, cost, ...),
  the question, reference and grader from the suite when it is readable offline, and each
  round's completion and plan. Step details (responses, per-step usage, who saw what, the
  grade's reason, the real worker names) come from a **replay** of the recorded
  completions (:class:`conductor_gym.bench.replay.Replayer`; no backend is called): by
  default when every worker is simulated, or with the run's response cache (and, with
  ``pool``, the run's workers rebuilt from a preset or pool file). Without one, plans are
  parsed from the completions; the question, reference and grader still come from the
  suite by task id when it is readable offline, the run's worker names from its worker
  records, and each ``Model i``'s worker when every episode sees the whole pool
  unshuffled (else ``Model i`` ids only). Texts over ``max_text`` characters are
  clipped, saying so in the run's details. A replay
  that does not reproduce the stored record says so on the episode (the page still shows
  the stored figures).

A trace list's page has the episodes and no summary.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from conductor_gym.bench.replay import (
    Replayer,
    ReplayError,
    real_backends,
    recorded_task,
    run_sources,
)
from conductor_gym.bench.results import (
    OVERALL,
    EpisodeRecord,
    Results,
    aggregate,
    is_journal,
    load_results,
)
from conductor_gym.core.render_html import VIEW_SCHEMA, episode_view, render_page, round_view
from conductor_gym.plan import PlanParseError, parse_plan
from conductor_gym.tasks import Task

__all__ = [
    "DEFAULT_MAX_TEXT",
    "Progress",
    "ReplayChoice",
    "build_view",
    "load_traces",
    "results_view",
    "write_view",
]

DEFAULT_MAX_TEXT = 4000
"""The most characters of one completion or response a page embeds by default (the
results file keeps them whole); ``0`` or ``None`` embeds every text whole."""


class Progress(Protocol):
    """Told ``(done, total)`` episodes as a page's data is built."""

    def __call__(self, done: int, total: int) -> None: ...


ReplayChoice = Literal["auto", "never"] | str | os.PathLike[str]
"""``"auto"``: replay when every worker is simulated; ``"never"``; or a response-cache
path to replay from."""

_RECORD_FIGURES = (
    "outcome",
    "reward",
    "steps",
    "worker_calls",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "latency_s",
    "parse_error",
)
_COMPARED = (
    "outcome",
    "reward",
    "final_response",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
)


def _summary_rows(episodes: Sequence[EpisodeRecord], repeats: int) -> list[dict[str, Any]]:
    rows = []
    metrics = aggregate(episodes, repeats)
    for name, m in metrics.items():
        group = "overall" if name == OVERALL else "benchmark"
        rows.append({"group": group, "name": name, **m.model_dump()})
    families = sorted({e.domain for e in episodes})
    if OVERALL not in families and families != sorted(metrics.keys() - {OVERALL}):
        by_family = [e.model_copy(update={"benchmark": e.domain}) for e in episodes]
        for name, m in aggregate(by_family, repeats).items():
            if name != OVERALL:
                rows.append({"group": "family", "name": name, **m.model_dump()})
    return rows


def _summary(results: Results, views: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    steps = Counter(e.steps for e in results.episodes)
    routed: Counter[str] = Counter()
    used: Counter[str] = Counter()
    for view in views:
        used.update(view["workers"])
        for r in view["rounds"]:
            if r["steps"] is not None:
                routed.update(str(s["worker"]) for s in r["steps"])
            elif r["plan"] is not None:
                pool = view["pool"]
                routed.update(
                    pool[m] if pool and 0 <= m < len(pool) else f"Model {m}"
                    for m in r["plan"]["model_id"]
                )
    return {
        "rows": _summary_rows(results.episodes, results.repeats),
        "steps_histogram": [[str(n), steps[n]] for n in sorted(steps)],
        "worker_use": [[name, routed[name], used.get(name, 0)] for name, _ in routed.most_common()],
    }


def _parsed_rounds(record: EpisodeRecord, results: Results) -> list[dict[str, Any]]:
    """Round views from the completions alone (no replay): each plan parsed as the env
    would for a pool of the recorded size."""
    workers = int(results.pool.get("k") or len(results.pool.get("workers") or ()) or 1)
    max_steps = int(results.env_kwargs.get("max_steps", 5))
    rounds = []
    actions = [record.completion, *record.followups] if record.completion else []
    for index, text in enumerate(actions):
        try:
            plan = parse_plan(text, workers + (1 if index else 0), max_steps)
            rounds.append(round_view(index, text, plan))
        except PlanParseError as exc:
            error = {"reason": exc.reason, "detail": exc.detail}
            rounds.append(round_view(index, text, parse_error=error))
    return rounds


def _fixed_pool(results: Results) -> list[str] | None:
    """The real worker names in ``Model i`` order when every episode sees the whole pool
    unshuffled (then the draw is the recorded worker order), else ``None``."""
    names = [w.name for w in results.workers or ()]
    k = results.pool.get("k")
    if not names or results.pool.get("shuffle") or (k is not None and k != len(names)):
        return None
    return names


def _record_view(record: EpisodeRecord, results: Results) -> dict[str, Any]:
    info = {"task_id": record.task_id, "task_index": record.task_index}
    view = episode_view({**info, "domain": record.domain, "pool": _fixed_pool(results)})
    view["rounds"] = _parsed_rounds(record, results)
    if (pool := view["pool"]) is not None:
        view["workers"] = sorted(
            {
                pool[m]
                for r in view["rounds"]
                if r["plan"] is not None
                for m in r["plan"]["model_id"]
                if 0 <= m < len(pool)
            }
        )
    return view


def _differences(stored: EpisodeRecord, replayed: EpisodeRecord) -> list[str]:
    return [
        f"{name} {getattr(stored, name)!r} -> {getattr(replayed, name)!r}"
        for name in _COMPARED
        if getattr(stored, name) != getattr(replayed, name)
        and not (name == "final_response" and stored.final_response is None)  # older files
    ]


def _replayer(
    results: Results,
    replay: ReplayChoice,
    notes: list[str],
    pool: str | os.PathLike[str] | None = None,
) -> Replayer | None:
    if replay == "never":
        if pool is not None:
            raise ReplayError(
                "a pool (--pool) rebuilds the run's workers to re-play them: it has no use "
                "with the replay off (--no-replay)"
            )
        notes.append("not replayed (replay off): plans parsed from the completions")
        return None
    cache = None if replay == "auto" else replay
    asked = cache is not None or pool is not None  # a replay the caller asked for
    if cache is None and real_backends(results):
        if pool is not None:
            raise ReplayError(
                "the run has real workers: re-playing them through a pool needs the run's "
                "response cache too (--replay CACHE)"
            )
        notes.append(
            "not replayed: the pool has real workers; pass the run's response cache to see "
            "each step (nothing is called)"
        )
        return None
    try:
        return Replayer(results, cache=cache, pool=pool)
    except ReplayError as exc:
        if asked:  # a page without the asked-for steps would pass for the real one
            raise
        notes.append(f"not replayed: {exc}")
        return None


def _offline_task(sources: Mapping[str, Any] | None, record: EpisodeRecord) -> Task | None:
    if sources is None:
        return None
    try:
        return recorded_task(sources, record)
    except ReplayError:
        return None


def _clip(text: Any, limit: int | None) -> Any:
    if not limit or not isinstance(text, str) or len(text) <= limit:
        return text
    return text[:limit] + f"\u2026 [{len(text) - limit:,} more characters in the results file]"


def _clip_steps(steps: Any, limit: int) -> bool:
    clipped = False
    for step in steps or ():
        short = _clip(step.get("response"), limit)
        clipped |= short is not step.get("response")
        step["response"] = short
    return clipped


def _cap_texts(view: dict[str, Any], limit: int | None) -> bool:
    """Clip every completion and response of ``view`` to ``limit`` characters (in
    place); whether any was clipped. A plan's offending span past the cut is dropped."""
    if not limit:
        return False
    clipped = False
    for r in view["rounds"]:
        text = r["completion"]
        if isinstance(text, str) and len(text) > limit:
            r["completion"], clipped = _clip(text, limit), True
            if r["lists_at"] is not None and r["lists_at"] >= limit:
                r["lists_at"] = None
            error = r["parse_error"]
            if error and error["span"] and error["span"][1] > limit:
                error["span"] = None
        clipped |= _clip_steps(r["steps"], limit)
        for call in r["self_calls"]:
            for name in ("question", "completion"):
                short = _clip(call[name], limit)
                clipped |= short is not call[name]
                call[name] = short
            clipped |= _clip_steps(call["steps"], limit)
    if isinstance(view.get("answer"), str) and len(view["answer"]) > limit:
        view["answer"], clipped = _clip(view["answer"], limit), True
    return clipped


def results_view(
    results: Results,
    *,
    replay: ReplayChoice = "auto",
    pool: str | os.PathLike[str] | None = None,
    title: str | None = None,
    max_text: int | None = DEFAULT_MAX_TEXT,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The page data of a stored run (module docstring). ``pool`` (a preset name or a
    pool file) rebuilds the run's workers for the replay instead of the recorded ones
    (they must be the ones the results describe); ``max_text`` caps each embedded
    completion and response (:data:`DEFAULT_MAX_TEXT`); ``progress`` is told every
    hundredth episode (and the last)."""
    notes: list[str] = []
    replayer = _replayer(results, replay, notes, pool)
    sources = None
    if replayer is None:
        try:
            sources = run_sources(results)
        except ReplayError as exc:
            notes.append(f"questions not shown: {exc}")
    tasks: dict[str, dict[str, Any]] = {}
    views = []
    clipped = 0
    total = len(results.episodes)
    for done, record in enumerate(results.episodes, 1):
        key = f"{record.benchmark}/{record.task_index}"
        source = "record"
        task: Task | None
        if replayer is not None:
            replayed = replayer.replay(record)
            task = replayed.task
            view = episode_view(
                replayed.info,
                replayed.completions,
                reward=replayed.record.reward,
                answer=replayed.record.final_response,
            )
            source = "replay"
            if replayed.miss:
                view["notes"].append("a step's call is not in the response cache")
            if differs := _differences(record, replayed.record):
                view["notes"].append("the replay differs from the record: " + "; ".join(differs))
        else:
            view = _record_view(record, results)
            task = _offline_task(sources, record)
        if key not in tasks:
            tasks[key] = (
                {"question": task.question, "reference": task.reference, "grader": task.grader}
                if task is not None
                else {"question": None, "reference": None, "grader": None}
            )
        for name in ("question", "reference", "grader"):
            view.pop(name, None)
        view.update({name: getattr(record, name) for name in _RECORD_FIGURES})
        view.update(
            task=key,
            benchmark=record.benchmark,
            repeat=record.repeat,
            seed=str(record.seed),  # 63-bit: beyond a JavaScript number's exact range
            planner_tokens=record.planner_tokens,
            planner_cost_usd=record.planner_cost_usd,
            error=record.error,
            source=source,
        )
        if view["answer"] is None:
            view["answer"] = record.final_response
        if view["grade"] is None and record.grade_reason is not None:
            view["grade"] = {
                "correct": record.correct,
                "extracted": record.final_answer,
                "reason": record.grade_reason,
            }
        clipped += _cap_texts(view, max_text)
        views.append(view)
        if progress is not None and (done % 100 == 0 or done == total):
            progress(done, total)
    if replayer is not None:
        replayer.close()
        notes.insert(0, "steps re-played from the completions")
    if clipped:
        notes.append(
            f"texts over {max_text:,} characters clipped in {clipped:,} episode(s) "
            "(the results file keeps them whole)"
        )
    summary = _summary(results, views)
    suite = results.suite
    run = {
        "agent": results.agent.get("spec"),
        "pool": results.pool.get("name"),
        "workers": ", ".join(w.name for w in results.workers or ()) or None,
        "suite": suite.name + (f" (first {suite.limit} per source)" if suite.limit else ""),
        "repeats": results.repeats,
        "episodes": len(results.episodes),
        "env version": results.env_version,
        "started": results.started_at,
        "rescored": "yes" if results.rescored else None,
        "details": "; ".join(notes),
    }
    return {
        "schema": VIEW_SCHEMA,
        "mode": "results",
        "title": title or f"conductor-gym run: {results.agent.get('spec')} on {suite.name}",
        "run": run,
        "summary": summary,
        "tasks": tasks,
        "episodes": views,
    }


def load_traces(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The step infos of a trace list (a JSON array or JSON Lines of objects)."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        data = [json.loads(line) for line in text.splitlines() if line.strip()]
    if isinstance(data, Mapping):
        data = [data]
    if not isinstance(data, list) or not all(isinstance(item, Mapping) for item in data):
        raise ValueError(f"{path}: a trace list is a JSON array (or JSON Lines) of objects")
    for number, item in enumerate(data):
        if "task_id" not in item:
            raise ValueError(
                f"{path}: item {number} is no step info (it has no task_id); a trace list "
                "holds the infos env.step returns, as json_safe writes them"
            )
    return [dict(item) for item in data]


def _traces_view(items: Sequence[Mapping[str, Any]], title: str) -> dict[str, Any]:
    views = []
    for item in items:
        reward = item.get("reward")
        view = episode_view(
            item,
            [str(c) for c in item.get("completions") or ()],
            reference=item.get("reference"),
            grader=item.get("grader"),
            reward=float(reward) if isinstance(reward, int | float) else None,
        )
        view.update(benchmark=None, source="trace")
        views.append(view)
    return {
        "schema": VIEW_SCHEMA,
        "mode": "results",
        "title": title,
        "run": {"episodes": len(views)},
        "summary": None,
        "tasks": None,
        "episodes": views,
    }


def _is_run(path: Path) -> bool:
    """A results file or journal (else a trace list)."""
    if is_journal(path):
        return True
    with path.open(encoding="utf-8") as handle:
        head = handle.read(4096)
    first = head.split("\n", 1)[0]
    try:
        if isinstance(line := json.loads(first), Mapping):
            return "header" in line or str(line.get("schema", "")).startswith(
                "conductor-gym/results"
            )
    except ValueError:
        pass
    return '"schema": "conductor-gym/results' in head


def build_view(
    path: str | os.PathLike[str],
    *,
    replay: ReplayChoice = "auto",
    pool: str | os.PathLike[str] | None = None,
    title: str | None = None,
    max_text: int | None = DEFAULT_MAX_TEXT,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """The page data for the input at ``path`` (module docstring; the options are
    :func:`results_view`'s). Raises ``ValueError`` for a malformed input, an input without
    episodes, and a replay asked for (``replay=CACHE`` or ``pool``) that cannot happen
    (:class:`~conductor_gym.bench.replay.ReplayError`, naming what to fix), and ``OSError``
    for an unreadable one."""
    path = Path(path)
    if _is_run(path):
        data = results_view(
            load_results(path),
            replay=replay,
            pool=pool,
            title=title,
            max_text=max_text,
            progress=progress,
        )
    else:
        data = _traces_view(load_traces(path), title or f"conductor-gym traces: {path.name}")
    if not data["episodes"]:
        raise ValueError(f"{path}: no episodes to show (an empty run or trace list)")
    return data


def write_view(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    replay: ReplayChoice = "auto",
    pool: str | os.PathLike[str] | None = None,
    title: str | None = None,
    max_text: int | None = DEFAULT_MAX_TEXT,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Write the page for ``path`` to ``out`` (options: :func:`results_view`'s);
    returns the page data."""
    data = build_view(
        path, replay=replay, pool=pool, title=title, max_text=max_text, progress=progress
    )
    Path(out).write_text(render_page(data), encoding="utf-8")
    return data
