"""Render the leaderboard (``README.md``, a static ``index.html``, a plot) and reports.

:func:`render_board` turns validated :class:`~conductor_gym.bench.leaderboard.Submission` s into

* ``README.md``: one table per (suite, pool setting), sorted by accuracy (best first),
  with accuracy ± standard error over repeats, mean reward, cost and tokens per sample,
  steps per plan, the entry's name and its agent spec;
* ``index.html``: the same tables in one self-contained page (inline CSS, a small inline
  script that sorts a table when a column header is clicked; nothing is loaded from the
  network);
* ``accuracy_vs_cost.png``: accuracy against cost per sample, one labelled marker per
  entry (matplotlib, Agg; imported only here).

:func:`format_report` renders a validation :class:`~conductor_gym.bench.leaderboard.Report` as
text for the command line. The board depends only on the submissions (no timestamps), so
re-rendering an unchanged board rewrites identical text files.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from conductor_gym.bench.leaderboard import POOL_SETTINGS, Report, Submission

__all__ = [
    "PLOT_NAME",
    "Entry",
    "entries_from",
    "format_report",
    "render_board",
    "render_html",
    "render_markdown",
]

PLOT_NAME = "accuracy_vs_cost.png"


@dataclass(frozen=True)
class Entry:
    """One row of the board (the ``"overall"`` metrics of one submission)."""

    slug: str
    name: str
    authors: tuple[str, ...]
    agent: str
    pool_setting: str
    pool: str
    suite: str
    fingerprint: str
    limit: int | None
    repeats: int
    n: int
    accuracy: float
    accuracy_se: float | None
    reward: float
    reward_se: float | None
    cost: float
    tokens: float
    steps: float
    training_data: str
    date: str
    url: str | None

    @property
    def group(self) -> tuple[str, str]:
        return (self.suite, self.pool_setting)


def entries_from(submissions: Sequence[tuple[str, Submission]]) -> list[Entry]:
    """Board rows for ``(slug, submission)`` pairs, grouped and sorted as rendered."""
    entries = []
    for slug, sub in submissions:
        meta, res = sub.metadata, sub.results
        overall = res.metrics["overall"]
        entries.append(
            Entry(
                slug=slug,
                name=meta.name,
                authors=tuple(meta.authors),
                agent=meta.agent,
                pool_setting=meta.pool_setting,
                pool=str(res.pool.get("name", "?")),
                suite=res.suite.name,
                fingerprint=res.suite.fingerprint,
                limit=res.suite.limit,
                repeats=res.repeats,
                n=overall.n,
                accuracy=overall.accuracy,
                accuracy_se=overall.accuracy_se,
                reward=overall.mean_reward,
                reward_se=overall.mean_reward_se,
                cost=overall.cost_per_sample_usd,
                tokens=overall.tokens_per_sample,
                steps=overall.mean_steps,
                training_data=meta.training_data,
                date=meta.date.isoformat(),
                url=meta.url,
            )
        )
    order = {setting: i for i, setting in enumerate(POOL_SETTINGS)}
    return sorted(
        entries, key=lambda e: (e.suite, order.get(e.pool_setting, 99), -e.accuracy, e.name)
    )


def _groups(entries: Sequence[Entry]) -> list[tuple[tuple[str, str], list[Entry]]]:
    groups: dict[tuple[str, str], list[Entry]] = {}
    for entry in entries:
        groups.setdefault(entry.group, []).append(entry)
    return list(groups.items())


# ---------------------------------------------------------------------------- formatting


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def _pm(value: float, se: float | None, *, percent: bool) -> str:
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


def _tokens(value: float) -> str:
    return f"{value:,.0f}"


def _suite_note(group: list[Entry]) -> str:
    first = group[0]
    limit = f", first {first.limit} tasks per source" if first.limit is not None else ""
    fingerprints = sorted({e.fingerprint for e in group})
    return f"fingerprint `{'`, `'.join(fingerprints)}`{limit}"


COLUMNS: tuple[tuple[str, str], ...] = (
    ("#", "num"),
    ("Name", "text"),
    ("Accuracy (%)", "num"),
    ("Reward", "num"),
    ("Cost / sample", "num"),
    ("Tokens / sample", "num"),
    ("Steps / plan", "num"),
    ("Agent", "text"),
    ("Pool", "text"),
    ("Repeats x tasks", "text"),
    ("Date", "text"),
)


def _cells(rank: int, e: Entry) -> list[str]:
    return [
        str(rank),
        e.name,
        _pm(e.accuracy, e.accuracy_se, percent=True),
        _pm(e.reward, e.reward_se, percent=False),
        _money(e.cost),
        _tokens(e.tokens),
        f"{e.steps:.2f}",
        e.agent,
        e.pool,
        f"{e.repeats} x {e.n // max(e.repeats, 1)}",
        e.date,
    ]


def _sort_keys(rank: int, e: Entry) -> list[str]:
    numbers = [rank, None, e.accuracy, e.reward, e.cost, e.tokens, e.steps]
    return [repr(float(v)) if v is not None else "" for v in numbers] + [""] * 4


# ------------------------------------------------------------------------------ markdown


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(entries: Sequence[Entry]) -> str:
    """The board as Markdown (one table per suite and pool setting)."""
    lines = [
        "# conductor-gym leaderboard",
        "",
        "Generated by `conductor-gym leaderboard render` from the validated files in",
        "[`submissions/`](submissions/); do not edit by hand. Accuracy and its standard",
        "error over repeats are in percent; reward is the paper's 1 / 0.5 / 0 (correct /",
        "wrong / unparsable); cost and tokens are per sample (workers and planner);",
        "steps per plan counts the plans that parsed. The same board, sortable:",
        f"[`index.html`](index.html); accuracy against cost: [`{PLOT_NAME}`]({PLOT_NAME}).",
        "",
        "Submit with `conductor-gym leaderboard submit RESULTS.json ...` and check with",
        "`conductor-gym leaderboard validate FILE` (see [SUBMITTING](#submitting)).",
    ]
    if not entries:
        lines += ["", "_No submissions yet._"]
    for (suite, setting), group in _groups(entries):
        lines += ["", f"## Suite `{suite}`, {setting} pool", "", _suite_note(group), ""]
        lines.append("| " + " | ".join(title for title, _ in COLUMNS) + " |")
        lines.append(
            "|" + "|".join("---:" if kind == "num" else "---" for _, kind in COLUMNS) + "|"
        )
        for rank, entry in enumerate(group, 1):
            cells = [_md_escape(c) for c in _cells(rank, entry)]
            if entry.url:
                cells[1] = f"[{cells[1]}]({entry.url})"
            cells[7] = f"`{cells[7]}`"
            lines.append("| " + " | ".join(cells) + " |")
    lines += ["", SUBMITTING_MD]
    return "\n".join(lines) + "\n"


SUBMITTING_MD = """\
## Submitting

