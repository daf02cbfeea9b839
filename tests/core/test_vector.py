from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from conductor_gym.agents import RandomPlanner
from gymnasium.vector import AutoresetMode
from support import CountingWorker

import conductor_gym  # noqa: F401  (registers the env)
from conductor_gym import ConductorEnv, ConductorVectorEnv, WorkerSpec
from conductor_gym.sim.worker import paper_pool_specs


def random_actions(infos: dict[str, object], n: int, seed: int) -> list[str]:
    agent = RandomPlanner(seed=seed)
    return [
        agent.act("", {key: infos[key][i] for key in ("question", "num_workers", "max_steps")})  # type: ignore[index]
        for i in range(n)
    ]


def test_make_vec_uses_the_vector_entry_point() -> None:
    envs = gym.make_vec("ConductorEnv-v0", num_envs=64, vectorization_mode="vector_entry_point")
    assert isinstance(envs, ConductorVectorEnv) and envs.num_envs == 64
    obs, infos = envs.reset(seed=0)
    assert len(obs) == 64 and infos["task_id"].shape == (64,)
    envs.close()


def test_vector_env_equals_single_envs_with_the_same_seeds() -> None:
    n = 24
    envs = ConductorVectorEnv(n, k=4, shuffle_workers=True, max_concurrency=5)
    obs, infos = envs.reset(seed=100)
    actions = random_actions(infos, n, seed=1)
    _, rewards, terminated, truncated, step_infos = envs.step(actions)
    assert terminated.all() and not truncated.any()
    final = step_infos["final_info"]
    single = ConductorEnv(k=4, shuffle_workers=True)
    for i in range(n):
        single_obs, single_info = single.reset(seed=100 + i)
        assert single_obs == obs[i] and single_info["pool"] == infos["pool"][i]
        _, reward, _, _, info = single.step(actions[i])
        assert reward == rewards[i]
        assert info["trace"] == final["trace"][i] and info["outcome"] == final["outcome"][i]
    assert len(set(rewards.tolist())) > 1


def test_same_step_autoreset_starts_new_episodes() -> None:
    envs = ConductorVectorEnv(4)
    obs, _ = envs.reset(seed=0)
    new_obs, _, _, _, step_infos = envs.step(["no plan"] * 4)
    assert step_infos["final_obs"].tolist() == list(obs)
    assert new_obs != obs  # fresh episodes, with fresh prompts
    assert step_infos["_final_info"].all()


def test_next_step_autoreset_ignores_the_next_action() -> None:
    envs = ConductorVectorEnv(3, autoreset_mode="NextStep")
    assert envs.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    envs.reset(seed=0)
    _, rewards, terminated, _, _ = envs.step(["no plan"] * 3)
    assert terminated.all() and (rewards == 0.0).all()
    _, rewards, terminated, _, infos = envs.step(["ignored"] * 3)
    assert not terminated.any() and (rewards == 0.0).all() and "task_id" in infos


def test_disabled_autoreset_requires_an_explicit_reset() -> None:
    envs = ConductorVectorEnv(2, autoreset_mode=AutoresetMode.DISABLED)
    envs.reset(seed=0)
    envs.step(["x", "y"])
    with pytest.raises(RuntimeError, match=r"sub-envs \[0, 1\] have ended"):
        envs.step(["x", "y"])
    envs.reset(options={"reset_mask": np.array([True, True])})
    envs.step(["x", "y"])


def test_concurrency_limit_is_respected() -> None:
    pool = [WorkerSpec(name=f"c{i}", backend="test-counting") for i in range(2)]
    for limit, expected in ((3, 3), (64, 16)):
        CountingWorker.peak = 0
        envs = ConductorVectorEnv(16, pool=pool, max_concurrency=limit)
        envs.reset(seed=0)
        envs.step(["model_id = [0]\nsubtasks = ['go']\naccess_list = [[]]"] * 16)
        assert CountingWorker.peak == expected


def test_bad_vector_arguments() -> None:
    with pytest.raises(ValueError, match="num_envs must be an int >= 1"):
        ConductorVectorEnv(0)
    with pytest.raises(ValueError, match="unknown mode 'sometimes'"):
        ConductorVectorEnv(1, autoreset_mode="sometimes")
    envs = ConductorVectorEnv(2)
    envs.reset(seed=0)
    with pytest.raises(ValueError, match="got 1 actions for 2 sub-envs"):
        envs.step(["x"])


def test_real_waiting_does_not_change_results() -> None:
    """With latency_scale > 0 the workers really sleep, so plans interleave on the loop;
    the results must not depend on that interleaving."""
    results = []
    for scale in (0.0, 1e-3):
        envs = ConductorVectorEnv(12, pool=paper_pool_specs(latency_scale=scale))
        _, infos = envs.reset(seed=7)
        _, rewards, _, _, step_infos = envs.step(random_actions(infos, 12, seed=2))
        results.append((rewards.tolist(), list(step_infos["final_info"]["trace"])))
    assert results[0] == results[1]
