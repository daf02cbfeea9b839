"""The rendered leaderboard: README.md, a self-contained index.html (opened in headless
Chromium to run its sort script) and the accuracy-vs-cost plot, from real evaluations;
and the committed board, re-played in full."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from board_support import board_run, wrap
from chromium_support import dump_dom
from support import require

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.frontier import pareto_frontier
from conductor_gym.board.render import (
    PLOT_NAME,
    entries_from,
    render_html,
    render_markdown,
)
from conductor_gym.board.sections import ranking_key
from conductor_gym.board.submissions import SUBMISSIONS_DIR, load_submissions
from conductor_gym.cli.main import main

HOSTILE = "<img src=x onerror=alert(1)> *bold* [x](javascript:alert(1))"
RANKED = {
    "random-a": ("Random A", "random"),
    "single-b": ("Single <B> | piped", "single:2"),
    "hostile": (HOSTILE, "best-single"),
}
APART = {"partial": "Partial run"}


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A board folder with three ranked real submissions and one partial one."""
    directory = tmp_path_factory.mktemp("board")
    runs = tmp_path_factory.mktemp("runs")
    for slug, (name, agent) in RANKED.items():
        url = "https://example.org/a(b)?q=<x>" if slug == "hostile" else None
        submission = wrap(board_run(agent, runs / f"{slug}.json"), name=name, url=url)
        submission.dump(directory / SUBMISSIONS_DIR / f"{slug}.json")
    partial = evaluate("random", "offline", repeats=2, limit=5, progress=False)
    wrap(partial, name=APART["partial"]).dump(directory / SUBMISSIONS_DIR / "partial.json")
    return directory


@pytest.fixture(scope="module")
def rendered(board: Path) -> Path:
    require("matplotlib")
    assert main(["leaderboard", "render", "--dir", str(board)]) == 0
    return board


def _rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"\| \d+ \|", line)]


def test_render_writes_the_three_files(rendered: Path) -> None:
    for name in ("README.md", "index.html", PLOT_NAME):
        assert (rendered / name).stat().st_size > 0, name
    assert (rendered / PLOT_NAME).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_readme_ranks_one_section_and_lists_the_partial_run_apart(rendered: Path) -> None:
    text = (rendered / "README.md").read_text()
    ranked, apart = text.split("## Listed apart (not ranked)")
    assert re.search(
        r"### Suite `offline-160` \(`118eedc03d458aa6`\), simulated pool `sim-paper` \(`\w{12}`\)",
        ranked,
    )
    header = next(line for line in text.splitlines() if line.startswith("| # | Name"))
    for column in ("Accuracy (%)", "Cost / sample", "Failed", "Frontier", "Agent", "Date"):
        assert column in header
    # what every row shares is said once, above the table, not in each row
    shared = "Repeats x tasks: 3 x 160. Prices: simulator profile prices. Verified: simulated "
    assert shared + "re-play (480 episodes). Completions: agent re-run (480 episodes)." in ranked
    for column in ("Prices", "Verified", "Repeats x tasks", "Completions"):
        assert column not in header
    rows = _rows(ranked)
    assert len(rows) == len(RANKED)
    cells = [re.split(r"(?<!\\)\|", row) for row in rows]  # unescaped pipes only
    assert all(len(c) == len(header.split("|")) for c in cells)
    accuracies = [float(c[3].split("±")[0]) for c in cells]
    assert accuracies == sorted(accuracies, reverse=True)
    assert all(c[8].strip() == "0.0 %" for c in cells)  # Failed
    assert any("Single &lt;B&gt; \\| piped" in row for row in rows)
    assert "`single:2`" in ranked and "simulator profile prices" in ranked
    assert any(c[9].strip() == "★" for c in cells)  # somebody is on the frontier
    assert "Partial run" in apart and "Partial run" not in ranked
    assert "partial: the first 5 tasks per source of suite 'offline'" in apart
    assert "2 repeat(s): a ranked entry needs at least 3" in apart


def test_no_submitted_text_reaches_markdown_raw(rendered: Path) -> None:
    text = (rendered / "README.md").read_text()
    assert "<img" not in text and "<B>" not in text and "*bold*" not in text
    assert "&lt;img src=x onerror=alert(1)&gt; \\*bold\\* \\[x\\](javascript:alert(1))" in text
    assert "](https://example.org/a%28b%29?q=%3Cx%3E)" in text  # linked, percent-encoded
    assert not re.search(r"(?<!\\)\]\(javascript:", text)  # only an escaped bracket


def test_html_is_self_contained(rendered: Path) -> None:
    page = (rendered / "index.html").read_text()
    assert "<style>" in page and "<script>" in page
    assert "&lt;B&gt;" in page and "<B>" not in page and "<img src=x" not in page
    external = re.findall(r"""(?:src|href)\s*=\s*["']?\s*(?:[a-z]+:)?//""", page, re.I)
    assert external == [] and "href=" not in page
    assert not re.search(r"@import|url\(\s*['\"]?(?:https?:)?//", page, re.I)
    # the one URL is shown as text (with the name, on hover), not linked
    assert re.findall(r"https?://", page) == ["https://"]
    url = re.escape("(https://example.org/a(b)?q=&lt;x&gt;)")
    assert re.search(rf'<td class="name" title="[^"]* {url}">', page)


