"""A worker as a plan step calls it: :class:`BoundWorker` (the worker with its pool
entry's generation settings) and :class:`RetryPolicy` (how transient failures are retried)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from conductor_gym._validate import require_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.workers.base import Message, Worker

__all__ = ["BoundWorker", "RetryPolicy"]


@dataclass(frozen=True)
class BoundWorker:
    """A worker together with the generation settings of its pool entry
    (``system_prompt``: :attr:`~conductor_gym.workers.spec.WorkerSpec.system_prompt`)."""

    worker: Worker
    max_tokens: int = 4096
    temperature: float = 0.2
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    system_prompt: str | None = None

    def messages(self, messages: list[Message]) -> list[Message]:
        """``messages`` as this worker receives them: with its ``system_prompt`` first, in
        one system message with the one that ``messages`` may start with."""
        if self.system_prompt is None:
            return messages
        if messages and messages[0]["role"] == "system":
            merged = f"{self.system_prompt}\n\n{messages[0]['content']}"
            return [{"role": "system", "content": merged}, *messages[1:]]
        return [{"role": "system", "content": self.system_prompt}, *messages]

    @property
    def name(self) -> str:
        return self.worker.name


@dataclass(frozen=True)
class RetryPolicy:
    """How transient worker failures are retried.

    Attempt ``a`` (1-based) that fails transiently waits
    ``uniform(0, min(max_delay_s, base_delay_s * 2 ** (a - 1)))`` seconds ("full jitter")
    before the next attempt, up to ``max_attempts`` attempts in all.
    """

    max_attempts: int = 3
    base_delay_s: float = 0.5
    max_delay_s: float = 8.0

    def __post_init__(self) -> None:
        require_int("RetryPolicy.max_attempts", self.max_attempts)
        if self.base_delay_s < 0 or self.max_delay_s < 0:
            raise ConfigurationError("RetryPolicy delays must be >= 0")

    def delay(self, attempt: int) -> float:
        cap = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1))
        return random.uniform(0.0, cap) if cap > 0 else 0.0
