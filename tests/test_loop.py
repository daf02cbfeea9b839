"""``LoopRunner`` and ``BackgroundLoop``: loops closed the way ``asyncio.run`` closes its own."""

from __future__ import annotations

import asyncio
import gc
import threading

import pytest

from conductor_gym._loop import BackgroundLoop, LoopRunner


def test_closing_a_runner_cancels_and_awaits_its_pending_tasks(
    capfd: pytest.CaptureFixture[str],
) -> None:
    runner = LoopRunner()
    cleaned: list[str] = []

    async def background() -> None:
        try:
            await asyncio.Event().wait()
        finally:
            cleaned.append("finally ran")

    async def start() -> asyncio.Task[None]:
        task = asyncio.create_task(background())
        await asyncio.sleep(0)  # let it start and suspend
        return task

    task = runner.run(start())
    runner.close()
    assert task.cancelled() and cleaned == ["finally ran"]
    del task
    gc.collect()
    assert "Task was destroyed" not in capfd.readouterr().err
    runner.close()  # idempotent
    assert runner.run(asyncio.sleep(0, "again")) == "again"  # a new loop
    runner.close()


def test_background_loop_serves_every_caller_loop_on_one_thread() -> None:
    closed: list[str] = []

    async def on_close() -> None:
        closed.append(threading.current_thread().name)

    background = BackgroundLoop("cg-test-loop", on_close=on_close)

    async def where() -> tuple[str, asyncio.AbstractEventLoop]:
        return threading.current_thread().name, asyncio.get_running_loop()

    first = asyncio.run(background.run(where()))
    second = LoopRunner()
    try:
        again = second.run(background.run(where()))
    finally:
        second.close()
    assert first == again and first[0] == "cg-test-loop"
    background.close()
    assert closed == ["cg-test-loop"] and first[1].is_closed()
    restarted = asyncio.run(background.run(where()))
    assert restarted[0] == "cg-test-loop" and restarted[1] is not first[1]
    background.close()


def test_cancelling_the_caller_cancels_the_work_on_the_background_loop() -> None:
    background = BackgroundLoop("cg-test-cancel")
    started, cancelled = threading.Event(), threading.Event()

    async def slow() -> None:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise

    async def caller() -> None:
        task = asyncio.create_task(background.run(slow()))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(caller())
    assert cancelled.wait(10)
    background.close()
