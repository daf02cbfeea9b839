"""The ``conductor-gym`` command line.

``conductor-gym demo`` plays a few episodes of the random planner on the offline
default (procedural tasks, simulated paper pool) and prints rewards and one trace.
``conductor-gym tasks list`` shows every task source, its size, its domain and whether
it runs offline here (no download, no network). ``conductor-gym pools list`` shows every
pool preset; ``conductor-gym pools check NAME_OR_PATH`` checks that a pool's workers have
their credentials and answer a one-token ping (exit 0: all ready, 1: not, 2: bad pool).
``conductor-gym leaderboard validate FILE...`` checks leaderboard submissions, re-playing
every episode, and says where each goes (exit 1 if any is rejected); ``leaderboard
render`` rebuilds the board (README.md, index.html, plot) from ``leaderboard/submissions``;
``leaderboard submit RESULTS`` wraps a results file with metadata into a validated
submission (:mod:`conductor_gym.cli.leaderboard`). ``conductor-gym evaluate --agent random
--suite offline --repeats 4 --out results.json`` runs an agent over a suite and prints accuracy,
reward, parse failures, steps, calls, tokens and cost per benchmark
(:mod:`conductor_gym.cli.evaluate`); ``conductor-gym suites list`` shows the suites.
``conductor-gym serve --agent SPEC --pool POOL`` serves a conductor behind an
OpenAI-compatible API (:mod:`conductor_gym.cli.serve`). ``conductor-gym sim audit`` attacks a
simulated pool with an optimizer and reports what it over-pays (:mod:`conductor_gym.cli.sim`).

``demo`` takes every env setting as a flag (``--tasks``, ``--pool``, ``--k``,
``--max-steps``, ...: :func:`conductor_gym.core.config.add_config_arguments`). ``tasks
list``, ``suites list``, ``pools list`` and ``pools check`` print a JSON list with
``--json`` (``pools check`` then writes its other lines, the credential routes among them,
to stderr, still before anything is sent); ``evaluate --json`` prints its metrics as one
JSON object (:mod:`conductor_gym.cli.evaluate`).

Errors. A :class:`~conductor_gym.errors.ConductorGymError` that reaches the top level is
printed as one line, ``conductor-gym COMMAND: --FLAG: what is wrong`` (with the command
that lists the valid names when the flag is ``--tasks`` or ``--pool``), never a traceback:
exit status 1 for an infrastructure failure (a worker, grader or budget), 2 for anything
else (a bad setting or input). A reader that stops reading (``| head``) ends the command
quietly, exit status 141 as for a shell tool killed by SIGPIPE.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

import gymnasium as gym

from conductor_gym import ENV_ID, __version__
from conductor_gym.cli.leaderboard import add_parser as add_leaderboard_parser
from conductor_gym.cli.rescore import add_rescore_parser
from conductor_gym.cli.serve import add_parser as add_serve_parser
from conductor_gym.cli.sim import add_sim_parser
from conductor_gym.cli.train import add_train_parser
from conductor_gym.cli.view import add_view_parser
from conductor_gym.core.agent_spec import make_agent
from conductor_gym.core.config import add_config_arguments, config_from_arguments
from conductor_gym.errors import ConductorGymError, ConfigurationError, InfrastructureError

LISTING = {"tasks": "conductor-gym tasks list", "pool": "conductor-gym pools list"}
"""The command that lists the valid values of a setting, named in its errors."""


def _one_line(text: str) -> str:
    return "; ".join(part.strip() for part in text.splitlines() if part.strip())


def _demo(args: argparse.Namespace) -> int:
    try:
        config = config_from_arguments(args)
        env = gym.make(ENV_ID, config=config, render_mode="ansi")
    except ConductorGymError:
        raise  # main prints it
    except (ValueError, TypeError) as exc:  # a setting checked below the config (pool's k)
        print(f"conductor-gym demo: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    agent = make_agent("random", seed=args.seed)
    rewards: list[float] = []
    pool = config.pool if isinstance(config.pool, str) else "custom"
    print(f"{ENV_ID}: tasks={config.tasks!r} pool={pool!r}, random planner, seed={args.seed}")
    for episode in range(args.episodes):
        obs, info = env.reset(seed=args.seed + episode)
        action = agent.act(obs, info)
        _, reward, _, _, info = env.step(action)
        rewards.append(float(reward))
        plan = info["plan"]
        steps = len(plan) if plan is not None else 0
        workers = ", ".join(s.worker for s in info["trace"].steps) if info["trace"] else "-"
        print(
            f"episode {episode:3d}  {info['task_id']:<22} reward={reward:.1f} "
            f"outcome={info['outcome']:<8} steps={steps} tokens="
            f"{info['prompt_tokens'] + info['completion_tokens']:>6} "
            f"cost=${info['cost_usd']:.4f}  [{workers}]"
        )
        if episode == 0:
            first_trace = env.render()
    mean = sum(rewards) / len(rewards)
    print(f"\nmean reward over {len(rewards)} episodes: {mean:.3f}")
    print("\ntrace of episode 0:\n" + str(first_trace))
    env.close()
    return 0


def _tasks_list(args: argparse.Namespace) -> int:
    from conductor_gym.cli.tasks import format_table, list_sources

    rows = list_sources()
    print(_json_list(rows) if args.json else format_table(rows))
    return 0


def _json_list(rows: Sequence[object]) -> str:
    import json

    return json.dumps(list(rows), indent=2)


def _pools_list(args: argparse.Namespace) -> int:
    from conductor_gym.cli.pools import format_list, list_json, list_pools

    rows = list_pools()
    print(list_json(rows) if args.json else format_list(rows))
    return 0


def _pools_check(args: argparse.Namespace) -> int:
    from conductor_gym.cli.pools import (
        check_pool,
        credential_routes_of,
        format_checks,
        load_specs,
    )
    from conductor_gym.pool.config import PoolConfigError
    from conductor_gym.workers.credentials import CredentialPolicyError, format_routes

    try:
        name, specs = load_specs(args.pool, trust_credentials=args.trust_pool_credentials)
    except PoolConfigError as exc:
        for line in exc.errors:
            print(line, file=sys.stderr)
        return 2
    except CredentialPolicyError as exc:
        print(format_routes(exc.routes))
        for line in exc.problems:
            print(line, file=sys.stderr)
        return 2
    ping = "no ping" if args.skip_ping else f"ping timeout {args.timeout:g} s"
    workers = f"{len(specs)} worker" + ("" if len(specs) == 1 else "s")
    say = sys.stderr if args.json else sys.stdout  # --json: stdout holds the JSON only
    print(f"pool {name!r}: {workers}, {ping}", file=say)
    # before anything is sent
    print(format_routes(credential_routes_of(specs)), file=say, flush=True)
    checks = check_pool(specs, timeout_s=args.timeout, ping=not args.skip_ping)
    print(_json_list([c.to_dict() for c in checks]) if args.json else format_checks(checks))
    return 0 if all(check.ok for check in checks) else 1


def _evaluate(args: argparse.Namespace) -> int:
    from conductor_gym.cli.evaluate import run_evaluate

    return run_evaluate(args)


def _suites_list(args: argparse.Namespace) -> int:
    from conductor_gym.cli.evaluate import run_suites_list

    return run_suites_list(args)


def _add_evaluate(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from conductor_gym.cli.evaluate import add_arguments

    evaluate = commands.add_parser(
        "evaluate", help="run an agent over a suite with repeats; print and save the metrics"
    )
    add_arguments(evaluate)
    evaluate.set_defaults(handler=_evaluate)
    suites = commands.add_parser("suites", help="evaluation suites")
    suites_commands = suites.add_subparsers(dest="suites_command", required=True)
    suites_list = suites_commands.add_parser("list", help="every suite and its sources")
    suites_list.add_argument("--json", action="store_true", help="print a JSON list")
    suites_list.set_defaults(handler=_suites_list)


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number of seconds > 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="conductor-gym",
        description="conductor-gym: train, evaluate and serve conductors, LMs that plan "
        "workflows for a pool of worker LLMs (arXiv 2512.04388).",
    )
    parser.add_argument("--version", action="version", version=f"conductor-gym {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="play episodes of the random planner offline")
    demo.add_argument("--episodes", type=int, default=8, help="episodes to play (8)")
    demo.add_argument(
        "--seed", type=int, default=0, help="seed of the planner; episode i resets with seed+i (0)"
    )
    add_config_arguments(demo)  # --tasks, --pool and every other env setting
    demo.set_defaults(handler=_demo)
    tasks = commands.add_parser("tasks", help="task sources")
    tasks_commands = tasks.add_subparsers(dest="tasks_command", required=True)
    tasks_list = tasks_commands.add_parser("list", help="every source, size, domain, offline?")
    tasks_list.add_argument("--json", action="store_true", help="print a JSON list")
    tasks_list.set_defaults(handler=_tasks_list)
    pools = commands.add_parser("pools", help="worker pools")
    pools_commands = pools.add_subparsers(dest="pools_command", required=True)
    pools_list = pools_commands.add_parser(
        "list", help="every pool preset: workers, k, backends, description"
    )
    pools_list.add_argument("--json", action="store_true", help="print a JSON list")
    pools_list.set_defaults(handler=_pools_list)
    pools_check = pools_commands.add_parser(
        "check", help="credentials and a one-token ping for every worker of a pool"
    )
    pools_check.add_argument("pool", metavar="NAME_OR_PATH", help="a preset or a .toml file")
    pools_check.add_argument(
        "--timeout", type=_positive_seconds, default=30.0, help="seconds per ping (default 30)"
    )
    pools_check.add_argument(
        "--skip-ping", action="store_true", help="check credentials only; build nothing"
    )
    pools_check.add_argument("--json", action="store_true", help="print a JSON list")
    pools_check.add_argument(
        "--trust-pool-credentials", action="store_true",
        help="send the keys the pool file names wherever it says (default: only a "
        "provider's API-key variables, to its hosts or to loopback)",
    )  # fmt: skip
    pools_check.set_defaults(handler=_pools_check)
    add_leaderboard_parser(commands)
    _add_evaluate(commands)
    add_train_parser(commands)
    add_view_parser(commands)
    add_rescore_parser(commands)
    add_serve_parser(commands)
    add_sim_parser(commands)
    return parser


def error_line(command: str, exc: ConductorGymError) -> str:
    """The one line ``main`` prints for ``exc`` raised by ``command``: the setting at fault
    as its flag (``--tasks: unknown task source ...``), the message on one line, and for
    ``--tasks`` and ``--pool`` the command that lists the valid names."""
    text = _one_line(str(exc))
    field = exc.field if isinstance(exc, ConfigurationError) else None
    if field:
        root = field.split(".")[0]
        text = text.removeprefix(f"{field}: ")
        flag = "--task-option" if root == "task_options" else f"--{root.replace('_', '-')}"
        if not text.startswith(flag):
            text = flag + (f" ({field})" if field != root else "") + f": {text}"
        if root in LISTING:
            text += f" (see `{LISTING[root]}`)"
    return f"conductor-gym {command}: {text or type(exc).__name__}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command ``argv`` names (default: ``sys.argv[1:]``); return its exit status
    (module docstring)."""
    args = build_parser().parse_args(argv)
    if getattr(args, "episodes", 1) < 1:
        print("conductor-gym: --episodes must be >= 1", file=sys.stderr)
        return 2
    try:
        return int(args.handler(args))
    except BrokenPipeError:  # the reader left (`| head`): stop quietly, as a shell tool does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except ConductorGymError as exc:
        print(error_line(args.command, exc), file=sys.stderr)
        return 1 if isinstance(exc, InfrastructureError) else 2


if __name__ == "__main__":
    raise SystemExit(main())
