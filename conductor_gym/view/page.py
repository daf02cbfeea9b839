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
  default when every worker is simulated, or with the run's response cache. Without one,
  plans are parsed from the completions and shown with ``Model i`` ids only. A replay
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
from typing import Any, Literal

from conductor_gym.bench.replay import Replayer, ReplayError, real_backends
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

__all__ = ["ReplayChoice", "build_view", "load_traces", "results_view", "write_view"]

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


def _record_view(record: EpisodeRecord, results: Results) -> dict[str, Any]:
    info = {"task_id": record.task_id, "task_index": record.task_index}
    view = episode_view({**info, "domain": record.domain})
    view["rounds"] = _parsed_rounds(record, results)
    return view


def _differences(stored: EpisodeRecord, replayed: EpisodeRecord) -> list[str]:
    return [
        f"{name} {getattr(stored, name)!r} -> {getattr(replayed, name)!r}"
        for name in _COMPARED
        if getattr(stored, name) != getattr(replayed, name)
        and not (name == "final_response" and stored.final_response is None)  # older files
    ]


def _replayer(results: Results, replay: ReplayChoice, notes: list[str]) -> Replayer | None:
    if replay == "never":
        notes.append("not replayed (replay off): plans parsed from the completions")
        return None
    cache = None if replay == "auto" else replay
    if cache is None and real_backends(results):
        notes.append(
            "not replayed: the pool has real workers; pass the run's response cache to see "
            "each step (nothing is called)"
        )
        return None
    try:
        return Replayer(results, cache=cache)
    except ReplayError as exc:
        notes.append(f"not replayed: {exc}")
        return None


def results_view(
    results: Results, *, replay: ReplayChoice = "auto", title: str | None = None
) -> dict[str, Any]:
    """The page data of a stored run (module docstring)."""
    notes: list[str] = []
    replayer = _replayer(results, replay, notes)
    tasks: dict[str, dict[str, Any]] = {}
    views = []
    for record in results.episodes:
        key = f"{record.benchmark}/{record.task_index}"
        source = "record"
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
            task = None
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
        views.append(view)
    if replayer is not None:
        replayer.close()
    suite = results.suite
    run = {
        "agent": results.agent.get("spec"),
        "pool": results.pool.get("name"),
        "suite": suite.name + (f" (first {suite.limit} per source)" if suite.limit else ""),
        "repeats": results.repeats,
        "episodes": len(results.episodes),
        "env version": results.env_version,
        "started": results.started_at,
        "rescored": "yes" if results.rescored else None,
        "details": "; ".join(notes) if notes else "steps re-played from the completions",
    }
    return {
        "schema": VIEW_SCHEMA,
        "mode": "results",
        "title": title or f"conductor-gym run: {results.agent.get('spec')} on {suite.name}",
        "run": run,
        "summary": _summary(results, views),
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
    path: str | os.PathLike[str], *, replay: ReplayChoice = "auto", title: str | None = None
) -> dict[str, Any]:
    """The page data for the input at ``path`` (module docstring). Raises ``ValueError``
    for a malformed input and ``OSError`` for an unreadable one."""
    path = Path(path)
    if _is_run(path):
        return results_view(load_results(path), replay=replay, title=title)
    return _traces_view(load_traces(path), title or f"conductor-gym traces: {path.name}")


def write_view(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    replay: ReplayChoice = "auto",
    title: str | None = None,
) -> dict[str, Any]:
    """Write the page for ``path`` to ``out``; returns the page data."""
    data = build_view(path, replay=replay, title=title)
    Path(out).write_text(render_page(data), encoding="utf-8")
    return data
