"""Train a conductor with TRL's ``GRPOTrainer`` on the env: ``main(argv)`` / ``train(settings)``.

::

    python -m conductor_gym.trainers.trl.train --recipe cpu-demo        # docs/training-cpu.md
    python -m conductor_gym.trainers.trl.train --recipe paper --model Qwen/Qwen2.5-7B-Instruct \\
        --tasks paper-train --pool paper-constrained --use-vllm --output-dir runs/paper

The dataset has one row per training task: the env's observation for an
:class:`~conductor_gym.bridge.EpisodeRef` (task index, group seed) and its label.
Single-turn episodes (``--max-recursions 0``) are scored by the async reward function
:class:`~conductor_gym.trainers.trl.reward.ConductorReward`; with recursion, or ``--rollout``, the
multi-turn :class:`~conductor_gym.trainers.trl.rollout.ConductorRollout` plays the episodes and
:func:`~conductor_gym.trainers.trl.reward.rollout_reward` passes their rewards to TRL. With
``--eval-tasks N`` the policy is evaluated greedily on ``N`` held-out tasks (the last
``N`` of the source) before and after training (:mod:`conductor_gym.trainers.trl.evaluate`).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conductor_gym.bridge import Scorer
from conductor_gym.config import EnvConfig, add_config_arguments, config_from_arguments
from conductor_gym.errors import ConfigurationError
from conductor_gym.pool.base import make_pool

from . import config as recipes
from .data import build_dataset, make_refs
from .precision import choose_cpu_precision

__all__ = [
    "PRECISIONS",
    "RECIPES",
    "TrainResult",
    "TrainSettings",
    "add_arguments",
    "choose_precision",
    "episode_config",
    "main",
    "run_with_config",
    "train",
]

RECIPES = ("paper", "cpu-demo")
PRECISIONS = ("auto", "bf16", "fp32")
"""``--precision``: ``auto`` measures bf16 against float32 for the CPU recipe
(:mod:`~conductor_gym.trainers.trl.precision`) and keeps the paper recipe's bf16."""


@dataclass
class TrainSettings:
    """Everything a run needs; ``None`` fields take the recipe's default.

    ``env`` holds every episode setting (:class:`~conductor_gym.config.EnvConfig`: tasks,
    pool, ``k``, reward, plan length, recursion, templates, cache, ...); ``workers``
    keeps only the named workers of its pool, in that order; ``iterations`` is the number
    of GRPO optimizer steps (TRL's ``max_steps``).
    """

    recipe: str = "cpu-demo"
    env: EnvConfig = field(default_factory=EnvConfig)
    workers: tuple[str, ...] | None = None
    model: str = "smollm2-135m"
    output_dir: str = "runs/trl"
    iterations: int | None = None
    train_tasks: int | None = None
    eval_tasks: int = 0
    eval_repeats: int = 4
    rollout: bool = False
    learning_rate: float | None = None
    num_generations: int | None = None
    temperature: float | None = None
    trainable_layers: int | None = None
    threads: int | None = None
    use_vllm: bool = False
    vllm_mode: str = "colocate"
    seed: int = 0
    precision: str = "auto"
    grpo_overrides: dict[str, Any] = field(default_factory=dict)


@dataclass
class TrainResult:
    """What a run produced: the trainer's log history, evaluations and timings."""

    settings: TrainSettings
    log_history: list[dict[str, Any]]
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    improvement: tuple[float, float] | None = None
    timings: dict[str, float] = field(default_factory=dict)
    precision: dict[str, Any] = field(default_factory=dict)
    trainer: Any = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        settings = {
            f.name: getattr(self.settings, f.name)
            for f in dataclasses.fields(self.settings)
            if f.name != "env"
        }
        return {
            "settings": {**settings, "env": self.settings.env.describe()},
            "precision": self.precision,
            "before": self.before,
            "after": self.after,
            "improvement": None
            if self.improvement is None
            else {"mean": self.improvement[0], "se": self.improvement[1]},
            "timings": self.timings,
            "log_history": self.log_history,
        }


