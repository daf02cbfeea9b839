"""``conductor-gym view INPUT [--out PAGE.html] [--replay CACHE | --no-replay] [--pool POOL]
[--max-text N]``.

Writes one self-contained HTML page (:mod:`conductor_gym.view.page`) for a results
file, an episodes journal or a trace list, and prints where it went. Steps are re-played
from the recorded completions when every worker is simulated (or from the run's response
cache with ``--replay CACHE``); nothing is ever called. ``--pool`` names the run's pool
(a preset or a pool file) to rebuild its workers from instead of the recorded ones (a
real pool replays from its cache: ``--replay CACHE --pool pool.toml``). ``--max-text``
caps each embedded completion and response (default 4000 characters; 0: none). When
stderr is a terminal, a line there says what is being read before the work starts, and
for a file of :data:`PROGRESS_FROM` episodes or more a second line counts those done;
the last line (stdout) says what was written and how long it took. Exit status 0, or 2
for an input that cannot be read, with one line saying why (JSON nested too deep for the parser and
integers too long for Python included: never a traceback).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from conductor_gym.cli.command import Command, Subparsers

__all__ = ["PROGRESS_FROM", "ViewCommand", "default_page", "run_view"]

PROGRESS_FROM = 1000
"""From this many episodes on, a terminal's stderr also counts the episodes done."""


def default_page(source: str) -> Path:
    """``run.json`` -> ``run.html``; ``run.json.episodes.jsonl`` -> ``run.html``."""
    path = Path(source)
    name = path.name.removesuffix(".episodes.jsonl")
    return path.with_name(Path(name).stem + ".html")


def run_view(args: argparse.Namespace) -> int:
    from conductor_gym.board.untrusted import reading_error
    from conductor_gym.view.page import Progress, write_view

    out = Path(args.out) if args.out else default_page(args.input)
    replay = "never" if args.no_replay else (args.replay or "auto")
    steps = {"never": "", "auto": ", re-playing the steps where it can"}
    doing = steps.get(replay, f", re-playing the steps from {replay}")
    if args.max_text < 0:
        print("conductor-gym view: --max-text must be 0 or more", file=sys.stderr)
        return 2
    progress: Progress | None = None
    if sys.stderr.isatty():  # as evaluate's bar: a pipe or a log gets the outcome only
        print(f"conductor-gym view: reading {args.input}{doing} ...", file=sys.stderr, flush=True)

        def progress(done: int, total: int) -> None:
            if total >= PROGRESS_FROM:
                end = "\n" if done == total else ""
                shown = f"\rconductor-gym view: {done:,}/{total:,} episodes"
                print(shown, end=end, file=sys.stderr, flush=True)

    clock = time.monotonic()
    try:
        data = write_view(
            args.input,
            out,
            replay=replay,
            pool=args.pool,
            title=args.title,
            max_text=args.max_text,
            progress=progress,
        )
    except (OSError, ValueError, RecursionError) as exc:  # ValidationError is a ValueError
        if progress is not None:
            print(file=sys.stderr)  # end a progress line
        reason = reading_error(exc)
        shown = f"{args.input}: {reason}" if reason else str(exc)
        print(f"conductor-gym view: {shown}", file=sys.stderr)
        return 2
    details = (data.get("run") or {}).get("details")
    took = f" in {time.monotonic() - clock:.1f} s"
    print(
        f"wrote {out}: {len(data['episodes'])} episode(s)"
        + (f"; {details}" if details else "")
        + took
    )
    return 0


class ViewCommand(Command):
    """``conductor-gym view INPUT`` (module docstring): :func:`run_view`."""

    name = "view"
    help = "one HTML page of a results file, episodes journal or trace list"

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        view = self.add_parser(subparsers)
        view.add_argument("input", metavar="INPUT", help="results JSON, journal or trace list")
        view.add_argument("--out", help="the page to write (default: INPUT's name with .html)")
        mode = view.add_mutually_exclusive_group()
        mode.add_argument(
            "--replay", metavar="CACHE", help="re-play the steps from the run's response cache"
        )
        mode.add_argument(
            "--no-replay", action="store_true", help="show the stored records only (no re-play)"
        )
        view.add_argument(
            "--pool",
            metavar="POOL",
            help="rebuild the run's workers from this pool (preset name or pool file) to re-play",
        )
        view.add_argument(
            "--max-text",
            type=int,
            default=4000,
            metavar="N",
            help="embed at most N characters of each completion and response (0: all)",
        )
        view.add_argument("--title", help="the page's title")
        return view

    def run(self, args: argparse.Namespace) -> int:
        return run_view(args)
