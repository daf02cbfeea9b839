"""Render the leaderboard (``README.md``, a static ``index.html``, a plot) and reports.

:func:`render_board` turns validated submissions (their
:class:`~conductor_gym.board.submissions.Report` s) into

* ``README.md``: the **ranked** entries, one table per section
  (:class:`~conductor_gym.board.sections.Section`: one suite fingerprint on one
  pool), sorted by accuracy (best first), with accuracy ± standard error over repeats,
  mean reward, cost and tokens per sample, steps per plan, the share of failed
  (infrastructure) episodes, whether the entry is on the section's accuracy-vs-cost
  Pareto frontier (★), the agent spec, the price table and how it was verified; then
  every entry **listed apart**, with why it is not ranked;
* ``index.html``: the same tables in one self-contained page (inline CSS, a small inline
  script that sorts a table when a column header is clicked; nothing is loaded from the
  network, nothing is linked), filled into the package's page template: the files
  ``assets/board.html``, ``board.css`` and ``board.js`` (:func:`asset`);
* ``accuracy_vs_cost.png``: accuracy against cost per sample of the ranked entries, one
  marker per entry numbered with its rank, a key naming the entries beside the axes, each
  section's Pareto frontier drawn as a dashed line through ringed markers (matplotlib,
  Agg; imported only when drawing; :func:`board_figure`).

The page fits its window: at a desktop width (1400 px) every column of a table shows,
its text columns wrapping; narrower (800 px) a table scrolls sideways inside its own box,
the entry's name staying in view, and the page itself never does. The agent column shows
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
import urllib.parse
from collections.abc import Sequence
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
from conductor_gym.board.sections import (
    AGENT_CHECKS,
    MAX_FAILED_SHARE,
    MIN_REPEATS,
    SUITE_SEED,
    TRUST_LEVELS,
    Section,
    failed_share,
    price_table,
)
from conductor_gym.board.submissions import Report
from conductor_gym.board.untrusted import http_url, markdown_text

if TYPE_CHECKING:
    from matplotlib.figure import Figure


__all__ = [
    "PLOT_NAME",
    "Entry",
    "agent_label",
    "board_figure",
    "entries_from",
    "format_report",
    "render_board",
    "render_html",
    "render_markdown",
    "section_heading",
]

PLOT_NAME = "accuracy_vs_cost.png"


@dataclass(frozen=True)
class Entry:
    """One row of the board (the ``"overall"`` metrics of one accepted submission).

    ``accuracy`` and ``reward`` are ``None`` when no episode was scored (all failed);
    ``frontier``: on its section's Pareto frontier (ranked entries only);
    ``agent_display_name``: the submission's name for a self-reported agent
    (:func:`agent_label`).
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
                verified=f"{placement.verification}; {placement.identity}",
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
    ranked = sorted((e for e in entries if e.ranked), key=_order)
    frontier: list[Entry] = []
    for _, group in _groups(ranked):
        flags = pareto_frontier([(e.accuracy, e.cost) for e in group])
        frontier += [_with_frontier(e, flag) for e, flag in zip(group, flags, strict=True)]
    apart = sorted((e for e in entries if not e.ranked), key=_order)
    return frontier + apart


def _order(e: Entry) -> tuple[Section, float, str, str]:
    return (e.section, -(e.accuracy if e.accuracy is not None else -1.0), e.name, e.slug)


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


def _money(value: float) -> str:
    if value == 0:
        return "$0"
    if value >= 0.01:
        return f"${value:.3f}"
    return f"${value:.2g}"


def _share(value: float) -> str:
    return f"{100 * value:.1f} %"


def _size(e: Entry) -> str:
    limit = f" (first {e.limit}/source)" if e.limit is not None else ""
    return f"{e.repeats} x {e.tasks}{limit}"


RANKED_COLUMNS: tuple[tuple[str, str], ...] = (
    ("#", "num"),
    ("Name", "text"),
    ("Accuracy (%)", "num"),
    ("Reward", "num"),
    ("Cost / sample", "num"),
    ("Tokens / sample", "num"),
    ("Steps / plan", "num"),
    ("Failed", "num"),
    ("Frontier", "text"),
    ("Agent", "text"),
    ("Repeats x tasks", "text"),
    ("Prices", "text"),
    ("Verified", "text"),
    ("Date", "text"),
)
_NAME, _AGENT = 1, 9

APART_COLUMNS: tuple[tuple[str, str], ...] = (
    ("Name", "text"),
    ("Accuracy (%)", "num"),
    ("Cost / sample", "num"),
    ("Failed", "num"),
    ("Agent", "text"),
    ("Suite", "text"),
    ("Pool", "text"),
    ("Repeats x tasks", "text"),
    ("Why not ranked", "text"),
    ("Date", "text"),
)


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


