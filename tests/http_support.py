"""Loopback HTTP servers that tests start for fault injection (labelled as such)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@contextmanager
def json_server(
    answer: Callable[[BaseHTTPRequestHandler], tuple[int, Any]],
) -> Iterator[str]:
    """A loopback HTTP server answering every POST with ``answer(request)``: a status and
    a JSON body (the request body is read first); yields its URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            status, payload = answer(self)
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def counting_server(status: int = 401) -> Iterator[tuple[str, list[str]]]:
    """Fault injection: a loopback HTTP server that answers every request with ``status``
    and an OpenAI-shaped error; yields its URL and the paths it was asked for."""
    paths: list[str] = []

    def answer(request: BaseHTTPRequestHandler) -> tuple[int, Any]:
        paths.append(request.path)
        return status, {"error": {"message": "rejected", "type": "invalid_request"}}

    with json_server(answer) as url:
        yield url, paths


@contextmanager
def openai_without_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """No OpenAI key, and OpenAI's API redirected (``OPENAI_BASE_URL``,
    ``OPENAI_API_BASE``) to a :func:`counting_server`; yields the paths it was asked for."""
    for name in ("OPENAI_API_KEY", "OPENAI_ADMIN_KEY"):
        monkeypatch.delenv(name, raising=False)
    with counting_server() as (url, paths):
        monkeypatch.setenv("OPENAI_BASE_URL", f"{url}/v1")
        monkeypatch.setenv("OPENAI_API_BASE", f"{url}/v1")
        yield paths
