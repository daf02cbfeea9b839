"""``conductor-gym evaluate`` and ``conductor-gym suites list``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import write_tasks

from conductor_gym.bench.results import Results
from conductor_gym.cli.main import main


def test_evaluate_prints_the_table_and_writes_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "results.json"
    argv = ["evaluate", "--agent", "random", "--suite", "offline", "--repeats", "2"]
    argv += ["--limit", "20", "--seed", "1", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("benchmark"))
    for column in ("accuracy %", "reward", "parse-fail", "infra", "steps/plan", "calls"):
        assert column in lines[header]
    assert "tokens/sample" in lines[header] and "$/sample" in lines[header]
    overall = next(i for i, line in enumerate(lines) if line.startswith("overall "))
    assert lines[header + 2].startswith("offline ")
    # the mixed source is broken down by task family between it and the overall row
    assert [line.split()[0] for line in lines[header + 3 : overall]] == [
        "arithmetic", "countdown", "multiple_choice", "program_trace",
    ]  # fmt: skip
    assert " ± " in lines[overall] and "wall time" in text and str(out) in text
    results = Results.load(out)
    assert results.metrics["overall"].n == 40 and results.seed == 1
    acc = f"{100 * results.metrics['overall'].accuracy:.2f}"
    assert acc in lines[overall]


def test_evaluate_env_arguments_and_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    base = ["evaluate", "--suite", "offline", "--limit", "5", "--repeats", "1", "--no-progress"]
    assert main([*base, "--out", str(out), "--env", "max_steps=3", "--env", "k=4"]) == 0
    results = Results.load(out)
    assert results.env_kwargs == {"max_steps": 3, "k": 4}
    assert all(e.steps <= 3 for e in results.episodes)
    capsys.readouterr()
    assert main([*base, "--out", str(out), "--seed", "9"]) == 2
    assert "new --out" in capsys.readouterr().err
    assert main([*base, "--suite", "nope"]) == 2
    assert "unknown suite 'nope'" in capsys.readouterr().err
    assert main([*base, "--agent", "nope"]) == 2
    with pytest.raises(SystemExit) as exc:
        main([*base, "--env", "max steps"])
    assert exc.value.code == 2


def test_jsonl_suite_from_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_tasks(tmp_path / "sums.jsonl", n=5)
    out = tmp_path / "r.json"
    argv = ["evaluate", "--suite", f"jsonl:{path}", "--repeats", "3", "--out", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    assert "\nsums " in capsys.readouterr().out
    data = json.loads(out.read_text())
    assert data["suite"]["name"] == f"jsonl:{path}"
    assert data["suite"]["sources"][0]["name"] == "sums"
    assert {e["benchmark"] for e in data["episodes"]} == {"sums"}
    assert {e["task_id"] for e in data["episodes"]} == {f"sums/{i}" for i in range(5)}
    assert set(data["metrics"]) == {"overall", "sums"}


def test_suites_list(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["suites", "list"]) == 0
    text = capsys.readouterr().out
    for name in ("offline", "offline-ood", "paper-train4", "paper-ood3", "jsonl:<path>"):
        assert f"\n{name} " in text
    assert "math500, mmlu, rlpr, livecodebench" in text


AGENT_FILE = '''
from pathlib import Path

from conductor_gym.agents import RandomPlanner


class Interruptible(RandomPlanner):
    """Fault injection: while STOP exists beside this file, the 5th act_batch call raises
    KeyboardInterrupt (a user's Ctrl-C in the middle of a run)."""

    calls = 0

    async def act_batch(self, observations, infos):
        Interruptible.calls += 1
        if Interruptible.calls == 5 and (Path(__file__).parent / "STOP").exists():
            raise KeyboardInterrupt
        return await super().act_batch(observations, infos)
'''


def test_interrupted_cli_run_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent = tmp_path / "interruptible.py"
    agent.write_text(AGENT_FILE)
    (tmp_path / "STOP").touch()
    out = tmp_path / "r.json"
    argv = ["evaluate", "--agent", f"{agent}:Interruptible", "--limit", "6", "--repeats", "2"]
    argv += ["--out", str(out), "--no-progress"]
    assert main(argv) == 130
    assert "rerun the same command to resume" in capsys.readouterr().err
    journaled = len((tmp_path / "r.json.episodes.jsonl").read_text().splitlines())
    assert 1 <= journaled <= 4  # the episodes that finished before the interrupt
    (tmp_path / "STOP").unlink()
    assert main(argv) == 0
    resumed = Results.load(out)
    argv[argv.index("--out") + 1] = str(tmp_path / "whole.json")
    assert main(argv) == 0
    whole = Results.load(tmp_path / "whole.json")
    assert resumed.episodes == whole.episodes and resumed.metrics == whole.metrics
