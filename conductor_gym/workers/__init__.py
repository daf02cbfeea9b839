"""Worker backends, all behind one async protocol (:class:`Worker`).

Only the protocol is imported here; a backend module is imported when a pool that uses
it is built (see :func:`conductor_gym.pool.base.register_backend`), so heavy clients never
load on ``import conductor_gym``.
"""

from __future__ import annotations

from conductor_gym.workers.base import Completion, Message, Worker, WorkerError

__all__ = ["Completion", "Message", "Worker", "WorkerError"]
