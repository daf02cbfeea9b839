"""Leaderboard submissions: validation of real evaluation runs, and rejection of tampering.

Every submission here comes from a real (small) ``evaluate`` run of the random planner
on the offline suite with the simulated pool; each tamper test edits one thing in its
JSON and checks that validation rejects it with the message for that problem.
"""

from __future__ import annotations

import copy
import datetime
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.leaderboard import (
    Report,
    Submission,
    make_submission,
    slugify,
    validate_file,
    validate_submission,
)
from conductor_gym.bench.results import Results, aggregate
from conductor_gym.bench.suites import get_suite
from conductor_gym.cli.main import main

LIMIT, REPEATS = 6, 2
Json = dict[str, Any]


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Results:
    out = tmp_path_factory.mktemp("run") / "results.json"
    evaluate("random", "offline", repeats=REPEATS, limit=LIMIT, out=out, progress=False)
    return Results.load(out)  # what a submitter has: the file evaluate wrote


def wrap(results: Results, **meta: Any) -> Submission:
    fields: dict[str, Any] = {
        "name": "Random planner",
        "authors": ["conductor-gym developers"],
        "training_data": "none",
        "pool_setting": "simulated",
        "date": datetime.date(2026, 1, 1),
    }
    return make_submission(results, **{**fields, **meta})


@pytest.fixture
def clean(results: Results) -> Json:
    return wrap(results).model_dump(mode="json")


def messages(report: Report) -> list[str]:
    return [str(problem) for problem in report.errors]


def test_a_fresh_evaluation_validates_with_no_errors_or_warnings(clean: Json) -> None:
    report = validate_submission(clean)
    assert report.ok, messages(report)
    assert report.warnings == []
    assert report.submission is not None
    assert len(report.submission.results.episodes) == LIMIT * REPEATS


def test_a_submission_round_trips_through_its_file(results: Results, tmp_path: Path) -> None:
    path = wrap(results).dump(tmp_path / "entry.json")
    raw = json.loads(path.read_text())
    assert list(raw) == ["metadata", "results"] and raw["results"]["schema"].endswith("/v1")
    assert Submission.load(path) == wrap(results)
    assert validate_file(path).ok


def _episode(data: Json, outcome: str) -> Json:
    episode: Json = next(e for e in data["results"]["episodes"] if e["outcome"] == outcome)
    return episode


def edit_aggregate(data: Json) -> None:
    data["results"]["metrics"]["overall"]["accuracy"] += 0.05


def edit_aggregate_by_a_hair(data: Json) -> None:
    data["results"]["metrics"]["offline"]["tokens_per_sample"] += 1e-6


def inconsistent_reward(data: Json) -> None:
    _episode(data, "correct")["reward"] = 0.5  # a correct answer earns 1 under the paper


def inconsistent_correct_flag(data: Json) -> None:
    _episode(data, "wrong")["correct"] = True


def missing_episode(data: Json) -> None:
    del data["results"]["episodes"][3]


def duplicated_episode(data: Json) -> None:
    episodes = data["results"]["episodes"]
    episodes.append(copy.deepcopy(episodes[0]))


def other_suites_fingerprint(data: Json) -> None:
    data["results"]["suite"]["fingerprint"] = get_suite("offline-ood", limit=LIMIT).fingerprint()


def more_repeats_declared(data: Json) -> None:
    data["results"]["repeats"] = REPEATS + 1


def fewer_repeats_declared(data: Json) -> None:
    data["results"]["repeats"] = REPEATS - 1


def agent_mismatch(data: Json) -> None:
    data["metadata"]["agent"] = "moa"


def unknown_field_in_an_episode(data: Json) -> None:
    data["results"]["episodes"][0]["bonus"] = 1.0


def unknown_field_in_metadata(data: Json) -> None:
    data["metadata"]["verified"] = True


def wrong_task_id(data: Json) -> None:
    data["results"]["episodes"][0]["task_id"] = "arithmetic-999"


def wrong_limit(data: Json) -> None:
    data["results"]["suite"]["limit"] = LIMIT + 1


def wrong_pool_setting(data: Json) -> None:
    data["metadata"]["pool_setting"] = "unconstrained"


TAMPERS: list[tuple[Callable[[Json], None], str, str]] = [
    (edit_aggregate, "metrics", "metrics['overall'] differs from the episodes: accuracy"),
    (edit_aggregate_by_a_hair, "metrics", "metrics['offline'] differs from the episodes"),
    (inconsistent_reward, "episode", "reward is not the scheme's reward for the outcome"),
    (inconsistent_correct_flag, "episode", "correct flag contradicts the outcome"),
    (missing_episode, "episodes", "1 missing episode(s)"),
    (duplicated_episode, "episodes", "1 duplicated episode(s)"),
    (other_suites_fingerprint, "suite", "is not the fingerprint of suite 'offline'"),
    (more_repeats_declared, "repeats", f"declare repeats={REPEATS + 1} but the episodes"),
    (fewer_repeats_declared, "repeats", f"declare repeats={REPEATS - 1} but the episodes"),
    (agent_mismatch, "metadata", "metadata.agent is 'moa' but the results were produced"),
    (unknown_field_in_an_episode, "schema", "results.episodes[0].bonus: Extra inputs"),
    (unknown_field_in_metadata, "schema", "metadata.verified: Extra inputs"),
    (wrong_task_id, "episode", "name the wrong task"),
    (wrong_limit, "suite", "with limit 7 has source sizes"),
    (wrong_pool_setting, "metadata", "pool_setting is 'unconstrained' but the pool"),
]


