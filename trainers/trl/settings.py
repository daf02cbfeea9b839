"""A recipe's settings, declared once as dataclass fields: flags and checks come from them.

A field is declared with :func:`setting` (its default and its ``help``); its command-line
flag is generated (:func:`add_arguments`) by the project's one flag generator,
:func:`~conductor_gym.core.flags.add_flag`, which makes ``EnvConfig``'s too: named
``--field-name`` (or the ``flag`` given), typed by the field's annotation, with the help
and the class's own default, and "not given" unless passed, so that the dataclass's
default applies (:func:`values_from_arguments` reads back only the flags given). By type:

* ``bool``: ``--name`` / ``--no-name``;
* ``int``, ``float``, ``str`` (``X | None`` alike): one value, ``choices`` when declared;
* ``tuple[str, ...]``: a comma-separated list;
* an ``EnvConfig`` field: every env flag, read back onto the field's default;
* a dataclass field (a stage's settings): one flag per sub-field named in ``expose``
  (``{"steps": ("--warm-start-steps", "help")}``), applied to the field's default (or to
  the sub-dataclass's own defaults where the field's default is ``None``);
* ``flag=None``: no flag (settings only the Python API takes).

:func:`check_fields` checks every value against its annotation when the dataclass is
built and raises :class:`~conductor_gym.errors.ConfigurationError` naming the field.
Each recipe declares every field of its ``Args`` itself (no recipe extends another's).
"""

from __future__ import annotations

import argparse
import dataclasses
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from conductor_gym.core.config import EnvConfig, add_config_arguments, config_from_arguments
from conductor_gym.core.flags import add_flag, plain_type
from conductor_gym.errors import ConfigurationError

__all__ = [
    "Flag",
    "add_arguments",
    "check_fields",
    "flags",
    "setting",
    "values_from_arguments",
]

_DERIVED = "--"  # the metadata's ``flag`` when the flag is derived from the field's name


def setting(
    default: Any = dataclasses.MISSING,
    *,
    help: str,
    default_factory: Any = dataclasses.MISSING,
    flag: str | None = _DERIVED,
    choices: Sequence[str] | None = None,
    expose: Mapping[str, tuple[str, str]] | None = None,
) -> Any:
    """A dataclass field with its documentation and how its flag is made (module
    docstring). ``default`` / ``default_factory`` are :func:`dataclasses.field`'s."""
    metadata = {"help": help, "flag": flag, "choices": choices, "expose": dict(expose or {})}
    if default_factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=default_factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


@dataclasses.dataclass(frozen=True)
class Flag:
    """One generated flag: the ``field`` (with ``sub`` for a stage's sub-field) it sets."""

    field: str
    option: str
    kind: str
    """``"bool"``, ``"value"``, ``"list"`` or ``"sub"``."""
    type: Any
    """The setting's type: the field's annotation without ``| None``."""
    help: str
    choices: Sequence[str] | None = None
    sub: str | None = None

    @property
    def dest(self) -> str:
        return self.field if self.sub is None else f"{self.field}.{self.sub}"


def _metadata(cls: type, name: str) -> Mapping[str, Any]:
    """The metadata :func:`setting` gave the field ``name`` of dataclass ``cls``."""
    declared = getattr(cls, "__dataclass_fields__", {}).get(name)
    if declared is None or "help" not in declared.metadata:
        raise TypeError(f"{cls.__name__}.{name} is not declared with setting(help=...)")
    metadata: Mapping[str, Any] = declared.metadata
    return metadata


def _default(field: dataclasses.Field[Any]) -> Any:
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return None if field.default is dataclasses.MISSING else field.default


def _help(text: str, default: Any) -> str:
    """``text`` with the default (``None``'s meaning is the text's own)."""
    if default is None:
        return text
    shown = ",".join(default) if isinstance(default, tuple) else default
    return f"{text} (default: {shown})"


