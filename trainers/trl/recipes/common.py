"""What the recipes share, as named parts: the settings every recipe's ``Args`` declares
(:class:`Args`, a protocol), the result a run returns (:class:`TrainResult`), the GRPO
configs (:func:`paper_config`, :func:`cpu_config`) and the stages of a GRPO run on the
env's episodes.

A recipe module (``paper``, ``paper_adapt``, ``cpu_demo``, ``cpu_orchestrate``,
``cpu_adapt``) declares its own ``Args`` dataclass in full and writes its ``run(args)``
from these stages, top to bottom: :func:`use_threads`, :func:`make_scorer`,
:func:`split_tasks`, :func:`training_dataset`, :func:`choose_precision`, the recipe's
``GRPOConfig``, the policy, (the warm-started recipes: :func:`search_and_warm_start`),
then :func:`train_and_evaluate`: :class:`HeldOut` (the greedy evaluation before
training), :func:`grpo_trainer`, ``trainer.train()``, :func:`evaluate_after` (after
training, beside the baseline agents) and :func:`save_checkpoint`. No recipe imports
another: what two recipes share is here. Heavy libraries (torch, transformers, TRL) are
imported by the stages that need them, never by importing this module.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol, TypeVar

from conductor_gym.core.config import EnvConfig
from conductor_gym.errors import ConfigurationError
from conductor_gym.pool.pool import make_pool
from conductor_gym.training.chat_prompt import ChatPrompt
from conductor_gym.training.scoring import EpisodeRef, Scorer

from ..data import HELD_OUT_SEED_OFFSET, PromptLabels, build_dataset, make_refs
from ..plan_prior import PlanSearch
from ..precision import choose_cpu_precision
from ..warm_start import WarmStart

__all__ = [
    "CPU_CHAT_SYSTEM",
    "CPU_RECIPE_POOL",
    "PAPER_GENERATION_BATCH",
    "PRECISIONS",
    "STAGES",
    "Args",
    "Clock",
    "HeldOut",
    "TrainResult",
    "build_pool",
    "choose_precision",
    "cpu_config",
    "cpu_config_for",
    "cpu_recipe_env",
    "episode_config",
    "episode_questions",
    "evaluate_after",
    "grpo_overrides",
    "grpo_trainer",
    "make_scorer",
    "multi_turn",
    "paper_config",
    "paper_config_for",
    "refuse_stages",
    "save_checkpoint",
    "save_policy",
    "schedule_for_precision",
    "search_and_warm_start",
    "seed_stages",
    "split_tasks",
    "train_and_evaluate",
    "training_dataset",
    "use_threads",
]

PRECISIONS = ("auto", "bf16", "fp32")
"""``--precision``: ``auto`` measures bf16 against float32 on a CPU recipe
(:mod:`~conductor_gym.trainers.trl.precision`) and keeps bf16 on a GPU."""

CPU_RECIPE_POOL = "sim-paper-v2"
"""The pool the CPU recipes (``cpu-demo``, ``cpu-orchestrate``) play by default: the
seven paper workers on simulator v2, the world ``docs/training-cpu.md``'s runs were
recorded on, kept until the recipes are retrained on v3 (``--pool sim-paper`` trains on
the current simulator)."""


def cpu_recipe_env() -> EnvConfig:
    """The CPU recipes' default env: the defaults, on :data:`CPU_RECIPE_POOL`."""
    return EnvConfig(pool=CPU_RECIPE_POOL)


CPU_CHAT_SYSTEM = (
    "You are a conductor. You answer a question by giving steps to the listed models. "
    "Reply with three Python lists: model_id (the model of each step), subtasks (what "
    'each step is asked) and access_list (the earlier steps each one sees: [] or "all").'
)
"""The system message of the warm-started recipes' own chat (``cpu-orchestrate``,
``cpu-adapt``): what a conductor does and the three lists it replies with."""

STAGES = ("warm_start", "plan_search")
"""The stages of the warm-started recipes (``cpu-orchestrate``, ``cpu-adapt``); the other
recipes refuse them."""


