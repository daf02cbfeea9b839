"""The ``cpu-demo`` recipe: one-step routing among three workers on two CPU cores.

::

    python -m conductor_gym.trainers.trl.train --recipe cpu-demo --output-dir runs/cpu-demo

The policy (SmolLM2-135M-Instruct) sees a short conductor prompt (:data:`DEMO_TEMPLATES`)
after a system message and two worked examples as earlier chat turns
(:data:`DEMO_PREFIX`), with three paper workers in a fixed order
(:data:`DEMO_WORKERS`) of :data:`~.common.CPU_RECIPE_POOL` (simulator v2, where the
documented runs were recorded; ``--pool sim-paper`` for v3): it learns whom to ask.
GRPO runs with :func:`cpu_demo_config` (the paper's algorithm at a CPU's scale;
``docs/training-cpu.md`` lists what it changes), on the top four blocks, and the policy
is evaluated greedily on 48 held-out tasks (the source's last) before and after training.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from conductor_gym.core.config import EnvConfig
from conductor_gym.core.prompts import PromptTemplates

from ..precision import choose_cpu_precision
from . import common
from .common import TrainResult

__all__ = [
    "DEMO_PREFIX",
    "DEMO_TEMPLATES",
    "DEMO_WORKERS",
    "Args",
    "cpu_demo_config",
    "grpo_config",
    "resolve",
    "run",
]


def cpu_demo_config(
    output_dir: str,
    *,
    max_steps: int = 16,
    num_generations: int = 8,
    prompts_per_step: int = 2,
    learning_rate: float = 2e-4,
    temperature: float = 0.7,
    max_completion_length: int = 32,
    micro_batch_size: int | None = None,
    bf16: bool | None = None,
    **overrides: Any,
) -> Any:
    """A GRPO recipe that shows learning on two CPU cores in minutes.

    Same algorithm as :func:`paper_config` (``loss_type="grpo"``, group-scaled
    advantages, ``beta=0``, clip 0.2, AdamW 0.9/0.999, one optimizer step per
    generation batch), at a much smaller scale: ``num_generations`` completions for each
    of ``prompts_per_step`` prompts per step (paper: 64 x 4), ``max_steps`` steps
    (paper: 200), a constant learning rate far above the paper's 1e-6 (a few steps
    must move the policy), sampling temperature 0.7 (at 1.0 SmolLM2-135M almost never
    samples a parseable plan, so a group has no signal), ``max_completion_length`` 48
    (a one-step plan is about 30 tokens; paper: 1024), no gradient checkpointing.
    ``micro_batch_size`` (default: one group) splits each step's completions into
    chunks whose gradients are accumulated: the same step in less memory.

    ``bf16``: train under bf16 autocast (float32 master weights) or in float32; ``None``
    (default) measures which is faster on this CPU
    (:func:`~conductor_gym.trainers.trl.precision.choose_cpu_precision`), or takes bf16
    when ``use_cpu=False`` is among the overrides (a GPU).
    """
    if bf16 is None:
        bf16 = overrides.get("use_cpu") is False or choose_cpu_precision().bf16
    batch = num_generations * prompts_per_step
    micro = micro_batch_size or num_generations
    if batch % micro:
        raise ValueError(
            f"micro_batch_size ({micro}) must divide num_generations x prompts_per_step ({batch})"
        )
    settings: dict[str, Any] = {
        "output_dir": output_dir,
        "num_generations": num_generations,
        "generation_batch_size": batch,
        "per_device_train_batch_size": micro,
        "gradient_accumulation_steps": batch // micro,
        "max_steps": max_steps,
        "num_iterations": 1,
        "beta": 0.0,
        "loss_type": "grpo",
        "scale_rewards": "group",
        "epsilon": 0.2,
        "learning_rate": learning_rate,
        "lr_scheduler_type": "constant",
        "warmup_steps": 0,
        "adam_beta1": 0.9,
        "adam_beta2": 0.999,
        "temperature": temperature,
        "top_p": 1.0,
        "max_completion_length": max_completion_length,
        "use_vllm": False,
        "use_cpu": True,
        "bf16": bf16,
        "gradient_checkpointing": False,
        "logging_steps": 1,
        "save_strategy": "no",
        "report_to": "none",
        "dataloader_num_workers": 0,
        "seed": 0,
    }
    settings.update(overrides)
    return importlib.import_module("trl").GRPOConfig(**settings)


# -- the episodes' set-up ---------------------------------------------------------------

DEMO_WORKERS = ("gemini-2.5-pro", "gpt-5", "gemma-3-27b-it")
"""Three workers of ``sim-paper``, in the paper's order (its workers 0, 2 and 4): one
strong, one good, one weak, so that routing matters. Fixed order, no ``k``-of-``n`` draw
and no id shuffling: ``Model i`` is always the same worker, so a policy can learn whom
to ask."""

DEMO_TEMPLATES = PromptTemplates(
    conductor="Question: {question}\n\nModels:\n{worker_list}",
    examples=(),
)
"""A short conductor prompt (the question and the worker list) instead of the default
prompt with its rules and four worked examples (about 1,450 tokens): on a CPU every
prompt token is paid for in every completion."""

_EXAMPLE_PLAN = 'model_id = [{model}]\nsubtasks = ["Answer the question."]\naccess_list = [[]]'

DEMO_PREFIX: tuple[dict[str, str], ...] = (
    {
        "role": "system",
        "content": (
            "You are a conductor: you give each question to one of the listed models. "
            "Reply with three Python lists."
        ),
    },
    {"role": "user", "content": "Question: What is 2 + 3?\n\nModels:\nModel 0\nModel 1\nModel 2"},
    {"role": "assistant", "content": _EXAMPLE_PLAN.format(model=0)},
    {
        "role": "user",
        "content": (
            "Question: Which planet is the largest? A) Mars B) Jupiter\n\n"
            "Models:\nModel 0\nModel 1\nModel 2"
        ),
    },
    {"role": "assistant", "content": _EXAMPLE_PLAN.format(model=1)},
)
"""Chat turns before the observation: a system message and two worked examples, as
earlier turns of the conversation (SmolLM2-135M-Instruct follows the format from chat
turns far more often than from examples inside one long user message)."""


@dataclass
class Args(common.Args):
    """The ``cpu-demo`` recipe's settings: :class:`common.Args` with these defaults."""

    recipe: ClassVar[str] = "cpu-demo"

    env: EnvConfig = dataclasses.field(default_factory=common.cpu_recipe_env)
    workers: tuple[str, ...] | None = DEMO_WORKERS
    train_tasks: int | None = 64
    eval_tasks: int = 48
    eval_repeats: int = 4
    trainable_layers: int | None = 4
    threads: int | None = 1


