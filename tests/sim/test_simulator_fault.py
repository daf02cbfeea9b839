"""A simulator bug is raised through the episode as :class:`SimulatorFault`, never
reported as a worker's infrastructure failure (which would truncate the episode and hide
the bug from whoever trains on it). The fault is injected with monkeypatch: the one mock
here, and it only injects the fault."""

from __future__ import annotations

import pytest
from support import plan_text

from conductor_gym import ConductorEnv
from conductor_gym.errors import ConductorGymError, InfrastructureError, SimulatorFault
from conductor_gym.sim import v3, v3_1
from conductor_gym.sim.versions import SIM_VERSIONS


def test_a_simulator_bug_is_raised_not_reported_as_a_worker_failure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise ZeroDivisionError("injected")

    monkeypatch.setattr(v3, "read", broken)
    env = ConductorEnv(pool="sim-paper-v3")
    env.reset(seed=0)
    with pytest.raises(SimulatorFault, match=r"simulator v3 failed for worker 'gemini-2.5-pro'.*"
                       r"ZeroDivisionError: injected") as raised:  # fmt: skip
        env.step(plan_text([0], ["Solve it."], [[]]))
    assert isinstance(raised.value, ConductorGymError)
    assert not isinstance(raised.value, InfrastructureError)


def test_a_reply_mode_the_worker_does_not_know_is_a_simulator_fault(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wrapper covers the whole reply, not only the decision: a decision naming a
    mode outside :class:`ReplyMode` (injected) is a fault of the simulator."""

    def unknown_mode(*args: object, **kwargs: object) -> tuple[str, str]:
        return "sing", "42"

    monkeypatch.setattr(v3_1, "decide", unknown_mode)
    monkeypatch.setattr(SIM_VERSIONS, "_loaded", {"v3.1": unknown_mode})
    env = ConductorEnv(pool="sim-paper")
    env.reset(seed=0)
    with pytest.raises(SimulatorFault, match=r"simulator v3.1 failed .*ValueError: 'sing'"):
        env.step(plan_text([0], ["Solve it."], [[]]))
