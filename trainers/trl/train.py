"""Train a conductor with TRL's ``GRPOTrainer`` on the env: ``main(argv)`` / ``train(args)``.

::

    python -m conductor_gym.trainers.trl.train --recipe cpu-orchestrate # docs/training-cpu.md
    python -m conductor_gym.trainers.trl.train --recipe cpu-demo        # one-step routing, 10 min
    python -m conductor_gym.trainers.trl.train --recipe paper --model Qwen/Qwen2.5-7B-Instruct \\
        --tasks paper-train --pool paper-constrained --use-vllm --output-dir runs/paper
    python -m conductor_gym.trainers.trl.train --recipe paper-adapt --use-vllm ...  # k of n, named

A dispatcher: ``--recipe NAME`` picks a module of :mod:`conductor_gym.trainers.trl.recipes`
(:data:`RECIPES`), whose ``Args`` dataclass declares its settings once (the flags are
generated from its fields, :mod:`~conductor_gym.trainers.trl.settings`, beside every
``EnvConfig`` flag) and whose ``run(args)`` trains. ``--recipe NAME --help`` lists that
recipe's flags with its defaults.

The dataset has one row per training task: the env's observation for an
:class:`~conductor_gym.training.scoring.EpisodeRef` (task index, group seed) and its label.
Single-turn episodes (``--max-recursions 0``) are scored by the async reward function
:class:`~conductor_gym.trainers.trl.reward.ConductorReward`; with recursion, or ``--rollout``, the
multi-turn :class:`~conductor_gym.trainers.trl.rollout.ConductorRollout` plays the episodes and
:func:`~conductor_gym.trainers.trl.reward.rollout_reward` passes their rewards to TRL. With
``--eval-tasks N`` the policy is evaluated greedily on ``N`` held-out tasks (the last
``N`` of the source, or ``--eval-first``'s) before and after training
(:mod:`conductor_gym.trainers.trl.evaluate`), next to the ``baselines`` agents on the same
episodes. A run writes ``results.json`` and the reports of
:mod:`~conductor_gym.trainers.trl.report` in ``--output-dir``.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from conductor_gym.core.config import EnvConfig
from conductor_gym.errors import ConfigurationError

from . import settings as flags
from .recipes import RECIPES
from .recipes.common import Args, TrainResult, build_pool, choose_precision
from .report import summary, write_reports

__all__ = [
    "DEFAULT_RECIPE",
    "RECIPES",
    "Args",
    "TrainResult",
    "add_arguments",
    "args_from_arguments",
    "build_pool",
    "choose_precision",
    "grpo_config",
    "main",
    "make_args",
    "recipe_module",
    "resolve",
    "run_with_config",
    "train",
]

DEFAULT_RECIPE = "cpu-demo"


def make_args(recipe: str = DEFAULT_RECIPE, **settings: Any) -> Args:
    """The ``recipe``'s ``Args`` with ``settings`` (its fields' names); an unknown recipe
    or setting, or a value of the wrong type, raises ``ConfigurationError`` naming it."""
    cls = RECIPES.get(recipe)
    names = {f.name for f in dataclasses.fields(cls)}
    for name in settings:
        if name not in names:
            raise ConfigurationError(
                f"unknown setting of recipe {recipe!r}; valid: {sorted(names)}", field=name
            )
    return cls(**settings)


def recipe_module(args: Args | type[Args]) -> ModuleType:
    """The module of a recipe's ``Args`` (its ``run``, ``resolve`` and ``grpo_config``)."""
    cls = args if isinstance(args, type) else type(args)
    return importlib.import_module(cls.__module__)


def resolve(args: Args) -> Args:
    """The settings the recipe's run starts from (its ``resolve``)."""
    resolved: Args = recipe_module(args).resolve(args)
    return resolved


def grpo_config(args: Args, *, bf16: bool | None = None) -> Any:
    """The recipe's ``GRPOConfig`` for ``args``; ``bf16`` (``None``: the recipe's default)
    overrides the recipe's precision unless ``grpo_overrides`` sets it."""
    return recipe_module(args).grpo_config(args, bf16=bf16)


