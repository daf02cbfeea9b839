"""Render the leaderboard (``README.md``, a static ``index.html``, a plot) and reports.

:func:`render_board` turns validated submissions (their
:class:`~conductor_gym.board.submissions.Report` s) into

* ``README.md``: the **ranked** entries, one table per section
  (:class:`~conductor_gym.board.sections.Section`: one suite fingerprint on one
  pool, and one ranking: re-derived entries, then self-reported ones in a table of their
  own), in the board's one order (:func:`~conductor_gym.board.sections.ranking_key`:
  accuracy, best first), with accuracy ± standard error over repeats, mean reward, cost
  and tokens per sample, steps per plan, the share of failed (infrastructure) episodes,
  whether the entry is on the section's accuracy-vs-cost Pareto frontier (★), the agent
  and the date; what every row of a table shares (repeats x tasks, the price table, how
  it was verified, whose completions) is said once above it (:data:`SHARED_COLUMNS`: a
  column only where its rows differ); then every entry **listed apart**, with why it is
  not ranked;
* ``index.html``: the same tables in one self-contained page (inline CSS, a small inline
  script that sorts a table when a column header is clicked; nothing is loaded from the
  network, nothing is linked), filled into the package's page template: the files
  ``assets/board.html``, ``board.css`` and ``board.js`` (:func:`asset`). The rows come in
  the board's order from here; the page marks the ranking's column
  (:data:`~conductor_gym.board.sections.RANKED_BY`) as sorted and never re-sorts on
  load; columns are addressed by name (``data-column``);
* ``accuracy_vs_cost.png``: accuracy against cost per sample of the ranked entries, one
  marker per entry numbered with its rank, a key naming the entries beside the axes, each
  section's Pareto frontier drawn as a dashed line through ringed markers (matplotlib,
  Agg; imported only when drawing; :func:`board_figure`).

The page fits its window: at a desktop width (1400 px) every column of a table shows and
every row is one line (a long name or agent is cut with an ellipsis, in full on hover);
narrower (800 px) a table scrolls sideways inside its own box, the entry's name staying
in view, and the page itself never does. Costs show two significant digits, never in
exponent notation (``$0.000015``). The agent column shows
:func:`agent_label` of the spec: an absolute path in it (a checkpoint folder) is cut to
its last component, so no submitter's folders are published.

An entry whose every episode failed shows its accuracy as ``n/a``. Every text from a
submission is escaped (:func:`~conductor_gym.board.untrusted.markdown_text` in Markdown,
HTML escaping in the page); only ``http(s)`` URLs are linked, percent-encoded.
:func:`format_report` renders a validation report as text for the command line. The
board depends only on the submissions (no timestamps), so re-rendering an unchanged
board rewrites identical text files.
"""

from __future__ import annotations

import dataclasses
import functools
import html
import math
import re
import string
import textwrap
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from conductor_gym.bench.frontier import (
    Series,
    accuracy_cost_figure,
    pareto_frontier,
    plot_accuracy_cost,
)
from conductor_gym.bench.results import SCHEMA as RESULTS_SCHEMA
from conductor_gym.bench.results import format_usd
from conductor_gym.board.sections import (
    AGENT_CHECKS,
    MAX_FAILED_SHARE,
    MIN_REPEATS,
    RANKED_BY,
    RANKINGS,
    SUITE_SEED,
    TRUST_LEVELS,
    Section,
    failed_share,
    price_table,
    ranking_key,
)
from conductor_gym.board.submissions import Report
from conductor_gym.board.untrusted import http_url, markdown_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure


__all__ = [
    "APART_COLUMNS",
    "PLOT_NAME",
    "RANKED_COLUMNS",
    "SHARED_COLUMNS",
    "Column",
    "Entry",
    "agent_label",
    "board_figure",
    "entries_from",
    "format_report",
    "render_board",
    "render_html",
    "render_markdown",
    "report_json",
    "section_heading",
]

PLOT_NAME = "accuracy_vs_cost.png"


