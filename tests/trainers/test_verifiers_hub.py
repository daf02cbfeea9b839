"""The verifiers adapter's keyword loader, its argument help, the plan grammar, and the
environment's own hub-layout distribution (``environments/conductor_gym_env``).

The distribution's wheel is built from this repo with pip (no build isolation, no
network) from a copy of the folder, so the checkout stays clean; the built module is
then imported from the unpacked wheel in a fresh interpreter and resolved by verifiers'
own plugin loader."""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
from support import require

from conductor_gym.errors import ConfigurationError

ROOT = Path(__file__).resolve().parents[2]
HUB = ROOT / "environments" / "conductor_gym_env"
PLUGIN = ROOT / "trainers" / "verifiers" / "conductor_gym_env" / "__init__.py"


@pytest.fixture(scope="module")
def adapter() -> Any:
    require("verifiers")
    import conductor_gym.trainers.verifiers as adapter

    return adapter


def test_load_environment_takes_plain_keyword_arguments(adapter: Any) -> None:
    import conductor_gym_env

    assert conductor_gym_env.load_environment is adapter.load_environment
    env = conductor_gym_env.load_environment(tasks="offline", max_steps=3, k=3)
    assert isinstance(env, adapter.ConductorEnvironment)
    settings = env.taskset.config
    assert (settings.tasks, settings.max_steps, settings.k) == ("offline", 3, 3)
    assert settings.id == "conductor-gym-env"
    # the configs are exported, and still one Taskset/Env/Harness each for verifiers
    for name in ("ConductorEnvConfig", "ConductorTasksetConfig", "ARGUMENTS"):
        assert name in conductor_gym_env.__all__


def test_every_argument_has_help_text(adapter: Any) -> None:
    fields = set(adapter.ConductorTasksetConfig.model_fields) - {"id", "task", "system_prompt"}
    assert set(adapter.ARGUMENTS) == fields
    assert all(len(text) > 20 for text in adapter.ARGUMENTS.values()), adapter.ARGUMENTS


def test_every_env_setting_is_an_argument_with_envconfigs_default(adapter: Any) -> None:
    from conductor_gym.core.config import CONFIG_FIELDS, EnvConfig

    # a field added to EnvConfig is an argument here with no edit to the adapter
    assert set(CONFIG_FIELDS) <= set(adapter.ARGUMENTS)
    settings = adapter.ConductorTasksetConfig(id="x").env_settings()
    assert {name: settings[name] for name in CONFIG_FIELDS} == EnvConfig().to_dict()


def test_every_env_setting_reaches_the_env(adapter: Any) -> None:
    from conductor_gym.core.config import EnvConfig
    from conductor_gym.workers.bound import RetryPolicy
    from conductor_gym.workers.budget import Budget

    # a value other than the default for every field that a record can hold
    config = EnvConfig(
        tasks="offline/countdown", task_options={"n": 32}, pool="sim-paper-v2", k=3,
        shuffle_workers=True, reward="binary", max_steps=3, max_recursions=1,
        force_recursion=0.5, initial_round_weight=0.25, question_to_all_workers=True,
        max_plan_chars=4096, retry=RetryPolicy(max_attempts=2), episode_budget=Budget(max_calls=9),
        cache="calls.sqlite",
    )  # fmt: skip
    arguments = config.to_dict()
    taskset = adapter.ConductorTasksetConfig(id="x", **arguments)
    assert adapter.env_config(taskset.env_settings()) == config
    # the documented text forms of a vf-eval flag are read as the env reads them
    assert adapter.ConductorTasksetConfig(id="x", k="3", max_steps="2").k == 3


def test_a_bad_env_value_is_refused_naming_the_field(adapter: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"^force_recursion: ") as caught:
        adapter.load_environment(force_recursion=2.0)
    assert caught.value.field == "force_recursion"
    with pytest.raises(ConfigurationError) as caught:
        adapter.load_environment(question_to_all_workers="maybe")
    assert caught.value.field == "question_to_all_workers"


def test_an_unknown_argument_is_refused_by_name(adapter: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"^max_step: not an argument of") as caught:
        adapter.load_environment(max_step=3)
    assert caught.value.field == "max_step" and "max_steps" in str(caught.value)


def test_a_bad_value_is_refused_by_name(adapter: Any) -> None:
    with pytest.raises(ConfigurationError, match=r"^max_steps: .*greater than or equal to 1"):
        adapter.load_environment(max_steps=0)
    with pytest.raises(ConfigurationError) as caught:
        adapter.load_environment(k=0)
    assert caught.value.field == "k"


def test_the_plan_grammar_is_the_tests_grammar_and_checks_its_arguments(adapter: Any) -> None:
    from trainers.test_verifiers import GRAMMAR

    grammar = adapter.plan_grammar(workers=3, max_steps=2)
    assert grammar.replace("plan1", "one").replace("plan2", "two").split() == GRAMMAR.split()
    assert "id ::= [0-6]" in adapter.plan_grammar(workers=7, max_steps=5)
    with pytest.raises(ConfigurationError, match=r"^workers: must be an int in 1..10"):
        adapter.plan_grammar(workers=11)
    with pytest.raises(ConfigurationError, match=r"^max_steps: must be an int in 1..5"):
        adapter.plan_grammar(max_steps=0)


def test_the_hub_module_is_the_plugin_module() -> None:
    assert (HUB / "conductor_gym_env" / "__init__.py").read_text() == PLUGIN.read_text()


def test_the_hub_distribution_builds_a_wheel_verifiers_can_load(
    adapter: Any, tmp_path: Path
) -> None:
    source = tmp_path / "src"
    shutil.copytree(HUB, source)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--no-index", "-q", "-w", str(tmp_path / "dist"), str(source)],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    (wheel,) = (tmp_path / "dist").glob("conductor_gym_env-0.1.0-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata_name,) = (n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.message_from_bytes(archive.read(metadata_name))
        archive.extractall(tmp_path / "unpacked")
    assert "conductor_gym_env/__init__.py" in names
    assert not any(n.startswith(("conductor_gym/", "trainers/", "tests/")) for n in names)
    assert metadata["Name"] == "conductor-gym-env"
    assert "conductor-gym[verifiers]==0.1.0" in metadata.get_all("Requires-Dist", [])
    assert "load_environment" in (metadata.get_payload() or "")  # the README

    probe = (
        "import conductor_gym_env as m\n"
        "from verifiers.v1.utils.loaders import environment_class, harness_class, taskset_class\n"
        "print(m.__file__)\n"
        "print(taskset_class('conductor-gym-env').__name__, "
        "environment_class('conductor-gym-env').__name__, "
        "harness_class('conductor-gym-env').__name__)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        env={**os.environ, "PYTHONPATH": str(tmp_path / "unpacked")},
        cwd=tmp_path, check=True, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    module_file, classes = result.stdout.splitlines()
    assert Path(module_file).is_relative_to(tmp_path / "unpacked")
    assert classes == "ConductorTaskset ConductorEnvironment ConductorChatHarness"
