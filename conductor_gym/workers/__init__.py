"""Workers: the async protocol (:class:`Worker`), configured workers (:mod:`.spec`), a
worker bound to its generation settings and the retry policy (:mod:`.bound`), spending
budgets and ledgers (:mod:`.budget`), rate limits (:mod:`.limits`), the response cache
(:mod:`.cache`), request batching (:mod:`.batch`) and the real backends (:mod:`.litellm`,
:mod:`.hf`, :mod:`.vllm`). The simulated backend lives in :mod:`conductor_gym.sim`.

Only the protocol is imported here; a backend module is imported when a pool that uses
it is built (see :func:`conductor_gym.workers.spec.register_backend`), so heavy clients never
load on ``import conductor_gym``.
"""

from __future__ import annotations

from conductor_gym.workers.base import Completion, Message, Worker, WorkerError

__all__ = ["Completion", "Message", "Worker", "WorkerError"]