@dataclass(frozen=True)
class Entry:
    """One row of the board (the ``"overall"`` metrics of one accepted submission).

    ``accuracy`` and ``reward`` are ``None`` when no episode was scored (all failed);
    ``frontier``: on its section's Pareto frontier (ranked entries only);
    ``agent_display_name``: the submission's name for a self-reported agent
    (:func:`agent_label`); ``verified``: how its episodes were checked, ``identity``:
    whose completions they are, ``checkpoint``: what a self-reported entry's results say
    of its checkpoint (its hash, or that none was recorded).
    """

    slug: str
    name: str
    authors: tuple[str, ...]
    agent: str
    section: Section
    ranked: bool
    reasons: tuple[str, ...]
    verified: str
    prices: str
    repeats: int
    tasks: int
    limit: int | None
    accuracy: float | None
    accuracy_se: float | None
    reward: float | None
    reward_se: float | None
    cost: float
    tokens: float
    steps: float
    failed: float
    training_data: str
    date: str
    url: str | None
    frontier: bool = False
    agent_display_name: str | None = None
    identity: str = ""
    checkpoint: str = ""


def entries_from(reports: Sequence[tuple[str, Report]]) -> list[Entry]:
    """Board rows for ``(slug, report)`` pairs of accepted submissions (others are left
    out), ranked ones first, grouped by section and sorted as rendered."""
    entries = []
    for slug, report in reports:
        sub, placement = report.submission, report.placement
        if not report.ok or sub is None or placement is None:
            continue
        meta, res = sub.metadata, sub.results
        overall = res.metrics["overall"]
        scored = overall.n > overall.infra_failures
        entries.append(
            Entry(
                slug=slug,
                name=meta.name,
                authors=tuple(meta.authors),
                agent=meta.agent,
                agent_display_name=meta.agent_display_name,
                section=placement.section,
                ranked=placement.ranked,
                reasons=placement.reasons,
                verified=str(placement.verification),
                identity=(
                    str(placement.identity)
                    if placement.identity.check == "re-run"
                    else placement.identity.check
                ),
                checkpoint=(
                    "" if placement.identity.check == "re-run" else placement.identity.detail
                ),
                prices=price_table(res),
                repeats=res.repeats,
                tasks=sum(s.size for s in res.suite.sources),
                limit=res.suite.limit,
                accuracy=overall.accuracy if scored else None,
                accuracy_se=overall.accuracy_se if scored else None,
                reward=overall.mean_reward if scored else None,
                reward_se=overall.mean_reward_se if scored else None,
                cost=overall.cost_per_sample_usd,
                tokens=overall.tokens_per_sample,
                steps=overall.mean_steps,
                failed=failed_share(res),
                training_data=meta.training_data,
                date=meta.date.isoformat(),
                url=meta.url,
            )
        )
    ranked = sorted((e for e in entries if e.ranked), key=ranking_key)
    frontier: list[Entry] = []
    for _, group in _groups(ranked):
        flags = pareto_frontier([(e.accuracy, e.cost) for e in group])
        frontier += [_with_frontier(e, flag) for e, flag in zip(group, flags, strict=True)]
    apart = sorted((e for e in entries if not e.ranked), key=ranking_key)
    return frontier + apart


def _with_frontier(entry: Entry, flag: bool) -> Entry:
    return dataclasses.replace(entry, frontier=flag)


def _groups(entries: Sequence[Entry]) -> list[tuple[Section, list[Entry]]]:
    groups: dict[Section, list[Entry]] = {}
    for entry in entries:
        groups.setdefault(entry.section, []).append(entry)
    return list(groups.items())


# ---------------------------------------------------------------------------- formatting


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _pm(value: float | None, se: float | None, *, percent: bool) -> str:
    if value is None:
        return "n/a"
    text = _pct(value) if percent else f"{value:.3f}"
    if se is None or math.isnan(se):
        return text
    return text + " ± " + (_pct(se) if percent else f"{se:.3f}")


def _share(value: float) -> str:
    return f"{100 * value:.1f} %"


def _size(e: Entry) -> str:
    limit = f" (first {e.limit}/source)" if e.limit is not None else ""
    return f"{e.repeats} x {e.tasks}{limit}"


@dataclass(frozen=True)
class Column:
    """A board table's column: ``key`` (its name, for code and the page's
    ``data-column``), ``title`` (its header) and ``kind`` (``num``: right-aligned,
    sorted by number; ``text``)."""

    key: str
    title: str
    kind: str = "text"


