"""``conductor-gym pools list`` and ``pools check``, through ``conductor_gym.cli.main.main``.

No mocks: the simulated pool is pinged for real, the paper pool's vLLM addresses are
closed ports on loopback (checked first), and the LiteLLM ping goes over HTTP to the
llama.cpp server of the ``llama_base_url`` fixture.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support import require_spec

from conductor_gym.cli.main import main

PROVIDER_KEYS = {
    "gemini-2.5-pro": "GEMINI_API_KEY",
    "claude-sonnet-4": "ANTHROPIC_API_KEY",
    "gpt-5": "OPENAI_API_KEY",
}
VLLM_WORKERS = {
    "deepseek-r1-distill-qwen-32b": 8000,
    "gemma-3-27b-it": 8001,
    "qwen3-32b-thinking": 8002,
    "qwen3-32b-direct": 8002,
}

# LiteLLM's own Router types trip a pydantic notice when first used; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:Items .*ReadOnly:UserWarning")


def table(out: str) -> dict[str, list[str]]:
    """The rows of a printed table after its header and rule, by first column."""
    lines = out.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("---"))
    return {line.split()[0]: line.split() for line in lines[rule + 1 :] if line.strip()}


def port_is_closed(port: int) -> bool:
    try:
        with socket.create_connection(("localhost", port), timeout=1):
            return False
    except OSError:
        return True


def test_pools_list_shows_every_preset(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pools", "list"]) == 0
    rows = table(capsys.readouterr().out)
    expected = {
        "sim-paper": ("7", "simulated"),
        "local-smol": ("2", "hf"),
        "paper-constrained": ("7", "litellm"),
        "paper-unconstrained": ("7", "litellm"),
    }
    for name, (workers, backend) in expected.items():
        assert rows[name][1:4] == [workers, workers, backend], rows[name]
    assert "simulated" in " ".join(rows["sim-paper"][4:])


def test_pools_list_json_parses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pools", "list", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert {"sim-paper", "local-smol", "paper-constrained", "paper-unconstrained"} <= set(rows)
    assert rows["paper-constrained"]["workers"] == 7 and rows["local-smol"]["k"] == 2
    assert rows["sim-paper"]["backends"] == ["simulated"] and rows["sim-paper"]["error"] is None
    assert rows["paper-constrained"]["description"].startswith("The paper's seven real workers")


def test_pools_list_and_help_import_no_backend() -> None:
    code = (
        "import contextlib, io, sys\n"
        "from conductor_gym.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    main(['--help'])\n"
        # pydantic is a core dependency (EnvConfig); backends and model stacks are not
        "heavy = ('litellm', 'torch', 'transformers', 'vllm')\n"
        "print([m for m in heavy if m in sys.modules])\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['pools', 'list'])\n"
        "heavy += tuple(f'conductor_gym.workers.{b}' for b in ('litellm', 'hf', 'vllm'))\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["[]", "[]"]


def test_pools_check_sim_paper_pings_every_worker(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pools", "check", "sim-paper"]) == 0
    rows = table(capsys.readouterr().out)
    assert len(rows) == 7
    for row in rows.values():
        assert row[1:3] == ["simulated", "ok"] and int(row[5]) > 0  # tokens out


def test_pools_check_paper_constrained_without_keys_or_servers(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    require_spec("litellm")
    for port in set(VLLM_WORKERS.values()):
        if not port_is_closed(port):
            pytest.skip(f"something listens on localhost:{port}")
    for variable in PROVIDER_KEYS.values():
        monkeypatch.delenv(variable, raising=False)
    assert main(["pools", "check", "paper-constrained", "--timeout", "20"]) == 1
    out = capsys.readouterr().out
    rows = table(out)
    for worker, variable in PROVIDER_KEYS.items():
        assert rows[worker][2] == "missing-keys" and variable in rows[worker], rows[worker]
    lines = {line.split()[0]: line for line in out.splitlines() if line.split()}
    for worker, port in VLLM_WORKERS.items():
        assert rows[worker][2] == "failed", lines[worker]
        assert "transient" in lines[worker] and "connect" in lines[worker].lower()
        assert f"localhost:{port}" in lines[worker] or "Connection error" in lines[worker]


def test_pools_check_skip_ping_checks_keys_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for variable in PROVIDER_KEYS.values():
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    assert main(["pools", "check", "paper-unconstrained", "--skip-ping"]) == 1
    rows = table(capsys.readouterr().out)
    assert rows["gpt-5"][2] == "not-pinged" and rows["gemini-2.5-pro"][2] == "missing-keys"
    assert all(rows[w][2] == "not-pinged" for w in VLLM_WORKERS)
    assert main(["pools", "check", "sim-paper", "--skip-ping"]) == 0


def test_pools_check_a_file_pings_a_real_server(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, llama_base_url: str
) -> None:
    require_spec("litellm")
    pool = tmp_path / "smol.toml"
    pool.write_text(
        'name = "smol"\ndescription = "SmolLM2 on a llama.cpp server"\n\n'
        '[[workers]]\nname = "smol"\nbackend = "litellm"\nmodel = "openai/smollm2"\n'
        f'backend_options = {{ api_base = "{llama_base_url}/v1" }}\n'
        "price_in_per_mtok = 0\nprice_out_per_mtok = 0\n"
    )
    assert main(["pools", "check", str(pool), "--timeout", "60"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("pool 'smol': 1 worker, ping timeout 60 s")
    row = table(out)["smol"]
    assert row[1:3] == ["litellm", "ok"]
    latency_ms, tokens_in, tokens_out = float(row[3]), int(row[4]), int(row[5])
    assert latency_ms >= 0 and tokens_in > 0 and tokens_out == 1


def test_pools_check_a_broken_file_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pool = tmp_path / "broken.toml"
    pool.write_text(
        'name = "broken"\ndescription = "bad"\n\n'
        '[[workers]]\nname = "w"\nbackend = "simulated"\ntemperature = -1\ncolour = "red"\n'
    )
    assert main(["pools", "check", str(pool)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    errors = captured.err.splitlines()
    assert f"{pool}: workers[0] (name='w').temperature:" in captured.err
    assert any(line.startswith(f"{pool}: workers[0] (name='w').colour") for line in errors)
    syntax = tmp_path / "syntax.toml"
    syntax.write_text('name = "x"\nk = = 2\n')
    assert main(["pools", "check", str(syntax)]) == 2
    assert capsys.readouterr().err.startswith(f"{syntax}: line 2, column ")
    assert main(["pools", "check", "no-such-pool"]) == 2
    assert "unknown pool 'no-such-pool'" in capsys.readouterr().err
