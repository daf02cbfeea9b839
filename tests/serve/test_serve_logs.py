"""serve's log under repeated failures, and what a simulated pool says it cannot answer
(issue 42, item 4).

The log: once a worker kept failing, every ``--log-interval`` the access line that
carried "[N more like this suppressed]" broke uvicorn's access formatter (it unpacks the
record's five ``args``, which the rate limiter had replaced): ``--- Logging error ---``
and a ~70-line traceback each time. Here the records go through uvicorn's own
formatters, configured by uvicorn's own logging config.

The answer: over ``sim-paper`` a free-form question got ``Final answer: \\boxed{}`` and
nothing else; now the answer says that a simulated worker gave a placeholder.
"""

from __future__ import annotations

import asyncio
import io
import logging
import logging.config
from collections.abc import Iterator
from typing import Any

import pytest
from http_support import json_server
from support import require, require_spec

require("starlette")
uvicorn_config = require("uvicorn.config")

from conductor_gym.serve import SIMULATED_NOTE, ConductorModel  # noqa: E402
from conductor_gym.serve.logs import RateLimitedLog  # noqa: E402
from conductor_gym.workers.spec import WorkerSpec  # noqa: E402


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def uvicorn_logs() -> Iterator[tuple[io.StringIO, Clock]]:
    """uvicorn's loggers as ``uvicorn.Config`` sets them up, writing to one buffer, with
    a :class:`RateLimitedLog` of 10 s on a test clock."""
    logging.config.dictConfig(uvicorn_config.LOGGING_CONFIG)
    buffer, clock = io.StringIO(), Clock()
    saved = {}
    for name in ("uvicorn", "uvicorn.access", "uvicorn.error"):
        logger = logging.getLogger(name)
        saved[name] = (list(logger.handlers), list(logger.filters))
        for handler in logger.handlers:
            handler.setStream(buffer)  # type: ignore[attr-defined]
        if name != "uvicorn":
            logger.filters = [RateLimitedLog(10, clock=clock)]
    try:
        yield buffer, clock
    finally:
        for name, (handlers, filters) in saved.items():
            logger = logging.getLogger(name)
            logger.handlers, logger.filters = handlers, filters


def access(status: int, port: int) -> None:
    """What uvicorn's h11 protocol logs for a response (its format and arguments)."""
    logging.getLogger("uvicorn.access").info(
        '%s - "%s %s HTTP/%s" %d', f"127.0.0.1:{port}", "POST", "/v1/chat/completions", "1.1",
        status,
    )  # fmt: skip


def test_suppressed_lines_are_counted_without_breaking_uvicorn_formatters(
    uvicorn_logs: tuple[io.StringIO, Clock], capsys: pytest.CaptureFixture[str]
) -> None:
    buffer, clock = uvicorn_logs
    error = logging.getLogger("uvicorn.error")
    for interval in range(3):  # a worker that keeps failing, three log intervals
        clock.now = 10.0 * interval
        for port in range(4):
            access(502, 40_000 + port)
            error.warning("worker %r failed (%d%% of calls)", "down", 100)
    lines = buffer.getvalue().splitlines()
    assert "Logging error" not in capsys.readouterr().err
    assert len(lines) == 6, lines  # one line per kind per interval
    request = '"POST /v1/chat/completions HTTP/1.1" 502 Bad Gateway'
    assert lines[0].endswith(f"127.0.0.1:40000 - {request}")
    assert lines[2].endswith(f"127.0.0.1:40000 [3 more like this suppressed in 10 s] - {request}")
    assert lines[3].endswith(
        "worker 'down' failed (100% of calls) [3 more like this suppressed in 10 s]"
    )


def test_a_simulated_pool_says_it_cannot_answer_a_free_form_question() -> None:
    model = ConductorModel("c", "single:0", "sim-paper")
    try:
        answer = asyncio.run(model.answer("Write a haiku about the sea.", seed=1))
    finally:
        model.close()
    worker = answer.info["rounds"][-1].trace.steps[-1].worker  # type: ignore[union-attr]
    note = SIMULATED_NOTE.format(worker=worker, of_pool=" of pool 'sim-paper'")
    assert answer.simulated and answer.extension()["simulated"] is True
    assert answer.content.endswith(note) and "cannot answer a question of their own" in note


def test_a_real_worker_answer_carries_no_note() -> None:
    require_spec("litellm")

    def reply(_: Any) -> tuple[int, Any]:
        message = {"role": "assistant", "content": "Final answer: \\boxed{5}"}
        return 200, {
            "id": "x", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8},
        }  # fmt: skip

    with json_server(reply) as url:
        spec = WorkerSpec(
            "real", backend="litellm", model="openai/m", backend_options={"api_base": url},
            price_in_per_mtok=0, price_out_per_mtok=0,
        )  # fmt: skip
        model = ConductorModel("c", "single:0", [spec])
        try:
            answer = asyncio.run(model.answer("What is 2 + 3?", seed=1))
        finally:
            model.close()
    assert answer.content == "Final answer: \\boxed{5}" and not answer.simulated
