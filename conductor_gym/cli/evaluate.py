"""``conductor-gym evaluate`` and ``conductor-gym suites list``.

Contract. :class:`EvaluateCommand` declares the ``evaluate`` options;
:func:`run_evaluate` runs :func:`conductor_gym.bench.evaluate.evaluate` with them, prints
:func:`format_results` (one row per benchmark, then ``overall``), :func:`format_latency`
(mean latency per sample, steps in order and in parallel) and the wall time, and
returns the exit status: 0 on success, 1 when every episode failed for infrastructure
(an agent or worker that never answered: the distinct causes are printed on stderr), 2
for a bad argument (unknown suite, agent or pool, a bad ``--env``, an episodes file of
another run: the message says what it holds and to pass ``--no-resume``), 130 when
interrupted (rerun the same command to resume). Resuming, it first says on stderr how
many finished episodes the journal keeps and how many infrastructure failures it plays
again (rerunning a run that failed for infrastructure retries what failed).
``--env KEY=VALUE`` sets one :class:`~conductor_gym.core.config.EnvConfig` setting
(``VALUE`` read as JSON when it parses, else as a string), e.g. ``--env max_recursions=1``;
every setting also has its own flag (``--k 3``, ``--max-steps 3``, ``--pool local-smol``:
:func:`conductor_gym.core.config.add_config_arguments`).

``--cost-lambda 0,10,50`` turns the run into a sweep
(:func:`conductor_gym.bench.frontier.sweep_cost_lambda`): the agent, and each
``--sweep-agent``, is evaluated once per price under the cost-aware reward
``cost-<unit>:<λ>`` (``--cost-unit usd|ktokens|calls``; ``{lambda}`` in an agent spec is
filled with the price); it prints accuracy, reward, cost, tokens and calls per question
for every point, then the Pareto front, and with ``--frontier PNG`` draws it. With
``--out``, each point's results go beside it. :func:`format_suites` renders
:func:`conductor_gym.bench.suites.list_suites` (``suites list --json``: the rows as JSON).

``--json`` prints one JSON object on stdout instead of the tables (every other line goes
to stderr): :func:`summary_json` of the run (what ran, the metrics per benchmark and per
task family, the wall time; the episodes are in ``--out``), or for a sweep
``{"points": [...], "front": [...]}`` (each point's fields).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conductor_gym.cli.command import Command, CommandGroup, Subparsers
from conductor_gym.cli.table import text_table
from conductor_gym.core.config import add_config_arguments, settings_from_arguments
from conductor_gym.core.reward import COST_UNITS, Outcome
from conductor_gym.pool.pool import DEFAULT_POOL

if TYPE_CHECKING:
    from conductor_gym.bench.frontier import FrontierPoint
    from conductor_gym.bench.results import Metrics, Results

__all__ = [
    "EvaluateCommand",
    "SuitesCommand",
    "format_latency",
    "format_results",
    "format_suites",
    "format_sweep",
    "resume_note",
    "run_evaluate",
    "run_suites_list",
    "run_sweep",
    "summary_json",
]

MAX_CAUSES = 5
"""Distinct failure messages printed when every episode failed for infrastructure."""

COLUMNS = (
    "benchmark",
    "n",
    "accuracy %",
    "reward",
    "parse-fail",
    "infra",
    "steps/plan",
    "calls",
    "tokens/sample",
    "$/sample",
)


def _env_pair(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE with a Python name, got {text!r}")
    try:
        return key, json.loads(raw)
    except ValueError:
        return key, raw


def _lambdas(text: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated numbers, got {text!r}"
        ) from None
    if not values or any(not math.isfinite(v) or v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected finite prices >= 0, got {text!r}")
    return values


class EvaluateCommand(Command):
    """``conductor-gym evaluate`` (module docstring): :func:`run_evaluate`."""

    name = "evaluate"
    help = "run an agent over a suite with repeats; print and save the metrics"

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        parser = self.add_parser(subparsers)
        parser.add_argument("--agent", default="random", help="agent spec (default: random)")
        parser.add_argument(
            "--suite", default="offline", help="suite name or jsonl:<path> (default: offline)"
        )
        parser.add_argument("--repeats", type=int, default=4, help="repeats per task (default 4)")
        parser.add_argument(
            "--seed",
            type=int,
            default=0,
            help="run seed: every episode's seed derives from it, the source and the repeat (0)",
        )
        parser.add_argument("--out", default=None, help="results JSON (episodes journaled beside)")
        parser.add_argument("--limit", type=int, default=None, help="first N tasks per source")
        parser.add_argument(
            "--task-range", default=None, metavar="A:B",
            help="play tasks A..B-1 of each source (indices and seeds as in a whole run)",
        )  # fmt: skip
        parser.add_argument(
            "--tasks-from", default=None, metavar="FILE",
            help="play the tasks FILE lists (task ids or indices, one per line)",
        )  # fmt: skip
        parser.add_argument(
            "--task-split", default=None, choices=("fit", "heldout"),
            help="play a named split of the tasks: heldout (a quarter, by a hash of the task "
            "id) or fit (the rest); with --task-range/--tasks-from, within them",
        )  # fmt: skip
        parser.add_argument("--concurrency", type=int, default=64, help="episodes in flight")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument(
            "--json", action="store_true", help="print the metrics as JSON instead of tables"
        )
        parser.add_argument(
            "--no-resume", action="store_true", help="restart the episodes file from scratch"
        )
        parser.add_argument(
            "--cost-lambda",
            type=_lambdas,
            default=None,
            metavar="L1,L2,...",
            help="sweep these prices under a cost-aware reward (accuracy-cost frontier)",
        )
        parser.add_argument(
            "--cost-unit",
            choices=COST_UNITS,
            default="usd",
            help="what --cost-lambda prices: usd (default), ktokens or calls",
        )
        parser.add_argument(
            "--sweep-agent",
            action="append",
            default=[],
            metavar="AGENT",
            help="another agent for the --cost-lambda sweep (repeatable)",
        )
        parser.add_argument("--frontier", default=None, metavar="PNG", help="draw the sweep here")
        parser.add_argument(
            "--env",
            type=_env_pair,
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="any EnvConfig setting by name, VALUE read as JSON when it parses "
            "(repeatable), e.g. max_recursions=1",
        )
        # the suite gives the tasks; every other setting has its flag
        add_config_arguments(parser, exclude=("tasks", "task_options"))
        return parser

    def run(self, args: argparse.Namespace) -> int:
        return run_evaluate(args)


class SuitesCommand(CommandGroup):
    """``conductor-gym suites list [--json]``: :func:`run_suites_list`."""

    name = "suites"
    help = "evaluation suites"

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        suites = self.add_parser(subparsers)
        commands = suites.add_subparsers(dest="suites_command", required=True)
        listing = commands.add_parser("list", help="every suite and its sources")
        listing.add_argument("--json", action="store_true", help="print a JSON list")
        listing.set_defaults(handler=run_suites_list)
        return suites


def _pm(value: float, se: float | None, fmt: str) -> str:
    return format(value, fmt) + ("" if se is None else " ± " + format(se, fmt))


def _row(name: str, m: Metrics) -> list[str]:
    from conductor_gym.bench.results import format_usd

    return [
        name,
        str(m.n),
        _pm(100 * m.accuracy, None if m.accuracy_se is None else 100 * m.accuracy_se, ".2f"),
        _pm(m.mean_reward, m.mean_reward_se, ".3f"),
        f"{100 * m.parse_failure_rate:.1f}%",
        str(m.infra_failures),
        f"{m.mean_steps:.2f}",
        f"{m.mean_worker_calls:.2f}",
        f"{m.tokens_per_sample:.0f}",
        format_usd(m.cost_per_sample_usd),
    ]


def format_results(results: Results) -> str:
    """The metrics table: one row per benchmark, then one per task family (domain) when
    a benchmark mixes several, then ``overall`` (accuracy ± SE in %)."""
    from conductor_gym.bench.results import aggregate

    names = [name for name in results.metrics if name != "overall"]
    rows = [_row(name, results.metrics[name]) for name in names]
    domains = sorted({e.domain for e in results.episodes})
    if len(domains) > len(names):
        for domain in domains:
            family = [e for e in results.episodes if e.domain == domain]
            rows.append(_row(f"  {domain}", aggregate(family, results.repeats)["overall"]))
    rows.append(_row("overall", results.metrics["overall"]))
    return text_table(COLUMNS, rows)


def format_latency(results: Results) -> str:
    """Mean worker latency per sample, steps in order and as a graph (critical path)."""
    episodes = [e for e in results.episodes if e.critical_path_s is not None]
    if not episodes:
        return "latency per sample: not recorded"
    summed = sum(e.latency_s for e in episodes) / len(episodes)
    critical = sum(e.critical_path_s or 0.0 for e in episodes) / len(episodes)
    cut = f" ({100 * (1 - critical / summed):.1f}% less)" if summed > 0 else ""
    return (
        f"latency per sample: {summed:.2f} s with steps in order, {critical:.2f} s with "
        f"independent steps in parallel{cut}"
    )


def _run_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The ``evaluate`` arguments the options give, env arguments aside."""
    from conductor_gym.bench.suites import TaskSelection

    return {
        "repeats": args.repeats,
        "seed": args.seed,
        "concurrency": args.concurrency,
        "out": args.out,
        "resume": not args.no_resume,
        "limit": args.limit,
        "progress": not args.no_progress,
        "task_selection": TaskSelection.build(args.task_range, args.tasks_from, args.task_split),
    }


