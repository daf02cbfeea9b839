"""Token and cost accounting shared by the model-backed conductors (``llm``, ``policy``),
and their common base."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from conductor_gym.workers.base import Completion

from .base import BaseAgent, run_sync

__all__ = ["LoggedConductor", "Usage", "UsageLog", "total_usage"]


@dataclass(frozen=True)
class Usage:
    """Totals over a conductor's completions.

    ``calls`` counts completions received (a failed attempt returns none and costs
    nothing here; ``failed_attempts`` counts those).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    calls: int = 0
    failed_attempts: int = 0


def total_usage(completions: Sequence[Completion], failed_attempts: int = 0) -> Usage:
    """The :class:`Usage` totals of ``completions``."""
    return Usage(
        prompt_tokens=sum(c.prompt_tokens for c in completions),
        completion_tokens=sum(c.completion_tokens for c in completions),
        cost_usd=math.fsum(c.cost_usd for c in completions),
        calls=len(completions),
        failed_attempts=failed_attempts,
    )


class UsageLog:
    """Every completion of one agent, in order of arrival, with running totals.

    ``completions`` holds one :class:`~conductor_gym.workers.base.Completion` per call
    (text, tokens, cost, latency, model): a harness reads the slice it caused, e.g.
    ``agent.completions[before:]``. :meth:`reset` starts over.
    """

    def __init__(self) -> None:
        self.completions: list[Completion] = []
        self.failed_attempts = 0

    def record(self, completion: Completion) -> None:
        self.completions.append(completion)

    @property
    def usage(self) -> Usage:
        """Totals over :attr:`completions` (and the failed attempts)."""
        return total_usage(self.completions, self.failed_attempts)

    def reset(self) -> None:
        self.completions.clear()
        self.failed_attempts = 0


class LoggedConductor(BaseAgent):
    """Base of the model-backed conductors: ``act_batch`` does the work (and records every
    completion in ``_log``); ``act`` runs it for one observation."""

    _log: UsageLog

    @property
    def usage(self) -> Usage:
        """Tokens, cost and calls over every completion so far."""
        return self._log.usage

    @property
    def completions(self) -> list[Completion]:  # type: ignore[override]  # the log's list
        """Every completion so far, in order of arrival (a harness reads slices)."""
        return self._log.completions

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        return run_sync(self.act_batch([observation], [info]))[0]
