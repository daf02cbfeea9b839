"""The simulator audit (``conductor-gym sim audit``) on a small budget: it plays the single
workers, the anchors, a search and off-task twins on paired seeds, and on simulator v2 it
finds the over-payments the simulator issue measured (exact ties of off-task requests at
step 0, claimed answers that pay). Bad budgets fail at the call, naming the field. On the
randomised pool (``--k 4 --shuffle-workers``) every plan is written by position, and the
best fixed plan per number of calls is saved as plan files that ``plan:<path>`` replays
with the reported accuracy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conductor_gym.agents import make_agent

from conductor_gym.cli.main import main
from conductor_gym.core.config import EnvConfig
from conductor_gym.core.env import ConductorEnv
from conductor_gym.errors import ConfigurationError
from conductor_gym.simlab.audit import OFF_TASK, AuditPlan, AuditReport, audit


@pytest.fixture(scope="module")
def v2_report() -> AuditReport:
    return audit(pool="sim-paper-v2", episodes=4000, per_plan=40, ood_tasks="offline-ood")


def test_the_report_covers_singles_anchors_search_and_twins(v2_report: AuditReport) -> None:
    report = v2_report
    assert len(report.singles) == 7 and report.best_single in report.singles
    assert report.singles[report.best_single] == max(report.singles.values())
    assert {a.name for a in report.anchors} >= {
        "self-review (largest |change|)",
        "gpt-5 5x self-reflection",
        "MoA, all workers + aggregator",
        "claims right as often as the worker",
        "value first, then the letter",
    }
    assert report.best and all(len(plan.steps) > 1 for plan, *_ in report.best)
    assert all(ood is not None for *_, ood, _ in report.best)
    assert report.twins == (len(report.best) + 1) * len(OFF_TASK)
    assert abs(report.episodes - 4000) <= 2 * 40  # about the budget, within two evaluations
    text = report.format()
    assert "off-task twins scoring within 2 SE" in text and report.best_single in text


def test_on_v2_it_finds_off_task_ties_and_claims_that_pay(v2_report: AuditReport) -> None:
    single = f"{v2_report.best_single}:solve[]"
    tied = {f.twin for f in v2_report.findings if f.plan == single and f.difference == 0.0}
    # the simulator issue's examples: off-task requests at step 0 give the faithful outcome
    assert {"sunset", "weather-check", "no-check", "french", "chinese"} <= tied
    claims = next(a for a in v2_report.anchors if a.name.startswith("claims right"))
    assert not claims.holds and claims.difference > 2 * claims.se


def test_cli_writes_the_same_figures_as_the_api(tmp_path: Path) -> None:
    out = tmp_path / "audit.json"
    argv = ["sim", "audit", "--episodes", "1800", "--per-plan", "20", "--ood-tasks", ""]
    assert main([*argv, "--json", str(out)]) == 1  # v2 over-pays: exit 1
    written = json.loads(out.read_text())
    direct = audit(episodes=1800, per_plan=20, ood_tasks=None).to_dict()
    assert written == json.loads(json.dumps(direct))
    assert written["findings"] and written["anchors"]


def test_bad_budgets_fail_naming_the_field(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConfigurationError, match=r"per_plan must be an int >= 20, got 5"):
        audit(per_plan=5)
    with pytest.raises(ConfigurationError, match=r"episodes=100 cannot cover .* at least"):
        audit(episodes=100, per_plan=20)
    assert main(["sim", "audit", "--episodes", "10"]) == 2
    assert "sim audit: audit: episodes=10" in capsys.readouterr().err


def test_on_v3_no_off_task_twin_survives_and_claims_do_not_pay() -> None:
    report = audit(pool="sim-paper-v3", episodes=3000, per_plan=30, ood_tasks=None)
    assert report.twins == (len(report.best) + 1) * len(OFF_TASK) and report.findings == []
    anchors = {a.name: a for a in report.anchors}
    assert (
        anchors["claims right as often as the worker"].difference
        <= 2.0 + 2 * anchors["claims right as often as the worker"].se
    )
    assert anchors["random claimed options"].difference < 0


# The randomised pool (issue 25: k of the seven workers per episode, shuffled ids): plans
# are written by position, and the best fixed plan per number of calls is saved as plan
# files that the agent ``plan:<path>`` replays with the same outcomes.

RANDOMISED = {"pool": "sim-paper", "k": 4, "shuffle_workers": True}


@pytest.fixture(scope="module")
def randomised_report() -> AuditReport:
    return audit(**RANDOMISED, episodes=3000, per_plan=30, ood_tasks=None)


def _positions(plan: AuditPlan) -> list[object]:
    return [s.worker for s in plan.steps]


def test_the_randomised_pool_writes_every_plan_by_position(
    randomised_report: AuditReport,
) -> None:
    report = randomised_report
    assert set(report.singles) == {"Model 0", "Model 1", "Model 2", "Model 3"}
    assert report.singles[report.best_single] == max(report.singles.values())
    plans = [plan for plan, *_ in report.best] + [b.plan for b in report.best_per_calls]
    assert plans and all(
        isinstance(w, int) and 0 <= w < 4 for plan in plans for w in _positions(plan)
    )
    assert all(0 <= m < 4 for b in report.best_per_calls for m in b.fixed.model_ids)
    names = {a.name for a in report.anchors}
    assert "gpt-5 5x self-reflection" not in names and "MoA, all workers + aggregator" not in names
    assert {"self-review (largest |change|)", "MoA, 2-4 solvers (best of them)"} <= names
    # about the budget: never over by more than one evaluation, and under it by at most
    # the search's reserve for step 4 (which counts out-of-domain runs this audit skips)
    assert 3000 - 6 * 30 <= report.episodes <= 3000 + 30
    text = report.format()
    assert "k=4 shuffled ids" in text and "exchangeable" in text
    assert "anchors skipped (they name specific workers): gpt-5" in text


def test_best_plan_per_number_of_calls(randomised_report: AuditReport) -> None:
    per_calls = randomised_report.best_per_calls
    calls = [b.calls for b in per_calls]
    assert calls == sorted(set(calls)) and set(calls) <= {1, 2, 3, 4, 5} and 1 in calls
    for b in per_calls:
        assert len(b.plan.steps) == len(b.fixed) == b.calls
        assert 0.0 <= b.accuracy <= 100.0 and 0.0 <= b.search_accuracy <= 100.0 and b.se >= 0
        assert all("{question}" in s or "{" not in s for s in b.fixed.subtasks)
        assert any("{question}" in s for s in b.fixed.subtasks)
    # the best 1-call plan is the best position (or a wording of a position that beats it)
    one = per_calls[0]
    assert one.search_accuracy >= randomised_report.singles[randomised_report.best_single]
    assert "best fixed plan per number of calls" in randomised_report.format()
    written = randomised_report.to_dict()["best_per_calls"]
    assert [w["calls"] for w in written] == calls and written[0]["model_id"] == list(
        one.fixed.model_ids
    )


def test_saved_plans_replay_with_the_reported_accuracy(
    randomised_report: AuditReport, tmp_path: Path
) -> None:
    paths = randomised_report.save_plans(tmp_path / "plans")
    assert [p.name for p in paths] == [
        f"calls-{b.calls}.plan" for b in randomised_report.best_per_calls
    ]
    for path, best in zip(paths, randomised_report.best_per_calls, strict=True):
        agent = make_agent(f"plan:{path}")
        env = ConductorEnv(EnvConfig(tasks="offline", **RANDOMISED), **agent.env_overrides)
        correct = 0
        for i in range(30):  # the fresh block: seed 0 + 1_000_003 onwards
            obs, info = env.reset(seed=1_000_003 + i)
            correct += env.step(agent.act(obs, info))[4]["outcome"] == "correct"
        assert 100.0 * correct / 30 == pytest.approx(best.accuracy)


def test_cli_randomised_flags_json_and_saved_plans(
    tmp_path: Path, randomised_report: AuditReport, capsys: pytest.CaptureFixture[str]
) -> None:
    out, folder = tmp_path / "audit.json", tmp_path / "plans"
    argv = ["sim", "audit", "--k", "4", "--shuffle-workers", "--episodes", "3000"]
    argv += ["--per-plan", "30", "--ood-tasks", "", "--json", str(out), "--save-plans", str(folder)]
    assert main(argv) in (0, 1)
    written = json.loads(out.read_text())
    assert written == json.loads(json.dumps(randomised_report.to_dict()))
    assert (written["k"], written["shuffle_workers"]) == (4, True) and written["best_per_calls"]
    saved = sorted(p.name for p in folder.iterdir())
    assert saved == sorted(f"calls-{b['calls']}.plan" for b in written["best_per_calls"])
    assert "best fixed plan per number of calls" in capsys.readouterr().out


@pytest.mark.parametrize("k", ["0", "8"])
def test_a_bad_k_fails_naming_the_field(k: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "audit", "--k", k, "--episodes", "3000"]) == 2
    assert f"sim audit: audit: k must be an int in 1..7 (the pool size), got {k}" in (
        capsys.readouterr().err
    )
    with pytest.raises(ConfigurationError, match=r"k must be an int in 1\.\.7"):
        audit(k=int(k))


def test_the_default_pool_reports_best_per_calls_too(v2_report: AuditReport) -> None:
    # the default search keeps its stopping point; on this tiny budget only the best
    # single worker (already re-played) fits, and a note says what was not re-played
    per_calls = v2_report.best_per_calls
    assert per_calls and per_calls[0].calls == 1
    assert all(isinstance(w, str) for b in per_calls for w in _positions(b.plan))
    assert v2_report.k is None and not v2_report.shuffle_workers and not v2_report.randomised
    shown = {b.calls for b in per_calls}
    if shown != {1, 2, 3, 4, 5}:
        assert any(n.startswith("best fixed plan not re-played") for n in v2_report.notes)


# The search (issue 40 item 6): a genetic search that screens many candidates (mutation,
# crossover, invented wordings and tricks) and plays the promising ones in full.


def test_the_search_screens_candidates_and_reports_per_family_plans() -> None:
    report = audit(pool="sim-paper", episodes=9000, per_plan=30, ood_tasks=None)
    assert report.candidates > 100  # raced by successive halving: most only screened
    assert report.adaptive is not None
    families = set(report.adaptive.plans)
    assert families == {"arithmetic", "countdown", "multiple_choice", "program_trace"}
    assert set(report.adaptive.over_fixed) == families
    # every family's search starts from the best global plans, so it does no worse on
    # its search block than the best fixed plan; on fresh seeds it may, within noise
    margin, se = report.adaptive.gain_over_fixed
    assert margin > -3 * se - 1e-9
    text = report.format()
    assert "candidate plans searched" in text and "per-family plans over best fixed" in text
    written = report.to_dict()
    assert written["candidates"] == report.candidates and written["adaptive"]


def test_crossover_and_mutation_write_plans_the_env_accepts() -> None:
    import random

    from conductor_gym.simlab.audit_plans import TRICKS, crossover, mutate, single_plan

    rng = random.Random(0)
    workers = ["gemini-2.5-pro", "gpt-5", "claude-sonnet-4"]
    env = ConductorEnv(pool="sim-paper", max_steps=5, shuffle_workers=False)
    population = [single_plan(w) for w in workers]
    seen_tricks = set()
    for i in range(300):
        a, b = rng.choice(population), rng.choice(population)
        child = crossover(a, b, rng) if i % 3 == 0 else mutate(a, workers, rng)
        population.append(child)
        seen_tricks |= {s.kind for s in child.steps if s.kind in TRICKS}
        _, info = env.reset(seed=i)
        task = env.tasks[info["task_index"]]
        _, _, _, _, step = env.step(child.completion(info, task, rng))
        assert step["parse_error"] is None, child.describe()
        assert 1 <= len(child.steps) <= 5
    assert len(seen_tricks) >= 4


def test_a_checkpointed_audit_resumes_to_the_same_report(tmp_path: Path) -> None:
    arguments = {"pool": "sim-paper", "episodes": 2600, "per_plan": 20, "ood_tasks": None}
    whole = audit(**arguments).to_dict()
    path = tmp_path / "audit.ckpt"
    first = audit(**arguments, checkpoint=path).to_dict()
    assert path.exists() and first == whole
    resumed = audit(**arguments, checkpoint=path).to_dict()  # every evaluation replayed
    assert resumed == whole
    with pytest.raises(ConfigurationError, match="written by another audit"):
        audit(**{**arguments, "seed": 1}, checkpoint=path)
