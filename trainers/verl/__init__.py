"""conductor-gym for verl 0.9 (``pip install ".[verl]"`` from a clone; a GPU node for
training): the ``conductor_gym`` agent loop (:mod:`.agent_loop`: single-turn and
recursive episodes, group seeds shared across a GRPO group, infrastructure failures
masked or failed), the single-turn reward function (:mod:`.reward`), the dataset
converter (:mod:`.data`) and the launch script ``train_conductor.sh``.

:data:`AGENT_LOOP_YAML` is the file for ``actor_rollout_ref.rollout.agent.
agent_loop_config_path``. Importing this package imports nothing of verl; the modules
:mod:`.agent_loop` (verl, torch, Ray) and :mod:`.reward` are loaded by verl itself.
"""

from __future__ import annotations

from pathlib import Path

from .data import write_dataset

__all__ = ["AGENT_LOOP_YAML", "LAUNCH_SCRIPT", "REWARD_FILE", "write_dataset"]

_HERE = Path(__file__).resolve().parent
AGENT_LOOP_YAML = _HERE / "agent_loop.yaml"
"""verl's agent-loop registry file for the ``conductor_gym`` loop."""
REWARD_FILE = _HERE / "reward.py"
"""``reward.custom_reward_function.path`` for the single-turn reward (name ``compute_score``)."""
LAUNCH_SCRIPT = _HERE / "train_conductor.sh"
"""A GRPO launch command for one GPU node (the paper's recipe)."""
