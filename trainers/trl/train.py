"""Train a conductor with TRL's ``GRPOTrainer`` on the env: ``main(argv)`` / ``train(settings)``.

::

    python -m conductor_gym.trainers.trl.train --recipe cpu-orchestrate # docs/training-cpu.md
    python -m conductor_gym.trainers.trl.train --recipe cpu-demo        # one-step routing, 10 min
    python -m conductor_gym.trainers.trl.train --recipe paper --model Qwen/Qwen2.5-7B-Instruct \\
        --tasks paper-train --pool paper-constrained --use-vllm --output-dir runs/paper

The dataset has one row per training task: the env's observation for an
:class:`~conductor_gym.bridge.EpisodeRef` (task index, group seed) and its label.
Single-turn episodes (``--max-recursions 0``) are scored by the async reward function
:class:`~conductor_gym.trainers.trl.reward.ConductorReward`; with recursion, or ``--rollout``, the
multi-turn :class:`~conductor_gym.trainers.trl.rollout.ConductorRollout` plays the episodes and
:func:`~conductor_gym.trainers.trl.reward.rollout_reward` passes their rewards to TRL. With
``--eval-tasks N`` the policy is evaluated greedily on ``N`` held-out tasks (the last
``N`` of the source, or ``--eval-first``'s) before and after training
(:mod:`conductor_gym.trainers.trl.evaluate`), next to the ``baselines`` agents on the same
episodes.

``cpu-orchestrate`` (:class:`~conductor_gym.trainers.trl.config.Orchestrate`) is the recipe
that learns multi-step workflows on two CPU cores: the policy is asked with its own short
chat (:data:`~conductor_gym.trainers.trl.config.ORCHESTRATE_PROMPT`, saved with the
checkpoint), warm-started on plans drawn from a plan prior fitted to the training
episodes' rewards by a cross-entropy search (:mod:`~conductor_gym.trainers.trl.plan_prior`,
:mod:`~conductor_gym.trainers.trl.warm_start`), then trained with GRPO on offline tasks
160 onwards and evaluated on tasks 0-159 (the board's ``offline-160``) beside every
``single:<id>``; it saves the checkpoint, ``results.json``, ``curves.png`` and the plan
table ``plans.md`` in ``--output-dir``.
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
from .data import HELD_OUT_SEED_OFFSET, build_dataset, make_refs
from .plan_prior import PlanSearch
from .precision import choose_cpu_precision
from .warm_start import WarmStart

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
    "schedule_for_precision",
    "train",
]

RECIPES = ("paper", "cpu-demo", "cpu-orchestrate")
PRECISIONS = ("auto", "bf16", "fp32")
"""``--precision``: ``auto`` measures bf16 against float32 for the CPU recipe
(:mod:`~conductor_gym.trainers.trl.precision`) and keeps the paper recipe's bf16."""


@dataclass
class TrainSettings:
    """Everything a run needs; ``None`` fields take the recipe's default.

    ``env`` holds every episode setting (:class:`~conductor_gym.config.EnvConfig`: tasks,
    pool, ``k``, reward, plan length, recursion, templates, cache, ...); ``workers``
    keeps only the named workers of its pool, in that order; ``iterations`` is the number
    of GRPO optimizer steps (TRL's ``max_steps``); ``eval_tasks`` held-out tasks (from
    ``eval_first``, default the source's last) are evaluated greedily with
    ``eval_repeats`` worker draws each (``None``: the recipe's, 48 x 4 for ``cpu-demo``,
    160 x 3 for ``cpu-orchestrate``, none for ``paper``); ``warm_start`` (the warm
    start's settings), ``plan_search`` (the plan prior's search) and ``train_first`` (the first
    training task) belong to ``cpu-orchestrate``;
    ``baselines`` are agent specs evaluated on the same episodes (``None``: every
    ``single:<id>`` for ``cpu-orchestrate``); ``save_checkpoint`` writes the policy to
    ``<output_dir>/checkpoint``.
    """

    recipe: str = "cpu-demo"
    env: EnvConfig = field(default_factory=EnvConfig)
    workers: tuple[str, ...] | None = None
    model: str = "smollm2-135m"
    output_dir: str = "runs/trl"
    iterations: int | None = None
    train_tasks: int | None = None
    eval_tasks: int | None = None
    eval_repeats: int | None = None
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
    warm_start: WarmStart | None = None
    plan_search: PlanSearch | None = None
    train_first: int | None = None
    eval_first: int | None = None
    baselines: tuple[str, ...] | None = None
    save_checkpoint: bool | None = None
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
    baselines: dict[str, dict[str, Any]] = field(default_factory=dict)
    versus_best_single: dict[str, Any] | None = None
    warm_start: dict[str, Any] | None = None
    plan_search: dict[str, Any] | None = None
    checkpoint: str | None = None
    evaluations: dict[str, Any] = field(default_factory=dict, repr=False)
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
            "baselines": self.baselines,
            "versus_best_single": self.versus_best_single,
            "warm_start": self.warm_start,
            "plan_search": self.plan_search,
            "checkpoint": self.checkpoint,
            "timings": self.timings,
            "log_history": self.log_history,
        }


