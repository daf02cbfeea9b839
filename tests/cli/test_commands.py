"""Every ``conductor-gym`` command is one object of one registry (issue 43): a ``name``, a
one-line ``help``, ``register`` and ``run``, and ``conductor-gym --help`` lists exactly
the registry, in its order."""

from __future__ import annotations

import argparse
import inspect

import pytest

from conductor_gym.cli.command import Command
from conductor_gym.cli.commands import COMMANDS
from conductor_gym.cli.main import build_parser, main


def _top_level(parser: argparse.ArgumentParser) -> argparse._SubParsersAction:  # type: ignore[type-arg]
    (subparsers,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return subparsers


def test_every_registered_command_has_register_and_run() -> None:
    names = [command.name for command in COMMANDS]
    assert len(names) == len(set(names)), names
    for command in COMMANDS:
        assert isinstance(command, Command), command
        assert command.name and command.help.strip(), type(command).__name__
        for hook in ("register", "run"):
            method = getattr(command, hook)
            assert callable(method) and not inspect.isabstract(type(command))
            assert list(inspect.signature(method).parameters) == [
                "subparsers" if hook == "register" else "args"
            ]


def test_help_lists_exactly_the_registry_in_its_order(capsys: pytest.CaptureFixture[str]) -> None:
    subparsers = _top_level(build_parser())
    assert list(subparsers.choices) == [command.name for command in COMMANDS]
    helps = {action.dest: action.help for action in subparsers._choices_actions}
    assert helps == {command.name: command.help for command in COMMANDS}
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    names = [command.name for command in COMMANDS]
    assert text.split("{", 1)[1].split("}", 1)[0].split(",") == names
    # one row per command under "positional arguments", indented four spaces
    lines = text.splitlines()
    rows = [line.split()[0] for line in lines if line[:4] == "    " and line[4:5] != " "]
    assert [row for row in rows if row[0] != "{"] == names
    flat = "".join(text.split())  # argparse wraps the help lines at the terminal's width
    for command in COMMANDS:
        assert "".join(command.help.split()) in flat, command.name


def test_main_runs_the_named_commands_run(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tasks,) = [command for command in COMMANDS if command.name == "tasks"]
    seen: list[argparse.Namespace] = []

    def run(args: argparse.Namespace) -> int:
        seen.append(args)
        return 7

    monkeypatch.setattr(tasks, "run", run)  # fault injection: a command's own exit status
    assert main(["tasks", "list"]) == 7
    assert [args.command for args in seen] == ["tasks"]
