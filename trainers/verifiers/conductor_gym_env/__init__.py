"""The verifiers plugin name of conductor-gym: ``vf-eval conductor-gym-env``.

verifiers 0.4 loads a taskset id as a top-level module (``conductor-gym-env`` ->
``conductor_gym_env``) and takes the ``Taskset``, ``Env`` and ``Harness`` subclasses it
exports in ``__all__``; this package re-exports those of
:mod:`conductor_gym.trainers.verifiers`, with their config classes,
``load_environment(**arguments)`` and ``ARGUMENTS`` (each argument's help text), and
``plan_grammar`` (the GBNF grammar of plans for small models on llama.cpp).
"""

# a top-level package of its own: the absolute import is the installed one, which mypy
# (checking the folder as ``trainers.*``) cannot follow
from conductor_gym.trainers.verifiers import (  # type: ignore[import-not-found]
    ARGUMENTS,
    ConductorChatConfig,
    ConductorChatHarness,
    ConductorEnvConfig,
    ConductorEnvironment,
    ConductorTaskset,
    ConductorTasksetConfig,
    load_environment,
    plan_grammar,
)

__all__ = [
    "ARGUMENTS",
    "ConductorChatConfig",
    "ConductorChatHarness",
    "ConductorEnvConfig",
    "ConductorEnvironment",
    "ConductorTaskset",
    "ConductorTasksetConfig",
    "load_environment",
    "plan_grammar",
]
