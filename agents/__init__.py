"""Plug-in conductors (agents), shipped as ``conductor_gym.agents``.

Each agent implements :class:`Agent`: ``act(observation, info) -> str`` and
``async act_batch(observations, infos) -> list[str]``. ``make_agent(name)`` builds a
registered agent by its short name.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Agent, BaseAgent
from .random_planner import RandomPlanner

__all__ = ["AGENTS", "Agent", "BaseAgent", "RandomPlanner", "make_agent"]

AGENTS: dict[str, Callable[..., Agent]] = {"random": RandomPlanner}
"""Short name -> agent factory."""


def make_agent(name: str, **kwargs: Any) -> Agent:
    """Build the agent registered as ``name``; unknown names list the choices."""
    try:
        factory = AGENTS[name]
    except KeyError:
        raise ValueError(f"agent: unknown name {name!r}; choose one of {sorted(AGENTS)}") from None
    return factory(**kwargs)
