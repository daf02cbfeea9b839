"""The ``cpu-adapt`` recipe's fixed-plan baselines are what the audit finds (issue 25).

``trainers/trl/recipes/fixed_plans/calls-<n>.plan`` are the best fixed plans of 1 to 5
calls that ``conductor-gym sim audit --pool sim-paper --k 4 --shuffle-workers --episodes
60000`` finds in the recipe's randomised pool, with the accuracies it measured in their
header. The test re-runs that audit and compares every file, figures included; a change
of the simulator or the audit that moves them fails here until the command is re-run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.figures]


def test_the_committed_fixed_plans_are_the_audits(tmp_path: Path) -> None:
    from conductor_gym.agents.plan_file import FixedPlan
    from conductor_gym.trainers.trl.recipes.cpu_adapt import FIXED_PLAN_DIR, FIXED_PLANS, K

    from conductor_gym.simlab.audit import audit

    report = audit(pool="sim-paper", k=K, shuffle_workers=True, episodes=60_000)
    written = report.save_plans(tmp_path)
    committed = sorted(FIXED_PLAN_DIR.glob("calls-*.plan"))
    assert [p.name for p in written] == [p.name for p in committed]
    relative = "trainers/trl/recipes/fixed_plans"
    for fresh, kept in zip(written, committed, strict=True):
        assert fresh.read_text().replace(str(tmp_path), relative) == kept.read_text()
    for spec in FIXED_PLANS:  # the recipe's baselines load
        FixedPlan(spec.removeprefix("plan:"))
