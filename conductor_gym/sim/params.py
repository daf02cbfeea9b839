"""The simulator's versions and the parameters they share: :class:`SimDynamics` (how
context changes a simulated worker's chance of being right), per-family checkability
(:data:`CHECK_BONUS`) and each version's defaults (:data:`VERSION_DYNAMICS`). What each
parameter does, and where its number comes from, is in :mod:`conductor_gym.sim.v1`,
:mod:`conductor_gym.sim.v2`, :mod:`conductor_gym.sim.v3` and :mod:`conductor_gym.sim.v3_1`;
the versions themselves (a lazy registry with capability flags) are in
:mod:`conductor_gym.sim.versions`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from conductor_gym.sim.versions import DEFAULT_VERSION, VERSION_INFO, VERSIONS

__all__ = ["CHECK_BONUS", "DEFAULT_VERSION", "VERSIONS", "VERSION_DYNAMICS", "SimDynamics"]


CHECK_BONUS: dict[str, float] = {
    "countdown": 2.0,
    "arithmetic": 0.8,
    "program_trace": 1.3,
    "program_trace_hard": 1.3,
    "modular": 1.2,
    "multiple_choice": 0.4,
    "multiple_choice_hard": 0.4,
}
"""How much easier checking a shown answer is than solving, per family (threshold
shift, simulator v2): a countdown expression is checked by evaluating it, a traced
value by re-running the loop, an option only by redoing most of the work."""

VERSION_DYNAMICS: dict[str, dict[str, Any]] = {
    name: dict(info.dynamics) for name, info in VERSION_INFO.items()
}
"""Per version, the :class:`SimDynamics` defaults it overrides (options override these)."""


@dataclass(frozen=True)
class SimDynamics:
    """How context changes a simulated worker's chance of being right (module docstring)."""

    refine_gain: float = 0.5
    mislead: float = 0.3
    relay: float = 0.95
    echo_wrong: float = 0.5
    word_coverage: float = 0.6
    token_sigma: float = 0.3
    task_correlation: float = 0.5
    call_correlation: float = 0.8
    # Simulator v2 only (see the module docstring's table).
    structure_share: float = 0.6
    lineage_share: float = 0.6
    habit: float = 0.8
    trust_partial: float = 0.8
    candidate_free: int = 2
    candidate_penalty: float = 0.6
    context_free_responses: int = 4
    context_penalty: float = 0.2
    check_bonus: Mapping[str, float] = field(default_factory=lambda: dict(CHECK_BONUS))
    # compared but not hashed (a read-only mapping has no hash; the workers' skill caches
    # hash their dynamics)
    family_structure: Mapping[str, float] = field(default_factory=dict, hash=False)
    """Per family, a ``structure_share`` replacing the worker's (a fitted pool's; 0: off)."""
    # Simulator v3 only (see conductor_gym.sim.v3; its values are in VERSION_DYNAMICS).
    claim_pull: float = 0.0
    claim_pull_checkable: float = 0.0
    check_scale: float = 1.0
    check_doubt: float = 0.0
    # Simulator v3.1 only (see conductor_gym.sim.v3_1; its values are in VERSION_DYNAMICS).
    check_anchor: float = 0.0
    check_anchor_checkable: float = 0.0
    reject_sway: float = 0.0
    hint_trust: float = 1.0
    hint_distract: float = 0.0
    trivial_bonus: float = 0.0
    hedge_miss: float = 0.0
    family_task_correlation: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in (
            "refine_gain",
            "mislead",
            "relay",
            "echo_wrong",
            "word_coverage",
            "task_correlation",
            "call_correlation",
            "structure_share",
            "lineage_share",
            "habit",
            "trust_partial",
            "claim_pull",
            "claim_pull_checkable",
            "check_doubt",
            "check_anchor",
            "check_anchor_checkable",
            "reject_sway",
            "hint_trust",
            "hedge_miss",
        ):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"SimDynamics.{name} must be in [0, 1], got {value!r}")
        for name in (
            "token_sigma",
            "candidate_penalty",
            "context_penalty",
            "check_scale",
            "hint_distract",
            "trivial_bonus",
        ):
            if not getattr(self, name) >= 0:
                raise ValueError(f"SimDynamics.{name} must be >= 0")
        for name in ("candidate_free", "context_free_responses"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"SimDynamics.{name} must be an int >= 0, got {value!r}")
        shared = dict(self.family_task_correlation)
        for family, value in shared.items():
            if family not in CHECK_BONUS or not 0.0 <= value < 1.0:
                raise ValueError(
                    f"SimDynamics.family_task_correlation[{family!r}]: a known family and a "
                    f"value in [0, 1), got {value!r}"
                )
        object.__setattr__(self, "family_task_correlation", MappingProxyType(shared))
        bonus = dict(self.check_bonus)
        if unknown := sorted(set(bonus) - set(CHECK_BONUS)):
            raise ValueError(f"SimDynamics.check_bonus: unknown families {unknown}")
        object.__setattr__(self, "check_bonus", MappingProxyType({**CHECK_BONUS, **bonus}))
        shares = dict(self.family_structure)
        if bad := sorted(f for f, v in shares.items() if f not in CHECK_BONUS or not 0 <= v <= 1):
            raise ValueError(
                f"SimDynamics.family_structure: unknown family or not in [0, 1]: {bad}"
            )
        object.__setattr__(self, "family_structure", MappingProxyType(shares))

    def structure(self, family: str) -> float:
        """The ``structure_share`` of ``family`` (``family_structure``, else the worker's)."""
        return self.family_structure.get(family, self.structure_share)
