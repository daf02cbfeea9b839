"""The board's page and plot fit: in headless Chromium at a desktop (1400 px) and a narrow
(800 px) window nothing sticks out of the window (a table wider than the page scrolls in
its own box; at 1400 px every column shows), and a screenshot of each is taken; the plot's
title, labels, legends and point numbers lie inside the figure and no two overlap; a
section's heading reads "Suite <name>"; an absolute path in an agent spec is never shown.

Two pages: the committed board (``leaderboard/index.html``) and a crowded one rendered
here from board rows (long names and URLs, a checkpoint path, two sections, entries
listed apart with long reasons, points on top of each other)."""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium_support import Browser, chromium
from support import require

from conductor_gym.board.render import (
    PLOT_NAME,
    Entry,
    agent_label,
    board_figure,
    render_html,
    render_markdown,
    render_plot,
    section_heading,
)
from conductor_gym.board.sections import Section

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = (1400, 800)
HEIGHT = 1000
CHECKPOINT = "policy:/home/alice/experiments/orchestrate-run-H/checkpoint-20"

SUITE = Section("offline-160", "118eedc03d458aa6", "simulated", "sim-paper", "07ad09ca678c")
SIX_STEPS = Section(
    SUITE.suite,
    SUITE.fingerprint,
    SUITE.pool_setting,
    SUITE.pool,
    SUITE.pool_fingerprint,
    '{"max_steps":6}',
)


def _entry(slug: str, section: Section, accuracy: float, cost: float, **fields: Any) -> Entry:
    values: dict[str, Any] = {
        "slug": slug,
        "name": f"Entry {slug}",
        "authors": ("someone",),
        "agent": "random",
        "section": section,
        "ranked": True,
        "reasons": (),
        "verified": "simulated re-play (480 episodes); agent re-run (480 episodes)",
        "prices": "simulator profile prices",
        "repeats": 3,
        "tasks": 160,
        "limit": None,
        "accuracy": accuracy,
        "accuracy_se": 0.01,
        "reward": 0.5 + accuracy / 2,
        "reward_se": 0.005,
        "cost": cost,
        "tokens": 1000 * cost / 0.005,
        "steps": 3.0,
        "failed": 0.0,
        "training_data": "none",
        "date": "2026-12-01",
        "url": None,
        **fields,
    }
    return Entry(**values)


LONG = "SmolLM2-135M conductor, cpu-orchestrate (plan search, warm start, 20 GRPO steps)"
# (accuracy, cost): a cheap tail, a crowd of near-equal points, exact duplicates
POINTS = [
    (0.702, 0.017), (0.69, 0.0049), (0.66, 0.026), (0.654, 0.0071), (0.633, 0.028),
    (0.619, 0.030), (0.613, 0.0093), (0.613, 0.005), (0.558, 0.00021), (0.552, 0.011),
    (0.544, 0.00032), (0.533, 0.00015), (0.292, 0.000089), (0.619, 0.030), (0.62, 0.029),
    (0.615, 0.0091), (0.64, 0.027),
]  # fmt: skip


def crowded_entries() -> list[Entry]:
    """Ranked rows of two sections, sorted as rendered, then two rows listed apart."""
    ranked = []
    for i, (accuracy, cost) in enumerate(sorted(POINTS, reverse=True)):
        ranked.append(
            _entry(
                f"e{i}",
                SUITE,
                accuracy,
                cost,
                name=LONG if i == 0 else f"Single worker number {i} (deepseek-r1-distill-qwen-32b)",
                agent=CHECKPOINT if i == 0 else f"consensus:{i % 7}:5",
                url="https://example.org/" + "x" * 120 if i == 1 else None,
                frontier=i in (0, 1),
            )
        )
    ranked += [
        _entry("s6-a", SIX_STEPS, 0.71, 0.02, name=LONG + " six steps", frontier=True),
        _entry("s6-b", SIX_STEPS, 0.6, 0.001, agent=CHECKPOINT + "-b", frontier=True),
    ]
    apart = [
        _entry(
            f"apart-{i}",
            SUITE,
            0.4,
            0.01,
            ranked=False,
            agent="/srv/agents/" + "deep/" * 12 + "my_agent.py:MyAgent",
            reasons=(
                "partial: the first 5 tasks per source of suite 'offline'",
                "2 repeat(s): a ranked entry needs at least 3",
                "unverified: no response cache was shipped with this real-pool run",
            ),
        )
        for i in range(2)
    ]
    return ranked + apart


# ------------------------------------------------------------------ heading and agent name


def test_a_section_heading_reads_suite_once() -> None:
    page = render_html(crowded_entries(), plot=False)
    heading = "Suite offline-160 (118eedc03d458aa6), simulated pool sim-paper (07ad09ca678c)"
    assert f"<h3>{heading}</h3>" in page
    assert "suite suite" not in page.lower()
    assert section_heading(SIX_STEPS) == heading + ', env {"max_steps":6}'
    assert "<h3>" + section_heading(SUITE) + "</h3>" in page
    assert "suite suite" not in render_markdown(crowded_entries()).lower()


