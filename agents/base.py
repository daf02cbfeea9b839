"""The agent interface, as this package uses it.

The contract lives in the library (:mod:`conductor_gym.core.agent`, where every optional
hook is documented with its default); this module names it for the agents here.
"""

from __future__ import annotations

from conductor_gym._loop import run_sync
from conductor_gym.core.agent import (
    DEFAULT_MAX_STEPS,
    Agent,
    AgentError,
    BaseAgent,
    check_batch,
)

__all__ = ["DEFAULT_MAX_STEPS", "Agent", "AgentError", "BaseAgent", "check_batch", "run_sync"]
