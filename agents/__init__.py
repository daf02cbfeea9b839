"""Plug-in conductors (agents), shipped as ``conductor_gym.agents``.

Each agent implements :class:`Agent`: ``act(observation, info) -> str`` and
``async act_batch(observations, infos) -> list[str]``; the ones here also say which env
they need (``required_max_steps(num_workers)``, ``env_overrides``). ``make_agent(spec)``
builds one from a short spec (:mod:`.spec`: ``random``, ``single:<id>``,
``best-single``, ``reflect:<id>:<n>``, ``consensus:<id>:<n>``, ``moa``,
``llm:<litellm-model>``, ``policy:<path>``, ``plan:<path>``, ``compact:<path>``,
``path/to/file.py:ClassName``);
``AGENTS`` lists the short names.

Importing this package imports no model library: LiteLLM, torch, transformers and
vLLM load when an ``llm``, ``policy`` or ``compact`` agent is built or first called.
"""

from __future__ import annotations

from ._usage import Usage
from .base import DEFAULT_MAX_STEPS, Agent, AgentError, BaseAgent
from .best_single import BestSingle
from .calibration import CALIBRATION_OFFSET, CalibrationTasks, calibration_split_for
from .compact_policy import CompactPolicy
from .fixed import Consensus, MixtureOfAgents, SelfReflection, SingleWorker
from .llm import LLMConductor
from .plan_file import FixedPlan
from .policy import PolicyConductor
from .random_planner import RandomPlanner
from .spec import AGENTS, SPEC_FORMS, load_agent_file, make_agent

__all__ = [
    "AGENTS",
    "CALIBRATION_OFFSET",
    "DEFAULT_MAX_STEPS",
    "SPEC_FORMS",
    "Agent",
    "AgentError",
    "BaseAgent",
    "BestSingle",
    "CalibrationTasks",
    "CompactPolicy",
    "Consensus",
    "FixedPlan",
    "LLMConductor",
    "MixtureOfAgents",
    "PolicyConductor",
    "RandomPlanner",
    "SelfReflection",
    "SingleWorker",
    "Usage",
    "calibration_split_for",
    "load_agent_file",
    "make_agent",
]
