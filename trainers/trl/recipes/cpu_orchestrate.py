"""The ``cpu-orchestrate`` recipe: learning multi-step workflows on two CPU cores.

::

    python -m conductor_gym.trainers.trl.train --recipe cpu-orchestrate \\
        --output-dir runs/orchestrate

The policy is asked with its own short chat (:data:`CHAT_PROMPT`, saved with the
checkpoint), warm-started on plans drawn from a plan prior fitted to the training
episodes' rewards by a cross-entropy search (:mod:`~conductor_gym.trainers.trl.plan_prior`,
:mod:`~conductor_gym.trainers.trl.warm_start`), then trained with GRPO
(:func:`~.common.cpu_config` with :data:`GRPO`) on the default env's settings
(all seven paper workers, fixed order) on :data:`~.common.CPU_RECIPE_POOL` (simulator v2,
where the documented runs were recorded; ``--pool sim-paper`` for v3), on offline tasks
160 onwards, and evaluated on tasks 0-159 (the board's ``offline-160``), never trained
on, beside every ``single:<id>`` and ``best-single``. It saves the checkpoint,
``results.json``, ``curves.png`` and the plan table ``plans.md`` in ``--output-dir``
(``docs/training-cpu.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from conductor_gym.core.config import EnvConfig
from conductor_gym.training.chat_prompt import ChatPrompt

from ..plan_prior import PlanSearch
from ..settings import check_fields, setting
from ..warm_start import WarmStart
from . import common
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
]

CHAT_PROMPT = ChatPrompt(system=common.CPU_CHAT_SYSTEM)
"""The conductor chat of the ``cpu-orchestrate`` recipe (about 110 tokens with seven
workers): :data:`~.common.CPU_CHAT_SYSTEM`, then the question and the ``Model i`` list,
as in the env's prompt, without its rules and worked examples. It is saved with the
checkpoint (``conductor_prompt.json``), so ``policy:<path>`` asks the trained policy
with it."""

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
"""The recipe's :func:`~.common.cpu_config` values (the settings' own win)."""


@dataclass
class Args:
    """The ``cpu-orchestrate`` recipe's settings, each with its default and help (its flag
    is generated from it); the search and the warm start take the run's ``seed``."""

    recipe: ClassVar[str] = "cpu-orchestrate"
    """The recipe's name (``--recipe``)."""
    on_gpu: ClassVar[bool] = False
    """Whether the recipe runs on a GPU (``--precision auto`` then keeps bf16)."""

    env: EnvConfig = setting(  # noqa: RUF009 (setting() is a dataclasses.field)
        default_factory=common.cpu_recipe_env,
        help="every episode setting (EnvConfig: tasks, pool, k, reward, plan length, "
        "recursion, templates, cache, ...); its flags are EnvConfig's",
    )
    workers: tuple[str, ...] | None = setting(
        None, help="comma-separated worker names of --pool, in order (None: the whole pool)"
    )
    model: str = setting("smollm2-135m", help="policy: smollm2-135m, tiny, or an HF id/folder")
    output_dir: str = setting(
        "runs/trl",
        help="the run's folder (results.json, curves.png, plans.md, checkpoint/, warm_start/)",
    )
    iterations: int | None = setting(
        None, help="GRPO optimizer steps (TRL's max_steps; None: the recipe's)"
    )
    train_tasks: int | None = setting(
        1792, help="training tasks, from --train-first (None: every task of the source)"
    )
    eval_tasks: int = setting(160, help="held-out greedy evaluation tasks (0: none)")
    eval_repeats: int = setting(3, help="worker draws per evaluation plan")
    rollout: bool = setting(False, help="use the rollout_func path even when single-turn")
    learning_rate: float | None = setting(None, help="GRPO learning rate (None: the recipe's)")
    num_generations: int | None = setting(None, help="completions per prompt (None: the recipe's)")
    temperature: float | None = setting(None, help="sampling temperature (None: the recipe's)")
    trainable_layers: int | None = setting(
        4, help="train only the top N blocks (None: all of them)"
    )
    threads: int | None = setting(1, help="torch CPU threads (None: torch's choice)")
    use_vllm: bool = setting(False, help="generate with vLLM (GPU)")
    vllm_mode: str = setting("colocate", help="vLLM mode", choices=("colocate", "server"))
    seed: int = setting(0, help="the run's seed (episodes, GRPO, the warm start, the search)")
    precision: str = setting(
        "auto",
        help="bf16 autocast or float32; auto measures both on a CPU recipe",
        choices=common.PRECISIONS,
    )
    warm_start: WarmStart | None = setting(  # noqa: RUF009 (setting() is a dataclasses.field)
        default_factory=WarmStart,
        help="the warm start on plans drawn from the plan prior (cpu-orchestrate; "
        "the other recipes refuse it)",
        expose={"steps": ("--warm-start-steps", "warm-start steps (cpu-orchestrate)")},
    )
    plan_search: PlanSearch | None = setting(  # noqa: RUF009 (setting() is a dataclasses.field)
        default_factory=PlanSearch,
        help="the plan prior's search on training episodes (cpu-orchestrate; the other "
        "recipes refuse it)",
        expose={
            "iterations": (
                "--search-iterations",
                "plan-prior search rounds (cpu-orchestrate; 0: the uniform prior)",
            )
        },
    )
    train_first: int = setting(160, help="first training task")
    eval_first: int | None = setting(
        0, help="first held-out task (None: the source's last --eval-tasks)"
    )
    baselines: tuple[str, ...] | None = setting(
        None, help="comma-separated agent specs evaluated alike (None: the recipe's)"
    )
    save_checkpoint: bool = setting(
        True,
        help="save the trained policy to OUTPUT_DIR/checkpoint (and a warm-started "
        "recipe's warm start to OUTPUT_DIR/warm_start)",
        flag="--checkpoint",
    )
    grpo_overrides: dict[str, Any] = setting(  # noqa: RUF009 (setting() is a dataclasses.field)
        default_factory=dict, help="GRPOConfig keywords applied last", flag=None
    )

    def __post_init__(self) -> None:
        check_fields(self)


