"""Leaderboard submissions: validation of real evaluation runs, where each entry goes
(ranked or listed apart, and why), the CLI, and re-play edge cases.

Every submission here comes from a real ``evaluate`` run on the offline suites with the
simulated pool (the tamper battery is in ``test_leaderboard_tamper.py``).
"""

from __future__ import annotations

import copy
import datetime
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from board_support import Json, board_run, messages, reaggregate, wrap

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import SCHEMA, Results
from conductor_gym.board.submissions import Submission, slugify, validate_file, validate_submission
from conductor_gym.cli.main import main
from conductor_gym.pool.pool import WorkerPool, make_pool
from conductor_gym.workers.budget import Budget


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    return board_run("random", tmp_path_factory.mktemp("run") / "results.json")


@pytest.fixture
def clean(results: Results) -> Json:
    return wrap(results).model_dump(mode="json")


def reasons(data: Json | Submission) -> tuple[str, ...]:
    report = validate_submission(data)
    assert report.ok, messages(report)
    assert report.placement is not None
    return report.placement.reasons


def test_a_submission_round_trips_through_its_file(results: Results, tmp_path: Path) -> None:
    path = wrap(results).dump(tmp_path / "entry.json")
    raw = json.loads(path.read_text())
    assert list(raw) == ["metadata", "results"] and raw["results"]["schema"] == SCHEMA
    assert Submission.load(path) == wrap(results)
    report = validate_file(path)
    assert report.ok and report.warnings == [] and report.placement is not None
    assert report.placement.ranked


def test_a_partial_single_repeat_run_is_listed_apart_not_ranked(tmp_path: Path) -> None:
    # the case: best-single on 2 tasks, 1 repeat, was #1 at 100 % above the baselines
    run = evaluate("best-single", "offline", repeats=1, limit=2, progress=False)
    assert reasons(wrap(run, name="Best single")) == (
        "partial: the first 2 tasks per source of suite 'offline' (rank the whole suite, or "
        "a fixed subset suite such as 'offline-160')",
        "1 repeat(s): a ranked entry needs at least 3",
    )


def test_a_limit_that_equals_the_subset_suite_points_to_it(tmp_path: Path) -> None:
    run = board_run("single:2", tmp_path / "r.json", suite="offline", limit=160)
    assert reasons(wrap(run)) == (
        "partial: the first 160 tasks per source of suite 'offline' (the tasks of the fixed "
        "subset suite 'offline-160': run that suite)",
    )


def test_another_seed_is_listed_apart(tmp_path: Path) -> None:
    run = board_run("single:2", tmp_path / "r.json", seed=7)
    assert reasons(wrap(run)) == (
        "seed 7: ranked runs use the suite seed 0, from which every episode's seed derives",
    )


def test_failures_are_replayed_shown_and_capped(tmp_path: Path) -> None:
    # an episode budget of 2800 tokens stops some 5-step self-reflections: infrastructure
    # failures, reproducible on re-play since the budget belongs to the episode
    run = board_run("reflect:2:5", tmp_path / "r.json", episode_budget=Budget(max_tokens=2800))
    overall = run.metrics["overall"]
    assert 0 < overall.infra_failures < overall.n
    report = validate_submission(wrap(run))
    assert report.ok, messages(report)
    assert report.placement is not None and report.placement.verification.replayed
    share = 100 * overall.infra_failures / overall.n
    assert report.placement.reasons == (
        f"{share:.1f} % of the episodes failed (infrastructure), above the 2 % cap",
    )


def test_a_run_that_failed_entirely_has_no_accuracy(tmp_path: Path) -> None:
    from conductor_gym.board.render import entries_from, format_report, render_markdown

    run = board_run("moa", tmp_path / "r.json", episode_budget=Budget(max_calls=3))
    assert run.metrics["overall"].infra_failures == run.metrics["overall"].n == 480
    report = validate_submission(wrap(run, name="MoA on a budget"))
    assert report.ok, messages(report)
    assert report.placement is not None and report.placement.reasons == (
        "100.0 % of the episodes failed (infrastructure), above the 2 % cap",
    )
    assert "accuracy n/a" in format_report(report)
    [entry] = entries_from([("moa", report)])
    assert entry.accuracy is None and entry.failed == 1.0 and not entry.ranked
    row = next(line for line in render_markdown([entry]).splitlines() if "MoA on a budget" in line)
    assert re.search(r"\| n/a \| \$0\.\d+ \| 100\.0 % \|", row)  # what was spent was spent


