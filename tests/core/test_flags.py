"""One flag generator (issue 43): :func:`conductor_gym.core.flags.add_flag` makes the flag
of every typed setting, ``EnvConfig``'s and the TRL recipes' alike."""

from __future__ import annotations

import argparse
import typing
from typing import Any

import pytest

from conductor_gym.core.config import EnvConfig, add_config_arguments
from conductor_gym.core.flags import add_flag

SHAPE = ("dest", "type", "choices", "default", "metavar", "help", "nargs", "const")


def _shape(action: argparse.Action) -> tuple[Any, ...]:
    return (type(action), *(getattr(action, name) for name in SHAPE))


def _generated(option: str, **kwargs: Any) -> argparse.Action:
    return add_flag(argparse.ArgumentParser(), option, **kwargs)


@pytest.mark.parametrize(
    ("annotation", "argv", "value"),
    [
        (bool, ["--x"], True),
        (bool | None, ["--no-x"], False),
        (int | None, ["--x", "3"], 3),
        (float, ["--x", "0.5"], 0.5),
        (str, ["--x", "text"], "text"),
        (tuple[str, ...] | None, ["--x", "a, b,"], ("a", "b")),
        (dict[str, Any], ["--x", '{"k": 1}'], {"k": 1}),
        (Any, ["--x", "binary"], "binary"),
    ],
)
def test_each_type_gets_its_flag_and_not_given_is_none(
    annotation: Any, argv: list[str], value: Any
) -> None:
    parser = argparse.ArgumentParser()
    add_flag(parser, "--x", dest="x", annotation=annotation, help="h")
    assert parser.parse_args(argv).x == value
    assert parser.parse_args([]).x is None


def test_choices_replace_the_metavar_and_are_enforced() -> None:
    parser = argparse.ArgumentParser(exit_on_error=False)
    action = add_flag(parser, "--m", dest="m", annotation=str, help="h", choices=("a", "b"))
    assert action.metavar is None and parser.parse_args(["--m", "b"]).m == "b"
    with pytest.raises(argparse.ArgumentError, match="invalid choice"):
        parser.parse_args(["--m", "c"])


def test_every_env_flag_is_the_generators() -> None:
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    actions = {a.dest: a for a in parser._actions}
    for name, info in EnvConfig.model_fields.items():
        if name == "task_options":  # KEY=VALUE, repeatable: its own action
            continue
        action = actions[name]
        annotation = str if name in {"tasks", "pool", "cache"} else info.annotation
        metavar = name.upper() if name in {"tasks", "pool", "cache"} else None
        made = _generated(
            action.option_strings[0],
            dest=name,
            annotation=annotation,
            help=str(action.help),
            metavar=metavar,
        )
        assert _shape(action) == _shape(made), name


def test_every_recipe_flag_is_the_generators() -> None:
    pytest.importorskip("conductor_gym.trainers.trl.settings")
    from conductor_gym.trainers.trl import settings
    from conductor_gym.trainers.trl.recipes import RECIPES

    for recipe in RECIPES.names():
        cls = RECIPES.get(recipe)
        parser = argparse.ArgumentParser()
        settings.add_arguments(parser, cls, env=False)
        actions = {a.dest: a for a in parser._actions}
        for flag in settings.flags(cls):
            made = _generated(
                flag.option,
                dest=flag.dest,
                annotation=flag.type,
                help=flag.help,
                choices=flag.choices,
            )
            assert _shape(actions[flag.dest]) == _shape(made), (recipe, flag.option)
        assert typing.get_type_hints(cls)["env"] is EnvConfig
