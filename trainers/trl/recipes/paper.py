"""The ``paper`` recipe: the Conductor paper's GRPO training (app. A) on GPUs.

::

    python -m conductor_gym.trainers.trl.train --recipe paper --model Qwen/Qwen2.5-7B-Instruct \\
        --tasks paper-train --pool paper-constrained --use-vllm --output-dir runs/paper

:func:`~.common.paper_config` maps the Conductor paper's training recipe onto TRL
1.16's ``GRPOConfig``:

=====================================  ===============================================
paper (app. A)                         ``GRPOConfig``
=====================================  ===============================================
64 rollouts per question               ``num_generations=64``
4 questions per iteration (batch 256)  ``generation_batch_size=256``; one optimizer step
                                       per generation batch (``gradient_accumulation_steps
                                       = 256 / (per_device_train_batch_size x processes)``)
200 iterations                         ``max_steps=200``
GRPO, group advantages                 ``loss_type="grpo"``, ``scale_rewards="group"``
no KL, no reference sync               ``beta=0.0`` (no reference model is built)
temperature 1.0, 1024 tokens           ``temperature=1.0``, ``max_completion_length=1024``
"eps 0.2"                              read as the clip range: ``epsilon=0.2``
AdamW beta1 0.9, beta2 0.999           ``adam_beta1=0.9``, ``adam_beta2=0.999``
lr 1e-6, cosine, warmup 0.03           ``learning_rate=1e-6``, ``lr_scheduler_type=
                                       "cosine"``, ``warmup_steps=0.03``
=====================================  ===============================================

transformers 5 removed ``warmup_ratio``; ``warmup_steps`` is a float, and a value below 1
is a fraction of the total steps (``TrainingArguments.get_warmup_steps``:
``ceil(0.03 * 200) = 6`` warm-up steps here). ``use_vllm=True`` generates with vLLM:
``vllm_mode="colocate"`` runs it inside the training processes (one GPU each, sharing
memory per ``vllm_gpu_memory_utilization``), ``vllm_mode="server"`` talks to a separate
``trl vllm-serve`` process (``vllm_server_base_url``); without it the trainer generates
with ``transformers``.

The policy sees the env's own conductor prompt; no held-out evaluation unless
``--eval-tasks`` asks for one (``docs/training-gpu.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from conductor_gym.core.config import EnvConfig

from ..plan_prior import PlanSearch
from ..settings import check_fields, setting
from ..warm_start import WarmStart
from . import common
from .common import TrainResult

__all__ = ["Args", "grpo_config", "resolve", "run"]


@dataclass
class Args:
    """The ``paper`` recipe's settings, each with its default and help (its flag is
    generated from it)."""

    recipe: ClassVar[str] = "paper"
    """The recipe's name (``--recipe``)."""
    on_gpu: ClassVar[bool] = True
    """Whether the recipe runs on a GPU (``--precision auto`` then keeps bf16)."""

    env: EnvConfig = setting(  # noqa: RUF009 (setting() is a dataclasses.field)
        default_factory=EnvConfig,
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
        None, help="training tasks, from --train-first (None: every task of the source)"
    )
    eval_tasks: int = setting(0, help="held-out greedy evaluation tasks (0: none)")
    eval_repeats: int = setting(4, help="worker draws per evaluation plan")
    rollout: bool = setting(False, help="use the rollout_func path even when single-turn")
    learning_rate: float | None = setting(None, help="GRPO learning rate (None: the recipe's)")
    num_generations: int | None = setting(None, help="completions per prompt (None: the recipe's)")
    temperature: float | None = setting(None, help="sampling temperature (None: the recipe's)")
    trainable_layers: int | None = setting(
        None, help="train only the top N blocks (None: all of them)"
    )
    threads: int | None = setting(None, help="torch CPU threads (None: torch's choice)")
    use_vllm: bool = setting(False, help="generate with vLLM (GPU)")
    vllm_mode: str = setting("colocate", help="vLLM mode", choices=("colocate", "server"))
    seed: int = setting(0, help="the run's seed (episodes, GRPO, the warm start, the search)")
    precision: str = setting(
        "auto",
        help="bf16 autocast or float32; auto measures both on a CPU recipe",
        choices=common.PRECISIONS,
    )
    warm_start: WarmStart | None = setting(  # noqa: RUF009 (setting() is a dataclasses.field)
        None,
        help="the warm start on plans drawn from the plan prior (cpu-orchestrate; "
        "the other recipes refuse it)",
        expose={"steps": ("--warm-start-steps", "warm-start steps (cpu-orchestrate)")},
    )
    plan_search: PlanSearch | None = setting(  # noqa: RUF009 (setting() is a dataclasses.field)
        None,
        help="the plan prior's search on training episodes (cpu-orchestrate; the other "
        "recipes refuse it)",
        expose={
            "iterations": (
                "--search-iterations",
                "plan-prior search rounds (cpu-orchestrate; 0: the uniform prior)",
            )
        },
    )
    train_first: int = setting(0, help="first training task")
    eval_first: int | None = setting(
        None, help="first held-out task (None: the source's last --eval-tasks)"
    )
    baselines: tuple[str, ...] | None = setting(
        None, help="comma-separated agent specs evaluated alike (None: the recipe's)"
    )
    save_checkpoint: bool = setting(
        False,
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
    """The settings the run uses (as given); raises ``ConfigurationError`` for a
    ``cpu-orchestrate`` stage."""
    common.refuse_stages(args)
    return args


def grpo_config(args: Args, *, bf16: bool | None = None) -> Any:
    """The run's ``GRPOConfig``: the paper's (:func:`~.common.paper_config`) with the
    settings' (``bf16`` ``None``: the paper's bf16)."""
    return common.paper_config_for(args, bf16=bf16)


def run(args: Args) -> TrainResult:
    """Train, and evaluate when asked (module docstring); the stages are :mod:`.common`'s."""
    from ..policy import freeze_lower_layers, load_policy

    args = resolve(args)
    clock = common.use_threads(args.threads)
    scorer = common.make_scorer(args)
    train_tasks, eval_tasks = common.split_tasks(args, scorer)
    dataset, labels = common.training_dataset(args, scorer, train_tasks)
    precision = common.choose_precision(args)
    config = grpo_config(args, bf16=precision["bf16"])
    precision["bf16"] = bool(config.bf16)  # what the trainer runs (grpo_overrides may set it)
    model, tokenizer = load_policy(args.model)
    clock.since_start("load_s")
    freeze_lower_layers(model, args.trainable_layers)

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
        baselines=args.baselines or (),
    )