def test_rendering_is_deterministic(rendered: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    shutil.copytree(rendered / SUBMISSIONS_DIR, again / SUBMISSIONS_DIR)
    assert main(["leaderboard", "render", "--dir", str(again)]) == 0
    for name in ("README.md", "index.html"):
        assert (again / name).read_text() == (rendered / name).read_text()


def test_render_skips_bad_files_and_keeps_the_rest(
    board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    require("matplotlib")
    bad = tmp_path / "bad"
    shutil.copytree(board / SUBMISSIONS_DIR, bad / SUBMISSIONS_DIR)
    path = bad / SUBMISSIONS_DIR / "random-a.json"
    path.write_text(path.read_text().replace('"agent": "random"', '"agent": "moa"', 1))
    (bad / SUBMISSIONS_DIR / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    assert main(["leaderboard", "render", "--dir", str(bad)]) == 0
    err = capsys.readouterr().err
    assert "metadata.agent is 'moa'" in err and "file: JSON nested deeper than 32" in err
    assert f"skipped {path}" in err
    text = (bad / "README.md").read_text()
    assert "Random A" not in text and len(_rows(text)) == len(RANKED) - 1


def test_entries_are_grouped_ranked_first(board: Path) -> None:
    entries = entries_from([(p.stem, r) for p, r in load_submissions(board)])
    assert [e.ranked for e in entries] == [True] * len(RANKED) + [False]
    assert len({e.section for e in entries if e.ranked}) == 1
    ranked = [e.accuracy or 0.0 for e in entries if e.ranked]
    assert ranked == sorted(ranked, reverse=True)


def test_pareto_frontier() -> None:
    points = [(0.7, 0.03), (0.65, 0.005), (0.66, 0.006), (0.6, 0.01), (0.7, 0.04), (None, 0.0)]
    assert pareto_frontier(points) == [True, True, True, False, False, False]
    assert pareto_frontier([(0.5, 0.01), (0.5, 0.01)]) == [True, True]  # ties beat nobody


def test_html_renders_in_headless_chromium_and_its_script_runs(
    rendered: Path, tmp_path: Path
) -> None:
    dom = dump_dom(rendered / "index.html", tmp_path / "profile")
    assert 'data-board-ready="1"' in dom  # set by the inline script once it has run
    # the order is the board's ranking, from Python, marked on its column by name
    assert re.search(r'<table class="board"[^>]*data-sorted-by="accuracy"', dom)
    head = '<th data-column="accuracy" data-kind="num" scope="col" data-dir="desc">'
    assert head in dom
    rows = re.findall(r'<tr data-entry="([^"]+)">(.*?)</tr>', dom, re.S)
    page = (rendered / "index.html").read_text()
    assert [slug for slug, _ in rows] == re.findall(r'<tr data-entry="([^"]+)">', page)
    assert sorted(slug for slug, _ in rows) == sorted([*RANKED, *APART])
    assert "<img src=x" not in dom  # the hostile name stayed text
    for slug, body in rows:
        name = RANKED[slug][0] if slug in RANKED else APART[slug]
        assert name.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in body


def test_the_page_shows_the_order_python_gives_it(board: Path, tmp_path: Path) -> None:
    """Issue 43: the page's order is the one Python renders (no re-sort on load by a
    column index): rows given in another order stay in it."""
    entries = entries_from([(p.stem, r) for p, r in load_submissions(board)])
    ranked = [e for e in entries if e.ranked]
    assert [e.slug for e in ranked] == [e.slug for e in sorted(ranked, key=ranking_key)]
    worst_first = [*reversed(ranked), *(e for e in entries if not e.ranked)]
    assert [e.slug for e in worst_first] != [e.slug for e in entries]
    page = tmp_path / "index.html"
    page.write_text(render_html(worst_first, plot=False), encoding="utf-8")
    dom = dump_dom(page, tmp_path / "profile")
    assert re.findall(r'<tr data-entry="([^"]+)">', dom) == [e.slug for e in worst_first]


def test_validate_json(board: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = sorted(str(p) for p in (board / SUBMISSIONS_DIR).glob("*.json"))
    assert main(["leaderboard", "validate", "--json", "--no-replay", *files]) == 0
    found = json.loads(capsys.readouterr().out)
    assert [item["file"] for item in found] == files
    item = found[0]
    assert item["ok"] is True and item["errors"] == [] and isinstance(item["accuracy"], float)
    assert item["placement"]["ranked"] is False  # not re-played: unverified
    assert item["placement"]["trust"] == "unverified" and item["placement"]["ranking"]
    assert item["placement"]["section"].startswith("suite offline")


def test_an_empty_board_renders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require("matplotlib")
    assert main(["leaderboard", "render", "--dir", str(tmp_path)]) == 0
    said = capsys.readouterr()
    assert "rendering README.md, index.html and the plot" in said.err
    assert re.search(r"wrote \S+README.md \(\d+\.\d s\)", said.out), said.out
    assert "_No ranked entries yet._" in (tmp_path / "README.md").read_text()
    assert "No ranked entries yet." in (tmp_path / "index.html").read_text()
    assert (tmp_path / PLOT_NAME).stat().st_size > 0


def test_the_committed_board_replays_and_is_up_to_date() -> None:
    """What CI checks on a submission pull request: every committed file validates with
    every episode re-played, each baseline is ranked, and the committed README and page
    are what ``leaderboard render`` makes of them."""
    board = Path(__file__).resolve().parents[2] / "leaderboard"
    loaded = load_submissions(board)
    assert len(loaded) >= 6
    for path, report in loaded:
        assert report.ok, f"{path.name}: {report.errors}"
        assert report.replay is not None and report.replay.ok, path.name
        assert report.replay.episodes == len(report.submission.results.episodes)  # type: ignore[union-attr]
        if path.name.startswith("baseline-"):
            assert report.placement is not None and report.placement.ranked, path.name
    entries = entries_from([(p.stem, r) for p, r in loaded])
    assert (board / "README.md").read_text() == render_markdown(entries)
    assert (board / "index.html").read_text() == render_html(entries)