def flags(cls: type) -> list[Flag]:
    """The flags of dataclass ``cls``'s fields (``EnvConfig`` fields and ``flag=None``
    fields have none of their own), in declaration order."""
    hints = typing.get_type_hints(cls)
    found: list[Flag] = []
    for field in dataclasses.fields(cls):
        meta = _metadata(cls, field.name)
        hint, _ = plain_type(hints[field.name])
        if meta["flag"] is None or hint is EnvConfig:
            continue
        option = "--" + field.name.replace("_", "-") if meta["flag"] == _DERIVED else meta["flag"]
        default = _default(field)
        if meta["expose"]:
            sub_hints = typing.get_type_hints(hint)
            sub_defaults = default if default is not None else hint()
            for sub, (sub_option, sub_help) in meta["expose"].items():
                found.append(
                    Flag(
                        field.name,
                        sub_option,
                        "sub",
                        sub_hints[sub],
                        _help(sub_help, getattr(sub_defaults, sub)),
                        sub=sub,
                    )
                )
        elif hint is bool:
            found.append(Flag(field.name, option, "bool", bool, _help(meta["help"], default)))
        elif hint in (int, float, str):
            found.append(
                Flag(
                    field.name, option, "value", hint, _help(meta["help"], default), meta["choices"]
                )
            )
        elif typing.get_origin(hint) is tuple:
            found.append(Flag(field.name, option, "list", hint, _help(meta["help"], default)))
        else:
            raise TypeError(
                f"{cls.__name__}.{field.name}: no flag for {hint!r}; declare it with flag=None"
            )
    return found


def add_arguments(
    parser: argparse.ArgumentParser, cls: type, *, env: bool = True, title: str | None = None
) -> None:
    """Add the flags of dataclass ``cls``'s fields to ``parser`` (module docstring); with
    ``env``, every ``EnvConfig`` setting's flag too."""
    group = parser.add_argument_group(title or f"{cls.__module__}.{cls.__qualname__}")
    for flag in flags(cls):
        add_flag(
            group,
            flag.option,
            dest=flag.dest,
            annotation=flag.type,
            help=flag.help,
            choices=flag.choices,
        )
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
        if env and plain_type(hints[field.name])[0] is EnvConfig:
            add_config_arguments(parser, defaults=_default(field))  # help: the recipe's env


def values_from_arguments(
    cls: type, args: argparse.Namespace, *, env: EnvConfig | None = None
) -> dict[str, Any]:
    """The keywords of ``cls`` that the parsed flags give (see :func:`add_arguments`):
    only the flags given; an ``EnvConfig`` field is ``env`` when passed, else the env
    flags applied to the field's default."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values: dict[str, Any] = {}
    subs: dict[str, dict[str, Any]] = {}
    for flag in flags(cls):
        value = getattr(args, flag.dest, None)
        if value is None:
            continue
        if flag.sub is None:
            values[flag.field] = value
        else:
            subs.setdefault(flag.field, {})[flag.sub] = value
    hints = typing.get_type_hints(cls)
    for name, given in subs.items():
        base = _default(fields[name])
        hint, _ = plain_type(hints[name])
        values[name] = dataclasses.replace(base, **given) if base is not None else hint(**given)
    for name, field in fields.items():
        if plain_type(hints[name])[0] is EnvConfig:
            values[name] = env if env is not None else config_from_arguments(args, _default(field))
    return values


def check_fields(instance: Any) -> None:
    """Check every field of dataclass ``instance`` against its annotation (lists become
    tuples where the annotation is a tuple); raises ``ConfigurationError`` naming the
    first field whose value does not fit."""
    hints = typing.get_type_hints(type(instance))
    for field in dataclasses.fields(instance):
        value = getattr(instance, field.name)
        hint, optional = plain_type(hints[field.name])
        if value is None and optional:
            continue
        checked = _checked(value, hint)
        if checked is _WRONG:
            raise ConfigurationError(
                f"must be {_describe(hint, optional)}, got {value!r}", field=field.name
            )
        if checked is not value:
            object.__setattr__(instance, field.name, checked)


_WRONG = object()


def _checked(value: Any, hint: Any) -> Any:
    """``value`` (or its tuple form) when it fits ``hint``, else ``_WRONG``."""
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if hint is bool:
        return value if isinstance(value, bool) else _WRONG
    if hint is int:
        return value if isinstance(value, int) and not isinstance(value, bool) else _WRONG
    if hint is float:
        return value if isinstance(value, int | float) and not isinstance(value, bool) else _WRONG
    if origin is tuple:
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return value if isinstance(value, tuple) else tuple(value)
        return _WRONG
    kind = origin or hint
    return value if isinstance(kind, type) and isinstance(value, kind) else _WRONG


def _describe(hint: Any, optional: bool) -> str:
    if typing.get_origin(hint) is tuple:
        text = "a tuple of str"
    else:
        name = getattr(typing.get_origin(hint) or hint, "__name__", str(hint))
        text = f"{'an' if name[0] in 'aeiou' else 'a'} {name}"
    return f"{text} or None" if optional else text