class Args(Protocol):
    """The settings every recipe's ``Args`` dataclass declares, in this order (the order
    ``results.json`` records them in): the fields the stages below read. Each recipe
    declares its own ``Args`` in full, every field with its default and help
    (:func:`~conductor_gym.trainers.trl.settings.setting`; its flag is generated from
    it), so that one recipe module reads top to bottom on its own; ``None`` means what
    the field's help says."""

    recipe: ClassVar[str]
    """The recipe's name (``--recipe``)."""
    on_gpu: ClassVar[bool]
    """Whether the recipe runs on a GPU (``--precision auto`` then keeps bf16)."""
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    env: EnvConfig
    workers: tuple[str, ...] | None
    model: str
    output_dir: str
    iterations: int | None
    train_tasks: int | None
    eval_tasks: int
    eval_repeats: int
    rollout: bool
    learning_rate: float | None
    num_generations: int | None
    temperature: float | None
    trainable_layers: int | None
    threads: int | None
    use_vllm: bool
    vllm_mode: str
    seed: int
    precision: str
    warm_start: WarmStart | None
    plan_search: PlanSearch | None
    train_first: int
    eval_first: int | None
    baselines: tuple[str, ...] | None
    save_checkpoint: bool
    grpo_overrides: dict[str, Any]


@dataclass
class TrainResult:
    """What a run produced: the trainer's log history, evaluations and timings."""

    settings: Args
    log_history: list[dict[str, Any]]
    before: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    improvement: tuple[float, float] | None = None
    paired: dict[str, Any] = field(default_factory=dict)
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
            "settings": {
                "recipe": self.settings.recipe,
                **settings,
                "env": self.settings.env.describe(),
            },
            "precision": self.precision,
            "before": self.before,
            "after": self.after,
            "improvement": None
            if self.improvement is None
            else {"mean": self.improvement[0], "se": self.improvement[1]},
            "paired": self.paired,
            "baselines": self.baselines,
            "versus_best_single": self.versus_best_single,
            "warm_start": self.warm_start,
            "plan_search": self.plan_search,
            "checkpoint": self.checkpoint,
            "timings": self.timings,
            "log_history": self.log_history,
        }


# -- settings --------------------------------------------------------------------------


def refuse_stages(args: Args) -> None:
    """Raise ``ConfigurationError`` naming the first stage of the warm-started recipes
    (``cpu-orchestrate``, ``cpu-adapt``) that ``args`` (another recipe's) sets."""
    for name in STAGES:
        if getattr(args, name) is not None:
            raise ConfigurationError(
                f"{name} belongs to the cpu-orchestrate and cpu-adapt recipes, not {args.recipe!r}",
                field=name,
            )


def build_pool(args: Args) -> Any:
    """The env's pool, or the named ``workers`` of it, in that order."""
    pool = args.env.pool
    if not args.workers:
        return pool
    specs = {s.name: s for s in make_pool(pool).specs}
    missing = [w for w in args.workers if w not in specs]
    if missing:
        raise ConfigurationError(
            f"{missing} not in pool {pool!r} ({sorted(specs)})", field="workers"
        )
    return [specs[w] for w in args.workers]


def episode_config(args: Args, *, max_recursions: int | None = None) -> EnvConfig:
    """The env config the run's episodes use (``workers`` applied)."""
    changes: dict[str, Any] = {"pool": build_pool(args)}
    if max_recursions is not None:
        changes["max_recursions"] = max_recursions
        if max_recursions == 0:
            changes.update(force_recursion=False, initial_round_weight=0.0)
    return args.env.replace(**changes)


def make_scorer(args: Args, *, max_recursions: int | None = None) -> Scorer:
    return Scorer(episode_config(args, max_recursions=max_recursions), seed=args.seed)


def multi_turn(args: Args) -> bool:
    """Whether the episodes are played by the rollout (recursion, or ``--rollout``)."""
    return args.rollout or args.env.max_recursions > 0


def choose_precision(args: Args) -> dict[str, Any]:
    """``{"bf16": bool, "source": ...}`` for the run: ``--precision bf16`` or ``fp32`` as
    given; ``auto`` keeps bf16 for a GPU recipe and for generation on a GPU
    (``--use-vllm``), and for a CPU recipe measures (the :class:`PrecisionChoice`'s
    fields are added)."""
    if args.precision not in PRECISIONS:
        raise ConfigurationError(
            f"must be one of {PRECISIONS}, got {args.precision!r}", field="precision"
        )
    if args.precision != "auto":
        return {"bf16": args.precision == "bf16", "source": "--precision"}
    if args.on_gpu or args.use_vllm:
        return {"bf16": True, "source": "recipe (GPU)"}
    return {**choose_cpu_precision().to_dict(), "source": "measured"}


