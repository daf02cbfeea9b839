"""Token and cost accounting shared by the model-backed conductors (``llm``, ``policy``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from conductor_gym.workers.base import Completion

__all__ = ["Usage", "UsageLog", "total_usage"]


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