def resolve(args: Args) -> Args:
    """The settings the run uses: the env's templates, or :data:`DEMO_TEMPLATES` where it
    sets none. Raises ``ConfigurationError`` for a ``cpu-orchestrate`` stage."""
    common.refuse_stages(args)
    if args.env.templates is not None:
        return args
    return dataclasses.replace(args, env=args.env.replace(templates=DEMO_TEMPLATES))


def grpo_config(
    args: common.Args, *, bf16: bool | None = None, defaults: Mapping[str, Any] | None = None
) -> Any:
    """The run's ``GRPOConfig``: :func:`cpu_demo_config` with ``defaults`` (a recipe's
    values), then the settings' (:func:`common.grpo_overrides`; ``bf16`` ``None``: the
    recipe's), then vLLM generation on a GPU with ``--use-vllm``."""
    overrides = common.grpo_overrides(args, bf16=bf16)
    if args.use_vllm:
        overrides.update(use_vllm=True, vllm_mode=args.vllm_mode, use_cpu=False)
    return cpu_demo_config(args.output_dir, **{**(defaults or {}), **overrides})


def run(args: Args) -> TrainResult:
    """Train and evaluate (module docstring); the stages are :mod:`.common`'s."""
    from ..policy import freeze_lower_layers, load_policy

    args = resolve(args)
    clock = common.use_threads(args.threads)
    scorer = common.make_scorer(args)
    train_tasks, eval_tasks = common.split_tasks(args, scorer)
    dataset, labels = common.training_dataset(args, scorer, train_tasks, prefix=DEMO_PREFIX)
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
        prefix=DEMO_PREFIX,
    )
