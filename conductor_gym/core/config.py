"""``EnvConfig``: every setting of a conductor episode, declared once.

The env (:class:`~conductor_gym.core.env.ConductorEnv`, ``gym.make``), the vector env,
the trainers' scoring bridge (:class:`~conductor_gym.training.scoring.Scorer`), the evaluation
harness, ``train prepare`` and every trainer adapter take an :class:`EnvConfig`, and
every command line's env flags are generated from it (:func:`add_config_arguments`).
Results, leaderboard submissions and training configs record it as JSON
(:meth:`EnvConfig.to_dict`), and :meth:`EnvConfig.from_dict` rebuilds it. A new setting
is added here, once, with its default and its documentation.

Values are checked when the config is built: a wrong type or range raises
:class:`~conductor_gym.errors.ConfigurationError` naming the field (``shuffle_workers``
takes a bool, not ``"yes"``). Fields may hold live objects (a
:class:`~conductor_gym.tasks.TaskSource`, a ready
:class:`~conductor_gym.pool.pool.WorkerPool`, a
:class:`~conductor_gym.workers.cache.ResponseCache`): the config then builds, but
:meth:`EnvConfig.to_dict` refuses it, naming the field, since such a run could not be
rebuilt from its record.

The pool and the task source are built in one place, :meth:`EnvConfig.build_pool` and
:meth:`EnvConfig.build_tasks`; :meth:`EnvConfig.shared` builds both once so that many
envs (a vector env, a scorer, an evaluation) share one pool, its clients and its cache.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from conductor_gym.core.flags import add_flag, json_or_text
from conductor_gym.core.prompts import PromptTemplates
from conductor_gym.core.reward import RewardScheme
from conductor_gym.errors import ConfigurationError
from conductor_gym.pool.pool import DEFAULT_POOL, WorkerPool, make_pool
from conductor_gym.tasks import DEFAULT_TASKS, TaskSource, make_task_source
from conductor_gym.workers.bound import RetryPolicy
from conductor_gym.workers.budget import Budget
from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "CONFIG_FIELDS",
    "EnvConfig",
    "add_config_arguments",
    "config_from_arguments",
    "settings_from_arguments",
]


class EnvConfig(BaseModel):
    """Every setting of a conductor episode (see the module docstring).

    Build it with keywords (``EnvConfig(tasks="offline/countdown", k=3)``); change it with
    :meth:`replace`; record it with :meth:`to_dict` / :meth:`to_json`.
    """

    model_config = ConfigDict(
        frozen=True, extra="forbid", arbitrary_types_allowed=True, validate_default=False
    )

    tasks: Any = Field(
        DEFAULT_TASKS,
        description="task source: a name (conductor-gym tasks list) or a TaskSource",
    )
    task_options: dict[str, Any] = Field(
        default_factory=dict,
        description="options of a named task source (e.g. data_dir, split, limit)",
    )
    pool: Any = Field(
        DEFAULT_POOL,
        description="worker pool: a preset name (conductor-gym pools list), a .toml "
        "file, a list of WorkerSpec, or a ready WorkerPool",
    )
    k: int | None = Field(
        None, ge=1, strict=True, description="workers per episode, a random k-of-n subset"
    )
    shuffle_workers: bool | None = Field(
        None, strict=True, description="shuffle the Model i ids every episode (None: the pool's)"
    )
    reward: Any = Field(
        "paper", description="reward scheme: 'paper' (1/0.5/0), 'binary', or a RewardScheme"
    )
    max_steps: int = Field(5, ge=1, strict=True, description="longest plan (paper: 5)")
    max_recursions: int = Field(
        0, ge=0, strict=True, description="inner calls per episode (recursion, paper §3.2)"
    )
    force_recursion: StrictBool | StrictInt | StrictFloat = Field(
        False, description="require one inner call: a bool or a probability per episode"
    )
    initial_round_weight: float = Field(
        0.0,
        ge=0.0,
        strict=True,
        description="weight w of the first answer's reward: (w r0 + r) / (1 + w)",
    )
    templates: PromptTemplates | None = Field(
        None, description="every prompt the env writes (None: ours)"
    )
    question_to_all_workers: bool = Field(
        False, strict=True, description="give the question to every step's worker, not the first"
    )
    max_plan_chars: int = Field(65536, ge=1, strict=True, description="longest completion parsed")
    retry: RetryPolicy | None = Field(
        None, description="retries of transient worker errors (None: 3 attempts)"
    )
    episode_budget: Budget | None = Field(
        None, description="limits on each episode's calls, tokens, USD (None: the pool's)"
    )
    cache: Any = Field(None, description="response cache: a file (read-write) or a ResponseCache")

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _configuration_error(exc) from None

    # -- checks -----------------------------------------------------------------------

    @field_validator("tasks")
    @classmethod
    def _check_tasks(cls, value: Any) -> Any:
        if isinstance(value, str | TaskSource):
            return value
        raise ValueError(
            f"must be a task source name or a TaskSource, got {value!r} (a source class "
            "subclasses conductor_gym.tasks.TaskSource for its optional hooks)"
        )

    @field_validator("pool")
    @classmethod
    def _check_pool(cls, value: Any) -> Any:
        if isinstance(value, os.PathLike):
            return os.fspath(value)
        if isinstance(value, str | WorkerPool):
            return value
        if isinstance(value, Sequence) and value:
            specs = [WorkerSpec(**s) if isinstance(s, Mapping) else s for s in value]
            if all(isinstance(s, WorkerSpec) for s in specs):
                return tuple(specs)
        raise ValueError(
            f"must be a preset name, a .toml file, a list of WorkerSpec or a WorkerPool, "
            f"got {value!r}"
        )

    @field_validator("reward")
    @classmethod
    def _check_reward(cls, value: Any) -> Any:
        if isinstance(value, Mapping):
            return RewardScheme(**value)
        if isinstance(value, str | RewardScheme):
            return value
        raise ValueError(f"must be a scheme name or a RewardScheme, got {value!r}")

    @field_serializer("pool")
    def _dump_pool(self, value: Any) -> Any:
        if isinstance(value, tuple):
            return [
                {f.name: _plain(getattr(s, f.name)) for f in dataclasses.fields(s)} for s in value
            ]
        return value

    @field_validator("cache")
    @classmethod
    def _check_cache(cls, value: Any) -> Any:
        from conductor_gym.workers.cache import ResponseCache

        if isinstance(value, os.PathLike):
            return os.fspath(value)
        if value is None or isinstance(value, str | ResponseCache):
            return value
        raise ValueError(f"must be a file path or a ResponseCache, got {value!r}")

    @field_validator("force_recursion")
    @classmethod
    def _check_force(cls, value: bool | float) -> bool | float:
        if isinstance(value, bool):
            return value
        if 0.0 <= value <= 1.0:
            return float(value)
        raise ValueError(f"must be a bool or a probability in [0, 1], got {value!r}")

    @field_validator("initial_round_weight")
    @classmethod
    def _check_weight(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError(f"must be a finite number >= 0, got {value!r}")
        return value

    @model_validator(mode="after")
    def _check_together(self) -> EnvConfig:
        if self.force_recursion and self.max_recursions == 0:
            raise ValueError("force_recursion: needs max_recursions >= 1")
        if self.task_options and not isinstance(self.tasks, str):
            raise ValueError("task_options: only for a task source given by name")
        if isinstance(self.pool, WorkerPool) and (
            self.k is not None or self.shuffle_workers is not None or self.cache is not None
        ):
            raise ValueError(
                "pool: k, shuffle_workers and cache cannot override a ready WorkerPool "
                "(pass a preset name, file or specs instead)"
            )
        return self

    # -- building ---------------------------------------------------------------------

    def build_tasks(self) -> TaskSource:
        """The task source (built from its name and options, or the one given)."""
        if isinstance(self.tasks, str):
            source = make_task_source(self.tasks, **self.task_options)
        else:
            source = self.tasks
        if len(source) < 1:
            raise ConfigurationError("the task source is empty", field="tasks")
        return source

    def build_pool(self) -> WorkerPool:
        """The worker pool, with ``k``, ``shuffle_workers`` and ``cache`` applied."""
        return make_pool(self.pool, k=self.k, shuffle=self.shuffle_workers, cache=self.cache)

    def shared(self) -> EnvConfig:
        """This config with the task source and the pool built once: envs made from the
        result share one pool (its clients, rate limits, cache and run budget)."""
        if isinstance(self.pool, WorkerPool) and not isinstance(self.tasks, str):
            return self
        return self.replace(
            tasks=self.build_tasks(),
            task_options={},
            pool=self.build_pool(),
            k=None,
            shuffle_workers=None,
            cache=None,
        )

    def replace(self, **changes: Any) -> EnvConfig:
        """A copy with ``changes`` applied and checked (unknown names raise)."""
        if unknown := sorted(set(changes) - set(CONFIG_FIELDS)):
            raise ConfigurationError(
                f"unknown setting(s) {unknown}; valid: {sorted(CONFIG_FIELDS)}",
                field=unknown[0],
            )
        return EnvConfig(**{**self.settings(), **changes})

    def settings(self) -> dict[str, Any]:
        """Every field as given (live objects included), for ``EnvConfig(**...)``."""
        return {name: getattr(self, name) for name in CONFIG_FIELDS}

    # -- records ----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The config as JSON data; :meth:`from_dict` rebuilds an equal config.

        Raises :class:`~conductor_gym.errors.ConfigurationError` naming the field that
        holds a live object (a task source, a ready pool, a cache object).
        """
        for name in ("tasks", "pool", "cache"):
            value = getattr(self, name)
            if not (value is None or isinstance(value, str | tuple)):
                raise ConfigurationError(
                    f"holds a live {type(value).__name__}, which a record cannot rebuild; "
                    "give it by name or file",
                    field=name,
                )
        data: dict[str, Any] = self.model_dump(mode="json")
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "env config") -> EnvConfig:
        """Rebuild a config from :meth:`to_dict`'s data; unknown keys raise."""
        if not isinstance(data, Mapping):
            raise ConfigurationError(f"{where}: expected a JSON object, got {data!r}")
        if unknown := sorted(set(data) - set(CONFIG_FIELDS)):
            raise ConfigurationError(
                f"{where}: unknown setting(s) {unknown}; valid: {sorted(CONFIG_FIELDS)}",
                field=unknown[0],
            )
        return cls(**_revive(dict(data)))

    @classmethod
    def from_json(cls, text: str, *, where: str = "env config") -> EnvConfig:
        return cls.from_dict(json.loads(text), where=where)

    def describe(self) -> dict[str, Any]:
        """A JSON-safe account of the config, naming live objects by type (for logs and
        error messages; unlike :meth:`to_dict` it never raises)."""
        out: dict[str, Any] = {}
        for name in CONFIG_FIELDS:
            value = getattr(self, name)
            try:
                out[name] = self.model_dump(mode="json", include={name})[name]
            except Exception:
                out[name] = f"<{type(value).__name__}>"
        return out


