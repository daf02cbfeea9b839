"""Running the library's coroutines from synchronous code, and on a background loop.

:func:`run_sync` runs one coroutine from synchronous code; :class:`LoopRunner` runs many
on one private loop (both use a helper thread when the calling thread already runs a
loop: an async trainer, a notebook).
:class:`BackgroundLoop` is one loop on a daemon thread that coroutines on any loop or
thread can await work on: a client library that binds state to the loop it first runs
on (LiteLLM caches its HTTP clients per loop and keeps a logging task on the loop of its
last call) then sees one loop for the whole process, however many loops its callers
open and close.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

__all__ = ["BackgroundLoop", "LoopRunner", "run_sync"]

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


def _finish_tasks(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel and await the tasks still pending on ``loop`` (not running), then shut its
    async generators down: what ``asyncio.run`` does before it closes its loop. A task
    left pending on a closed loop is destroyed later by the garbage collector ("Task
    was destroyed but it is pending!")."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())


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
        """Cancel and await the loop's pending tasks, then close it (idempotent)."""
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            try:
                _finish_tasks(loop)
            finally:
                loop.close()

    def __del__(self) -> None:
        # An env dropped without close() must not leak its loop's selector. Only close
        # the loop here: running it from a finaliser (perhaps at interpreter exit, with
        # its modules torn down) is not safe.
        with contextlib.suppress(Exception):
            loop, self._loop = self._loop, None
            if loop is not None and not loop.is_closed():
                loop.close()


class BackgroundLoop:
    """An event loop on a daemon thread, started at the first :meth:`run`.

    ``await background.run(coro)`` runs ``coro`` on that loop from a coroutine on any
    other loop (cancelling the caller cancels ``coro``). :meth:`close` awaits
    ``on_close()`` on the loop (bounded by ``close_timeout_s``), cancels what is still
    pending there, stops the thread and closes the loop; the next :meth:`run` starts a
    new one. It runs at interpreter exit by itself (an ``atexit`` handler registered
    when the thread starts: ``atexit`` runs handlers last-in first-out, so this one runs
    before those of libraries imported before the first :meth:`run`). A forked child
    process starts its own loop (the parent's thread does not exist there).
    """

    def __init__(
        self,
        name: str,
        *,
        on_close: Callable[[], Coroutine[Any, Any, None]] | None = None,
        close_timeout_s: float = 10.0,
    ) -> None:
        self.name = name
        self.on_close = on_close
        self.close_timeout_s = close_timeout_s
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = 0
        self._atexit = False

    async def run(self, coro: Coroutine[Any, Any, _T]) -> _T:
        """``await coro`` on the background loop."""
        loop = self._ensure_loop()
        if asyncio.get_running_loop() is loop:
            return await coro
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))

    def close(self) -> None:
        """Run ``on_close``, finish pending tasks, stop the thread, close the loop."""
        with self._lock:
            loop, thread, self._loop, self._thread = self._loop, self._thread, None, None
            if loop is None or thread is None or self._pid != os.getpid():
                return
        if self.on_close is not None:
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self.on_close(), loop).result(self.close_timeout_s)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(self.close_timeout_s)
        if not thread.is_alive():
            try:
                _finish_tasks(loop)
            finally:
                loop.close()

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread, self._pid = loop, thread, os.getpid()
                if not self._atexit:
                    atexit.register(self.close)
                    self._atexit = True
            return self._loop
