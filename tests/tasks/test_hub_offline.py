"""An offline machine gets the offline error at once, not after the Hub client's retries
(issue 26 item 7: about 23 s of five retries before it).

No test touches the network: the Hub endpoint (``HF_ENDPOINT``) is a loopback port, either
closed or held by a listening socket the test opens and reads its connections from. The
loads run in a subprocess because ``huggingface_hub`` reads ``HF_ENDPOINT`` at import.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from conductor_gym.tasks.hub import hub_unreachable

PROXIES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy",
           "all_proxy", "no_proxy")  # fmt: skip

LOAD = (
    "from conductor_gym.tasks import make_task_source\n"
    "try:\n"
    "    make_task_source('math500', cache_dir={cache!r}).load()\n"
    "except Exception as exc:\n"
    "    print(type(exc).__name__, exc)\n"
)


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A loopback socket that listens (the kernel completes connections to it) and is read
    by the test: ``accepted(server)`` counts what connected."""
    server = socket.create_server(("127.0.0.1", 0))
    yield server
    server.close()


def accepted(server: socket.socket) -> int:
    """How many connections are waiting on ``server`` (each accepted and closed)."""
    server.setblocking(False)
    count = 0
    while True:
        try:
            connection, _ = server.accept()
        except BlockingIOError:
            return count
        connection.close()
        count += 1


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def load_math500(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in (*PROXIES, "HF_HUB_OFFLINE")}
    return subprocess.run(
        [sys.executable, "-c", LOAD.format(cache=str(tmp_path / "hub"))],
        capture_output=True, text=True, check=True, timeout=120,
        env={**clean, "HF_TOKEN": "", "HF_HUB_CACHE": str(tmp_path / "hub"), **env},
    )  # fmt: skip


def test_an_unreachable_hub_fails_at_once_without_retries(tmp_path: Path) -> None:
    port = closed_port()
    done = load_math500(tmp_path, HF_ENDPOINT=f"http://127.0.0.1:{port}")
    assert done.stdout.startswith("TaskSourceError HuggingFaceH4/MATH-500: this machine looks")
    assert f"no connection to 127.0.0.1:{port}: Connection refused" in done.stdout
    assert "nothing was downloaded" in done.stdout and "HF_HUB_OFFLINE=1" in done.stdout
    # huggingface_hub logs each retry ("Retrying in 1s [Retry 1/5]") before the fix
    assert "Retrying" not in done.stderr and "Retry " not in done.stderr, done.stderr


def test_hf_hub_offline_never_connects(tmp_path: Path, listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    done = load_math500(tmp_path, HF_ENDPOINT=f"http://127.0.0.1:{port}", HF_HUB_OFFLINE="1")
    assert done.stdout.startswith("TaskSourceError HuggingFaceH4/MATH-500: HF_HUB_OFFLINE is set")
    assert accepted(listener) == 0  # not even the reachability probe


def test_the_probe_makes_one_connection_to_the_endpoint_or_its_proxy(
    listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in PROXIES:
        monkeypatch.delenv(name, raising=False)
    port = listener.getsockname()[1]
    assert hub_unreachable(f"http://127.0.0.1:{port}") is None
    assert accepted(listener) == 1
    closed = closed_port()
    reason = hub_unreachable(f"https://127.0.0.1:{closed}")
    assert reason == f"no connection to 127.0.0.1:{closed}: Connection refused"
    assert hub_unreachable("not a url") == "the endpoint 'not a url' names no host"
    # a proxy for the scheme is what is probed (the endpoint itself may be closed)
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{port}")
    assert hub_unreachable(f"https://127.0.0.1:{closed}") is None
    assert accepted(listener) == 1
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{closed}")
    reason = hub_unreachable("https://hub.example")
    assert reason is not None
    assert reason.startswith(f"no connection to the proxy 127.0.0.1:{closed} for hub.example:443")
