"""Every option and positional argument of every ``conductor-gym`` command has a help text
(``--help`` is a newcomer's manual: an option printed without one says nothing)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

from conductor_gym.cli.main import build_parser


def _commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("conductor-gym",)
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield " ".join(path), parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def test_every_option_of_every_command_has_help() -> None:
    commands = dict(_commands(build_parser()))
    assert {"conductor-gym evaluate", "conductor-gym serve", "conductor-gym view"} <= set(commands)
    silent = []
    for command, parser in commands.items():
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                continue
            if action.help is argparse.SUPPRESS:
                continue
            if not (action.help or "").strip():
                name = "/".join(action.option_strings) or action.dest
                silent.append(f"{command} {name}")
    assert not silent, f"options without help: {sorted(silent)}"


def test_every_command_has_a_one_line_help() -> None:
    silent = []
    for command, parser in _commands(build_parser()):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                helped = {choice.dest for choice in action._choices_actions if choice.help}
                silent += [f"{command} {name}" for name in action.choices if name not in helped]
    assert not silent, f"commands without help: {silent}"
