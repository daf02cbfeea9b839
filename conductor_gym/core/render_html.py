"""The ``"html"`` rendering: episodes as plain data, and the page that shows them.

Contract. :func:`episode_view` turns one episode (the step ``info``, as the env returns
it or as :func:`conductor_gym.bench.results.json_safe` writes it, and the agent's
completions) into an **episode view**, plain JSON data; :func:`render_page` writes a
self-contained HTML page (the style sheet and script of
:mod:`conductor_gym.core.render_assets` inline, nothing loaded from the network) showing
any number of them. ``env.render()`` in mode ``"html"`` is :func:`render_episode_html`
of the current episode; :mod:`conductor_gym.view.page` builds the page of a whole results
file.

An episode view has the keys ``task_id``, ``task_index``, ``domain``, ``question``,
``reference``, ``grader`` (``None`` where unknown), ``pool`` (the real worker names;
position ``i`` is the conductor's ``Model i``; ``None`` where unknown), ``rounds`` (one
**round view** per plan), ``outcome``, ``reward``, ``grade`` (``{"correct",
"extracted", "reason"}`` or ``None``), ``answer`` (the graded final answer), ``error``
(an infrastructure failure, or ``None``), ``parse_error`` (the invalid plan's reason
code, or ``None``), the totals ``steps``, ``worker_calls``, ``prompt_tokens``,
``completion_tokens``, ``cost_usd``, ``latency_s``, ``workers`` (the sorted names of the
workers that got a step) and ``notes`` (lines for the reader, e.g. where the data came
from).

A round view has ``index``, ``completion`` (the agent's text, or ``None``),
``lists_at`` (where the three lists start in it, splitting reasoning from the plan),
``plan`` (``{"model_id", "subtasks", "access_list"}`` or ``None``), ``visible`` (per
step, the earlier steps it sees), ``stop`` (three empty lists), ``parse_error``
(``{"reason", "detail", "span"}``: ``span`` is ``[start, end]`` of the offending slice
of the completion, best effort, or ``None``), ``steps`` (one dict per executed step:
``index``, ``model_id``, ``worker``, ``visible``, ``response`` (the subtask is the
plan's),
``prompt_tokens``, ``completion_tokens``, ``cost_usd``, ``latency_s``, ``attempts``,
``cached``; ``None`` when the plan was not run or its run is not known) and
``self_calls`` (the conductor's inner plans: ``question``, ``completion``, ``plan``,
``visible``, ``steps``).

Every text reaches the page as JSON inside a ``<script type="application/json">``
element with ``<``, ``>`` and ``&`` escaped, and the script inserts it as text nodes,
never as markup.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from conductor_gym.core.render_assets import asset
from conductor_gym.plan.model import NAMES
from conductor_gym.plan.scan import locate
from conductor_gym.tasks import Task

__all__ = [
    "VIEW_SCHEMA",
    "episode_view",
    "offending_span",
    "render_episode_html",
    "render_page",
    "round_view",
    "unpack_page_data",
]

VIEW_SCHEMA = "conductor-gym/view/v1"
"""The ``schema`` of the data a page embeds."""

_MAX_DEPTH = 4  # parse_plan's default bracket depth, for locating lists
_LINE_RE = re.compile(r"\bline (\d+)")


def _as_dict(value: Any) -> Any:
    to_dict = getattr(value, "to_dict", None)
    return to_dict() if callable(to_dict) else value


def _plan_lists(plan: Any) -> dict[str, list[Any]] | None:
    """A plan (object, ``to_dict`` form or ``dataclasses.asdict`` form) as the three lists."""
    plan = _as_dict(plan)
    if not isinstance(plan, Mapping):
        return None
    model_id = plan.get("model_id", plan.get("model_ids"))
    access = plan.get("access_list", plan.get("access"))
    subtasks = plan.get("subtasks")
    if not isinstance(model_id, list | tuple) or not isinstance(subtasks, list | tuple):
        return None
    entries = [e if e == "all" else list(e) for e in access or ()]
    return {"model_id": list(model_id), "subtasks": list(subtasks), "access_list": entries}


def _visible(lists: Mapping[str, list[Any]]) -> list[list[int]]:
    return [
        list(range(step)) if entry == "all" else [int(j) for j in entry]
        for step, entry in enumerate(lists["access_list"])
    ]


_STEP_KEYS = (
    "index",
    "model_id",
    "worker",
    "response",
    "prompt_tokens",
    "completion_tokens",
    "cost_usd",
    "latency_s",
    "attempts",
    "cached",
)


def _steps(trace: Any) -> list[dict[str, Any]] | None:
    trace = _as_dict(trace)
    if not isinstance(trace, Mapping):
        return None
    steps = []
    for raw in trace.get("steps", ()):
        step = _as_dict(raw)
        view = {key: step.get(key) for key in _STEP_KEYS}
        view["visible"] = [int(j) for j in step.get("visible", ())]
        steps.append(view)
    return steps


def _lists_start(text: str) -> int | None:
    """Where the three lists of the plan in ``text`` begin (their first assignment)."""
    try:
        group = locate(text, _MAX_DEPTH)
    except ValueError:
        return None
    first = min(group.values(), key=lambda o: o.start)
    return text.rfind(first.name, 0, first.start)


def offending_span(text: str, reason: str, detail: str) -> list[int] | None:
    """``[start, end]`` of the part of ``text`` an invalid-plan ``reason`` and
    ``detail`` point at (best effort; ``None`` when they point at no one place).

    A reason about one list's values (``bad_model_id``, ``unknown_worker``,
    ``bad_subtask``, ``empty_subtask``, ``bad_access``) marks that list; one about the
    plan's shape (``length_mismatch``, ``too_many_steps``) marks all three; one found
    while scanning (``syntax``, ``incomplete``, ``too_deep``, ``not_a_list``) marks the
    named list's assignment on the line the detail gives, to the end of the text for a
    list never closed.
    """
    if reason in ("too_long", "no_lists", "missing_list") or not text:
        return None
    named = [name for name in NAMES if name in detail]
    try:
        group = locate(text, _MAX_DEPTH)
    except ValueError:
        group = None
    if group is not None:
        if reason in ("length_mismatch", "too_many_steps") or not named:
            chosen = list(group.values())
        else:
            chosen = [group[named[0]]]
        start = min(text.rfind(o.name, 0, o.start) for o in chosen)
        return [start, max(o.end for o in chosen)]
    line = _LINE_RE.search(detail)
    if not named or line is None:
        return None
    lines = text.split("\n")
    number = int(line.group(1))
    if not 1 <= number <= len(lines):
        return None
    line_start = sum(len(part) + 1 for part in lines[: number - 1])
    at = text.find(named[0], line_start, line_start + len(lines[number - 1]))
    start = at if at >= 0 else line_start
    end = len(text) if reason == "incomplete" else line_start + len(lines[number - 1])
    return [start, max(end, start + 1)]


def round_view(
    index: int,
    completion: str | None,
    plan: Any = None,
    trace: Any = None,
    parse_error: Mapping[str, str] | None = None,
    self_calls: Sequence[Any] = (),
) -> dict[str, Any]:
    """The round view (module docstring) of one plan; ``plan``, ``trace`` and each
    self-call may be the library's objects or their JSON forms."""
    lists = _plan_lists(plan)
    error = None
    if parse_error is not None:
        reason, detail = str(parse_error.get("reason")), str(parse_error.get("detail", ""))
        span = offending_span(completion, reason, detail) if completion else None
        error = {"reason": reason, "detail": detail, "span": span}
    calls = []
    for raw in self_calls:
        call = _as_dict(raw)
        inner = _plan_lists(call.get("plan"))
        calls.append(
            {
                "question": call.get("question"),
                "completion": call.get("completion"),
                "plan": inner,
                "visible": _visible(inner) if inner else None,
                "steps": _steps(call.get("trace")),
            }
        )
    return {
        "index": index,
        "completion": completion,
        "lists_at": _lists_start(completion) if completion and lists else None,
        "plan": lists,
        "visible": _visible(lists) if lists else None,
        "stop": bool(lists is not None and not lists["model_id"]),
        "parse_error": error,
        "steps": _steps(trace),
        "self_calls": calls,
    }


