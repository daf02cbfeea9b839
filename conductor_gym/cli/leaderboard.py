"""``conductor-gym leaderboard validate | render | submit``.

Contract.

* ``validate FILE...`` validates each submission
  (:func:`conductor_gym.board.submissions.validate_file`: every check, then the re-play
  of every episode) and prints, per file, ``ok`` or
  ``REJECTED``, where an accepted entry goes (ranked in its section, or listed apart and
  why) and one line per problem. Each file is validated on its own: one that breaks the
  validation itself is ``REJECTED`` with a ``file`` line saying how, and the files after
  it are still validated; with several files, names are checked across them too
  (:func:`conductor_gym.board.submissions.check_names`). Exit 0 when every file is
  accepted, else 1. ``--no-replay`` skips the re-play (entries are then unverified);
  ``--cache FILE`` re-plays a single file's real-pool episodes from that response cache;
  ``--json`` prints one JSON array instead, an object per file
  (:func:`conductor_gym.board.render.report_json`).
* ``render [--dir leaderboard]`` validates ``DIR/submissions/*.json`` (a line on stderr
  per file as it is validated) and rebuilds ``README.md``, ``index.html`` and the plot
  from the accepted ones; a rejected file is reported on stderr and left out, never
  fatal. Exit 0.
* ``submit RESULTS --name ... [--cache FILE]`` wraps a results file with metadata,
  writes beside the target as ``<slug>.sqlite`` a copy of the response cache (if any)
  holding only the calls the run's episodes use
  (:func:`conductor_gym.board.cache_use.keep_only`: a cache shared with other runs
  ships none of theirs), validates the submission, refuses a name another entry's agent
  already shows (:func:`conductor_gym.board.submissions.name_clashes`) and writes
  ``DIR/submissions/<slug>.json``. Exit 0 when written, 1 when rejected or already there
  (``--force`` replaces), 2 for an unreadable results file or cache, or bad metadata.
* ``spot-check SUBMISSION --pool POOL [--cache FILE] [--sample N] [--seed S]
  [--min-agreement A] [--trust-pool-credentials]`` re-asks the live endpoints of
  ``POOL`` (a pool file naming the run's workers with their addresses) ``N`` of the
  cached calls the episodes use, drawn with seed ``S`` (by default a fresh random seed,
  printed so the check can be re-run) from the submission's response cache
  (``--cache``, else the one beside it, checked against its pinned SHA-256) and prints
  one line per call and the agreement (:func:`conductor_gym.board.spotcheck.spot_check`).
  Exit 0 when the agreement is at least ``A`` (default 0.9), 1 when below, 2 for an
  unreadable submission, cache or pool.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from conductor_gym.cli.command import CommandGroup, Subparsers

__all__ = ["LeaderboardCommand"]


def _validate(args: argparse.Namespace) -> int:
    from conductor_gym.board.render import format_report, report_json
    from conductor_gym.board.submissions import Report, check_names, validate_file

    if args.cache is not None and len(args.files) != 1:
        print("conductor-gym leaderboard validate: --cache takes one FILE", file=sys.stderr)
        return 2
    reports = []
    for path in args.files:
        try:
            report = validate_file(path, cache=args.cache, replay=not args.no_replay)
        except Exception as exc:  # one hostile file must not stop the files after it
            report = Report(str(path))
            report.error("file", f"validation failed: {type(exc).__name__}: {exc}"[:500])
        reports.append(report)
        if not args.json and len(args.files) == 1:
            print(format_report(report), flush=True)
    check_names(reports)
    if args.json:
        print(json.dumps([report_json(r) for r in reports], indent=1))
    elif len(args.files) > 1:
        for report in reports:
            print(format_report(report), flush=True)
    return 0 if all(r.ok for r in reports) else 1


def _render(args: argparse.Namespace) -> int:
    from conductor_gym.board.render import format_report, render_board
    from conductor_gym.board.submissions import Report, load_submissions

    start = time.monotonic()

    def validated(index: int, total: int, path: Path, report: Report) -> None:
        verdict = "ok" if report.ok else "rejected"
        print(
            f"validated {index}/{total} {path.name}: {verdict} ({time.monotonic() - start:.1f} s)",
            file=sys.stderr,
            flush=True,
        )

    loaded = load_submissions(args.dir, progress=validated)
    for path, report in loaded:
        if not report.ok:
            print(format_report(report), file=sys.stderr)
            print(f"skipped {path}: rejected, left off the board", file=sys.stderr)
    print("rendering README.md, index.html and the plot", file=sys.stderr, flush=True)

    def wrote(path: Path) -> None:
        print(f"wrote {path} ({time.monotonic() - start:.1f} s)", flush=True)

    render_board([(p.stem, r) for p, r in loaded], Path(args.dir), progress=wrote)
    return 0


def _others(folder: Path, target: Path) -> list[Any]:
    """The other submissions in ``folder`` that parse (schema only; a file that does not
    is validated on its own by ``validate``/``render``)."""
    from conductor_gym.board import submissions as lb
    from conductor_gym.board.untrusted import UntrustedInputError, read_json_file, validate_strictly

    found = []
    for path in sorted(folder.glob("*.json")):
        if path.resolve() == target.resolve():
            continue
        try:
            found.append(validate_strictly(lb.Submission, read_json_file(path)))
        except (UntrustedInputError, ValueError, OSError):
            continue
    return found


def _submit(args: argparse.Namespace) -> int:
    from conductor_gym.board import submissions as lb

    folder = Path(args.dir) / lb.SUBMISSIONS_DIR
    slug = lb.slugify(args.name)
    target = folder / f"{slug}.json"
    with tempfile.TemporaryDirectory(prefix="cg-submit-") as scratch:
        return _submit_in(args, lb, folder, slug, target, Path(scratch))


def _submit_in(
    args: argparse.Namespace, lb: Any, folder: Path, slug: str, target: Path, scratch: Path
) -> int:
    """:func:`_submit` with ``scratch``, a folder for the trimmed cache."""
    from conductor_gym.bench.results import Results
    from conductor_gym.board.cache_use import episode_calls, keep_only
    from conductor_gym.board.render import format_report
    from conductor_gym.board.untrusted import reading_error
    from conductor_gym.workers.cache import CacheError

    def fail(message: str) -> int:
        print(f"conductor-gym leaderboard submit: {message}", file=sys.stderr)
        return 2

    try:
        results = Results.load(args.results)
    except (OSError, ValueError, RecursionError) as exc:  # ValidationError is a ValueError
        reason = reading_error(exc)
        return fail(f"{args.results}: {reason}" if reason else str(exc))
    cache = None
    if args.cache is not None:
        try:  # only the calls the episodes use: none of other runs' sharing the file
            used = episode_calls(results, args.cache)
            cache = keep_only(args.cache, used, scratch / f"{slug}.sqlite")
        except (CacheError, ValueError, OSError) as exc:  # ReplayError is a ValueError
            return fail(f"response cache {args.cache}: {exc}")
    try:
        submission = lb.make_submission(
            results,
            name=args.name,
            authors=args.authors,
            training_data=args.training_data,
            pool_setting=args.pool_setting,
            date=args.date,
            url=args.url,
            notes=args.notes,
            response_cache=cache,
            agent_display_name=args.display_name,
        )
    except ValueError as exc:  # ValidationError is a ValueError
        return fail(str(exc))
    report = lb.validate_submission(submission, source=str(target), cache=cache)
    if report.ok:
        for clash in lb.name_clashes(submission, _others(folder, target)):
            report.error("metadata", clash)
    print(format_report(report))
    if report.ok and target.exists() and not args.force:
        print(f"{target} exists: pass --force to replace it", file=sys.stderr)
        return 1
    if not report.ok:
        return 1
    if cache is not None:
        folder.mkdir(parents=True, exist_ok=True)
        (folder / cache.name).write_bytes(cache.read_bytes())
        print(f"wrote {folder / cache.name} (the run's own calls only)")
    submission.dump(target)
    print(f"wrote {target}")
    return 0


def _spot_check(args: argparse.Namespace) -> int:
    import hashlib

    from conductor_gym.board.spotcheck import spot_check
    from conductor_gym.board.submissions import Submission
    from conductor_gym.board.untrusted import UntrustedInputError, read_json_file, validate_strictly

    def fail(message: str) -> int:
        print(f"conductor-gym leaderboard spot-check: {message}", file=sys.stderr)
        return 2

    try:
        submission = validate_strictly(Submission, read_json_file(args.submission))
    except (UntrustedInputError, ValueError) as exc:  # ValidationError is a ValueError
        return fail(f"{args.submission}: not a valid submission: {str(exc)[:500]}")
    meta = submission.metadata
    cache = args.cache
    if cache is None:
        if meta.response_cache is None:
            return fail(f"{args.submission} ships no response cache: pass --cache FILE")
        cache = str(Path(args.submission).parent / meta.response_cache)
    try:
        digest = hashlib.sha256(Path(cache).read_bytes()).hexdigest()
    except OSError as exc:
        return fail(f"response cache {cache}: {exc}")
    if meta.response_cache_sha256 is not None and digest != meta.response_cache_sha256:
        return fail(
            f"response cache {cache} has SHA-256 {digest[:16]}..., not the submission's "
            f"pinned {meta.response_cache_sha256[:16]}..."
        )
    try:
        found = spot_check(
            submission.results,
            cache,
            args.pool,
            sample=args.sample,
            seed=args.seed,
            trust_credentials=args.trust_pool_credentials,
        )
    except ValueError as exc:  # ReplayError, CacheError and bad arguments
        return fail(str(exc))
    for call in found.calls:
        print(call)
    print(found.summary())
    if not found.answered:
        print("no sampled call was answered: nothing to agree on", file=sys.stderr)
        return 1
    return 0 if found.agreement >= args.min_agreement else 1


class LeaderboardCommand(CommandGroup):
    """``conductor-gym leaderboard validate | render | submit | spot-check`` (module docstring)."""

    name = "leaderboard"
    help = "validate (re-playing every episode), submit and render the board"

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        board = self.add_parser(subparsers)
        board_commands = board.add_subparsers(dest="leaderboard_command", required=True)
        validate = board_commands.add_parser(
            "validate", help="check submission files and say where each one goes"
        )
        validate.add_argument(
            "files", nargs="+", metavar="FILE", help="submission JSON files (leaderboard submit)"
        )
        validate.add_argument(
            "--no-replay", action="store_true", help="skip the re-play (entries are unverified)"
        )
        validate.add_argument(
            "--cache", default=None, help="response cache to re-play one real-pool FILE from"
        )
        validate.add_argument(
            "--json", action="store_true", help="print one JSON array, an object per FILE"
        )
        validate.set_defaults(handler=_validate)
        render = board_commands.add_parser("render", help="write README.md, index.html, plot")
        render.add_argument(
            "--dir", default="leaderboard", help="board folder (default leaderboard)"
        )
        render.set_defaults(handler=_render)
        submit = board_commands.add_parser("submit", help="wrap a results file into a submission")
        submit.add_argument("results", metavar="RESULTS", help="a results JSON from evaluate")
        submit.add_argument("--name", required=True, help="the entry's name on the board")
        submit.add_argument(
            "--author",
            dest="authors",
            action="append",
            required=True,
            help="an author's name (repeat for each author)",
        )
        submit.add_argument("--training-data", required=True, help="what the agent was trained on")
        submit.add_argument(
            "--pool-setting",
            required=True,
            choices=("constrained", "unconstrained", "simulated"),
            help="the workers' setting: the paper's constrained or unconstrained budgets, or a "
            "simulated pool",
        )
        submit.add_argument("--date", type=datetime.date.fromisoformat, help="YYYY-MM-DD (today)")
        submit.add_argument("--url", help="an http(s) URL about the entry")
        submit.add_argument(
            "--display-name",
            help="the Agent column's name for a policy, llm or agent-file entry, shown as "
            "KIND:NAME instead of the spec's local path (letters, digits, . _ + -)",
        )
        submit.add_argument("--notes", help="free text shown with the entry (method, caveats)")
        submit.add_argument(
            "--cache", default=None, help="the run's response cache (real pools): shipped beside it"
        )
        submit.add_argument(
            "--dir", default="leaderboard", help="board folder (default leaderboard)"
        )
        submit.add_argument("--force", action="store_true", help="replace an existing entry")
        submit.set_defaults(handler=_submit)
        spot = board_commands.add_parser(
            "spot-check", help="re-ask live endpoints a sample of a submission's cached calls"
        )
        spot.add_argument("submission", metavar="SUBMISSION", help="a submission JSON file")
        spot.add_argument(
            "--pool", required=True, help="pool file (or preset) naming the run's live endpoints"
        )
        spot.add_argument(
            "--cache", default=None, help="response cache (default: the one beside it)"
        )
        spot.add_argument("--sample", type=int, default=20, help="cached calls to re-ask (20)")
        spot.add_argument(
            "--seed",
            type=int,
            default=None,
            help="seed of the sample draw (default: a fresh random seed, printed for a re-run)",
        )
        spot.add_argument(
            "--min-agreement", type=float, default=0.9, help="share that must agree (0.9)"
        )
        spot.add_argument(
            "--trust-pool-credentials",
            action="store_true",
            help="let the pool file send a non-provider key variable to its address",
        )
        spot.set_defaults(handler=_spot_check)
        return board
