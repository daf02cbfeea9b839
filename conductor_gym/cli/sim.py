"""``conductor-gym sim audit``: attack a simulated pool with an optimizer before a trainer
does (:mod:`conductor_gym.simlab.audit`).

It prints the single workers, the best plans the search found with their gains over the
best single worker on fresh seeds (and out of domain), the best fixed plan per number of
calls with its fresh accuracy, the anchor checks with their bands, and every off-task twin
that scores within 2 SE of its faithful plan; ``--json`` writes the same figures and
``--save-plans DIR`` each best-per-calls plan as ``DIR/calls-<n>.plan``, a plan file the
agent ``plan:<path>`` replays (``conductor-gym evaluate --agent plan:DIR/calls-3.plan``).
``--k N`` and ``--shuffle-workers`` play the randomised pool (N workers drawn per episode,
shuffled ids), plans written by position; replay its plans with the same draw
(``evaluate --k N --shuffle-workers``). ``--checkpoint FILE`` saves the evaluations as it
goes and resumes from them. Exit status: 0 when every anchor and headroom band holds and
no twin was found, 1 otherwise (the pool pays for something a real pool would not), 2 for
bad arguments.

``conductor-gym sim fit RESULTS... [--cache CACHE] --out pool.toml`` fits a simulated pool
to recorded episodes and ``conductor-gym sim fidelity POOL RESULTS... [--cache CACHE]``
scores a pool on held-out ones by playing every episode on it, single calls included
(:mod:`conductor_gym.simlab.fit`); both skip files that are no results file with a
message and exit 2 on unusable input (a malformed results file, a ``--cache`` that does
not exist); ``fidelity --max-error POINTS`` exits 1 when its overall error exceeds
``POINTS``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from conductor_gym.cli.command import CommandGroup, Subparsers
from conductor_gym.errors import ConductorGymError

if TYPE_CHECKING:
    from conductor_gym.bench.results import Results

__all__ = ["SimCommand", "run_audit", "run_fidelity", "run_fit"]


class SimCommand(CommandGroup):
    """``conductor-gym sim audit | fit | fidelity`` (module docstring)."""

    name = "sim"
    help = "the simulated pool: audit it, fit it, score it"

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        sim = self.add_parser(subparsers)
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
        audit.add_argument(
            "--ood-tasks", default="offline-ood", help="out-of-domain suite; '' to skip"
        )
        audit.add_argument(
            "--episodes", type=int, default=50_000, help="about how many episodes to play"
        )
        audit.add_argument(
            "--per-plan", type=int, default=400, help="episodes per evaluation (paired seeds)"
        )
        audit.add_argument("--top", type=int, default=3, help="best plans to report")
        audit.add_argument("--seed", type=int, default=0, help="first seed of the blocks")
        audit.add_argument(
            "--k",
            type=int,
            default=None,
            help="workers drawn per episode (a random k of the pool): the randomised pool, plans "
            "by position",
        )
        audit.add_argument(
            "--shuffle-workers",
            action="store_true",
            help="shuffle the Model ids every episode: the randomised pool, plans by position",
        )
        audit.add_argument("--json", type=Path, default=None, help="also write the report here")
        audit.add_argument(
            "--checkpoint",
            type=Path,
            default=None,
            metavar="FILE",
            help="save the evaluations played to FILE as it goes and resume from it when run "
            "again with the same arguments (a long audit in the background)",
        )
        audit.add_argument(
            "--save-plans",
            type=Path,
            default=None,
            metavar="DIR",
            help="write the best plan per number of calls as DIR/calls-<n>.plan "
            "(agent plan:<path>)",
        )
        audit.set_defaults(handler=run_audit)

        fit = sim_commands.add_parser(
            "fit",
            help="fit a simulated pool to your recorded episodes",
            formatter_class=argparse.RawDescriptionHelpFormatter,
            description="""\
Fit a pool of simulated workers to runs recorded on your pool (results files of
`conductor-gym evaluate`, with the response cache they were recorded with for real
workers) and write it as a pool file that --pool and ConductorEnv(pool=...) load offline.