def _ranked_cells(rank: int, e: Entry) -> list[str]:
    return [
        str(rank),
        e.name,
        _pm(e.accuracy, e.accuracy_se, percent=True),
        _pm(e.reward, e.reward_se, percent=False),
        _money(e.cost),
        f"{e.tokens:,.0f}",
        f"{e.steps:.2f}",
        _share(e.failed),
        "★" if e.frontier else "",
        agent_label(e.agent, e.agent_display_name),
        _size(e),
        e.prices,
        e.verified,
        e.date,
    ]


def _ranked_keys(rank: int, e: Entry) -> list[str]:
    accuracy = -1.0 if e.accuracy is None else e.accuracy
    reward = -1.0 if e.reward is None else e.reward
    numbers = [rank, None, accuracy, reward, e.cost, e.tokens, e.steps, e.failed]
    return [repr(float(v)) if v is not None else "" for v in numbers] + [""] * 6


def _apart_cells(e: Entry) -> list[str]:
    pool = f"{e.section.pool_setting} {e.section.pool} ({e.section.pool_fingerprint})"
    return [
        e.name,
        _pm(e.accuracy, e.accuracy_se, percent=True),
        _money(e.cost),
        _share(e.failed),
        agent_label(e.agent, e.agent_display_name),
        f"{e.section.suite} ({e.section.fingerprint})",
        pool,
        _size(e),
        "; ".join(e.reasons),
        e.date,
    ]


def _apart_keys(e: Entry) -> list[str]:
    accuracy = -1.0 if e.accuracy is None else e.accuracy
    return ["", repr(accuracy), repr(e.cost), repr(e.failed)] + [""] * 6


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


def _md_head(columns: Sequence[tuple[str, str]]) -> list[str]:
    return [
        _md_row([title for title, _ in columns]),
        "|" + "|".join("---:" if kind == "num" else "---" for _, kind in columns) + "|",
    ]


def _md_section_title(section: Section) -> str:
    s = section
    simulator = f", simulator {markdown_text(s.simulator)}" if s.simulator else ""
    simulator += f", {markdown_text(s.draw)}" if s.draw else ""
    env = f", env {markdown_text(s.env)}" if s.env else ""
    graders = f", graders {markdown_text(s.graders)}" if s.graders else ""
    return (
        f"### Suite {_md_code(s.suite)} (`{markdown_text(s.fingerprint)}`), {s.pool_setting} "
        f"pool {_md_code(s.pool)} (`{markdown_text(s.pool_fingerprint)}`){simulator}{env}"
        f"{graders}"
    )


def section_heading(section: Section) -> str:
    """A ranked section's heading on the page: ``Suite <name> (<fingerprint>), <setting>
    pool <name> (<fingerprint>)``, then ``, simulator <version>`` for a simulated pool,
    the draw for a randomised pool (``, 4 of 7 workers per question, shuffled ids``),
    ``, env <settings>`` when the runs changed env settings and ``, graders <graders>``
    when a re-scoring replaced the tasks' graders (the README's heading, as plain text)."""
    s = section
    simulator = f", simulator {s.simulator}" if s.simulator else ""
    simulator += f", {s.draw}" if s.draw else ""
    env = f", env {s.env}" if s.env else ""
    graders = f", graders {s.graders}" if s.graders else ""
    return (
        f"Suite {s.suite} ({s.fingerprint}), {s.pool_setting} pool {s.pool} "
        f"({s.pool_fingerprint}){simulator}{env}{graders}"
    )


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
        "Accuracy and its standard error over repeats are in percent; reward is the paper's",
        "1 / 0.5 / 0 (correct / wrong / unparsable); cost and tokens are per sample (workers",
        "and planner); steps per plan counts the plans that parsed; *Failed* is the share of",
        "infrastructure failures (never scored); ★ marks the section's accuracy-vs-cost Pareto",
        "frontier (no other entry is both more accurate and cheaper). The same board,",
        "sortable: [`index.html`](index.html); accuracy against cost:",
        f"[`{PLOT_NAME}`]({PLOT_NAME}).",
        "",
        "## Ranked",
    ]
    if not ranked:
        lines += ["", "_No ranked entries yet._"]
    for section, group in _groups(ranked):
        lines += ["", _md_section_title(section), ""]
        lines += _md_head(RANKED_COLUMNS)
        for rank, entry in enumerate(group, 1):
            cells = [markdown_text(c) for c in _ranked_cells(rank, entry)]
            if entry.url and http_url(entry.url):
                cells[_NAME] = f"[{cells[_NAME]}]({_md_url(entry.url)})"
            cells[_AGENT] = _md_code(agent_label(entry.agent, entry.agent_display_name))
            lines.append(_md_row(cells))
    lines += ["", "## Listed apart (not ranked)", ""]
    if not apart:
        lines.append("_None._")
    else:
        lines += _md_head(APART_COLUMNS)
        for entry in apart:
            cells = [markdown_text(c) for c in _apart_cells(entry)]
            cells[4] = _md_code(agent_label(entry.agent, entry.agent_display_name))
            lines.append(_md_row(cells))
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

