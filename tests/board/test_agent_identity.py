"""Agents are who they claim (issue 29, item 3): deterministic built-in agents are re-run
on validation and their completions compared; other agents' entries are marked as
self-reported completions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from board_support import messages, wrap
from pydantic import ValidationError

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.replay import replay_results, run_sources
from conductor_gym.bench.results import Results, aggregate
from conductor_gym.board.identity import is_rerunnable
from conductor_gym.board.submissions import Submission, make_submission, validate_submission

LIMIT = 12  # tasks of the offline suite: 12 episodes a run


@pytest.fixture(scope="module")
def singles() -> list[Results]:
    """One run of each ``single:k`` worker (the seven of the simulated pool)."""
    return [
        evaluate(f"single:{k}", "offline", repeats=1, limit=LIMIT, progress=False) for k in range(7)
    ]


def _renamed(results: Results, spec: str, **agent: object) -> Results:
    return results.model_copy(update={"agent": {"name": spec, "spec": spec, **agent}})


def test_cherry_picked_single_runs_are_refused(singles: list[Results]) -> None:
    own = singles[2]
    picked = [
        next((run.episodes[i] for run in singles if run.episodes[i].correct), episode)
        if not episode.correct
        else episode
        for i, episode in enumerate(own.episodes)
    ]
    forged = own.model_copy(update={"episodes": picked, "metrics": aggregate(picked, 1)})
    # The attack: better than the agent's own run, and every episode re-plays exactly.
    assert forged.metrics["overall"].accuracy > own.metrics["overall"].accuracy
    assert replay_results(forged, run_sources(forged)).ok
    # Refused: single:2, re-run on the re-played observations, writes other plans.
    report = validate_submission(wrap(forged))
    swapped = sum(a.completion != b.completion for a, b in zip(picked, own.episodes, strict=True))
    assert swapped > 0 and report.placement is None
    agent = [m for m in messages(report) if m.startswith("agent: ")]
    assert len(agent) == 1 and not any(m.startswith("replay: ") for m in messages(report))
    assert agent[0].startswith(
        f"agent: {swapped} of {len(picked)} episode(s) have completions that the built-in "
        "agent 'single:2', re-run here on the same observations, does not write"
    )
    assert "recorded 'del_id = [" in agent[0] and "re-run 'del_id = [2]" in agent[0]


def test_a_renamed_agent_is_refused(singles: list[Results]) -> None:
    randoms = evaluate("random", "offline", repeats=1, limit=LIMIT, progress=False)
    renamed = _renamed(randoms, "single:2", seeding="agent")
    errors = messages(validate_submission(wrap(renamed)))
    assert any(m.startswith("agent: ") and "'single:2', re-run here" in m for m in errors)
    # A description the named agent does not record is refused before any re-run.
    as_moa = _renamed(singles[2], "moa", seeding="agent")
    errors = messages(validate_submission(wrap(as_moa)))
    assert errors == [
        "agent: results.agent is not what the built-in agent 'moa' records (env_overrides: "
        "recorded None, the built-in agent records {'max_steps': 8}): re-run evaluate with "
        "that agent"
    ]


def test_genuine_runs_are_re_run_random_with_its_seed(singles: list[Results]) -> None:
    randoms = evaluate("random", "offline", repeats=1, limit=LIMIT, progress=False)
    for results in (singles[2], randoms):
        report = validate_submission(wrap(results))
        assert report.ok, messages(report)
        assert report.placement is not None
        assert str(report.placement.identity) == f"agent re-run ({LIMIT} episodes)"


def test_other_agents_are_marked_self_reported(singles: list[Results]) -> None:
    digest = "ab" * 32
    claims = {
        "llm:openai/gpt-5": "self-reported completions",
        "policy:/ckpt": "self-reported completions (no checkpoint hash recorded)",
    }
    for spec, shown in claims.items():
        report = validate_submission(wrap(_renamed(singles[2], spec)))
        assert report.ok and report.placement is not None, messages(report)
        assert str(report.placement.identity) == shown
        assert report.placement.identity.check == "self-reported completions"
    hashed = _renamed(singles[2], "policy:/ckpt", checkpoint_sha256=digest)
    report = validate_submission(wrap(hashed))
    assert report.placement is not None
    assert str(report.placement.identity) == (
        f"self-reported completions (checkpoint checkpoint_sha256 {digest[:16]})"
    )


def test_an_agent_file_is_never_loaded(singles: list[Results], tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    agent = tmp_path / "evil.py"
    agent.write_text(f"open({str(marker)!r}, 'w').close()\nclass Agent: ...\n")
    for spec in (f"{agent}:Agent", f"single:{agent}:Agent"):
        assert not is_rerunnable(spec)
        report = validate_submission(wrap(_renamed(singles[2], spec)))
        assert report.placement is not None, messages(report)
        assert report.placement.identity.check == "self-reported completions"
    assert not marker.exists()


def test_a_display_name_replaces_a_checkpoint_path_on_the_board(
    singles: list[Results], tmp_path: Path
) -> None:
    """``leaderboard submit --display-name`` (issue 25, item 5): the Agent column names a
    self-reported agent by kind and display name; the submission keeps the full spec."""
    from conductor_gym.board.render import entries_from, render_markdown
    from conductor_gym.cli.main import main

    spec = "policy:/home/alice/runs/orchestrate/checkpoint"
    run = tmp_path / "results.json"
    _renamed(singles[2], spec).dump(run)
    argv = ["leaderboard", "submit", str(run), "--name", "SmolLM2 conductor", "--author", "A"]
    argv += ["--training-data", "offline 160+", "--pool-setting", "simulated"]
    argv += ["--dir", str(tmp_path / "board"), "--display-name", "smollm2-135m-conductor"]
    assert main(argv) == 0
    path = tmp_path / "board" / "submissions" / "smollm2-conductor.json"
    submission = Submission.load(path)
    assert submission.metadata.agent == spec
    assert submission.metadata.agent_display_name == "smollm2-135m-conductor"
    report = validate_submission(submission)
    [entry] = entries_from([("smollm2-conductor", report)])
    page = render_markdown([entry])
    assert "`policy:smollm2-135m-conductor`" in page and "alice" not in page


@pytest.mark.parametrize(
    ("spec", "name", "error"),
    [
        ("single:2", "best-conductor", "the built-in agent 'single:2' is re-run on validation"),
        ("policy:/ckpt", "single:2", "String should match pattern"),
        ("policy:/ckpt", "../../etc", "String should match pattern"),
        ("policy:/ckpt", "a b", "String should match pattern"),
    ],
)
def test_a_display_name_cannot_pose_as_another_agent(
    singles: list[Results], spec: str, name: str, error: str
) -> None:
    with pytest.raises(ValidationError, match=re.escape(error)):
        make_submission(
            _renamed(singles[2], spec),
            name="x",
            authors=["A"],
            training_data="none",
            pool_setting="simulated",
            agent_display_name=name,
        )


def test_the_agent_label_of_each_kind_with_a_display_name() -> None:
    from conductor_gym.board.render import agent_label

    assert agent_label("policy:/a/b/ckpt", "mine") == "policy:mine"
    assert agent_label("llm:openai/gpt-5", "mine") == "llm:mine"
    assert agent_label("/srv/x/agent.py:Agent", "mine") == "file:mine"
    assert agent_label("policy:/a/b/ckpt", None) == "policy:…/ckpt"
