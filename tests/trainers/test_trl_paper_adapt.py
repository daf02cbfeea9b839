"""The ``paper-adapt`` recipe without a GPU and without training (issue 25, item 6).

Its settings (the paper's randomised pool: ``k`` of the ``sim-paper`` workers under
shuffled ids, named in the env's conductor prompt), the prompt the real env writes with
them, its ``GRPOConfig`` (TRL's own, equal to the ``paper`` recipe's), and the OpenRLHF
and verl documentation's adaptive ``train prepare`` command, run as written on the
simulated pool. Nothing is mocked.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import shlex
from pathlib import Path

import pytest
from conductor_gym.trainers.trl import train
from conductor_gym.trainers.trl.recipes import common, paper, paper_adapt
from conductor_gym.trainers.trl.recipes.cpu_adapt import K
from conductor_gym.trainers.trl.warm_start import WarmStart
from support import require

from conductor_gym.cli.train import TrainCommand
from conductor_gym.core.config import EnvConfig
from conductor_gym.core.prompts import DEFAULT_TEMPLATES
from conductor_gym.errors import ConfigurationError
from conductor_gym.training.prepare import TrainConfig, config_path_for
from conductor_gym.training.scoring import EpisodeRef

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTED = (
    ROOT / "trainers" / "openrlhf" / "README.md",
    ROOT / "trainers" / "openrlhf" / "train_conductor.sh",
    ROOT / "trainers" / "verl" / "train_conductor.sh",
    ROOT / "docs" / "training-gpu.md",
)
"""The files that document an adaptive ``train prepare`` command."""

PAPER_FIELDS = (
    "num_generations", "generation_batch_size", "per_device_train_batch_size",
    "gradient_accumulation_steps", "max_steps", "num_iterations", "beta", "loss_type",
    "scale_rewards", "epsilon", "learning_rate", "lr_scheduler_type", "warmup_steps",
    "adam_beta1", "adam_beta2", "temperature", "top_p", "max_completion_length", "use_vllm",
    "vllm_mode", "bf16", "gradient_checkpointing", "logging_steps", "save_strategy",
    "save_steps", "report_to", "seed", "output_dir",
)  # fmt: skip
"""The ``GRPOConfig`` fields that :func:`paper.paper_config` and its overrides set."""


def test_the_defaults_are_the_papers_randomised_pool_with_named_workers() -> None:
    args = train.make_args(recipe="paper-adapt")
    assert type(args) is paper_adapt.Args and args.recipe == "paper-adapt"
    assert train.RECIPES.get("paper-adapt") is paper_adapt.Args
    env = args.env
    assert (env.pool, env.k, env.shuffle_workers) == ("sim-paper", K, True)
    assert K == 4
    assert env.templates is not None
    assert env.templates.worker_list_item == "Model {id}: {name}"
    # every other template is the env's own conductor prompt's
    assert env.templates == dataclasses.replace(
        DEFAULT_TEMPLATES, worker_list_item="Model {id}: {name}"
    )
    # the rest of the settings are the paper recipe's
    plain = train.make_args(recipe="paper")
    assert paper_adapt.Args.on_gpu is True
    for field in dataclasses.fields(paper.Args):
        if field.name != "env":
            assert getattr(args, field.name) == getattr(plain, field.name), field.name
    assert env.replace(pool=plain.env.pool, k=None, shuffle_workers=None, templates=None) == (
        plain.env
    )
    assert train.resolve(args) == args
    with pytest.raises(ConfigurationError, match="warm_start belongs to the cpu-orchestrate"):
        train.resolve(train.make_args("paper-adapt", warm_start=WarmStart()))


def test_a_user_flag_still_overrides_the_env() -> None:
    parser = argparse.ArgumentParser(exit_on_error=False)
    train.add_arguments(parser, recipe="paper-adapt")

    def parsed(*argv: str) -> EnvConfig:
        return train.args_from_arguments(parser.parse_args(["--recipe", "paper-adapt", *argv])).env

    assert parsed() == paper_adapt.adaptive_env()
    assert parsed("--k", "3").k == 3
    changed = parsed("--pool", "paper-constrained", "--no-shuffle-workers")
    assert (changed.pool, changed.k, changed.shuffle_workers) == ("paper-constrained", K, False)
    assert changed.templates == paper_adapt.TEMPLATES
    ids_only = parsed("--templates", '{"worker_list_item": "Model {id}"}')
    assert ids_only.templates == DEFAULT_TEMPLATES and ids_only.k == K


def test_the_envs_conductor_prompt_names_each_drawn_worker_next_to_its_id() -> None:
    args = train.make_args(recipe="paper-adapt")
    scorer = common.make_scorer(args)
    env = scorer.make_env()
    pairings = set()
    try:
        for index in range(8):
            ref = EpisodeRef(index, 1000 + index)
            observation, info = scorer.reset(env, ref)
            drawn = tuple(info["pool"])
            assert len(drawn) == K and len(set(drawn)) == K
            listed = observation.split("AVAILABLE LANGUAGE MODELS:\n", 1)[1].strip()
            assert listed.splitlines() == [f"Model {i}: {name}" for i, name in enumerate(drawn)]
            assert scorer.prompt(ref) == observation  # what the dataset's rows hold
            pairings.add(drawn)
    finally:
        env.close()
        scorer.close()
    # the draws differ from question to question: who Model 0 is has to be read
    assert len({drawn[0] for drawn in pairings}) > 1


def test_the_grpo_config_is_the_paper_recipes() -> None:
    """TRL's real ``GRPOConfig``; bf16 off only because transformers refuses it without
    a GPU (the existing GPU smoke test does the same)."""
    require("trl")
    for settings in ({}, {"use_vllm": True, "iterations": 3, "seed": 7}):
        adapt = train.grpo_config(train.make_args("paper-adapt", **settings), bf16=False)
        plain = train.grpo_config(train.make_args("paper", **settings), bf16=False)
        for name in PAPER_FIELDS:
            assert getattr(adapt, name) == getattr(plain, name), name
        assert adapt.to_dict() == plain.to_dict()
    assert (plain.num_generations, plain.generation_batch_size, plain.learning_rate) == (
        64,
        256,
        1e-6,
    )


def _documented_prepare(text: str) -> list[str]:
    """The flags of the first documented ``train prepare`` command that passes
    ``--templates`` (its shell continuation lines and ``#`` comment markers joined)."""
    lines = [re.sub(r"^#\s?", "", line).strip() for line in text.splitlines()]
    joined = "\n".join(lines).replace("\\\n", " ")
    command = next(
        line for line in joined.splitlines() if "train prepare" in line and "--templates" in line
    )
    return shlex.split(command.split("train prepare", 1)[1], comments=True)


@pytest.mark.parametrize("document", DOCUMENTED, ids=lambda path: path.name)
def test_the_documented_prepare_command_writes_the_same_randomised_pool(
    document: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The OpenRLHF and verl adapters (and the GPU page) prepare their prompts with the
    recipe's ``k``, shuffling and templates; run as written but on the simulated pool and
    the offline tasks (their own ``--pool`` / ``--tasks`` need keys and data)."""
    flags = _documented_prepare(document.read_text())
    given = dict(zip(flags[::2], flags[1::2], strict=False))
    assert "--shuffle-workers" in flags
    assert given["--k"] == str(K)
    assert json.loads(flags[flags.index("--templates") + 1]) == {
        "worker_list_item": paper_adapt.WORKER_LIST_ITEM
    }
    for option in ("--pool", "--tasks", "--out"):  # replaced below
        if option in flags:
            at = flags.index(option)
            del flags[at : at + 2]
    out = tmp_path / "prompts.jsonl"
    parser = argparse.ArgumentParser(prog="conductor-gym")
    command = TrainCommand()
    command.register(parser.add_subparsers(dest="command", required=True))
    argv = ["train", "prepare", *flags, "--pool", "sim-paper", "--tasks", "offline"]
    namespace = parser.parse_args([*argv, "--out", str(out), "--limit", "3"])
    assert command.run(namespace) == 0
    capsys.readouterr()
    config = TrainConfig.load(config_path_for(out))
    assert config.env == paper_adapt.adaptive_env().replace(tasks="offline")
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    scorer = config.scorer()
    env = scorer.make_env()
    try:
        for row in rows:
            ref = EpisodeRef.from_label(str(row["label"]))
            observation, info = scorer.reset(env, ref)
            assert row["prompt"] == observation
            for i, name in enumerate(info["pool"]):
                assert f"Model {i}: {name}\n" in observation
    finally:
        env.close()
        scorer.close()
