"""``conductor-gym train ...``: prepare data for the conductor trainers and run them.

Contract. :class:`TrainCommand` is the ``train`` command, with

* ``train prepare --out PROMPTS.jsonl [--seed S] [--limit N] [--chat-format F]
  [ENV SETTINGS]``: writes one prompt row per task and the train config next to it
  (:func:`conductor_gym.training.prepare.prepare_prompts`), then prints what it wrote and
  the environment variable the trainer needs. Handler: :func:`train_prepare`.
* ``train agent-path``: prints the OpenRLHF agent file (for ``--train.agent_func_path``).
  Handler: :func:`train_agent_path`.
* ``train run --trainer trl|openrlhf [--model M] [--output-dir D] [--seed S] [--dry-run]
  [ENV SETTINGS] [-- ARGS]``: one env config for either trainer. ``trl`` trains on this
  node (:func:`conductor_gym.trainers.trl.train.run_with_config`, ARGS are its own
  options, e.g. ``--recipe paper``); ``openrlhf`` writes ``D/prompts.jsonl`` and its train
  config, then runs ``trainers/openrlhf/train_conductor.sh`` (ARGS are extra OpenRLHF
  flags; it submits to the Ray cluster at ``RAY_ADDRESS``; ``--dry-run`` prints the
  trainer's arguments instead of submitting). Handler: :func:`train_run`.

ENV SETTINGS are the flags of every :class:`~conductor_gym.core.config.EnvConfig` field
(``--tasks``, ``--pool``, ``--k``, ``--max-steps``, ``--reward``, ``--max-recursions``,
``--force-recursion``, ``--initial-round-weight``, ...), generated from it.

Each sub-command sets ``handler`` (a function of the parsed namespace returning the exit
status: 0 on success, 2 on bad arguments or data). Nothing heavy is imported until a
handler runs (prepare loads the task source; no torch, no trainer library).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from conductor_gym.cli.command import CommandGroup, Subparsers
from conductor_gym.core.config import (
    add_config_arguments,
    config_from_arguments,
    settings_from_arguments,
)
from conductor_gym.errors import ConductorGymError
from conductor_gym.registry import Registry, load_path
from conductor_gym.training.prepare import CONFIG_ENV, prepare_prompts

__all__ = ["TrainCommand", "train_agent_path", "train_prepare", "train_run"]


class TrainCommand(CommandGroup):
    """``conductor-gym train prepare | agent-path | run`` (module docstring)."""

    name = "train"
    help = "train a conductor (TRL or OpenRLHF) and prepare its data"

    def register(self, subparsers: Subparsers) -> argparse.ArgumentParser:
        train = self.add_parser(subparsers)
        commands = train.add_subparsers(dest="train_command", required=True)
        prepare = commands.add_parser(
            "prepare",
            help="write prompt rows (prompt, label) and the env config for a trainer",
            description="One JSONL row per task: the conductor prompt and an EpisodeRef label "
            "(task index, group seed, task-source fingerprint); the env config JSON is written "
            "next to it as <stem>.env.json.",
        )
        prepare.add_argument("--out", required=True, help="the prompts file (.jsonl) to write")
        prepare.add_argument("--seed", type=int, default=0, help="seed of the group seeds")
        prepare.add_argument("--limit", type=int, default=None, help="only the first N tasks")
        prepare.add_argument(
            "--chat-format",
            default="chatml",
            choices=["chatml", "plain"],
            help="how a multi-turn episode's next observation joins the token stream (chatml)",
        )
        add_config_arguments(prepare)
        prepare.set_defaults(handler=train_prepare)
        agent = commands.add_parser(
            "agent-path", help="print the OpenRLHF agent file (--train.agent_func_path)"
        )
        agent.set_defaults(handler=train_agent_path)
        run = commands.add_parser(
            "run",
            help="train with TRL (this node) or OpenRLHF (a Ray cluster), same env arguments",
            description="Pass trainer-specific options after `--`.",
        )
        run.add_argument(
            "--trainer", required=True, choices=TRAINERS.names(), help="the trainer adapter to run"
        )
        run.add_argument("--model", default=None, help="base policy (trainer default if unset)")
        run.add_argument(
            "--output-dir",
            default="runs/conductor",
            help="checkpoints and logs go here (runs/conductor)",
        )
        run.add_argument("--seed", type=int, default=0, help="training seed (0)")
        run.add_argument(
            "--dry-run",
            action="store_true",
            help="print what the trainer would run, train nothing (openrlhf still writes the "
            "prompts and train config its launch script checks)",
        )
        add_config_arguments(run)
        run.add_argument("trainer_args", nargs=argparse.REMAINDER, help="after --: trainer options")
        run.set_defaults(handler=train_run)
        return train


TRAINERS: Registry[Callable[..., int]] = Registry("trainer", field="trainer")
"""Trainers by name: ``run_with_config(config, *, env_changes, model, output_dir, seed,
dry_run, argv)`` of each adapter in ``trainers/``, imported only when that trainer runs.
``config`` is the env of the flags given over :class:`EnvConfig`'s defaults;
``env_changes`` the flags given alone, for a trainer whose recipe brings its own env
(TRL's ``cpu-adapt`` keeps its randomised pool where no flag changes it)."""
TRAINERS.register("trl", "conductor_gym.trainers.trl.train:run_with_config")
TRAINERS.register("openrlhf", "conductor_gym.trainers.openrlhf.launch:run_with_config")

_AGENT_FILE = "conductor_gym.trainers.openrlhf:AGENT_FILE"


def train_prepare(args: argparse.Namespace) -> int:
    """Handler of ``train prepare``."""
    try:
        result = prepare_prompts(
            args.out,
            config=config_from_arguments(args),
            seed=args.seed,
            limit=args.limit,
            chat_format=args.chat_format,
        )
    except (ConductorGymError, ValueError, OSError) as exc:
        print(f"conductor-gym train prepare: {exc}", file=sys.stderr)
        return 2
    config = result.config
    env = config.env
    domains = ", ".join(f"{name} {count}" for name, count in sorted(result.domains.items()))
    shortest, longest = result.prompt_chars
    print(f"wrote {result.rows} prompts to {result.prompts_path} ({domains})")
    print(f"  prompt length {shortest}..{longest} characters")
    print(
        f"  tasks {env.tasks!r} ({config.num_tasks} tasks, fingerprint "
        f"{config.task_fingerprint}), pool {env.pool!r}, k={env.k}, "
        f"shuffle_workers={env.shuffle_workers}, max_recursions={env.max_recursions}"
    )
    print(f"wrote the train config to {result.config_path}")
    print(f"trainers read it from: {CONFIG_ENV}={result.config_path.resolve()}")
    return 0


def train_agent_path(args: argparse.Namespace) -> int:
    """Handler of ``train agent-path``."""
    print(load_path(_AGENT_FILE))
    return 0


def train_run(args: argparse.Namespace) -> int:
    """Handler of ``train run``: one env config, either trainer."""
    extra = list(args.trainer_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    try:
        config = config_from_arguments(args)
        run = TRAINERS.get(args.trainer)
        return run(
            config,
            env_changes=settings_from_arguments(args),
            model=args.model,
            output_dir=args.output_dir,
            seed=args.seed,
            dry_run=args.dry_run,
            argv=extra,
        )
    except (ConductorGymError, ValueError, OSError) as exc:
        print(f"conductor-gym train run: {exc}", file=sys.stderr)
        return 2