The *Verified* column names each entry's trust level, and whose completions it shows:

{_levels(TRUST_LEVELS)}
{_levels({("agent re-run" if k == "re-run" else k): v for k, v in AGENT_CHECKS.items()})}

A real pool's cache is checked before it is re-played: token counts against the text
(about 4 characters a token, within wide bounds), costs against the pool file's prices,
latencies present and plausible; `conductor-gym leaderboard spot-check ENTRY --pool
POOL --sample N` re-asks the live endpoints a random sample of the cached calls and
reports how many agree."""

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
    columns: Sequence[tuple[str, str]],
    rows: Sequence[tuple[Entry, list[str], list[str]]],
    attrs: str,
    *,
    name_col: int,
    agent_col: int,
    why_col: int | None = None,
) -> list[str]:
    out = [f'<div class="scroll"><table class="board" {attrs}>']
    name_th = ' class="name"'
    header = "".join(
        f'<th data-kind="{kind}" scope="col"{name_th if i == name_col else ""}>{_e(title)}</th>'
        for i, (title, kind) in enumerate(columns)
    )
    out += [f"<thead><tr>{header}</tr></thead>", "<tbody>"]
    for entry, texts, keys in rows:
        cells = []
        for i, (text, (_, kind)) in enumerate(zip(texts, columns, strict=True)):
            body = _e(text)
            css = "num" if kind == "num" else "text"
            if i == name_col:
                css = "name"
                if entry.url:  # shown, not linked: the page links nowhere
                    body += f'<br><span class="url">{_e(entry.url)}</span>'
            elif i == agent_col:
                # the spec may break after a ':' or a '/', not inside a word
                body = re.sub(r"([:/])", r"\1<wbr>", body)
                css, body = "agent", f"<code>{body}</code>"
            elif i == why_col:
                css = "why"
            attr = f' class="{css}"' if css else ""
            attr += f' data-sort="{keys[i]}"' if keys[i] else ""
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
        attrs = (
            f'data-suite="{_e(section.suite)}" data-pool-setting="{_e(section.pool_setting)}" '
            'data-default-sort="2"'
        )
        out += _html_table(RANKED_COLUMNS, rows, attrs, name_col=_NAME, agent_col=_AGENT)
    out.append("<h2>Listed apart (not ranked)</h2>")
    if not apart:
        out.append("<p>None.</p>")
    else:
        rows = [(e, _apart_cells(e), _apart_keys(e)) for e in apart]
        attrs = 'data-apart="1" data-default-sort="1"'
        out += _html_table(APART_COLUMNS, rows, attrs, name_col=0, agent_col=4, why_col=8)
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
        label = f"{section.suite}, {section.pool_setting} pool {section.pool}"
        if section.env:
            label += f", env {section.env}"
        series.append(
            Series(
                f"{letter}: {label}" if letter else label,
                [e.cost for e in group],
                [e.accuracy or 0.0 for e in group],
                errors=[e.accuracy_se or 0.0 for e in group],
                notes=marks,
                front=sorted((e.cost, e.accuracy or 0.0) for e in group if e.frontier),
            )
        )
        key += [f"{mark}  {e.name}" for mark, e in zip(marks, group, strict=True)]
    return series, key


def _letter(index: int) -> str:
    """``A`` .. ``Z``, then ``AA``, ``AB``, ...: a section's letter on the plot."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return letters


def render_board(reports: Sequence[tuple[str, Report]], directory: Path) -> list[Path]:
    """Write ``README.md``, ``index.html`` and the plot into ``directory`` from the
    accepted ones of ``(slug, report)``; return the paths."""
    directory.mkdir(parents=True, exist_ok=True)
    entries = entries_from(reports)
    readme, page, plot = directory / "README.md", directory / "index.html", directory / PLOT_NAME
    readme.write_text(render_markdown(entries), encoding="utf-8")
    page.write_text(render_html(entries), encoding="utf-8")
    render_plot(entries, plot)
    return [readme, page, plot]


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
