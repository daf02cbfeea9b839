"""The ``cpu-demo`` recipe: one-step routing among three workers on two CPU cores.

::

    python -m conductor_gym.trainers.trl.train --recipe cpu-demo --output-dir runs/cpu-demo

The policy (SmolLM2-135M-Instruct) sees a short conductor prompt (:data:`DEMO_TEMPLATES`)
after a system message and two worked examples as earlier chat turns
(:data:`DEMO_PREFIX`), with three paper workers in a fixed order
(:data:`DEMO_WORKERS`) of :data:`~.common.CPU_RECIPE_POOL` (simulator v2, where the
documented runs were recorded; ``--pool sim-paper`` for v3): it learns whom to ask.
GRPO runs with :func:`~.common.cpu_config` (the paper's algorithm at a CPU's scale;
``docs/training-cpu.md`` lists what it changes), on the top four blocks, and the policy
is evaluated greedily on 48 held-out tasks (the source's last) before and after training.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from conductor_gym.core.config import EnvConfig
from conductor_gym.core.prompts import PromptTemplates

from ..plan_prior import PlanSearch
from ..settings import check_fields, setting
from ..warm_start import WarmStart
from . import common
from .common import TrainResult

__all__ = [
    "DEMO_PREFIX",
    "DEMO_TEMPLATES",
    "DEMO_WORKERS",
    "Args",
    "grpo_config",
    "resolve",
    "run",
]

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
class Args:
    """The ``cpu-demo`` recipe's settings, each with its default and help (its flag is
    generated from it)."""

    recipe: ClassVar[str] = "cpu-demo"
    """The recipe's name (``--recipe``)."""
    on_gpu: ClassVar[bool] = False
    """Whether the recipe runs on a GPU (``--precision auto`` then keeps bf16)."""

    env: EnvConfig = setting(  # noqa: RUF009 (setting() is a dataclasses.field)
        default_factory=common.cpu_recipe_env,
        help="every episode setting (EnvConfig: tasks, pool, k, reward, plan length, "
        "recursion, templates, cache, ...); its flags are EnvConfig's",
    )
    workers: tuple[str, ...] | None = setting(
        DEMO_WORKERS, help="comma-separated worker names of --pool, in order (None: the whole pool)"
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
        64, help="training tasks, from --train-first (None: every task of the source)"
    )
    eval_tasks: int = setting(48, help="held-out greedy evaluation tasks (0: none)")
    eval_repeats: int = setting(4, help="worker draws per evaluation plan")
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
    """The settings the run uses: the env's templates, or :data:`DEMO_TEMPLATES` where it
    sets none. Raises ``ConfigurationError`` for a ``cpu-orchestrate`` stage."""
    common.refuse_stages(args)
    if args.env.templates is not None:
        return args
    return dataclasses.replace(args, env=args.env.replace(templates=DEMO_TEMPLATES))


def grpo_config(args: Args, *, bf16: bool | None = None) -> Any:
    """The run's ``GRPOConfig``: :func:`~.common.cpu_config` with the settings' (``bf16``
    ``None``: measured on this CPU)."""
    return common.cpu_config_for(args, bf16=bf16)


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