def _recipe_defaults(settings: TrainSettings) -> TrainSettings:
    """The recipes' set-up where the user kept the generic defaults."""
    for name in ("warm_start", "plan_search"):
        if settings.recipe != "cpu-orchestrate" and getattr(settings, name) is not None:
            raise ConfigurationError(
                f"{name} belongs to the cpu-orchestrate recipe, not {settings.recipe!r}",
                field=name,
            )
    eval_tasks, eval_repeats = {"cpu-demo": (48, 4), "cpu-orchestrate": (160, 3)}.get(
        settings.recipe, (0, 4)
    )
    settings = dataclasses.replace(
        settings,
        eval_tasks=eval_tasks if settings.eval_tasks is None else settings.eval_tasks,
        eval_repeats=eval_repeats if settings.eval_repeats is None else settings.eval_repeats,
    )
    if settings.recipe == "cpu-orchestrate":
        recipe = recipes.ORCHESTRATE
        return dataclasses.replace(
            settings,
            train_tasks=settings.train_tasks or recipe.train_tasks,
            train_first=recipe.train_first
            if settings.train_first is None
            else settings.train_first,
            eval_first=0 if settings.eval_first is None else settings.eval_first,
            warm_start=dataclasses.replace(
                settings.warm_start or recipe.warm_start, seed=settings.seed
            ),
            plan_search=dataclasses.replace(
                settings.plan_search or recipe.search, seed=settings.seed
            ),
            trainable_layers=settings.trainable_layers or recipe.trainable_layers,
            threads=settings.threads or 1,
            save_checkpoint=True if settings.save_checkpoint is None else settings.save_checkpoint,
        )
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


def schedule_for_precision(
    settings: TrainSettings, requested: TrainSettings, *, bf16: bool
) -> tuple[TrainSettings, str]:
    """``cpu-orchestrate``'s schedule for the precision the run computes in, and its name.

    Under bf16 autocast it is the recipe's (``"full"``). In float32, GRPO steps that
    ``requested`` (the settings as the user gave them) left unset become
    :attr:`Orchestrate.float32_iterations` (``"float32"``), so that the run fits the
    hour where bf16 is emulated; steps the user set (``iterations``, or ``max_steps`` in
    ``grpo_overrides``) are kept (``"given"``)."""
    if bf16:
        return settings, "full"
    if requested.iterations is not None or "max_steps" in requested.grpo_overrides:
        return settings, "given"
    return dataclasses.replace(settings, iterations=recipes.ORCHESTRATE.float32_iterations), (
        "float32"
    )


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
    if settings.recipe == "cpu-orchestrate":
        recipe = recipes.ORCHESTRATE
        defaults = {
            "max_steps": recipe.iterations,
            "num_generations": recipe.num_generations,
            "prompts_per_step": recipe.prompts_per_step,
            "micro_batch_size": recipe.micro_batch_size,
            "learning_rate": recipe.learning_rate,
            "temperature": recipe.temperature,
            "max_completion_length": recipe.max_completion_length,
        }
        overrides = {**defaults, **overrides}
    return recipes.cpu_demo_config(settings.output_dir, **overrides)


