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

Each command is an object with ``name``, ``help``, ``register(subparsers)`` and
``run(args) -> int`` (:class:`~conductor_gym.cli.command.Command`), written in its own
module and listed once in :data:`~conductor_gym.cli.commands.COMMANDS`; :func:`main`
registers them in that order and runs the one named.

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

from conductor_gym import __version__
from conductor_gym.cli.command import one_line
from conductor_gym.cli.commands import COMMANDS
from conductor_gym.errors import ConductorGymError, ConfigurationError, InfrastructureError

LISTING = {"tasks": "conductor-gym tasks list", "pool": "conductor-gym pools list"}
"""The command that lists the valid values of a setting, named in its errors."""


def build_parser() -> argparse.ArgumentParser:
    """The ``conductor-gym`` parser: every command of
    :data:`~conductor_gym.cli.commands.COMMANDS` registered in order."""
    parser = argparse.ArgumentParser(
        prog="conductor-gym",
        description="conductor-gym: train, evaluate and serve conductors, LMs that plan "
        "workflows for a pool of worker LLMs (arXiv 2512.04388).",
    )
    parser.add_argument("--version", action="version", version=f"conductor-gym {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.register(subparsers)
    return parser


def error_line(command: str, exc: ConductorGymError) -> str:
    """The one line ``main`` prints for ``exc`` raised by ``command``: the setting at fault
    as its flag (``--tasks: unknown task source ...``), the message on one line, and for
    ``--tasks`` and ``--pool`` the command that lists the valid names."""
    text = one_line(str(exc))
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
    (command,) = [command for command in COMMANDS if command.name == args.command]
    try:
        return int(command.run(args))
    except BrokenPipeError:  # the reader left (`| head`): stop quietly, as a shell tool does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except ConductorGymError as exc:
        print(error_line(args.command, exc), file=sys.stderr)
        return 1 if isinstance(exc, InfrastructureError) else 2


if __name__ == "__main__":
    raise SystemExit(main())