RANKED_COLUMNS: tuple[Column, ...] = (
    Column("rank", "#", "num"),
    Column("name", "Name"),
    Column("accuracy", "Accuracy (%)", "num"),
    Column("reward", "Reward", "num"),
    Column("cost", "Cost / sample", "num"),
    Column("tokens", "Tokens / sample", "num"),
    Column("steps", "Steps / plan", "num"),
    Column("failed", "Failed", "num"),
    Column("frontier", "Frontier"),
    Column("agent", "Agent"),
    Column("size", "Repeats x tasks"),
    Column("prices", "Prices"),
    Column("verified", "Verified"),
    Column("identity", "Completions"),
    Column("checkpoint", "Checkpoint"),
    Column("date", "Date"),
)
"""A ranked table's columns, in order (those of :data:`SHARED_COLUMNS` only where
their rows differ)."""

SHARED_COLUMNS: tuple[str, ...] = ("size", "prices", "verified", "identity", "checkpoint")
"""Columns said once above a ranked table when every row has the same value."""

APART_COLUMNS: tuple[Column, ...] = (
    Column("name", "Name"),
    Column("accuracy", "Accuracy (%)", "num"),
    Column("cost", "Cost / sample", "num"),
    Column("failed", "Failed", "num"),
    Column("agent", "Agent"),
    Column("suite", "Suite"),
    Column("pool", "Pool"),
    Column("size", "Repeats x tasks"),
    Column("why", "Why not ranked"),
    Column("date", "Date"),
)
"""The listed-apart table's columns, in order."""

assert RANKED_BY in {c.key for c in RANKED_COLUMNS}


# An absolute path inside an agent spec: POSIX (``/``), home (``~/``, ``~user/``),
# Windows (``C:\\`` or ``C:/``), or a ``file:`` URI, starting the spec or a ``:`` field and
# running to the next ``:`` (a Windows drive's own colon aside).
_ABSOLUTE = re.compile(r"(?:(?<=^)|(?<=:))(?:file:(?://)?)?(?:~[^:/\\]*|[A-Za-z]:)?[/\\][^:]*")


_AGENT_FILE = re.compile(r".+\.py:[A-Za-z_]\w*")


def agent_label(spec: str, display_name: str | None = None) -> str:
    """The agent as the board shows it.

    With the submission's ``agent_display_name``: ``<kind>:<display name>``, the kind being
    the spec's own (``policy``, ``llm``, a plug-in's name) or ``file`` for an agent file
    (``policy:smollm2-conductor-v3``). Otherwise the spec, with every absolute path in it
    (a checkpoint folder ``policy:/home/me/runs/ckpt``, an agent file
    ``/srv/x/agent.py:Agent``) replaced by ``…/`` and its last component (``policy:…/ckpt``,
    ``…/agent.py:Agent``), so the page never shows the submitter's folders; relative paths
    and hub ids (``policy:org/model``) are kept. The submission itself keeps the full
    spec."""
    if display_name:
        kind = "file" if _AGENT_FILE.fullmatch(spec) else spec.partition(":")[0]
        return f"{kind}:{display_name}"

    def short(match: re.Match[str]) -> str:
        parts = [p for p in re.split(r"[/\\]", match[0]) if p]
        last = parts[-1] if parts and not parts[-1].endswith(":") else ""
        return f"…/{last}"

    return _ABSOLUTE.sub(short, spec)


Cells = dict[str, str]
"""A row's text per column key."""


def _ranked_cells(rank: int, e: Entry) -> Cells:
    return {
        "rank": str(rank),
        "name": e.name,
        "accuracy": _pm(e.accuracy, e.accuracy_se, percent=True),
        "reward": _pm(e.reward, e.reward_se, percent=False),
        "cost": format_usd(e.cost),
        "tokens": f"{e.tokens:,.0f}",
        "steps": f"{e.steps:.2f}",
        "failed": _share(e.failed),
        "frontier": "★" if e.frontier else "",
        "agent": agent_label(e.agent, e.agent_display_name),
        "size": _size(e),
        "prices": e.prices,
        "verified": e.verified,
        "identity": e.identity,
        "checkpoint": _checkpoint(e.checkpoint),
        "date": e.date,
    }


def _checkpoint(detail: str) -> str:
    """A checkpoint's hash as a cell (``c8999134d4e781d4``), or what the results say
    instead (``no checkpoint hash recorded``)."""
    return detail.split()[-1] if detail.startswith("checkpoint ") else detail


