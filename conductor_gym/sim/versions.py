"""The simulator's versions: a lazy registry of each version's decision, with what it can do.

Every version stays selectable (the backend option ``version``; results record it), so a
result re-plays on the simulator it ran. :data:`SIM_VERSIONS` maps a version's name to
its decision function by import path (imported on first use, one registry shape:
:class:`~conductor_gym.registry.Registry`); :data:`VERSION_INFO` holds, per version, its
:class:`SimVersion`: the parameter defaults it overrides and its **capability flags**, which
code reads instead of comparing version names (a new version says what it can do once,
here). :data:`DEFAULT_VERSION` is the version of the ``sim-paper`` preset and of a
simulated worker that names none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from conductor_gym.registry import Registry

if TYPE_CHECKING:
    import random

    from conductor_gym.sim.replies import ReplyMode
    from conductor_gym.sim.worker import TaskBoundSimulatedWorker
    from conductor_gym.workers.base import Message

__all__ = [
    "DEFAULT_VERSION",
    "SIM_VERSIONS",
    "VERSIONS",
    "VERSION_INFO",
    "Decide",
    "SimVersion",
    "version_info",
]

Decide = Callable[
    ["TaskBoundSimulatedWorker", "Sequence[Message]", "random.Random"],
    "tuple[ReplyMode, str | None]",
]
"""A version's decision for one call: ``(reply mode, final answer or None)`` from the bound
worker, its messages and the call's random stream."""


@dataclass(frozen=True)
class SimVersion:
    """One simulator version: its name, the import path of its :data:`Decide`, the
    :class:`~conductor_gym.sim.params.SimDynamics` defaults it overrides, and what it can do.

    Attributes:
        reads_messages: Its workers read their messages (problems, shown answers, the
            request) on procedural families (v2 and later); otherwise structure only.
        recognises_requests: What a subtask asks is recognised failing closed
            (:mod:`conductor_gym.sim.requests`; v3 and later).
        bounded_checking: It has claim pull and ``check_scale`` / ``check_doubt``
            (v3 and later): what a fit of checking steps estimates.
        sways: Shown answers sway every mode, unworked answers are claims, hints distract
            and derived questions keep the source's difficulty (v3.1 and later).
    """

    name: str
    decide: str
    summary: str
    dynamics: Mapping[str, Any] = field(default_factory=dict)
    reads_messages: bool = False
    recognises_requests: bool = False
    bounded_checking: bool = False
    sways: bool = False


_V3_DYNAMICS = {
    "call_correlation": 0.97,
    "relay": 0.98,
    "claim_pull": 0.35,
    "claim_pull_checkable": 0.2,
    "check_scale": 0.7,
    "check_doubt": 0.04,
    "candidate_penalty": 0.3,
    "context_penalty": 0.15,
}

_VERSIONS = (
    SimVersion(
        "v1",
        "conductor_gym.sim.v1:decide",
        "structure only: whether a message carries the question, whether earlier answers are right",
    ),
    SimVersion(
        "v2",
        "conductor_gym.sim.v2:decide",
        "workers read their messages and act on the request their word patterns find",
        {"call_correlation": 0.97, "relay": 0.98},
        reads_messages=True,
    ),
    SimVersion(
        "v3",
        "conductor_gym.sim.v3:decide",
        "v2's reading failing closed: recognised requests, claims that pull, bounded checking",
        _V3_DYNAMICS,
        reads_messages=True,
        recognises_requests=True,
        bounded_checking=True,
    ),
    SimVersion(
        "v3.1",
        "conductor_gym.sim.v3_1:decide",
        "v3 plus: derived questions keep their source's difficulty, shown answers sway "
        "every mode, laundered answers are claims, hints distract, answers are checkable "
        "wherever the question was placed, inverted and hedged requests",
        {
            **_V3_DYNAMICS,
            "task_correlation": 0.76,
            "family_task_correlation": {"multiple_choice": 0.88, "multiple_choice_hard": 0.88},
            "check_scale": 0.45,
            "check_doubt": 0.03,
            "candidate_penalty": 0.1,
            "check_anchor": 0.35,
            "check_anchor_checkable": 0.15,
            "reject_sway": 0.5,
            "hint_trust": 0.4,
            "hint_distract": 0.35,
            "trivial_bonus": 1.5,
            "hedge_miss": 0.3,
        },
        reads_messages=True,
        recognises_requests=True,
        bounded_checking=True,
        sways=True,
    ),
)

SIM_VERSIONS: Registry[Decide] = Registry("simulator version", field="backend_options.version")
"""Version name -> its decision (lazy ``"module:attr"`` paths)."""
for _version in _VERSIONS:
    SIM_VERSIONS.register(_version.name, _version.decide)

VERSION_INFO: Mapping[str, SimVersion] = MappingProxyType({v.name: v for v in _VERSIONS})
"""Version name -> :class:`SimVersion` (its dynamics and capability flags)."""

VERSIONS: tuple[str, ...] = tuple(VERSION_INFO)
"""Every selectable version, oldest first."""

DEFAULT_VERSION = "v3.1"
"""The version of the ``sim-paper`` preset and of a simulated worker that names none."""


def version_info(version: str) -> SimVersion:
    """The :class:`SimVersion` named ``version``; an unknown name raises
    :class:`~conductor_gym.errors.ConfigurationError` listing the known ones."""
    info = VERSION_INFO.get(version)
    if info is None:
        raise SIM_VERSIONS.unknown(version)
    return info
