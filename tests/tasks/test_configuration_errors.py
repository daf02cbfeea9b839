"""Bad task-source options are ``ConfigurationError`` s naming the option (no data read)."""

from __future__ import annotations

import pytest

from conductor_gym.core.config import EnvConfig
from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks import make_task_source
from conductor_gym.tasks.procedural.source import ProceduralTasks


def test_a_bad_procedural_option_names_it() -> None:
    with pytest.raises(ConfigurationError, match=r"^families: unknown family 'algebra'"):
        ProceduralTasks(["algebra"], size=10)
    with pytest.raises(ConfigurationError, match=r"^size: must be an int >= 1, got 0"):
        EnvConfig(tasks="offline", task_options={"size": 0}).build_tasks()


def test_a_bad_benchmark_option_names_it_before_any_download() -> None:
    with pytest.raises(ConfigurationError, match=r"^split: must be one of"):
        make_task_source("mmlu", split="holdout")
    with pytest.raises(ConfigurationError, match=r"^subset: must be one of"):
        make_task_source("gpqa-diamond", subset="platinum")


def test_a_bad_jsonl_source_argument_names_it() -> None:
    with pytest.raises(ConfigurationError, match=r"^seed: must be an int, got '3'"):
        make_task_source("jsonl:tasks.jsonl", seed="3")