def _demo_defaults(settings: TrainSettings) -> TrainSettings:
    """The cpu-demo recipe's episode set-up where the user kept the generic defaults."""
    if settings.recipe != "cpu-demo":
        return settings
    env = settings.env
    return dataclasses.replace(
        settings,
        env=env if env.templates is not None else env.replace(templates=recipes.DEMO_TEMPLATES),
        workers=settings.workers or recipes.DEMO_WORKERS,
        train_tasks=settings.train_tasks or 64,
        trainable_layers=settings.trainable_layers or 4,
        threads=settings.threads or 1,
    )


def build_pool(settings: TrainSettings) -> Any:
    """The env's pool, or the named ``workers`` of it, in that order."""
    pool = settings.env.pool
    if not settings.workers:
        return pool
    specs = {s.name: s for s in make_pool(pool).specs}
    missing = [w for w in settings.workers if w not in specs]
    if missing:
        raise ConfigurationError(
            f"{missing} not in pool {pool!r} ({sorted(specs)})", field="workers"
        )
    return [specs[w] for w in settings.workers]


def episode_config(settings: TrainSettings, *, max_recursions: int | None = None) -> EnvConfig:
    """The env config the run's episodes use (``workers`` applied)."""
    changes: dict[str, Any] = {"pool": build_pool(settings)}
    if max_recursions is not None:
        changes["max_recursions"] = max_recursions
        if max_recursions == 0:
            changes.update(force_recursion=False, initial_round_weight=0.0)
    return settings.env.replace(**changes)


def make_scorer(settings: TrainSettings, *, max_recursions: int | None = None) -> Scorer:
    return Scorer(episode_config(settings, max_recursions=max_recursions), seed=settings.seed)


def choose_precision(settings: TrainSettings) -> dict[str, Any]:
    """``{"bf16": bool, "source": ...}`` for the run: ``--precision bf16`` or ``fp32`` as
    given; ``auto`` keeps bf16 for the paper recipe and for generation on a GPU
    (``--use-vllm``), and for the CPU recipe measures (the :class:`PrecisionChoice`'s
    fields are added)."""
    if settings.precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {settings.precision!r}")
    if settings.precision != "auto":
        return {"bf16": settings.precision == "bf16", "source": "--precision"}
    if settings.recipe == "paper" or settings.use_vllm:
        return {"bf16": True, "source": "recipe (GPU)"}
    return {**choose_cpu_precision().to_dict(), "source": "measured"}


def grpo_config(settings: TrainSettings, *, bf16: bool | None = None) -> Any:
    """The run's ``GRPOConfig``; ``bf16`` (``None``: the recipe's default) overrides the
    recipe's precision unless ``grpo_overrides`` sets it."""
    overrides: dict[str, Any] = {"seed": settings.seed}
    if bf16 is not None:
        overrides["bf16"] = bf16
    for name in ("learning_rate", "num_generations", "temperature"):
        if (value := getattr(settings, name)) is not None:
            overrides[name] = value
    if settings.iterations is not None:
        overrides["max_steps"] = settings.iterations
    overrides.update(settings.grpo_overrides)
    if settings.recipe == "paper":
        return recipes.paper_config(
            settings.output_dir,
            use_vllm=settings.use_vllm,
            vllm_mode=settings.vllm_mode,
            **overrides,
        )
    if settings.use_vllm:
        overrides.update(use_vllm=True, vllm_mode=settings.vllm_mode, use_cpu=False)
    return recipes.cpu_demo_config(settings.output_dir, **overrides)