def test_run_budget_failures_are_not_replayed_and_not_invented(tmp_path: Path) -> None:
    pool = WorkerPool(make_pool("sim-paper").specs, run_budget=Budget(max_calls=300))
    run = board_run("single:2", tmp_path / "r.json", pool=pool, concurrency=1)
    failed = [e for e in run.episodes if e.outcome == "error"]
    assert failed and all(e.error and e.error["scope"] == "run" for e in failed)
    report = validate_submission(wrap(run))
    assert report.ok, messages(report)
    assert report.replay is not None and len(report.replay.skipped) == len(failed)
    assert "run-budget failure(s) not re-played" in str(report.placement)
    # a run without a run budget cannot have failed on one: the re-play says so
    data = wrap(board_run("single:2", tmp_path / "s.json")).model_dump(mode="json")
    wrong = next(e for e in data["results"]["episodes"] if e["outcome"] == "wrong")
    error = {"kind": "budget", "scope": "run", "limit": "max_calls"}
    wrong.update(outcome="error", correct=False, reward=0.0, error=error)
    reaggregate(data)
    assert any("outcome: recorded 'error', re-played 'wrong'" in m for m in messages(
        validate_submission(data)
    ))  # fmt: skip


def test_a_v1_file_replays_from_the_preset_it_names(clean: Json) -> None:
    data = copy.deepcopy(clean)
    data["results"]["schema"] = "conductor-gym/results/v1"
    del data["results"]["workers"]
    for episode in data["results"]["episodes"]:
        del episode["final_answer"]
    report = validate_submission(data)
    assert report.ok, messages(report)
    v2 = validate_submission(clean)
    assert report.placement is not None and v2.placement is not None
    assert report.placement.ranked and report.placement.section == v2.placement.section
    data["results"]["pool"]["name"] = "/etc/passwd"  # a name is never opened as a path
    assert any("is not a shipped preset" in r for r in reasons(data))


def test_multi_turn_episodes_replay_round_by_round_in_their_own_section(
    tmp_path: Path, clean: Json
) -> None:
    run = board_run("random", tmp_path / "r.json", max_recursions=1)
    assert all(e.followups for e in run.episodes if e.outcome != "invalid")
    report = validate_submission(wrap(run))
    assert report.ok, messages(report)
    single_turn = validate_submission(clean).placement
    assert report.placement is not None and single_turn is not None
    assert report.placement.ranked and report.placement.section.env == '{"max_recursions":1}'
    assert report.placement.section != single_turn.section  # not ranked with single-turn runs
    data = wrap(run).model_dump(mode="json")
    multi = [e for e in data["results"]["episodes"] if e["followups"]]
    stops = [e for e in multi if "model_id = []" in e["followups"][0]]
    replans = [e for e in multi if "model_id = []" not in e["followups"][0]]
    assert stops and replans  # the random planner stops or plans again, at random
    first, second = stops[:2]
    first["followups"] = []  # the recorded stop removed: the episode would go on
    second["followups"] = [second["completion"]]  # a second plan instead of the stop
    replayed = validate_submission(data).replay
    assert replayed is not None
    found = {(d.key, d.field): (d.recorded, d.replayed) for d in replayed.differences}
    key = (first["benchmark"], first["task_index"], first["repeat"])
    assert found[(key, "episode end")] == ("ended", "running after the last recorded action")
    key = (second["benchmark"], second["task_index"], second["repeat"])
    assert found[(key, "steps")][0] == second["steps"] < found[(key, "steps")][1]
    assert {k for k, _ in found} == {
        (e["benchmark"], e["task_index"], e["repeat"]) for e in (first, second)
    }


def test_the_episode_set_errors_name_the_episodes(clean: Json) -> None:
    removed = clean["results"]["episodes"].pop(5)
    report = validate_submission(clean)
    key = (removed["benchmark"], removed["task_index"], removed["repeat"])
    assert any(p.check == "episodes" and str(key) in p.message for p in report.errors)


