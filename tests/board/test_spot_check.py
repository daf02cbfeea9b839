"""The spot-check command's refusals and its answer comparison (no endpoint needed; the
agreement itself is tested against real llama.cpp workers in test_leaderboard_cache)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from board_support import wrap

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.board.spotcheck import final_answer
from conductor_gym.cli.main import main


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("so 6 * 7 = 42, and the answer is \\boxed{42}.", "42"),
        ("\\boxed{1} first, then \\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("Final answer: B.", "B"),
        ("it is 17 or maybe 19", "19"),
        ("no idea", None),
    ],
)
def test_final_answer(text: str, answer: str | None) -> None:
    assert final_answer(text) == answer


def test_spot_check_refuses_what_it_cannot_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = evaluate("single:0", "offline", repeats=1, limit=2, progress=False)
    entry = wrap(results).dump(tmp_path / "entry.json")
    argv = ["leaderboard", "spot-check", "--pool", "sim-paper"]
    assert main([*argv, str(entry)]) == 2
    assert capsys.readouterr().err == (
        f"conductor-gym leaderboard spot-check: {entry} ships no response cache: pass "
        "--cache FILE\n"
    )
    bare = tmp_path / "results.json"
    bare.write_text(json.dumps(results.model_dump(mode="json", by_alias=True)))
    assert main([*argv, str(bare)]) == 2
    assert f"spot-check: {bare}: not a valid submission: " in capsys.readouterr().err
    assert main([*argv, "--cache", str(tmp_path / "none.sqlite"), str(entry)]) == 2
    assert "response cache " in capsys.readouterr().err