def _ranked_keys(rank: int, e: Entry) -> Cells:
    """Each numeric column's sort key (``repr`` of a float)."""
    numbers = {
        "rank": rank,
        "accuracy": -1.0 if e.accuracy is None else e.accuracy,
        "reward": -1.0 if e.reward is None else e.reward,
        "cost": e.cost,
        "tokens": e.tokens,
        "steps": e.steps,
        "failed": e.failed,
    }
    return {key: repr(float(value)) for key, value in numbers.items()}


def _apart_cells(e: Entry) -> Cells:
    return {
        "name": e.name,
        "accuracy": _pm(e.accuracy, e.accuracy_se, percent=True),
        "cost": format_usd(e.cost),
        "failed": _share(e.failed),
        "agent": agent_label(e.agent, e.agent_display_name),
        "suite": f"{e.section.suite} ({e.section.fingerprint})",
        "pool": f"{e.section.pool_setting} pool {e.section.describe()}",
        "size": _size(e),
        "why": "; ".join(e.reasons),
        "date": e.date,
    }


def _apart_keys(e: Entry) -> Cells:
    accuracy = -1.0 if e.accuracy is None else e.accuracy
    return {"accuracy": repr(accuracy), "cost": repr(e.cost), "failed": repr(e.failed)}


def _table_columns(rows: Sequence[Cells]) -> tuple[list[Column], list[tuple[str, str]]]:
    """A ranked table's columns and, said once above it, each shared column's
    ``(title, value)`` (:data:`SHARED_COLUMNS`; an empty shared value is left out)."""
    columns, shared = [], []
    for column in RANKED_COLUMNS:
        values = {row[column.key] for row in rows}
        if column.key in SHARED_COLUMNS and len(values) == 1:
            if value := values.pop():
                shared.append((column.title, value))
            continue
        columns.append(column)
    return columns, shared


def _ranking_note(section: Section) -> str:
    return (
        "Self-reported completions, ranked among themselves only: never in one ranking "
        "with re-derived entries"
        if section.ranking == "self-reported"
        else ""
    )


# ------------------------------------------------------------------------------ markdown

_CODE_SAFE = re.compile(r"^[A-Za-z0-9:._/+@=,…-]+$")


def _md_code(text: str) -> str:
    """A code span for plain specs; anything else as escaped text (a backtick or a pipe
    inside a code span cannot be escaped)."""
    return f"`{text}`" if _CODE_SAFE.match(text) else markdown_text(text)


def _md_url(url: str) -> str:
    return urllib.parse.quote(url, safe=":/?#@!$&'*+,;=%~-._[]")


def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _md_head(columns: Sequence[Column]) -> list[str]:
    return [
        _md_row([c.title for c in columns]),
        "|" + "|".join("---:" if c.kind == "num" else "---" for c in columns) + "|",
    ]


def _md_section_title(section: Section) -> str:
    s = section
    custom = ", fitted or hand-made, not a preset" if s.custom_pool else ""
    details = "".join(f", {markdown_text(part)}" for part in s.details())
    return (
        f"### Suite {_md_code(s.suite)} (`{markdown_text(s.fingerprint)}`), {s.pool_setting} "
        f"pool {_md_code(s.pool)} (`{markdown_text(s.pool_fingerprint)}`{custom}){details}"
    )


def section_heading(section: Section) -> str:
    """A ranked section's heading on the page: ``Suite <name> (<fingerprint>), <setting>
    pool <name> (<fingerprint>)``, then ``, simulator <version>`` for a simulated pool,
    the draw for a randomised pool (``, 4 of 7 workers per question, shuffled ids``),
    ``, env <settings>`` when the runs changed env settings, ``, graders <graders>``
    when a re-scoring replaced the tasks' graders and ``, self-reported completions``
    for the ranking of self-reported entries (:meth:`Section.describe
    <conductor_gym.board.sections.Section.describe>`; the README's heading, as plain
    text)."""
    return f"Suite {section.suite} ({section.fingerprint}), {section.pool_setting} pool " + (
        section.describe()
    )