def test_a_huge_declared_suite_is_counted_not_enumerated(clean: Json) -> None:
    clean["results"]["suite"]["name"] = "paper-train4"  # sizes are not checkable offline
    names = ["math500", "mmlu", "rlpr", "livecodebench"]
    clean["results"]["suite"]["sources"] = [
        {"name": n, "fingerprint": "0" * 16, "size": 10**9} for n in names
    ]
    errors = messages(validate_submission(clean))
    assert "episodes: 12000000000 missing episode(s) (too many to list)" in errors


def test_recomputed_metrics_match_exactly_despite_episode_order(clean: Json) -> None:
    clean["results"]["episodes"].reverse()  # fsum: the aggregates do not depend on order
    assert validate_submission(clean).ok


def test_a_results_file_is_not_a_submission(results: Results) -> None:
    report = validate_submission(json.loads(results.to_json()))
    assert [p.check for p in report.errors] == ["schema"]
    assert "this is a results file, not a submission" in report.errors[0].message


def test_cli_validate_says_where_each_entry_goes(
    clean: Json, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad, junk = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "junk.json"
    good.write_text(json.dumps(clean))
    assert main(["leaderboard", "validate", str(good)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"ok        {good}: 'Random planner', suite 'offline-160', 480")
    assert out[1].startswith("  ranked in suite offline-160 (118eedc03d458aa6), simulated pool")
    assert out[1].endswith("; simulated re-play (480 episodes); agent re-run (480 episodes)")
    assert main(["leaderboard", "validate", "--no-replay", str(good)]) == 0
    assert "listed apart (unverified: not re-played" in capsys.readouterr().out
    clean["results"]["episodes"].append(copy.deepcopy(clean["results"]["episodes"][0]))
    bad.write_text(json.dumps(clean))
    junk.write_text("{not json")
    assert main(["leaderboard", "validate", str(good), str(bad), str(junk)]) == 1
    out = capsys.readouterr().out
    assert f"REJECTED  {bad}" in out and "duplicated episode(s)" in out
    assert f"REJECTED  {junk}" in out and "file: not JSON" in out


def test_cli_submit_writes_a_validated_submission(
    results: Results, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "results.json"
    results.dump(run)
    argv = ["leaderboard", "submit", str(run), "--name", "My Conductor", "--author", "A"]
    argv += ["--author", "B", "--training-data", "none", "--pool-setting", "simulated"]
    argv += ["--date", "2026-02-03", "--dir", str(tmp_path / "board")]
    assert main(argv) == 0
    path = tmp_path / "board" / "submissions" / f"{slugify('My Conductor')}.json"
    submission = Submission.load(path)
    assert submission.metadata.authors == ["A", "B"]
    assert submission.metadata.agent == results.agent["spec"] == "random"
    assert submission.metadata.date == datetime.date(2026, 2, 3)
    assert "ranked in suite offline-160" in capsys.readouterr().out
    assert main(argv) == 1  # exists: not replaced without --force
    assert "pass --force" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0
    bad_setting = [*argv[:-4], "--pool-setting", "constrained", "--dir", str(tmp_path / "x")]
    assert main([*bad_setting, "--force"]) == 1
    assert not (tmp_path / "x").exists()
    assert main([*argv, "--url", "javascript:alert(1)"]) == 2
    assert "must be an http:// or https:// URL" in capsys.readouterr().err


def test_the_package_and_cli_do_not_import_matplotlib() -> None:
    # pydantic is a core dependency (EnvConfig validates every setting); matplotlib is not
    code = (
        "import sys, conductor_gym, conductor_gym.cli.main\n"
        "lean = [m for m in ('matplotlib',) if m in sys.modules]\n"
        "import conductor_gym.board.render\n"
        "print(lean, 'matplotlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "False"]  # matplotlib loads only to draw the plot


def test_only_the_papers_reward_scheme_is_accepted(clean: Json) -> None:
    explicit = {"type": "RewardScheme", "correct": 1.0, "wrong": 0.5, "invalid": 0.0}
    clean["results"]["env_kwargs"]["reward"] = explicit  # how evaluate records an object
    report = validate_submission(clean)
    assert report.ok and report.placement is not None and report.placement.ranked
    clean["results"]["env_kwargs"]["reward"] = "binary"
    errors = messages(validate_submission(clean))
    assert any("env_kwargs.reward is 'binary': the board needs the paper's" in m for m in errors)
