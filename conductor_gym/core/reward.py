"""Reward schemes: how an episode's outcome becomes a scalar.

The paper (§3.1, app. A) rewards a conductor 1 for a correct final answer, 0.5 for a
plan that parsed and ran but ended wrong, and 0 for a completion that is not a valid
plan. Infrastructure failures (a worker that could not answer) are not outcomes of the
policy and get no scheme entry: the env reports them with ``truncated=True``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from enum import StrEnum

__all__ = ["REWARD_SCHEMES", "Outcome", "RewardScheme", "make_reward_scheme"]


class Outcome(StrEnum):
    """What happened to one plan."""

    CORRECT = "correct"
    WRONG = "wrong"
    INVALID = "invalid"


@dataclass(frozen=True)
class RewardScheme:
    """Reward per outcome. The default is the paper's 1 / 0.5 / 0."""

    correct: float = 1.0
    wrong: float = 0.5
    invalid: float = 0.0

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first field that is not a finite number."""
        for name, value in asdict(self).items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"RewardScheme.{name} must be a number, got {value!r}")
            if not math.isfinite(value):
                raise ValueError(f"RewardScheme.{name} must be finite, got {value!r}")

    def __call__(self, outcome: Outcome) -> float:
        return float(getattr(self, outcome.value))


REWARD_SCHEMES: dict[str, RewardScheme] = {
    # Paper §3.1 / app. A: what the Conductor was trained with.
    "paper": RewardScheme(correct=1.0, wrong=0.5, invalid=0.0),
    # Accuracy only: a wrong answer and an invalid plan are both worth nothing.
    "binary": RewardScheme(correct=1.0, wrong=0.0, invalid=0.0),
}


def make_reward_scheme(spec: str | RewardScheme) -> RewardScheme:
    """Return ``spec`` itself or the named scheme; unknown names list the choices."""
    if isinstance(spec, RewardScheme):
        return spec
    try:
        return REWARD_SCHEMES[spec]
    except KeyError:
        raise ValueError(
            f"reward: unknown scheme {spec!r}; choose one of {sorted(REWARD_SCHEMES)} "
            "or pass a RewardScheme"
        ) from None
