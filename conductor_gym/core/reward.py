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

from conductor_gym.registry import Registry

__all__ = ["REWARD_SCHEMES", "Outcome", "RewardScheme", "make_reward_scheme"]


class Outcome(StrEnum):
    """How an episode ended: a graded answer (``CORRECT``, ``WRONG``), a plan that is not
    valid (``INVALID``), or an infrastructure failure (``ERROR``: truncated, never scored,
    so no reward scheme prices it)."""

    CORRECT = "correct"
    WRONG = "wrong"
    INVALID = "invalid"
    ERROR = "error"


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
        if outcome is Outcome.ERROR:
            raise ValueError("an infrastructure failure is not scored (the env truncates it)")
        return float(getattr(self, outcome.value))


REWARD_SCHEMES: Registry[RewardScheme] = Registry("reward scheme", field="reward")
"""Named reward schemes (``EnvConfig.reward``)."""
# Paper §3.1 / app. A: what the Conductor was trained with.
REWARD_SCHEMES.register("paper", RewardScheme(correct=1.0, wrong=0.5, invalid=0.0))
# Accuracy only: a wrong answer and an invalid plan are both worth nothing.
REWARD_SCHEMES.register("binary", RewardScheme(correct=1.0, wrong=0.0, invalid=0.0))


def make_reward_scheme(spec: str | RewardScheme) -> RewardScheme:
    """Return ``spec`` itself or the named scheme; unknown names list the choices."""
    if isinstance(spec, RewardScheme):
        return spec
    if not isinstance(spec, str) or spec not in REWARD_SCHEMES:
        raise REWARD_SCHEMES.unknown(spec, hint="(or pass a RewardScheme)")
    return REWARD_SCHEMES.get(spec)
