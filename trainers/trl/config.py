"""GRPO settings: the paper's recipe (app. A) and a CPU demonstration recipe.

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

:func:`cpu_demo_config` is the small, fast recipe of ``docs/training-cpu.md``: what it
changes from the paper is listed there and in its docstring.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any

from conductor_gym.core.chat_prompt import ChatPrompt
from conductor_gym.core.prompts import PromptTemplates

from .plan_prior import PlanSearch
from .precision import choose_cpu_precision
from .warm_start import WarmStart

__all__ = [
    "DEMO_PREFIX",
    "DEMO_TEMPLATES",
    "DEMO_WORKERS",
    "ORCHESTRATE",
    "ORCHESTRATE_PROMPT",
    "PAPER_GENERATION_BATCH",
    "Orchestrate",
    "cpu_demo_config",
    "paper_config",
]

PAPER_GENERATION_BATCH = 256


def _config(**settings: Any) -> Any:
    return importlib.import_module("trl").GRPOConfig(**settings)


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
    return _config(**settings)


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
    return _config(**settings)


# -- the CPU demo's episode set-up -------------------------------------------------------

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


# -- the cpu-orchestrate recipe -----------------------------------------------------------

ORCHESTRATE_PROMPT = ChatPrompt(
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


@dataclass(frozen=True)
class Orchestrate:
    """The ``cpu-orchestrate`` recipe's settings (``docs/training-cpu.md``): the plan
    prior's cross-entropy search on the training episodes (``search``), the warm start on
    plans drawn from the fitted prior, then GRPO (``cpu_demo_config`` with these values) on
    the default env (all seven ``sim-paper`` workers, fixed order), training on offline
    tasks ``train_first ..`` and evaluating on tasks ``0 .. eval_tasks - 1`` (the board's
    ``offline-160`` suite), never trained on."""

    search: PlanSearch = field(default_factory=PlanSearch)
    warm_start: WarmStart = field(default_factory=WarmStart)
    iterations: int = 20
    num_generations: int = 8
    prompts_per_step: int = 2
    micro_batch_size: int = 4
    learning_rate: float = 1e-5
    temperature: float = 1.0
    max_completion_length: int = 256
    trainable_layers: int = 4
    train_first: int = 160
    train_tasks: int = 1792
    eval_tasks: int = 160
    eval_repeats: int = 3
    float32_iterations: int = 6
    """GRPO steps of a run that computes in float32 (a CPU without native bf16, or
    ``--precision fp32``) when the user left them to the recipe. Float32 runs the warm
    start about 2.2x slower than bf16; with 20 steps the run would take about 52 min on
    our AVX2 stand-in and over an hour on a real AVX2-only CPU (``docs/training-cpu.md``)."""


ORCHESTRATE = Orchestrate()
