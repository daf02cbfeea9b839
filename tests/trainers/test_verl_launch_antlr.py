"""verl's launch script forwards ``CONDUCTOR_GYM_MATH_ANTLR`` (the ANTLR 4.13.2 runtime the
math grader needs beside Hydra's 4.9) to Ray's workers, as it forwards the train config,
and refuses a value that names no folder in one line."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from conductor_gym.trainers.verl import LAUNCH_SCRIPT

KEY = "+ray_kwargs.ray_init.runtime_env.env_vars.CONDUCTOR_GYM_MATH_ANTLR"


def _dry_run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[bytes]:
    data = tmp_path / "prompts.parquet"
    data.touch()
    (tmp_path / "prompts.env.json").write_text("{}")
    base = {k: v for k, v in os.environ.items() if k != "CONDUCTOR_GYM_MATH_ANTLR"}
    return subprocess.run(
        ["bash", str(LAUNCH_SCRIPT)], env={**base, "DATA": str(data), "DRY_RUN": "1", **env},
        capture_output=True, check=False, timeout=60,
    )  # fmt: skip


def _overrides(done: subprocess.CompletedProcess[bytes]) -> list[str]:
    assert done.returncode == 0, done.stderr
    return [item.decode() for item in done.stdout.split(b"\0") if item]


def test_the_runtime_folder_is_forwarded_to_ray_workers(tmp_path: Path) -> None:
    assert not [o for o in _overrides(_dry_run(tmp_path)) if "MATH_ANTLR" in o]
    runtime = tmp_path / "antlr4-13"
    runtime.mkdir()
    relative = os.path.relpath(runtime)
    forwarded = [o for o in _overrides(_dry_run(tmp_path, CONDUCTOR_GYM_MATH_ANTLR=relative))
                 if "MATH_ANTLR" in o]  # fmt: skip
    assert forwarded == [f"{KEY}={runtime.resolve()}"]


def test_a_missing_runtime_folder_stops_the_launch(tmp_path: Path) -> None:
    done = _dry_run(tmp_path, CONDUCTOR_GYM_MATH_ANTLR=str(tmp_path / "missing"))
    assert done.returncode == 2 and done.stdout == b""
    message = done.stderr.decode()
    assert message.count("\n") == 1 and f"{tmp_path / 'missing'} is no folder" in message
    assert "antlr4-python3-runtime==4.13.2" in message