def _pool_name(settings: Mapping[str, Any]) -> str:
    pool = settings.get("pool", DEFAULT_POOL)
    return pool if isinstance(pool, str) else "custom"


def _argument_errors() -> tuple[type[Exception], ...]:
    """What a bad argument raises from a run (exit status 2)."""
    from conductor_gym.bench.results import ResumeMismatchError
    from conductor_gym.pool.config import PoolConfigError
    from conductor_gym.tasks import TaskSourceError

    return (ResumeMismatchError, ValueError, TypeError, PoolConfigError, TaskSourceError)


def run_evaluate(args: argparse.Namespace) -> int:
    """Run ``conductor-gym evaluate`` (see the module docstring)."""
    from conductor_gym.bench.evaluate import evaluate
    from conductor_gym.bench.results import journal_path

    try:
        env_kwargs: dict[str, Any] = {**dict(args.env), **settings_from_arguments(args)}
    except _argument_errors() as exc:
        print(f"conductor-gym evaluate: {exc}", file=sys.stderr)
        return 2
    if args.cost_lambda is not None:
        return run_sweep(args, env_kwargs)
    if args.sweep_agent or args.frontier:
        print("conductor-gym evaluate: --sweep-agent and --frontier need --cost-lambda",
              file=sys.stderr)  # fmt: skip
        return 2
    limit_text = f", first {args.limit} tasks per source" if args.limit else ""
    say = sys.stderr if args.json else sys.stdout  # --json: stdout holds the JSON only
    print(
        f"conductor-gym evaluate: agent {args.agent!r}, suite {args.suite!r}{limit_text}, "
        f"pool {_pool_name(env_kwargs)!r}, {args.repeats} repeats, seed {args.seed} ...",
        file=say,
        flush=True,
    )
    if args.out and not args.no_resume and (note := resume_note(journal_path(args.out))):
        print(f"conductor-gym evaluate: {note}", file=sys.stderr, flush=True)
    try:
        results = evaluate(args.agent, args.suite, **_run_arguments(args), **env_kwargs)
    except _argument_errors() as exc:
        print(f"conductor-gym evaluate: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        where = f"; rerun the same command to resume from {journal_path(args.out)}"
        print(f"\ninterrupted{where if args.out else ''}", file=sys.stderr)
        return 130
    suite = results.suite
    limit = f", first {suite.limit} tasks per source" if suite.limit else ""
    saved = f"; results in {args.out}" if args.out else ""
    if args.json:
        print(json.dumps(summary_json(results), indent=1))
        print(f"wall time {results.wall_time_s:.1f} s{saved}", file=sys.stderr)
    else:
        print(
            f"{results.env_id} {results.env_version}: agent {results.agent['spec']!r}, suite "
            f"{suite.name!r} ({suite.fingerprint}{limit}), pool {results.pool.get('name')!r}, "
            f"{results.repeats} repeats, seed {results.seed}"
        )
        print(format_results(results))
        print(format_latency(results))
        print(f"wall time {results.wall_time_s:.1f} s{saved}")
    overall = results.metrics["overall"]
    if overall.n and overall.infra_failures == overall.n:
        causes = sorted({str((e.error or {}).get("message")) for e in results.episodes})
        shown = "\n".join(f"  {cause}" for cause in causes[:MAX_CAUSES])
        more = f"\n  ... and {len(causes) - MAX_CAUSES} more" if len(causes) > MAX_CAUSES else ""
        print(
            f"conductor-gym evaluate: all {overall.n} episodes failed for infrastructure; "
            f"nothing was scored. Cause(s):\n{shown}{more}"
            + ("\nRerun the same command to play them again." if args.out else ""),
            file=sys.stderr,
        )
        return 1
    return 0


def summary_json(results: Results) -> dict[str, Any]:
    """What ``evaluate --json`` prints: the results file's fields but the episodes and
    the workers (``schema``, ``env_id``, ``suite``, ``pool``, ``agent``, ``metrics``,
    ``domain_metrics``, ...), and the mean latencies of :func:`format_latency`
    (``latency_s``: ``{"in_order", "parallel"}`` per sample, ``None`` if not recorded)."""
    data: dict[str, Any] = json.loads(results.to_json())
    del data["episodes"], data["workers"]
    timed = [e for e in results.episodes if e.critical_path_s is not None]
    data["latency_s"] = (
        {
            "in_order": math.fsum(e.latency_s for e in timed) / len(timed),
            "parallel": math.fsum(e.critical_path_s or 0.0 for e in timed) / len(timed),
        }
        if timed
        else None
    )
    return data


def resume_note(journal: Path) -> str | None:
    """What resuming ``journal`` keeps and plays again, or ``None`` when there is no
    journal (or it cannot be read: the run itself then says why)."""
    from conductor_gym.bench.results import read_journal

    if not journal.is_file():
        return None
    try:
        _, records = read_journal(journal)
    except (OSError, ValueError):
        return None
    latest = {r.key: r for r in records}
    failed = sum(r.outcome is Outcome.ERROR for r in latest.values())
    return (
        f"resuming {journal}: {len(latest) - failed} finished episode(s) kept, {failed} "
        "infrastructure failure(s) played again (--no-resume starts afresh)"
    )


def format_sweep(points: Sequence[FrontierPoint]) -> str:
    """Every point of a sweep, then the Pareto front (cheapest first; the price is named
    for agents whose behaviour moved with it)."""
    from conductor_gym.bench.frontier import pareto_front, points_table

    rows = points_table(points)
    table = text_table(list(rows[0]), [list(r.values()) for r in rows])
    spending: dict[str, set[tuple[float, float]]] = {}
    for p in points:
        spending.setdefault(p.label, set()).add((p.accuracy, p.cost_per_question_usd))
    front = ", ".join(
        p.agent
        + (f" at lambda {p.cost_lambda:g}" if len(spending[p.label]) > 1 else "")
        + f" ({100 * p.accuracy:.1f}%, ${p.cost_per_question_usd:.5f})"
        for p in pareto_front(points)
    )
    return f"{table}\nPareto front (accuracy against cost per question): {front}"


def run_sweep(args: argparse.Namespace, env_kwargs: dict[str, Any]) -> int:
    """``evaluate --cost-lambda``: the sweep, its table and front, and the plot."""
    from conductor_gym.bench.frontier import plot_frontier, sweep_cost_lambda

    points: list[FrontierPoint] = []
    try:
        for agent in (args.agent, *args.sweep_agent):
            points += sweep_cost_lambda(
                agent,
                args.suite,
                args.cost_lambda,
                unit=args.cost_unit,
                **_run_arguments(args),
                **env_kwargs,
            )
    except _argument_errors() as exc:
        print(f"conductor-gym evaluate: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    limit = f", first {args.limit} tasks per source" if args.limit else ""
    print(
        f"cost-lambda sweep: suite {args.suite!r}{limit}, pool {_pool_name(env_kwargs)!r}, "
        f"{args.repeats} repeats, seed {args.seed}, price per {args.cost_unit}",
        file=sys.stderr if args.json else sys.stdout,
    )
    if args.json:
        from conductor_gym.bench.frontier import pareto_front

        front = [p.to_dict() for p in pareto_front(points)]
        print(json.dumps({"points": [p.to_dict() for p in points], "front": front}, indent=1))
    else:
        print(format_sweep(points))
    if args.frontier:
        note = f"suite {args.suite}{limit}, pool {_pool_name(env_kwargs)}, {args.repeats} repeats"
        try:
            path = plot_frontier(points, args.frontier, note=note)
        except RuntimeError as exc:
            print(f"conductor-gym evaluate: {exc}", file=sys.stderr)
            return 2
        print(f"frontier plot in {path}", file=sys.stderr if args.json else sys.stdout)
    return 0


def format_suites(rows: Sequence[Mapping[str, Any]]) -> str:
    """The rows of :func:`conductor_gym.bench.suites.list_suites` as a table."""
    header = ("name", "size", "sources", "description")
    cells = [[str(row[c]) if row[c] is not None else "-" for c in header] for row in rows]
    return text_table(header, cells)


def run_suites_list(args: argparse.Namespace) -> int:
    """Print every suite (nothing is downloaded): a table, or with ``--json`` a JSON list
    of the rows."""
    from conductor_gym.bench.suites import list_suites

    rows = list_suites()
    print(json.dumps(rows, indent=2) if getattr(args, "json", False) else format_suites(rows))
    return 0
