"""The simulator audit (``conductor-gym sim audit``) on a small budget: it plays the single
workers, the anchors, a search and off-task twins on paired seeds, and on simulator v2 it
finds the over-payments the simulator issue measured (exact ties of off-task requests at
step 0, claimed answers that pay). Bad budgets fail at the call, naming the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conductor_gym.bench.audit import OFF_TASK, AuditReport, audit
from conductor_gym.cli.main import main
from conductor_gym.errors import ConfigurationError


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
