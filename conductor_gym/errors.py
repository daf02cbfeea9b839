"""The errors of conductor-gym: one base, three branches.

Every exception the library, its agents and its trainers define derives from
:class:`ConductorGymError` (``tests/test_error_tree.py`` holds it), and every one an episode
can meet goes through one of three branches that decide what happens to the episode:

``PolicyError``
    The conductor's own output is at fault: a completion that is not a valid plan
    (:class:`~conductor_gym.plan.PlanParseError`) or an inner call of the conductor that
    wrote none (:class:`~conductor_gym.core.execute.PolicyFailure`). The episode ends with
    the reward scheme's ``invalid`` reward; ``reason`` is machine-readable and ``detail``
    says what was wrong and where. It is a score: trainers learn from it.
``InfrastructureError``
    Something other than the policy failed: a worker after its retries
    (:class:`~conductor_gym.workers.base.WorkerError`,
    :class:`~conductor_gym.core.execute.ExecutionError`), the grader
    (:class:`~conductor_gym.graders.GraderError`), a spent budget
    (:class:`~conductor_gym.workers.budget.BudgetExceeded`), the agent's own model
    (:class:`~conductor_gym.core.agent.AgentError`). The episode is truncated and never
    scored; ``info["error"]`` (:meth:`InfrastructureError.to_dict`) says what failed.
``ConfigurationError``
    A setting is wrong: raised when an env, pool, task source or cache is built, before
    any episode, naming the field (``field``) and what is allowed. It is also a
    ``ValueError``, so ``except ValueError`` keeps working.

Four derive from the base alone, being no episode's outcome: ``serve``'s
:class:`~conductor_gym.serve.service.ServeError` (an HTTP request that got no answer,
with its status), the simulator's
:class:`~conductor_gym.sim.perception.interpreter.Unsupported` (a program it cannot
trace, caught where it is raised), :class:`SimulatorFault` (a bug in the simulated pool,
raised through the episode so that it is fixed, not trained around) and the docs
figures' :class:`~conductor_gym.bench.readme_figures.StaleProseError` (measured figures
that no longer support the prose around them).

Subclasses keep their own machine-readable attributes; they also subclass the builtin
they always were (``ValueError``, ``RuntimeError``), so existing handlers still match.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConductorGymError",
    "ConfigurationError",
    "InfrastructureError",
    "PolicyError",
    "UnknownNameError",
]


class ConductorGymError(Exception):
    """Base of every error conductor-gym raises on purpose."""


class PolicyError(ConductorGymError):
    """The conductor's output is at fault: reward ``invalid``, never a truncation.

    Attributes:
        reason: Machine-readable code (a :data:`conductor_gym.plan.REASONS` entry or an
            env-level one such as ``"empty_plan"``).
        detail: What was wrong, and where; deterministic for the same input.
    """

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail

    def to_dict(self) -> dict[str, str]:
        """``{"reason", "detail"}``: the ``info["parse_error"]`` form."""
        return {"reason": self.reason, "detail": self.detail}


class InfrastructureError(ConductorGymError):
    """Something other than the policy failed: the episode is truncated, never scored.

    ``kind`` names the branch in ``info["error"]``: ``"infrastructure"`` (a worker),
    ``"grader"``, ``"budget"`` or ``"agent"``.
    """

    kind: str = "infrastructure"
    trace: Any = None
    """The partial :class:`~conductor_gym.core.execute.Trace` of the plan that was running,
    when one was (set by :func:`~conductor_gym.core.execute.run_plan`)."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON-safe ``info["error"]`` mapping; subclasses add their fields."""
        return {"kind": self.kind, "error_type": type(self).__name__, "message": str(self)}


class SimulatorFault(ConductorGymError, RuntimeError):
    """A bug in the simulated pool (:mod:`conductor_gym.sim`), not a worker's failure and
    not the policy's: it is raised through the episode (never retried, never scored, never
    reported as an infrastructure failure of the worker), so that it is fixed, not
    trained around."""


class ConfigurationError(ConductorGymError, ValueError):
    """A bad setting, raised at construction.

    Attributes:
        field: The setting at fault (``"shuffle_workers"``, ``"pool"``,
            ``"tasks.data_dir"``, ...), or ``None`` when no single field is.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field


class UnknownNameError(ConfigurationError, KeyError):
    """A name that no registry holds (a backend, task source, grader, agent, ...); also a
    ``KeyError``, as a failed lookup."""

    __str__ = BaseException.__str__  # KeyError's would quote the message
