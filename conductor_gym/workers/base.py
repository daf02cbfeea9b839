"""The worker interface shared by every backend."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from conductor_gym.errors import InfrastructureError

if TYPE_CHECKING:
    from conductor_gym.tasks.base import Task

__all__ = ["Completion", "Message", "Worker", "WorkerError"]

Message = Mapping[str, str]
"""A chat message: ``{"role": "system" | "user" | "assistant", "content": str}``."""


@dataclass(frozen=True)
class Completion:
    """One worker response with its accounting.

    ``cost_usd`` is what the call cost (0.0 for local models unless priced);
    ``latency_s`` is the wall time of the call (simulated workers report their
    simulated latency). ``cached`` is ``True`` when the response came from the
    response cache (:mod:`conductor_gym.workers.cache`): tokens, cost and latency are
    then those of the original call, which nobody paid for again.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_s: float
    model: str
    cached: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class WorkerError(InfrastructureError, RuntimeError):
    """A backend failure: never an answer.

    Attributes:
        transient: ``True`` for failures worth retrying (timeouts, rate limits, 5xx,
            connection resets, empty content); ``False`` for permanent ones (auth,
            unknown model, context too long).
        worker: Name of the worker that failed, when known.
    """

    def __init__(self, message: str, *, transient: bool, worker: str | None = None) -> None:
        super().__init__(message)
        self.transient = transient
        self.worker = worker


@runtime_checkable
class Worker(Protocol):
    """An LLM that answers a chat.

    Implementations raise :class:`WorkerError` on failure and never return an error
    message as if it were an answer. ``seed`` asks for a reproducible sample where
    the backend supports one; backends that cannot honour it ignore it.

    Backends subclass this protocol to get its optional hooks with their defaults:
    :meth:`for_task` (the worker for one episode's task: itself, unless it needs the
    task's ground truth, as the simulated backend does) and :attr:`aggregates_calls`
    (``False``: one call is one call). A pool refuses a backend whose worker lacks them.
    """

    name: str

    aggregates_calls: ClassVar[bool] = False
    """Whether a call runs inner calls that charge the episode's ledgers themselves (the
    conductor's own self-worker): its completion is then not charged again, and plan
    execution runs it after every earlier step, in step order."""

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion: ...

    def for_task(self, task: Task) -> Worker:
        """This worker for an episode of ``task`` (called once per episode). The default
        returns the worker itself; a wrapper returns itself when what it wraps does."""
        return self
