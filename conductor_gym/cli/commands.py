"""Every ``conductor-gym`` command, in the order ``conductor-gym --help`` lists them.

Adding a command: write its :class:`~conductor_gym.cli.command.Command` (``name``,
``help``, ``register``, ``run``) in its own module of :mod:`conductor_gym.cli` and list
an instance here; :func:`conductor_gym.cli.main.main` does the rest.
"""

from __future__ import annotations

from conductor_gym.cli.command import Command
from conductor_gym.cli.demo import DemoCommand
from conductor_gym.cli.evaluate import EvaluateCommand, SuitesCommand
from conductor_gym.cli.leaderboard import LeaderboardCommand
from conductor_gym.cli.pools import PoolsCommand
from conductor_gym.cli.rescore import RescoreCommand
from conductor_gym.cli.serve import ServeCommand
from conductor_gym.cli.sim import SimCommand
from conductor_gym.cli.tasks import TasksCommand
from conductor_gym.cli.train import TrainCommand
from conductor_gym.cli.view import ViewCommand

__all__ = ["COMMANDS"]

COMMANDS: tuple[Command, ...] = (
    DemoCommand(),
    TasksCommand(),
    PoolsCommand(),
    LeaderboardCommand(),
    EvaluateCommand(),
    SuitesCommand(),
    TrainCommand(),
    ViewCommand(),
    RescoreCommand(),
    ServeCommand(),
    SimCommand(),
)
"""The commands, each once (names are unique)."""
