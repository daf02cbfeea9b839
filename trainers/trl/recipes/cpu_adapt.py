"""The ``cpu-adapt`` recipe: a conductor that GRPO teaches to read its pool, on two CPU cores.

::

    python -m conductor_gym.trainers.trl.train --recipe cpu-adapt --output-dir runs/adapt

The paper's adaptive setting (§3.2) on simulator v3: every episode draws ``k = 4`` of the
seven ``sim-paper`` workers under shuffled ids, and the policy's chat
(:data:`CHAT_PROMPT`) names them (``Model 2: gpt-5``), so who a step asks has to be read
from the prompt: no fixed ``Model i`` is always the strong worker.

The stages are ``cpu-orchestrate``'s (:mod:`.common`'s, in the same order) with two
differences of purpose:

* **the warm start teaches the format only**: its plans come from the *uniform* prior
  over plan structures (``plan_search`` has ``iterations=0``: 1-3 steps, any listed
  worker, any role), shown with each training episode's drawn workers, so the policy
  leaves it writing parseable plans that know nothing of which worker or structure pays;
* **GRPO does the learning**: more rollouts per step than ``cpu-orchestrate``
  (:data:`GRPO`: 4 prompts x 8 completions), shorter completions and a larger learning
  rate, spent on the env's reward alone; the warm start is twice as long
  (:data:`WARM_START_STEPS`), so that GRPO's samples parse and its steps go to whom to
  ask and how, not to the format.

The held-out evaluation plays the same randomised pool (tasks 0-159, never trained on)
beside ``best-single`` (which reads ``info["pool"]``), the random planner and the best
fixed plans of 1, 2 and 3 calls that ``conductor-gym sim audit`` finds in this pool
(:data:`FIXED_PLANS`: the same plan, by ``Model`` position, for every question). The
cross-entropy search of ``cpu-orchestrate`` stays available as a baseline
(``--search-iterations 12``), never as this recipe's source of plans.

What its first full run showed (``docs/training-cpu.md``): GRPO raised the held-out
reward by 0.132 ± 0.022 and, on fresh tasks, accuracy by 0.114 ± 0.018 over its warm
start (0.051 ± 0.016 where the warm start's plan parsed), by repairing the plan format
and settling on one two-step plan for every question; it did not learn to read the
pool, and the run stays below ``best-single`` and the best fixed plans. Its float32 run
collapsed to one call. The settings are the ones the bf16 run used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
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
    "FIXED_PLANS",
    "FIXED_PLAN_DIR",
    "FLOAT32_ITERATIONS",
    "GRPO",
    "ITERATIONS",
    "WARM_START_STEPS",
    "Args",
    "K",
    "adaptive_env",
    "grpo_config",
    "resolve",
    "run",
]

K = 4
"""Workers drawn per episode (of seven): the paper gives no ``k``; 4 keeps each worker
in 4 of 7 episodes, so the best one is often missing and choosing has to adapt."""

CHAT_PROMPT = ChatPrompt(system=common.CPU_CHAT_SYSTEM, worker_item="Model {id}: {name}")
"""``cpu-orchestrate``'s chat (:data:`~.common.CPU_CHAT_SYSTEM`) with the drawn workers
named; saved with the checkpoint."""

ITERATIONS = 20
"""GRPO steps of a run that leaves them to the recipe (bf16 autocast). A first run with 60
took 130-195 s a step on this project's 2-core Xeon (32 completions of 90-130 tokens, a
test suite on the other core): 20 steps keep the run near the 90-minute budget."""

FLOAT32_ITERATIONS = 8
"""GRPO steps of a float32 run that leaves them to the recipe. On the AVX2 stand-in
(``docs/training-cpu.md``) the warm start took 1.75x the bf16 run's time and a GRPO step
179 s against 158 s; the whole run took 72 minutes."""

WARM_START_STEPS = 64
"""Warm-start steps: after 32 (``cpu-orchestrate``'s), 50-78 % of the plans sampled at
temperature 1.0 in the first GRPO steps failed to parse, and GRPO spent its first ten
steps on the format (6-16 % by steps 9-11) instead of on whom to ask."""

GRPO: dict[str, Any] = {
    "max_steps": ITERATIONS,
    "num_generations": 8,
    "prompts_per_step": 4,
    "micro_batch_size": 8,
    "learning_rate": 5e-5,
    "temperature": 0.7,
    "max_completion_length": 160,
}
"""The recipe's :func:`~.common.cpu_config` values (the settings' own win).
Sampling at 0.7, not 1.0: at 1.0 a fifth of the plans GRPO sampled failed to parse or
were cut, and the format penalty drove the policy to one-step plans."""


FIXED_PLAN_DIR = Path(__file__).with_name("fixed_plans")
"""The audit's best fixed plans in this recipe's pool, written by::

    conductor-gym sim audit --pool sim-paper --k 4 --shuffle-workers --episodes 60000 \\
        --save-plans trainers/trl/recipes/fixed_plans

