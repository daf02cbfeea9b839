"""The measured figures of the README's "Beyond the paper" section, as the Markdown the
README holds between its ``<!-- figures:NAME -->`` markers.

Each generator plays the command its paragraph documents and returns the paragraph's
text, wrapped as the README wraps it:

* :func:`cost_sweep_paragraph`: ``evaluate --cost-lambda 0,10,30`` with the five baseline
  agents on the first 250 ``offline`` tasks, 4 repeats (``cost-sweep``);
* :func:`heldout_splits_paragraph`: the random planner on the first 250 ``offline`` tasks
  paired with each held-out pool split, 2 repeats (``heldout-splits``);
* :func:`episode_latency_cut`: how much shorter the mean episode is when a plan runs as
  a graph, on the 3 x 256 random plans of ``tests/benchmarks/test_bench_concurrency.py``
  (``episode-latency``). Simulated latencies are figures of the simulator, not clock
  readings, so this one is the same on every machine.

A generator also checks the prose around its numbers (which agent is the whole front, that
behaviour does not move with the price, ...) and raises :class:`StaleProseError` when the
measurements no longer support it: then the sentence, not only its numbers, needs
rewriting. ``python -m conductor_gym.bench.readme_figures [NAME ...]`` prints them;
``make docs-figures`` (``docs/figures/build.py``) writes them into the README.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable, Sequence

from conductor_gym.bench.frontier import FrontierPoint, pareto_front, sweep_cost_lambda
from conductor_gym.errors import ConductorGymError

__all__ = [
    "COST_SWEEP_AGENTS",
    "COST_SWEEP_LAMBDAS",
    "GENERATORS",
    "HELDOUT_SPLITS",
    "StaleProseError",
    "cost_sweep_paragraph",
    "cost_sweep_points",
    "episode_latency_cut",
    "heldout_splits_paragraph",
    "main",
    "wrap",
]

WIDTH = 90
"""The README's line width for generated prose."""

COST_SWEEP_AGENTS = ("random", "single:0", "best-single", "reflect:2:5", "moa")
"""The agents of the README's sweep command, in its order."""
COST_SWEEP_LAMBDAS = (0.0, 10.0, 30.0)
"""The prices of the README's sweep command (per dollar)."""
COST_SWEEP_LIMIT, COST_SWEEP_REPEATS = 250, 4

HELDOUT_SPLITS = ("train", "heldout-workers", "heldout-sizes", "heldout-shuffled", "heldout-full")
"""The pool splits of ``conductor_gym.pool.splits``, in the README's order."""
HELDOUT_LIMIT, HELDOUT_REPEATS = 250, 2

LATENCY_PLANS, LATENCY_ROUNDS = 256, 3
"""The concurrency benchmark's batch size and its rounds (seeds 0, 1, 2)."""


class StaleProseError(ConductorGymError):
    """The measured figures no longer support the words around them in the docs: the
    message names the claim; rewrite the sentence (and its generator), not only the
    numbers."""


def wrap(text: str) -> str:
    """``text`` as one paragraph of at most :data:`WIDTH` characters a line."""
    return textwrap.fill(text, width=WIDTH, break_long_words=False, break_on_hyphens=False)


def cost_sweep_points(lambdas: Sequence[float] = COST_SWEEP_LAMBDAS) -> list[FrontierPoint]:
    """The README's sweep: every agent of :data:`COST_SWEEP_AGENTS` at every price in
    ``lambdas``, on the first 250 ``offline`` tasks, 4 repeats, seed 0, pool ``sim-paper``."""
    points: list[FrontierPoint] = []
    for agent in COST_SWEEP_AGENTS:
        points += sweep_cost_lambda(
            agent,
            "offline",
            lambdas,
            limit=COST_SWEEP_LIMIT,
            repeats=COST_SWEEP_REPEATS,
            seed=0,
            pool="sim-paper",
            progress=False,
        )
    return points


_NAMES = {"reflect:2:5": "reflection", "moa": "MoA"}