def _shared_line(shared: Sequence[tuple[str, str]], section: Section) -> str:
    """What every row of a table shares, as one line (``Prices: ...; Verified: ...``),
    after the ranking's note for self-reported entries."""
    parts = [note] if (note := _ranking_note(section)) else []
    parts += [f"{title}: {value}" for title, value in shared]
    return ". ".join(parts) + "." if parts else ""


def render_markdown(entries: Sequence[Entry]) -> str:
    """The board as Markdown (module docstring)."""
    ranked = [e for e in entries if e.ranked]
    apart = [e for e in entries if not e.ranked]
    lines = [
        "# conductor-gym leaderboard",
        "",
        "Generated by `conductor-gym leaderboard render` from the validated files in",
        "[`submissions/`](submissions/); do not edit by hand. Every ranked entry was",
        "re-played episode by episode on validation (see [What is verified](#what-is-verified)).",
        "Entries whose completions the validator re-derived (an agent re-run) and",
        "self-reported ones (a checkpoint, an LLM, an agent or plan file) are never ranked",
        "together: self-reported entries have a table of their own below.",
        "Accuracy and its standard error over repeats are in percent; reward is the paper's",
        "1 / 0.5 / 0 (correct / wrong / unparsable); cost and tokens are per sample (workers",
        "and planner); steps per plan counts the plans that parsed; *Failed* is the share of",
        "infrastructure failures (never scored); ★ marks the table's accuracy-vs-cost Pareto",
        "frontier (no other entry is both more accurate and cheaper). The same board,",
        "sortable: [`index.html`](index.html); accuracy against cost:",
        f"[`{PLOT_NAME}`]({PLOT_NAME}).",
        "",
        "## Ranked",
    ]
    if not ranked:
        lines += ["", "_No ranked entries yet._"]
    for section, group in _groups(ranked):
        rows = [_ranked_cells(rank, entry) for rank, entry in enumerate(group, 1)]
        columns, shared = _table_columns(rows)
        lines += ["", _md_section_title(section), ""]
        if line := _shared_line(shared, section):
            lines += [markdown_text(line), ""]
        lines += _md_head(columns)
        for entry, row in zip(group, rows, strict=True):
            cells = {key: markdown_text(text) for key, text in row.items()}
            if entry.url and http_url(entry.url):
                cells["name"] = f"[{cells['name']}]({_md_url(entry.url)})"
            cells["agent"] = _md_code(row["agent"])
            lines.append(_md_row([cells[c.key] for c in columns]))
    lines += ["", "## Listed apart (not ranked)", ""]
    if not apart:
        lines.append("_None._")
    else:
        lines += _md_head(APART_COLUMNS)
        for entry in apart:
            row = _apart_cells(entry)
            cells = {key: markdown_text(text) for key, text in row.items()}
            cells["agent"] = _md_code(row["agent"])
            lines.append(_md_row([cells[c.key] for c in APART_COLUMNS]))
    lines += ["", VERIFIED_MD, "", SUBMITTING_MD]
    return "\n".join(lines) + "\n"


def _levels(levels: dict[str, str]) -> str:
    return "\n".join(f"- *{name}*: {meaning}." for name, meaning in levels.items())


