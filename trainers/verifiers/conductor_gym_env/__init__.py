"""The verifiers plugin name of conductor-gym: ``vf-eval conductor-gym-env``.

verifiers 0.4 loads a taskset id as a top-level module (``conductor-gym-env`` ->
``conductor_gym_env``) and takes the ``Taskset``, ``Env`` and ``Harness`` subclasses it
exports in ``__all__``; this package re-exports those of
:mod:`conductor_gym.trainers.verifiers`.
"""

# a top-level package of its own: the absolute import is the installed one, which mypy
# (checking the folder as ``trainers.*``) cannot follow
from conductor_gym.trainers.verifiers import (  # type: ignore[import-not-found]
    ConductorChatHarness,
    ConductorEnvironment,
    ConductorTaskset,
)

__all__ = ["ConductorChatHarness", "ConductorEnvironment", "ConductorTaskset"]
