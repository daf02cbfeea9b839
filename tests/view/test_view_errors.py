"""``conductor-gym view`` refuses what would make a useless page, in one line naming what to
fix, with exit status 2 and no page written (so a failed command never overwrites a good
page): a pool or response cache that cannot replay the run, and an input without
episodes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from view_support import scripted_run

from conductor_gym.bench.results import Results
from conductor_gym.cli.main import main


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Results]:
    out = tmp_path_factory.mktemp("view-errors") / "scripted.json"
    return out, scripted_run(out, limit=4, repeats=1)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        (["--pool", "nope"], "unknown preset 'nope'; choose one of"),
        (["--replay", "missing.sqlite"], "no recorded response cache at 'missing.sqlite'"),
        (["--no-replay", "--pool", "sim-paper"], "it has no use with the replay off"),
    ],
)
def test_a_replay_that_cannot_happen_fails(
    run: tuple[Path, Results],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    says: str,
) -> None:
    path, _ = run
    page = tmp_path / "page.html"
    page.write_text("the good page")
    assert main(["view", str(path), "--out", str(page), *options]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1
    assert captured.err.startswith("conductor-gym view: ") and says in captured.err
    assert page.read_text() == "the good page"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[]", "no episodes to show"),
        ("", "no episodes to show"),
        ("{}", "item 0 is no step info (it has no task_id)"),
        ('[{"task_id": "t"}, {"outcome": "wrong"}]', "item 1 is no step info"),
    ],
)
def test_an_input_without_episodes_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, says: str
) -> None:
    source = tmp_path / "input.json"
    source.write_text(text)
    assert main(["view", str(source)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"conductor-gym view: {source}: {says}")
    assert err.count("\n") == 1 and not (tmp_path / "input.html").exists()


def test_an_empty_run_fails(
    run: tuple[Path, Results], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = run
    empty = json.loads(path.read_text())
    empty["episodes"] = []
    (tmp_path / "empty.json").write_text(json.dumps(empty))
    assert main(["view", str(tmp_path / "empty.json")]) == 2
    assert "empty.json: no episodes to show" in capsys.readouterr().err
    assert not (tmp_path / "empty.html").exists()
