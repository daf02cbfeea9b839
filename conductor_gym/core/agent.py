"""The agent (conductor) contract the library's harnesses use.

Required, for any object (:class:`Agent`, a protocol):

* ``act(observation, info) -> str``: one completion for one env observation;
* ``async act_batch(observations, infos) -> list[str]``: one per observation, in order.

Optional hooks, declared with their defaults on :class:`BaseAgent` (as Gymnasium's
``Wrapper`` declares what it forwards). Subclass it and override what applies:

=======================  ===============================================================
hook                     default and meaning
=======================  ===============================================================
``name``                 ``"agent"``: a short display name
``spec``                 ``None``: the ``make_agent`` spec that rebuilds the agent
``describe()``           ``{}``: JSON-safe facts recorded with results (model, settings)
``env_overrides``        ``{}``: env settings the agent needs beyond the defaults
                         (``{"max_steps": 8}`` for the paper's 8-call MoA); a harness
                         applies and records them, nothing changes the env behind it
``required_max_steps``   ``1``: the longest plan written for ``num_workers`` workers (an
                         agent that follows ``info["max_steps"]`` returns 1)
``reseed(seed)``         no-op: an agent that overrides it is reseeded before every
                         episode with a seed derived from the episode's (reproducible
                         stochastic planners); the harness then calls it one request at
                         a time
``last_usage``           ``None``: after ``act_batch``, one usage per observation
                         (``prompt_tokens``, ``completion_tokens``, ``cost_usd``)
``completions``          ``None``: a log of the agent's own model calls (objects with
                         ``text`` and the usage fields), read by slices
=======================  ===============================================================

:func:`as_base_agent` gives any :class:`Agent` this interface: a :class:`BaseAgent` is
returned as it is; another object is wrapped so that the hooks it defines are used and the
others take their defaults. It is the one place that looks for optional attributes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from conductor_gym.errors import InfrastructureError

__all__ = [
    "DEFAULT_MAX_STEPS",
    "Agent",
    "AgentError",
    "BaseAgent",
    "as_base_agent",
    "check_batch",
]

DEFAULT_MAX_STEPS = 5
"""``EnvConfig``'s default ``max_steps`` (the paper's 5-step rule)."""


class AgentError(InfrastructureError, RuntimeError):
    """The agent's own model could not answer (after retries): never a plan.

    ``transient`` tells whether the last failure was of a retryable kind (a timeout, a
    refused connection, a rate limit) that outlived the retries, or a permanent one.
    """

    kind = "agent"

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": str(self), "transient": self.transient}


@runtime_checkable
class Agent(Protocol):
    """A conductor: reads the env's observation (and info) and writes a completion."""

    def act(self, observation: str, info: Mapping[str, Any]) -> str: ...

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]: ...


def check_batch(observations: Sequence[str], infos: Sequence[Mapping[str, Any]]) -> None:
    """Raise ``ValueError`` when ``observations`` and ``infos`` differ in length."""
    if len(observations) != len(infos):
        raise ValueError("act_batch: observations and infos differ in length")


class BaseAgent:
    """An agent with every optional hook declared (module docstring): implement
    :meth:`act`; :meth:`act_batch` gathers over it. Agents whose model batches natively
    (a local policy, an API with batching) override :meth:`act_batch`."""

    name: str = "agent"
    spec: str | None = None
    last_usage: Sequence[Any] | None = None
    completions: list[Any] | None = None

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        raise NotImplementedError

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        check_batch(observations, infos)

        async def one(obs: str, info: Mapping[str, Any]) -> str:
            return self.act(obs, info)

        return list(
            await asyncio.gather(*(one(o, i) for o, i in zip(observations, infos, strict=True)))
        )

    def required_max_steps(self, num_workers: int) -> int:
        """Longest plan written for ``num_workers`` workers (1: adapts to the env)."""
        return 1

    @property
    def env_overrides(self) -> dict[str, Any]:
        """Env settings this agent needs beyond the defaults (module docstring)."""
        return {}

    def describe(self) -> dict[str, Any]:
        """JSON-safe facts about the agent, recorded with results."""
        return {}

    def reseed(self, seed: int | None) -> None:
        """Reseed before an episode (module docstring); the default does nothing."""

    @property
    def reseeds(self) -> bool:
        """Whether :meth:`reseed` is overridden (the agent is reseeded per episode)."""
        return type(self).reseed is not BaseAgent.reseed


class _ProtocolAgent(BaseAgent):
    """A plain :class:`Agent` seen through :class:`BaseAgent`: the hooks it defines are
    forwarded, the rest keep their defaults."""

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.name = _attribute(agent, "name", str, BaseAgent.name)
        self.spec = _attribute(agent, "spec", str, None)

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        return self.agent.act(observation, info)

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        return await self.agent.act_batch(observations, infos)

    def required_max_steps(self, num_workers: int) -> int:
        hook = getattr(self.agent, "required_max_steps", None)
        return int(hook(num_workers)) if callable(hook) else 1

    @property
    def env_overrides(self) -> dict[str, Any]:
        overrides = getattr(self.agent, "env_overrides", None) or {}
        if not isinstance(overrides, Mapping):
            raise TypeError(f"agent.env_overrides must be a mapping, got {overrides!r}")
        return dict(overrides)

    def describe(self) -> dict[str, Any]:
        hook = getattr(self.agent, "describe", None)
        facts = hook() if callable(hook) else None
        return dict(facts) if isinstance(facts, Mapping) else {}

    def reseed(self, seed: int | None) -> None:
        hook = getattr(self.agent, "reseed", None)
        if callable(hook):
            hook(seed)

    @property
    def reseeds(self) -> bool:
        return callable(getattr(self.agent, "reseed", None))

    @property
    def last_usage(self) -> Sequence[Any] | None:  # type: ignore[override]  # read-through
        usage = getattr(self.agent, "last_usage", None)
        return usage if isinstance(usage, Sequence) and not isinstance(usage, str) else None

    @property
    def completions(self) -> list[Any] | None:  # type: ignore[override]  # read-through
        log = getattr(self.agent, "completions", None)
        return log if isinstance(log, list) else None


def _attribute(agent: object, name: str, kind: type, default: Any) -> Any:
    value = getattr(agent, name, None)
    return value if isinstance(value, kind) else default


def as_base_agent(agent: Agent) -> BaseAgent:
    """``agent`` with every optional hook of :class:`BaseAgent` (module docstring)."""
    if isinstance(agent, BaseAgent):
        return agent
    if not isinstance(agent, Agent):
        raise TypeError(
            f"{type(agent).__name__} is not an agent: it needs act(observation, info) and "
            "async act_batch(observations, infos)"
        )
    return _ProtocolAgent(agent)
