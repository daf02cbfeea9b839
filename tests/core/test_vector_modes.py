"""Gymnasium's own ``"sync"`` vector env over ``ConductorEnv-v0`` (the README's vector-env
paragraph): its default ``NEXT_STEP`` autoreset spends every second ``step()`` on resets
in this one-step env, and ``vector_kwargs={"autoreset_mode": SAME_STEP}`` plays a plan on
every step, as ``ConductorVectorEnv`` does by default."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode

import conductor_gym  # noqa: F401  (registers ConductorEnv-v0)

PLAN = "model_id = [0]\nsubtasks = ['Solve it and give the final answer.']\naccess_list = [[]]"


def _play(mode: str, **vector_kwargs: object) -> tuple[AutoresetMode, list[np.ndarray]]:
    envs = gym.make_vec(
        "ConductorEnv-v0", num_envs=4, vectorization_mode=mode, vector_kwargs=vector_kwargs
    )
    envs.reset(seed=0)
    ended = [envs.step([PLAN] * 4)[2] for _ in range(2)]
    autoreset = envs.metadata["autoreset_mode"]
    envs.close()
    return autoreset, ended


def test_sync_needs_same_step_to_play_every_step() -> None:
    autoreset, ended = _play("sync")
    assert autoreset is AutoresetMode.NEXT_STEP
    assert ended[0].all() and not ended[1].any()  # the second step only reset the envs
    autoreset, ended = _play("sync", autoreset_mode=AutoresetMode.SAME_STEP)
    assert autoreset is AutoresetMode.SAME_STEP
    assert ended[0].all() and ended[1].all()
    autoreset, ended = _play("vector_entry_point")
    assert autoreset is AutoresetMode.SAME_STEP and ended[1].all()
