"""conductor-gym as a verifiers 0.4 environment (``verifiers.v1``), for ``vf-eval`` and
prime-rl: ``pip install "conductor-gym[verifiers]"``, then ``vf-eval conductor-gym-env``.

* :mod:`.taskset`: the tasks of a conductor-gym task source (``--env.taskset.*`` are
  the env settings), the env's reward as the rubric, the episode's trace, outcome,
  tokens and cost in ``trace.info["conductor"]``, infrastructure failures as failed
  rollouts;
* :mod:`.env`: the episode loop (one turn, or recursive rounds as user turns);
* :mod:`.harness`: the conductor's chat completion, in process;
* :mod:`.loader`: :func:`load_environment` from plain keyword arguments (:data:`ARGUMENTS`,
  each with its help text);
* :mod:`.grammar`: a GBNF grammar of well-formed plans, for small models on llama.cpp;
* ``conductor_gym_env``: the top-level name verifiers loads (re-exports).

Imports verifiers; ``import conductor_gym`` never imports this package.
"""

from .env import ConductorEnvConfig, ConductorEnvironment
from .grammar import plan_grammar
from .harness import ConductorChatConfig, ConductorChatHarness
from .loader import ARGUMENTS, ENV_ID, load_environment
from .taskset import (
    STATE_KEY,
    ConductorData,
    ConductorTask,
    ConductorTaskset,
    ConductorTasksetConfig,
    Episode,
    EpisodeTruncated,
    env_config,
    episode_state,
)

__all__ = [
    "ARGUMENTS",
    "ENV_ID",
    "STATE_KEY",
    "ConductorChatConfig",
    "ConductorChatHarness",
    "ConductorData",
    "ConductorEnvConfig",
    "ConductorEnvironment",
    "ConductorTask",
    "ConductorTaskset",
    "ConductorTasksetConfig",
    "Episode",
    "EpisodeTruncated",
    "env_config",
    "episode_state",
    "load_environment",
    "plan_grammar",
]