VERIFIED_MD = f"""\
## What is verified

`conductor-gym leaderboard validate` checks each file on its own: bounded size and JSON
depth, the schema (no unknown fields, bounded metadata text, `http(s)` URLs only), the
suite's fingerprint and task ids, every (task, repeat) exactly once, every episode's
seed derived from the run's seed, rewards consistent with outcomes, every aggregate
recomputed. It then **re-plays every episode**: it resets the env with the episode's
seed and task and steps the recorded completion(s); outcome, reward, final answer,
tokens, cost, steps and calls must match. On a simulated pool an episode is a pure
function of those. A real pool's episodes re-play from the response cache the
submission ships (no backend is reached; costs are priced again from the cached tokens
where the pool file sets prices); without a cache the entry is *unverified*.

A ranked section is one suite fingerprint on one pool (setting and the pool's own
fingerprint) and one trust level, with the same env settings, as re-played (a plan
limit that the agent's plans fill exactly, such as the 8-call mixture-of-agents'
`max_steps = 8`, aside), and
the same graders (a re-scored file's, their versions derived from the installed code). An entry is
ranked when it was re-played, ran the whole suite (or a fixed subset suite such as
`offline-160`), has at least {MIN_REPEATS} repeats, used the suite seed {SUITE_SEED} and
had at most {100 * MAX_FAILED_SHARE:g} % infrastructure failures; otherwise it is listed
apart with the reason. The planner's own tokens and cost are as
the agent reported them.

The line above each table (or its *Verified* and *Completions* columns, where entries
differ) names the entries' trust level, and whose completions they show:

{_levels(TRUST_LEVELS)}
{_levels({("agent re-run" if k == "re-run" else k): v for k, v in AGENT_CHECKS.items()})}

Each pool and suite has up to two rankings, never merged:

{_levels(RANKINGS)}

A simulated pool that is not a shipped preset (fitted to recorded episodes, or
hand-made) is named *fitted or hand-made, not a preset* in its heading; a pool name
that looks like a preset's (case, separators, NFKC or look-alike letters aside, or a
preset's name extended, as `sim-paper-2026`) is refused. No two agents show the same
name (compared the same way): the entry re-derived on validation keeps it.

A real pool's cache is checked before it is re-played: token counts against the text
(about 4 characters a token, within wide bounds), costs against the pool file's prices,
latencies present and plausible; and it must hold only the calls its episodes use (the
rows their re-play looks up; `leaderboard submit --cache` ships such a copy).
`conductor-gym leaderboard spot-check ENTRY --pool POOL --sample N` re-asks the live
endpoints a sample of those calls, drawn with a fresh random seed that it prints
(`--seed S` re-runs a check), and reports how many agree.

A policy checkpoint's completions are not re-sampled from the checkpoint on validation
yet: a `policy:` entry is self-reported, with the checkpoint's hash where the results
record one."""

SUBMITTING_MD = f"""\
## Submitting

1. Evaluate your agent on a board suite with the suite seed: `conductor-gym evaluate
   --agent SPEC --suite offline-160 --repeats 3 --out results.json` (schema
   `{RESULTS_SCHEMA}`: every episode, the suite's fingerprint, every worker's
   settings). On a real pool add `--env cache=responses.sqlite` so every answer is
   recorded.
2. Wrap it with metadata: `conductor-gym leaderboard submit results.json --name NAME
   --author AUTHOR --training-data TEXT --pool-setting constrained|unconstrained|simulated
   [--cache responses.sqlite] [--display-name NAME]` validates it (re-playing every
   episode) and writes `leaderboard/submissions/<slug>.json` (and the cache beside it,
   pinned by its SHA-256). A checkpoint, LLM or agent-file entry with `--display-name`
   shows as `policy:NAME` (`llm:NAME`, `file:NAME`) instead of its spec's local path.
3. Open a pull request with those files. CI runs `conductor-gym leaderboard validate`,
   which says for each entry whether it is ranked, and where, or why it is listed apart;
   `conductor-gym leaderboard render` then rebuilds this page."""


# ---------------------------------------------------------------------------------- html

ASSETS = ("board.html", "board.css", "board.js")
"""The page's template, style sheet and script: package data in ``assets/``."""


@functools.cache
def asset(name: str) -> str:
    """The text of the asset ``name`` (one of :data:`ASSETS`)."""
    if name not in ASSETS:
        raise ValueError(f"no board asset {name!r}; the assets: {list(ASSETS)}")
    return resources.files("conductor_gym.board").joinpath("assets", name).read_text("utf-8")


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def _html_table(
    columns: Sequence[Column],
    rows: Sequence[tuple[Entry, Cells, Cells]],
    attrs: str,
    *,
    sorted_by: str | None = None,
) -> list[str]:
    """A table of ``rows`` (entry, cells, sort keys by column key), in the given order;
    ``sorted_by``: the column that order ranks by, marked as sorted (descending)."""
    out = [f'<div class="scroll"><table class="board" {attrs}>']
    header = ""
    for column in columns:
        css = ' class="name"' if column.key == "name" else ""
        mark = ' data-dir="desc"' if column.key == sorted_by else ""
        header += (
            f'<th data-column="{column.key}" data-kind="{column.kind}" scope="col"{css}{mark}>'
            f"{_e(column.title)}</th>"
        )
    out += [f"<thead><tr>{header}</tr></thead>", "<tbody>"]
    for entry, texts, keys in rows:
        cells = []
        for column in columns:
            text = texts[column.key]
            body = _e(text)
            css = "num" if column.kind == "num" else "text"
            title = ""
            if column.key == "name":
                css, title = "name", text + (f" ({entry.url})" if entry.url else "")
            elif column.key == "agent":
                css, body, title = "agent", f"<code>{body}</code>", text
            elif column.key == "why":
                css = "why"
            attr = f' class="{css}"'
            attr += f' title="{_e(title)}"' if title else ""
            attr += f' data-sort="{keys[column.key]}"' if column.key in keys else ""
            cells.append(f"<td{attr}>{body}</td>")
        out.append(f'<tr data-entry="{_e(entry.slug)}">' + "".join(cells) + "</tr>")
    out.append("</tbody></table></div>")
    return out


