"""``conductor-gym sim audit``: attack a simulated pool with an optimizer before a trainer
does (:mod:`conductor_gym.bench.audit`).

It prints the single workers, the best plans the search found with their gains over the
best single worker on fresh seeds (and out of domain), the anchor checks with their
bands, and every off-task twin that scores within 2 SE of its faithful plan; ``--json``
writes the same figures. Exit status: 0 when every anchor holds and no twin was found,
1 otherwise (the pool pays for something a real pool would not), 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from conductor_gym.errors import ConductorGymError

__all__ = ["add_sim_parser", "run_audit"]


def add_sim_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``sim`` and its ``audit`` subcommand."""
    sim = commands.add_parser("sim", help="the simulated pool: audit it")
    sim_commands = sim.add_subparsers(dest="sim_command", required=True)
    audit = sim_commands.add_parser(
        "audit",
        help="search plans and wordings on paired episodes for what the pool over-pays",
        description="Search plan structures and subtask wordings on paired episodes; "
        "print the best plans' gains over the best single worker, the anchor checks and "
        "every off-task twin that scores within 2 SE of its faithful plan.",
    )
    audit.add_argument("--pool", default="sim-paper", help="a simulated pool: preset or .toml")
    audit.add_argument("--tasks", default="offline", help="in-domain suite (default offline)")
    audit.add_argument("--ood-tasks", default="offline-ood", help="out-of-domain suite; '' to skip")
    audit.add_argument(
        "--episodes", type=int, default=50_000, help="about how many episodes to play"
    )
    audit.add_argument(
        "--per-plan", type=int, default=400, help="episodes per evaluation (paired seeds)"
    )
    audit.add_argument("--top", type=int, default=3, help="best plans to report")
    audit.add_argument("--seed", type=int, default=0, help="first seed of the blocks")
    audit.add_argument("--json", type=Path, default=None, help="also write the report here")
    audit.set_defaults(handler=run_audit)


def run_audit(args: argparse.Namespace) -> int:
    from conductor_gym.bench.audit import audit

    try:
        report = audit(
            pool=args.pool,
            tasks=args.tasks,
            ood_tasks=args.ood_tasks or None,
            episodes=args.episodes,
            per_plan=args.per_plan,
            top=args.top,
            seed=args.seed,
            progress=lambda text: print(text, file=sys.stderr, flush=True),
        )
    except ConductorGymError as exc:
        print(f"sim audit: {exc}", file=sys.stderr)
        return 2
    print(report.format())
    if args.json is not None:
        args.json.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    holds = all(a.holds for a in report.anchors) and not report.findings
    low, high = report.headroom_band
    return 0 if holds and low <= report.headroom <= high else 1
