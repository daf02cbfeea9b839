"""``conductor-gym train ...``: prepare training data for the conductor trainers.

Contract. :func:`add_train_parser` adds a ``train`` command to an argparse
sub-parsers object, with

* ``train prepare --tasks SOURCE --out PROMPTS.jsonl [--pool P] [--k K]
  [--shuffle-workers] [--seed S] [--limit N] [--max-steps M] [--max-recursions R]
  [--force-recursion P] [--initial-round-weight W] [--reward R] [--cache FILE]
  [--task-options JSON] [--chat-format chatml|plain]``: writes one prompt row per task
  and the env config next to it (:func:`conductor_gym.trainers.prepare.prepare_prompts`),
  then prints what it wrote and the environment variable the trainer needs. Handler:
  :func:`train_prepare`.
* ``train agent-path``: prints the OpenRLHF agent file (for ``--train.agent_func_path``).
  Handler: :func:`train_agent_path`.
* ``train run --trainer trl|openrlhf [--tasks T] [--pool P] [--k K] [--shuffle-workers]
  [--max-recursions R] [--model M] [--output-dir D] [--seed S] [--dry-run] [-- ARGS]``:
  the same env arguments for either trainer. ``trl`` trains on this node
  (:func:`conductor_gym.trainers.trl.train.main`, ARGS are its options, e.g.
  ``--recipe paper``); ``openrlhf`` writes ``D/prompts.jsonl`` and its env config, then
  runs ``trainers/openrlhf/train_conductor.sh`` (ARGS are extra OpenRLHF flags; it submits
  to the Ray cluster at ``RAY_ADDRESS``; ``--dry-run`` prints the trainer's arguments
  instead). Handler: :func:`train_run`.

Each sub-command sets ``handler`` (a function of the parsed namespace returning the exit
status: 0 on success, 2 on bad arguments or data). Nothing heavy is imported until a
handler runs (prepare loads the task source; no torch, no trainer library).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

__all__ = ["add_train_parser", "train_agent_path", "train_prepare", "train_run"]


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def _probability_or_flag(text: str) -> bool | float:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be true, false or a probability, got {text!r}")
    return value


def add_train_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``train`` (with ``prepare`` and ``agent-path``) to ``subparsers``; returns the
    ``train`` parser."""
    train: argparse.ArgumentParser = subparsers.add_parser(
        "train", help="prepare data for the conductor trainers"
    )
    commands = train.add_subparsers(dest="train_command", required=True)
    prepare = commands.add_parser(
        "prepare",
        help="write prompt rows (prompt, label) and the env config for a trainer",
        description="One JSONL row per task: the conductor prompt and an EpisodeRef label "
        "(task index, group seed, task-source fingerprint); the env config JSON is written "
        "next to it as <stem>.env.json.",
    )
    prepare.add_argument(
        "--tasks", required=True, help="task source: paper-train, offline, jsonl:<path>, ..."
    )
    prepare.add_argument("--out", required=True, help="the prompts file (.jsonl) to write")
    prepare.add_argument("--pool", default="sim-paper", help="pool preset or .toml file")
    prepare.add_argument("--k", type=int, default=None, help="workers per episode (default all)")
    prepare.add_argument(
        "--shuffle-workers", action="store_true", help="shuffle Model ids every episode"
    )
    prepare.add_argument("--seed", type=int, default=0, help="seed of the group seeds")
    prepare.add_argument("--limit", type=int, default=None, help="only the first N tasks")
    prepare.add_argument("--reward", default="paper", choices=["paper", "binary"])
    prepare.add_argument("--max-steps", type=int, default=5)
    prepare.add_argument("--max-recursions", type=int, default=0)
    prepare.add_argument(
        "--force-recursion",
        type=_probability_or_flag,
        default=False,
        help="true, false or the probability an episode must recurse (drawn per group)",
    )
    prepare.add_argument("--initial-round-weight", type=float, default=0.0)
    prepare.add_argument("--cache", default=None, help="response-cache file for the trainer")
    prepare.add_argument(
        "--task-options",
        type=_json_object,
        default={},
        help='task source options as a JSON object, e.g. \'{"cache_dir": "/data/hf"}\'',
    )
    prepare.add_argument("--chat-format", default="chatml", choices=["chatml", "plain"])
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
    run.add_argument("--trainer", required=True, choices=["trl", "openrlhf"])
    run.add_argument("--tasks", default="offline", help="task source (paper-train, offline, ...)")
    run.add_argument("--pool", default="sim-paper", help="pool preset or .toml file")
    run.add_argument("--k", type=int, default=None, help="workers per episode (default all)")
    run.add_argument("--shuffle-workers", action="store_true")
    run.add_argument("--max-recursions", type=int, default=0)
    run.add_argument("--model", default=None, help="base policy (trainer default if unset)")
    run.add_argument("--output-dir", default="runs/conductor")
    run.add_argument("--seed", type=int, default=0)
    run.add_argument(
        "--dry-run", action="store_true", help="openrlhf: print the trainer's arguments only"
    )
    run.add_argument("trainer_args", nargs=argparse.REMAINDER, help="after --: trainer options")
    run.set_defaults(handler=train_run)
    return train


