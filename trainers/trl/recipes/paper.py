"""The ``paper`` recipe: the Conductor paper's GRPO training (app. A) on GPUs.

::

    python -m conductor_gym.trainers.trl.train --recipe paper --model Qwen/Qwen2.5-7B-Instruct \\
        --tasks paper-train --pool paper-constrained --use-vllm --output-dir runs/paper

:func:`paper_config` maps the Conductor paper's training recipe onto TRL 1.16's
``GRPOConfig``:

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

import importlib
from dataclasses import dataclass
from typing import Any, ClassVar

from . import common
from .common import TrainResult

__all__ = ["PAPER_GENERATION_BATCH", "Args", "grpo_config", "paper_config", "resolve", "run"]

PAPER_GENERATION_BATCH = 256


def paper_config(
    output_dir: str,
    *,
    num_processes: int = 2,
    per_device_train_batch_size: int = 8,
    max_steps: int = 200,
    use_vllm: bool = False,
    vllm_mode: str = "colocate",
    **overrides: Any,
) -> Any:
    """The paper's GRPO recipe as a ``trl.GRPOConfig`` (module docstring).

    ``num_processes`` (GPUs; the paper used two) and ``per_device_train_batch_size`` set
    ``gradient_accumulation_steps`` so that one optimizer step consumes one generation
    batch of 256 completions. ``overrides`` go to ``GRPOConfig`` last.
    """
    micro = per_device_train_batch_size * num_processes
    if PAPER_GENERATION_BATCH % micro:
        raise ValueError(
            f"per_device_train_batch_size x num_processes ({micro}) must divide "
            f"{PAPER_GENERATION_BATCH}"
        )
    settings: dict[str, Any] = {
        "output_dir": output_dir,
        "num_generations": 64,
        "generation_batch_size": PAPER_GENERATION_BATCH,
        "per_device_train_batch_size": per_device_train_batch_size,
        "gradient_accumulation_steps": PAPER_GENERATION_BATCH // micro,
        "max_steps": max_steps,
        "num_iterations": 1,
        "beta": 0.0,
        "loss_type": "grpo",
        "scale_rewards": "group",
        "epsilon": 0.2,
        "learning_rate": 1e-6,
        "lr_scheduler_type": "cosine",
        "warmup_steps": 0.03,
        "adam_beta1": 0.9,
        "adam_beta2": 0.999,
        "temperature": 1.0,
        "top_p": 1.0,
        "max_completion_length": 1024,
        "use_vllm": use_vllm,
        "vllm_mode": vllm_mode,
        "bf16": True,
        "gradient_checkpointing": True,
        "logging_steps": 1,
        "save_strategy": "steps",
        "save_steps": 50,
        "report_to": "none",
    }
    settings.update(overrides)
    return importlib.import_module("trl").GRPOConfig(**settings)


@dataclass
class Args(common.Args):
    """The ``paper`` recipe's settings: :class:`common.Args` with its defaults."""

    recipe: ClassVar[str] = "paper"
    on_gpu: ClassVar[bool] = True


def resolve(args: Args) -> Args:
    """The settings the run uses (as given); raises ``ConfigurationError`` for a
    ``cpu-orchestrate`` stage."""
    common.refuse_stages(args)
    return args


def grpo_config(args: common.Args, *, bf16: bool | None = None) -> Any:
    """The run's ``GRPOConfig``: :func:`paper_config` with the settings'
    (:func:`common.grpo_overrides`; ``bf16`` ``None``: the paper's bf16)."""
    return paper_config(
        args.output_dir,
        use_vllm=args.use_vllm,
        vllm_mode=args.vllm_mode,
        **common.grpo_overrides(args, bf16=bf16),
    )


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
