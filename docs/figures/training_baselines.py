"""The baseline figures of ``docs/training-cpu.md`` (and the README's "Training"): every
``single:<id>`` and ``best-single`` on exactly the episodes the ``cpu-orchestrate`` recipe
evaluates its policy on, with no language model, so they regenerate in seconds.

* :func:`orchestrate_rows`, :func:`orchestrate_others`, :func:`orchestrate_best`: the
  recipe's held-out evaluation (``offline`` tasks 0-159 x 3 worker draws, the group seeds
  the recipe's ``HeldOut`` draws), as ``python -m conductor_gym.trainers.trl.train
  --recipe cpu-orchestrate`` records them in ``results.json`` under ``baselines``;
* :func:`fresh_rows`, :func:`fresh_best`: the fresh tasks 2000-2799 x 3 draws, as
  ``python -m conductor_gym.trainers.trl.confirm CHECKPOINT --first 2000 --tasks 800``
  plays them;
* :func:`adapt_rows`: the ``cpu-adapt`` recipe's baselines (``best-single``, the random
  planner and the audit's best fixed plans of 1-3 calls) on its held-out episodes
  (tasks 0-159 x 8 rollouts in the randomised pool), as the recipe records them;
* :func:`ideal_learner_block`: the tabular yardstick of ``cpu-adapt``'s learning problem
  (``python -m conductor_gym.trainers.trl.ideal_learner --recipe cpu-adapt --seeds
  0,1,2``: three seeds of 2,000 steps, about two minutes).

The policy's own rows come from the 40-minute training run and are not regenerated here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from conductor_gym.trainers.trl import ideal_learner  # type: ignore[import-not-found]
from conductor_gym.trainers.trl.data import HELD_OUT_SEED_OFFSET, make_refs  # type: ignore[import-not-found]
from conductor_gym.trainers.trl.evaluate import agent_eval  # type: ignore[import-not-found]
from conductor_gym.trainers.trl.recipes import (  # type: ignore[import-not-found]
    common,
    cpu_adapt,
    cpu_orchestrate,
)

from conductor_gym.bench.readme_figures import StaleProseError, wrap
from conductor_gym.training.scoring import Scorer

FRESH_FIRST, FRESH_TASKS, FRESH_REPEATS = 2000, 800, 3

ORCHESTRATE_HEAD = (
    "| conductor | accuracy (± SE) | reward (± SE) | steps | worker calls | worker tokens "
    "| cost / question |\n|---|---|---|---|---|---|---|"
)
"""The head of the recipe's result table (its rows follow it)."""
FRESH_HEAD = "  | conductor | accuracy (± SE) | reward (± SE) |\n  |---|---|---|"
"""The head of the fresh-task table, indented in its list item."""

ADAPT_HEAD = (
    "| conductor (4 of 7 workers, shuffled ids) | accuracy (± SE) | reward (± SE) | steps "
    "| worker calls | worker tokens | cost / question |\n|---|---|---|---|---|---|---|"
)
"""The head of the ``cpu-adapt`` result table (its baseline rows follow it)."""

Evaluations = Mapping[str, Mapping[str, Any]]


def _play(
    scorer: Scorer, refs: list[Any], repeats: int, specs: Sequence[str] | None = None
) -> dict[str, dict[str, Any]]:
    """``specs`` (default: every ``single:<id>`` and ``best-single``) on ``refs``."""
    if specs is None:
        specs = [f"single:{i}" for i in range(scorer.pool.n)] + ["best-single"]
    return {spec: agent_eval(scorer, refs, spec, repeats=repeats).to_dict() for spec in specs}


def _held_out(args: Any, specs: Sequence[str] | None = None) -> Evaluations:
    """``specs`` on a recipe's held-out episodes, as its ``HeldOut`` draws them."""
    scorer = common.make_scorer(args)
    _, held_out = common.split_tasks(args, scorer)
    refs = make_refs(held_out, seed=args.seed + HELD_OUT_SEED_OFFSET)
    return _play(scorer, refs, args.eval_repeats or 1, specs)


@cache
def orchestrate_baselines() -> Evaluations:
    """Every baseline on the recipe's held-out episodes (its default settings, seed 0)."""
    return _held_out(cpu_orchestrate.Args())


@cache
def fresh_baselines() -> Evaluations:
    """Every baseline on the fresh tasks, as ``confirm`` plays them (seed 0)."""
    size = FRESH_FIRST + FRESH_TASKS
    env = cpu_orchestrate.Args().env.replace(tasks="offline", task_options={"size": size})
    scorer = Scorer(env, seed=0)
    refs = make_refs(range(FRESH_FIRST, size), seed=HELD_OUT_SEED_OFFSET)
    return _play(scorer, refs, FRESH_REPEATS)


def _names() -> list[str]:
    return [spec.name for spec in common.make_scorer(cpu_orchestrate.Args()).pool.specs]


def _singles(evals: Evaluations) -> list[tuple[str, str]]:
    """``(spec, worker name)`` of the single workers, most accurate first."""
    names = _names()
    specs = sorted(
        (s for s in evals if s.startswith("single:")), key=lambda s: -evals[s]["accuracy"]
    )
    return [(s, names[int(s.split(":")[1])]) for s in specs]


def _pm(value: float, se: float) -> str:
    return f"{value:.3f} ± {se:.3f}"


