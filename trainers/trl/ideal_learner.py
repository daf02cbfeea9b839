"""A yardstick for a recipe's learning problem: GRPO on a table instead of a language model.

::

    python -m conductor_gym.trainers.trl.ideal_learner --recipe cpu-adapt --seeds 0,1,2

``cpu-adapt`` asks GRPO to find, from the env's reward alone, which plan to write for a
question's family and the workers an episode draws. This module measures how many
episodes that problem takes when the representation costs nothing to learn: a
:class:`TabularPolicy` over the plan prior's structures (:mod:`.plan_prior`: 1 to
``max_steps`` steps, later steps' roles) whose factors are tables indexed by the
question's family, and whose worker at each step is a logit per worker *name*, drawn
among the names the episode lists (then written as that worker's ``Model i``).

It is trained with GRPO's objective on the recipe's batches (``prompts_per_step``
training prompts x ``num_generations`` samples, rewards normalised within each group,
one on-policy update per batch, where the clipped objective's gradient is the plain
policy gradient), and evaluated as the recipe evaluates its language model: greedy plans
on the held-out episodes, each played ``eval_repeats`` times with the same rollout seeds
(:func:`~.evaluate.score_plans`), beside ``best-single`` on the same episodes.

Beside the curve (``--beside``), on the same held-out episodes and rollout seeds:

* **the best fixed plan** over the same structures: the mode of the plan prior fitted to
  the training episodes by :func:`~.plan_prior.search_prior` (the same plan, by
  ``Model`` position, for every question);
* **the adaptive oracle** (:func:`adaptive_oracle`): per family, the structure over the
  drawn workers *ranked* by their accuracy on that family (measured on training
  episodes: privileged knowledge, hence "oracle") that scores best on the family's
  training episodes, found by successive halving over every structure of 1 to
  ``max_steps`` steps over the 4 best-ranked drawn workers. It adapts to the question's
  family and to the draw, and bounds what a learner over these structures can reach.

``--pool``, ``--k`` and ``--shuffle-workers`` replace the recipe's env (``--pool
sim-paper`` alone: the default pool, all seven workers under fixed ids).

It is a yardstick, not a conductor: it is handed the family and the names as features
that the language model has to learn to read from text, and it can only write the prior's
structures. Its curve is therefore optimistic about sample efficiency: a language model
given as many episodes has, in addition, to learn what the table is given.
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from conductor_gym.core.config import EnvConfig
from conductor_gym.errors import ConfigurationError
from conductor_gym.training.scoring import EpisodeRef, Scorer

from .data import HELD_OUT_SEED_OFFSET, make_refs
from .evaluate import EvalResult, agent_eval, paired_difference, score_plans, standard_error
from .plan_prior import ROLES, PlanSearch, Structure, search_prior

__all__ = [
    "Beside",
    "Context",
    "CurvePoint",
    "LearnerSettings",
    "RankedStructure",
    "TabularPolicy",
    "adaptive_oracle",
    "contexts",
    "crossing",
    "format_table",
    "learning_curve",
    "main",
    "run",
    "summary",
]

_ROLE_NAMES = tuple(ROLES)


@dataclass(frozen=True)
class Context:
    """What the table reads of an episode: the question, the drawn workers' names in
    ``Model`` order, and the question's family."""

    question: str
    pool: tuple[str, ...]
    family: str


def contexts(scorer: Scorer, refs: Sequence[EpisodeRef]) -> list[Context]:
    """Each episode's :class:`Context`, as the env resets it."""
    env = scorer.make_env()
    try:
        infos = [scorer.reset(env, ref)[1] for ref in refs]
    finally:
        env.close()
    return [Context(str(i["question"]), tuple(i["pool"]), str(i["domain"])) for i in infos]


