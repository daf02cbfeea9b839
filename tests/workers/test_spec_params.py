"""A worker's own fields given in ``params`` are refused at construction with a message
naming where they go (issue 41, item 4)."""

from __future__ import annotations

from pathlib import Path

import pytest

from conductor_gym.pool.config import PoolConfigError, load_pool_file
from conductor_gym.workers.spec import WorkerSpec


def test_max_tokens_and_temperature_in_params_name_the_top_level_fields(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"\['temperature'\] are the worker's own fields: set "
                       r"temperature = \.\.\. at the top level"):  # fmt: skip
        WorkerSpec("a", backend="litellm", model="openai/m", params={"temperature": 0.0})
    pool = tmp_path / "p.toml"
    pool.write_text(
        'name = "p"\ndescription = "d"\n[[workers]]\nname = "a"\nbackend = "litellm"\n'
        'model = "openai/m"\nparams = { temperature = 0.0, max_tokens = 32 }\n'
    )
    with pytest.raises(PoolConfigError, match=r"set max_tokens = \.\.\. and temperature = \.\.\."):
        load_pool_file(pool)
    assert WorkerSpec("a", backend="litellm", model="openai/m", params={"top_p": 0.5})
