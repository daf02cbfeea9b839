"""``/health`` and ``/metrics`` behind the token on request (issue 39, item 7): by
default probes and scrapers reach them without one; with ``private_monitoring`` they
answer 401 without the token and 200 with it. Real app on loopback."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from serve_support import served

from conductor_gym.cli.main import main

TOKEN = "monitoring-token-1234"


def status(url: str, token: str | None = None) -> int:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


@pytest.mark.parametrize("private", [False, True])
def test_monitoring_asks_for_the_token_only_when_private(private: bool) -> None:
    from conductor_gym.serve import ConductorModel

    models = [ConductorModel("c", "single:0", "sim-paper")]
    with served(models, api_key=TOKEN, private_monitoring=private) as base_url:
        root = base_url.removesuffix("/v1")
        for path in ("/health", "/metrics"):
            assert status(root + path) == (401 if private else 200)
            assert status(root + path, TOKEN) == 200
        assert status(base_url + "/models") == 401


def test_private_monitoring_without_a_token_is_refused(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("starlette")
    monkeypatch.delenv("CONDUCTOR_GYM_API_KEY", raising=False)
    assert main(["serve", "--agent", "single:0", "--private-monitoring"]) == 2
    assert "private_monitoring needs an api_key" in capsys.readouterr().err
