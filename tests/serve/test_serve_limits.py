"""``serve`` under slow and malformed clients (issue 29, items 9 and 10), over real
sockets on loopback: the real app under :func:`conductor_gym.serve.server.uvicorn_config`
on a thread, a shipped conductor (``single:0``) over the simulated pool.

Half-open connections are capped and closed after the header timeout while real
requests still get answers; a body that stops arriving is a 408; every client error is a
4xx with a JSON error body, never a 500; a flood of bad requests logs a few lines, not a
traceback each. Limits are small here (a cap of 16, a 2 s header timeout) so it runs
fast; nothing asserts a timer, only what the server did.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from llama_server import free_port
from support import require

require("starlette")
uvicorn = require("uvicorn")

from conductor_gym.serve import ConductorModel, create_app  # noqa: E402
from conductor_gym.serve.logs import RateLimitedLog  # noqa: E402
from conductor_gym.serve.server import (  # noqa: E402
    LIMITED_LOGGERS,
    ServerLimits,
    exposure_warning,
    uvicorn_config,
)

CAP = 16
HALF_OPEN = 50
HEADER_TIMEOUT_S = 2.0
BODY_TIMEOUT_S = 0.5
WAIT_S = 30.0  # a generous bound for what must happen after a timeout


class Records(logging.Handler):
    """Every record that passed the loggers' filters."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class Server:
    def __init__(self, port: int, server: Any, records: Records) -> None:
        self.port = port
        self.server = server
        self.records = records

    def open_connections(self) -> int:
        return sum(not c.transport.is_closing() for c in self.server.server_state.connections)

    def request(self, method: str, path: str, body: bytes | None = None, **headers: str) -> Any:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT_S)
        try:
            connection.request(method, path, body=body, headers=headers)
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def chat(self, body: Any) -> tuple[int, dict[str, Any]]:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        status, _, data = self.request(
            "POST", "/v1/chat/completions", raw, **{"content-type": "application/json"}
        )
        return status, json.loads(data)


def fresh_limits(interval_s: float) -> None:
    """New rate limits on the server's loggers: kinds logged before are forgotten."""
    for name in LIMITED_LOGGERS:
        logger = logging.getLogger(name)
        for limiter in [f for f in logger.filters if isinstance(f, RateLimitedLog)]:
            logger.removeFilter(limiter)
        logger.addFilter(RateLimitedLog(interval_s))


@pytest.fixture(scope="module")
def served() -> Iterator[Server]:
    models = [
        ConductorModel("c", "single:0", "sim-paper"),
        ConductorModel("moa", "moa", "sim-paper"),  # quotes the question in every step
    ]
    app = create_app(models, body_timeout_s=BODY_TIMEOUT_S, log_interval_s=600)
    port = free_port()
    limits = ServerLimits(header_timeout_s=HEADER_TIMEOUT_S, keep_alive_s=1, max_connections=CAP)
    config = uvicorn_config(app, port=port, limits=limits, log_level="warning", log_interval_s=600)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_S
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the server did not start"
    records = Records()
    loggers = [logging.getLogger(name) for name in ("conductor_gym.serve", "uvicorn.error")]
    for logger in loggers:
        logger.addHandler(records)
    try:
        yield Server(port, server, records)
    finally:
        for logger in loggers:
            logger.removeHandler(records)
        server.should_exit = True
        thread.join(timeout=10)


def question(text: str, **fields: Any) -> dict[str, Any]:
    return {"model": "c", "messages": [{"role": "user", "content": text}], **fields}


def test_half_open_connections_are_capped_closed_and_lock_no_one_out(served: Server) -> None:
    sockets = []
    for i in range(HALF_OPEN):
        s = socket.create_connection(("127.0.0.1", served.port), timeout=WAIT_S)
        if i % 2:  # half send part of a request head, half send nothing
            s.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n")
        sockets.append(s)
    try:
        deadline = time.monotonic() + WAIT_S
        while served.open_connections() > CAP and time.monotonic() < deadline:
            time.sleep(0.02)
        assert served.open_connections() <= CAP
        # Real clients get answers while the half-open connections are held.
        assert served.request("GET", "/v1/models")[0] == 200
        status, body = served.chat(question("What is 2 + 3?", seed=1))
        assert status == 200 and body["choices"][0]["message"]["content"]
        # Every half-open connection is closed: by the cap, or after the header timeout.
        for s in sockets:
            with contextlib.suppress(ConnectionResetError):
                assert s.recv(1024) == b""
    finally:
        for s in sockets:
            s.close()