def _workers(rounds: Sequence[Mapping[str, Any]], pool: Sequence[str] | None) -> list[str]:
    names: set[str] = set()
    for r in rounds:
        if r["steps"] is not None:
            names.update(str(s["worker"]) for s in r["steps"])
        elif r["plan"] is not None and pool is not None:
            names.update(pool[m] for m in r["plan"]["model_id"] if 0 <= m < len(pool))
        for call in r["self_calls"]:
            names.update(str(s["worker"]) for s in call["steps"] or ())
    return sorted(names)


def episode_view(
    info: Mapping[str, Any],
    completions: Sequence[str] = (),
    *,
    reference: str | None = None,
    grader: str | None = None,
    reward: float | None = None,
    answer: str | None = None,
) -> dict[str, Any]:
    """The episode view (module docstring) of the step ``info`` an episode ended (or
    stands) on, with the agent's ``completions`` in round order.

    ``info`` is the env's (objects) or its JSON form; ``rounds`` missing means no plan
    yet. ``reference``, ``grader``, ``reward`` and ``answer`` are not in the step info and
    are shown when given.
    """
    rounds = []
    for n, raw in enumerate(info.get("rounds") or ()):
        r = _as_dict(raw)
        completion = completions[n] if n < len(completions) else None
        rounds.append(
            round_view(
                int(r.get("index", n)),
                completion,
                r.get("plan"),
                r.get("trace"),
                r.get("parse_error"),
                r.get("self_calls") or (),
            )
        )
    pool = info.get("pool")
    pool = [str(name) for name in pool] if pool is not None else None
    graded = _as_dict(info.get("grade"))
    parse_error = next((r["parse_error"]["reason"] for r in rounds if r["parse_error"]), None)
    return {
        "task_id": info.get("task_id"),
        "task_index": info.get("task_index"),
        "domain": info.get("domain"),
        "question": info.get("question"),
        "reference": reference,
        "grader": grader,
        "pool": pool,
        "rounds": rounds,
        "outcome": info.get("outcome"),
        "reward": reward,
        "grade": dict(graded) if isinstance(graded, Mapping) else None,
        "answer": answer,
        "error": _as_dict(info.get("error")),
        "parse_error": parse_error,
        "steps": sum(len(r["plan"]["model_id"]) for r in rounds if r["plan"]),
        "worker_calls": int(info.get("worker_calls") or 0),
        "prompt_tokens": int(info.get("prompt_tokens") or 0),
        "completion_tokens": int(info.get("completion_tokens") or 0),
        "cost_usd": float(info.get("cost_usd") or 0.0),
        "latency_s": float(info.get("latency_s") or 0.0),
        "workers": _workers(rounds, pool),
        "notes": [],
    }