@dataclass(frozen=True)
class LearnerSettings:
    """The run: ``steps`` updates of ``prompts_per_step`` x ``num_generations`` episodes
    (``cpu-adapt``'s batch by default) at ``learning_rate``, greedy evaluations after each
    step in ``marks``."""

    steps: int = 2000
    prompts_per_step: int = 4
    num_generations: int = 8
    learning_rate: float = 1.0
    max_steps: int = 3
    seed: int = 0
    marks: tuple[int, ...] = (20, 100, 500, 2000)

    def __post_init__(self) -> None:
        for name in ("steps", "prompts_per_step", "num_generations", "max_steps"):
            if getattr(self, name) < 1:
                raise ValueError(f"LearnerSettings.{name} must be >= 1, got {getattr(self, name)}")
        if self.num_generations < 2:
            raise ValueError("LearnerSettings.num_generations must be >= 2 (a group advantage)")
        if not self.learning_rate > 0:
            raise ValueError(f"LearnerSettings.learning_rate must be > 0, got {self.learning_rate}")
        if bad := [m for m in self.marks if not 1 <= m <= self.steps]:
            raise ValueError(f"LearnerSettings.marks must lie in 1..steps ({self.steps}): {bad}")


@dataclass(frozen=True)
class _Choice:
    """One categorical draw: the table row it came from, the probabilities over its
    ``columns`` and the column drawn."""

    table: str
    row: tuple[int, ...]
    columns: tuple[int, ...] | None
    probabilities: np.ndarray
    drawn: int


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max())
    normalised: np.ndarray = e / e.sum()
    return normalised


@dataclass
class TabularPolicy:
    """Logit tables, one row set per family (module docstring): ``lengths[f]`` over
    1..``max_steps`` steps, ``roles[f, s]`` over the role of step ``s + 2``,
    ``workers[f, s]`` over the worker names of step ``s + 1``. All zeros at the start:
    the uniform prior."""

    names: tuple[str, ...]
    families: tuple[str, ...]
    max_steps: int = 3
    lengths: np.ndarray = field(init=False)
    roles: np.ndarray = field(init=False)
    workers: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        f = len(self.families)
        self.lengths = np.zeros((f, self.max_steps))
        self.roles = np.zeros((f, self.max_steps - 1, len(_ROLE_NAMES)))
        self.workers = np.zeros((f, self.max_steps, len(self.names)))

    def act(
        self, context: Context, rng: np.random.Generator | None
    ) -> tuple[Structure, list[_Choice]]:
        """A structure for ``context``: sampled with ``rng``, or the most likely one of
        every factor when ``rng`` is ``None``; and the draws it made."""
        f = self.families.index(context.family)
        drawn = tuple(self.names.index(name) for name in context.pool)
        choices: list[_Choice] = []

        def pick(table: str, row: tuple[int, ...], columns: tuple[int, ...] | None) -> int:
            logits = getattr(self, table)[row]
            p = _softmax(logits if columns is None else logits[list(columns)])
            j = int(np.argmax(p)) if rng is None else int(rng.choice(len(p), p=p))
            choices.append(_Choice(table, row, columns, p, j))
            return j

        steps = 1 + pick("lengths", (f,), None)
        workers = tuple(pick("workers", (f, s), drawn) for s in range(steps))
        roles = tuple(_ROLE_NAMES[pick("roles", (f, s), None)] for s in range(steps - 1))
        return Structure(workers=workers, roles=("attempt", *roles)), choices

    def reinforce(self, choices: Sequence[_Choice], weight: float) -> None:
        """Move every draw's logits along ``weight`` times the gradient of its log
        probability (one-hot minus the probabilities)."""
        for c in choices:
            gradient = -c.probabilities
            gradient[c.drawn] += 1.0
            logits = getattr(self, c.table)
            if c.columns is None:
                logits[c.row] += weight * gradient
            else:
                logits[(*c.row, list(c.columns))] += weight * gradient


@dataclass(frozen=True)
class CurvePoint:
    """The greedy policy after ``step`` updates (``episodes`` played in training):
    held-out accuracy and reward, their standard errors over tasks."""

    step: int
    episodes: int
    accuracy: float
    accuracy_se: float
    reward: float
    reward_se: float


def _greedy_point(
    policy: TabularPolicy,
    scorer: Scorer,
    refs: Sequence[EpisodeRef],
    held_out: Sequence[Context],
    repeats: int,
    step: int,
    episodes: int,
) -> CurvePoint:
    plans = [policy.act(c, None)[0].plan(c.question).to_text() for c in held_out]
    result = score_plans(scorer, refs, plans, repeats=repeats)
    return CurvePoint(
        step,
        episodes,
        result.accuracy,
        standard_error(result.task_accuracy),
        result.mean,
        standard_error(result.task_rewards),
    )


