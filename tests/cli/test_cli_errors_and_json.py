"""The command line's errors are one line, its lists are JSON on request, and ``demo``
takes every env setting (issue 26 item 7)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conductor_gym.bench.results import journal_path
from conductor_gym.bench.suites import list_suites
from conductor_gym.cli.main import error_line, main
from conductor_gym.cli.tasks import list_sources
from conductor_gym.errors import ConfigurationError, PolicyError


def test_demo_with_an_unknown_task_source_is_one_line_and_exit_2() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "conductor_gym.cli.main", "demo", "--tasks", "nope"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr  # no traceback
    assert lines[0].startswith("conductor-gym demo: --tasks: unknown task source 'nope'; ")
    assert "'offline'" in lines[0] and "'math500'" in lines[0]  # the valid choices
    assert lines[0].endswith("(see `conductor-gym tasks list`)")


def test_demo_with_an_unknown_pool_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["demo", "--pool", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("conductor-gym demo: --pool: unknown preset")
    assert "'sim-paper'" in err and err.rstrip().endswith("(see `conductor-gym pools list`)")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--max-steps", "0"], "conductor-gym demo: --max-steps: must be an int >= 1, got 0"),
        (["--task-option", "x"], "conductor-gym demo: --task-option takes KEY=VALUE, got 'x'"),
        (["--k", "9"], "conductor-gym demo: pool: k must be an int in 1..7 (the pool size)"),
        (["--reward", "nope"], "conductor-gym demo: --reward: unknown reward scheme 'nope'"),
    ],
)
def test_demo_settings_errors_are_one_line(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["demo", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(expected), err


def test_error_line_names_the_flag_of_a_nested_field() -> None:
    exc = ConfigurationError("not a directory\nCheck the path.", field="tasks.data_dir")
    assert error_line("evaluate", exc) == (
        "conductor-gym evaluate: --tasks (tasks.data_dir): not a directory; Check the path. "
        "(see `conductor-gym tasks list`)"
    )
    assert error_line("serve", PolicyError("no_lists", "x")) == "conductor-gym serve: no_lists: x"


def test_demo_takes_the_env_settings_as_flags(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["demo", "--episodes", "3", "--k", "2", "--max-steps", "2", "--tasks",
            "offline/arithmetic"]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("ConductorEnv-v0: tasks='offline/arithmetic' pool='sim-paper'")
    episodes = [line for line in out.splitlines() if line.startswith("episode ")]
    assert len(episodes) == 3 and all("arithmetic-" in line for line in episodes)
    steps = [int(m) for m in re.findall(r"steps=(\d)", out)]
    assert len(steps) == 3 and all(s <= 2 for s in steps)
    for line in episodes:  # k=2: at most two distinct workers in an episode
        workers = line.rsplit("[", 1)[1].rstrip("]").split(", ")
        assert len(set(workers)) <= 2


def test_tasks_and_suites_lists_print_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tasks", "list", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == list_sources()
    assert main(["suites", "list", "--json"]) == 0
    suites = json.loads(capsys.readouterr().out)
    assert suites == list_suites() and suites[0]["name"] == "offline"
    assert main(["suites", "list"]) == 0
    assert capsys.readouterr().out.splitlines()[0].split() == [
        "name", "size", "sources", "description"
    ]  # fmt: skip


def test_evaluate_says_what_resuming_keeps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    argv = ["evaluate", "--suite", "offline", "--repeats", "1", "--limit", "3",
            "--no-progress", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert "resuming" not in capsys.readouterr().err
    assert main(argv) == 0
    assert capsys.readouterr().err.splitlines() == [
        f"conductor-gym evaluate: resuming {journal_path(out)}: 3 finished episode(s) kept, "
        "0 infrastructure failure(s) played again (--no-resume starts afresh)"
    ]
    assert main([*argv, "--seed", "1"]) == 2
    err = capsys.readouterr().err
    assert "holds 3 episode line(s) of a different run (it differs in seed)" in err
    assert "pass --no-resume" in err
    assert main([*argv, "--seed", "1", "--no-resume"]) == 0


def test_view_says_what_it_reads_before_the_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    results = tmp_path / "r.json"
    argv = ["evaluate", "--suite", "offline", "--repeats", "1", "--limit", "2",
            "--no-progress", "--out", str(results)]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["view", str(results)]) == 0
    assert capsys.readouterr().err == ""  # not a terminal: the outcome line only
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)  # stderr as a terminal's
    assert main(["view", str(results)]) == 0
    captured = capsys.readouterr()
    assert captured.err == (
        f"conductor-gym view: reading {results}, re-playing the steps where it can ...\n"
    )
    assert re.fullmatch(rf"wrote {re.escape(str(tmp_path / 'r.html'))}: 2 episode\(s\).* in "
                        r"\d+\.\d s\n", captured.out)  # fmt: skip
    assert main(["view", str(results), "--no-replay"]) == 0
    assert capsys.readouterr().err == f"conductor-gym view: reading {results} ...\n"


def test_pools_check_and_evaluate_print_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pools", "check", "sim-paper", "--skip-ping", "--json"]) == 0
    captured = capsys.readouterr()
    checks = json.loads(captured.out)  # stdout holds the JSON only
    assert len(checks) == 7 and {c["status"] for c in checks} == {"not-pinged"}
    assert captured.err.startswith("pool 'sim-paper': 7 workers, no ping\ncredentials")
    argv = ["evaluate", "--suite", "offline", "--repeats", "2", "--limit", "4", "--no-progress"]
    assert main([*argv, "--json"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert summary["schema"] == "conductor-gym/results/v4" and summary["repeats"] == 2
    assert "episodes" not in summary and summary["metrics"]["overall"]["n"] == 8
    assert sum(m["n"] for m in summary["domain_metrics"].values()) == 8
    assert set(summary["latency_s"]) == {"in_order", "parallel"}
    assert captured.err.startswith("conductor-gym evaluate: agent 'random'")
    assert main([*argv, "--json", "--cost-lambda", "0,50"]) == 0
    sweep = json.loads(capsys.readouterr().out)
    assert [p["cost_lambda"] for p in sweep["points"]] == [0.0, 50.0]
    assert sweep["front"] and set(sweep["front"][0]) == set(sweep["points"][0])


def test_a_reader_that_stops_reading_gets_no_traceback() -> None:
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first line, as `| head -0` leaves it
    try:
        done = subprocess.run(
            [sys.executable, "-m", "conductor_gym.cli.main", "demo", "--episodes", "2"],
            stdout=write, stderr=subprocess.PIPE, text=True, timeout=120,
        )  # fmt: skip
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")
