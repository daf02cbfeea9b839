"""Helpers for the ``conductor-gym serve`` tests: the real app on a loopback port.

:func:`served` runs :func:`conductor_gym.serve.create_app` under a real uvicorn server on
a thread of this process; :func:`serve_command` runs the ``conductor-gym serve`` command
in a subprocess. Both yield the base URL (``http://127.0.0.1:<port>/v1``) once
``GET /v1/models`` answers, and stop the server when the block exits. Both skip (or fail
under ``CONDUCTOR_GYM_REQUIRE_EXTRAS=1``) without the ``[serve]`` extra.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from llama_server import free_port, stop
from support import require

STARTUP_TIMEOUT_S = 60.0


def _wait_for(base_url: str, alive: Any, log: Any = None) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    request = urllib.request.Request(f"{base_url}/models")
    if token := os.environ.get("CONDUCTOR_GYM_API_KEY"):
        request.add_header("Authorization", f"Bearer {token}")
    while time.monotonic() < deadline:
        if not alive():
            break
        try:
            with urllib.request.urlopen(request, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers (e.g. 401 without a token): it is up
        except (urllib.error.URLError, OSError):
            time.sleep(0.1)
    detail = "" if log is None else "\n" + Path(log.name).read_text()[-4000:]
    pytest.fail(f"the server at {base_url} did not come up{detail}", pytrace=False)


@contextmanager
def served(models: Sequence[Any], **app_options: Any) -> Iterator[str]:
    """``create_app(models, **app_options)`` served by uvicorn on a thread."""
    require("starlette")
    uvicorn = require("uvicorn")
    from conductor_gym.serve import create_app

    port = free_port()
    config = uvicorn.Config(
        create_app(models, **app_options), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        _wait_for(base_url, thread.is_alive)
        yield base_url
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def serve_command(args: Sequence[str], env: Mapping[str, str] | None = None) -> Iterator[str]:
    """``conductor-gym serve ARGS --port <free>`` in a subprocess (its output is shown
    when it fails to come up)."""
    require("starlette")
    require("uvicorn")
    port = free_port()
    command = [
        sys.executable, "-m", "conductor_gym.cli.main", "serve", *args,
        "--port", str(port), "--log-level", "warning",
    ]  # fmt: skip
    with tempfile.NamedTemporaryFile("w+", suffix=".log") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
        base_url = f"http://127.0.0.1:{port}/v1"
        try:
            _wait_for(base_url, lambda: process.poll() is None, log)
            yield base_url
        finally:
            stop(process)


def simulated_pool_file(path: Path, *, latency_scale: float, workers: int = 3) -> Path:
    """A pool file of ``workers`` simulated paper workers that sleep for their simulated
    latency times ``latency_scale``."""
    from conductor_gym.sim.profiles import PAPER_PROFILES

    lines = [
        'name = "sim-latency"',
        f'description = "simulated workers sleeping for their latency x {latency_scale}"',
        "[defaults]",
        f"backend_options = {{ latency_scale = {latency_scale} }}",
    ]
    for key in list(PAPER_PROFILES)[:workers]:
        lines += ["[[workers]]", f'name = "{key}"', 'backend = "simulated"', f'model = "{key}"']
    path.write_text("\n".join(lines) + "\n")
    return path


class UsageScriptedConductor:
    """Test double for a model-backed conductor: answers every observation with
    ``script(observation, info)`` and, like the ``llm:`` agent, reports one usage per
    observation in ``last_usage`` (prompt tokens: characters / 4 of the observation;
    completion tokens: characters / 4 of the completion; cost 1e-6 USD per token)."""

    spec = "test:scripted"

    def __init__(self, script: Any) -> None:
        self.script = script
        self.last_usage: list[dict[str, float]] = []
        self.calls = 0

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        return str(self.script(observation, info))

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        texts = [self.act(o, i) for o, i in zip(observations, infos, strict=True)]
        self.calls += len(texts)
        self.last_usage = [
            {
                "prompt_tokens": len(o) // 4,
                "completion_tokens": len(t) // 4,
                "cost_usd": (len(o) // 4 + len(t) // 4) * 1e-6,
            }
            for o, t in zip(observations, texts, strict=True)
        ]
        return texts