def render_html(entries: Sequence[Entry], *, plot: bool = True) -> str:
    """The board as one self-contained HTML page."""
    ranked = [e for e in entries if e.ranked]
    apart = [e for e in entries if not e.ranked]
    out: list[str] = []
    if not ranked:
        out.append("<p>No ranked entries yet.</p>")
    for section, group in _groups(ranked):
        out.append(f"<h3>{_e(section_heading(section))}</h3>")
        rows = [(e, _ranked_cells(r, e), _ranked_keys(r, e)) for r, e in enumerate(group, 1)]
        columns, shared = _table_columns([cells for _, cells, _ in rows])
        if line := _shared_line(shared, section):
            out.append(f'<p class="shared">{_e(line)}</p>')
        attrs = (
            f'data-suite="{_e(section.suite)}" data-pool-setting="{_e(section.pool_setting)}" '
            f'data-ranking="{_e(section.ranking)}" data-sorted-by="{RANKED_BY}"'
        )
        out += _html_table(columns, rows, attrs, sorted_by=RANKED_BY)
    out.append("<h2>Listed apart (not ranked)</h2>")
    if not apart:
        out.append("<p>None.</p>")
    else:
        apart_rows = [(e, _apart_cells(e), _apart_keys(e)) for e in apart]
        out += _html_table(APART_COLUMNS, apart_rows, 'data-apart="1"')
    if plot and ranked:
        out.append(f'<img class="plot" src="{PLOT_NAME}" alt="accuracy against cost per sample">')
    page = string.Template(asset("board.html"))
    return page.substitute(style=asset("board.css"), body="\n".join(out), script=asset("board.js"))


# ---------------------------------------------------------------------------------- plot


def render_plot(entries: Sequence[Entry], path: Path) -> None:
    """Accuracy (%) against cost per sample of the ranked entries, one series per section
    (error bars: the standard error over repeats), each section's Pareto frontier as a
    dashed line through ringed markers
    (:func:`~conductor_gym.bench.frontier.plot_accuracy_cost`). Each point is numbered
    with the entry's rank in its section (the tables' ``#``; with several sections the
    section's letter first, ``A1``) and a key beside the axes names the entries: names
    written beside crowded points would cover each other."""
    series, key = _plot_series(entries)
    plot_accuracy_cost(series, path, key=key, **_PLOT_TEXT)


def board_figure(entries: Sequence[Entry]) -> Figure:
    """The figure :func:`render_plot` saves, laid out
    (:func:`~conductor_gym.bench.frontier.accuracy_cost_figure`)."""
    series, key = _plot_series(entries)
    return accuracy_cost_figure(series, key=key, **_PLOT_TEXT)


_PLOT_TEXT = {
    "title": "conductor-gym leaderboard (ranked entries): accuracy vs cost",
    "xlabel": "cost per sample (USD)",
    "empty": "no ranked entries yet",
}


def _plot_series(entries: Sequence[Entry]) -> tuple[list[Series], list[str]]:
    """The plot's series (one per section, points numbered) and its key (render_plot)."""
    ranked = [e for e in entries if e.ranked and e.accuracy is not None]
    groups = _groups(ranked)
    series, key = [], []
    for index, (section, group) in enumerate(groups):
        letter = _letter(index) if len(groups) > 1 else ""
        marks = [f"{letter}{rank}" for rank, _ in enumerate(group, 1)]
        label = _plot_label(section, len({s.suite for s, _ in groups}) > 1)
        series.append(
            Series(
                textwrap.fill(f"{letter}: {label}" if letter else label, 34),
                [e.cost for e in group],
                [e.accuracy or 0.0 for e in group],
                errors=[e.accuracy_se or 0.0 for e in group],
                notes=marks,
                front=sorted((e.cost, e.accuracy or 0.0) for e in group if e.frontier),
            )
        )
        key += [f"{mark}  {e.name}" for mark, e in zip(marks, group, strict=True)]
    return series, key