def learning_curve(
    scorer: Scorer,
    train: Sequence[EpisodeRef],
    held_out: Sequence[EpisodeRef],
    settings: LearnerSettings,
    *,
    eval_repeats: int = 8,
) -> list[CurvePoint]:
    """Train a :class:`TabularPolicy` on ``train`` episodes and evaluate it greedily on
    ``held_out`` before training (step 0) and after each step in ``settings.marks``."""
    train_contexts, held_contexts = contexts(scorer, train), contexts(scorer, held_out)
    every = [*train_contexts, *held_contexts]
    policy = TabularPolicy(
        names=tuple(sorted({n for c in every for n in c.pool})),
        families=tuple(sorted({c.family for c in every})),
        max_steps=settings.max_steps,
    )
    rng = np.random.default_rng(settings.seed)
    group = settings.num_generations
    batch = settings.prompts_per_step * group

    def point(step: int) -> CurvePoint:
        return _greedy_point(
            policy, scorer, held_out, held_contexts, eval_repeats, step, step * batch
        )

    curve = [point(0)]
    for step in range(1, settings.steps + 1):
        prompts = rng.integers(0, len(train), settings.prompts_per_step)
        acted = [policy.act(train_contexts[i], rng) for i in prompts for _ in range(group)]
        results = scorer.score(
            [train[i] for i in prompts for _ in range(group)],
            [s.plan(train_contexts[i].question).to_text() for (s, _), i in
             zip(acted, np.repeat(prompts, group), strict=True)],
            rollout_seeds=[int(x) for x in rng.integers(0, 2**62, batch)],
        )  # fmt: skip
        rewards = np.array([r.reward for r in results]).reshape(-1, group)
        advantages = (rewards - rewards.mean(axis=1, keepdims=True)) / (
            rewards.std(axis=1, keepdims=True) + 1e-4
        )
        for (_, choices), advantage in zip(acted, advantages.flat, strict=True):
            if advantage:
                policy.reinforce(choices, settings.learning_rate * float(advantage) / batch)
        if step in settings.marks:
            curve.append(point(step))
    return curve


@dataclass(frozen=True)
class Beside:
    """What plays beside the curve: the best fixed plan's search (:class:`PlanSearch`:
    ``fixed_iterations`` rounds of ``fixed_population`` structures x
    ``fixed_tasks`` training episodes) and the adaptive oracle's (``oracle_top``
    best-ranked drawn workers; ``oracle_rounds``: training episodes per candidate in each
    round of successive halving, keeping the best eighth each time; ranks measured on
    ``calibration`` training episodes)."""

    fixed_iterations: int = 8
    fixed_population: int = 128
    fixed_tasks: int = 32
    oracle_top: int = 4
    oracle_rounds: tuple[int, ...] = (8, 32, 128)
    calibration: int = 400
    seed: int = 0


@dataclass(frozen=True)
class RankedStructure:
    """A structure whose step ``i`` asks the drawn worker of rank ``ranks[i]`` (0: the
    best on the question's family), with ``roles[i]``."""

    ranks: tuple[int, ...]
    roles: tuple[str, ...]

    def describe(self) -> str:
        return " | ".join(
            f"#{r + 1} {role}" for r, role in zip(self.ranks, self.roles, strict=True)
        )


def _correct(scorer: Scorer, refs: Sequence[EpisodeRef], plans: Sequence[str], rng: Any) -> Any:
    results = scorer.score(
        refs, plans, rollout_seeds=[int(x) for x in rng.integers(0, 2**62, len(refs))]
    )
    return np.array([r.correct for r in results])


