"""Whose completions a leaderboard entry shows: re-run built-in agents, or self-reported.

Contract. A re-play (:mod:`conductor_gym.bench.replay`) plays the recorded completions,
so it proves what the env did with them, not that the named agent wrote them: a file
that keeps, per task and repeat, whichever of several runs got it right re-plays
perfectly under any name. So:

* an entry whose ``results.agent.spec`` names a **deterministic built-in agent**
  (:data:`RERUN_AGENTS`: ``random`` with its per-episode seed, ``single:<id>``,
  ``best-single``, ``reflect:<id>:<n>``, ``consensus:<id>:<n>``, ``moa``,
  ``reference:<plan>``) has its agent rebuilt here from the spec
  (:func:`rerun_agent`, never from a file: a spec naming a ``.py`` file is never
  loaded), its recorded description compared with the rebuilt agent's
  (:func:`recorded_description`), and the agent asked again on every re-played
  observation; a completion it does not write is an ``agent`` error on validation
  (:class:`~conductor_gym.board.sections.AgentIdentity` ``"re-run"`` otherwise);
* any other agent (``llm:``, ``policy:``, an agent file, an unknown name) cannot be
  re-run here: its entry is marked **self-reported completions**
  (:func:`self_reported`), with the checkpoint's hash where the results record one
  under one of :data:`CHECKPOINT_KEYS`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from conductor_gym.bench.results import Results, json_safe
from conductor_gym.board.sections import AgentIdentity
from conductor_gym.core.agent import BaseAgent, as_base_agent
from conductor_gym.errors import ConfigurationError

__all__ = [
    "CHECKPOINT_KEYS",
    "RERUN_AGENTS",
    "description_differences",
    "is_rerunnable",
    "recorded_description",
    "rerun_agent",
    "self_reported",
]

RERUN_AGENTS: tuple[str, ...] = (
    "random",
    "single",
    "best-single",
    "reflect",
    "consensus",
    "moa",
    "reference",
)
"""The built-in agents whose completions depend only on the observation (and, for
``random``, the per-episode seed the harness derives): re-run on validation."""

CHECKPOINT_KEYS: tuple[str, ...] = ("checkpoint_sha256", "checkpoint_hash")
"""Keys of ``results.agent`` under which a checkpoint's hash is shown."""

_FILE = re.compile(r".+\.py:[A-Za-z_]\w*")
_DESCRIPTION_KEYS = ("spec", "env_overrides", "seeding")  # set by the harness, compared too


def is_rerunnable(spec: str) -> bool:
    """Whether ``spec`` names a built-in agent of :data:`RERUN_AGENTS` (never a file)."""
    if _FILE.fullmatch(spec):
        return False
    return spec.partition(":")[0] in RERUN_AGENTS


def rerun_agent(spec: str) -> BaseAgent:
    """The built-in agent ``spec`` names, built as ``evaluate`` builds it.

    Raises:
        ConfigurationError: ``spec`` is not a rerunnable spec (:func:`is_rerunnable`), or the
            agent registry refuses it (a :class:`~conductor_gym.errors.ConfigurationError`
            naming the valid forms).
    """
    if not is_rerunnable(spec):
        raise ConfigurationError(
            f"agent spec {spec!r} is not a built-in agent that can be re-run", field="agent"
        )
    from conductor_gym.core.agent_spec import make_agent

    return as_base_agent(make_agent(spec))


def recorded_description(agent: BaseAgent, spec: str) -> dict[str, Any]:
    """``results.agent`` as ``evaluate`` records it for ``agent`` run under ``spec``:
    its ``describe()``, its ``name``, the spec, its declared ``env_overrides`` and its
    ``seeding``."""
    info: dict[str, Any] = json_safe(agent.describe())
    info.setdefault("name", agent.name)
    info["spec"] = spec
    if agent.env_overrides:
        info["env_overrides"] = json_safe(agent.env_overrides)
    info["seeding"] = "per-episode" if agent.reseeds else "agent"
    return info


def description_differences(results: Results, agent: BaseAgent) -> list[str]:
    """Each field of ``results.agent`` that is not what the rebuilt ``agent`` records
    (``"<field>: recorded ..., the built-in agent records ..."``)."""
    spec = str(results.agent.get("spec"))
    want = recorded_description(agent, spec)
    have = dict(results.agent)
    return [
        f"{key}: recorded {have.get(key)!r}, the built-in agent records {want.get(key)!r}"
        for key in sorted(set(want) | set(have))
        if have.get(key) != want.get(key)
    ]


def self_reported(results: Results) -> AgentIdentity:
    """The identity of an entry whose agent is not re-run: self-reported completions,
    with the checkpoint's hash when ``results.agent`` records one."""
    agent: Mapping[str, Any] = results.agent
    for key in CHECKPOINT_KEYS:
        value = agent.get(key)
        if isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{8,128}", value):
            return AgentIdentity("self-reported completions", f"checkpoint {key} {value[:16]}")
    spec = str(agent.get("spec", ""))
    if spec.startswith("policy:"):
        return AgentIdentity("self-reported completions", "no checkpoint hash recorded")
    return AgentIdentity("self-reported completions")
