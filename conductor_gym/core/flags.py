"""The one generator of command-line flags from typed settings.

:func:`add_flag` turns one setting (its option, destination, type annotation, help and
choices) into its ``argparse`` flag; every generated flag of the project goes through
it: :class:`~conductor_gym.core.config.EnvConfig`'s
(:func:`~conductor_gym.core.config.add_config_arguments`), the TRL recipes' ``Args``
fields (``conductor_gym.trainers.trl.settings``) and the classic baselines' settings
(``conductor_gym.trainers.classic.compact_setup.parse_settings``). By the annotation,
``X | None`` read as ``X``:

* ``bool``: ``--name`` / ``--no-name``;
* ``int``, ``float``, ``str``: one value (metavar ``N``, ``X``, ``TEXT``; the choices
  instead when there are some);
* ``tuple[str, ...]``: a comma-separated list (``A,B``), read as a tuple;
* anything else: a JSON value, read as text when it does not parse (``--reward binary``,
  ``--episode-budget '{"max_calls": 4}'``).

Every flag defaults to ``None``, "not given", so that the setting's own default applies
where the flag is absent.
"""

from __future__ import annotations

import argparse
import json
import types
import typing
from collections.abc import Sequence
from typing import Any

__all__ = ["add_flag", "comma_list", "json_or_text", "plain_type"]

_METAVARS = {int: "N", float: "X", str: "TEXT"}


def plain_type(annotation: Any) -> tuple[Any, bool]:
    """``annotation`` without ``| None``, and whether ``None`` is allowed."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        rest = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(rest) == 1:
            return rest[0], True
    return annotation, False


def comma_list(text: str) -> tuple[str, ...]:
    """A comma-separated list flag's value: its non-blank items, stripped."""
    return tuple(item.strip() for item in text.split(",") if item.strip())


def json_or_text(text: str) -> Any:
    """A JSON flag's value: the JSON ``text`` holds, or ``text`` itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def add_flag(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    option: str,
    *,
    dest: str,
    annotation: Any,
    help: str,
    choices: Sequence[str] | None = None,
    metavar: str | None = None,
) -> argparse.Action:
    """Add the flag ``option`` of a setting typed ``annotation`` to ``parser`` (module
    docstring), parsed into ``dest``; ``metavar`` replaces the type's."""
    kind, _ = plain_type(annotation)
    if kind is bool:
        return parser.add_argument(
            option, dest=dest, action=argparse.BooleanOptionalAction, default=None, help=help
        )
    if kind in _METAVARS:
        return parser.add_argument(
            option,
            dest=dest,
            type=kind,
            choices=choices,
            default=None,
            metavar=metavar or (_METAVARS[kind] if choices is None else None),
            help=help,
        )
    if typing.get_origin(kind) is tuple:
        return parser.add_argument(
            option, dest=dest, type=comma_list, default=None, metavar=metavar or "A,B", help=help
        )
    return parser.add_argument(
        option, dest=dest, type=json_or_text, default=None, metavar=metavar or "JSON", help=help
    )