def train(settings: TrainSettings) -> TrainResult:
    """Build the dataset, policy and ``GRPOTrainer``; train; evaluate when asked."""
    if settings.recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {RECIPES}, got {settings.recipe!r}")
    settings = _demo_defaults(settings)
    if settings.threads is not None:
        os.environ.setdefault("OMP_NUM_THREADS", str(settings.threads))
    grpo_trainer = importlib.import_module("trl").GRPOTrainer
    from .evaluate import greedy_eval, paired_difference
    from .policy import freeze_lower_layers, load_policy, set_cpu_threads
    from .reward import ConductorReward, rollout_reward
    from .rollout import ConductorRollout

    timings: dict[str, float] = {}
    start = time.perf_counter()
    set_cpu_threads(settings.threads)
    chat = True
    prefix = recipes.DEMO_PREFIX if settings.recipe == "cpu-demo" else ()
    scorer = make_scorer(settings)
    multi_turn = settings.rollout or settings.env.max_recursions > 0
    n_train = settings.train_tasks or len(scorer.tasks)
    if n_train + settings.eval_tasks > len(scorer.tasks):
        raise ValueError(
            f"{n_train} training + {settings.eval_tasks} evaluation tasks exceed the "
            f"{len(scorer.tasks)} tasks of {settings.env.tasks!r}"
        )
    dataset, labels = build_dataset(
        scorer, make_refs(range(n_train), seed=settings.seed), chat=chat, prefix=prefix
    )
    precision = choose_precision(settings)
    config = grpo_config(settings, bf16=precision["bf16"])
    precision["bf16"] = bool(config.bf16)  # what the trainer runs (grpo_overrides may set it)

    model, tokenizer = load_policy(settings.model)
    freeze_lower_layers(model, settings.trainable_layers)
    timings["load_s"] = time.perf_counter() - start

    evaluation: Any = None
    before = None
    if settings.eval_tasks:
        eval_scorer = make_scorer(settings, max_recursions=0) if multi_turn else scorer
        first = len(scorer.tasks) - settings.eval_tasks
        eval_refs = make_refs(range(first, len(scorer.tasks)), seed=settings.seed + 10**6)
        eval_rows, _ = build_dataset(eval_scorer, eval_refs, chat=chat, prefix=prefix)
        evaluation = (eval_scorer, eval_refs, list(eval_rows["prompt"]))

        def run_eval() -> Any:
            return greedy_eval(
                model,
                tokenizer,
                evaluation[0],
                evaluation[1],
                evaluation[2],
                repeats=settings.eval_repeats,
                max_new_tokens=config.max_completion_length,
                bf16=bool(config.bf16),
            )

        before = run_eval()
        timings["eval_before_s"] = before.wall_s

    rollout = ConductorRollout(scorer, labels) if multi_turn else None
    reward: Any = rollout_reward if rollout is not None else ConductorReward(scorer)
    trainer = grpo_trainer(
        model=model,
        reward_funcs=[reward],
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        rollout_func=rollout,
    )
    train_start = time.perf_counter()
    trainer.train()
    timings["train_s"] = time.perf_counter() - train_start

    result = TrainResult(
        settings, list(trainer.state.log_history), precision=precision, trainer=trainer
    )
    if before is not None:
        after = run_eval()
        timings["eval_after_s"] = after.wall_s
        result.before, result.after = before.to_dict(), after.to_dict()
        result.improvement = paired_difference(before, after)
    timings["total_s"] = time.perf_counter() - start
    result.timings = timings
    if rollout is not None:
        rollout.close()
    return result


# -- command line --------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser, *, env: bool = True) -> None:
    """The training options (for ``main`` and ``conductor-gym train run``): the trainer's
    own, and with ``env`` every :class:`~conductor_gym.config.EnvConfig` setting's flag."""
    add = parser.add_argument
    add("--recipe", choices=RECIPES, default="cpu-demo", help="GRPO recipe (default cpu-demo)")
    add("--workers", default=None, help="comma-separated worker names of --pool, in order")
    add("--rollout", action="store_true", help="use the rollout_func path even when single-turn")
    add("--model", default="smollm2-135m", help="policy: smollm2-135m, tiny, or an HF id/folder")
    add("--output-dir", default="runs/trl")
    add("--iterations", type=int, default=None, help="GRPO optimizer steps (TRL's max_steps)")
    add("--train-tasks", type=int, default=None, help="training prompts (first N tasks)")
    add("--eval-tasks", type=int, default=None, help="held-out greedy evaluation tasks")
    add("--eval-repeats", type=int, default=4, help="worker draws per evaluation plan")
    add("--learning-rate", type=float, default=None)
    add("--num-generations", type=int, default=None)
    add("--temperature", type=float, default=None)
    add("--trainable-layers", type=int, default=None, help="train only the top N blocks")
    add("--threads", type=int, default=None, help="torch CPU threads")
    add("--use-vllm", action="store_true", help="generate with vLLM (GPU)")
    add("--vllm-mode", choices=("colocate", "server"), default="colocate")
    add("--seed", type=int, default=0)
    add(
        "--precision",
        choices=PRECISIONS,
        default="auto",
        help="bf16 autocast or float32; auto (default) measures both on the CPU recipe",
    )
    if env:
        add_config_arguments(parser)