CONFIG_FIELDS: tuple[str, ...] = tuple(EnvConfig.model_fields)
"""Every setting's name, in declaration order."""


def _plain(value: Any) -> Any:
    return dict(value) if isinstance(value, Mapping) else value


def _revive(data: dict[str, Any]) -> dict[str, Any]:
    """JSON forms back to the dataclasses pydantic does not rebuild by itself."""
    templates = data.get("templates")
    if isinstance(templates, Mapping):
        from conductor_gym.core.prompts import FewShotExample

        examples = templates.get("examples")
        fields = dict(templates)
        if isinstance(examples, list):
            fields["examples"] = tuple(
                FewShotExample(**e) if isinstance(e, Mapping) else e for e in examples
            )
        data["templates"] = PromptTemplates(**fields)
    return data


def _configuration_error(exc: ValidationError) -> ConfigurationError:
    """The first problem of a pydantic error as one line that names the field."""
    error = exc.errors()[0]
    field = str(error["loc"][0]) if error["loc"] else None
    value = error.get("input")
    kind = str(error["type"])
    info = EnvConfig.model_fields.get(field or "")
    if kind == "value_error":  # our validators' own words
        message = str(error["msg"]).removeprefix("Value error, ")
        if (": " in message and field is None) or message.startswith(f"{field}: "):
            field, _, message = message.partition(": ")
    elif kind == "extra_forbidden":
        message = f"unknown setting; valid: {sorted(CONFIG_FIELDS)}"
    elif (
        info is not None
        and kind.startswith(("int_", "greater_than"))
        and _is_plain(info.annotation, int)
    ):
        low = next((m.ge for m in info.metadata if hasattr(m, "ge")), None)
        message = f"must be an int{f' >= {low}' if low is not None else ''}, got {value!r}"
    elif kind.startswith("bool"):
        message = f"must be a bool (True or False), got {value!r}"
    elif kind.startswith(("float_", "greater_than")):
        message = f"must be a number >= 0, got {value!r}"
    else:
        message = f"{error['msg']}, got {value!r}"
    return ConfigurationError(message, field=field)


