"""Every script of ``examples/`` runs as a researcher would run it (a subprocess, from the
repository root, the ``conductor-gym`` command on PATH): the evaluation and the custom
agent on the offline default, the pool files through the library's own pool loader (and
the llama.cpp one against a real llama.cpp server on loopback), TRL's GRPO on CPU at a
smoke budget, and the OpenRLHF and verl launch lines as dry runs (they need GPUs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import require

from conductor_gym import make_pool
from conductor_gym.bench.results import load_results
from conductor_gym.cli.main import main
from conductor_gym.pool.config import load_pool_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
POOLS = EXAMPLES / "pools"


def _run(command: list[str], *, timeout: float = 300, **env: str) -> str:
    """stdout of ``command`` run from the repository root, the venv's scripts first on
    PATH; fails with its stderr when it exits non-zero."""
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    done = subprocess.run(
        command, cwd=ROOT, env={**os.environ, "PATH": path, **env}, capture_output=True,
        text=True, timeout=timeout, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_every_example_is_listed_and_tested() -> None:
    listed = (EXAMPLES / "README.md").read_text()
    scripts = sorted(p.relative_to(EXAMPLES).as_posix() for p in EXAMPLES.rglob("*.*"))
    assert [s for s in scripts if s != "README.md" and f"`{s}`" not in listed] == []
    tested = Path(__file__).read_text()
    assert [s for s in scripts if s != "README.md" and Path(s).name not in tested] == []


def test_evaluate_planner(tmp_path: Path) -> None:
    out = _run([sys.executable, "examples/evaluate_planner.py", "--limit", "2",
                "--repeats", "1", "--out-dir", str(tmp_path)])  # fmt: skip
    rows = {line.split()[0]: line for line in out.splitlines()[1:3]}
    assert set(rows) == {"best-single", "random"}
    results = load_results(tmp_path / "best-single.json")
    assert results.metrics["overall"].n == 2  # the first 2 tasks, 1 repeat
    assert f"{results.metrics['overall'].accuracy:.3f}" in rows["best-single"]


def test_custom_agent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = _run([sys.executable, "examples/custom_agent.py"])
    assert out.startswith("one episode: reward ") and "2 calls" in out
    assert "offline, first 10 tasks x 2 repeats: accuracy" in out
    spec = f"{EXAMPLES / 'custom_agent.py'}:SolveThenCheck"
    results = tmp_path / "custom.json"
    argv = ["evaluate", "--agent", spec, "--limit", "1", "--repeats", "1", "--no-progress",
            "--out", str(results)]  # fmt: skip
    assert main(argv) == 0
    assert load_results(results).metrics["overall"].mean_steps == 2.0


@pytest.mark.parametrize(
    ("name", "workers"),
    [
        ("openai.toml", ["gpt-5", "gpt-5-mini", "gpt-4.1-mini"]),
        ("llama_cpp.toml", ["smollm2-greedy", "smollm2-sampled"]),
        ("vllm.toml", ["qwen3-8b", "gemma-3-12b-it"]),
    ],
)
def test_pool_files_load(name: str, workers: list[str]) -> None:
    config = load_pool_file(POOLS / name)
    assert [spec.name for spec in config.specs] == workers
    assert config.backends == {"litellm"}
    pool = make_pool(POOLS / name)  # builds every worker; the credential policy holds
    assert [spec.name for spec in pool.specs] == workers


def test_the_openai_pool_sends_its_key_to_openai_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    main(["pools", "check", str(POOLS / "openai.toml"), "--skip-ping", "--json"])
    captured = capsys.readouterr()
    for worker in ("gpt-5", "gpt-5-mini", "gpt-4.1-mini"):
        assert f"  {worker}: $OPENAI_API_KEY -> api.openai.com\n" in captured.err
    rows = json.loads(captured.out)
    assert {row["status"] for row in rows} == {"missing-keys"}  # nothing was sent


def test_the_llama_cpp_pool_answers_from_a_real_server(llama_base_url: str, tmp_path: Path) -> None:
    text = (POOLS / "llama_cpp.toml").read_text()
    assert 'api_base = "http://127.0.0.1:8080/v1"' in text
    pool = tmp_path / "llama_cpp.toml"  # the same file, pointed at this test's server
    pool.write_text(text.replace("http://127.0.0.1:8080", llama_base_url))
    # the first call imports LiteLLM inside the ping's time: a loaded machine needs longer
    assert main(["pools", "check", str(pool), "--timeout", "120"]) == 0


@pytest.mark.slow
def test_train_trl_cpu_at_a_smoke_budget(tmp_path: Path) -> None:
    require("trl")
    _run(["bash", "examples/train_trl_cpu.sh", "--eval-repeats", "2", "--num-generations", "4"],
         timeout=900, MODEL="tiny", ITERATIONS="1", TRAIN_TASKS="4", EVAL_TASKS="4",
         OUT=str(tmp_path))  # fmt: skip
    result = json.loads((tmp_path / "results.json").read_text())
    assert result["settings"]["recipe"] == "cpu-demo" and result["settings"]["model"] == "tiny"
    assert result["before"]["tasks"] == 4 and result["after"]["tasks"] == 4
    assert len([h for h in result["log_history"] if "reward" in h]) == 1


def test_launch_openrlhf_dry_run(tmp_path: Path) -> None:
    out = _run(["bash", "examples/launch_openrlhf.sh"], DRY_RUN="1", TASKS="offline",
               POOL="sim-paper", OUT=str(tmp_path))  # fmt: skip
    assert "--train.agent_func_path" in out and f"{tmp_path}/prompts.jsonl" in out
    assert (tmp_path / "prompts.jsonl").is_file()


def test_launch_verl_dry_run(tmp_path: Path) -> None:
    require("pyarrow")
    out = _run(["bash", "examples/launch_verl.sh"], DRY_RUN="1", TASKS="offline",
               POOL="sim-paper", LIMIT="2", DATA_DIR=str(tmp_path))  # fmt: skip
    parquet = tmp_path / "conductor-offline.parquet"
    overrides = out.split("\0")
    assert parquet.is_file() and f"data.train_files={parquet}" in overrides
    assert "actor_rollout_ref.rollout.agent.default_agent_loop=conductor_gym" in overrides
