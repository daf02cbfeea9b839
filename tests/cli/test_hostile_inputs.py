"""The commands that read strangers' files give one line per bad file, never a traceback,
and ``leaderboard validate`` goes on to the files after a bad one (security issue,
item 10: a 10,000-digit integer or ``repeats = 1e12`` stopped ``validate`` with a
traceback and skipped the files after it; ``view`` and ``rescore`` crashed on deep JSON).
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.board import submissions
from conductor_gym.board.submissions import make_submission
from conductor_gym.cli.main import main

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real submission (best-single, two tasks, one repeat), accepted as it is."""
    run = evaluate("best-single", "offline", repeats=1, limit=2, progress=False)
    entry = make_submission(
        run,
        name="Best single",
        authors=["tests"],
        training_data="none",
        pool_setting="simulated",
        date=datetime.date(2026, 1, 1),
    )
    return entry.dump(tmp_path_factory.mktemp("board") / "good.json")


def test_validate_reports_each_bad_file_and_goes_on(
    good: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = good.read_text()
    files = {
        "digits": text.replace('"repeats": 1', '"repeats": ' + "9" * 10_000, 1),
        "float": text.replace('"repeats": 1', '"repeats": 1e12', 1),
        "deep": DEEP,
        "crash": text,
    }
    for name, content in files.items():
        (tmp_path / f"{name}.json").write_text(content)
    real = submissions.validate_file

    def validate_file(path: str | Path, **kwargs: Any) -> submissions.Report:
        # Fault injection: an error nobody foresaw, raised inside one file's validation.
        if Path(path).name == "crash.json":
            raise RuntimeError("injected fault")
        return real(path, **kwargs)

    monkeypatch.setattr(submissions, "validate_file", validate_file)
    paths = [str(tmp_path / f"{name}.json") for name in files]
    assert main(["leaderboard", "validate", *paths, str(good)]) == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    out = captured.out.splitlines()
    heads = [line for line in out if not line.startswith("  ")]
    assert heads[:-1] == [f"REJECTED  {path}: 1 problem" for path in paths]
    assert heads[-1].startswith(f"ok        {good}: 'Best single'")  # validated all the same
    errors = [line.strip() for line in out if line.startswith("  error")]
    assert errors == [
        "error    file: an integer of 10,000 digits: at most 20 are read",
        "error    schema: results.repeats: Input should be a valid integer",
        "error    file: JSON nested deeper than 32 levels",
        "error    file: validation failed: RuntimeError: injected fault",
    ]


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (DEEP, "JSON nested too deep to read"),
        ('{"a": ' * 100_000 + "1" + "}" * 100_000, "JSON nested too deep to read"),
        ('{"repeats": ' + "9" * 10_000 + "}", "an integer of more than 4300 digits: not read"),
    ],
    ids=["lists", "objects", "digits"],
)
@pytest.mark.parametrize("command", ["view", "rescore"])
def test_view_and_rescore_refuse_a_hostile_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, content: str, reason: str
) -> None:
    path = tmp_path / "run.json"
    path.write_text(content)
    assert main([command, str(path), "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"conductor-gym {command}: {path}: {reason}\n"
    assert not (tmp_path / "out").exists()


def test_submit_refuses_a_deep_results_file_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "run.json"
    path.write_text(DEEP)
    argv = ["--name", "x", "--author", "a", "--training-data", "none"]
    board = ["--pool-setting", "simulated", "--dir", str(tmp_path / "board")]
    assert main(["leaderboard", "submit", str(path), *argv, *board]) == 2
    assert capsys.readouterr().err == (
        f"conductor-gym leaderboard submit: {path}: JSON nested too deep to read\n"
    )
    assert not (tmp_path / "board").exists()
