"""Seeds of any integer type, and stepping before the first reset (env and vector env)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import conductor_gym  # noqa: F401  (registers the env)
from conductor_gym import ConductorEnv, ConductorVectorEnv

PLAN = "model_id = [0]\nsubtasks = ['Answer the question.']\naccess_list = [[]]"


def played(seed: Any) -> tuple[str, str, Any, float, Any]:
    """A fresh env's first observation, task, pool, and reward and trace of :data:`PLAN`."""
    env = ConductorEnv()
    obs, info = env.reset(seed=seed)
    _, reward, _, _, step = env.step(PLAN)
    env.close()
    return obs, info["task_id"], info["pool"], reward, step["trace"]


def test_env_takes_numpy_integer_seeds_as_the_same_seed() -> None:
    expected = played(3)
    for seed in (np.int64(3), np.uint8(3), np.int32(3)):
        assert played(seed) == expected, seed
    assert played(4) != expected


@pytest.mark.parametrize("seed", [True, 3.0, -1, "3"])
def test_env_refuses_other_seeds_naming_the_argument(seed: Any) -> None:
    with pytest.raises(ValueError, match=r"reset: seed must be None or an integer >= 0"):
        ConductorEnv().reset(seed=seed)


def test_vector_env_takes_numpy_integer_seeds_and_sequences_of_them() -> None:
    envs = ConductorVectorEnv(3)
    expected, _ = envs.reset(seed=5)
    for seed in (np.int64(5), [5, np.int64(6), np.int32(7)], np.arange(5, 8), (5, 6, 7)):
        obs, _ = envs.reset(seed=seed)  # type: ignore[arg-type]
        assert obs == expected, seed
    mixed, _ = envs.reset(seed=[None, np.int64(6), None])
    assert mixed[1] == expected[1]
    for bad, match in [
        (np.float64(5.0), "seed must be None, an integer >= 0 or one seed per sub-env"),
        ("567", "seed must be None, an integer >= 0 or one seed per sub-env"),
        ([5, 6.5, 7], r"seed\[1\] must be None or an integer >= 0"),
        (np.int64(-1), "seed must be None or an integer >= 0"),
        ([1, 2], "got 2 seeds for 3 sub-envs"),
    ]:
        with pytest.raises(ValueError, match=match):
            envs.reset(seed=bad)  # type: ignore[arg-type]
    envs.close()


def test_stepping_before_any_reset_says_to_reset_first() -> None:
    env = ConductorEnv()
    with pytest.raises(gym.error.ResetNeeded, match=r"call reset\(\) first") as caught:
        env.step(PLAN)
    assert "ended" not in str(caught.value)
    env.reset(seed=0)
    env.step(PLAN)
    with pytest.raises(gym.error.ResetNeeded, match="the episode has ended"):
        env.step(PLAN)

    envs = ConductorVectorEnv(2)
    with pytest.raises(gym.error.ResetNeeded, match=r"call reset\(\) first") as caught:
        envs.step([PLAN, PLAN])
    assert "ended" not in str(caught.value) and "[0, 1]" in str(caught.value)
    envs.reset(seed=0, options={"reset_mask": np.array([True, False])})
    with pytest.raises(gym.error.ResetNeeded, match=r"sub-envs \[1\] were never reset"):
        envs.step([PLAN, PLAN])
    envs.reset(seed=0)
    _, rewards, terminated, _, _ = envs.step([PLAN, PLAN])
    assert terminated.all() and rewards.shape == (2,)
    envs.close()
