"""A process that writes rows into a response cache (tests/workers/test_cache.py runs several).

Usage: ``python tests/cache_writer.py DB INDEX N LOG``

Writes ``N`` rows of its own (model ``writer-INDEX``) through
:class:`~conductor_gym.workers.cache.ResponseCache`, one committed transaction each,
and after every tenth one a row that every writer writes identically (one of
:data:`SHARED` keys), so concurrent ``INSERT OR IGNORE`` of one key is exercised too.
After each own row's ``put`` has returned (the row is committed), it appends
``"KEY I\\n"`` to ``LOG`` in one ``write`` call.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from conductor_gym.workers.base import Completion
from conductor_gym.workers.cache import ResponseCache, cache_request

SHARED = 25


def own_row(index: int, i: int) -> tuple[dict[str, Any], Completion]:
    """The request and answer of writer ``index``'s row ``i``."""
    request = cache_request(
        f"writer-{index}",
        [{"role": "user", "content": f"writer {index}, row {i}"}],
        max_tokens=64,
        temperature=0.0,
        seed=None,
        params={"top_p": 0.9},
    )
    completion = Completion(
        text=f"answer {index}/{i} " + "x" * (i % 50),
        prompt_tokens=i,
        completion_tokens=2 * i + 1,
        cost_usd=i / 1000,
        latency_s=index + i / 100,
        model=f"reported/writer-{index}",
    )
    return request, completion


def shared_row(j: int) -> tuple[dict[str, Any], Completion]:
    """Shared row ``j`` (the same from every writer)."""
    request = cache_request(
        "shared",
        [{"role": "user", "content": f"shared {j}"}],
        max_tokens=8,
        temperature=0.5,
        seed=j,
        params={},
    )
    return request, Completion(f"shared answer {j}", j, j, 0.0, 0.5, "reported/shared")


async def write(db: str, index: int, n: int, log: str) -> None:
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        with ResponseCache(db) as cache:
            for i in range(n):
                key = await cache.put(*own_row(index, i))
                os.write(fd, f"{key} {i}\n".encode())
                if i % 10 == 9:
                    await cache.put(*shared_row((i // 10) % SHARED))
    finally:
        os.close(fd)


if __name__ == "__main__":
    db_path, worker_index, rows, log_path = sys.argv[1:]
    asyncio.run(write(db_path, int(worker_index), int(rows), log_path))