1. Evaluate your agent: `conductor-gym evaluate` writes a results JSON (schema
   `conductor-gym/results/v1`) with every episode and the suite's fingerprint.
2. Wrap it with metadata: `conductor-gym leaderboard submit RESULTS.json --name NAME
   --author AUTHOR --training-data TEXT --pool-setting constrained|unconstrained|simulated`
   writes `leaderboard/submissions/<slug>.json` after validating it.
3. Open a pull request with that file. CI runs `conductor-gym leaderboard validate`:
   every aggregate is recomputed from the episodes, the suite fingerprint and the set
   of episodes (each task and repeat exactly once) are checked, and each episode's reward
   must match its outcome. `conductor-gym leaderboard render` then rebuilds this page."""


# ---------------------------------------------------------------------------------- html

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 80rem;
  padding: 0 1rem; color: #1d1d1f; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.2rem; margin-top: 2rem; }
p.note { color: #555; font-size: .9rem; }
table.board { border-collapse: collapse; width: 100%; font-size: .85rem; }
table.board th, table.board td { padding: .3rem .45rem; border-bottom: 1px solid #ddd; }
table.board th { background: #f3f3f5; cursor: pointer; user-select: none;
  text-align: left; white-space: nowrap; }
table.board th[data-dir="desc"]::after { content: " \\25BC"; }
table.board th[data-dir="asc"]::after { content: " \\25B2"; }
table.board td { white-space: nowrap; }
table.board td.name { white-space: normal; min-width: 9rem; }
div.scroll { overflow-x: auto; }
table.board td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.board td code { font-size: .85rem; }
table.board tbody tr:hover { background: #fafaff; }
span.url { color: #666; font-size: .8rem; }
img.plot { max-width: 100%; margin-top: 1.5rem; }
"""

_JS = """
(function () {
  function key(cell) {
    var v = cell.getAttribute("data-sort");
    return v === null || v === "" ? cell.textContent.trim().toLowerCase() : parseFloat(v);
  }
  function sortBy(table, col, dir) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[col]), y = key(b.cells[col]);
      var c = x < y ? -1 : x > y ? 1 : 0;
      return dir === "asc" ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (i === col) { th.setAttribute("data-dir", dir); } else { th.removeAttribute("data-dir"); }
    });
    table.setAttribute("data-sorted-by", String(col));
  }
  document.querySelectorAll("table.board").forEach(function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.addEventListener("click", function () {
        var next = th.getAttribute("data-dir") === "desc" ? "asc" : "desc";
        if (th.getAttribute("data-dir") === null && th.getAttribute("data-kind") === "text") {
          next = "asc";
        }
        sortBy(table, i, next);
      });
    });
    sortBy(table, parseInt(table.getAttribute("data-default-sort"), 10), "desc");
  });
  document.body.setAttribute("data-board-ready", "1");
})();
"""


def _e(text: str) -> str:
    return html.escape(text, quote=True)


