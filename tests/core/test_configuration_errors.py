"""Bad settings and reset options of the env are ``ConfigurationError`` s naming the field;
a bad plan stays a policy outcome, never a configuration error."""

from __future__ import annotations

import pytest

from conductor_gym import ConductorEnv, Outcome, RewardScheme
from conductor_gym.core.prompts import PromptTemplates
from conductor_gym.core.vector import ConductorVectorEnv
from conductor_gym.errors import ConfigurationError


def test_a_bad_reward_scheme_field_is_named() -> None:
    with pytest.raises(ConfigurationError, match=r"RewardScheme\.cost_lambda must be >= 0"):
        RewardScheme(cost_lambda=-1.0)
    with pytest.raises(ConfigurationError, match=r"RewardScheme\.cost_lambda must be >= 0"):
        ConductorEnv(tasks="offline", reward="cost-usd:-1")


def test_a_bad_template_is_named() -> None:
    with pytest.raises(ConfigurationError, match=r"PromptTemplates\.worker_system must be a str"):
        PromptTemplates(worker_system=3)  # type: ignore[arg-type]


def test_bad_reset_options_and_seeds_are_named() -> None:
    env = ConductorEnv(tasks="offline")
    try:
        with pytest.raises(ConfigurationError, match=r"reset: options\['task_index'\]=5000"):
            env.reset(options={"task_index": 5000})
        with pytest.raises(
            ConfigurationError, match=r"reset: unknown option\(s\) \['taks_index'\]"
        ):
            env.reset(options={"taks_index": 1})
        with pytest.raises(ConfigurationError, match=r"reset: seed must be None or an integer"):
            env.reset(seed=-1)
        env.reset(seed=0)
        *_, info = env.step("not a plan")  # the policy's fault: an outcome, not an error
        assert info["outcome"] is Outcome.INVALID
    finally:
        env.close()
    with pytest.raises(ConfigurationError, match=r"^num_envs must be an int >= 1, got 0"):
        ConductorVectorEnv(0)
