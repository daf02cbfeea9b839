"""The GPU smoke check (``conductor_gym.trainers.trl.gpu_smoke``) on a machine without one.

Nothing is mocked: the missing-GPU test relies on this machine's real
``torch.cuda.is_available()`` being False (it skips where a GPU is visible), and the
settings test builds TRL's real ``GRPOConfig`` to check the batch arithmetic TRL derives.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest
from conductor_gym.trainers.trl import gpu_smoke
from support import require


def _args(*argv: str) -> argparse.Namespace:
    return gpu_smoke._parser().parse_args(list(argv))


def test_missing_gpu_exits_2_naming_what_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    torch = require("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is visible here: the smoke run would start")
    out = tmp_path / "smoke"
    assert gpu_smoke.main(["--output-dir", str(out)]) == gpu_smoke.MISSING_EXIT == 2
    err = capsys.readouterr().err
    assert "no CUDA GPU visible (torch.cuda.is_available() is False)" in err
    vllm_line = "vllm is not installed: pip install 'conductor-gym[vllm]'"
    assert (vllm_line in err) == (importlib.util.find_spec("vllm") is None)
    assert "nothing was run" in err
    assert not out.exists()


def test_smoke_settings_are_the_paper_recipe_shrunk() -> None:
    settings = gpu_smoke.smoke_settings(_args())
    assert (settings.recipe, settings.use_vllm, settings.vllm_mode) == ("paper", True, "colocate")
    assert settings.model == "Qwen/Qwen2.5-1.5B-Instruct"
    assert (settings.iterations, settings.num_generations, settings.precision) == (2, 8, "bf16")
    over = settings.grpo_overrides
    assert over["generation_batch_size"] == 16  # 8 rollouts x 2 questions
    assert over["generation_batch_size"] % settings.num_generations == 0
    assert over["per_device_train_batch_size"] * over["gradient_accumulation_steps"] == 16
    assert over["num_processes"] == 1
    assert over["max_completion_length"] == 256
    assert over["vllm_gpu_memory_utilization"] == 0.3
    assert over["vllm_max_model_length"] >= 1500 + over["max_completion_length"]


def test_trl_derives_one_optimizer_step_per_generation_batch() -> None:
    """TRL's own GRPOConfig arithmetic on the smoke settings. bf16 is turned off only
    because transformers refuses bf16 without a GPU; nothing else depends on it."""
    require("trl")
    from conductor_gym.trainers.trl.train import grpo_config

    config = grpo_config(gpu_smoke.smoke_settings(_args()), bf16=False)
    assert config.world_size == 1
    assert config.generation_batch_size == 16
    assert config.steps_per_generation == config.gradient_accumulation_steps == 2
    assert (config.use_vllm, config.vllm_mode) == (True, "colocate")
    assert config.vllm_gpu_memory_utilization == 0.3
    # the paper recipe's settings survive the shrinking
    assert (config.beta, config.epsilon, config.learning_rate) == (0.0, 0.2, 1e-6)
    assert (config.loss_type, config.temperature, config.max_steps) == ("grpo", 1.0, 2)
    assert config.gradient_checkpointing is True
    assert config.max_completion_length == 256


def test_batch_that_does_not_divide_is_refused_naming_the_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        gpu_smoke.main(["--micro-batch", "5"])
    assert exit_info.value.code == 2
    assert "--micro-batch (5) must divide the generation batch" in capsys.readouterr().err
    with pytest.raises(ValueError, match="--num-generations must be >= 2"):
        gpu_smoke.smoke_settings(_args("--num-generations", "1"))


def test_dry_run_prints_the_settings_without_a_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    assert gpu_smoke.main(["--dry-run", "--iterations", "3", "--model", "Qwen/Qwen2.5-3B"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert (printed["recipe"], printed["iterations"], printed["model"]) == (
        "paper",
        3,
        "Qwen/Qwen2.5-3B",
    )
    assert printed["env"]["pool"] == "sim-paper"


def test_dry_run_of_paper_adapt_prints_its_randomised_pool(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from conductor_gym.trainers.trl.recipes import paper_adapt

    assert gpu_smoke.main(["--dry-run", "--recipe", "paper-adapt"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["recipe"] == "paper-adapt"
    env = printed["env"]
    assert (env["pool"], env["k"], env["shuffle_workers"]) == ("sim-paper", 4, True)
    assert env["templates"]["worker_list_item"] == "Model {id}: {name}"
    assert env == paper_adapt.adaptive_env().describe()
    # shrunk exactly as the paper recipe's smoke: only the recipe and its env differ
    adapt = gpu_smoke.smoke_settings(_args("--recipe", "paper-adapt"))
    plain = gpu_smoke.smoke_settings(_args())
    assert type(adapt) is paper_adapt.Args and adapt.env == paper_adapt.adaptive_env()
    for field in dataclasses.fields(plain):
        if field.name != "env":
            assert getattr(adapt, field.name) == getattr(plain, field.name), field.name


def test_an_unknown_recipe_is_refused_by_argparse(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        gpu_smoke.main(["--dry-run", "--recipe", "cpu-adapt"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "argument --recipe: invalid choice: 'cpu-adapt'" in err
    assert "'paper', 'paper-adapt'" in err


def test_rewards_by_step_reads_trl_log_history() -> None:
    history = [
        {"step": 1, "reward": 0.5, "loss": 0.0},
        {"step": 2, "reward": 0.75, "completions/mean_length": 120.0},
        {"step": 2, "train_runtime": 30.0},
    ]
    assert gpu_smoke.rewards_by_step(history) == [(1, 0.5), (2, 0.75)]


def test_import_loads_no_heavy_stack() -> None:
    code = (
        "import sys, conductor_gym.trainers.trl.gpu_smoke; "
        "print([m for m in ('torch', 'vllm', 'trl', 'transformers') if m in sys.modules])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