@pytest.mark.parametrize(
    ("tamper", "check", "text"), TAMPERS, ids=[t.__name__ for t, *_ in TAMPERS]
)
def test_tampering_is_rejected_with_its_own_message(
    clean: Json, tamper: Callable[[Json], None], check: str, text: str
) -> None:
    tamper(clean)
    report = validate_submission(clean)
    assert not report.ok
    hits = [p for p in report.errors if p.check == check and text in p.message]
    assert hits, f"no {check!r} error containing {text!r} in {messages(report)}"
    # the message is this tamper's own: no other tamper's expected text explains it
    others = [t for f, c, t in TAMPERS if f is not tamper and (c, t) != (check, text)]
    assert not any(other in hits[0].message for other in others)


def test_the_episode_set_errors_name_the_episodes(clean: Json) -> None:
    removed = clean["results"]["episodes"].pop(5)
    report = validate_submission(clean)
    key = (removed["benchmark"], removed["task_index"], removed["repeat"])
    assert any(p.check == "episodes" and str(key) in p.message for p in report.errors)


def test_recomputed_metrics_match_exactly_despite_episode_order(clean: Json) -> None:
    clean["results"]["episodes"].reverse()  # fsum: the aggregates do not depend on order
    assert validate_submission(clean).ok


def test_a_results_file_is_not_a_submission(results: Results) -> None:
    report = validate_submission(json.loads(results.to_json()))
    assert [p.check for p in report.errors] == ["schema"]
    assert "this is a results file, not a submission" in report.errors[0].message


def test_a_hub_suite_warns_that_its_fingerprint_was_not_checked(results: Results) -> None:
    # relabel the run as paper-ood3 (three hub sources, two tasks each): consistent in
    # every checkable way, but its fingerprint cannot be recomputed offline
    names = [spec.name for spec in get_suite("paper-ood3").specs]
    episodes = [
        e.model_copy(update={"benchmark": names[e.task_index // 2], "task_index": e.task_index % 2})
        for e in results.episodes
    ]
    suite = {
        "name": "paper-ood3",
        "fingerprint": "0" * 16,
        "sources": [{"name": n, "fingerprint": "0" * 16, "size": 2} for n in names],
        "limit": 2,
    }
    relabelled = results.model_copy(
        update={
            "suite": results.suite.model_validate(suite),
            "episodes": episodes,
            "metrics": aggregate(episodes, results.repeats),
        }
    )
    report = validate_submission(wrap(relabelled))
    assert report.ok, messages(report)
    assert [p.check for p in report.warnings] == ["suite"]
    assert "fingerprint not checkable offline" in report.warnings[0].message


def test_an_unknown_suite_is_rejected(clean: Json) -> None:
    clean["results"]["suite"]["name"] = "no-such-suite"
    assert any("unknown suite 'no-such-suite'" in m for m in messages(validate_submission(clean)))


def test_cli_validate_exit_codes_and_messages(
    clean: Json, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good, bad, junk = tmp_path / "good.json", tmp_path / "bad.json", tmp_path / "junk.json"
    good.write_text(json.dumps(clean))
    assert main(["leaderboard", "validate", str(good)]) == 0
    assert capsys.readouterr().out.startswith(f"ok        {good}")
    duplicated_episode(clean)
    bad.write_text(json.dumps(clean))
    junk.write_text("{not json")
    assert main(["leaderboard", "validate", str(good), str(bad), str(junk)]) == 1
    out = capsys.readouterr().out
    assert f"REJECTED  {bad}" in out and "duplicated episode(s)" in out
    assert f"REJECTED  {junk}" in out and "not JSON" in out


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
    assert main(argv) == 1  # exists: not replaced without --force
    assert "pass --force" in capsys.readouterr().err
    assert main([*argv, "--force"]) == 0
    bad_setting = [*argv[:-4], "--pool-setting", "constrained", "--dir", str(tmp_path / "x")]
    assert main([*bad_setting, "--force"]) == 1
    assert not (tmp_path / "x").exists()


def test_the_package_and_cli_do_not_import_matplotlib() -> None:
    # pydantic is a core dependency (EnvConfig validates every setting); matplotlib is not
    code = (
        "import sys, conductor_gym, conductor_gym.cli.main\n"
        "lean = [m for m in ('matplotlib',) if m in sys.modules]\n"
        "import conductor_gym.bench.leaderboard_render\n"
        "print(lean, 'matplotlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["[]", "False"]  # matplotlib loads only to draw the plot


def test_only_the_papers_reward_scheme_is_accepted(clean: Json) -> None:
    explicit = {"type": "RewardScheme", "correct": 1.0, "wrong": 0.5, "invalid": 0.0}
    clean["results"]["env_kwargs"]["reward"] = explicit  # how evaluate records an object
    assert validate_submission(clean).ok
    clean["results"]["env_kwargs"]["reward"] = "binary"
    errors = messages(validate_submission(clean))
    assert any("env_kwargs.reward is 'binary': the board needs the paper's" in m for m in errors)
