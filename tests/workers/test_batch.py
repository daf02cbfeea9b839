"""The micro-batcher shared by the in-process backends, driven by plain Python
callables as ``run_batch`` (real code, no doubles)."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from conductor_gym._loop import LoopRunner
from conductor_gym.workers.batch import MicroBatcher, check_options, check_window


class Recorder:
    """A ``run_batch`` that doubles numbers and records every batch and its thread."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.threads: set[int] = set()
        self.active = 0
        self.overlapped = False

    def __call__(self, requests: list[int]) -> list[int]:
        self.active += 1
        self.overlapped |= self.active > 1
        self.threads.add(threading.get_ident())
        self.batches.append(list(requests))
        self.active -= 1
        return [2 * r for r in requests]


def test_concurrent_requests_ride_one_batch_on_one_thread() -> None:
    run = Recorder()
    batcher: MicroBatcher[int, int] = MicroBatcher(run, max_batch_size=4, max_wait_s=10.0)

    async def main() -> list[int]:
        return await asyncio.gather(*(batcher.submit(i) for i in range(4)))

    assert asyncio.run(main()) == [0, 2, 4, 6]
    assert run.batches == [[0, 1, 2, 3]]
    assert (batcher.batches_run, batcher.requests_run, batcher.last_batch_size) == (1, 4, 4)
    assert run.threads and threading.get_ident() not in run.threads
    batcher.close()
    assert not batcher.running


def test_batches_never_exceed_max_size_and_keep_order() -> None:
    run = Recorder()
    batcher: MicroBatcher[int, int] = MicroBatcher(run, max_batch_size=2, max_wait_s=0.01)

    async def main() -> list[int]:
        return await asyncio.gather(*(batcher.submit(i) for i in range(5)))

    assert asyncio.run(main()) == [0, 2, 4, 6, 8]
    assert all(len(b) <= 2 for b in run.batches)
    assert sorted(r for b in run.batches for r in b) == [0, 1, 2, 3, 4]
    assert len(run.threads) == 1 and not run.overlapped
    batcher.close()


def test_an_exception_reaches_every_request_of_its_batch_and_the_batcher_recovers() -> None:
    def run(requests: list[int]) -> list[int]:
        if any(r < 0 for r in requests):
            raise ArithmeticError("negative input")
        return requests

    batcher: MicroBatcher[int, int] = MicroBatcher(run, max_batch_size=3, max_wait_s=10.0)

    async def main() -> list[int | BaseException]:
        return await asyncio.gather(
            *(batcher.submit(i) for i in (1, -1, 2)), return_exceptions=True
        )

    results = asyncio.run(main())
    assert all(isinstance(r, ArithmeticError) for r in results)

    async def again() -> list[int]:
        return await asyncio.gather(*(batcher.submit(i) for i in (7, 8, 9)))

    assert asyncio.run(again()) == [7, 8, 9]
    batcher.close()


def test_a_wrong_number_of_results_is_an_error_for_the_batch() -> None:
    batcher: MicroBatcher[int, int] = MicroBatcher(lambda requests: [], max_wait_s=0.0)
    with pytest.raises(RuntimeError, match="returned 0 results for 1 requests"):
        asyncio.run(batcher.submit(1))
    batcher.close()


def test_one_batcher_serves_successive_and_nested_event_loops() -> None:
    run = Recorder()
    batcher: MicroBatcher[int, int] = MicroBatcher(run, max_wait_s=0.0)
    assert asyncio.run(batcher.submit(1)) == 2  # a first loop
    runner = LoopRunner()  # the env's private loop
    assert runner.run(batcher.submit(2)) == 4
    assert runner.run(batcher.submit(3)) == 6

    async def inside_a_running_loop() -> int:
        # LoopRunner then runs the coroutine on a helper thread with a loop of its own
        return LoopRunner().run(batcher.submit(4))

    assert asyncio.run(inside_a_running_loop()) == 8
    runner.close()
    assert len(run.threads) == 1  # still one batch thread
    batcher.close()


def test_submit_future_without_an_event_loop() -> None:
    batcher: MicroBatcher[int, int] = MicroBatcher(Recorder(), max_wait_s=0.0)
    assert batcher.submit_future(21).result(timeout=60) == 42
    batcher.close()


def test_a_key_keeps_incompatible_requests_apart() -> None:
    run = Recorder()
    batcher: MicroBatcher[int, int] = MicroBatcher(
        run, max_batch_size=6, max_wait_s=10.0, key=lambda r: r % 2
    )

    async def main() -> list[int]:
        return await asyncio.gather(*(batcher.submit(i) for i in range(6)))

    assert asyncio.run(main()) == [0, 2, 4, 6, 8, 10]
    assert run.batches == [[0, 2, 4], [1, 3, 5]]
    batcher.close()


def test_a_request_cancelled_before_its_batch_starts_is_dropped() -> None:
    release = threading.Event()
    seen: list[str] = []

    def run(requests: list[str]) -> list[str]:
        seen.extend(requests)
        release.wait(60)
        return requests

    batcher: MicroBatcher[str, str] = MicroBatcher(run, max_batch_size=1, max_wait_s=0.0)

    async def main() -> None:
        first = asyncio.ensure_future(batcher.submit("a"))
        while not seen:  # the first batch is running (and blocked)
            await asyncio.sleep(0.001)
        second = asyncio.ensure_future(batcher.submit("b"))
        await asyncio.sleep(0)
        second.cancel()
        with pytest.raises(asyncio.CancelledError):
            await second
        release.set()
        assert await first == "a"
        assert await batcher.submit("c") == "c"

    asyncio.run(main())
    assert seen == ["a", "c"]
    batcher.close()


def test_the_thread_exits_when_idle_and_restarts_on_demand() -> None:
    batcher: MicroBatcher[int, int] = MicroBatcher(Recorder(), max_wait_s=0.0, idle_exit_s=0.01)
    assert asyncio.run(batcher.submit(1)) == 2
    for _ in range(6000):  # polls for the exit; does not time anything
        if not batcher.running:
            break
        time.sleep(0.005)
    assert not batcher.running
    assert asyncio.run(batcher.submit(2)) == 4
    batcher.close()


def test_invalid_settings_are_rejected() -> None:
    with pytest.raises(ValueError, match="max_batch_size"):
        check_window(0, 0.1)
    with pytest.raises(ValueError, match="max_wait_s"):
        check_window(4, -1)
    with pytest.raises(ValueError, match="max_batch_size"):
        MicroBatcher(Recorder(), max_batch_size=True)
    with pytest.raises(ValueError, match=r"W\.backend_options: unknown option\(s\) \['bogus'\]"):
        check_options("W", "hf", {"bogus": 1, "path": "x"}, ("path",))