def grpo_overrides(args: Args, *, bf16: bool | None = None) -> dict[str, Any]:
    """The ``GRPOConfig`` keywords the settings give (seed, ``bf16`` unless ``None``,
    learning rate, generations, temperature, ``max_steps``), ``grpo_overrides`` last."""
    overrides: dict[str, Any] = {"seed": args.seed}
    if bf16 is not None:
        overrides["bf16"] = bf16
    for name in ("learning_rate", "num_generations", "temperature"):
        if (value := getattr(args, name)) is not None:
            overrides[name] = value
    if args.iterations is not None:
        overrides["max_steps"] = args.iterations
    overrides.update(args.grpo_overrides)
    return overrides


# -- the GRPO configs ------------------------------------------------------------------


PAPER_GENERATION_BATCH = 256
"""The paper's generation batch: 64 rollouts for each of 4 questions per iteration."""


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
    """The paper's GRPO recipe (app. A) as a ``trl.GRPOConfig`` (the table in
    :mod:`~conductor_gym.trainers.trl.recipes.paper`'s docstring).

    ``num_processes`` (GPUs; the paper used two) and ``per_device_train_batch_size`` set
    ``gradient_accumulation_steps`` so that one optimizer step consumes one generation
    batch of 256 completions. ``overrides`` go to ``GRPOConfig`` last.
    """
    micro = per_device_train_batch_size * num_processes
    if PAPER_GENERATION_BATCH % micro:
        raise ConfigurationError(
            f"per_device_train_batch_size x num_processes ({micro}) must divide "
            f"{PAPER_GENERATION_BATCH}",
            field="per_device_train_batch_size",
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


def cpu_config(
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
    """The paper's GRPO algorithm at a CPU's scale, as a ``trl.GRPOConfig``: a recipe that
    shows learning on two CPU cores in minutes (``cpu-demo``, ``cpu-orchestrate`` and
    ``cpu-adapt`` start from it).

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
        raise ConfigurationError(
            f"micro_batch_size ({micro}) must divide num_generations x prompts_per_step ({batch})",
            field="micro_batch_size",
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


def paper_config_for(args: Args, *, bf16: bool | None = None) -> Any:
    """The run's ``GRPOConfig`` on the paper's recipe: :func:`paper_config` with the
    settings' (:func:`grpo_overrides`; ``bf16`` ``None``: the paper's bf16)."""
    return paper_config(
        args.output_dir,
        use_vllm=args.use_vllm,
        vllm_mode=args.vllm_mode,
        **grpo_overrides(args, bf16=bf16),
    )


def cpu_config_for(
    args: Args, *, bf16: bool | None = None, defaults: Mapping[str, Any] | None = None
) -> Any:
    """The run's ``GRPOConfig`` on a CPU recipe: :func:`cpu_config` with ``defaults`` (the
    recipe's values), then the settings' (:func:`grpo_overrides`; ``bf16`` ``None``: the
    recipe's), then vLLM generation on a GPU with ``--use-vllm``."""
    overrides = grpo_overrides(args, bf16=bf16)
    if args.use_vllm:
        overrides.update(use_vllm=True, vllm_mode=args.vllm_mode, use_cpu=False)
    return cpu_config(args.output_dir, **{**(defaults or {}), **overrides})


# -- the stages of a run -----------------------------------------------------------------


class Clock:
    """The run's timings (seconds), in the order they are taken."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.timings: dict[str, float] = {}

    def since_start(self, name: str) -> None:
        self.timings[name] = time.perf_counter() - self.start

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.timings[name] = time.perf_counter() - start


def use_threads(threads: int | None) -> Clock:
    """Limit the process to ``threads`` CPU threads (``OMP_NUM_THREADS`` unless set, before
    TRL and torch load; torch's intra-op threads), then start the run's clock."""
    if threads is not None:
        os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    importlib.import_module("trl")
    from ..policy import set_cpu_threads

    clock = Clock()
    set_cpu_threads(threads)
    return clock


def _eval_range(args: Args, n_tasks: int) -> range:
    """The held-out tasks: ``eval_tasks`` from ``eval_first`` (default: the source's last)."""
    if not args.eval_tasks:
        return range(0)
    first = n_tasks - args.eval_tasks if args.eval_first is None else args.eval_first
    if first < 0 or first + args.eval_tasks > n_tasks:
        raise ConfigurationError(
            f"{args.eval_tasks} evaluation tasks from {first} exceed the {n_tasks} tasks",
            field="eval_tasks",
        )
    return range(first, first + args.eval_tasks)


def split_tasks(args: Args, scorer: Scorer) -> tuple[range, range]:
    """The training tasks and the held-out ones; raises ``ConfigurationError`` naming the
    setting when they exceed the source or overlap (held-out means never trained on)."""
    n_tasks = len(scorer.tasks)
    first = args.train_first
    train = range(first, first + (args.train_tasks or n_tasks))
    held_out = _eval_range(args, n_tasks)
    if train.stop > n_tasks:
        raise ConfigurationError(
            f"training tasks {first}..{train.stop - 1} exceed the "
            f"{n_tasks} tasks of {args.env.tasks!r}",
            field="train_tasks",
        )
    if set(train) & set(held_out):
        raise ConfigurationError(
            f"training tasks {first}..{train.stop - 1} overlap the evaluation tasks "
            f"{held_out.start}..{held_out.stop - 1}: held-out means never trained on",
            field="train_first",
        )
    return train, held_out


def episode_questions(
    scorer: Scorer, refs: Sequence[EpisodeRef]
) -> tuple[list[str], list[tuple[str, ...]]]:
    """Each episode's question and the workers it draws (``info["pool"]``, in ``Model``
    order), as the env resets it: what a chat prompt shows for that episode."""
    env = scorer.make_env()
    try:
        infos = [scorer.reset(env, ref)[1] for ref in refs]
    finally:
        env.close()
    return [str(i["question"]) for i in infos], [tuple(i["pool"]) for i in infos]


def training_dataset(
    args: Args,
    scorer: Scorer,
    tasks: range,
    *,
    prefix: Sequence[dict[str, str]] = (),
    chat_prompt: ChatPrompt | None = None,
) -> tuple[Any, PromptLabels]:
    """The prompt dataset of the training tasks (one chat per episode) and its labels."""
    return build_dataset(
        scorer,
        make_refs(tasks, seed=args.seed),
        chat=True,
        prefix=prefix,
        chat_prompt=chat_prompt,
        unique_prompts=multi_turn(args),
    )


@dataclass
class HeldOut:
    """The held-out episodes, evaluated greedily before and after training."""

    scorer: Scorer
    refs: list[EpisodeRef]
    prompts: list[Any]
    repeats: int

    @classmethod
    def build(
        cls,
        args: Args,
        scorer: Scorer,
        tasks: range,
        *,
        prefix: Sequence[dict[str, str]] = (),
        chat_prompt: ChatPrompt | None = None,
    ) -> HeldOut | None:
        """The held-out episodes of ``tasks`` (``None`` when there are none), single-turn
        (a multi-turn run is evaluated on its first plan)."""
        if not tasks:
            return None
        eval_scorer = make_scorer(args, max_recursions=0) if multi_turn(args) else scorer
        refs = make_refs(tasks, seed=args.seed + HELD_OUT_SEED_OFFSET)
        rows, _ = build_dataset(
            eval_scorer,
            refs,
            chat=True,
            prefix=prefix,
            chat_prompt=chat_prompt,
            unique_prompts=False,
        )
        return cls(eval_scorer, refs, list(rows["prompt"]), args.eval_repeats or 1)

    def evaluate(self, model: Any, tokenizer: Any, config: Any) -> Any:
        """The policy's greedy evaluation (an ``EvalResult``) with the run's completion
        limit and precision."""
        from ..evaluate import greedy_eval

        return greedy_eval(
            model,
            tokenizer,
            self.scorer,
            self.refs,
            self.prompts,
            repeats=self.repeats,
            max_new_tokens=config.max_completion_length,
            bf16=bool(config.bf16),
        )


def grpo_trainer(
    args: Args,
    scorer: Scorer,
    labels: PromptLabels,
    model: Any,
    tokenizer: Any,
    config: Any,
    dataset: Any,
) -> tuple[Any, Any]:
    """TRL's ``GRPOTrainer`` rewarded by the env, and the multi-turn rollout it plays
    episodes with (``None`` for single-turn episodes, scored by the reward function)."""
    from ..reward import ConductorReward, rollout_reward
    from ..rollout import ConductorRollout

    rollout = ConductorRollout(scorer, labels) if multi_turn(args) else None
    reward: Any = rollout_reward if rollout is not None else ConductorReward(scorer)
    trainer = importlib.import_module("conductor_gym.trainers.trl.trainer").ConductorGRPOTrainer(
        model=model,
        reward_funcs=[reward],
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        rollout_func=rollout,
    )
    return trainer, rollout


# -- the warm-started recipes' stages (cpu-orchestrate, cpu-adapt) ------------------------

A = TypeVar("A", bound=Args)


def seed_stages(args: A) -> A:
    """``args`` with the plan search and the warm start seeded with the run's ``seed``
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


def schedule_for_precision(
    args: A, requested: Args, *, bf16: bool, float32_iterations: int
) -> tuple[A, str]:
    """The recipe's schedule for the precision the run computes in, and its name.

    Under bf16 autocast it is the recipe's (``"full"``). In float32, GRPO steps that
    ``requested`` (the settings as the user gave them) left unset become
    ``float32_iterations`` (``"float32"``), so that the run fits the hour where bf16 is
    emulated; steps the user set (``iterations``, or ``max_steps`` in
    ``grpo_overrides``) are kept (``"given"``)."""
    if bf16:
        return args, "full"
    if requested.iterations is not None or "max_steps" in requested.grpo_overrides:
        return args, "given"
    return dataclasses.replace(args, iterations=float32_iterations), "float32"


def search_and_warm_start(
    args: Args,
    scorer: Scorer,
    tasks: range,
    model: Any,
    tokenizer: Any,
    chat_prompt: ChatPrompt,
    config: Any,
    clock: Clock,
) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The plan prior's search on the training episodes of ``tasks``, then the warm start
    of ``model`` on plans drawn from it (each chat showing its episode's drawn workers,
    as GRPO's prompts do), saved to ``OUTPUT_DIR/warm_start`` with ``save_checkpoint``
    (what GRPO starts from, for ``confirm --versus``). Returns the warm start's and the
    search's records (``None, None`` when ``warm_start`` is ``None`` or has no steps)."""
    from ..plan_prior import search_prior
    from ..warm_start import warm_start

    if args.warm_start is None or not args.warm_start.steps:
        return None, None
    search = args.plan_search or PlanSearch(seed=args.seed)
    refs = make_refs(tasks, seed=args.seed)
    with clock.timed("plan_search_s"):
        # With iterations=0 the search returns the uniform prior and no history.
        prior, history = search_prior(scorer, refs, search)
    searched = {
        "settings": dataclasses.asdict(search),
        "history": history,
        "prior": prior.to_dict(),
    }
    questions, names = episode_questions(scorer, refs)
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
    if args.save_checkpoint:
        warm["checkpoint"] = save_policy(
            model,
            tokenizer,
            Path(args.output_dir) / "warm_start",
            chat_prompt,
            int(config.max_completion_length),
        )
    return warm, searched


def _paired_table(before: Any, after: Any, baselines: Mapping[str, Any]) -> dict[str, Any]:
    """Paired differences over the held-out tasks (mean and standard error): the
    policy's change in accuracy and reward from ``before`` to ``after``, and the trained
    policy minus each baseline."""
    from ..evaluate import paired_difference

    def both(first: Any, second: Any) -> dict[str, dict[str, float]]:
        return {
            metric: dict(
                zip(("mean", "se"), paired_difference(first, second, metric=metric), strict=True)
            )
            for metric in ("accuracy", "reward")
        }

    return {
        "change": both(before, after),
        "versus": {spec: both(ev, after) for spec, ev in baselines.items()},
    }


def evaluate_after(
    result: TrainResult,
    held_out: HeldOut,
    before: Any,
    after: Any,
    baselines: Sequence[str],
) -> None:
    """Record the evaluations before and after training, their paired change, the
    ``baselines`` agents on the same episodes and the gain over the best ``single:<id>``."""
    from ..evaluate import agent_eval, paired_difference, versus_best_single

    result.before, result.after = before.to_dict(), after.to_dict()
    result.improvement = paired_difference(before, after)
    result.evaluations = {"before": before, "after": after}
    played = {
        spec: agent_eval(held_out.scorer, held_out.refs, spec, repeats=held_out.repeats)
        for spec in baselines
    }
    result.baselines = {spec: ev.to_dict() for spec, ev in played.items()}
    result.paired = _paired_table(before, after, played)
    if (versus := versus_best_single(played, after)) is not None:
        best, mean, se = versus
        result.versus_best_single = {"agent": best, "accuracy_gain": mean, "se": se}


def train_and_evaluate(
    args: Args,
    scorer: Scorer,
    eval_tasks: range,
    model: Any,
    tokenizer: Any,
    config: Any,
    dataset: Any,
    labels: PromptLabels,
    clock: Clock,
    *,
    precision: dict[str, Any],
    baselines: Sequence[str],
    prefix: Sequence[dict[str, str]] = (),
    chat_prompt: ChatPrompt | None = None,
    warm_start: dict[str, Any] | None = None,
    plan_search: dict[str, Any] | None = None,
) -> TrainResult:
    """The stages every recipe ends with: the greedy held-out evaluation, GRPO, the
    evaluation again beside ``baselines``, the checkpoint (``args.save_checkpoint``) and
    the timings; ``prefix`` / ``chat_prompt`` are how the policy is asked."""
    held_out = HeldOut.build(args, scorer, eval_tasks, prefix=prefix, chat_prompt=chat_prompt)
    before = None
    if held_out is not None:
        before = held_out.evaluate(model, tokenizer, config)
        clock.timings["eval_before_s"] = before.wall_s

    trainer, rollout = grpo_trainer(args, scorer, labels, model, tokenizer, config, dataset)
    with clock.timed("train_s"):
        trainer.train()
    result = TrainResult(
        args,
        list(trainer.state.log_history),
        precision=precision,
        warm_start=warm_start,
        plan_search=plan_search,
        trainer=trainer,
    )

    if held_out is not None:
        after = held_out.evaluate(model, tokenizer, config)
        clock.timings["eval_after_s"] = after.wall_s
        evaluate_after(result, held_out, before, after, baselines)
    if args.save_checkpoint:
        result.checkpoint = save_checkpoint(
            trainer, tokenizer, args, chat_prompt, config.max_completion_length
        )
    clock.since_start("total_s")
    result.timings = clock.timings
    if rollout is not None:
        rollout.close()
    return result


def save_checkpoint(
    trainer: Any,
    tokenizer: Any,
    args: Args,
    chat_prompt: ChatPrompt | None,
    max_new_tokens: int | None = None,
) -> str:
    """Save the trained policy to ``<output_dir>/checkpoint`` (weights, tokenizer, the chat
    prompt it answers and, in ``generation_config.json``, the completion limit it was
    trained with, both of which ``policy:<path>`` reads); returns the folder."""
    return save_policy(
        trainer.model,
        tokenizer,
        Path(args.output_dir) / "checkpoint",
        chat_prompt,
        max_new_tokens,
        save=trainer.save_model,
    )


def save_policy(
    model: Any,
    tokenizer: Any,
    folder: Path,
    chat_prompt: ChatPrompt | None,
    max_new_tokens: int | None = None,
    *,
    save: Any = None,
) -> str:
    """Save ``model`` as a ``policy:<path>`` checkpoint in ``folder`` (as
    :func:`save_checkpoint` does; the warm-started recipes also save their warm start
    this way, so ``confirm --versus`` can pair GRPO's policy with it). ``save`` writes
    the weights (default: ``model.save_pretrained``); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    if max_new_tokens is not None:
        model.generation_config.max_new_tokens = max_new_tokens
    (save or model.save_pretrained)(str(folder))
    tokenizer.save_pretrained(str(folder))
    if chat_prompt is not None:
        chat_prompt.save(folder)
    return str(folder)
