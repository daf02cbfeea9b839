"""The env's ``info``: typed.

:class:`ResetInfo` is what ``reset`` returns and every ``step`` repeats; :class:`StepInfo`
adds what a step reports. Both are ``TypedDict`` s, so a reader that misspells a key or
reads a number as a string fails type checking (the library reads them with ``info[key]``,
never ``info.get(key, default)``, which would hide a rename). :data:`OUTCOMES` lists the
values of ``info["outcome"]``, the :class:`~conductor_gym.core.reward.Outcome` enum's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from conductor_gym.core.reward import Outcome

if TYPE_CHECKING:
    from conductor_gym.core.episode import Round
    from conductor_gym.core.execute import Trace
    from conductor_gym.graders import Grade
    from conductor_gym.plan import Plan

__all__ = ["OUTCOMES", "ErrorInfo", "ParseError", "ResetInfo", "StepInfo", "Totals"]

OUTCOMES: tuple[str, ...] = tuple(o.value for o in Outcome)
"""``"correct"``, ``"wrong"``, ``"invalid"``, ``"error"``."""


class ParseError(TypedDict):
    """Why a completion is not a valid plan: ``reason`` is machine-readable (a
    :data:`conductor_gym.plan.REASONS` entry or an env-level one), ``detail`` says where."""

    reason: str
    detail: str


ErrorInfo = dict[str, Any]
"""An infrastructure failure (:meth:`conductor_gym.errors.InfrastructureError.to_dict`):
always ``kind`` and ``message``; a worker failure adds ``step``, ``worker``, ``attempts``,
``transient`` and ``error_type``; a budget adds ``scope``, ``limit``, ``spent``."""


class ResetInfo(TypedDict):
    """After ``reset`` (and repeated by every ``step``)."""

    task_id: str
    task_index: int
    domain: str
    question: str
    pool: tuple[str, ...]
    """Worker names; position ``i`` is ``Model i``."""
    num_workers: int
    max_steps: int
    round: int
    can_stop: bool
    """Whether three empty lists are accepted now."""
    recursions_left: int
    forced_recursion: bool
    self_worker_id: int | None


class Totals(TypedDict):
    """Accounting over every round and inner call of the episode so far."""

    worker_calls: int
    """Calls to real workers, retries included."""
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    """Every call, cached ones at their recorded cost."""
    billed_usd: float
    """Calls that reached a backend."""
    cache_saved_usd: float
    """Calls answered from the response cache."""
    latency_s: float
    """Summed worker latency."""


class StepInfo(ResetInfo, Totals):
    """After ``step``: the round just played, the episode so far, and the totals."""

    rounds: tuple[Round, ...]
    plan: Plan | None
    parse_error: ParseError | None
    trace: Trace | None
    """Partial after a failure."""
    outcome: Outcome | None
    """``None`` while the episode goes on, then its :class:`Outcome` (a ``str`` enum: it
    compares equal to, and serialises as, one of :data:`OUTCOMES`)."""
    grade: Grade | None
    initial_grade: Grade | None
    """With ``initial_round_weight > 0``: the grade of the first round's answer."""
    error: ErrorInfo | None
