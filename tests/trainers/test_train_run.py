"""``conductor-gym train run``: one set of env arguments, either trainer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import require

from conductor_gym.cli.main import main


def test_openrlhf_run_prepares_prompts_and_launches_the_recipe(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    status = main(
        ["train", "run", "--trainer", "openrlhf", "--tasks", "offline", "--k", "3",
         "--shuffle-workers", "--output-dir", str(tmp_path), "--dry-run",
         "--", "--actor.adam.lr", "2e-6"]
    )  # fmt: skip
    assert status == 0
    args = capfd.readouterr().out.split("\0")
    config = json.loads((tmp_path / "prompts.env.json").read_text())
    env = config["env"]
    assert (env["tasks"], env["k"], env["shuffle_workers"]) == ("offline", 3, True)
    assert sum(1 for _ in (tmp_path / "prompts.jsonl").open()) == 2000
    assert args[args.index("--data.prompt_dataset") + 1] == str(tmp_path / "prompts.jsonl")
    assert args[-3:-1] == ["--actor.adam.lr", "2e-6"]  # extra flags come last and win


def test_trl_run_trains_with_the_same_env_arguments(tmp_path: Path) -> None:
    require("trl")
    status = main(
        ["train", "run", "--trainer", "trl", "--tasks", "offline", "--output-dir",
         str(tmp_path), "--", "--model", "tiny", "--iterations", "1", "--train-tasks", "2",
         "--eval-tasks", "2", "--eval-repeats", "1", "--num-generations", "2"]
    )  # fmt: skip
    assert status == 0
    result = json.loads((tmp_path / "results.json").read_text())
    env = result["settings"]["env"]
    assert env["tasks"] == "offline" and env["max_recursions"] == 0
    assert result["before"]["tasks"] == result["after"]["tasks"] == 2


def test_trl_run_keeps_the_recipes_env_where_no_flag_changes_it(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    def settings(*flags: str, recipe: str = "cpu-adapt") -> dict[str, object]:
        status = main(
            ["train", "run", "--trainer", "trl", *flags, "--output-dir", str(tmp_path),
             "--dry-run", "--", "--recipe", recipe]
        )  # fmt: skip
        assert status == 0
        env: dict[str, object] = json.loads(capfd.readouterr().out)["env"]
        return env

    env = settings()  # cpu-adapt's randomised pool, not EnvConfig's defaults
    assert (env["pool"], env["k"], env["shuffle_workers"]) == ("sim-paper", 4, True)
    env = settings("--k", "3", "--max-steps", "4")  # a flag given replaces its field only
    assert (env["k"], env["shuffle_workers"], env["max_steps"]) == (3, True, 4)
    env = settings("--no-shuffle-workers")
    assert (env["k"], env["shuffle_workers"]) == (4, False)
    assert settings(recipe="cpu-orchestrate")["pool"] == "sim-paper-v2"
    # a flag given with EnvConfig's default value still replaces the recipe's
    assert settings("--pool", "sim-paper", recipe="cpu-orchestrate")["pool"] == "sim-paper"