# ---------------------------------------------------------------- command-line flags


def _is_plain(annotation: Any, kind: type) -> bool:
    args = typing.get_args(annotation)
    if annotation is kind:
        return True
    return isinstance(annotation, types.UnionType) and set(args) <= {kind, type(None)}


def add_config_arguments(
    parser: argparse.ArgumentParser,
    *,
    exclude: Sequence[str] = (),
    defaults: EnvConfig | None = None,
) -> argparse._ArgumentGroup:
    """Add one ``--flag`` per :class:`EnvConfig` setting to ``parser``.

    Every flag defaults to "not given" (the config's default applies); its help shows the
    value in ``defaults``, the config the flags will be applied over (``None``:
    :class:`EnvConfig`'s defaults). ``--tasks``, ``--task-option KEY=VALUE``
    (repeatable), ``--pool`` and ``--cache`` are added too unless in ``exclude``. Bool
    settings take ``--name`` / ``--no-name``; ints and floats a number; the others a JSON
    value (``--episode-budget '{"max_calls": 4}'``, ``--reward binary``), as
    :func:`~conductor_gym.core.flags.add_flag`, the project's one flag generator, makes
    them. Read them back with :func:`config_from_arguments`.
    """
    group = parser.add_argument_group("env settings (EnvConfig)")
    skip = set(exclude)
    shown = defaults or EnvConfig()
    for name, info in EnvConfig.model_fields.items():
        if name in skip:
            continue
        flag = "--" + name.replace("_", "-")
        doc = info.description or ""
        default = f" (default: {_shown(getattr(shown, name))})" if name != "task_options" else ""
        help_text = doc + default
        if name == "task_options":
            group.add_argument(
                "--task-option",
                dest="task_options",
                action="append",
                metavar="KEY=VALUE",
                default=None,
                help=f"{doc}; VALUE is read as JSON when it parses, else as text (repeatable)",
            )
        elif name in {"tasks", "pool", "cache"}:  # a name or a path
            add_flag(group, flag, dest=name, annotation=str, metavar=name.upper(), help=help_text)
        else:
            add_flag(group, flag, dest=name, annotation=info.annotation, help=help_text)
    return group


def _shown(value: Any) -> str:
    """A default as a flag's help shows it: its ``repr``, or its type when that is long."""
    text = repr(value)
    return text if len(text) <= 60 else f"a {type(value).__name__}"


def settings_from_arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The settings whose flags were given (see :func:`add_config_arguments`), as
    ``EnvConfig`` keywords."""
    changes: dict[str, Any] = {}
    for name in CONFIG_FIELDS:
        value = getattr(args, name, None)
        if value is None:
            continue
        if name == "task_options":
            value = dict(_key_value(item, "--task-option") for item in value)
        changes[name] = value
    return _revive(changes)


def config_from_arguments(args: argparse.Namespace, base: EnvConfig | None = None) -> EnvConfig:
    """The :class:`EnvConfig` of parsed flags: ``base`` (default: all defaults) with every
    flag that was given applied."""
    changes = settings_from_arguments(args)
    base = base or EnvConfig()
    return base.replace(**changes) if changes else base


def _key_value(item: str, flag: str) -> tuple[str, Any]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise ConfigurationError(f"{flag} takes KEY=VALUE, got {item!r}", field="task_options")
    return key, json_or_text(value)
