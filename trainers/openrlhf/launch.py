"""``conductor-gym train run --trainer openrlhf``: prompts for one env config, then the
recipe's launch script.

:func:`run_with_config` writes ``OUTPUT_DIR/prompts.jsonl`` and its train config
(:func:`~conductor_gym.training.prepare.prepare_prompts`), then runs
``train_conductor.sh`` with ``PROMPTS``, ``OUTPUT`` (and ``MODEL``) set; ``argv`` are
extra OpenRLHF flags (they come last and win). With ``dry_run`` the script prints the
trainer's arguments instead of submitting to the Ray cluster (the prompt files are still
written: the script checks them).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from conductor_gym.core.config import EnvConfig
from conductor_gym.training.prepare import prepare_prompts

from . import LAUNCH_SCRIPT

__all__ = ["run_with_config"]


def run_with_config(
    env: EnvConfig,
    *,
    env_changes: Mapping[str, Any] | None = None,
    model: str | None = None,
    output_dir: str | None = None,
    seed: int = 0,
    dry_run: bool = False,
    argv: Sequence[str] = (),
) -> int:
    """Prepare the prompts of ``env`` and launch the OpenRLHF recipe (module docstring).
    ``env`` is used whole (the launch script has no env of its own), so ``env_changes``,
    the flags given, add nothing here."""
    out = Path(output_dir or "runs/conductor")
    prompts = out / "prompts.jsonl"
    prepare_prompts(prompts, config=env, seed=seed)
    variables = dict(os.environ, PROMPTS=str(prompts), OUTPUT=str(out / "ckpt"))
    if model:
        variables["MODEL"] = model
    if dry_run:
        variables["DRY_RUN"] = "1"
    return subprocess.call(["bash", LAUNCH_SCRIPT, *argv], env=variables)
