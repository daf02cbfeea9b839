"""``EnvConfig``: one declaration of every setting, the same through every entry point,
checked at construction (naming the field), recorded and rebuilt as JSON."""

from __future__ import annotations

import argparse
import json
from typing import Any

import gymnasium as gym
import pytest

import conductor_gym
from conductor_gym import ConductorEnv, ConductorVectorEnv, Scorer
from conductor_gym.bench.evaluate import evaluate
from conductor_gym.core.config import (
    CONFIG_FIELDS,
    EnvConfig,
    add_config_arguments,
    config_from_arguments,
)
from conductor_gym.core.prompts import DEFAULT_TEMPLATES
from conductor_gym.core.reward import RewardScheme
from conductor_gym.errors import ConfigurationError
from conductor_gym.workers.bound import RetryPolicy
from conductor_gym.workers.budget import Budget

# one non-default value for every setting (tasks and pool are chosen to stay fast)
NON_DEFAULT: dict[str, Any] = {
    "tasks": "offline/countdown",
    "task_options": {"size": 30},
    "pool": "sim-paper",
    "k": 3,
    "shuffle_workers": True,
    "reward": "binary",
    "max_steps": 4,
    "max_recursions": 1,
    "force_recursion": 0.5,
    "initial_round_weight": 0.25,
    "templates": DEFAULT_TEMPLATES,
    "question_to_all_workers": True,
    "max_plan_chars": 4000,
    "retry": RetryPolicy(max_attempts=2),
    "episode_budget": Budget(max_calls=9),
}


def test_the_table_covers_every_setting_but_the_cache() -> None:
    assert set(NON_DEFAULT) | {"cache"} == set(CONFIG_FIELDS)


def _what_the_env_uses(env: ConductorEnv) -> dict[str, Any]:
    return {
        "tasks": (env.tasks.name, len(env.tasks)),  # type: ignore[attr-defined]
        "k": env.pool.k,
        "shuffle": env.pool.shuffle,
        "reward": env.reward_scheme,
        "max_steps": env.max_steps,
        "recursion": (env.max_recursions, env.force_recursion, env.initial_round_weight),
        "templates": env.templates,
        "question_to_all_workers": env.question_to_all_workers,
        "max_plan_chars": env.max_plan_chars,
        "retry": env.retry,
        "episode_budget": env.episode_budget,
        "cache": None if env.pool.cache is None else env.pool.cache.path,
    }


def test_every_entry_point_builds_the_same_env(tmp_path: Any) -> None:
    settings = {**NON_DEFAULT, "cache": str(tmp_path / "cache.sqlite")}
    config = EnvConfig(**settings)
    expected = _what_the_env_uses(ConductorEnv(config))
    assert expected["tasks"] == ("offline/countdown", 30) and expected["k"] == 3
    built = {
        "kwargs": ConductorEnv(**settings),
        "gym.make": gym.make(conductor_gym.ENV_ID, **settings).unwrapped,
        "vector": ConductorVectorEnv(2, **settings).envs[1],
        "gym.make_vec": gym.make_vec(
            conductor_gym.ENV_ID, num_envs=2, vectorization_mode="vector_entry_point", **settings
        ).envs[0],
        "vector config": ConductorVectorEnv(2, config).envs[0],
        "scorer": Scorer(config).make_env(),
        "scorer kwargs": Scorer(**settings).make_env(),
    }
    for name, env in built.items():
        assert _what_the_env_uses(env) == expected, name  # type: ignore[arg-type]


def test_evaluate_runs_on_the_config_and_records_it(tmp_path: Any) -> None:
    settings = {k: v for k, v in NON_DEFAULT.items() if k not in ("tasks", "task_options")}
    settings["max_recursions"] = 0
    settings["force_recursion"] = False
    settings["initial_round_weight"] = 0.0
    results = evaluate("random", "offline", repeats=1, limit=2, progress=False, **settings)
    recorded = EnvConfig.from_dict({**results.env_kwargs, "tasks": "offline"})
    assert recorded == EnvConfig(tasks="offline", **settings)
    assert results.pool["k"] == 3 and results.pool["shuffle"] is True


def test_the_config_round_trips_through_json() -> None:
    config = EnvConfig(**{**NON_DEFAULT, "reward": RewardScheme(1.0, 0.25, 0.0)})
    text = json.dumps(config.to_dict())
    assert EnvConfig.from_dict(json.loads(text)) == config
    assert EnvConfig.from_json(config.to_json()) == config


def test_a_live_object_builds_but_is_not_recorded() -> None:
    live = EnvConfig().shared()
    assert ConductorEnv(live).pool is live.pool
    with pytest.raises(ConfigurationError, match="holds a live") as caught:
        live.to_dict()
    assert caught.value.field == "tasks"
    assert live.describe()["pool"] == "<WorkerPool>"


@pytest.mark.parametrize(
    ("settings", "field", "message"),
    [
        ({"shuffle_workers": "yes"}, "shuffle_workers", "must be a bool"),
        ({"tasks": None}, "tasks", "task source name or a TaskSource"),
        ({"k": 0}, "k", "must be an int >= 1"),
        ({"max_steps": True}, "max_steps", "must be an int >= 1"),
        ({"max_steps": "5"}, "max_steps", "must be an int >= 1"),
        ({"force_recursion": "yes", "max_recursions": 1}, "force_recursion", "bool"),
        ({"initial_round_weight": float("nan")}, "initial_round_weight", "must be a number"),
        ({"nope": 1}, "nope", "unknown setting"),
        ({"pool": 3}, "pool", "preset name"),
        ({"reward": 3}, "reward", "scheme name"),
        (
            {"task_options": {"size": 3}, "tasks": EnvConfig().build_tasks()},
            "task_options",
            "by name",
        ),
        ({"episode_budget": 5}, "episode_budget", "5"),
    ],
)
def test_a_bad_setting_fails_at_construction_naming_the_field(
    settings: dict[str, Any], field: str, message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message) as caught:
        EnvConfig(**settings)
    assert caught.value.field == field and str(caught.value).startswith(f"{field}: ")
    with pytest.raises(ConfigurationError):
        ConductorEnv(**settings)


def test_every_setting_has_a_flag_and_the_flags_rebuild_the_config() -> None:
    parser = argparse.ArgumentParser()
    add_config_arguments(parser)
    flags = {a.dest for a in parser._actions if a.dest != "help"}
    assert flags == set(CONFIG_FIELDS)
    args = parser.parse_args(
        ["--tasks", "offline/countdown", "--task-option", "size=30", "--k", "3",
         "--shuffle-workers", "--reward", "binary", "--max-steps", "4", "--max-recursions", "1",
         "--force-recursion", "0.5", "--initial-round-weight", "0.25",
         "--question-to-all-workers", "--max-plan-chars", "4000",
         "--retry", '{"max_attempts": 2}', "--episode-budget", '{"max_calls": 9}']
    )  # fmt: skip
    expected = EnvConfig(**{k: v for k, v in NON_DEFAULT.items() if k != "templates"})
    assert config_from_arguments(args) == expected
    assert config_from_arguments(parser.parse_args([])) == EnvConfig()