def cost_sweep_paragraph(points: Sequence[FrontierPoint] | None = None) -> str:
    """The paragraph under the README's frontier plot, from ``points`` (default: the
    README's sweep, :func:`cost_sweep_points`).

    Its words hold only while the baselines' accuracy and cost do not move with the price,
    one agent is the whole front, and reflection and MoA are no more accurate than it at a
    higher cost; otherwise :class:`StaleProseError`. The rewards quoted are the highest
    price's. Every price gives the same text once behaviour does not move, so a caller may
    pass the highest price's points alone (the docs-figures test does).
    """
    points = list(cost_sweep_points() if points is None else points)
    top = max(p.cost_lambda for p in points)
    by_agent: dict[str, list[FrontierPoint]] = {}
    for point in points:
        by_agent.setdefault(point.label, []).append(point)
    for label, series in by_agent.items():
        if len({(p.accuracy, p.cost_per_question_usd) for p in series}) > 1:
            raise StaleProseError(
                f"cost-sweep: {label}'s accuracy or cost moves with the price; the README "
                "says each baseline is one point"
            )
    at_top = [p for p in points if p.cost_lambda == top]
    front = pareto_front(at_top)
    if len(front) != 1:
        raise StaleProseError(
            f"cost-sweep: the front is {[p.label for p in front]}; the README names one agent"
        )
    best = front[0]
    rewards = ", ".join(
        f"{p.label} {p.mean_reward:.3f}" for p in sorted(at_top, key=lambda p: -p.mean_reward)
    )
    dearer = []
    for label, name in _NAMES.items():
        found = [p for p in at_top if p.label == label]
        if not found:
            raise ValueError(f"points: no {label} point at lambda {top:g}")
        point = found[0]
        if (
            point.accuracy > best.accuracy
            or point.cost_per_question_usd <= best.cost_per_question_usd
        ):
            raise StaleProseError(
                f"cost-sweep: {label} is not both costlier and no more accurate than {best.label}"
            )
        dearer.append((name, point))
    ratios = " and ".join(
        f"{p.cost_per_question_usd / best.cost_per_question_usd:.1f}" for _, p in dearer
    )
    shown = " and ".join(
        f"{name} ({100 * p.accuracy:.1f} %, ${p.cost_per_question_usd:.4f})" for name, p in dearer
    )
    return wrap(
        "On the simulated pool the baselines' behaviour does not depend on the price, so each "
        f"is one point; only their rewards move (at {top:g} per dollar: {rewards}). "
        f"{best.label} ({100 * best.accuracy:.1f} %, ${best.cost_per_question_usd:.4f} per "
        f"question) is the whole front: {shown} pay {ratios} times as much for no more "
        "accuracy."
    )


def heldout_splits_paragraph() -> str:
    """The README's held-out-splits paragraph: the random planner's accuracy (%) on the
    first 250 ``offline`` tasks paired with each split, 2 repeats, seed 0."""
    from conductor_gym.bench.evaluate import evaluate

    scores = {}
    for split in HELDOUT_SPLITS:
        results = evaluate(
            "random",
            f"offline@{split}",
            repeats=HELDOUT_REPEATS,
            limit=HELDOUT_LIMIT,
            seed=0,
            progress=False,
        )
        scores[split] = f"{100 * results.metrics['overall'].accuracy:.1f}"
    return wrap(
        "Untrained baselines only show how the splits differ (accuracy %, first "
        f"{HELDOUT_LIMIT} offline tasks, {HELDOUT_REPEATS} repeats): the random planner "
        f"scores {scores['train']} on `train`, {scores['heldout-workers']} with the unseen "
        f"workers mixed in, {scores['heldout-sizes']} at the held-out sizes, "
        f"{scores['heldout-shuffled']} shuffled and {scores['heldout-full']} on the full "
        "pool; the question the splits ask is for trained conductors."
    )


def episode_latency_cut() -> str:
    """``1 - mean critical path / mean summed latency`` over the concurrency benchmark's
    random plans (3 batches of 256 through the vector env, seeds 0-2, ``sim-paper``), as a
    whole percentage: ``"21%"``."""
    from conductor_gym.core.agent_spec import make_agent
    from conductor_gym.core.vector import ConductorVectorEnv

    envs = ConductorVectorEnv(LATENCY_PLANS, max_concurrency=LATENCY_PLANS)
    traces = []
    try:
        for seed in range(LATENCY_ROUNDS):
            agent = make_agent("random", seed=seed)
            obs, infos = envs.reset(seed=seed)
            keys = ("question", "num_workers", "max_steps")
            actions = [
                agent.act(obs[i], {key: infos[key][i] for key in keys})
                for i in range(LATENCY_PLANS)
            ]
            final = envs.step(actions)[4]["final_info"]
            traces += [t for t in final["trace"] if t is not None]
    finally:
        envs.close()
    summed = sum(t.latency_s for t in traces)
    critical = sum(t.critical_path_s for t in traces)
    return f"{100 * (1 - critical / summed):.0f}%"


GENERATORS: dict[str, Callable[[], str]] = {
    "cost-sweep": cost_sweep_paragraph,
    "heldout-splits": heldout_splits_paragraph,
    "episode-latency": episode_latency_cut,
}
"""Marker name -> generator of the text between ``<!-- figures:NAME -->`` markers."""


def main(argv: Sequence[str] | None = None) -> int:
    """Print the named blocks (default: all), each under its marker name."""
    parser = argparse.ArgumentParser(
        prog="python -m conductor_gym.bench.readme_figures",
        description="Print the measured figures of the README's 'Beyond the paper' section.",
    )
    parser.add_argument("names", nargs="*", metavar="NAME", help=f"one of {list(GENERATORS)}")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in GENERATORS]
    if unknown:
        parser.error(f"unknown figure block(s) {unknown}; choose from {list(GENERATORS)}")
    for name in args.names or GENERATORS:
        print(f"<!-- figures:{name} -->\n{GENERATORS[name]()}\n<!-- /figures:{name} -->")
    return 0


if __name__ == "__main__":
    sys.exit(main())
