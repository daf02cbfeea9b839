"""``conductor-gym evaluate``'s exit status when episodes fail for infrastructure.

A missing API key is the failure: no request is sent (the provider's API is redirected
to a loopback server that counts requests, and must see none).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from http_support import openai_without_key
from support import require_spec

from conductor_gym.bench.results import Results
from conductor_gym.cli.main import main

pytestmark = pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning")

ARGS = ["evaluate", "--suite", "offline", "--repeats", "2", "--no-progress"]

# One simulated worker and one LiteLLM worker whose key is missing.
POOL = """name = "half-broken"
description = "a simulated worker and a LiteLLM worker without its key"

[[workers]]
name = "gpt-5-simulated"
backend = "simulated"
model = "gpt-5"

[[workers]]
name = "gpt-5-no-key"
backend = "litellm"
model = "openai/gpt-5"
max_tokens = 8
"""


@pytest.fixture
def no_openai_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """OpenAI's API redirected to a request-counting loopback server, and no key."""
    require_spec("litellm")
    with openai_without_key(monkeypatch) as paths:
        yield paths


def test_every_episode_failing_exits_1_and_prints_the_cause(
    no_openai_key: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*ARGS, "--limit", "1", "--agent", "llm:openai/gpt-5"]) == 1
    captured = capsys.readouterr()
    assert "overall" in captured.out  # the table is still printed
    assert "all 2 episodes failed for infrastructure" in captured.err
    assert "after 1 attempt(s); last permanent error" in captured.err  # not retried
    assert "missing credentials: set OPENAI_API_KEY" in captured.err
    assert no_openai_key == []


def test_some_episodes_failing_still_exits_0(
    no_openai_key: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pool, out = tmp_path / "pool.toml", tmp_path / "results.json"
    pool.write_text(POOL, encoding="utf-8")
    argv = [*ARGS, "--limit", "8", "--agent", "random", "--pool", str(pool), "--out", str(out)]
    assert main(argv) == 0
    overall = Results.load(out).metrics["overall"]
    assert overall.n == 16 and 0 < overall.infra_failures < 16
    assert "failed for infrastructure" not in capsys.readouterr().err
    assert no_openai_key == []
