"""The shape of a ``conductor-gym`` command (the shape TRL's CLI gives its commands).

A command is an object with a ``name``, a one-line ``help``, ``register(subparsers)``,
which adds its parser (options, sub-commands) to the top-level sub-parsers, and
``run(args) -> int``, which runs it on the parsed namespace and returns the exit status.
Every command is listed once, in :data:`conductor_gym.cli.commands.COMMANDS`;
:func:`conductor_gym.cli.main.main` registers them in that order and runs the one named.

A command with sub-commands (``pools list`` / ``pools check``) is a
:class:`CommandGroup`: each sub-command's parser sets ``handler`` (a function of the
namespace returning the exit status) and the group's ``run`` calls it. Nothing heavy is
imported by registering: a command imports what it needs when it runs.
"""

from __future__ import annotations

import abc
import argparse
from typing import Any, ClassVar, TypeAlias

__all__ = ["Command", "CommandGroup", "Subparsers", "one_line"]

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""The object ``ArgumentParser.add_subparsers`` returns, that commands register on."""


class Command(abc.ABC):
    """One top-level ``conductor-gym`` command (module docstring)."""

    name: ClassVar[str]
    """The command's name on the command line (``conductor-gym NAME``)."""
    help: ClassVar[str]
    """The one line ``conductor-gym --help`` shows for it."""

    def add_parser(self, subparsers: Subparsers, **options: Any) -> argparse.ArgumentParser:
        """The command's own parser, added to ``subparsers`` under :attr:`name` with
        :attr:`help` (``options``: ``add_parser``'s other keywords)."""
        parser: argparse.ArgumentParser = subparsers.add_parser(
            self.name, help=self.help, **options
        )
        return parser

    @abc.abstractmethod
    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        """Add the command's parser, options and sub-commands to ``subparsers``; returns
        the command's parser."""

    @abc.abstractmethod
    def run(self, args: argparse.Namespace) -> int:
        """Run the command on the parsed ``args``; returns the exit status."""


class CommandGroup(Command):
    """A command whose sub-commands' parsers each set ``handler`` (module docstring)."""

    def run(self, args: argparse.Namespace) -> int:
        """Run the sub-command named in ``args`` (its ``handler``)."""
        return int(args.handler(args))


def one_line(text: str) -> str:
    """``text``'s non-blank lines, stripped and joined with ``"; "`` (an error's message
    as the one line a command prints)."""
    return "; ".join(part.strip() for part in text.splitlines() if part.strip())
