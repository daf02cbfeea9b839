"""``serve`` against clients that pipeline requests and never read (issue 39, item 6).

The attack: connections that pipeline requests without reading their responses kept
a request in progress for ever (the response waited for buffer space that never came),
so once they filled the connection cap every new connection was refused, still 30 s
later. Over real sockets on loopback with the real app under
:func:`conductor_gym.serve.server.uvicorn_config`: at the default limits (a cap of 512),
more non-reading connections than the cap leave real requests answered; a connection
whose responses stay unread past the bound is dropped after the write timeout.
Each attacker asks for an unknown model with a 12 KB name, which the 404 repeats, so a
few requests per connection fill its bound.
"""

from __future__ import annotations

import contextlib
import http.client
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
from conductor_gym.serve.server import GuardedH11Protocol, ServerLimits, uvicorn_config  # noqa: E402

WAIT_S = 30.0
REQUEST = b"GET /v1/models/" + b"x" * 12_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"


class Served:
    def __init__(self, port: int, server: Any) -> None:
        self.port = port
        self.server = server

    def connections(self) -> list[GuardedH11Protocol]:
        return [c for c in self.server.server_state.connections if not c.transport.is_closing()]

    def stalled(self) -> int:
        return sum(c.flow.write_paused for c in self.connections())

    def health(self) -> int:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=WAIT_S)
        try:
            connection.request("GET", "/health")
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()


@contextlib.contextmanager
def serving(limits: ServerLimits) -> Iterator[Served]:
    app = create_app([ConductorModel("c", "single:0", "sim-paper")], log_interval_s=600)
    port = free_port()
    config = uvicorn_config(app, port=port, limits=limits, log_level="error", log_interval_s=600)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_S
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the server did not start"
    try:
        yield Served(port, server)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def non_reader(port: int, requests: int, sockets: list[socket.socket]) -> None:
    """A client that pipelines ``requests`` requests and never reads."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(WAIT_S)
    s.connect(("127.0.0.1", port))
    sockets.append(s)
    with contextlib.suppress(OSError):
        s.sendall(REQUEST * requests)


def attack(port: int, connections: int, requests: int) -> list[socket.socket]:
    sockets: list[socket.socket] = []
    threads = [
        threading.Thread(target=non_reader, args=(port, requests, sockets), daemon=True)
        for _ in range(connections)
    ]
    for thread in threads:
        thread.start()
    return sockets


def wait_until(condition: Any) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert condition()


def test_non_reading_clients_over_the_default_cap_lock_no_one_out() -> None:
    limits = ServerLimits()
    cap = limits.max_connections
    with serving(limits) as served:
        sockets = attack(served.port, cap + 16, requests=12)
        try:
            wait_until(lambda: served.stalled() >= cap // 2)
            for _ in range(5):
                assert served.health() == 200
            wait_until(lambda: served.stalled() >= cap - 16)
            assert len(served.connections()) <= cap
            for _ in range(5):
                assert served.health() == 200  # each drops a non-reading connection
        finally:
            for s in sockets:
                s.close()


def test_responses_left_unread_past_the_bound_are_dropped_after_the_write_timeout() -> None:
    limits = ServerLimits(write_timeout_s=0.5, max_connections=8, max_unread_bytes=16_384)
    with serving(limits) as served:
        sockets = attack(served.port, 4, requests=40)
        try:
            wait_until(lambda: served.stalled() == 4)
            # Nobody reads: after the write timeout the server holds none of them.
            wait_until(lambda: not served.connections())
            assert served.health() == 200
        finally:
            for s in sockets:
                s.close()


@pytest.mark.parametrize(("field", "value"), [("write_timeout_s", 0), ("max_unread_bytes", 1024)])
def test_limits_are_checked(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=field):
        ServerLimits(**{field: value})
