"""The agent (planner) interface.

Contract shared by every agent of this package:

* ``act(observation, info) -> str`` returns one completion for one env observation;
  ``async act_batch(observations, infos) -> list[str]`` returns one per observation, in
  order (agents whose model batches natively override it).
* ``required_max_steps(num_workers) -> int`` is the longest plan the agent writes for an
  episode with ``num_workers`` workers; an agent that adapts its plans to
  ``info["max_steps"]`` returns 1.
* ``env_overrides`` is a dict of ``ConductorEnv`` arguments the agent needs beyond the
  env's defaults (``{}`` for most; ``{"max_steps": 8}`` for the paper's 8-call MoA). An
  evaluation harness builds the env with ``ConductorEnv(**{**its_kwargs,
  **agent.env_overrides})``: nothing changes the env behind the harness's back.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine, Mapping, Sequence
from typing import Any, Protocol, TypeVar, runtime_checkable

_T = TypeVar("_T")

__all__ = ["DEFAULT_MAX_STEPS", "Agent", "AgentError", "BaseAgent", "check_batch", "run_sync"]

DEFAULT_MAX_STEPS = 5
"""``ConductorEnv``'s default ``max_steps`` (the paper's 5-step rule)."""


class AgentError(RuntimeError):
    """The agent's own model could not answer (after retries): never a plan.

    ``transient`` tells whether the last failure was of a retryable kind (a timeout, a
    refused connection, a rate limit) that outlived the retries, or a permanent one.
    """

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient


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


def run_sync(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` to completion from synchronous code: ``asyncio.run`` (a fresh loop
    whose leftover tasks, such as a client library's background loggers, are cancelled
    and awaited before it closes), on a helper thread when this thread already runs a
    loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as executor:
        return executor.submit(asyncio.run, coro).result()


class BaseAgent:
    """Convenience base: implement :meth:`act`; :meth:`act_batch` gathers over it.

    Agents whose model batches natively (a local policy, an API with batching)
    override :meth:`act_batch`.
    """

    name: str = "agent"

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
        """``ConductorEnv`` arguments this agent needs beyond the defaults (module doc)."""
        return {}
