"""The accuracy-cost frontier: evaluate agents under cost-aware rewards for a list of prices.

Contract. :func:`sweep_cost_lambda` runs :func:`~conductor_gym.bench.evaluate.evaluate`
once per price ``λ`` in ``lambdas``, with the env's reward set to ``"cost-<unit>:<λ>"``
(the paper's 1 / 0.5 / 0 less ``λ`` per dollar, thousand tokens or worker call:
:mod:`conductor_gym.core.reward`), and returns one :class:`FrontierPoint` per price: the
run's accuracy, cost, tokens and worker calls per question and mean reward. An agent spec
containing ``{lambda}`` is formatted with each price (``"policy:ckpt/lambda-{lambda}"``:
one conductor trained per price); any other agent is the same at every price, so its
accuracy and spending repeat and only its reward moves (a response cache makes those
reruns free: ``cache=...``).

Cost per question is what the run spent on workers plus what the agent reports for its
own planning (the results' ``cost_per_sample_usd``); the reward charges only the workers.

:func:`pareto_front` keeps the points no other point beats on both accuracy (higher) and
cost (lower). :func:`plot_frontier` draws every agent's points (joined in price order when
its behaviour moves with the price) and the front as a step line, to a PNG (matplotlib,
the ``leaderboard`` extra, imported only there).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from conductor_gym.core.reward import COST_UNITS, CostUnit

__all__ = [
    "FrontierPoint",
    "cost_reward_spec",
    "pareto_front",
    "plot_frontier",
    "points_table",
    "sweep_cost_lambda",
]


@dataclass(frozen=True)
class FrontierPoint:
    """One agent evaluated at one price (module docstring)."""

    agent: str
    """The agent spec as evaluated (``{lambda}`` filled in)."""
    label: str
    """The agent spec as given, naming the agent across prices."""
    cost_lambda: float
    cost_unit: str
    accuracy: float
    accuracy_se: float | None
    mean_reward: float
    cost_per_question_usd: float
    tokens_per_question: float
    calls_per_question: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def cost_reward_spec(cost_lambda: float, unit: CostUnit = "usd") -> str:
    """The env ``reward`` of price ``cost_lambda`` per ``unit``: ``"cost-<unit>:<λ>"``."""
    if unit not in COST_UNITS:
        raise ValueError(f"cost unit: choose one of {list(COST_UNITS)}, got {unit!r}")
    if not (isinstance(cost_lambda, int | float) and math.isfinite(cost_lambda)):
        raise ValueError(f"cost lambda: must be a finite number, got {cost_lambda!r}")
    if cost_lambda < 0:
        raise ValueError(f"cost lambda: must be >= 0, got {cost_lambda!r}")
    return f"cost-{unit}:{cost_lambda:g}"


def _out_for(out: str | os.PathLike[str] | None, label: str, cost_lambda: float) -> Path | None:
    """``<stem>.<agent>.lambda-<λ><suffix>`` beside ``out``: one resumable run per point."""
    if out is None:
        return None
    path = Path(out)
    slug = "".join(c if c.isalnum() or c in "-_." else "_" for c in label)
    return path.with_name(f"{path.stem}.{slug}.lambda-{cost_lambda:g}{path.suffix or '.json'}")


def sweep_cost_lambda(
    agent: str,
    suite: Any,
    lambdas: Sequence[float],
    *,
    unit: CostUnit = "usd",
    out: str | os.PathLike[str] | None = None,
    **evaluate_kwargs: Any,
) -> list[FrontierPoint]:
    """Evaluate ``agent`` on ``suite`` at each price in ``lambdas`` (module docstring).

    ``evaluate_kwargs`` go to :func:`~conductor_gym.bench.evaluate.evaluate` (``pool``,
    ``repeats``, ``seed``, ``limit``, env arguments); ``reward`` is set here and may not be
    among them. With ``out``, each point's results are written (and resumed) beside it as
    ``<stem>.<agent>.lambda-<λ>.json``.
    """
    from conductor_gym.bench.evaluate import evaluate

    if "reward" in evaluate_kwargs:
        raise ValueError("reward: the sweep sets the reward from each lambda; do not pass one")
    if not lambdas:
        raise ValueError("lambdas: give at least one price")
    points: list[FrontierPoint] = []
    for cost_lambda in lambdas:
        spec = agent.replace("{lambda}", f"{cost_lambda:g}")
        results = evaluate(
            spec,
            suite,
            reward=cost_reward_spec(cost_lambda, unit),
            out=_out_for(out, agent, cost_lambda),
            **evaluate_kwargs,
        )
        overall = results.metrics["overall"]
        points.append(
            FrontierPoint(
                agent=spec,
                label=agent,
                cost_lambda=float(cost_lambda),
                cost_unit=unit,
                accuracy=overall.accuracy,
                accuracy_se=overall.accuracy_se,
                mean_reward=overall.mean_reward,
                cost_per_question_usd=overall.cost_per_sample_usd,
                tokens_per_question=overall.tokens_per_sample,
                calls_per_question=overall.mean_worker_calls,
            )
        )
    return points


def pareto_front(points: Iterable[FrontierPoint]) -> list[FrontierPoint]:
    """The points that no other point beats on both accuracy and cost (one beats another
    when it is at least as accurate and as cheap, and strictly one of them), cheapest
    first; of points equal on both, the first is kept."""
    front: list[FrontierPoint] = []
    for point in sorted(points, key=lambda p: (p.cost_per_question_usd, -p.accuracy)):
        if not front or point.accuracy > front[-1].accuracy:
            front.append(point)
    return front


def plot_frontier(
    points: Sequence[FrontierPoint],
    path: str | os.PathLike[str],
    *,
    title: str = "accuracy against cost per question",
    note: str | None = None,
) -> Path:
    """Draw ``points`` and their Pareto front to the PNG ``path``; return the path.

    Each agent (by ``label``) gets one marker; an agent whose points differ across
    prices is joined in price order and its points annotated with ``λ``. ``note`` is a
    line of small text under the title (the suite and pool, say).
    """
    try:
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise RuntimeError(
            "plotting the frontier needs matplotlib: pip install 'conductor-gym[leaderboard]'"
        ) from exc
    if not points:
        raise ValueError("points: nothing to plot")
    by_agent: dict[str, list[FrontierPoint]] = {}
    for point in points:
        by_agent.setdefault(point.label, []).append(point)
    fig = Figure(figsize=(8, 5), layout="constrained")
    ax = fig.add_subplot()
    markers = "osD^v<>PX*"
    for i, (label, group) in enumerate(by_agent.items()):
        group = sorted(group, key=lambda p: p.cost_lambda)
        xs = [p.cost_per_question_usd for p in group]
        ys = [100 * p.accuracy for p in group]
        moves = len({(x, y) for x, y in zip(xs, ys, strict=True)}) > 1
        ax.plot(xs, ys, marker=markers[i % len(markers)], linestyle="-" if moves else "none",
                label=label)  # fmt: skip
        if moves:
            for p, x, y in zip(group, xs, ys, strict=True):
                ax.annotate(f"λ={p.cost_lambda:g}", (x, y), textcoords="offset points",
                            xytext=(4, -10), fontsize=7)  # fmt: skip
        else:
            ax.annotate(label, (xs[0], ys[0]), textcoords="offset points", xytext=(5, 4),
                        fontsize=8)  # fmt: skip
    front = pareto_front(points)
    right = 1.15 * max(p.cost_per_question_usd for p in points) or 1.0
    # The front holds from each of its points until a dearer one does better, and from
    # the last one on: spending more buys no accuracy beyond it.
    ax.step(
        [p.cost_per_question_usd for p in front] + [right],
        [100 * p.accuracy for p in front] + [100 * front[-1].accuracy],
        where="post", color="grey", linestyle="--", linewidth=1, label="Pareto front",
    )  # fmt: skip
    ax.scatter(
        [p.cost_per_question_usd for p in front], [100 * p.accuracy for p in front],
        s=160, facecolors="none", edgecolors="grey", linewidths=1,
    )  # fmt: skip
    ax.set_xlim(left=0, right=right)
    ax.set_ylim(0, 100)
    ax.set_xlabel("cost per question (USD)")
    ax.set_ylabel("accuracy (%)")
    ax.set_title(title if note is None else f"{title}\n{note}", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    target = Path(path)
    fig.savefig(target, dpi=120, metadata={"Software": None})
    return target


def points_table(points: Sequence[FrontierPoint]) -> list[Mapping[str, str]]:
    """One row of text cells per point, for the command line."""
    return [
        {
            "agent": p.agent,
            "lambda": f"{p.cost_lambda:g}/{p.cost_unit}",
            "accuracy %": f"{100 * p.accuracy:.2f}"
            + ("" if p.accuracy_se is None else f" ± {100 * p.accuracy_se:.2f}"),
            "reward": f"{p.mean_reward:.3f}",
            "$/question": f"{p.cost_per_question_usd:.5f}",
            "tokens/question": f"{p.tokens_per_question:.0f}",
            "calls/question": f"{p.calls_per_question:.2f}",
        }
        for p in points
    ]
