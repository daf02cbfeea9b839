"""``conductor-gym rescore RESULTS [--grader NAME | --grader OLD=NEW ...] [--out NEW.json]
[--replay [CACHE]] [--pool POOL] [--force]``.

Re-grades every stored final answer with the current graders, one named grader
(``--grader NAME``) or a grader per task grader (``--grader numeric=numeric-strict``,
repeatable), and writes a new results file (default ``RESULTS`` with ``.rescored.json``;
never over ``RESULTS`` itself, nor over an existing file without ``--force``). With
``--replay`` the episodes are re-run through the env from their completions instead
(``--replay`` alone for an all-simulated pool; ``--replay CACHE`` reads the run's
response cache, and a call it lacks is reported, never made). Prints every changed
episode with its old and new grade reasons (:mod:`conductor_gym.bench.rescore`).

Exit status: 0; 1 when a replay missed the cache (the file is still written, those
episodes as infrastructure failures); 2 for bad arguments or a run that cannot be
re-scored, with one line saying why (a file nested too deep for the JSON parser or with
an integer too long for Python included: never a traceback).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from conductor_gym.cli.command import Command, Subparsers

if TYPE_CHECKING:  # the command line imports no pydantic until a command runs
    from conductor_gym.bench.replay import GraderChoice

__all__ = ["RescoreCommand", "grader_choice", "run_rescore"]


def grader_choice(values: Sequence[str] | None) -> GraderChoice:
    """``--grader`` values as a :data:`~conductor_gym.bench.replay.GraderChoice`: none,
    one ``NAME`` for every task, or ``OLD=NEW`` pairs (``ValueError`` when mixed)."""
    if not values:
        return None
    pairs = [value.partition("=") for value in values]
    if all(sep for _, sep, _ in pairs):
        return {old: new for old, _, new in pairs}
    if len(values) == 1:
        return values[0]
    raise ValueError("--grader: give one NAME, or OLD=NEW pairs (one per task grader)")


def run_rescore(args: argparse.Namespace) -> int:
    from conductor_gym.bench.rescore import (
        default_output,
        format_rescored,
        rescore,
        write_rescored,
    )
    from conductor_gym.board.untrusted import reading_error
    from conductor_gym.graders import registered_graders

    try:
        graders = grader_choice(args.grader)
        names = [graders] if isinstance(graders, str) else list((graders or {}).values())
        if unknown := [name for name in names if name not in registered_graders()]:
            raise ValueError(f"--grader: unknown {unknown}; registered: {registered_graders()}")
        replay = args.replay is not None
        out = Path(args.out) if args.out else default_output(args.results)
        if out.exists() and not args.force:
            raise FileExistsError(f"{out} exists: pass another --out, or --force")
        rescored = rescore(
            args.results, graders=graders, replay=replay, cache=args.replay or None, pool=args.pool
        )
        write_rescored(rescored, out, source=args.results, force=args.force)
    except (OSError, ValueError, RecursionError) as exc:  # ReplayError, pydantic's: ValueErrors
        reason = reading_error(exc)
        shown = f"{args.results}: {reason}" if reason else str(exc)
        print(f"conductor-gym rescore: {shown}", file=sys.stderr)
        return 2
    print(f"re-scored {args.results} -> {out}")
    print(format_rescored(rescored))
    return 1 if rescored.misses else 0


class RescoreCommand(Command):
    """``conductor-gym rescore RESULTS`` (module docstring): :func:`run_rescore`."""

    name = "rescore"
    help = "re-grade a stored run's answers (or re-play it) without calling a worker"

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        parser = self.add_parser(subparsers)
        parser.add_argument("results", metavar="RESULTS", help="a results JSON or episodes journal")
        parser.add_argument(
            "--grader",
            action="append",
            metavar="NAME|OLD=NEW",
            help="the grader for every task, or OLD=NEW per task grader (repeatable)",
        )
        parser.add_argument("--out", help="the new results file (default RESULTS.rescored.json)")
        parser.add_argument(
            "--replay",
            nargs="?",
            const="",
            metavar="CACHE",
            help="re-run the episodes through the env (from the run's response cache, if given)",
        )
        parser.add_argument("--pool", help="with --replay: the pool preset or file to rebuild")
        parser.add_argument("--force", action="store_true", help="replace an existing --out")
        return parser

    def run(self, args: argparse.Namespace) -> int:
        return run_rescore(args)