def train(args: Args) -> TrainResult:
    """Run the recipe of ``args`` (its module's ``run``)."""
    result: TrainResult = recipe_module(args).run(args)
    return result


# -- command line --------------------------------------------------------------------------


def add_arguments(
    parser: argparse.ArgumentParser, *, recipe: str = DEFAULT_RECIPE, env: bool = True
) -> None:
    """``--recipe`` and the flags of ``recipe``'s ``Args`` (for ``main`` and ``conductor-gym
    train run``); with ``env`` every :class:`~conductor_gym.core.config.EnvConfig`
    setting's flag too."""
    parser.add_argument(
        "--recipe",
        choices=RECIPES.names(),
        default=DEFAULT_RECIPE,
        help=f"GRPO recipe (default {DEFAULT_RECIPE}); --recipe NAME --help lists its flags",
    )
    flags.add_arguments(parser, RECIPES.get(recipe), env=env, title=f"recipe {recipe}")


def args_from_arguments(
    namespace: argparse.Namespace, env: EnvConfig | None = None, **settings: Any
) -> Args:
    """The run's ``Args`` from parsed options (of :func:`add_arguments`); ``env`` (default:
    the env flags) is the episodes' config; ``settings`` override the flags."""
    cls = RECIPES.get(namespace.recipe)
    values = flags.values_from_arguments(cls, namespace, env=env)
    return make_args(namespace.recipe, **{**values, **settings})


def _parse(
    parser: argparse.ArgumentParser, argv: Sequence[str] | None, *, env: bool = True
) -> argparse.Namespace:
    """Parse ``argv`` with the flags of the recipe it names (``--recipe``)."""
    first = argparse.ArgumentParser(add_help=False)
    first.add_argument("--recipe", choices=RECIPES.names(), default=DEFAULT_RECIPE)
    known, _ = first.parse_known_args(argv)
    add_arguments(parser, recipe=known.recipe, env=env)
    return parser.parse_args(argv)


def _run(args: Args) -> int:
    result = train(args)
    out = Path(result.settings.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result.to_dict(), indent=2, default=str))
    written = write_reports(result)
    print(summary(result))
    print(f"results: {out / 'results.json'}" + "".join(f", {path}" for path in written))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="conductor-gym-train-trl", description="GRPO training of a conductor with TRL"
    )
    return _run(args_from_arguments(_parse(parser, argv)))


def run_with_config(
    env: EnvConfig,
    *,
    env_changes: Mapping[str, Any] | None = None,
    model: str | None = None,
    output_dir: str | None = None,
    seed: int = 0,
    dry_run: bool = False,
    argv: Sequence[str] = (),
) -> int:
    """Train on the episodes of ``env`` (``conductor-gym train run --trainer trl``);
    ``argv`` holds the trainer's own options (``--recipe``, ``--iterations``, ...).
    ``dry_run`` prints the run's settings instead of training.

    With ``env_changes`` (the env flags given, as the CLI passes them) the recipe's own
    env (``cpu-adapt``'s randomised pool, ``cpu-orchestrate``'s pool) is the base and
    each of them replaces its field, whatever its value; without it ``env`` is used
    whole."""
    parser = argparse.ArgumentParser(prog="conductor-gym train run --trainer trl --")
    namespace = _parse(parser, list(argv), env=False)
    if env_changes is not None:
        env = make_args(namespace.recipe).env.replace(**env_changes)
    given = {"model": model, "output_dir": output_dir}
    overrides = {name: value for name, value in given.items() if value is not None}
    args = args_from_arguments(namespace, env=env, seed=seed, **overrides)
    if dry_run:
        print(json.dumps(TrainResult(resolve(args), []).to_dict()["settings"], default=str))
        return 0
    return _run(args)


if __name__ == "__main__":
    raise SystemExit(main())