_SHORT = {"workers per question": "per question", "shuffled ids": "shuffled"}


def _plot_label(section: Section, suites: bool) -> str:
    """A section's name in the plot's legend, short but unique: the pool with its
    fingerprint's first 8 digits, then the section's details (:meth:`Section.details`),
    the suite first when the plot shows several."""
    suite = f"{section.suite}: " if suites else ""
    parts = [f"{suite}{section.pool} ({section.pool_fingerprint[:8]})"]
    for detail in section.details():
        for long, short in _SHORT.items():
            detail = detail.replace(long, short)
        parts.append(detail.replace("simulator ", "sim ").replace(" completions", ""))
    return ", ".join(parts)


def _letter(index: int) -> str:
    """``A`` .. ``Z``, then ``AA``, ``AB``, ...: a section's letter on the plot."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def render_board(
    reports: Sequence[tuple[str, Report]],
    directory: Path,
    *,
    progress: Callable[[Path], None] | None = None,
) -> list[Path]:
    """Write ``README.md``, ``index.html`` and the plot into ``directory`` from the
    accepted ones of ``(slug, report)``; return the paths. ``progress(path)`` is called
    after each file is written."""
    directory.mkdir(parents=True, exist_ok=True)
    entries = entries_from(reports)
    readme, page, plot = directory / "README.md", directory / "index.html", directory / PLOT_NAME
    readme.write_text(render_markdown(entries), encoding="utf-8")
    if progress is not None:
        progress(readme)
    page.write_text(render_html(entries), encoding="utf-8")
    if progress is not None:
        progress(page)
    render_plot(entries, plot)
    if progress is not None:
        progress(plot)
    return [readme, page, plot]


def report_json(report: Report) -> dict[str, object]:
    """A validation report as JSON data: ``file``, ``ok``, ``errors`` and ``warnings``
    (each ``{"check", "message"}``), and for an accepted entry its ``name``,
    ``accuracy`` (``None`` when nothing was scored) and ``placement`` (``ranked``,
    ``section`` title, ``ranking``, ``trust``, ``identity``, ``reasons``)."""
    data: dict[str, object] = {
        "file": report.source,
        "ok": report.ok,
        "errors": [{"check": p.check, "message": p.message} for p in report.errors],
        "warnings": [{"check": p.check, "message": p.message} for p in report.warnings],
    }
    sub, placement = report.submission, report.placement
    if report.ok and sub is not None:
        overall = sub.results.metrics.get("overall")
        scored = overall is not None and overall.n > overall.infra_failures
        data["name"] = sub.metadata.name
        data["accuracy"] = overall.accuracy if scored and overall is not None else None
    if report.ok and placement is not None:
        data["placement"] = {
            "ranked": placement.ranked,
            "section": placement.section.title(),
            "ranking": placement.section.ranking,
            "trust": placement.verification.trust,
            "verification": str(placement.verification),
            "identity": str(placement.identity),
            "reasons": list(placement.reasons),
        }
    return data


def format_report(report: Report) -> str:
    """Human-readable lines: ``ok``/``REJECTED``, then where the entry goes and one line
    per error and warning."""
    sub = report.submission
    if report.ok and sub is not None:
        overall = sub.results.metrics.get("overall")
        accuracy = ""
        if overall is not None:
            scored = overall.n > overall.infra_failures
            accuracy = f", accuracy {overall.accuracy:.4f}" if scored else ", accuracy n/a"
        head = (
            f"ok        {report.source}: {sub.metadata.name!r}, suite "
            f"{sub.results.suite.name!r}, {len(sub.results.episodes)} episodes{accuracy}"
        )
    else:
        count = len(report.errors)
        head = f"REJECTED  {report.source}: {count} problem" + ("" if count == 1 else "s")
    lines = [head]
    if report.ok and report.placement is not None:
        lines.append(f"  {report.placement}")
    lines += [f"  error    {problem}" for problem in report.errors]
    lines += [f"  warning  {problem}" for problem in report.warnings]
    return "\n".join(lines)
