"""README's verifiers run, as written: ``vf-eval conductor-gym-env`` with SmolLM2 on
llama.cpp gives non-zero rewards and parseable plans.

The test reads the command from README's verifiers section and runs it in bash (so its
``$(python -m conductor_gym.trainers.verifiers.grammar ...)`` runs too), changing only
the server's address (the session fixture ``llama_base_url``, started with README's
``--model_alias smollm2 --n_ctx 2048``), the number of examples (``-n 2 -r 1``) and the
output folder. Without the grammar the same run scores 0.00 with every plan unparseable
(the bug this guards against)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import require

README = Path(__file__).resolve().parents[2] / "README.md"


def _section() -> str:
    text = README.read_text()
    start = text.index("### verifiers (`vf-eval`, prime-rl)")
    return text[start : text.index("\n### ", start + 1)]


def _documented_lines() -> dict[str, str]:
    """The section's bash block that runs ``vf-eval``, one logical line per command, keyed
    by its program."""
    blocks = re.findall(r"```bash\n(.*?)```", _section(), flags=re.S)
    (block,) = [b for b in blocks if "vf-eval" in b]
    commands = block.replace("\\\n", " ").splitlines()
    return {line.split()[0] if line.split()[0] != "python" else " ".join(line.split()[:3]): line
            for line in commands if line.strip()}  # fmt: skip


def test_the_documented_server_is_the_fixtures() -> None:
    server = _documented_lines()["python -m llama_cpp.server"]
    assert "--model_alias smollm2" in server and "--n_ctx 2048" in server


@pytest.mark.figures  # a doc's command run as written; test_verifiers.py keeps the small twin
def test_the_documented_vf_eval_run_scores_with_smollm2(
    llama_base_url: str, tmp_path: Path
) -> None:
    require("verifiers")
    command = _documented_lines()["vf-eval"]
    assert "-n 16 -r 4" in command and "http://127.0.0.1:8000/v1" in command
    command = command.replace("-n 16 -r 4", "-n 2 -r 1").replace(
        "http://127.0.0.1:8000/v1", f"{llama_base_url}/v1"
    )
    out = tmp_path / "out"
    bin_dir = str(Path(sys.executable).parent)  # vf-eval and python of this venv
    result = subprocess.run(
        ["bash", "-c", f"{command} --no-rich -o {out}"],
        env={**os.environ, "HOME": str(tmp_path), "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    (traces,) = out.glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces.read_text().splitlines()]
    assert len(episodes) == 2 and all(e["ok"] for e in episodes), result.stderr[-4000:]
    states = [t["info"]["conductor"] for e in episodes for t in e["traces"]]
    rewards = [t["rewards"]["conductor"]["score"] for e in episodes for t in e["traces"]]
    invalid = sum(state["outcome"] == "invalid" for state in states)
    assert sum(rewards) / len(rewards) > 0, states
    assert invalid / len(states) < 0.5, [s["parse_error"] for s in states]
    assert any(len(state["rounds"]) == 2 for state in states)  # --max-recursions 1 played
