"""The rendered leaderboard: README.md, a self-contained index.html (opened in headless
Chromium to run its sort script) and the accuracy-vs-cost plot, from real evaluations."""

from __future__ import annotations

import datetime
import re
import shutil
from pathlib import Path

import pytest
from chromium_support import dump_dom
from support import require

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.leaderboard import SUBMISSIONS_DIR, make_submission
from conductor_gym.bench.leaderboard_render import PLOT_NAME, entries_from
from conductor_gym.cli.main import main

ENTRIES = {"random-a": ("Random A", 0), "random-b": ("Random <B> | piped", 7)}


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A board folder with two real submissions (the random planner, two seeds)."""
    directory = tmp_path_factory.mktemp("board")
    for slug, (name, seed) in ENTRIES.items():
        results = evaluate("random", "offline", repeats=2, limit=5, seed=seed, progress=False)
        submission = make_submission(
            results,
            name=name,
            authors=["tests"],
            training_data="none",
            pool_setting="simulated",
            date=datetime.date(2026, 1, 1),
        )
        submission.dump(directory / SUBMISSIONS_DIR / f"{slug}.json")
    return directory


@pytest.fixture(scope="module")
def rendered(board: Path) -> Path:
    require("matplotlib")
    assert main(["leaderboard", "render", "--dir", str(board)]) == 0
    return board


def test_render_writes_the_three_files(rendered: Path) -> None:
    for name in ("README.md", "index.html", PLOT_NAME):
        assert (rendered / name).stat().st_size > 0, name
    assert (rendered / PLOT_NAME).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_readme_has_one_sorted_row_per_entry(rendered: Path) -> None:
    text = (rendered / "README.md").read_text()
    assert "## Suite `offline`, simulated pool" in text
    header = next(line for line in text.splitlines() if line.startswith("| # | Name"))
    for column in ("Accuracy (%)", "Reward", "Cost / sample", "Tokens / sample", "Steps / plan"):
        assert column in header
    rows = [line for line in text.splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(rows) == len(ENTRIES)
    assert any("Random <B> \\| piped" in row for row in rows)  # a pipe cannot break the table
    cells = [re.split(r"(?<!\\)\|", row) for row in rows]  # unescaped pipes only
    assert all(len(c) == len(header.split("|")) for c in cells)
    accuracies = [float(c[3].split("±")[0]) for c in cells]
    assert accuracies == sorted(accuracies, reverse=True)
    assert all(" ± " in c[3] and c[8].strip() == "`random`" for c in cells)


def test_html_is_self_contained(rendered: Path) -> None:
    page = (rendered / "index.html").read_text()
    assert "<style>" in page and "<script>" in page
    assert "&lt;B&gt;" in page and "<B>" not in page  # names are escaped
    external = re.findall(r"""(?:src|href)\s*=\s*["']?\s*(?:[a-z]+:)?//""", page, re.I)
    assert external == []
    assert not re.search(r"@import|url\(\s*['\"]?(?:https?:)?//", page, re.I)
    assert "http://" not in page and "https://" not in page


def test_rendering_is_deterministic(rendered: Path, tmp_path: Path) -> None:
    again = tmp_path / "again"
    shutil.copytree(rendered / SUBMISSIONS_DIR, again / SUBMISSIONS_DIR)
    assert main(["leaderboard", "render", "--dir", str(again)]) == 0
    for name in ("README.md", "index.html"):
        assert (again / name).read_text() == (rendered / name).read_text()


def test_render_refuses_a_board_with_a_rejected_submission(
    board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad"
    shutil.copytree(board / SUBMISSIONS_DIR, bad / SUBMISSIONS_DIR)
    path = bad / SUBMISSIONS_DIR / "random-a.json"
    path.write_text(path.read_text().replace('"agent": "random"', '"agent": "moa"', 1))
    assert main(["leaderboard", "render", "--dir", str(bad)]) == 1
    assert "metadata.agent is 'moa'" in capsys.readouterr().err
    assert not (bad / "README.md").exists()


def test_entries_are_grouped_by_suite_and_pool_setting(board: Path) -> None:
    from conductor_gym.bench.leaderboard import load_submissions

    loaded = [(p.stem, r.submission) for p, r in load_submissions(board) if r.submission]
    entries = entries_from(loaded)
    assert {e.group for e in entries} == {("offline", "simulated")}
    assert [e.accuracy for e in entries] == sorted((e.accuracy for e in entries), reverse=True)


def test_html_renders_in_headless_chromium_and_its_script_runs(
    rendered: Path, tmp_path: Path
) -> None:
    dom = dump_dom(rendered / "index.html", tmp_path / "profile")
    assert 'data-board-ready="1"' in dom  # set by the inline script once it has run
    assert re.search(r'<table class="board"[^>]*data-sorted-by="2"', dom)  # sorted on load
    rows = re.findall(r'<tr data-entry="([^"]+)">(.*?)</tr>', dom, re.S)
    assert sorted(slug for slug, _ in rows) == sorted(ENTRIES)
    for slug, body in rows:
        assert ENTRIES[slug][0].replace("<", "&lt;").replace(">", "&gt;") in body


def test_an_empty_board_renders(tmp_path: Path) -> None:
    require("matplotlib")
    assert main(["leaderboard", "render", "--dir", str(tmp_path)]) == 0
    assert "_No submissions yet._" in (tmp_path / "README.md").read_text()
    assert "No submissions yet." in (tmp_path / "index.html").read_text()
    assert (tmp_path / PLOT_NAME).stat().st_size > 0


def test_the_committed_board_validates_and_is_up_to_date() -> None:
    """What CI checks on a submission pull request: every committed file validates, and
    the committed README and page are what ``leaderboard render`` makes of them."""
    from conductor_gym.bench.leaderboard import load_submissions
    from conductor_gym.bench.leaderboard_render import entries_from, render_html, render_markdown

    board = Path(__file__).resolve().parents[2] / "leaderboard"
    loaded = load_submissions(board)
    assert len(loaded) >= 6
    for path, report in loaded:
        assert report.ok, f"{path.name}: {report.errors}"
    entries = entries_from([(p.stem, r.submission) for p, r in loaded if r.submission])
    assert (board / "README.md").read_text() == render_markdown(entries)
    assert (board / "index.html").read_text() == render_html(entries)
