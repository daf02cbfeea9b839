"""Re-scoring stored runs: grader changes flip exactly the episodes they should, the new
file validates on the leaderboard as a result of its own and records its graders, and a
replay from the response cache reports its misses instead of calling anyone.

The stored runs are real evaluations on the offline suite (simulated pool). The graders
changed to are registered here, as a researcher would register a revised grader:

* ``numeric-within-1``: a numeric answer within 1 of the reference counts (looser: how
  many program-trace answers are off by one?);
* ``boxed-exact``: the boxed text must be the reference, character for character
  (stricter: a countdown expression no longer counts for its target);
* ``grader-that-fails``: raises on every answer.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from view_support import as_real_pool, scripted_run

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.replay import ReplayError
from conductor_gym.bench.rescore import (
    default_output,
    grader_version,
    rescore,
    write_rescored,
)
from conductor_gym.bench.results import EpisodeRecord, Results, aggregate, journal_path
from conductor_gym.board.submissions import make_submission, validate_submission
from conductor_gym.cli.main import main
from conductor_gym.graders import Grade, register_grader
from conductor_gym.graders.extract import last_boxed
from conductor_gym.graders.numeric import extract_number, parse_number
from conductor_gym.tasks import make_task_source
from conductor_gym.view.page import build_view


@register_grader("numeric-within-1")
def numeric_within_1(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    found = extract_number(response)
    if found is None or found.value is None:
        return Grade(False, None, "no number")
    close = abs(found.value - parse_number(reference)) <= 1
    return Grade(close, found.text, f"{found.text} {'is' if close else 'is not'} within 1")


@register_grader("boxed-exact")
def boxed_exact(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    boxed = last_boxed(response)
    same = boxed is not None and boxed.strip() == reference
    return Grade(same, boxed, "boxed text is the reference" if same else "not the reference")


@register_grader("grader-that-fails")
def grader_that_fails(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    raise RuntimeError("the grader's model is down")


TASKS = make_task_source("offline")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Results]:
    """200 episodes of the random planner (valid plans, many wrong answers)."""
    out = tmp_path_factory.mktemp("rescore") / "random.json"
    return out, evaluate("random", "offline", repeats=2, limit=100, seed=1, out=out, progress=False)


def _validates(results: Results) -> None:
    submission = make_submission(
        results,
        name="rescored",
        authors=["tests"],
        training_data="none",
        pool_setting="simulated",
        date=datetime.date(2026, 1, 1),
    )
    report = validate_submission(json.loads(submission.model_dump_json()))
    assert report.ok, report.errors


def _unchanged_but(old: Results, new: Results, keys: set[tuple[str, int, int]]) -> None:
    """Every episode outside ``keys`` is as it was (but for the new grader's wording)."""
    wording = {"final_answer", "grade_reason"}
    for before, after in zip(old.episodes, new.episodes, strict=True):
        if before.key not in keys:
            assert after.model_dump(exclude=wording) == before.model_dump(exclude=wording)


def test_the_current_graders_change_nothing(run: tuple[Path, Results]) -> None:
    path, results = run
    rescored = rescore(path)
    assert rescored.changes == [] and rescored.misses == []
    assert rescored.results.episodes == results.episodes
    assert rescored.results.metrics == results.metrics
    (note,) = rescored.results.rescored or []
    assert (note.mode, note.changed, note.misses, note.source) == ("grade", 0, 0, path.name)
    assert note.source_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert {task: (g.name, g.version) for task, g in note.graders.items()} == {
        name: (name, grader_version(name)) for name in ("choice", "countdown", "numeric")
    }
    _validates(rescored.results)
    from_journal = rescore(journal_path(path))
    assert from_journal.results.episodes == results.episodes


def test_a_looser_grader_flips_exactly_the_answers_within_one(
    run: tuple[Path, Results],
) -> None:
    path, results = run

    def within_one(e: EpisodeRecord) -> bool:
        task = TASKS[e.task_index]
        assert e.final_answer is not None
        return abs(parse_number(e.final_answer) - parse_number(task.reference)) <= 1

    numeric_wrong = [
        e
        for e in results.episodes
        if e.outcome == "wrong" and TASKS[e.task_index].grader == "numeric"
    ]
    expected = {e.key for e in numeric_wrong if within_one(e)}
    assert 0 < len(expected) < len(numeric_wrong)  # some slips are off by one, not all

    rescored = rescore(path, graders={"numeric": "numeric-within-1"})
    assert {c.key for c in rescored.changes} == expected
    old = {e.key: e for e in results.episodes}
    for change in rescored.changes:
        assert (change.old_outcome, change.new_outcome) == ("wrong", "correct")
        assert (change.old_reward, change.new_reward) == (0.5, 1.0)
        assert change.old_reason == old[change.key].grade_reason
        assert change.new_reason is not None and change.new_reason.endswith("is within 1")
        assert change.why == ("outcome", "reward")
    _unchanged_but(results, rescored.results, expected)
    new, before = rescored.results.metrics["overall"], results.metrics["overall"]
    scored = before.n - before.infra_failures
    assert round((new.accuracy - before.accuracy) * scored) == len(expected)
    assert round((new.mean_reward - before.mean_reward) * scored * 2) == len(expected)
    assert rescored.results.metrics == aggregate(rescored.results.episodes, results.repeats)
    graders = (rescored.results.rescored or [])[-1].graders
    assert {task: g.name for task, g in graders.items()} == {
        "choice": "choice",
        "countdown": "countdown",
        "numeric": "numeric-within-1",
    }
    _validates(rescored.results)

    # Re-played instead, the episodes run as recorded and the new grader judges the end.
    replayed = rescore(path, graders={"numeric": "numeric-within-1"}, replay=True)
    assert [c.key for c in replayed.changes] == [c.key for c in rescored.changes]
    assert replayed.results.episodes == rescored.results.episodes

    # A re-play of the new file grades as it records (the viewer's re-play does).
    out = write_rescored(rescored, path.with_name("within-1.json"))
    views = build_view(out)["episodes"]
    assert all(view["notes"] == [] for view in views)
    assert [view["grade"]["reason"] if view["grade"] else None for view in views] == [
        e.grade_reason for e in rescored.results.episodes
    ]


def test_a_stricter_grader_for_every_task_flips_both_ways(run: tuple[Path, Results]) -> None:
    path, results = run

    def exact(e: EpisodeRecord) -> bool:
        assert e.final_response is not None
        boxed = last_boxed(e.final_response)
        return boxed is not None and boxed.strip() == TASKS[e.task_index].reference

    graded = [e for e in results.episodes if e.outcome in ("correct", "wrong")]
    expected = {e.key: exact(e) for e in graded if exact(e) != e.correct}
    flipped_down = [k for k, now in expected.items() if not now]
    # A correct countdown expression is not its target's digits: those must flip down.
    assert any(TASKS[k[1]].grader == "countdown" for k in flipped_down)

    rescored = rescore(path, graders="boxed-exact")
    assert {c.key: c.new_outcome == "correct" for c in rescored.changes} == expected
    _unchanged_but(results, rescored.results, set(expected))
    graders = (rescored.results.rescored or [])[-1].graders
    assert {g.name for g in graders.values()} == {"boxed-exact"}
    _validates(rescored.results)


def test_a_grader_that_fails_makes_infrastructure_failures(tmp_path: Path) -> None:
    path = tmp_path / "scripted.json"
    results = scripted_run(path)  # valid and invalid plans
    rescored = rescore(path, graders="grader-that-fails")
    for before, after in zip(results.episodes, rescored.results.episodes, strict=True):
        if before.outcome == "invalid":
            assert after == before  # nothing was graded: nothing changes
        else:
            assert after.outcome == "error" and after.reward == 0.0
            assert after.error is not None and after.error["kind"] == "grader"
            assert "the grader's model is down" in after.error["message"]
    overall = rescored.results.metrics["overall"]
    assert overall.infra_failures == sum(e.outcome != "invalid" for e in results.episodes)
    _validates(rescored.results)


def test_what_cannot_be_rescored_is_refused(run: tuple[Path, Results], tmp_path: Path) -> None:
    path, results = run
    blended = results.model_copy(update={"env_kwargs": {"initial_round_weight": 0.25}})
    with pytest.raises(ValueError, match="initial_round_weight"):
        rescore(blended)
    unrecorded = {"final_response": None, "final_answer": None, "grade_reason": None}
    older = results.model_copy(
        update={"episodes": [e.model_copy(update=unrecorded) for e in results.episodes]}
    )
    with pytest.raises(ValueError, match="stores no final answer"):
        rescore(older)
    replayed = rescore(older, replay=True)  # free on the simulated pool
    assert replayed.changes == [] and replayed.results.episodes == results.episodes
    with pytest.raises(ValueError, match="need replay=True"):
        rescore(path, cache=tmp_path / "cache.sqlite")
    with pytest.raises(FileExistsError, match="never replaces"):
        write_rescored(replayed, path, source=path)
    assert default_output("runs/a.json") == Path("runs/a.rescored.json")
    assert default_output("runs/a.json.episodes.jsonl") == Path("runs/a.rescored.json")


def test_the_cli_writes_a_new_file_and_never_the_old_one(
    run: tuple[Path, Results], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, results = run
    before = path.read_bytes()
    out = tmp_path / "new.json"
    argv = ["rescore", str(path), "--grader", "numeric=numeric-within-1", "--out", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    api = rescore(path, graders={"numeric": "numeric-within-1"})
    assert f"{len(api.changes)} of {len(results.episodes)} episode(s) changed" in printed
    for change in api.changes:
        assert f"{change.key} {change.task_id}: wrong -> correct, reward 0.5 -> 1" in printed
        assert f"old: {change.old_extracted!r}: {change.old_reason}" in printed
    written = Results.load(out)
    assert written.episodes == api.results.episodes and written.metrics == api.results.metrics
    assert path.read_bytes() == before
    assert main(argv) == 2  # the output exists
    assert "exists" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0
    assert main(["rescore", str(path), "--out", str(path), "--force"]) == 2
    assert "never replaces" in capsys.readouterr().err
    assert path.read_bytes() == before
    assert main(["rescore", str(path), "--grader", "no-such-grader", "--out", str(out)]) == 2
    assert "unknown ['no-such-grader']" in capsys.readouterr().err


def test_a_replay_from_the_cache_reports_misses_and_calls_no_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cache = tmp_path / "cache.sqlite"
    path = tmp_path / "cached.json"
    results = evaluate(
        "random", "offline", repeats=2, limit=8, seed=4, out=path, progress=False, cache=cache
    )
    clean = rescore(path, replay=True, cache=cache)
    assert clean.changes == [] and clean.misses == []
    assert clean.results.episodes == results.episodes
    _validates(clean.results)

    # Forget every recorded call about task 0: its episodes must miss, no others.
    question = json.dumps(TASKS[0].question)[1:-1]
    with sqlite3.connect(cache) as db:
        rows = db.execute("SELECT count(*) FROM responses").fetchone()[0]
        db.execute("DELETE FROM responses WHERE request LIKE ?", (f"%{question}%",))
        left = db.execute("SELECT count(*) FROM responses").fetchone()[0]
    assert 0 < left < rows
    expected = [e.key for e in results.episodes if e.task_index == 0]
    assert len(expected) == 2

    replayed = rescore(path, replay=True, cache=cache)
    assert replayed.misses == expected
    assert [c.key for c in replayed.changes] == expected
    for key in expected:
        after = next(e for e in replayed.results.episodes if e.key == key)
        assert after.outcome == "error" and after.error is not None
        assert after.error["error_type"] == "ReplayMiss"  # refused, not sent to a worker
    _unchanged_but(results, replayed.results, set(expected))
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT count(*) FROM responses").fetchone()[0] == left  # no writes
    note = (replayed.results.rescored or [])[-1]
    assert (note.mode, note.misses, note.changed) == ("replay", 2, 2)

    out = tmp_path / "replayed.json"
    assert main(["rescore", str(path), "--replay", str(cache), "--out", str(out)]) == 1
    assert "2 episode(s) missed the response cache (nothing was called" in capsys.readouterr().out
    assert Results.load(out).episodes == replayed.results.episodes


def test_a_replay_of_real_workers_needs_their_cache(
    run: tuple[Path, Results], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, results = run
    real = as_real_pool(results)
    with pytest.raises(ReplayError, match="would call them; pass the cache"):
        rescore(real, replay=True)
    real.dump(tmp_path / "real.json")
    assert main(["rescore", str(tmp_path / "real.json"), "--replay"]) == 2
    assert "would call them" in capsys.readouterr().err
    missing = tmp_path / "no-cache.sqlite"
    with pytest.raises(ReplayError, match="no recorded response cache"):
        rescore(real, replay=True, cache=missing)