What each kind of recorded plan fits (everything else stays at the simulator's priors):
  single calls (agents single:0, single:1, ...)   accuracy per worker and task profile,
      its size effect per family (fitted, or off where the tasks cannot show one),
      correlations between workers (same tasks) and across repeats, tokens, prices
  a step asked to check shown answers              check_scale (v3), keep/fix rates
  a step asked to restate or vote                  relay
  answers asserted in a subtask                    claim_pull, claim_pull_checkable
  every call                                       latency, prices
Each estimate is printed with its 95% interval and the prior it replaces.
Plans other than single calls are re-played to read their steps: from --cache for real
workers (nothing is called), by the simulator for simulated ones.""",
            epilog="""\
example (docs/bring-your-own-pool.md):
  conductor-gym evaluate --agent single:0 --pool my.toml --suite offline --repeats 1 \\
      --cache calls.sqlite --out s0.json        (the same for single:1, ..., reflect:0:2)
  conductor-gym sim fit s0.json s1.json r0.json --cache calls.sqlite --out fitted.toml
  conductor-gym sim fidelity fitted.toml heldout.json --cache calls.sqlite""",
        )
        fit.add_argument("results", nargs="+", type=Path, help="results files (.json) to fit to")
        fit.add_argument("--out", type=Path, required=True, help="pool file (.toml) to write")
        fit.add_argument("--name", default="fitted", help="the pool's name in the file")
        fit.add_argument(
            "--cache",
            default=None,
            help="the response cache (.sqlite) the runs were recorded with (needed to read the "
            "steps of real workers' multi-step plans)",
        )
        fit.set_defaults(handler=run_fit)

        fid = sim_commands.add_parser(
            "fidelity",
            help="score a simulated pool against held-out recorded episodes",
            description="Compare a simulated pool with recorded episodes it was not fitted to: "
            "every episode, single calls included, is played on the pool with its recorded task "
            "and seed, each step sent to the worker that ran it; per plan shape, worker and task "
            "family, recorded and predicted accuracy with their standard errors, cells off by "
            "more than 2 SE flagged; each plan shape's effect over single calls, observed and "
            "predicted, "
            "and whether their signs and sizes agree; the calibration of the per-episode "
            "probabilities; the Brier score; and the summary, the episode-weighted mean absolute "
            "accuracy error in points (lower is better).",
            epilog="example: conductor-gym sim fidelity fitted.toml heldout.json "
            "--cache calls.sqlite",
        )
        fid.add_argument("pool", help="a pool file (.toml) or preset of simulated workers")
        fid.add_argument("results", nargs="+", type=Path, help="held-out results files (.json)")
        fid.add_argument("--cache", default=None, help="the response cache of the runs")
        fid.add_argument(
            "--seeds", type=int, default=4, help="plays per multi-step episode (default 4)"
        )
        fid.add_argument("--json", type=Path, default=None, help="also write the figures here")
        fid.add_argument(
            "--max-error",
            type=float,
            default=None,
            metavar="POINTS",
            help="exit 1 when the overall error (the episode-weighted mean absolute accuracy "
            "error, in points) exceeds POINTS",
        )
        fid.set_defaults(handler=run_fidelity)
        return sim


def run_audit(args: argparse.Namespace) -> int:
    from conductor_gym.simlab.audit import audit

    try:
        report = audit(
            pool=args.pool,
            tasks=args.tasks,
            ood_tasks=args.ood_tasks or None,
            episodes=args.episodes,
            per_plan=args.per_plan,
            top=args.top,
            seed=args.seed,
            k=args.k,
            shuffle_workers=args.shuffle_workers,
            progress=lambda text: print(text, file=sys.stderr, flush=True),
            checkpoint=args.checkpoint,
        )
    except ConductorGymError as exc:
        print(f"sim audit: {exc}", file=sys.stderr)
        return 2
    print(report.format())
    if args.save_plans is not None:
        saved = report.save_plans(args.save_plans)
        print(f"\nsaved {len(saved)} plan files: " + ", ".join(str(p) for p in saved))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    holds = all(a.holds for a in report.anchors) and not report.findings
    low, high = report.headroom_band
    ood = report.ood_headroom
    ood_holds = ood is None or report.ood_headroom_band[0] <= ood <= report.ood_headroom_band[1]
    return 0 if holds and ood_holds and low <= report.headroom <= high else 1


def _load_all(paths: list[Path], command: str, cache: str | None) -> list[Results] | None:
    """The runs of ``paths`` (files that are no results file skipped with a message), or
    ``None`` after printing why they cannot be used (a malformed results file, none left,
    a ``--cache`` that does not exist)."""
    from pydantic import ValidationError

    from conductor_gym.bench.results import load_runs

    if cache is not None and not Path(cache).is_file():
        print(f"sim {command}: --cache {cache}: no such file (give the response cache the "
              "runs were recorded with, or leave --cache out)", file=sys.stderr)  # fmt: skip
        return None
    runs = []
    for path in paths:
        try:
            found, skipped = load_runs([path])
        except (OSError, ValueError, ValidationError) as exc:
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            print(f"sim {command}: {path}: not a readable results file: {first}", file=sys.stderr)
            return None
        for message in skipped:
            print(f"sim {command}: {message}", file=sys.stderr)
        runs += [run for _, run in found]
    if not runs:
        print(f"sim {command}: no results file among the {len(paths)} given", file=sys.stderr)
        return None
    return runs


def run_fit(args: argparse.Namespace) -> int:
    from conductor_gym.simlab.fit import fit

    runs = _load_all(args.results, "fit", args.cache)
    if runs is None:
        return 2
    try:
        fitted = fit(runs, cache=args.cache)
    except ConductorGymError as exc:
        print(f"sim fit: {exc}", file=sys.stderr)
        return 2
    fitted.to_toml(args.out, name=args.name)
    print(fitted.format())
    print(f"wrote {args.out}")
    return 0


def run_fidelity(args: argparse.Namespace) -> int:
    from conductor_gym.simlab.fit import fidelity

    runs = _load_all(args.results, "fidelity", args.cache)
    if runs is None:
        return 2
    try:
        report = fidelity(args.pool, runs, cache=args.cache, seeds=args.seeds)
    except ConductorGymError as exc:
        print(f"sim fidelity: {exc}", file=sys.stderr)
        return 2
    print(report.format())
    if args.json is not None:
        figures = {
            **dataclasses.asdict(report),
            "noise": report.noise,
            "flagged": [dataclasses.asdict(c) for c in report.flagged],
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    if args.max_error is not None and report.score > args.max_error:
        print(f"sim fidelity: the error {report.score:.2f} points exceeds --max-error "
              f"{args.max_error:g}", file=sys.stderr)  # fmt: skip
        return 1
    return 0