def _script_json(data: Any) -> str:
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


_SHARED_MIN = 16  # a reference {"$t":N} costs 8-13 characters


class _Packer:
    """Writes a page's episodes with each repeated part once (:func:`_interned`)."""

    def __init__(self, texts: Mapping[str, int]) -> None:
        self.texts = texts
        self.shapes: dict[tuple[str, ...], int] = {}

    def pack(self, value: Any) -> Any:
        if isinstance(value, str):
            at = self.texts.get(value)
            return value if at is None else {"$t": at}
        if isinstance(value, Mapping):
            keys = tuple(str(k) for k in value)
            shape = self.shapes.setdefault(keys, len(self.shapes))
            return {"$o": shape, "v": [self.pack(item) for item in value.values()]}
        if isinstance(value, list | tuple):
            return [self.pack(item) for item in value]
        return value


def _count_texts(value: Any, counts: dict[str, int]) -> None:
    if isinstance(value, str):
        if len(value) >= _SHARED_MIN:
            counts[value] = counts.get(value, 0) + 1
    elif isinstance(value, Mapping):
        for item in value.values():
            _count_texts(item, counts)
    elif isinstance(value, list | tuple):
        for item in value:
            _count_texts(item, counts)


def _interned(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` as the page embeds it, each repeated part once, which the page's script
    puts back: every dict in ``episodes`` is ``{"$o": shape, "v": values}`` with its keys
    once in ``shapes[shape]``, and every text of 16 characters or more the episodes hold
    more than once is in ``texts`` (each place holding it is ``{"$t": index}``). Keys
    were most of a large run's page, and repeats of a deterministic agent write the
    same plans and answers."""
    episodes = data.get("episodes") or ()
    counts: dict[str, int] = {}
    _count_texts(episodes, counts)
    texts = [text for text, n in counts.items() if n > 1]
    packer = _Packer({text: i for i, text in enumerate(texts)})
    packed = packer.pack(list(episodes))
    shapes = [list(keys) for keys in packer.shapes]
    return {**data, "episodes": packed, "shapes": shapes, "texts": texts}


def unpack_page_data(embedded: Mapping[str, Any]) -> dict[str, Any]:
    """The page data a page embeds (its ``viewer-data`` JSON) as :func:`render_page` was
    given it: each packed dict and shared text put back (what the page's script does)."""
    shapes = embedded.get("shapes")
    if shapes is None:
        return dict(embedded)
    texts = embedded.get("texts") or []

    def unpack(value: Any) -> Any:
        if isinstance(value, list):
            return [unpack(item) for item in value]
        if isinstance(value, Mapping):
            if "$t" in value:
                return texts[value["$t"]]
            keys = shapes[value["$o"]]
            return {key: unpack(item) for key, item in zip(keys, value["v"], strict=True)}
        return value

    data = {k: v for k, v in embedded.items() if k not in ("shapes", "texts")}
    data["episodes"] = unpack(embedded["episodes"])
    return data


def render_page(data: Mapping[str, Any]) -> str:
    """The self-contained page for ``data``: ``{"schema": VIEW_SCHEMA, "mode":
    "episode" | "results", "title", "run", "summary", "tasks", "episodes"}`` (``run``,
    ``summary`` and ``tasks`` may be ``None``; see :mod:`conductor_gym.view.page`). The
    embedded copy keeps each dict's keys and each repeated text once (``shapes`` and
    ``texts``, see :func:`_interned`)."""
    title = html.escape(str(data.get("title") or "conductor-gym episodes"))
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<style>\n{asset('viewer.css')}</style>\n</head>\n<body>\n"
        f'<header><h1>{title}</h1><div id="run"></div></header>\n'
        "<main><noscript>This page draws the episodes with its inline script; enable "
        "JavaScript to see them.</noscript></main>\n"
        f'<script type="application/json" id="viewer-data">{_script_json(_interned(data))}'
        "</script>\n"
        f"<script>\n{asset('viewer.js')}</script>\n</body>\n</html>\n"
    )


def render_episode_html(
    task: Task, info: Mapping[str, Any], rounds: Sequence[Any], completions: Sequence[str]
) -> str:
    """The page of one live episode (``env.render()`` in mode ``"html"``): ``info`` is
    its latest step info (or the reset info), ``rounds`` its rounds so far."""
    state = {**info, "rounds": list(rounds)}
    view = episode_view(state, completions, reference=task.reference, grader=task.grader)
    if not rounds:
        view["notes"].append("awaiting a plan")
    data = {
        "schema": VIEW_SCHEMA,
        "mode": "episode",
        "title": f"conductor-gym episode {task.id}",
        "run": None,
        "summary": None,
        "tasks": None,
        "episodes": [view],
    }
    return render_page(data)