def resolve(args: Args) -> Args:
    """The settings the run uses: the search and the warm start seeded with ``seed``
    (``warm_start=None``: neither runs; ``plan_search=None``: the default search)."""
    return common.seed_stages(args)


def grpo_config(args: Args, *, bf16: bool | None = None) -> Any:
    """The run's ``GRPOConfig``: :func:`~.common.cpu_config` with :data:`GRPO`."""
    return common.cpu_config_for(args, bf16=bf16, defaults=GRPO)


def run(args: Args) -> TrainResult:
    """Search, warm-start, train and evaluate (module docstring); the stages are
    :mod:`.common`'s."""
    from ..policy import freeze_lower_layers, load_policy

    requested, args = args, resolve(args)
    clock = common.use_threads(args.threads)
    scorer = common.make_scorer(args)
    train_tasks, eval_tasks = common.split_tasks(args, scorer)
    dataset, labels = common.training_dataset(args, scorer, train_tasks, chat_prompt=CHAT_PROMPT)
    precision = common.choose_precision(args)
    config = grpo_config(args, bf16=precision["bf16"])
    precision["bf16"] = bool(config.bf16)  # what the trainer runs (grpo_overrides may set it)
    args, precision["schedule"] = common.schedule_for_precision(
        args, requested, bf16=precision["bf16"], float32_iterations=FLOAT32_ITERATIONS
    )
    config = grpo_config(args, bf16=precision["bf16"])
    precision["grpo_steps"] = int(config.max_steps)
    model, tokenizer = load_policy(args.model)
    clock.since_start("load_s")
    warm, searched = common.search_and_warm_start(
        args, scorer, train_tasks, model, tokenizer, CHAT_PROMPT, config, clock
    )
    freeze_lower_layers(model, args.trainable_layers)

    baselines: Sequence[str] = (  # the settings', else every single worker and the best
        args.baselines
        if args.baselines is not None
        else (*(f"single:{i}" for i in range(scorer.pool.n)), "best-single")
    )
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
        chat_prompt=CHAT_PROMPT,
        warm_start=warm,
        plan_search=searched,
    )
