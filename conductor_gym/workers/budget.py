"""Spending limits for worker calls: per episode and per run.

A :class:`Budget` caps worker calls, tokens (prompt plus completion) and US dollars. A
:class:`Ledger` counts what was spent against one budget. The env keeps one ledger per
episode (``ConductorEnv(episode_budget=...)``) and the pool one for the whole run
(``WorkerPool(run_budget=...)``, shared by every episode that uses the pool, in every
env of a vector env).

Rules, chosen so that a limit is never crossed silently:

* before a call, a ledger whose calls, tokens or dollars already reached a limit refuses
  it (:class:`BudgetExceeded`);
* a call's usage is known only afterwards, so the call that crosses a token or dollar
  limit completes and is recorded; the next call is refused;
* the episode then ends with ``truncated=True`` and ``info["error"]`` naming the scope
  (``"episode"`` or ``"run"``) and the limit: an exhausted budget is not a score.

Every completed call counts, cached ones included (at their recorded tokens and cost), so
a replay from the response cache truncates exactly where the recorded run did. The
ledger's ``billed_usd`` and ``cache_saved_usd`` report what was paid and what the cache
saved.

When steps run in parallel, a call made while an earlier step was still running may be
thrown away because that earlier step ended the run (its turn to be charged never came:
:mod:`conductor_gym.core.execute`). Such a call is counted apart, in ``discarded_calls``,
``discarded_tokens`` and ``discarded_usd``, so that the budget's decisions stay those of
running the steps in order while no spending goes unreported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from conductor_gym._validate import require_int
from conductor_gym.errors import ConfigurationError, InfrastructureError
from conductor_gym.workers.base import Completion

__all__ = ["Budget", "BudgetExceeded", "Ledger"]


@dataclass(frozen=True)
class Budget:
    """Limits on worker use; ``None`` means no limit on that quantity.

    Attributes:
        max_calls: Most worker calls (retries of a failed call are not counted: they
            returned nothing).
        max_tokens: Most prompt plus completion tokens.
        max_usd: Most US dollars of worker cost.
    """

    max_calls: int | None = None
    max_tokens: int | None = None
    max_usd: float | None = None

    def __post_init__(self) -> None:
        self.validate()

    def validate(self, where: str = "Budget") -> None:
        """Raise ``ConfigurationError`` naming the field (prefixed with ``where``)."""
        for name in ("max_calls", "max_tokens"):
            value = getattr(self, name)
            if value is not None:
                require_int(f"{where}.{name}", value)
        if self.max_usd is not None and not (
            isinstance(self.max_usd, int | float)
            and not isinstance(self.max_usd, bool)
            and math.isfinite(self.max_usd)
            and self.max_usd > 0
        ):
            raise ConfigurationError(
                f"{where}.max_usd must be None or a number > 0, got {self.max_usd!r}"
            )

    @property
    def unlimited(self) -> bool:
        return self.max_calls is None and self.max_tokens is None and self.max_usd is None

    def to_dict(self) -> dict[str, Any]:
        return {"max_calls": self.max_calls, "max_tokens": self.max_tokens, "max_usd": self.max_usd}


class BudgetExceeded(InfrastructureError, RuntimeError):
    """A call was refused because a budget is spent.

    Attributes:
        scope: ``"episode"`` or ``"run"``.
        limit: The exhausted field (``"max_calls"``, ``"max_tokens"`` or ``"max_usd"``).
        limit_value: Its configured value.
        spent: What the ledger had counted when the call was refused.
        trace: The steps of the interrupted plan completed before the refusal (set by
            :func:`conductor_gym.core.execute.run_plan`; ``None`` until then).
    """

    kind = "budget"

    def __init__(self, scope: str, limit: str, limit_value: float, spent: float) -> None:
        super().__init__(f"{scope} budget spent: {limit}={limit_value} (spent {spent:g})")
        self.trace: Any = None
        self.scope = scope
        self.limit = limit
        self.limit_value = limit_value
        self.spent = spent

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "budget",
            "scope": self.scope,
            "limit": self.limit,
            "limit_value": self.limit_value,
            "spent": self.spent,
            "message": str(self),
        }


@dataclass
class Ledger:
    """What was spent against ``budget`` (``scope`` names it in errors)."""

    budget: Budget = field(default_factory=Budget)
    scope: str = "episode"
    calls: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    billed_usd: float = 0.0
    cache_saved_usd: float = 0.0
    discarded_calls: int = 0
    discarded_tokens: int = 0
    discarded_usd: float = 0.0

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` if a limit has been reached."""
        budget = self.budget
        if budget.max_calls is not None and self.calls >= budget.max_calls:
            raise BudgetExceeded(self.scope, "max_calls", budget.max_calls, self.calls)
        if budget.max_tokens is not None and self.tokens >= budget.max_tokens:
            raise BudgetExceeded(self.scope, "max_tokens", budget.max_tokens, self.tokens)
        if budget.max_usd is not None and self.cost_usd >= budget.max_usd:
            raise BudgetExceeded(self.scope, "max_usd", budget.max_usd, self.cost_usd)

    def charge(self, completion: Completion) -> None:
        """Count one completed call."""
        self.calls += 1
        self.tokens += completion.prompt_tokens + completion.completion_tokens
        self.cost_usd += completion.cost_usd
        if completion.cached:
            self.cache_saved_usd += completion.cost_usd
        else:
            self.billed_usd += completion.cost_usd

    def discard(self, completion: Completion) -> None:
        """Count a call that completed but was thrown away (module docstring); the
        budget's own figures are unchanged."""
        self.discarded_calls += 1
        self.discarded_tokens += completion.prompt_tokens + completion.completion_tokens
        if not completion.cached:
            self.discarded_usd += completion.cost_usd

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "budget": self.budget.to_dict(),
            "calls": self.calls,
            "tokens": self.tokens,
            "cost_usd": self.cost_usd,
            "billed_usd": self.billed_usd,
            "cache_saved_usd": self.cache_saved_usd,
            "discarded_calls": self.discarded_calls,
            "discarded_tokens": self.discarded_tokens,
            "discarded_usd": self.discarded_usd,
        }
