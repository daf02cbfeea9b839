"""``Outcome`` end to end: the env's info, a results file and its journal hold the enum's
values as plain JSON strings, and read back into the enum; an unknown value is refused
naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from conductor_gym import ConductorEnv, Outcome
from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import (
    Results,
    ResumeMismatchError,
    journal_path,
    load_results,
    read_journal,
)


def test_the_env_reports_an_outcome_member() -> None:
    env = ConductorEnv(tasks="offline", pool="sim-paper")
    try:
        _, info = env.reset(seed=3)
        assert "outcome" not in info or info["outcome"] is None
        *_, info = env.step("no plan here")
        assert type(info["outcome"]) is Outcome and info["outcome"] is Outcome.INVALID
        # it reads as the string it replaced, in messages and reports as in JSON
        assert info["outcome"] == "invalid" and f"{info['outcome']} {info['outcome']!r}" == (
            "invalid 'invalid'"
        )
    finally:
        env.close()


def test_results_and_journal_round_trip_outcomes(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    played = evaluate("random", "offline", repeats=1, limit=30, out=out, progress=False)
    outcomes = [e.outcome for e in played.episodes]
    assert all(type(o) is Outcome for o in outcomes)
    assert {Outcome.CORRECT, Outcome.WRONG} <= set(outcomes)

    # the file holds the values as plain strings, as it always did
    written = json.loads(out.read_text(encoding="utf-8"))
    assert [e["outcome"] for e in written["episodes"]] == [o.value for o in outcomes]
    assert f'"outcome": "{outcomes[0].value}"' in out.read_text(encoding="utf-8")

    loaded = Results.load(out)
    assert [e.outcome for e in loaded.episodes] == outcomes
    assert all(type(e.outcome) is Outcome for e in loaded.episodes)
    assert loaded.to_json() + "\n" == out.read_text(encoding="utf-8")  # byte-identical

    journal = journal_path(out)
    _, records = read_journal(journal)
    assert sorted((r.key, r.outcome) for r in records) == sorted(
        (e.key, e.outcome) for e in played.episodes
    )
    assert all(type(r.outcome) is Outcome for r in load_results(journal).episodes)


def test_an_unknown_outcome_in_a_results_file_names_the_field(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    evaluate("random", "offline", repeats=1, limit=3, out=out, progress=False)
    data = json.loads(out.read_text(encoding="utf-8"))
    data["episodes"][1]["outcome"] = "partly"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        Results.load(bad)
    (error,) = caught.value.errors()
    assert error["loc"] == ("episodes", 1, "outcome") and error["input"] == "partly"
    assert "episodes.1.outcome" in str(caught.value)
    assert "'correct', 'wrong', 'invalid' or 'error'" in str(caught.value)


def test_an_unknown_outcome_in_a_journal_names_the_field(tmp_path: Path) -> None:
    out = tmp_path / "run.json"
    evaluate("random", "offline", repeats=1, limit=3, out=out, progress=False)
    journal = journal_path(out)
    lines = journal.read_text(encoding="utf-8").split("\n")
    record = json.loads(lines[0])
    record["outcome"] = "Correct"  # values are case-sensitive, as files write them
    lines[0] = json.dumps(record)
    journal.write_text("\n".join(lines), encoding="utf-8")
    with pytest.raises(ResumeMismatchError, match=r":1 is not an episode record \(outcome: "):
        read_journal(journal)