(``tests/trainers/test_fixed_plans.py`` re-runs it and compares)."""

FIXED_PLANS: tuple[str, ...] = tuple(
    f"plan:{FIXED_PLAN_DIR / f'calls-{n}.plan'}" for n in (1, 2, 3)
)
"""The best fixed plans of 1, 2 and 3 calls (the policy writes 1-3 steps): baselines at
the policy's numbers of calls."""


def adaptive_env() -> EnvConfig:
    """The recipe's env: ``sim-paper`` (simulator v3), ``k`` of its seven workers per
    episode under shuffled ids."""
    return EnvConfig(pool="sim-paper", k=K, shuffle_workers=True)


@dataclass
class Args:
    """The ``cpu-adapt`` recipe's settings, each with its default and help (its flag is
    generated from it); the warm start and the (uniform) prior take the run's ``seed``."""

    recipe: ClassVar[str] = "cpu-adapt"
    """The recipe's name (``--recipe``)."""
    on_gpu: ClassVar[bool] = False
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
        1792, help="training tasks, from --train-first (None: every task of the source)"
    )
    eval_tasks: int = setting(160, help="held-out greedy evaluation tasks (0: none)")
    eval_repeats: int = setting(8, help="worker draws per evaluation plan")
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
        default_factory=lambda: WarmStart(steps=WARM_START_STEPS),
        help="the warm start on plans drawn from the plan prior (cpu-orchestrate; "
        "the other recipes refuse it)",
        expose={"steps": ("--warm-start-steps", "warm-start steps (cpu-orchestrate)")},
    )
    plan_search: PlanSearch | None = setting(  # noqa: RUF009 (setting() is a dataclasses.field)
        default_factory=lambda: PlanSearch(iterations=0),
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
    """The settings the run uses: the warm start and the (uniform) prior seeded with
    ``seed`` (``warm_start=None``: neither runs)."""
    return common.seed_stages(args)


def grpo_config(args: Args, *, bf16: bool | None = None) -> Any:
    """The run's ``GRPOConfig``: :func:`~.common.cpu_config` with :data:`GRPO`."""
    return common.cpu_config_for(args, bf16=bf16, defaults=GRPO)


def run(args: Args) -> TrainResult:
    """Warm-start on the format, train with GRPO and evaluate (module docstring); the
    stages are :mod:`.common`'s."""
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
    # the warm start's plans come from the uniform prior: it teaches the format only
    warm, searched = common.search_and_warm_start(
        args, scorer, train_tasks, model, tokenizer, CHAT_PROMPT, config, clock
    )
    freeze_lower_layers(model, args.trainable_layers)

    baselines: Sequence[str] = (  # the settings', else best-single, random, fixed plans
        args.baselines if args.baselines is not None else ("best-single", "random", *FIXED_PLANS)
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