def adaptive_oracle(
    scorer: Scorer,
    train: Sequence[EpisodeRef],
    max_steps: int,
    beside: Beside,
) -> tuple[dict[tuple[str, str], float], dict[str, RankedStructure]]:
    """The adaptive oracle (module docstring): each (family, worker name)'s accuracy
    alone on training episodes, and each family's best :class:`RankedStructure`."""
    rng = np.random.default_rng([beside.seed, 11])
    known = contexts(scorer, train)
    picked = rng.choice(len(train), min(beside.calibration, len(train)), replace=False)
    refs, plans, keys = [], [], []
    for i in picked:
        c = known[i]
        for position, name in enumerate(c.pool):
            refs.append(train[i])
            plans.append(Structure((position,), ("attempt",)).plan(c.question).to_text())
            keys.append((c.family, name))
    hits: dict[tuple[str, str], list[float]] = {}
    for key, correct in zip(keys, _correct(scorer, refs, plans, rng), strict=True):
        hits.setdefault(key, []).append(float(correct))
    rates = {key: float(np.mean(v)) for key, v in hits.items()}
    width = min(beside.oracle_top, len(known[0].pool))
    candidates = [
        RankedStructure(ranks, ("attempt", *roles))
        for steps in range(1, max_steps + 1)
        for ranks in itertools.product(range(width), repeat=steps)
        for roles in itertools.product(_ROLE_NAMES, repeat=steps - 1)
    ]
    best: dict[str, RankedStructure] = {}
    for family in sorted({c.family for c in known}):
        mine = [i for i, c in enumerate(known) if c.family == family]
        alive = candidates
        for count in beside.oracle_rounds:
            episodes = [mine[int(j)] for j in rng.integers(0, len(mine), count)]
            seeds = [int(x) for x in rng.integers(0, 2**62, count)]
            refs = [train[i] for _ in alive for i in episodes]
            plans = [
                _ranked(c, known[i], rates).plan(known[i].question).to_text()
                for c in alive for i in episodes
            ]  # fmt: skip
            results = scorer.score(refs, plans, rollout_seeds=seeds * len(alive))
            means = np.array([r.correct for r in results]).reshape(len(alive), count).mean(1)
            order = np.argsort(-means, kind="stable")
            alive = [alive[j] for j in order[: max(1, len(alive) // 8)]]
        best[family] = alive[0]
    return rates, best


def _ranked(
    structure: RankedStructure, context: Context, rates: dict[tuple[str, str], float]
) -> Structure:
    """``structure`` written for ``context``'s draw: rank ``r`` is the ``Model`` position
    of the drawn worker with the ``r + 1``-th best accuracy on the family."""
    order = sorted(
        range(len(context.pool)), key=lambda p: -rates.get((context.family, context.pool[p]), 0.0)
    )
    return Structure(tuple(order[r] for r in structure.ranks), structure.roles)


def _beside(
    scorer: Scorer,
    train: Sequence[EpisodeRef],
    held_out: Sequence[EpisodeRef],
    repeats: int,
    best: EvalResult,
    beside: Beside,
    max_steps: int,
) -> dict[str, dict[str, Any]]:
    """The best fixed plan and the adaptive oracle on ``held_out`` (greedy, the rollout
    seeds of every other row), each with its paired accuracy gain over ``best``."""
    search = PlanSearch(
        iterations=beside.fixed_iterations,
        population=beside.fixed_population,
        tasks_per_plan=beside.fixed_tasks,
        max_steps=max_steps,
        seed=beside.seed,
    )
    prior, _ = search_prior(scorer, train, search, log=False)
    fixed = prior.mode()
    held = contexts(scorer, held_out)
    rates, chosen = adaptive_oracle(scorer, train, max_steps, beside)
    rows = {
        "best fixed plan": (
            [fixed.plan(c.question).to_text() for c in held],
            fixed.describe(),
        ),
        "adaptive oracle": (
            [
                _ranked(chosen[c.family], c, rates).plan(c.question).to_text()
                if c.family in chosen
                else fixed.plan(c.question).to_text()
                for c in held
            ],
            "; ".join(f"{f}: {s.describe()}" for f, s in sorted(chosen.items())),
        ),
    }
    out = {}
    for name, (plans, shown) in rows.items():
        result = score_plans(scorer, held_out, plans, repeats=repeats)
        gain, gain_se = paired_difference(best, result, metric="accuracy")
        out[name] = {
            "plan": shown,
            "accuracy": result.accuracy,
            "accuracy_se": standard_error(result.task_accuracy),
            "gain": gain,
            "gain_se": gain_se,
        }
    return out


def _recipe_episodes(
    recipe: str, env: EnvConfig | None = None
) -> tuple[Scorer, list[EpisodeRef], list[EpisodeRef], int]:
    """A recipe's scorer (on ``env`` in place of the recipe's, when given), its training
    and held-out episodes (as its run draws them) and its evaluation repeats."""
    from .recipes import common
    from .train import make_args

    args = make_args(recipe) if env is None else make_args(recipe, env=env)
    scorer = common.make_scorer(args)
    train, held_out = common.split_tasks(args, scorer)
    if not held_out:
        raise ValueError(f"recipe {recipe!r} has no held-out tasks to evaluate on")
    return (
        scorer,
        make_refs(train, seed=args.seed),
        make_refs(held_out, seed=args.seed + HELD_OUT_SEED_OFFSET),
        args.eval_repeats or 1,
    )


def run(
    recipe: str,
    settings: LearnerSettings,
    seeds: Sequence[int],
    *,
    env: EnvConfig | None = None,
    beside: Beside | None = None,
) -> dict[str, Any]:
    """The curve of every seed on ``recipe``'s episodes (on ``env`` when given), and
    ``best-single`` on its held-out episodes, with, given ``beside``, the best fixed plan
    and the adaptive oracle (module docstring): what :func:`main` prints."""
    scorer, train, held_out, repeats = _recipe_episodes(recipe, env)
    start = time.perf_counter()
    curves = {
        seed: learning_curve(
            scorer,
            train,
            held_out,
            LearnerSettings(**{**asdict(settings), "seed": seed}),
            eval_repeats=repeats,
        )
        for seed in seeds
    }
    best = agent_eval(scorer, held_out, "best-single", repeats=repeats)
    others = (
        {}
        if beside is None
        else _beside(scorer, train, held_out, repeats, best, beside, settings.max_steps)
    )
    return {
        "recipe": recipe,
        "env": None if env is None else env.model_dump(mode="json", exclude_defaults=True),
        "beside": others,
        "settings": asdict(settings),
        "seeds": list(seeds),
        "held_out_tasks": len(held_out),
        "eval_repeats": repeats,
        "best_single": {
            "accuracy": best.accuracy,
            "accuracy_se": standard_error(best.task_accuracy),
        },
        "curves": {str(seed): [asdict(p) for p in curve] for seed, curve in curves.items()},
        "wall_s": time.perf_counter() - start,
    }


def format_table(report: dict[str, Any]) -> str:
    """The curves as a Markdown table: per mark, the mean held-out accuracy over seeds and
    its range, and the gain over ``best-single``."""
    curves = list(report["curves"].values())
    best = report["best_single"]["accuracy"]
    seeds = len(curves)
    lines = [
        f"| GRPO steps (episodes) | greedy accuracy, mean of {seeds} seeds "
        "(lowest-highest) | minus `best-single` |",
        "|---|---|---|",
    ]
    for at in zip(*curves, strict=True):
        accuracies = [p["accuracy"] for p in at]
        mean = float(np.mean(accuracies))
        lines.append(
            f"| {at[0]['step']:,} ({at[0]['episodes']:,}) | {mean:.3f} "
            f"({min(accuracies):.3f}-{max(accuracies):.3f}) | {100 * (mean - best):+.1f} points |"
        )
    se = report["best_single"]["accuracy_se"]
    lines.append(f"| `best-single` | {best:.3f} ± {se:.3f} | |")
    for name, row in report.get("beside", {}).items():
        lines.append(
            f"| {name} | {row['accuracy']:.3f} ± {row['accuracy_se']:.3f} | "
            f"{100 * row['gain']:+.1f} ± {100 * row['gain_se']:.1f} points (paired) |"
        )
    return "\n".join(lines)


def crossing(report: dict[str, Any], points: float = 3.0) -> dict[str, Any] | None:
    """The first mark where the mean accuracy over seeds reaches ``best-single`` plus
    ``points`` (``{"step", "episodes", "accuracy"}``), or ``None`` when none does."""
    best = report["best_single"]["accuracy"]
    for at in zip(*report["curves"].values(), strict=True):
        mean = float(np.mean([p["accuracy"] for p in at]))
        if mean >= best + points / 100:
            return {"step": at[0]["step"], "episodes": at[0]["episodes"], "accuracy": mean}
    return None


def summary(report: dict[str, Any], budget_steps: int, points: float = 3.0) -> str:
    """One sentence: how the seeds stand against ``best-single`` after ``budget_steps``
    (a mark of the report) and where their mean first clears it by ``points``."""
    best = report["best_single"]["accuracy"]
    at_budget = [
        p["accuracy"] for curve in report["curves"].values() for p in curve
        if p["step"] == budget_steps
    ]  # fmt: skip
    if not at_budget:
        raise ValueError(f"the report has no mark at step {budget_steps}")
    below = sum(a < best for a in at_budget)
    episodes = budget_steps * report["settings"]["prompts_per_step"]
    episodes *= report["settings"]["num_generations"]
    first = crossing(report, points)
    where = (
        f"first reaches `best-single` + {points:g} points after {first['step']:,} steps "
        f"({first['episodes']:,} episodes)"
        if first
        else f"does not reach `best-single` + {points:g} points within "
        f"{report['settings']['steps']:,} steps"
    )
    return (
        f"After {budget_steps} steps ({episodes:,} episodes) {below} of {len(at_budget)} "
        f"seeds are below `best-single` ({best:.3f}); the mean over seeds {where}."
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conductor_gym.trainers.trl.ideal_learner",
        description="GRPO on a tabular policy that reads family and worker names: how many "
        "episodes a recipe's learning problem takes with a perfect representation",
    )
    parser.add_argument("--recipe", default="cpu-adapt", help="the recipe whose episodes to use")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds (default: 0)")
    defaults = LearnerSettings()
    parser.add_argument(
        "--steps", type=int, default=defaults.steps, help="GRPO steps (default: %(default)s)"
    )
    parser.add_argument(
        "--prompts-per-step",
        type=int,
        default=defaults.prompts_per_step,
        help="questions per GRPO batch (default: %(default)s)",
    )
    parser.add_argument(
        "--num-generations",
        type=int,
        default=defaults.num_generations,
        help="plans drawn per question, one group (default: %(default)s)",
    )
    parser.add_argument(
        "--learning-rate",
        type=float,
        default=defaults.learning_rate,
        help="step size of the table's logits (default: %(default)s)",
    )
    parser.add_argument(
        "--marks",
        default=",".join(map(str, defaults.marks)),
        help="comma-separated steps after which to evaluate",
    )
    parser.add_argument("--pool", default=None, help="play this pool instead of the recipe's")
    parser.add_argument("--k", type=int, default=None, help="workers drawn per episode")
    parser.add_argument(
        "--shuffle-workers", action="store_true", help="shuffle the Model ids every episode"
    )
    parser.add_argument(
        "--beside",
        action="store_true",
        help="also play the best fixed plan and the adaptive oracle (module docstring)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    env = None
    if args.pool is not None or args.k is not None or args.shuffle_workers:
        from .train import make_args

        try:
            recipe_env = make_args(args.recipe).env
            env = EnvConfig(
                pool=args.pool or recipe_env.pool,
                k=args.k,
                shuffle_workers=args.shuffle_workers or None,
                max_steps=recipe_env.max_steps,
            )
        except (ValueError, ConfigurationError) as exc:
            parser.error(str(exc))
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
        marks = tuple(int(m) for m in args.marks.split(",") if int(m) <= args.steps)
        settings = LearnerSettings(
            steps=args.steps,
            prompts_per_step=args.prompts_per_step,
            num_generations=args.num_generations,
            learning_rate=args.learning_rate,
            marks=marks,
        )
        report = run(
            args.recipe, settings, seeds, env=env, beside=Beside() if args.beside else None
        )
    except (ValueError, ConfigurationError) as exc:
        parser.error(str(exc))
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(format_table(report))
    for name, row in report["beside"].items():
        print(f"{name}: {row['plan']}")
    if marks:
        print(summary(report, marks[0]))
    print(f"recipe {args.recipe}, seeds {args.seeds}, wall time {report['wall_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
