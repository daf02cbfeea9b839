"""The agent (planner) interface."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

__all__ = ["Agent", "BaseAgent"]


@runtime_checkable
class Agent(Protocol):
    """A conductor: reads the env's observation (and info) and writes a completion."""

    def act(self, observation: str, info: Mapping[str, Any]) -> str: ...

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]: ...


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
        if len(observations) != len(infos):
            raise ValueError("act_batch: observations and infos differ in length")

        async def one(obs: str, info: Mapping[str, Any]) -> str:
            return self.act(obs, info)

        return list(
            await asyncio.gather(*(one(o, i) for o, i in zip(observations, infos, strict=True)))
        )
