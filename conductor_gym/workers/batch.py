"""An async micro-batcher for in-process inference engines (transformers, vLLM).

Many episodes share one event loop, and each awaits its own worker call. An in-process
model is far faster on a batch of prompts than on the same prompts one by one, and it
must never block the event loop nor run on two threads at once. :class:`MicroBatcher`
does both:

* ``await batcher.submit(request)`` enqueues the request and suspends the caller;
* one dedicated daemon thread per batcher takes the first waiting request, then keeps
  collecting until ``max_batch_size`` requests are in hand or ``max_wait_s`` has passed
  since the first one (requests that queued up while the previous batch ran are taken
  at once, without waiting), and calls the synchronous ``run_batch(requests)``, which
  must return one result per request, in order;
* each caller gets its own result; an exception raised by ``run_batch`` (or a result
  list of the wrong length) is delivered to every request of that batch.

Batch compatibility: by default any requests may share a batch, and ``run_batch``
handles per-request settings (the transformers and vLLM workers do). A ``key`` function
may instead split requests: a collected window is partitioned by ``key(request)`` and
each part runs as its own batch, in order of arrival of its first request.

Event loops: each request is resolved through a thread-safe
:class:`concurrent.futures.Future`, wrapped for whichever loop awaits it at that moment,
so one batcher serves any number of event loops over its lifetime (a private loop, then
another, or several at once). A caller that is cancelled before its batch starts is
dropped from the batch; one cancelled while its batch runs simply ignores the result.

Thread lifetime: the thread starts on the first request and exits after ``idle_exit_s``
without requests (a later request starts a new one), so an abandoned batcher does not
keep a thread forever. :meth:`close` stops it at once.

:class:`BatchedWorker` is the :class:`~conductor_gym.workers.base.Worker` half shared by
the in-process backends: it checks a call, submits it to its batcher, and turns the
:class:`BatchResult` into a priced :class:`~conductor_gym.workers.base.Completion`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import queue
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from conductor_gym.errors import ConfigurationError
from conductor_gym.workers.base import Completion, Message, Worker, WorkerError

__all__ = [
    "BatchResult",
    "BatchedWorker",
    "MicroBatcher",
    "check_options",
    "check_window",
    "is_oom",
]

RequestT = TypeVar("RequestT")
ResultT = TypeVar("ResultT")

_STOP = object()

_Item = tuple[RequestT, "concurrent.futures.Future[ResultT]"]
"""A queued request with the future of its result."""


class MicroBatcher(Generic[RequestT, ResultT]):
    """Groups concurrent requests into batches run by ``run_batch`` on one thread.

    Args:
        run_batch: Synchronous ``(list of requests) -> list of results``, one result per
            request in the same order. It is only ever called from the batcher's thread,
            one batch at a time.
        max_batch_size: Most requests in one batch (>= 1).
        max_wait_s: How long the thread waits, after the first request of a batch, for
            more to arrive (>= 0; 0 takes only what is already queued).
        key: Optional ``request -> hashable``; requests with different keys never share
            a batch. ``None``: any requests may share one.
        name: Name of the thread (for debugging).
        idle_exit_s: The thread exits after this long without requests (> 0).

    Attributes:
        batches_run: Batches passed to ``run_batch`` so far (failed ones included).
        requests_run: Requests in those batches.
        last_batch_size: Size of the most recent batch (0 before the first).
    """

    def __init__(
        self,
        run_batch: Callable[[list[RequestT]], Sequence[ResultT]],
        *,
        max_batch_size: int = 8,
        max_wait_s: float = 0.01,
        key: Callable[[RequestT], Hashable] | None = None,
        name: str = "micro-batcher",
        idle_exit_s: float = 30.0,
    ) -> None:
        check_window(max_batch_size, max_wait_s)
        if not _finite_at_least(idle_exit_s, 0.0) or idle_exit_s == 0:
            raise ConfigurationError(f"idle_exit_s must be a number > 0, got {idle_exit_s!r}")
        self._run_batch = run_batch
        self.max_batch_size = max_batch_size
        self.max_wait_s = float(max_wait_s)
        self._key = key
        self.name = name
        self._idle_exit_s = float(idle_exit_s)
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.batches_run = 0
        self.requests_run = 0
        self.last_batch_size = 0

    # -- submitting -------------------------------------------------------------------

    def submit_future(self, request: RequestT) -> concurrent.futures.Future[ResultT]:
        """Enqueue ``request``; return a thread-safe future of its result (for callers
        without an event loop)."""
        future: concurrent.futures.Future[ResultT] = concurrent.futures.Future()
        with self._lock:
            self._queue.put((request, future))
            if self._thread is None:
                self._thread = threading.Thread(target=self._serve, name=self.name, daemon=True)
                self._thread.start()
        return future

    async def submit(self, request: RequestT) -> ResultT:
        """Enqueue ``request`` and wait for its result without blocking the event loop.

        Raises whatever ``run_batch`` raised for the batch the request rode in.
        """
        return await asyncio.wrap_future(self.submit_future(request))

    def close(self, timeout: float | None = None) -> None:
        """Stop the thread once the queued requests are served; wait up to ``timeout``
        seconds for it. A later :meth:`submit` starts a new thread."""
        with self._lock:
            thread = self._thread
            if thread is None:
                return
            self._queue.put(_STOP)
        if thread is not threading.current_thread():
            thread.join(timeout)

    @property
    def running(self) -> bool:
        """Whether the batch thread is alive."""
        thread = self._thread
        return thread is not None and thread.is_alive()

    # -- the batch thread -------------------------------------------------------------

    def _serve(self) -> None:
        while True:
            try:
                first = self._queue.get(timeout=self._idle_exit_s)
            except queue.Empty:
                with self._lock:
                    if self._queue.empty():
                        self._thread = None
                        return
                continue
            if first is _STOP:
                with self._lock:
                    self._thread = None
                    if not self._queue.empty():  # requests that raced the stop
                        self._thread = threading.Thread(
                            target=self._serve, name=self.name, daemon=True
                        )
                        self._thread.start()
                return
            # A helper call, so that no finished request (nor, through its future, the
            # event loop that awaited it) stays referenced while the thread waits.
            if self._serve_window(first):
                self._queue.put(_STOP)
            del first

    def _serve_window(self, first: object) -> bool:
        """Collect a window from ``first``, run its batches; ``True`` when a stop request
        was seen."""
        window, stop = self._collect(first)
        try:
            batches = self._split(window)
        except BaseException as exc:  # a failing key function fails its window
            batches = []
            for _, fut in window:
                if fut.set_running_or_notify_cancel():
                    fut.set_exception(exc)
        for batch in batches:
            self._run(batch)
        return stop

    def _collect(self, first: object) -> tuple[list[_Item[RequestT, ResultT]], bool]:
        """The first request and whatever follows within the window; ``True`` when a stop
        request was seen (it is re-queued after the batch runs)."""
        window: list[_Item[RequestT, ResultT]] = [first]  # type: ignore[list-item]
        deadline = time.monotonic() + self.max_wait_s
        while len(window) < self.max_batch_size:
            remaining = deadline - time.monotonic()
            try:
                item = (
                    self._queue.get(timeout=remaining)
                    if remaining > 0
                    else self._queue.get_nowait()
                )
            except queue.Empty:
                break
            if item is _STOP:
                return window, True
            window.append(item)  # type: ignore[arg-type]
        return window, False

    def _split(
        self, window: list[_Item[RequestT, ResultT]]
    ) -> list[list[_Item[RequestT, ResultT]]]:
        if self._key is None:
            return [window]
        groups: dict[Hashable, list[_Item[RequestT, ResultT]]] = {}
        for item in window:
            groups.setdefault(self._key(item[0]), []).append(item)
        return list(groups.values())

    def _run(self, batch: list[_Item[RequestT, ResultT]]) -> None:
        live = [(req, fut) for req, fut in batch if fut.set_running_or_notify_cancel()]
        if not live:
            return
        self.batches_run += 1
        self.requests_run += len(live)
        self.last_batch_size = len(live)
        try:
            results = list(self._run_batch([req for req, _ in live]))
            if len(results) != len(live):
                raise RuntimeError(
                    f"{self.name}: run_batch returned {len(results)} results for "
                    f"{len(live)} requests"
                )
        except BaseException as exc:  # delivered to every caller of the batch
            for _, fut in live:
                fut.set_exception(exc)
            return
        for (_, fut), result in zip(live, results, strict=True):
            fut.set_result(result)


def check_window(max_batch_size: object, max_wait_s: object) -> None:
    """Raise ``ConfigurationError`` unless ``max_batch_size`` is an int >= 1 and ``max_wait_s`` a
    number >= 0 (a batching window :class:`MicroBatcher` accepts)."""
    if isinstance(max_batch_size, bool) or not isinstance(max_batch_size, int):
        raise ConfigurationError(f"max_batch_size must be an int >= 1, got {max_batch_size!r}")
    if max_batch_size < 1:
        raise ConfigurationError(f"max_batch_size must be an int >= 1, got {max_batch_size!r}")
    if not _finite_at_least(max_wait_s, 0.0):
        raise ConfigurationError(f"max_wait_s must be a number >= 0, got {max_wait_s!r}")


def _finite_at_least(value: object, minimum: float) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= minimum
    )


# -- the Worker half of an in-process batched backend ---------------------------------


@dataclass(frozen=True)
class BatchResult:
    """What a backend's ``run_batch`` returns per request. ``latency_s`` is the wall
    time of the whole batch the request rode in."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float


