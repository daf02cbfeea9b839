"""Seed the leaderboard with the baseline agents, evaluated offline.

Runs ``conductor_gym.bench.evaluate.evaluate`` for each baseline agent spec on the ``offline``
suite (procedural stand-ins, first ``--limit`` tasks) with the simulated paper pool
(``sim-paper``), wraps each run as a submission (pool setting ``simulated``), validates
it, writes ``leaderboard/submissions/baseline-<spec>.json`` and renders the board.
Specs the installed agents do not know are skipped with a message. Run from the
repository root::

    .venv/bin/python leaderboard/seed_offline.py            # the defaults below
    .venv/bin/python leaderboard/seed_offline.py --agents random moa --limit 20

These entries say how the baselines do against the *simulated* workers on procedural
tasks; they are not claims about the real models (see the README's offline section).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from pathlib import Path

from conductor_gym.agents import make_agent

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.leaderboard import (
    SUBMISSIONS_DIR,
    load_submissions,
    make_submission,
    slugify,
    validate_submission,
)
from conductor_gym.bench.leaderboard_render import format_report, render_board

# Worker 2 of sim-paper is gpt-5, the strongest single worker of the paper's pool.
BASELINES = (
    "random",
    "single:2",
    "best-single",
    "reflect:2:5",
    "consensus:2:5",
    "moa",
)
NAMES = {
    "random": "Random planner",
    "single:2": "Single worker (gpt-5)",
    "best-single": "Best single worker per domain",
    "reflect:2:5": "Self-reflection x5 (gpt-5)",
    "consensus:2:5": "Consensus of 5 (gpt-5)",
    "moa": "Mixture of agents (all 7)",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", nargs="+", default=list(BASELINES), metavar="SPEC")
    parser.add_argument("--limit", type=int, default=50, help="tasks of the suite (50)")
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--date", type=datetime.date.fromisoformat, default=None)
    parser.add_argument("--dir", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args(argv)
    for spec in args.agents:
        try:
            make_agent(spec) if spec != "best-single" else None  # best-single calibrates
        except ValueError as exc:
            print(f"skip {spec}: {exc}", file=sys.stderr)
            continue
        clock = time.monotonic()
        results = evaluate(
            spec,
            "offline",
            pool="sim-paper",
            repeats=args.repeats,
            seed=args.seed,
            limit=args.limit,
            progress=False,
        )
        submission = make_submission(
            results,
            name=NAMES.get(spec, spec),
            authors=["conductor-gym developers"],
            training_data="none (a hand-written baseline: no training)",
            pool_setting="simulated",
            date=args.date,
            notes="Seeded by leaderboard/seed_offline.py: simulated workers, procedural tasks.",
        )
        target = args.dir / SUBMISSIONS_DIR / f"baseline-{slugify(spec)}.json"
        report = validate_submission(submission, source=str(target))
        print(format_report(report), f"({time.monotonic() - clock:.1f} s)")
        if not report.ok:
            return 1
        submission.dump(target)
    loaded = load_submissions(args.dir)
    rejected = [report for _, report in loaded if not report.ok]
    for report in rejected:
        print(format_report(report), file=sys.stderr)
    if rejected:
        return 1
    entries = [(p.stem, r.submission) for p, r in loaded if r.submission is not None]
    for path in render_board(entries, args.dir):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