def train_prepare(args: argparse.Namespace) -> int:
    """Handler of ``train prepare``."""
    from conductor_gym.tasks import TaskSourceError
    from conductor_gym.trainers.prepare import CONFIG_ENV, prepare_prompts

    try:
        result = prepare_prompts(
            args.out,
            tasks=args.tasks,
            task_options=args.task_options,
            pool=args.pool,
            k=args.k,
            shuffle_workers=args.shuffle_workers,
            seed=args.seed,
            limit=args.limit,
            reward=args.reward,
            max_steps=args.max_steps,
            max_recursions=args.max_recursions,
            force_recursion=args.force_recursion,
            initial_round_weight=args.initial_round_weight,
            cache=args.cache,
            chat_format=args.chat_format,
        )
    except (ValueError, TaskSourceError, OSError) as exc:
        print(f"conductor-gym train prepare: {exc}", file=sys.stderr)
        return 2
    config = result.config
    domains = ", ".join(f"{name} {count}" for name, count in sorted(result.domains.items()))
    shortest, longest = result.prompt_chars
    print(f"wrote {result.rows} prompts to {result.prompts_path} ({domains})")
    print(f"  prompt length {shortest}..{longest} characters")
    print(
        f"  tasks {config.tasks!r} ({config.num_tasks} tasks, fingerprint "
        f"{config.task_fingerprint}), pool {config.pool!r}, k={config.k}, "
        f"shuffle_workers={config.shuffle_workers}, max_recursions={config.max_recursions}"
    )
    print(f"wrote the env config to {result.config_path}")
    print(f"trainers read it from: {CONFIG_ENV}={result.config_path.resolve()}")
    return 0


def train_agent_path(args: argparse.Namespace) -> int:
    """Handler of ``train agent-path``."""
    from conductor_gym.trainers.openrlhf import AGENT_FILE

    print(AGENT_FILE)
    return 0


def train_run(args: argparse.Namespace) -> int:
    """Handler of ``train run``: one set of env arguments, either trainer."""
    extra = list(args.trainer_args)
    if extra[:1] == ["--"]:
        extra = extra[1:]
    common = ["--tasks", args.tasks, "--pool", args.pool, "--seed", str(args.seed)]
    common += ["--max-recursions", str(args.max_recursions)]
    common += ["--k", str(args.k)] if args.k is not None else []
    common += ["--shuffle-workers"] if args.shuffle_workers else []
    if args.trainer == "trl":
        from conductor_gym.trainers.trl.train import main as trl_main

        model = ["--model", args.model] if args.model else []
        return trl_main([*common, *model, "--output-dir", args.output_dir, *extra])
    return _run_openrlhf(args, common, extra)


def _run_openrlhf(args: argparse.Namespace, common: list[str], extra: list[str]) -> int:
    import os
    import subprocess
    from pathlib import Path

    from conductor_gym.trainers.openrlhf import LAUNCH_SCRIPT

    out = Path(args.output_dir)
    prompts = out / "prompts.jsonl"
    prepared = build_train_parser().parse_args(["train", "prepare", *common, "--out", str(prompts)])
    status = train_prepare(prepared)
    if status != 0:
        return status
    env = dict(os.environ, PROMPTS=str(prompts), OUTPUT=str(out / "ckpt"))
    if args.model:
        env["MODEL"] = args.model
    if args.dry_run:
        env["DRY_RUN"] = "1"
    return subprocess.call(["bash", str(LAUNCH_SCRIPT), *extra], env=env)


def build_train_parser() -> argparse.ArgumentParser:
    """A parser with only the ``train`` command (for re-parsing ``train prepare``)."""
    parser = argparse.ArgumentParser(prog="conductor-gym")
    add_train_parser(parser.add_subparsers(dest="command", required=True))
    return parser