def train(settings: TrainSettings) -> TrainResult:
    """Build the dataset, policy and ``GRPOTrainer``; warm-start (``cpu-orchestrate``);
    train; evaluate when asked; save the checkpoint when asked."""
    if settings.recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {RECIPES}, got {settings.recipe!r}")
    requested = settings
    settings = _recipe_defaults(settings)
    if settings.threads is not None:
        os.environ.setdefault("OMP_NUM_THREADS", str(settings.threads))
    grpo_trainer = importlib.import_module("trl").GRPOTrainer
    from .evaluate import agent_eval, greedy_eval, paired_difference, versus_best_single
    from .policy import freeze_lower_layers, load_policy, set_cpu_threads
    from .reward import ConductorReward, rollout_reward
    from .rollout import ConductorRollout

    timings: dict[str, float] = {}
    start = time.perf_counter()
    set_cpu_threads(settings.threads)
    chat = True
    orchestrate = settings.recipe == "cpu-orchestrate"
    prefix = recipes.DEMO_PREFIX if settings.recipe == "cpu-demo" else ()
    chat_prompt = recipes.ORCHESTRATE_PROMPT if orchestrate else None
    scorer = make_scorer(settings)
    multi_turn = settings.rollout or settings.env.max_recursions > 0
    n_train = settings.train_tasks or len(scorer.tasks)
    first = settings.train_first or 0
    train_range = range(first, first + n_train)
    eval_range = _eval_range(settings, len(scorer.tasks))
    if train_range.stop > len(scorer.tasks):
        raise ValueError(
            f"training tasks {first}..{train_range.stop - 1} exceed the "
            f"{len(scorer.tasks)} tasks of {settings.env.tasks!r}"
        )
    if set(train_range) & set(eval_range):
        raise ValueError(
            f"training tasks {first}..{train_range.stop - 1} overlap the evaluation tasks "
            f"{eval_range.start}..{eval_range.stop - 1}: held-out means never trained on"
        )
    dataset, labels = build_dataset(
        scorer,
        make_refs(train_range, seed=settings.seed),
        chat=chat,
        prefix=prefix,
        chat_prompt=chat_prompt,
        unique_prompts=multi_turn,
    )
    precision = choose_precision(settings)
    config = grpo_config(settings, bf16=precision["bf16"])
    precision["bf16"] = bool(config.bf16)  # what the trainer runs (grpo_overrides may set it)
    if orchestrate:
        settings, precision["schedule"] = schedule_for_precision(
            settings, requested, bf16=precision["bf16"]
        )
        config = grpo_config(settings, bf16=precision["bf16"])
        precision["grpo_steps"] = int(config.max_steps)

    model, tokenizer = load_policy(settings.model)
    timings["load_s"] = time.perf_counter() - start

    warm: dict[str, Any] | None = None
    searched: dict[str, Any] | None = None
    if chat_prompt is not None and settings.warm_start is not None and settings.warm_start.steps:
        from .plan_prior import search_prior
        from .warm_start import warm_start

        search = settings.plan_search or recipes.ORCHESTRATE.search
        search_start = time.perf_counter()
        # With iterations=0 the search returns the uniform prior and no history.
        prior, history = search_prior(scorer, make_refs(train_range, seed=settings.seed), search)
        timings["plan_search_s"] = time.perf_counter() - search_start
        searched = {
            "settings": dataclasses.asdict(search),
            "history": history,
            "prior": prior.to_dict(),
        }
        warm_settings = settings.warm_start
        warm = warm_start(
            model,
            tokenizer,
            chat_prompt,
            [scorer.tasks[i].question for i in train_range],
            prior,
            warm_settings,
            bf16=bool(config.bf16),
        )
        warm["settings"] = dataclasses.asdict(warm_settings)
        timings["warm_start_s"] = warm["wall_s"]
    freeze_lower_layers(model, settings.trainable_layers)

    evaluation: Any = None
    before = None
    if eval_range:
        eval_scorer = make_scorer(settings, max_recursions=0) if multi_turn else scorer
        eval_refs = make_refs(eval_range, seed=settings.seed + HELD_OUT_SEED_OFFSET)
        eval_rows, _ = build_dataset(
            eval_scorer,
            eval_refs,
            chat=chat,
            prefix=prefix,
            chat_prompt=chat_prompt,
            unique_prompts=False,
        )
        evaluation = (eval_scorer, eval_refs, list(eval_rows["prompt"]))

        def run_eval() -> Any:
            return greedy_eval(
                model,
                tokenizer,
                evaluation[0],
                evaluation[1],
                evaluation[2],
                repeats=settings.eval_repeats or 1,
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
        settings,
        list(trainer.state.log_history),
        precision=precision,
        warm_start=warm,
        plan_search=searched,
        trainer=trainer,
    )
    if before is not None:
        after = run_eval()
        timings["eval_after_s"] = after.wall_s
        result.before, result.after = before.to_dict(), after.to_dict()
        result.improvement = paired_difference(before, after)
        result.evaluations = {"before": before, "after": after}
        baselines = {
            spec: agent_eval(evaluation[0], evaluation[1], spec, repeats=settings.eval_repeats or 1)
            for spec in _baselines(settings, scorer.pool.n)
        }
        result.baselines = {spec: ev.to_dict() for spec, ev in baselines.items()}
        if (versus := versus_best_single(baselines, after)) is not None:
            best, mean, se = versus
            result.versus_best_single = {"agent": best, "accuracy_gain": mean, "se": se}
    if settings.save_checkpoint:
        result.checkpoint = save_checkpoint(
            trainer, tokenizer, settings, chat_prompt, config.max_completion_length
        )
    timings["total_s"] = time.perf_counter() - start
    result.timings = timings
    if rollout is not None:
        rollout.close()
    return result


