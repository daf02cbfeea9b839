"""A load test of ``conductor-gym serve``: 240 concurrent chat requests on loopback.

The server is the real command in a subprocess; the conductor is the shipped
``reflect:0:3`` agent (a scripted three-step plan: answer, then revise twice, each step
waiting for the one before); the workers are simulated and sleep for their simulated
latency times ``LATENCY_SCALE`` (the ``latency_scale`` backend option), so each plan has
a real critical path of about 0.27 s. Every request carries its own question and seed;
each response must equal what the service returns for that question and seed when
played in-process (content, usage, plans, traces): nothing lost, nothing mixed up.

Printed (``pytest -s``): requests per second over HTTP, and the latency each request
saw beyond its plan's critical path (the sum of its steps' slept latencies), for HTTP
and for the same episodes played in-process. Nothing here asserts a timer.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from serve_support import serve_command, simulated_pool_file
from support import require

aiohttp = require("aiohttp")
serve = require("conductor_gym.serve")

REQUESTS = 240
LATENCY_SCALE = 0.01
AGENT = "reflect:0:3"


def _question(i: int) -> str:
    return f"Request {i}: what is {i} + {2 * i}?"


async def _fire(base_url: str) -> tuple[list[tuple[int, dict[str, Any], float]], float]:
    # aiohttp as the client: httpx's connection pool, not the server, dominated the
    # latency at this concurrency (seconds per request on this machine).
    connector = aiohttp.TCPConnector(limit=REQUESTS)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def one(i: int) -> tuple[int, dict[str, Any], float]:
            body = {
                "model": "conductor",
                "messages": [{"role": "user", "content": _question(i)}],
                "seed": i,
            }
            start = time.perf_counter()
            async with session.post(f"{base_url}/chat/completions", json=body) as response:
                data = await response.json()
            return response.status, data, time.perf_counter() - start

        start = time.perf_counter()
        results = await asyncio.gather(*(one(i) for i in range(REQUESTS)))
        return list(results), time.perf_counter() - start


async def _in_process(pool: str) -> list[tuple[Any, float]]:
    model = serve.ConductorModel("conductor", AGENT, pool, max_batch=REQUESTS)

    async def one(i: int) -> tuple[Any, float]:
        start = time.perf_counter()
        answer = await model.answer(_question(i), seed=i)
        return answer, time.perf_counter() - start

    try:
        return list(await asyncio.gather(*(one(i) for i in range(REQUESTS))))
    finally:
        model.close()


def _critical_path_s(extension: dict[str, Any]) -> float:
    steps = [s for r in extension["rounds"] if r["trace"] for s in r["trace"]["steps"]]
    return LATENCY_SCALE * sum(s["latency_s"] for s in steps)


def _summary(extra_s: list[float]) -> str:
    ms = sorted(1000 * x for x in extra_s)
    p95 = ms[int(0.95 * (len(ms) - 1))]
    return f"median {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms, max {ms[-1]:.0f} ms"


def test_240_concurrent_requests_are_each_answered_with_their_own_episode(tmp_path: Path) -> None:
    pool = str(simulated_pool_file(tmp_path / "pool.toml", latency_scale=LATENCY_SCALE))
    command = ["--agent", AGENT, "--pool", pool, "--max-concurrency", str(REQUESTS)]
    with serve_command(command) as base_url:
        results, wall_s = asyncio.run(_fire(base_url))
    expected = asyncio.run(_in_process(pool))

    assert [status for status, _, _ in results] == [200] * REQUESTS
    http_extra, direct_extra, paths = [], [], []
    for i, ((_, body, seconds), (answer, direct_s)) in enumerate(
        zip(results, expected, strict=True)
    ):
        extension = body["conductor"]
        assert extension["seed"] == i
        assert _question(i) in extension["rounds"][0]["trace"]["steps"][0]["messages"][0]["content"]
        assert body["choices"][0]["message"]["content"] == answer.content
        assert body["usage"]["total_tokens"] == answer.usage.total_tokens
        assert extension["rounds"] == answer.extension()["rounds"]
        assert len(extension["plan"]["model_id"]) == 3
        path = _critical_path_s(extension)
        paths.append(path)
        http_extra.append(seconds - path)
        direct_extra.append(direct_s - path)
    assert len({body["id"] for _, body, _ in results}) == REQUESTS
    assert min(http_extra) > -0.01  # nobody answered before its plan could have run

    print(
        f"\nload test: {REQUESTS} concurrent requests, {AGENT} over 3 simulated workers "
        f"(latency x {LATENCY_SCALE}), critical path median "
        f"{1000 * statistics.median(paths):.0f} ms\n"
        f"  HTTP: {REQUESTS / wall_s:.0f} requests/s ({wall_s:.2f} s wall); added latency "
        f"over the critical path: {_summary(http_extra)}\n"
        f"  in-process (no HTTP): added latency {_summary(direct_extra)}"
    )
