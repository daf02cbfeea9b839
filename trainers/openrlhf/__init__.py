"""GRPO training of a conductor with OpenRLHF 0.11.2 (Ray, vLLM, DeepSpeed).

* :data:`AGENT_FILE`: ``agent.py``, the file for ``--train.agent_func_path``; its
  executor is :mod:`.executor` (imports torch and OpenRLHF, so it is not imported here).
* ``train_conductor.sh``: the paper's recipe (app. A) as OpenRLHF flags, submitted with
  ``ray job submit``; ``README.md``: one node, several nodes, choices made.
* Prompts and the env config come from ``conductor-gym train prepare``
  (:mod:`conductor_gym.training.prepare`).

Importing this package imports nothing beyond the standard library.
"""

from __future__ import annotations

import os

__all__ = ["AGENT_FILE", "LAUNCH_SCRIPT"]

AGENT_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agent.py")
"""Absolute path of the agent file to pass as ``--train.agent_func_path``."""

LAUNCH_SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_conductor.sh")
"""Absolute path of the launch script (present in a source checkout)."""