@pytest.mark.parametrize(
    ("spec", "shown"),
    [
        (CHECKPOINT, "policy:…/checkpoint-20"),
        ("policy:~/runs/ckpt", "policy:…/ckpt"),
        ("policy:~alice/runs/ckpt/", "policy:…/ckpt"),
        ("policy:C:\\Users\\alice\\ckpt", "policy:…/ckpt"),
        ("policy:file:///home/alice/ckpt", "policy:…/ckpt"),
        ("/srv/agents/my_agent.py:MyAgent", "…/my_agent.py:MyAgent"),
        ("policy:/", "policy:…/"),
        # relative paths and hub ids say nothing of the host: kept as given
        ("policy:runs/ckpt", "policy:runs/ckpt"),
        ("policy:HuggingFaceTB/SmolLM2-135M", "policy:HuggingFaceTB/SmolLM2-135M"),
        ("llm:openai/gpt-5", "llm:openai/gpt-5"),
        ("reflect:2:5", "reflect:2:5"),
    ],
)
def test_agent_label_cuts_absolute_paths(spec: str, shown: str) -> None:
    assert agent_label(spec) == shown


def test_no_absolute_path_reaches_the_page_or_the_readme() -> None:
    entries = crowded_entries()
    page, readme = render_html(entries, plot=False), render_markdown(entries)
    for text in (page, readme):
        assert "/home/alice" not in text and "alice" not in text and "/srv/agents" not in text
    assert "<code>policy:…/checkpoint-20</code>" in page
    assert "`policy:…/checkpoint-20`" in readme
    assert "`…/my_agent.py:MyAgent`" in readme  # the apart table too


# ----------------------------------------------------------------------------- the plot


def _inside(box: Any, frame: Any, slack: float = 0.5) -> bool:
    return bool(
        box.x0 >= frame.x0 - slack
        and box.y0 >= frame.y0 - slack
        and box.x1 <= frame.x1 + slack
        and box.y1 <= frame.y1 + slack
    )


def _overlaps(a: Any, b: Any) -> bool:
    wide, high = min(a.x1, b.x1) - max(a.x0, b.x0), min(a.y1, b.y1) - max(a.y0, b.y0)
    return bool(wide > 0.5 and high > 0.5)


def test_the_plot_fits_its_figure_and_no_labels_overlap() -> None:
    text_only = require("matplotlib.text").Text.get_window_extent  # without a leader line
    entries = crowded_entries()
    fig = board_figure(entries)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    (ax,) = fig.axes
    frame, area = fig.bbox, ax.get_window_extent(renderer)

    def box(text: Any) -> Any:
        return text.get_window_extent(renderer)

    title = fig.texts[0] if fig.texts else ax.title
    assert "accuracy vs cost" in title.get_text()
    assert _inside(box(title), frame), "the title is clipped"
    labels = [ax.xaxis.label, ax.yaxis.label]
    low, high = sorted(ax.get_xlim())
    ticks = [
        t
        for t, where in zip(ax.get_xticklabels(), ax.get_xticks(), strict=True)
        if t.get_text() and low <= where <= high
    ]
    legends = [text for legend in fig.legends for text in legend.get_texts()]
    for text in (*labels, *ticks, *ax.get_yticklabels(), *legends):
        if text.get_text():
            assert _inside(box(text), frame), f"{text.get_text()!r} is clipped"
    for legend in fig.legends:
        assert not _overlaps(legend.get_window_extent(renderer), area), "a legend covers the axes"
    for a, b in itertools.combinations(ticks, 2):
        assert not _overlaps(box(a), box(b)), (a.get_text(), b.get_text())
    for a, b in itertools.combinations(legends, 2):
        assert not _overlaps(box(a), box(b)), (a.get_text(), b.get_text())

    notes = list(ax.texts)
    ranked = [e for e in entries if e.ranked]
    assert sorted(n.get_text() for n in notes) == sorted(
        [f"A{i}" for i in range(1, len(POINTS) + 1)] + ["B1", "B2"]
    )  # one number per ranked entry, the section's letter first
    assert len(notes) == len(ranked)
    spans = {n.get_text(): text_only(n, renderer) for n in notes}
    for name, span in spans.items():
        assert _inside(span, area), f"point label {name!r} leaves the axes"
    for (first, one), (second, other) in itertools.combinations(spans.items(), 2):
        assert not _overlaps(one, other), f"point labels {first} and {second} overlap"
    key = [t.get_text() for t in legends]
    assert any(k.startswith("A1  SmolLM2-135M conductor") for k in key)


def test_the_plot_file_is_written(tmp_path: Path) -> None:
    require("matplotlib")
    render_plot(crowded_entries(), tmp_path / PLOT_NAME)
    assert (tmp_path / PLOT_NAME).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