def test_a_body_that_stops_arriving_is_a_408(served: Server) -> None:
    with socket.create_connection(("127.0.0.1", served.port), timeout=WAIT_S) as s:
        s.sendall(
            b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
            b'Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"model": '
        )
        received = b""
        while chunk := s.recv(65536):
            received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 ")
    assert b"connection: close" in head.lower()
    assert json.loads(body)["error"]["code"] == "request_timeout"


DEEP = b"[" * 100_000 + b"]" * 100_000
SURROGATE = b'{"model": "c", "messages": [{"role": "user", "content": "a\\ud800b"}]}'


@pytest.mark.parametrize(
    ("body", "status", "code", "param"),
    [
        (DEEP, 400, "invalid_json", "body"),
        (b'{"model": "c", "messages": [', 400, "invalid_json", "body"),
        (b"\xff\xfe not utf-8", 400, "invalid_json", "body"),
        (b"[1, 2]", 400, "invalid_json", "body"),
        (json.dumps(question("x" * 25_000)).encode(), 413, "question_too_long", "messages"),
        (SURROGATE, 400, "invalid_value", "messages"),
        (json.dumps(question("hi", seed=2**64)).encode(), 400, "invalid_value", "seed"),
        (json.dumps(question("hi", seed=-1)).encode(), 400, "invalid_value", "seed"),
    ],
    ids=[
        "deep-json",
        "truncated",
        "not-utf8",
        "not-an-object",
        "25kb-question",
        "surrogate",
        "huge-seed",
        "negative-seed",
    ],
)
def test_client_errors_are_4xx_with_a_json_body(
    served: Server, body: bytes, status: int, code: str, param: str
) -> None:
    got, data = served.chat(body)
    assert (got, data["error"]["code"], data["error"]["param"]) == (status, code, param)
    assert data["error"]["type"] == "invalid_request_error" and data["error"]["message"]


def test_a_plan_too_long_only_by_its_copies_of_the_question_is_413(served: Server) -> None:
    # Under the question cap, but eight quoted copies are over the plan parser's limit.
    status, data = served.chat({**question("What is 2 + 2? " + "x" * 12_000), "model": "moa"})
    assert (status, data["error"]["code"], data["error"]["param"]) == (
        413,
        "question_too_long",
        "messages",
    )
    assert "send a shorter question" in data["error"]["message"]
    assert data["conductor"]["parse_error"]["reason"] == "too_long"


def test_a_declared_oversized_body_is_413(served: Server) -> None:
    status, headers, data = served.request(
        "POST", "/v1/chat/completions", b"{}", **{"content-length": str(2 << 20)}
    )
    assert status == 413 and json.loads(data)["error"]["code"] == "request_too_large"
    assert headers.get("connection") == "close"


def test_a_flood_of_bad_requests_logs_one_line_per_kind(served: Server) -> None:
    fresh_limits(600)
    before = len(served.records.records)
    for _ in range(25):
        assert served.chat(DEEP)[0] == 400
        assert served.chat(b"{nope")[0] == 400
        assert served.chat(question("x" * 25_000))[0] == 413
        with socket.create_connection(("127.0.0.1", served.port), timeout=WAIT_S) as s:
            s.sendall(b"GARBAGE \x00\r\n\r\n")
            while s.recv(65536):
                pass
    records = served.records.records[before:]
    messages = [r.getMessage() for r in records]
    # One line per kind: invalid_json (deep or broken), question_too_long, bad HTTP.
    assert len(records) == 3, messages
    assert any("400 invalid_json" in m for m in messages)
    assert any("413 question_too_long" in m for m in messages)
    assert any("Invalid HTTP request" in m for m in messages)
    assert not [r for r in records if r.exc_info], "no tracebacks"


def test_serving_beyond_loopback_without_a_token_warns() -> None:
    warning = exposure_warning("0.0.0.0", None)
    assert warning is not None and "without a bearer token" in warning
    assert exposure_warning("0.0.0.0", "token") is None
    assert exposure_warning("127.0.0.1", None) is None
    assert exposure_warning("localhost", None) is None
