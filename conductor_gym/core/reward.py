"""Reward schemes: how an episode's outcome, and optionally its spending, become a scalar.

The paper (§3.1, app. A) rewards a conductor 1 for a correct final answer, 0.5 for a
plan that parsed and ran but ended wrong, and 0 for a completion that is not a valid
plan. Infrastructure failures (a worker that could not answer) are not outcomes of the
policy and get no scheme entry: the env reports them with ``truncated=True``.

Cost-aware schemes. The paper trains for accuracy only; users of routing systems also
want to avoid expensive workers. A :class:`RewardScheme` with ``cost_lambda = λ > 0``
charges a *graded* episode (correct or wrong) for what its plans spent on workers::

    reward = max(invalid, r(outcome) - λ * spend)

where ``spend`` (:class:`Spend`) is, by ``cost_unit``, the episode's worker cost in US
dollars (``"usd"``: every call at its recorded price, cached ones included, so a replay
from the response cache earns what the recorded run earned), its prompt plus completion
tokens in thousands (``"ktokens"``), or its worker calls (``"calls"``: the steps that
called a worker, an inner conductor call counted by its own steps; retries are the
infrastructure's doing and not counted). The conductor's own tokens are not the env's to
see and are not charged. Invalid plans keep the ``invalid`` reward and truncated episodes
0, whatever they spent. The floor at ``invalid`` keeps a valid plan from ever scoring
below an invalid one, so no price makes "write no plan" the better answer. With ``λ = 0``
(every scheme's default) the reward is exactly the outcome's.

Presets (:data:`REWARD_SCHEMES`; set your own λ with ``"<name>:<λ>"``, e.g.
``"cost-usd:25"``, or :meth:`RewardScheme.with_cost`):

================  =========================================================================
``paper``         1 / 0.5 / 0, no cost (the default; what the Conductor was trained with)
``binary``        1 / 0 / 0, no cost
``cost-usd``      paper, λ = 10 per dollar
``cost-ktokens``  paper, λ = 0.025 per thousand tokens
``cost-calls``    paper, λ = 0.03 per worker call
================  =========================================================================

Why these λ: each charges a typical three-step plan on the simulated paper pool (the
random planner's on ``offline``: about $0.011, 2,700 tokens, 3.2 calls) about 0.07 to
0.11, a fifth or less of the 0.5 between a right and a wrong answer, so accuracy still
comes first; at the
paper's reported per-question figures (Table 6: Conductor $0.024 and 1,820 tokens, MoA
$0.049, 11,203 tokens and 8 calls) MoA pays 0.24 to 0.49, the Conductor 0.05 to 0.24.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Literal, get_args

from conductor_gym.errors import ConfigurationError
from conductor_gym.registry import Registry

__all__ = [
    "COST_UNITS",
    "REWARD_SCHEMES",
    "CostUnit",
    "Outcome",
    "RewardScheme",
    "Spend",
    "make_reward_scheme",
    "reward_scheme_names",
]


class Outcome(StrEnum):
    """How an episode ended: a graded answer (``CORRECT``, ``WRONG``), a plan that is not
    valid (``INVALID``), or an infrastructure failure (``ERROR``: truncated, never scored,
    so no reward scheme prices it).

    A ``str``: a member equals, hashes, formats, serialises and prints (``repr`` too) as
    its value, so ``info["outcome"]``, results files, journals and every message quoting
    an outcome read as they did when outcomes were plain strings."""

    CORRECT = "correct"
    WRONG = "wrong"
    INVALID = "invalid"
    ERROR = "error"

    def __repr__(self) -> str:
        return repr(self.value)


CostUnit = Literal["usd", "ktokens", "calls"]
COST_UNITS: tuple[str, ...] = get_args(CostUnit)
"""What a cost-aware scheme charges for: dollars, thousands of tokens, worker calls."""


@dataclass(frozen=True)
class Spend:
    """What an episode's plans spent on workers (module docstring)."""

    usd: float = 0.0
    tokens: int = 0
    calls: int = 0

    def amount(self, unit: CostUnit) -> float:
        """The spend in ``unit``: dollars, thousands of tokens or calls."""
        if unit == "usd":
            return self.usd
        if unit == "ktokens":
            return self.tokens / 1000
        return float(self.calls)


