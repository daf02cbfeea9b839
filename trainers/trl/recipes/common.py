"""What every recipe shares: the settings they all take (:class:`Args`), the result a run
returns (:class:`TrainResult`) and the stages of a GRPO run on the env's episodes.

A recipe module (``paper``, ``cpu_demo``, ``cpu_orchestrate``) extends :class:`Args`
with its own defaults and writes its ``run(args)`` from these stages, top to bottom:
:func:`use_threads`, :func:`make_scorer`, :func:`split_tasks`, :func:`training_dataset`,
:func:`choose_precision`, the recipe's ``GRPOConfig``, the policy, :class:`HeldOut`
(the greedy evaluation before training), :func:`grpo_trainer`, ``trainer.train()``,
:func:`evaluate_after` (after training, beside the baseline agents) and
:func:`save_checkpoint`. Heavy libraries (torch, transformers, TRL) are imported by the
stages that need them, never by importing this module.
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
from typing import Any, ClassVar

from conductor_gym.core.config import EnvConfig
from conductor_gym.errors import ConfigurationError
from conductor_gym.pool.pool import make_pool
from conductor_gym.training.chat_prompt import ChatPrompt
from conductor_gym.training.scoring import EpisodeRef, Scorer

from ..data import HELD_OUT_SEED_OFFSET, PromptLabels, build_dataset, make_refs
from ..plan_prior import PlanSearch
from ..precision import choose_cpu_precision
from ..settings import check_fields, setting
from ..warm_start import WarmStart

__all__ = [
    "CPU_RECIPE_POOL",
    "PRECISIONS",
    "Args",
    "Clock",
    "HeldOut",
    "TrainResult",
    "build_pool",
    "choose_precision",
    "cpu_recipe_env",
    "episode_config",
    "episode_questions",
    "evaluate_after",
    "grpo_overrides",
    "grpo_trainer",
    "make_scorer",
    "refuse_stages",
    "save_checkpoint",
    "save_policy",
    "split_tasks",
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


STAGES = ("warm_start", "plan_search")
"""The stages of the warm-started recipes (``cpu-orchestrate``, ``cpu-adapt``); the other
recipes refuse them."""


@dataclass
class Args:
    """The settings every recipe takes, each declared once (its flag is generated from
    it: :mod:`~conductor_gym.trainers.trl.settings`). A recipe's ``Args`` extends this
    class and changes defaults only; ``None`` means what the field's help says."""

    recipe: ClassVar[str] = ""
    """The recipe's name (``--recipe``)."""
    on_gpu: ClassVar[bool] = False
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
        choices=PRECISIONS,
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
        raise ValueError(f"precision must be one of {PRECISIONS}, got {args.precision!r}")
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
        raise ValueError(
            f"{args.eval_tasks} evaluation tasks from {first} exceed the {n_tasks} tasks"
        )
    return range(first, first + args.eval_tasks)


def split_tasks(args: Args, scorer: Scorer) -> tuple[range, range]:
    """The training tasks and the held-out ones; raises ``ValueError`` when they exceed
    the source or overlap (held-out means never trained on)."""
    n_tasks = len(scorer.tasks)
    first = args.train_first
    train = range(first, first + (args.train_tasks or n_tasks))
    held_out = _eval_range(args, n_tasks)
    if train.stop > n_tasks:
        raise ValueError(
            f"training tasks {first}..{train.stop - 1} exceed the "
            f"{n_tasks} tasks of {args.env.tasks!r}"
        )
    if set(train) & set(held_out):
        raise ValueError(
            f"training tasks {first}..{train.stop - 1} overlap the evaluation tasks "
            f"{held_out.start}..{held_out.stop - 1}: held-out means never trained on"
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
    trainer = importlib.import_module("trl").GRPOTrainer(
        model=model,
        reward_funcs=[reward],
        args=config,
        train_dataset=dataset,
        processing_class=tokenizer,
        rollout_func=rollout,
    )
    return trainer, rollout


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
