"""Seed the leaderboard with the baseline agents, evaluated offline: the one command that
regenerates every baseline submission, the README and the page.

Runs ``conductor_gym.bench.evaluate.evaluate`` for each baseline agent spec on the
``offline-160`` suite (the fixed 160-task subset of the procedural stand-ins) with the
simulated paper pool (``sim-paper``), the suite seed and 3 repeats (the ranked minimum),
wraps each run as a submission (pool setting ``simulated``), validates it (re-playing
every episode), writes ``leaderboard/submissions/baseline-<spec>.json``
(``<pool>-baseline-<spec>.json`` for another ``--pool``), removes that pool's baseline
files of agents no longer seeded, and renders the board from every submission there.
Specs the installed agents do not know are skipped with a message. It takes about 15 s.
Run from the repository root::

    .venv/bin/python leaderboard/seed_offline.py            # the defaults below
    .venv/bin/python leaderboard/seed_offline.py --agents random moa --suite offline
    .venv/bin/python leaderboard/seed_offline.py --pool sim-paper-v2   # simulator v2
    .venv/bin/python leaderboard/seed_offline.py --k 4 --shuffle-workers # randomised pool

``--k 4 --shuffle-workers`` seeds the section of the paper's randomised pool (4 of the 7
workers per question, shuffled ids), where the ``cpu-adapt`` conductor is ranked: there a
``single:<id>`` is a random drawn worker, so its baselines are :data:`RANDOMISED_BASELINES`
(``best-single``, which reads the drawn workers' names, the random planner and the audit's
best fixed plans of 1-3 calls in that pool), written as
``<pool>-k<k>-shuffled-baseline-<spec>.json``.

The board keeps the ``sim-paper-v2`` baselines beside the v3 ones: the trained conductor's
entry was recorded on simulator v2, and its section ranks it against them.

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
from conductor_gym.board.render import format_report, render_board
from conductor_gym.board.sections import MIN_REPEATS, SUITE_SEED
from conductor_gym.board.submissions import (
    SUBMISSIONS_DIR,
    load_submissions,
    make_submission,
    slugify,
    validate_submission,
)
from conductor_gym.pool.splits import PAPER_WORKERS

# Every single worker of sim-paper, in the pool's order: the best of them is the bar a
# trained conductor must clear on this suite.
BASELINES = (
    "random",
    *(f"single:{i}" for i in range(len(PAPER_WORKERS))),
    "best-single",
    "reflect:2:5",
    "consensus:2:5",
    "moa",
)
# The randomised pool's baselines: the audit's best fixed plans (the same plan, by Model
# position, for every question) ship with the cpu-adapt recipe; paths from the repository
# root, where this script runs.
FIXED_PLAN_DIR = "trainers/trl/recipes/fixed_plans"
RANDOMISED_BASELINES = (
    "random",
    "best-single",
    *(f"plan:{FIXED_PLAN_DIR}/calls-{n}.plan" for n in (1, 2, 3)),
)
NAMES = {
    "random": "Random planner",
    **{f"single:{i}": f"Single worker ({name})" for i, name in enumerate(PAPER_WORKERS)},
    "best-single": "Best single worker per domain",
    "reflect:2:5": "Self-reflection x5 (gpt-5)",
    "consensus:2:5": "Consensus of 5 (gpt-5)",
    "moa": "Mixture of agents (all 7)",
    **{
        f"plan:{FIXED_PLAN_DIR}/calls-{n}.plan": f"Best fixed plan of {n} call"
        + ("s" if n > 1 else "")
        + " (sim audit)"
        for n in (1, 2, 3)
    },
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--agents", nargs="+", default=None, metavar="SPEC")
    parser.add_argument("--suite", default="offline-160", help="suite (offline-160)")
    parser.add_argument("--pool", default="sim-paper", help="simulated pool (sim-paper)")
    parser.add_argument("--k", type=int, default=None, help="workers drawn per question")
    parser.add_argument(
        "--shuffle-workers", action="store_true", help="shuffle the Model ids every question"
    )
    parser.add_argument("--repeats", type=int, default=MIN_REPEATS)
    parser.add_argument("--seed", type=int, default=SUITE_SEED)
    parser.add_argument("--date", type=datetime.date.fromisoformat, default=None)
    parser.add_argument("--dir", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args(argv)
    randomised = args.k is not None or args.shuffle_workers
    seeded = RANDOMISED_BASELINES if randomised else BASELINES
    if args.agents is None:
        args.agents = list(seeded)
    draw = (f"-k{args.k}" if args.k is not None else "") + (
        "-shuffled" if args.shuffle_workers else ""
    )
    prefix = (
        "baseline-"
        if args.pool == "sim-paper" and not randomised
        else f"{slugify(args.pool)}{draw}-baseline-"
    )
    written: set[str] = set()
    for spec in args.agents:
        try:
            make_agent(spec) if spec != "best-single" else None  # best-single calibrates
        except ValueError as exc:
            print(f"skip {spec}: {exc}", file=sys.stderr)
            continue
        clock = time.monotonic()
        results = evaluate(
            spec,
            args.suite,
            pool=args.pool,
            k=args.k,
            shuffle_workers=args.shuffle_workers or None,
            repeats=args.repeats,
            seed=args.seed,
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
        target = args.dir / SUBMISSIONS_DIR / f"{prefix}{slugify(spec)}.json"
        report = validate_submission(submission, source=str(target))
        print(format_report(report), f"({time.monotonic() - clock:.1f} s)")
        if not report.ok:
            return 1
        submission.dump(target)
        written.add(target.name)
    for stale in sorted((args.dir / SUBMISSIONS_DIR).glob(f"{prefix}*.json")):
        if stale.name not in written and set(args.agents) == set(seeded):
            stale.unlink()
            print(f"removed {stale} (no longer a seeded baseline)")
    loaded = load_submissions(args.dir)
    rejected = [report for _, report in loaded if not report.ok]
    for report in rejected:
        print(format_report(report), file=sys.stderr)
    if rejected:
        return 1
    for path in render_board([(p.stem, r) for p, r in loaded], args.dir):
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