@dataclass(frozen=True)
class RewardScheme:
    """Reward per outcome, less ``cost_lambda`` per ``cost_unit`` spent on a graded
    episode (module docstring). The default is the paper's 1 / 0.5 / 0, at no cost."""

    correct: float = 1.0
    wrong: float = 0.5
    invalid: float = 0.0
    cost_lambda: float = 0.0
    cost_unit: CostUnit = "usd"

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ``ConfigurationError`` naming the first field that is not valid."""
        for name in ("correct", "wrong", "invalid", "cost_lambda"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigurationError(f"RewardScheme.{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ConfigurationError(f"RewardScheme.{name} must be finite, got {value!r}")
        if self.cost_lambda < 0:
            raise ConfigurationError(
                f"RewardScheme.cost_lambda must be >= 0, got {self.cost_lambda!r}"
            )
        if self.cost_unit not in COST_UNITS:
            raise ConfigurationError(
                f"RewardScheme.cost_unit must be one of {list(COST_UNITS)}, got {self.cost_unit!r}"
            )

    @property
    def cost_aware(self) -> bool:
        """Whether graded episodes pay for their spending (``cost_lambda > 0``)."""
        return self.cost_lambda > 0

    def __call__(self, outcome: Outcome) -> float:
        """The outcome's reward, before any cost (an infrastructure failure has none)."""
        if outcome is Outcome.ERROR:
            raise ValueError("an infrastructure failure is not scored (the env truncates it)")
        return float(getattr(self, outcome.value))

    def penalty(self, spend: Spend) -> float:
        """``cost_lambda`` times the spend in ``cost_unit``."""
        return self.cost_lambda * spend.amount(self.cost_unit)

    def charge(self, reward: float, spend: Spend) -> float:
        """A graded episode's reward after its cost: ``max(invalid, reward - penalty)``;
        ``reward`` itself, unchanged, when the scheme is not cost-aware."""
        if not self.cost_aware:
            return reward
        return max(float(self.invalid), reward - self.penalty(spend))

    def with_cost(self, cost_lambda: float, unit: CostUnit | None = None) -> RewardScheme:
        """The same outcome rewards with price ``cost_lambda`` per ``unit`` (default:
        this scheme's unit)."""
        return replace(self, cost_lambda=cost_lambda, cost_unit=unit or self.cost_unit)


REWARD_SCHEMES: Registry[RewardScheme] = Registry(
    "reward scheme", field="reward", group="conductor_gym.rewards"
)
"""Named reward schemes (``EnvConfig.reward``)."""
# Paper §3.1 / app. A: what the Conductor was trained with.
REWARD_SCHEMES.register("paper", RewardScheme(correct=1.0, wrong=0.5, invalid=0.0))
# Accuracy only: a wrong answer and an invalid plan are both worth nothing.
REWARD_SCHEMES.register("binary", RewardScheme(correct=1.0, wrong=0.0, invalid=0.0))
# The paper's rewards less a price on worker spending (presets: module docstring).
REWARD_SCHEMES.register("cost-usd", RewardScheme(cost_lambda=10.0, cost_unit="usd"))
REWARD_SCHEMES.register("cost-ktokens", RewardScheme(cost_lambda=0.025, cost_unit="ktokens"))
REWARD_SCHEMES.register("cost-calls", RewardScheme(cost_lambda=0.03, cost_unit="calls"))


def reward_scheme_names() -> list[str]:
    """The named schemes, sorted."""
    return REWARD_SCHEMES.names()


def make_reward_scheme(spec: str | RewardScheme) -> RewardScheme:
    """Return ``spec`` itself, the named scheme, or ``"<name>:<λ>"``: the named scheme
    with price ``λ`` (``"cost-usd:25"``, ``"paper:0"``). Unknown names list the choices."""
    if isinstance(spec, RewardScheme):
        return spec
    if not isinstance(spec, str):
        raise REWARD_SCHEMES.unknown(spec, hint="(or pass a RewardScheme)")
    name, sep, price = spec.partition(":")
    if name not in REWARD_SCHEMES:
        raise REWARD_SCHEMES.unknown(
            name, hint="(optionally as '<name>:<lambda>' for a price), or pass a RewardScheme"
        )
    scheme = REWARD_SCHEMES.get(name)
    if not sep:
        return scheme
    try:
        cost_lambda = float(price)
    except ValueError:
        raise ConfigurationError(
            f"{spec!r}: the price after ':' must be a number (lambda), got {price!r}",
            field="reward",
        ) from None
    return scheme.with_cost(cost_lambda)
