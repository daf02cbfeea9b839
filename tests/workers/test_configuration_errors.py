"""Bad worker settings are ``ConfigurationError`` s (still ``ValueError`` s) naming the field."""

from __future__ import annotations

import pytest

from conductor_gym.errors import ConfigurationError
from conductor_gym.pool.pool import make_pool
from conductor_gym.workers.budget import Budget
from conductor_gym.workers.limits import RateLimits
from conductor_gym.workers.litellm import make_litellm_worker
from conductor_gym.workers.spec import WorkerSpec


def test_a_bad_worker_spec_field_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError, match=r"WorkerSpec\(name='a'\)\.temperature must be"):
        WorkerSpec("a", temperature=-0.5)
    with pytest.raises(ConfigurationError, match=r"WorkerSpec\(name='a'\)\.max_tokens must be"):
        WorkerSpec("a", max_tokens=0)


def test_bad_backend_options_are_configuration_errors_naming_the_option() -> None:
    spec = WorkerSpec("m", backend="litellm", model="openai/gpt-4o", backend_options={"tmeout": 3})
    unknown = r"WorkerSpec\(name='m'\)\.backend_options: unknown option\(s\) \['tmeout'\]"
    with pytest.raises(ConfigurationError, match=unknown):
        make_litellm_worker(spec)  # what the pool calls when it first builds the worker


def test_bad_limits_and_budgets_are_configuration_errors() -> None:
    with pytest.raises(ConfigurationError, match=r"RateLimits\.max_concurrency must be >= 1"):
        RateLimits(max_concurrency=0)
    with pytest.raises(ConfigurationError, match=r"Budget\.max_calls must be an int >= 1"):
        Budget(max_calls=0)


def test_a_pool_error_carries_the_setting_it_came_from() -> None:
    with pytest.raises(ConfigurationError) as caught:
        make_pool([WorkerSpec("a"), WorkerSpec("a")])
    assert caught.value.field == "pool"
    assert str(caught.value) == "pool: worker names must be unique; repeated: ['a']"
