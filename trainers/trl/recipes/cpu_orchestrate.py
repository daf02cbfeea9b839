"""The ``cpu-orchestrate`` recipe: learning multi-step workflows on two CPU cores.

::

    python -m conductor_gym.trainers.trl.train --recipe cpu-orchestrate \\
        --output-dir runs/orchestrate

The policy is asked with its own short chat (:data:`CHAT_PROMPT`, saved with the
checkpoint), warm-started on plans drawn from a plan prior fitted to the training
episodes' rewards by a cross-entropy search (:mod:`~conductor_gym.trainers.trl.plan_prior`,
:mod:`~conductor_gym.trainers.trl.warm_start`), then trained with GRPO
(:func:`~.cpu_demo.cpu_demo_config` with :data:`GRPO`) on the default env's settings
(all seven paper workers, fixed order) on :data:`~.common.CPU_RECIPE_POOL` (simulator v2,
where the documented runs were recorded; ``--pool sim-paper`` for v3), on offline tasks
160 onwards, and evaluated on tasks 0-159 (the board's ``offline-160``), never trained
on, beside every ``single:<id>`` and ``best-single``. It saves the checkpoint,
``results.json``, ``curves.png`` and the plan table ``plans.md`` in ``--output-dir``
(``docs/training-cpu.md``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from conductor_gym.core.config import EnvConfig
from conductor_gym.training.chat_prompt import ChatPrompt

from ..data import make_refs
from ..plan_prior import PlanSearch
from ..warm_start import WarmStart
from . import common, cpu_demo
from .common import TrainResult

__all__ = [
    "CHAT_PROMPT",
    "FLOAT32_ITERATIONS",
    "GRPO",
    "ITERATIONS",
    "Args",
    "grpo_config",
    "resolve",
    "run",
    "run_with",
    "schedule_for_precision",
]

CHAT_PROMPT = ChatPrompt(
    system=(
        "You are a conductor. You answer a question by giving steps to the listed models. "
        "Reply with three Python lists: model_id (the model of each step), subtasks (what "
        'each step is asked) and access_list (the earlier steps each one sees: [] or "all").'
    )
)
"""The conductor chat of the ``cpu-orchestrate`` recipe (about 110 tokens with seven
workers): the question and the ``Model i`` list, as in the env's prompt, without its rules
and worked examples. It is saved with the checkpoint (``conductor_prompt.json``), so
``policy:<path>`` asks the trained policy with it."""

ITERATIONS = 20
"""GRPO steps of a run that leaves them to the recipe (bf16 autocast)."""

FLOAT32_ITERATIONS = 6
"""GRPO steps of a run that computes in float32 (a CPU without native bf16, or
``--precision fp32``) when the user left them to the recipe. Float32 runs the warm
start about 2.2x slower than bf16; with 20 steps the run would take about 52 min on
our AVX2 stand-in and over an hour on a real AVX2-only CPU (``docs/training-cpu.md``)."""

GRPO: dict[str, Any] = {
    "max_steps": ITERATIONS,
    "num_generations": 8,
    "prompts_per_step": 2,
    "micro_batch_size": 4,
    "learning_rate": 1e-5,
    "temperature": 1.0,
    "max_completion_length": 256,
}
"""The recipe's :func:`~.cpu_demo.cpu_demo_config` values (the settings' own win)."""


@dataclass
class Args(common.Args):
    """The ``cpu-orchestrate`` recipe's settings: :class:`common.Args` with these
    defaults (the search and the warm start take the run's ``seed``)."""

    recipe: ClassVar[str] = "cpu-orchestrate"

    env: EnvConfig = dataclasses.field(default_factory=common.cpu_recipe_env)
    train_tasks: int | None = 1792
    eval_tasks: int = 160
    eval_repeats: int = 3
    trainable_layers: int | None = 4
    threads: int | None = 1
    warm_start: WarmStart | None = dataclasses.field(default_factory=WarmStart)
    plan_search: PlanSearch | None = dataclasses.field(default_factory=PlanSearch)
    train_first: int = 160
    eval_first: int | None = 0
    save_checkpoint: bool = True


_A = TypeVar("_A", bound=Args)


def resolve(args: _A) -> _A:
    """The settings the run uses: the search and the warm start seeded with ``seed``
    (``warm_start=None``: neither runs; ``plan_search=None``: the default search)."""
    return dataclasses.replace(
        args,
        warm_start=None
        if args.warm_start is None
        else dataclasses.replace(args.warm_start, seed=args.seed),
        plan_search=None
        if args.plan_search is None
        else dataclasses.replace(args.plan_search, seed=args.seed),
    )


def grpo_config(args: common.Args, *, bf16: bool | None = None) -> Any:
    """The run's ``GRPOConfig``: :func:`~.cpu_demo.grpo_config` with :data:`GRPO`."""
    return cpu_demo.grpo_config(args, bf16=bf16, defaults=GRPO)


def schedule_for_precision(
    args: Args, requested: Args, *, bf16: bool, float32_iterations: int = FLOAT32_ITERATIONS
) -> tuple[Args, str]:
    """The recipe's schedule for the precision the run computes in, and its name.

    Under bf16 autocast it is the recipe's (``"full"``). In float32, GRPO steps that
    ``requested`` (the settings as the user gave them) left unset become
    ``float32_iterations`` (:data:`FLOAT32_ITERATIONS`; ``"float32"``), so that the run
    fits the hour where bf16 is emulated; steps the user set (``iterations``, or
    ``max_steps`` in ``grpo_overrides``) are kept (``"given"``)."""
    if bf16:
        return args, "full"
    if requested.iterations is not None or "max_steps" in requested.grpo_overrides:
        return args, "given"
    return dataclasses.replace(args, iterations=float32_iterations), "float32"


def run(args: Args) -> TrainResult:
    """Search, warm-start, train and evaluate (module docstring); the stages are
    :mod:`.common`'s."""
    return run_with(args, CHAT_PROMPT, GRPO, FLOAT32_ITERATIONS)


def run_with(
    args: Args,
    chat_prompt: ChatPrompt,
    grpo: Mapping[str, Any],
    float32_iterations: int,
    default_baselines: Sequence[str] | None = None,
) -> TrainResult:
    """The stages of :func:`run` with a recipe's own chat, GRPO values (as :data:`GRPO`),
    float32 step count (as :data:`FLOAT32_ITERATIONS`) and baselines (``None``: every
    ``single:<id>`` and ``best-single``); ``cpu-adapt`` runs them too. The warm start's
    chats show each training episode's drawn workers, as GRPO's prompts do."""
    from ..plan_prior import search_prior
    from ..policy import freeze_lower_layers, load_policy
    from ..warm_start import warm_start

    requested, args = args, resolve(args)
    clock = common.use_threads(args.threads)
    scorer = common.make_scorer(args)
    train_tasks, eval_tasks = common.split_tasks(args, scorer)
    dataset, labels = common.training_dataset(args, scorer, train_tasks, chat_prompt=chat_prompt)
    precision = common.choose_precision(args)
    config = cpu_demo.grpo_config(args, bf16=precision["bf16"], defaults=grpo)
    precision["bf16"] = bool(config.bf16)  # what the trainer runs (grpo_overrides may set it)
    args, precision["schedule"] = schedule_for_precision(
        args, requested, bf16=precision["bf16"], float32_iterations=float32_iterations
    )
    config = cpu_demo.grpo_config(args, bf16=precision["bf16"], defaults=grpo)
    precision["grpo_steps"] = int(config.max_steps)
    model, tokenizer = load_policy(args.model)
    clock.since_start("load_s")

    warm: dict[str, Any] | None = None
    searched: dict[str, Any] | None = None
    if args.warm_start is not None and args.warm_start.steps:
        search = args.plan_search or PlanSearch(seed=args.seed)
        refs = make_refs(train_tasks, seed=args.seed)
        with clock.timed("plan_search_s"):
            # With iterations=0 the search returns the uniform prior and no history.
            prior, history = search_prior(scorer, refs, search)
        searched = {
            "settings": dataclasses.asdict(search),
            "history": history,
            "prior": prior.to_dict(),
        }
        questions, names = common.episode_questions(scorer, refs)
        warm = warm_start(
            model,
            tokenizer,
            chat_prompt,
            questions,
            prior,
            args.warm_start,
            names=names,
            bf16=bool(config.bf16),
        )
        warm["settings"] = dataclasses.asdict(args.warm_start)
        clock.timings["warm_start_s"] = warm["wall_s"]
        if args.save_checkpoint:  # what GRPO starts from, for confirm --versus
            warm["checkpoint"] = common.save_policy(
                model,
                tokenizer,
                Path(args.output_dir) / "warm_start",
                chat_prompt,
                int(config.max_completion_length),
            )
    freeze_lower_layers(model, args.trainable_layers)

    if args.baselines is not None:
        baselines: Sequence[str] = args.baselines
    elif default_baselines is not None:
        baselines = default_baselines
    else:
        baselines = (*(f"single:{i}" for i in range(scorer.pool.n)), "best-single")
    return common.train_and_evaluate(
        args,
        scorer,
        eval_tasks,
        model,
        tokenizer,
        config,
        dataset,
        labels,
        clock,
        precision=precision,
        baselines=baselines,
        chat_prompt=chat_prompt,
        warm_start=warm,
        plan_search=searched,
    )