def _scores(e: Mapping[str, Any]) -> str:
    """The accuracy and reward cells, each with its standard error."""
    return f"{_pm(e['accuracy'], e['accuracy_se'])} | {_pm(e['mean_reward'], e['se'])}"


def orchestrate_rows() -> str:
    """The recipe's result table down to its baseline rows: the three best single
    workers, then ``best-single`` (the policy's rows below them are the run's)."""
    evals = orchestrate_baselines()
    rows = []
    for rank, (spec, name) in enumerate(_singles(evals)[:3]):
        label = f"`{spec}` ({name})" + (", the best single worker" if rank == 0 else "")
        rows.append((label, evals[spec]))
    rows.append(
        ("`best-single` (per family, calibrated on a disjoint split)", evals["best-single"])
    )
    return (
        ORCHESTRATE_HEAD
        + "\n"
        + "\n".join(
            f"| {label} | {_scores(e)} | {e['steps']:g} | {e['worker_calls']:g} "
            f"| {e['tokens']:,.0f} | ${e['cost_usd']:.4f} |"
            for label, e in rows
        )
    )


def orchestrate_others() -> str:
    """The sentence under that table: the single workers the table leaves out."""
    evals = orchestrate_baselines()
    others = [f"{evals[s]['accuracy']:.3f} ({name})" for s, name in _singles(evals)[3:]]
    return wrap(f"The other single workers score {', '.join(others[:-1])} and {others[-1]}.")


def orchestrate_best() -> str:
    """The best single worker's accuracy on the recipe's held-out episodes: ``0.648 ± 0.036``."""
    evals = orchestrate_baselines()
    spec = _singles(evals)[0][0]
    return _pm(evals[spec]["accuracy"], evals[spec]["accuracy_se"])


def fresh_rows() -> str:
    """The fresh-task table down to its baseline rows (indented: it sits in a list item).
    Its words hold while the best single worker is the recipe's held-out one; else
    :class:`~conductor_gym.bench.readme_figures.StaleProseError`."""
    evals = fresh_baselines()
    (best, best_name), (second, second_name) = _singles(evals)[:2]
    if best != _singles(orchestrate_baselines())[0][0]:
        raise StaleProseError(f"fresh-baselines: {best} is the best single worker, not again")
    rows = [
        (f"`{best}` ({best_name}), again the best single worker", evals[best]),
        (f"`{second}` ({second_name})", evals[second]),
        ("`best-single`", evals["best-single"]),
    ]
    return FRESH_HEAD + "\n" + "\n".join(f"  | {label} | {_scores(e)} |" for label, e in rows)


def fresh_best() -> str:
    """The best single worker's accuracy on the fresh tasks: ``0.648``."""
    evals = fresh_baselines()
    return f"{evals[_singles(evals)[0][0]]['accuracy']:.3f}"


@cache
def adapt_baselines() -> Evaluations:
    """``cpu-adapt``'s baselines on its held-out episodes (its default settings, seed 0)."""
    return _held_out(cpu_adapt.Args(), ("best-single", "random", *cpu_adapt.FIXED_PLANS))


def _count(value: float) -> str:
    """A mean count: ``1`` when whole, else two decimals (``2.94``)."""
    return f"{value:g}" if float(value).is_integer() else f"{value:.2f}"


def adapt_rows() -> str:
    """The ``cpu-adapt`` result table down to its baseline rows (the policy's rows below
    them are the run's)."""
    evals = adapt_baselines()
    labels = {
        "best-single": "`best-single` (the drawn worker best on the family, by name)",
        "random": "`random` (the random planner)",
        **{
            spec: f"best fixed plan of {n} call{'s' if n > 1 else ''} (`calls-{n}.plan`)"
            for n, spec in enumerate(cpu_adapt.FIXED_PLANS, start=1)
        },
    }
    return (
        ADAPT_HEAD
        + "\n"
        + "\n".join(
            f"| {labels[spec]} | {_scores(e)} | {_count(e['steps'])} "
            f"| {_count(e['worker_calls'])} | {e['tokens']:,.0f} | ${e['cost_usd']:.4f} |"
            for spec, e in evals.items()
        )
    )


IDEAL_SEEDS = (0, 1, 2)
"""The seeds of the ``ideal-learner`` block."""


def ideal_learner_block() -> str:
    """The yardstick's learning curve on ``cpu-adapt``'s episodes (default settings: the
    recipe's batch of 4 prompts x 8, lr 1.0, 2,000 steps) and where it stands at the
    recipe's 20 GRPO steps."""
    report = ideal_learner.run("cpu-adapt", ideal_learner.LearnerSettings(), IDEAL_SEEDS)
    budget = cpu_adapt.ITERATIONS
    best = report["best_single"]["accuracy"]
    first = ideal_learner.crossing(report)
    at_budget = [p["accuracy"] for c in report["curves"].values() for p in c if p["step"] == budget]
    if any(a >= best for a in at_budget) or first is not None:
        raise StaleProseError(
            "training-cpu.md says every seed is below best-single after the recipe's GRPO "
            "steps and the mean does not reach best-single + 3 points within the "
            "yardstick's steps (simulator v3.1)"
        )
    return ideal_learner.format_table(report) + "\n\n" + wrap(ideal_learner.summary(report, budget))
