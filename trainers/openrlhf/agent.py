"""The file to pass to OpenRLHF 0.11.2 as ``--train.agent_func_path``.

OpenRLHF loads it by path (``spec_from_file_location("agent_module", ...)``, outside
``sys.modules``), takes ``AgentExecutor``, checks it subclasses
``openrlhf.utils.agent.AgentExecutorBase`` and calls ``AgentExecutor()``. Everything lives
in :mod:`conductor_gym.trainers.openrlhf.executor` (an ordinary, importable module); this
file only re-exports it, so the loaded module holds no state of its own.

Needs ``CONDUCTOR_GYM_TRAIN_CONFIG`` (the ``.env.json`` written by ``conductor-gym train
prepare``) in the rollout engines' environment; see ``README.md`` next to this file.
"""

from __future__ import annotations

# OpenRLHF imports this file by path, so the import is absolute (the installed package);
# mypy checks the folder as ``trainers.*`` and cannot follow it.
from conductor_gym.trainers.openrlhf.executor import (  # type: ignore[import-not-found]
    AgentExecutor,
    ConductorEpisode,
)

__all__ = ["AgentExecutor", "ConductorEpisode"]
