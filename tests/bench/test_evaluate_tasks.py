"""``evaluate`` on some of a suite's tasks (``--task-range``, ``--tasks-from``,
``--task-split``), the journal header's name, and loaders that skip files that are no
results file (issue 41, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import (
    journal_header_path,
    journal_path,
    load_results,
    load_runs,
    not_results,
)
from conductor_gym.bench.suites import TaskSelection, episode_plan, get_suite, task_split
from conductor_gym.cli.main import main

RUN = {"repeats": 2, "seed": 5, "progress": False}


def test_a_range_plays_those_tasks_with_the_seeds_of_a_whole_run(tmp_path: Path) -> None:
    whole = {e.key: e.seed for e in episode_plan(get_suite("offline", limit=12), 2, 5)}
    out = tmp_path / "r.json"
    part = evaluate("single:0", "offline", limit=12, out=out,
                    task_selection=TaskSelection(start=3, stop=7), **RUN)  # fmt: skip
    assert sorted({e.task_index for e in part.episodes}) == [3, 4, 5, 6]
    assert all(whole[e.key] == e.seed for e in part.episodes)
    assert part.suite.tasks == {"range": [3, 7]}
    assert load_results(out).suite.tasks == {"range": [3, 7]}


def test_a_split_and_a_file_select_tasks_and_the_cli_takes_them(tmp_path: Path) -> None:
    suite = get_suite("offline", limit=40)
    source = suite.sources["offline"]
    held = [i for i in range(40) if task_split(source[i].id) == "heldout"]
    assert 0 < len(held) < 40
    plan = episode_plan(suite, 1, 0, TaskSelection(split="heldout"))
    assert [s.task_index for s in plan] == held
    listing = tmp_path / "tasks.txt"
    listing.write_text(f"# two tasks\n{source[5].id}\n9  # by index\n")
    chosen = TaskSelection.build(tasks_from=listing)
    assert [s.task_index for s in episode_plan(suite, 1, 0, chosen)] == [5, 9]
    out = tmp_path / "cli.json"
    code = main(["evaluate", "--agent", "single:0", "--suite", "offline", "--limit", "40",
                 "--task-split", "fit", "--task-range", "10:20", "--repeats", "1",
                 "--no-progress", "--out", str(out)])  # fmt: skip
    assert code == 0
    done = json.loads(out.read_text())
    fit = [i for i in range(10, 20) if i not in held]
    assert [e["task_index"] for e in done["episodes"]] == fit
    assert done["suite"]["tasks"] == {"range": [10, 20], "split": "fit"}


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--task-range", "7"], "--task-range: expected A:B"),
        (["--task-range", "5:5"], "task range 5:5 is empty"),
        (["--tasks-from", "missing.txt"], "--tasks-from: cannot read"),
        (["--task-range", "30:40"], "keeps no task"),
    ],
)
def test_bad_selections_are_one_line_errors(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["evaluate", "--agent", "single:0", "--limit", "20", "--repeats", "1"]
    assert main([*args, "--no-progress", *flags]) == 2
    assert message in capsys.readouterr().err


def test_the_journal_header_matches_no_json_glob_and_old_headers_still_read(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run.json"
    evaluate("single:0", "offline", limit=3, out=out, **RUN)
    header = journal_header_path(journal_path(out))
    assert header.name == "run.json.episodes.jsonl.header" and header.is_file()
    assert sorted(p.name for p in tmp_path.glob("*.json")) == ["run.json"]
    old = tmp_path / "run.json.episodes.header.json"  # an earlier version's name
    header.rename(old)
    assert len(load_results(journal_path(out)).episodes) == 6
    evaluate("single:0", "offline", limit=3, out=out, **RUN)  # resumes, rewrites the header
    assert header.is_file() and not old.exists()


def test_loaders_skip_files_that_are_no_results_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run.json"
    evaluate("single:0", "offline", limit=3, out=out, **RUN)
    old = tmp_path / "old.json.episodes.header.json"
    old.write_text(json.dumps({"header": {"seed": 0}}))
    other = tmp_path / "notes.json"
    other.write_text(json.dumps({"comment": "mine"}))
    assert not_results(out) is None and not_results(journal_path(out)) is None
    runs, skipped = load_runs([out, old, other])
    assert [p for p, _ in runs] == [out]
    assert len(skipped) == 2 and "journal's header" in skipped[0] and "notes.json" in skipped[1]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"schema": "conductor-gym/results/v4", "episodes": []}))
    with pytest.raises(ValueError):
        load_runs([broken])
    pool = tmp_path / "fitted.toml"
    assert main(["sim", "fit", str(out), str(old), "--out", str(pool)]) == 0
    assert "old.json.episodes.header.json: skipped" in capsys.readouterr().err
    assert main(["sim", "fit", str(out), "--cache", str(tmp_path / "missing.sqlite"),
                 "--out", str(pool)]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "--cache" in err and "missing.sqlite: no such file" in err
    assert main(["sim", "fidelity", str(pool), str(other)]) == 2
    assert "no results file among the 1 given" in capsys.readouterr().err
