"""``load_environment(**arguments)``: the conductor-gym env for verifiers from plain
keyword arguments, and :data:`ARGUMENTS`, their help text.

verifiers 0.4 builds an env from its run config (``vf-eval``'s ``--env.taskset.*``
flags, or ``verifiers.v1.load_environment(EnvConfig)``). :func:`load_environment`
is the keyword form of the same thing for Python callers and hub tooling:
``load_environment(tasks="offline", max_steps=3)`` is
``vf-eval conductor-gym-env --env.taskset.tasks offline --env.taskset.max-steps 3``.
Each argument is a field of :class:`~.taskset.ConductorTasksetConfig`; its help text is
the field's docstring, the same text ``vf-eval conductor-gym-env --help`` prints.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from conductor_gym.errors import ConfigurationError

from .env import ConductorEnvConfig, ConductorEnvironment
from .taskset import ConductorTasksetConfig

__all__ = ["ARGUMENTS", "ENV_ID", "load_environment"]

ENV_ID = "conductor-gym-env"
"""The id verifiers loads this environment by (the module ``conductor_gym_env``)."""

# verifiers' own taskset fields, not arguments of this env: ``id`` is ENV_ID, ``task``
# and ``system_prompt`` are verifiers' generic knobs (still settable through vf-eval)
_VERIFIERS_FIELDS = frozenset({"id", "task", "system_prompt"})

ARGUMENTS: dict[str, str] = {
    name: " ".join((field.description or "").split())
    for name, field in ConductorTasksetConfig.model_fields.items()
    if name not in _VERIFIERS_FIELDS
}
"""Every argument of :func:`load_environment` with its help text, in field order."""


def load_environment(**arguments: Any) -> ConductorEnvironment:
    """The conductor-gym verifiers env with the given settings (:data:`ARGUMENTS`; every
    one optional, defaulting as in ``vf-eval``).

    Raises :class:`~conductor_gym.errors.ConfigurationError` naming the argument at
    fault: an unknown name (the message lists the known ones) or a bad value.
    """
    unknown = sorted(set(arguments) - set(ARGUMENTS))
    if unknown:
        raise ConfigurationError(
            f"not an argument of {ENV_ID}; the arguments are: {', '.join(ARGUMENTS)}",
            field=unknown[0],
        )
    try:
        taskset = ConductorTasksetConfig(id=ENV_ID, **arguments)
    except ValidationError as error:
        first = error.errors()[0]
        if isinstance(cause := first.get("ctx", {}).get("error"), ConfigurationError):
            raise cause from None  # EnvConfig's own check, naming its field
        field = ".".join(str(part) for part in first["loc"]) or None
        raise ConfigurationError(
            f"{first['msg']} (got {first.get('input')!r})", field=field
        ) from None
    return ConductorEnvironment(ConductorEnvConfig(taskset=taskset))
