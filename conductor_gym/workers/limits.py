"""Per-worker concurrency and rate limits, for any backend.

:class:`RateLimits` is the shared state of one configured worker in one process: at most
``max_concurrency`` calls in flight, at most ``requests_per_minute`` call starts and
``tokens_per_minute`` tokens a minute. :class:`LimitedWorker` wraps a backend worker and
waits for the limits before each call; every episode of every env in the process that
uses the same :class:`~conductor_gym.pool.pool.WorkerPool` shares one ``RateLimits`` per
worker, so the limits hold for the whole run, not per episode.

Rates are token buckets that refill continuously: requests start from a bucket of
``requests_per_minute`` (so up to that many may start at once after an idle minute),
refilled at ``requests_per_minute / 60`` a second. A call's tokens are known only when
it returns, so the token bucket is charged afterwards and may go negative; calls then
wait until it refills to zero. That keeps the long-run rate at the limit, as
providers meter it, without guessing completion lengths.

Waiting is ``asyncio.sleep``: hundreds of episodes can wait on one event loop without a
thread each. The semaphore is made per event loop, so a pool may be used from
different loops over its life (``env.step``'s private loop, then a vector env's).
"""

from __future__ import annotations

import asyncio
import time
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.workers.base import Completion, Message, Worker

if TYPE_CHECKING:
    from conductor_gym.tasks.base import Task

__all__ = ["LimitedWorker", "RateLimits"]


class _Bucket:
    """A token bucket: ``capacity`` at most, refilled at ``rate`` per second."""

    def __init__(self, per_minute: float, now: float) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.level = self.capacity
        self.stamp = now

    def refill(self, now: float) -> None:
        self.level = min(self.capacity, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def wait_for(self, amount: float) -> float:
        """Seconds until the level reaches ``amount`` (0 when it has, up to rounding: a
        sleep of exactly the computed time must be enough, or a waiter could spin)."""
        missing = amount - self.level
        return 0.0 if missing <= 1e-6 else missing / self.rate


class RateLimits:
    """The limits of one worker, shared by every call to it in this process.

    Args:
        max_concurrency: Most calls in flight (``None``: unlimited).
        requests_per_minute: Most call starts per minute (``None``: unlimited).
        tokens_per_minute: Most prompt plus completion tokens per minute (``None``).
        clock: Monotonic clock in seconds (replaceable to test the arithmetic).
        sleep: Coroutine that waits a number of seconds (same).
    """

    def __init__(
        self,
        *,
        max_concurrency: int | None = None,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        if max_concurrency is not None and max_concurrency < 1:
            raise ConfigurationError("RateLimits.max_concurrency must be >= 1 or None")
        for name, value in (
            ("requests_per_minute", requests_per_minute),
            ("tokens_per_minute", tokens_per_minute),
        ):
            if value is not None and not value > 0:
                raise ConfigurationError(f"RateLimits.{name} must be > 0 or None")
        self.max_concurrency = max_concurrency
        self._clock = clock
        self._sleep = sleep
        now = clock()
        self._requests = _Bucket(requests_per_minute, now) if requests_per_minute else None
        self._tokens = _Bucket(tokens_per_minute, now) if tokens_per_minute else None
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._semaphores = weakref.WeakKeyDictionary()
        self.waited_s = 0.0
        """Total time calls spent waiting for a rate (not for the concurrency limit)."""

    @property
    def active(self) -> bool:
        """Whether any limit is set."""
        return bool(self.max_concurrency or self._requests or self._tokens)

    def _semaphore(self) -> asyncio.Semaphore | None:
        if self.max_concurrency is None:
            return None
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.max_concurrency)
        return semaphore

    async def _wait_for_rates(self) -> None:
        while True:
            now = self._clock()
            delay = 0.0
            if self._requests is not None:
                self._requests.refill(now)
                delay = self._requests.wait_for(1.0)
            if self._tokens is not None:
                self._tokens.refill(now)
                # A level >= 0 admits a call; its size is charged afterwards.
                delay = max(delay, self._tokens.wait_for(0.0))
            if delay <= 0.0:
                if self._requests is not None:
                    self._requests.level -= 1.0
                return
            self.waited_s += delay
            await self._sleep(delay)

    def charge_tokens(self, tokens: int) -> None:
        """Charge a finished call's tokens to the token bucket."""
        if self._tokens is not None:
            self._tokens.refill(self._clock())
            self._tokens.level -= tokens

    async def run(self, call: Callable[[], Awaitable[Completion]]) -> Completion:
        """Run ``call`` within the limits."""
        semaphore = self._semaphore()
        if semaphore is not None:
            await semaphore.acquire()
        try:
            await self._wait_for_rates()
            completion = await call()
            self.charge_tokens(completion.prompt_tokens + completion.completion_tokens)
            return completion
        finally:
            if semaphore is not None:
                semaphore.release()


class LimitedWorker(Worker):
    """A worker whose calls wait for its :class:`RateLimits`.

    Keeps the wrapped worker's ``name``; ``for_task`` (simulated workers bind to the
    episode's task) returns a ``LimitedWorker`` around the bound worker that shares the
    same limits.
    """

    def __init__(self, worker: Worker, limits: RateLimits) -> None:
        self.worker = worker
        self.limits = limits
        self.name = worker.name

    def for_task(self, task: Task) -> Worker:
        bound = self.worker.for_task(task)
        return self if bound is self.worker else LimitedWorker(bound, self.limits)

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        return await self.limits.run(
            lambda: self.worker.complete(
                messages, max_tokens=max_tokens, temperature=temperature, seed=seed, **params
            )
        )

    def __repr__(self) -> str:
        return f"LimitedWorker({self.worker!r})"
