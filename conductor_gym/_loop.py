"""Running the library's coroutines from synchronous code: :func:`run_sync` once,
:class:`LoopRunner` many times on one loop. Both run the coroutine on a helper thread
when the calling thread already runs an event loop (an async trainer, a notebook)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Coroutine
from typing import Any, TypeVar

_T = TypeVar("_T")


def _on_helper_thread(coro: Coroutine[Any, Any, _T]) -> _T:
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as executor:
        return executor.submit(asyncio.run, coro).result()


def run_sync(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` to completion: ``asyncio.run`` (a fresh loop whose leftover tasks, such
    as a client library's background loggers, are cancelled and awaited before it
    closes), on a helper thread when this thread already runs a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    return _on_helper_thread(coro)


class LoopRunner:
    """Runs coroutines to completion on a private event loop, reused across calls.

    Reusing one loop keeps per-call overhead to tens of microseconds (``asyncio.run``
    builds and tears down a loop every time). When the caller's thread already runs a
    loop (an async trainer, a notebook), a nested ``run_until_complete`` is impossible,
    so the coroutine runs on a helper thread with a loop of its own.
    """

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            if self._loop is None or self._loop.is_closed():
                self._loop = asyncio.new_event_loop()
            return self._loop.run_until_complete(coro)
        return _on_helper_thread(coro)

    def close(self) -> None:
        if self._loop is not None and not self._loop.is_closed():
            self._loop.close()
        self._loop = None

    def __del__(self) -> None:
        # An env dropped without close() must not leak its loop's selector. At interpreter
        # exit the loop's modules may already be torn down: nothing is left to leak then.
        with contextlib.suppress(Exception):
            self.close()