def render_html(entries: Sequence[Entry], *, plot: bool = True) -> str:
    """The board as one self-contained HTML page."""
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>conductor-gym leaderboard</title>",
        f"<style>{_CSS}</style>",
        "</head>",
        "<body>",
        "<h1>conductor-gym leaderboard</h1>",
        '<p class="note">Accuracy and its standard error over repeats in percent; reward '
        "1 / 0.5 / 0 (correct / wrong / unparsable); cost and tokens per sample. Click a "
        "column header to sort.</p>",
    ]
    if not entries:
        out.append("<p>No submissions yet.</p>")
    accuracy_col = 2
    for (suite, setting), group in _groups(entries):
        out.append(f"<h2>Suite <code>{_e(suite)}</code>, {_e(setting)} pool</h2>")
        note = _suite_note(group).replace("`", "")
        out.append(f'<p class="note">{_e(note)}</p>')
        out.append(
            f'<div class="scroll"><table class="board" data-suite="{_e(suite)}" '
            f'data-pool-setting="{_e(setting)}" data-default-sort="{accuracy_col}">'
        )
        header = "".join(
            f'<th data-kind="{kind}" scope="col">{_e(title)}</th>' for title, kind in COLUMNS
        )
        out.append(f"<thead><tr>{header}</tr></thead>")
        out.append("<tbody>")
        for rank, entry in enumerate(group, 1):
            cells = []
            keys = _sort_keys(rank, entry)
            for i, (text, (_, kind)) in enumerate(zip(_cells(rank, entry), COLUMNS, strict=True)):
                body = _e(text)
                if i == 1 and entry.url:  # shown, not linked: the page links nowhere
                    body += f'<br><span class="url">{_e(entry.url)}</span>'
                elif i == 7:
                    body = f"<code>{body}</code>"
                attrs = ' class="num"' if kind == "num" else (' class="name"' if i == 1 else "")
                attrs += f' data-sort="{keys[i]}"' if keys[i] else ""
                cells.append(f"<td{attrs}>{body}</td>")
            out.append(f'<tr data-entry="{_e(entry.slug)}">' + "".join(cells) + "</tr>")
        out.append("</tbody></table></div>")
    if plot and entries:
        out.append(f'<img class="plot" src="{PLOT_NAME}" alt="accuracy against cost per sample">')
    out += [f"<script>{_JS}</script>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------------- plot


def render_plot(entries: Sequence[Entry], path: Path) -> None:
    """Accuracy (%) against cost per sample, one labelled marker per entry."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 5), layout="constrained")
    ax = fig.add_subplot()
    markers = "osD^v<>PX*"
    for i, ((suite, setting), group) in enumerate(_groups(entries)):
        xs = [e.cost for e in group]
        ys = [100 * e.accuracy for e in group]
        errs = [100 * (e.accuracy_se or 0.0) for e in group]
        ax.errorbar(
            xs, ys, yerr=errs, fmt=markers[i % len(markers)], capsize=3,
            label=f"{suite}, {setting} pool",
        )  # fmt: skip
        for entry, x, y in zip(group, xs, ys, strict=True):
            ax.annotate(entry.name, (x, y), textcoords="offset points", xytext=(5, 4), fontsize=8)
    costs = [e.cost for e in entries]
    if costs and min(costs) > 0 and max(costs) / min(costs) > 20:
        ax.set_xscale("log")
    else:
        ax.set_xlim(left=0, right=1.15 * max(costs, default=0.0) or 1.0)
    ax.set_ylim(0, 100)
    ax.set_xlabel("cost per sample (USD)")
    ax.set_ylabel("accuracy (%)")
    ax.set_title("conductor-gym leaderboard: accuracy vs cost")
    ax.grid(True, alpha=0.3)
    if entries:
        ax.legend(loc="best", fontsize=8)
    else:
        ax.text(0.5, 0.5, "no submissions yet", ha="center", transform=ax.transAxes)
    fig.savefig(path, dpi=120, metadata={"Software": None})


def render_board(submissions: Sequence[tuple[str, Submission]], directory: Path) -> list[Path]:
    """Write ``README.md``, ``index.html`` and the plot into ``directory``; return them."""
    directory.mkdir(parents=True, exist_ok=True)
    entries = entries_from(submissions)
    readme, page, plot = directory / "README.md", directory / "index.html", directory / PLOT_NAME
    readme.write_text(render_markdown(entries), encoding="utf-8")
    page.write_text(render_html(entries), encoding="utf-8")
    render_plot(entries, plot)
    return [readme, page, plot]


def format_report(report: Report) -> str:
    """Human-readable lines: ``ok``/``REJECTED``, then one line per error and warning."""
    sub = report.submission
    if report.ok and sub is not None:
        overall = sub.results.metrics.get("overall")
        accuracy = f", accuracy {overall.accuracy:.4f}" if overall is not None else ""
        head = (
            f"ok        {report.source}: {sub.metadata.name!r}, suite "
            f"{sub.results.suite.name!r}, {len(sub.results.episodes)} episodes{accuracy}"
        )
    else:
        count = len(report.errors)
        head = f"REJECTED  {report.source}: {count} problem" + ("" if count == 1 else "s")
    lines = [head]
    lines += [f"  error    {problem}" for problem in report.errors]
    lines += [f"  warning  {problem}" for problem in report.warnings]
    return "\n".join(lines)