class BatchedWorker(Worker, Generic[RequestT]):
    """Base of the in-process workers: :meth:`complete` validates the call, builds the
    backend's request (:meth:`_make_request`, on the event loop), awaits the batch
    (:meth:`_run_batch`, on the batch thread) and prices the result.

    Errors: anything raised while building the request or running the batch reaches
    the caller as a :class:`WorkerError` whose ``__cause__`` is the original exception:
    permanent, except out-of-memory errors (:func:`is_oom`), which are transient.
    """

    backend = "in-process"

    def __init__(
        self,
        name: str,
        *,
        model_name: str,
        price_in_per_mtok: float | None,
        price_out_per_mtok: float | None,
        max_batch_size: int,
        max_wait_s: float,
    ) -> None:
        self.name = name
        self.model_name = model_name
        self.price_in_per_mtok = price_in_per_mtok or 0.0
        self.price_out_per_mtok = price_out_per_mtok or 0.0
        try:
            self._batcher: MicroBatcher[RequestT, BatchResult] = MicroBatcher(
                self._run_batch,
                max_batch_size=max_batch_size,
                max_wait_s=max_wait_s,
                name=f"{self.backend}-worker-{name}",
            )
        except ValueError as exc:
            raise ConfigurationError(f"{self.backend} worker {name!r}: {exc}") from None

    @property
    def batches_run(self) -> int:
        """Batches this worker has run so far."""
        return self._batcher.batches_run

    @property
    def last_batch_size(self) -> int:
        """Requests in the most recent batch."""
        return self._batcher.last_batch_size

    def close(self) -> None:
        """Stop the batch thread (a later call starts a new one)."""
        self._batcher.close()

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        try:
            _check_call(max_tokens, temperature, seed)
            request = self._make_request(
                [{"role": str(m["role"]), "content": str(m["content"])} for m in messages],
                max_tokens,
                float(temperature),
                seed,
                params,
            )
            result = await self._batcher.submit(request)
        except Exception as exc:
            cause = exc.__cause__ if isinstance(exc, WorkerError) and exc.__cause__ else exc
            raise self._error(exc) from cause
        cost = (
            result.prompt_tokens * self.price_in_per_mtok
            + result.completion_tokens * self.price_out_per_mtok
        ) / 1e6
        return Completion(
            text=result.text,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            cost_usd=cost,
            latency_s=result.latency_s,
            model=self.model_name,
        )

    def _make_request(
        self,
        messages: list[dict[str, str]],
        max_tokens: int,
        temperature: float,
        seed: int | None,
        params: Mapping[str, Any],
    ) -> RequestT:
        """The backend's request for one call (raise ``ValueError`` for bad params)."""
        raise NotImplementedError

    def _run_batch(self, requests: list[RequestT]) -> list[BatchResult]:
        """Generate a batch (on the batch thread), one result per request."""
        raise NotImplementedError

    def _error(self, exc: Exception) -> WorkerError:
        where = f"{self.backend} worker {self.name!r}"
        if isinstance(exc, WorkerError):
            return WorkerError(str(exc), transient=exc.transient, worker=exc.worker or self.name)
        if isinstance(exc, ValueError):
            return WorkerError(f"{where}: {exc}", transient=False, worker=self.name)
        transient = is_oom(exc)
        kind = "out of memory (transient)" if transient else "generation failed"
        return WorkerError(
            f"{where}: {kind}: {type(exc).__name__}: {exc}", transient=transient, worker=self.name
        )


def _check_call(max_tokens: object, temperature: object, seed: object) -> None:
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be an int >= 1, got {max_tokens!r}")
    if not _finite_at_least(temperature, 0.0):
        raise ValueError(f"temperature must be a number >= 0, got {temperature!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise ValueError(f"seed must be None or an int, got {seed!r}")


def is_oom(exc: BaseException) -> bool:
    """Whether ``exc`` is an accelerator out-of-memory error (worth a retry)."""
    return type(exc).__name__ == "OutOfMemoryError" or "out of memory" in str(exc).lower()


def check_options(
    where: str, backend: str, options: Mapping[str, Any], valid: Sequence[str]
) -> None:
    """Raise ``ConfigurationError`` naming ``where`` and the options not in ``valid``."""
    if unknown := sorted(set(options) - set(valid)):
        raise ConfigurationError(
            f"{where}.backend_options: unknown option(s) {unknown} for the {backend} backend; "
            f"valid: {list(valid)}"
        )
