"""verl's dataset format for conductor-gym prompts (no verl import).

verl's ``RLHFDataset`` reads parquet rows with ``prompt`` (chat messages),
``data_source``, ``reward_model`` (``{"style", "ground_truth"}``), ``extra_info`` and,
for agent loops, ``agent_name``. :func:`write_dataset` turns the JSON Lines that
``conductor-gym train prepare`` writes into that: the conductor prompt as one user
message, ``data_source`` the task's domain, ``extra_info`` the label (task index, group
seed, task-source fingerprint) and the row index, ``agent_name`` the loop to play it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

__all__ = ["write_dataset"]


def write_dataset(
    prompts: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    agent_name: str = "conductor_gym",
) -> Path:
    """Write the prepared ``prompts`` file as verl parquet at ``out`` (module docstring)."""
    import pandas as pd

    rows = []
    with open(prompts, encoding="utf-8") as handle:
        for index, line in enumerate(handle):
            row = json.loads(line)
            rows.append(
                {
                    "data_source": row["datasource"],
                    "prompt": [{"role": "user", "content": row["prompt"]}],
                    "reward_model": {"style": "conductor-gym", "ground_truth": row["task_id"]},
                    "extra_info": {"label": row["label"], "index": index},
                    "agent_name": agent_name,
                }
            )
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_parquet(path)
    return path