# -------------------------------------------------------------------------- the browser

# Everything on the page lies inside the window, but for what sits in a box that scrolls
# sideways (that box itself must lie inside). Returns one line per offender.
OVERFLOW = """(() => {
  const width = document.documentElement.clientWidth;
  const problems = [];
  const wide = document.documentElement.scrollWidth;
  if (wide > width) problems.push(`the page scrolls sideways: ${wide} px in ${width} px`);
  const scrolls = (el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
  for (const el of document.body.querySelectorAll("*")) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    let inner = false;
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (scrolls(up)) { inner = true; break; }
    }
    if (!inner && (box.left < -0.5 || box.right > width + 0.5)) {
      const what = el.tagName.toLowerCase() + (el.className ? "." + el.className : "");
      const text = (el.textContent || "").trim().slice(0, 40);
      problems.push(`${what} "${text}": ${Math.round(box.left)}..${Math.round(box.right)} px`);
    }
  }
  return problems;
})()"""

# The ranked rows taller than one line (by their entry), and how many ranked rows there are.
TALL = """(() => {
  const rows = [...document.querySelectorAll("table.board:not([data-apart]) tbody tr")];
  const line = (r) => parseFloat(getComputedStyle(r.cells[0]).lineHeight) || 20;
  const tall = rows.filter((r) => r.getBoundingClientRect().height > 1.5 * line(r) + 12);
  return [tall.map((r) => r.dataset.entry), rows.length];
})()"""

# For each table's box: how much wider its table is than the box (0: every column shows).
HIDDEN = """[...document.querySelectorAll("div.scroll")].map(
  (box) => Math.max(0, box.scrollWidth - box.clientWidth))"""

READY = "document.body.dataset.boardReady === '1' && [...document.images].every((i) => i.complete)"


@pytest.fixture(scope="module")
def crowded_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require("matplotlib")
    folder = tmp_path_factory.mktemp("crowded-board")
    entries = crowded_entries()
    (folder / "index.html").write_text(render_html(entries), encoding="utf-8")
    render_plot(entries, folder / PLOT_NAME)
    return folder / "index.html"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    chromium()
    with contextlib.closing(Browser(tmp_path_factory.mktemp("profile"))) as b:
        yield b


def _page(which: str, crowded_page: Path) -> Path:
    return ROOT / "leaderboard" / "index.html" if which == "committed" else crowded_page


def _load(browser: Browser, page: Path, width: int, style: str = "") -> None:
    browser.set_viewport(width, HEIGHT)
    browser.open(page.as_uri(), ready=READY)
    if style:
        browser.run(
            "(() => { const s = document.createElement('style');"
            f" s.textContent = {json.dumps(style)}; document.head.appendChild(s); }})()"
        )


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("which", ["committed", "crowded"])
def test_nothing_overflows_the_window(
    browser: Browser, crowded_page: Path, tmp_path: Path, which: str, width: int
) -> None:
    _load(browser, _page(which, crowded_page), width)
    problems, hidden = browser.run(OVERFLOW), browser.run(HIDDEN)
    plot = browser.run(
        "(() => { const i = document.querySelector('img.plot');"
        " return i ? [i.naturalWidth, i.getBoundingClientRect().right] : null; })()"
    )
    shot = browser.screenshot(tmp_path / f"{which}-{width}.png", width=width, height=HEIGHT)
    assert problems == [], f"overflow at {width} px (screenshot {shot}): {problems}"
    assert hidden and plot is not None and plot[0] > 0, "the tables and the plot are shown"
    assert plot[1] <= width
    if width >= 1400:  # a desktop window shows every column, no sideways scrolling
        assert hidden == [0] * len(hidden), f"columns out of view (screenshot {shot}): {hidden}"
        tall, rows = browser.run(TALL)  # and every ranked row is one line
        assert rows > 0 and tall == [], f"rows over one line (screenshot {shot}): {tall}"


def test_the_overflow_check_catches_a_table_that_does_not_wrap(
    browser: Browser, crowded_page: Path
) -> None:
    # one-line rows whose long names and agents are not cut hide columns at 1400 px ...
    uncut = "table.board td, table.board th { white-space: nowrap; max-width: none !important }"
    _load(browser, crowded_page, 1400, uncut)
    assert max(browser.run(HIDDEN)) > 0
    # ... and cells that wrap make rows of several lines (the page as it was)
    _load(browser, crowded_page, 1400, "table.board td { white-space: normal !important }")
    assert browser.run(TALL)[0] != []
    # ... and without its scrolling box, a table pushes the page sideways at 800 px
    _load(browser, crowded_page, 800, "div.scroll { overflow-x: visible }")
    problems = browser.run(OVERFLOW)
    assert problems[0].startswith("the page scrolls sideways")
    assert any(line.startswith("table.board") for line in problems)
