"""Confirm a trained conductor on fresh offline tasks, beside the baselines.

The ``offline`` suite is the first 2000 tasks of a procedural sequence in which task
``i`` is the same whatever the sequence's length (:class:`~conductor_gym.tasks.procedural.
ProceduralTasks`). Tasks from 2000 on are therefore in no training set, no plan search
and no evaluation that guided a choice of recipe: they are the test a result chosen on
``offline-160`` has not seen. :func:`confirm` plays a checkpoint's greedy plans on such
tasks with ``repeats`` worker draws each, in the env of the recipe that trained it
(``recipe``: ``cpu-orchestrate``'s fixed pool, or ``cpu-adapt``'s randomised one), plays
the baselines on the same episodes (every ``single:<id>`` and ``best-single``, and any
``agents`` given, such as the audit's best fixed plan ``plan:<path>``), and reports the
paired accuracy difference to the best single worker (the best ``single:<id>`` where ids
are fixed; ``best-single`` where they are shuffled, since a shuffled ``Model i`` is no
one worker), with its standard error over tasks.

``versus`` (``--versus``) names a second checkpoint, such as the run's warm start
(``OUTPUT_DIR/warm_start``): it writes its greedy plans for the same episodes, from the
same prompts, and the result holds the paired change from it to ``checkpoint`` (what
GRPO changed, on tasks no run has seen), also on the tasks where its plan parsed.

Command line (the figures in ``docs/training-cpu.md``)::

    python -m conductor_gym.trainers.trl.confirm runs/orchestrate/checkpoint \\
        --first 2000 --tasks 800
    python -m conductor_gym.trainers.trl.confirm runs/adapt/checkpoint --recipe cpu-adapt \\
        --agent plan:trainers/trl/recipes/fixed_plans/calls-3.plan \\
        --versus runs/adapt/warm_start
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from conductor_gym.tasks import make_task_source
from conductor_gym.training.chat_prompt import ChatPrompt
from conductor_gym.training.scoring import Scorer

from .data import HELD_OUT_SEED_OFFSET, build_dataset, make_refs
from .recipes import cpu_orchestrate
from .recipes.common import Args

if TYPE_CHECKING:
    from .evaluate import EvalResult

__all__ = ["SUITE_SIZE", "Confirmation", "confirm", "main"]

SUITE_SIZE = len(make_task_source("offline"))
"""Tasks in the ``offline`` suite (2000); fresh tasks start here."""


@dataclass(frozen=True)
class Confirmation:
    """What :func:`confirm` measured.

    Attributes:
        first, tasks, repeats: The tasks ``first .. first + tasks - 1``, each played with
            ``repeats`` worker draws.
        duplicates: Fresh tasks whose question is also a training task's (the recipe's
            ``train_first .. train_first + train_tasks - 1``).
        policy: The checkpoint's evaluation (``EvalResult.to_dict``).
        baselines: Each baseline's evaluation on the same episodes.
        best_single: The reference: the ``single:<id>`` of highest accuracy on these
            tasks, or ``best-single`` in a pool with shuffled ids.
        accuracy_gain, se: The paired accuracy difference, policy minus ``best_single``,
            and its standard error over tasks.
        bf16: Whether the plans were generated under bf16 autocast.
        recipe: The recipe whose env the episodes ran in.
        versus: The ``versus`` checkpoint's evaluation, when one was given.
        change: The paired change from ``versus`` to the policy (``accuracy``,
            ``reward``, and ``accuracy_where_parsed`` on the tasks whose ``versus`` plan
            parsed, with their count ``n``): ``{"mean", "se"}`` each.
    """

    first: int
    tasks: int
    repeats: int
    duplicates: int
    policy: dict[str, Any]
    baselines: dict[str, dict[str, Any]]
    best_single: str
    accuracy_gain: float
    se: float
    bf16: bool
    recipe: str = "cpu-orchestrate"
    versus: dict[str, Any] | None = None
    change: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def summary(self) -> str:
        """A few lines for the terminal."""
        lines = [
            f"fresh offline tasks {self.first}..{self.first + self.tasks - 1} x {self.repeats} "
            f"worker draws ({self.duplicates} share a training task's question), "
            f"{self.recipe}'s env",
            f"policy      accuracy {self.policy['accuracy']:.3f} +- "
            f"{self.policy['accuracy_se']:.3f}, reward {self.policy['mean_reward']:.3f}, "
            f"valid {self.policy['valid_rate']:.2f}, steps {self.policy['steps']:.2f}",
        ]
        lines += [
            f"{spec:11s} accuracy {ev['accuracy']:.3f} +- {ev['accuracy_se']:.3f}, "
            f"reward {ev['mean_reward']:.3f}"
            for spec, ev in self.baselines.items()
        ]
        lines.append(
            f"accuracy vs the reference ({self.best_single}): "
            f"{self.accuracy_gain:+.3f} +- {self.se:.3f} (paired)"
        )
        if self.versus is not None and self.change is not None:
            parsed = self.change["accuracy_where_parsed"]
            lines += [
                f"versus      accuracy {self.versus['accuracy']:.3f} +- "
                f"{self.versus['accuracy_se']:.3f}, reward {self.versus['mean_reward']:.3f}, "
                f"valid {self.versus['valid_rate']:.2f}, steps {self.versus['steps']:.2f}",
                f"change from versus (paired): accuracy {self.change['accuracy']['mean']:+.3f} "
                f"+- {self.change['accuracy']['se']:.3f}, reward "
                f"{self.change['reward']['mean']:+.3f} +- {self.change['reward']['se']:.3f}; "
                f"accuracy on the {parsed['n']} tasks whose versus plan parsed "
                f"{parsed['mean']:+.3f} +- {parsed['se']:.3f}",
            ]
        return "\n".join(lines)


def confirm(
    checkpoint: str,
    *,
    first: int = SUITE_SIZE,
    tasks: int = 800,
    repeats: int = 3,
    seed: int = 0,
    bf16: bool | None = None,
    max_new_tokens: int | None = None,
    recipe: str = "cpu-orchestrate",
    agents: Sequence[str] = (),
    versus: str | None = None,
) -> Confirmation:
    """Evaluate ``checkpoint`` (a checkpoint folder of ``recipe``, a CPU recipe) on the
    fresh offline tasks ``first .. first + tasks - 1`` (module docstring), beside every
    ``single:<id>``, ``best-single`` and ``agents`` (agent specs).

    ``seed`` is the training run's (the episodes' group seeds are ``seed +
    HELD_OUT_SEED_OFFSET + position``, as the recipe's held-out evaluation draws them);
    ``bf16`` ``None`` measures it as the recipe does; ``max_new_tokens`` ``None`` is the
    checkpoint's own completion limit (else 256); ``versus``: a second checkpoint to pair
    the policy with (module docstring). Raises ``ValueError`` naming the argument when
    the tasks are not fresh or the counts are not positive.
    """
    from .evaluate import agent_eval, greedy_eval, paired_difference, versus_best_single
    from .policy import load_policy
    from .precision import choose_cpu_precision
    from .train import make_args

    if first < SUITE_SIZE:
        raise ValueError(
            f"first: fresh tasks start at {SUITE_SIZE} (the suite's size), got {first}"
        )
    for name, value in (("tasks", tasks), ("repeats", repeats)):
        if value < 1:
            raise ValueError(f"{name}: must be >= 1, got {value}")
    if bf16 is None:
        bf16 = choose_cpu_precision().bf16
    settings: Args = make_args(recipe)
    # the recipe's pool (its simulator version, k and shuffling among it), on fresh tasks
    env = settings.env.replace(tasks="offline", task_options={"size": first + tasks})
    scorer = Scorer(env, seed=seed)
    source = scorer.tasks
    first_trained = settings.train_first
    trained = {
        source[i].question
        for i in range(first_trained, first_trained + (settings.train_tasks or 0))
    }
    fresh = range(first, first + tasks)
    duplicates = sum(source[i].question in trained for i in fresh)

    refs = make_refs(fresh, seed=seed + HELD_OUT_SEED_OFFSET)
    prompt = ChatPrompt.find(checkpoint)
    rows, _ = build_dataset(scorer, refs, chat_prompt=prompt, unique_prompts=False)

    def play(path: str) -> EvalResult:
        model, tokenizer = load_policy(path)
        # the limit the trainer recorded in generation_config.json, as policy:<path> reads
        recorded = getattr(model.generation_config, "max_new_tokens", None)
        limit = max_new_tokens or recorded or cpu_orchestrate.GRPO["max_completion_length"]
        return greedy_eval(
            model,
            tokenizer,
            scorer,
            refs,
            list(rows["prompt"]),
            repeats=repeats,
            max_new_tokens=limit,
            bf16=bf16,
        )

    policy = play(checkpoint)
    before = None if versus is None else play(versus)
    ids = env.k or scorer.pool.n
    specs = (*(f"single:{i}" for i in range(ids)), "best-single", *agents)
    baselines = {spec: agent_eval(scorer, refs, spec, repeats=repeats) for spec in specs}
    if env.shuffle_workers:
        best = "best-single"
        gain, se = paired_difference(baselines[best], policy, metric="accuracy")
    else:
        reference = versus_best_single(baselines, policy)
        if reference is None:  # specs holds a single:<id> for every worker of a non-empty pool
            raise ValueError("the pool has no worker to compare the policy with")
        best, gain, se = reference
    return Confirmation(
        first=first,
        tasks=tasks,
        repeats=repeats,
        duplicates=duplicates,
        policy=policy.to_dict(),
        baselines={spec: ev.to_dict() for spec, ev in baselines.items()},
        best_single=best,
        accuracy_gain=gain,
        se=se,
        bf16=bf16,
        recipe=recipe,
        versus=None if before is None else before.to_dict(),
        change=None if before is None else _change(before, policy),
    )


def _change(before: EvalResult, after: EvalResult) -> dict[str, Any]:
    """The paired change from ``before`` to ``after`` (the fields of
    :attr:`Confirmation.change`)."""
    from .evaluate import paired_change, paired_difference

    parsed = [i for i, plan in enumerate(before.plans) if plan is not None]
    where_parsed = (
        paired_change(
            [before.task_accuracy[i] for i in parsed], [after.task_accuracy[i] for i in parsed]
        )
        if parsed
        else (0.0, 0.0)
    )
    return {
        metric: dict(
            zip(("mean", "se"), paired_difference(before, after, metric=metric), strict=True)
        )
        for metric in ("accuracy", "reward")
    } | {
        "accuracy_where_parsed": {
            **dict(zip(("mean", "se"), where_parsed, strict=True)),
            "n": len(parsed),
        }
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conductor_gym.trainers.trl.confirm",
        description="a trained conductor on fresh offline tasks, beside every single worker",
    )
    parser.add_argument("checkpoint", help="a checkpoint folder of a CPU recipe")
    parser.add_argument(
        "--recipe",
        default="cpu-orchestrate",
        help="the recipe that trained it (its env: pool, k, shuffled ids)",
    )
    parser.add_argument(
        "--agent",
        action="append",
        default=[],
        help="another baseline to play on the same episodes (repeatable), e.g. plan:<path>",
    )
    parser.add_argument("--first", type=int, default=SUITE_SIZE, help="first fresh task")
    parser.add_argument("--tasks", type=int, default=800, help="fresh tasks to play")
    parser.add_argument("--repeats", type=int, default=3, help="worker draws per task")
    parser.add_argument("--seed", type=int, default=0, help="the training run's seed")
    parser.add_argument(
        "--precision",
        choices=("auto", "bf16", "fp32"),
        default="auto",
        help="the policy's sampling precision (auto: bf16 where the CPU has native bf16)",
    )
    parser.add_argument(
        "--versus",
        default=None,
        help="a second checkpoint (e.g. the run's warm_start) to pair the policy with",
    )
    parser.add_argument("--out", default=None, help="write the full result as JSON here")
    args = parser.parse_args(argv)
    bf16 = None if args.precision == "auto" else args.precision == "bf16"
    result = confirm(
        args.checkpoint,
        first=args.first,
        tasks=args.tasks,
        repeats=args.repeats,
        seed=args.seed,
        bf16=bf16,
        recipe=args.recipe,
        agents=tuple(args.agent),
        versus=args.versus,
    )
    print(result.summary())
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(result.to_dict(), handle, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
