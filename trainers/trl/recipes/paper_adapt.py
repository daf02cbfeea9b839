"""The ``paper-adapt`` recipe: the ``paper`` recipe on the paper's randomised pool, on GPUs.

::

    python -m conductor_gym.trainers.trl.train --recipe paper-adapt \\
        --model Qwen/Qwen2.5-7B-Instruct --use-vllm --output-dir runs/paper-adapt

The paper's "adaptive selection" fine-tuning (§3.2): every question is played by a
random ``k``-of-``n`` subset of the pool under shuffled ``Model`` ids, so the conductor
has to choose among whichever workers it is given. The paper gives no ``k``; this
recipe takes ``cpu-adapt``'s (:data:`K`, 4 of the seven ``sim-paper`` workers). The GRPO
settings and the stages of a run are the ``paper`` recipe's, unchanged
(:func:`~.common.paper_config`, the same :func:`run`); only the env differs
(:func:`adaptive_env`):

* ``pool="sim-paper"`` (simulator v3), ``k=4``, ``shuffle_workers=True``;
* the env's own conductor prompt (:data:`TEMPLATES`, the default templates) with the drawn
  workers named, ``Model 2: gpt-5``. The paper's prompt lists ids alone; under shuffled
  ids a ``Model i`` list carries no information about who ``Model i`` is, so a conductor
  trained on it can learn only the shapes of plans that pay on average, never whom to
  ask. Naming the workers makes the choice learnable, as ``cpu-adapt``'s chat does.

Any env flag still overrides these defaults (``--pool paper-constrained``, ``--k 3``,
``--no-shuffle-workers``, ``--templates '{...}'``, which replaces the templates as a
whole). A checkpoint trained here expects the named worker list: play it with the same
templates.

Status: not run on a GPU. The session that wrote this recipe had none, so neither the
smoke check (``python -m conductor_gym.trainers.trl.gpu_smoke --recipe paper-adapt``)
nor a full run has been made (``docs/training-gpu.md``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from conductor_gym.core.config import EnvConfig
from conductor_gym.core.prompts import DEFAULT_TEMPLATES, PromptTemplates

from ..plan_prior import PlanSearch
from ..settings import check_fields, setting
from ..warm_start import WarmStart
from . import common
from .common import TrainResult

__all__ = [
    "POOL",
    "TEMPLATES",
    "WORKER_LIST_ITEM",
    "Args",
    "K",
    "adaptive_env",
    "grpo_config",
    "resolve",
    "run",
]

K = 4
"""Workers drawn per episode (of seven): the paper gives no ``k``; ``cpu-adapt``'s 4
keeps each worker in 4 of 7 episodes, so the best one is often missing and choosing has
to adapt."""

POOL = "sim-paper"
"""The recipe's default pool: the paper's seven workers on the current simulator (v3)."""

WORKER_LIST_ITEM = "Model {id}: {name}"
"""One line of the conductor prompt's worker list: the drawn worker's id and name."""

TEMPLATES: PromptTemplates = dataclasses.replace(
    DEFAULT_TEMPLATES, worker_list_item=WORKER_LIST_ITEM
)
"""The env's default conductor prompt templates with the drawn workers named (every other
template, the few-shot examples included, unchanged)."""


def adaptive_env() -> EnvConfig:
    """The recipe's env: :data:`POOL`, ``k`` (:data:`K`) of its workers per
    episode under shuffled ids, listed by id and name (:data:`TEMPLATES`)."""
    return EnvConfig(pool=POOL, k=K, shuffle_workers=True, templates=TEMPLATES)


@dataclass
class Args:
    """The ``paper-adapt`` recipe's settings: the ``paper`` recipe's, on the randomised
    pool (:func:`adaptive_env`)."""

    recipe: ClassVar[str] = "paper-adapt"
    """The recipe's name (``--recipe``)."""
    on_gpu: ClassVar[bool] = True
    """Whether the recipe runs on a GPU (``--precision auto`` then keeps bf16)."""

    env: EnvConfig = setting(  # noqa: RUF009 (setting() is a dataclasses.field)
        default_factory=adaptive_env,
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
    """Train, and evaluate when asked, on the randomised pool (module docstring): the
    ``paper`` recipe's stages, :mod:`.common`'s."""
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