def _eval_range(settings: TrainSettings, n_tasks: int) -> range:
    """The held-out tasks: ``eval_tasks`` from ``eval_first`` (default: the source's last)."""
    if not settings.eval_tasks:
        return range(0)
    first = n_tasks - settings.eval_tasks if settings.eval_first is None else settings.eval_first
    if first < 0 or first + settings.eval_tasks > n_tasks:
        raise ValueError(
            f"{settings.eval_tasks} evaluation tasks from {first} exceed the {n_tasks} tasks"
        )
    return range(first, first + settings.eval_tasks)


def _baselines(settings: TrainSettings, n_workers: int) -> tuple[str, ...]:
    """The agents evaluated beside the policy: ``baselines``, or every ``single:<id>`` and
    ``best-single`` (per family, calibrated on a disjoint split) for ``cpu-orchestrate``."""
    if settings.baselines is not None:
        return settings.baselines
    if settings.recipe == "cpu-orchestrate":
        return (*(f"single:{i}" for i in range(n_workers)), "best-single")
    return ()


def save_checkpoint(
    trainer: Any,
    tokenizer: Any,
    settings: TrainSettings,
    chat_prompt: Any,
    max_new_tokens: int | None = None,
) -> str:
    """Save the trained policy to ``<output_dir>/checkpoint`` (weights, tokenizer, the chat
    prompt it answers and, in ``generation_config.json``, the completion limit it was
    trained with, both of which ``policy:<path>`` reads); returns the folder."""
    folder = Path(settings.output_dir) / "checkpoint"
    folder.mkdir(parents=True, exist_ok=True)
    if max_new_tokens is not None:
        trainer.model.generation_config.max_new_tokens = max_new_tokens
    trainer.save_model(str(folder))
    tokenizer.save_pretrained(str(folder))
    if chat_prompt is not None:
        chat_prompt.save(folder)
    return str(folder)


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
    add("--eval-first", type=int, default=None, help="first held-out task (default: the last N)")
    add("--eval-repeats", type=int, default=None, help="worker draws per evaluation plan")
    add("--train-first", type=int, default=None, help="first training task (default 0)")
    add("--warm-start-steps", type=int, default=None, help="warm-start steps (cpu-orchestrate)")
    add(
        "--search-iterations",
        type=int,
        default=None,
        help="plan-prior search rounds (cpu-orchestrate; 0: the uniform prior)",
    )
    add("--baselines", default=None, help="comma-separated agent specs evaluated alike")
    add("--no-checkpoint", action="store_true", help="do not save the trained policy")
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
        eval_tasks=args.eval_tasks,
        eval_repeats=args.eval_repeats,
        warm_start=None
        if args.warm_start_steps is None
        else dataclasses.replace(recipes.ORCHESTRATE.warm_start, steps=args.warm_start_steps),
        plan_search=None
        if args.search_iterations is None
        else dataclasses.replace(recipes.ORCHESTRATE.search, iterations=args.search_iterations),
        train_first=args.train_first,
        eval_first=args.eval_first,
        baselines=tuple(b.strip() for b in args.baselines.split(",") if b.strip())
        if args.baselines is not None
        else None,
        save_checkpoint=False if args.no_checkpoint else None,
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
        if (schedule := result.precision.get("schedule")) is not None:
            warm = result.settings.warm_start
            lines.append(
                f"schedule {schedule}: {warm.steps if warm else 0} warm-start steps, "
                f"{result.precision['grpo_steps']} GRPO steps"
            )
    if result.plan_search is not None and result.plan_search["history"]:
        search = result.plan_search["settings"]
        episodes = search["iterations"] * search["population"] * search["tasks_per_plan"]
        lines.append(
            f"plan search: {episodes} training episodes, prior's mode "
            f"{result.plan_search['prior']['mode']} (Model i and role of each step)"
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
    for spec, ev in result.baselines.items():
        lines.append(
            f"{spec:9s} reward {ev['mean_reward']:.3f} +- {ev['se']:.3f}, "
            f"accuracy {ev['accuracy']:.3f} +- {ev['accuracy_se']:.3f}"
        )
    if (best := result.versus_best_single) is not None:
        lines.append(
            f"accuracy vs the best single worker ({best['agent']}): "
            f"{best['accuracy_gain']:+.3f} +- {best['se']:.3f} (paired)"
        )
    if result.checkpoint is not None:
        lines.append(f"checkpoint: {result.checkpoint}")
    return "\n".join(lines)


def write_reports(result: TrainResult) -> list[Path]:
    """``curves.png`` (training curves, with the held-out accuracy before and after) and,
    after an evaluation, ``plans.md`` (what the trained policy's plans do, per family) in
    the run's output folder; returns the files written."""
    from .report import plan_statistics, plan_table, plot_curves

    out = Path(result.settings.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    steps = max((int(entry.get("step", 0)) for entry in result.log_history), default=0)
    evals = [
        (step, float(ev["accuracy"]), f"held-out {name}")
        for step, name, ev in ((0, "before", result.before), (steps, "after", result.after))
        if ev is not None
    ]
    if any("reward" in entry for entry in result.log_history):
        title = f"{result.settings.recipe}: {result.settings.model}"
        written.append(
            plot_curves(result.log_history, out / "curves.png", title=title, evals=evals)
        )
    after = result.evaluations.get("after")
    if after is not None:
        rows = list(zip(after.families, after.questions, after.plans, strict=True))
        orders = set(after.pools)  # one order unless the pool shuffles or draws k of n
        names = list(orders.pop()) if len(orders) == 1 else None
        table = plan_table(plan_statistics(rows), worker_names=names)
        (out / "plans.md").write_text(table + "\n")
        written.append(out / "plans.md")
    return written


def _run(settings: TrainSettings) -> int:
    result = train(settings)
    out = Path(result.settings.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps(result.to_dict(), indent=2, default=str))
    written = write_reports(result)
    print(report(result))
    print(f"results: {out / 'results.json'}" + "".join(f", {path}" for path in written))
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
        print(json.dumps(TrainResult(_recipe_defaults(settings), []).to_dict()["settings"]))
        return 0
    return _run(settings)


if __name__ == "__main__":
    raise SystemExit(main())
