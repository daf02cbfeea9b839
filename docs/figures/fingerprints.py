"""Small-budget fingerprints of the figures that take minutes to regenerate in full.

A full figure (the audit's fixed plans, the yardstick's learning curve) is checked by
``make figures-check`` (tests marked ``figures``), which ``make test`` leaves out. Each
fingerprint here runs the same generator on a budget of seconds and is held, as a fast
block of ``docs/figures/fingerprints.md``, by ``tests/test_docs_figures.py``: a change of
the simulator, the audit or the learner that would move the full figure moves its
fingerprint too, so ``make test`` fails until ``make docs-figures`` rewrites both.
"""

from __future__ import annotations

AUDIT_COMMAND = (
    "conductor-gym sim audit --pool sim-paper --k 4 --shuffle-workers --episodes 2500 "
    "--per-plan 20 --ood-tasks ''"
)
IDEAL_COMMAND = (
    "python -m conductor_gym.trainers.trl.ideal_learner --recipe cpu-adapt --steps 3 "
    "--marks 1,3 --seeds 0"
)


def audit_fingerprint() -> str:
    """The randomised-pool audit (the generator of the recipe's fixed plans) at 2,500
    episodes of 20 per evaluation: its whole report."""
    from conductor_gym.simlab.audit import audit

    report = audit(
        pool="sim-paper", k=4, shuffle_workers=True, episodes=2500, per_plan=20, ood_tasks=None
    )
    return "```text\n" + report.format() + "\n```"


def ideal_learner_fingerprint() -> str:
    """The yardstick on ``cpu-adapt``'s episodes, 3 steps of one seed: its table."""
    from conductor_gym.trainers.trl import ideal_learner

    settings = ideal_learner.LearnerSettings(steps=3, marks=(1, 3))
    return ideal_learner.format_table(ideal_learner.run("cpu-adapt", settings, (0,)))