def settings_from_args(args: argparse.Namespace, env: EnvConfig | None = None) -> TrainSettings:
    """The run's settings from parsed options; ``env`` (default: the env flags) is the
    episodes' config."""
    eval_tasks = args.eval_tasks
    if eval_tasks is None:
        eval_tasks = 48 if args.recipe == "cpu-demo" else 0
    return TrainSettings(
        recipe=args.recipe,
        env=env if env is not None else config_from_arguments(args),
        workers=tuple(w.strip() for w in args.workers.split(",") if w.strip())
        if args.workers
        else None,
        model=args.model,
        output_dir=args.output_dir,
        iterations=args.iterations,
        train_tasks=args.train_tasks,
        eval_tasks=eval_tasks,
        eval_repeats=args.eval_repeats,
        rollout=args.rollout,
        learning_rate=args.learning_rate,
        num_generations=args.num_generations,
        temperature=args.temperature,
        trainable_layers=args.trainable_layers,
        threads=args.threads,
        use_vllm=args.use_vllm,
        vllm_mode=args.vllm_mode,
        seed=args.seed,
        precision=args.precision,
    )


def report(result: TrainResult) -> str:
    """A short text summary of a run."""
    lines = [
        f"recipe {result.settings.recipe}: "
        + ", ".join(f"{k} {v:.0f}s" for k, v in result.timings.items())
    ]
    if result.precision:
        chosen = "bf16 autocast" if result.precision["bf16"] else "float32"
        lines.append(
            f"precision {chosen} ({result.precision['source']})"
            + (f": {result.precision['reason']}" if "reason" in result.precision else "")
        )
    for name, ev in (("before", result.before), ("after", result.after)):
        if ev is not None:
            lines.append(
                f"{name:6s} greedy reward {ev['mean_reward']:.3f} +- {ev['se']:.3f} "
                f"(accuracy {ev['accuracy']:.3f}, valid {ev['valid_rate']:.2f}, "
                f"first worker {ev['first_worker']}) over {ev['tasks']} tasks"
            )
    if result.improvement is not None:
        lines.append(f"change {result.improvement[0]:+.3f} +- {result.improvement[1]:.3f} (paired)")
    return "\n".join(lines)


def _run(settings: TrainSettings) -> int:
    result = train(settings)
    out = Path(result.settings.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result.to_dict(), indent=2, default=str))
    print(report(result))
    print(f"results: {out / 'results.json'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="conductor-gym-train-trl", description="GRPO training of a conductor with TRL"
    )
    add_arguments(parser)
    return _run(settings_from_args(parser.parse_args(argv)))


def run_with_config(
    env: EnvConfig,
    *,
    model: str | None = None,
    output_dir: str | None = None,
    seed: int = 0,
    dry_run: bool = False,
    argv: Sequence[str] = (),
) -> int:
    """Train on the episodes of ``env`` (``conductor-gym train run --trainer trl``);
    ``argv`` holds the trainer's own options (``--recipe``, ``--iterations``, ...).
    ``dry_run`` prints the run's settings instead of training."""
    parser = argparse.ArgumentParser(prog="conductor-gym train run --trainer trl --")
    add_arguments(parser, env=False)
    args = parser.parse_args(list(argv))
    args.seed = seed
    if model is not None:
        args.model = model
    if output_dir is not None:
        args.output_dir = output_dir
    settings = settings_from_args(args, env=env)
    if dry_run:
        print(json.dumps(TrainResult(_demo_defaults(settings), []).to_dict()["settings"]))
        return 0
    return _run(settings)


if __name__ == "__main__":
    raise SystemExit(main())
