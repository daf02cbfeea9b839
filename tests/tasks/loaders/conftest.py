"""Fixtures of the loader tests: every test runs offline, and ``datasets`` keeps its
Arrow files in a temporary directory."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs offline with no token, whatever the caller's environment."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)


@pytest.fixture(scope="module")
def arrow_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Where ``datasets`` keeps its Arrow files for these tests."""
    return str(tmp_path_factory.mktemp("arrow-cache"))
