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
cost (lower), by :func:`pareto_frontier`, the project's one Pareto rule (ties beat nobody;
the leaderboard's ★ uses it too). :func:`plot_frontier` draws every agent's points (joined
in price order when its behaviour moves with the price) and the front as a step line with
:func:`plot_accuracy_cost`, the project's one accuracy-vs-cost plot (matplotlib, the
``leaderboard`` extra, imported only there; :func:`accuracy_cost_figure` builds and lays
out its figure: nothing clipped, no two notes overlapping).
"""

from __future__ import annotations

import itertools
import math
import os
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from conductor_gym.core.reward import COST_UNITS, CostUnit
from conductor_gym.errors import ConfigurationError

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "FrontierPoint",
    "Series",
    "accuracy_cost_figure",
    "cost_reward_spec",
    "pareto_front",
    "pareto_frontier",
    "plot_accuracy_cost",
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
        raise ConfigurationError(f"cost unit: choose one of {list(COST_UNITS)}, got {unit!r}")
    if not (isinstance(cost_lambda, int | float) and math.isfinite(cost_lambda)):
        raise ConfigurationError(f"cost lambda: must be a finite number, got {cost_lambda!r}")
    if cost_lambda < 0:
        raise ConfigurationError(f"cost lambda: must be >= 0, got {cost_lambda!r}")
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
        raise ConfigurationError(
            "the sweep sets the reward from each lambda; do not pass one", field="reward"
        )
    if not lambdas:
        raise ConfigurationError("lambdas: give at least one price")
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


def pareto_frontier(points: Sequence[tuple[float | None, float]]) -> list[bool]:
    """For ``(accuracy, cost)`` points, whether each is on the Pareto frontier: the one rule
    of the project (the leaderboard's ★ and :func:`pareto_front` both use it).

    A point is beaten by another that is at least as accurate and at most as costly, and
    strictly one of the two; a point is on the frontier when nothing beats it. **Ties beat
    nobody**: points equal on both axes are all on the frontier, or all off it. A point
    with accuracy ``None`` (every episode failed) is never on it and beats nothing."""
    flags = []
    for i, (accuracy, cost) in enumerate(points):
        if accuracy is None:
            flags.append(False)
            continue
        beaten = any(
            other is not None
            and other >= accuracy
            and other_cost <= cost
            and (other > accuracy or other_cost < cost)
            for j, (other, other_cost) in enumerate(points)
            if j != i
        )
        flags.append(not beaten)
    return flags


def pareto_front(points: Iterable[FrontierPoint]) -> list[FrontierPoint]:
    """The front as a curve: the points on the Pareto frontier (:func:`pareto_frontier`
    over accuracy and cost per question), cheapest first, one per position: of points
    equal on both axes (all on it, or all off it) the first is kept."""
    points = list(points)
    flags = pareto_frontier([(p.accuracy, p.cost_per_question_usd) for p in points])
    on = [p for p, flag in zip(points, flags, strict=True) if flag]
    front: list[FrontierPoint] = []
    for point in sorted(on, key=lambda p: (p.cost_per_question_usd, -p.accuracy)):
        position = (point.cost_per_question_usd, point.accuracy)
        if not front or position != (front[-1].cost_per_question_usd, front[-1].accuracy):
            front.append(point)
    return front


@dataclass(frozen=True)
class Series:
    """One group of points on an accuracy-vs-cost plot (:func:`plot_accuracy_cost`): one
    marker and colour, a legend entry ``label``.

    ``costs`` and ``accuracies`` (fractions) are the points; ``errors``: their standard
    errors (error bars); ``notes``: a text beside each point; ``joined``: a line through
    the points in their order. ``front``: the group's Pareto front, ``(cost, accuracy)``
    pairs cheapest first (:func:`pareto_frontier`), drawn in the group's colour as a
    dashed step line through ringed markers; a series with a front and no points draws the
    front only.
    """

    label: str
    costs: Sequence[float] = ()
    accuracies: Sequence[float] = ()
    errors: Sequence[float] | None = None
    notes: Sequence[str] | None = None
    joined: bool = False
    front: Sequence[tuple[float, float]] = ()


_DPI = 120
_MARKERS = "osD^v<>PX*"
_NOTE_FONT = 8
# Where a note may sit around its point, tried in this order at growing distances: the
# four diagonals, then beside, above and below (offsets in points; x and y as signs).
_DIRECTIONS = ((1, 1), (1, -1), (-1, 1), (-1, -1), (1, 0), (-1, 0), (0, 1), (0, -1))
_DISTANCES = (1.0, 2.0, 3.5, 5.0, 7.0)


def accuracy_cost_figure(
    series: Sequence[Series],
    *,
    title: str,
    xlabel: str = "cost per question (USD)",
    empty: str = "nothing to plot",
    key: Sequence[str] = (),
) -> Figure:
    """The figure :func:`plot_accuracy_cost` saves, laid out and ready to draw.

    Layout contract (what the tests hold): the title (wrapped to the figure's width), the
    axis labels, the legends and every note lie inside the figure; the series legend sits
    under the axes and the ``key`` (one entry per line, long lines wrapped) to their
    right, both outside the axes; each note is placed inside the axes next to its point,
    at the first of a few candidate positions (nearest first) that overlaps no other note
    and no marker, with a thin leader line when it had to move away from its point. Only
    when every candidate collides is the least-overlapping one taken.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D
    except ImportError as exc:
        raise RuntimeError(
            "plotting needs matplotlib: pip install 'conductor-gym[leaderboard]'"
        ) from exc
    key_lines = [textwrap.fill(k, 52, subsequent_indent="     ") for k in key]
    height = max(5.5, 1.6 + 0.16 * sum(k.count("\n") + 1 for k in key_lines))
    width = 11.5 if key_lines else 8.0
    fig = Figure(figsize=(width, height), dpi=_DPI, layout="constrained")
    canvas: Any = FigureCanvasAgg(fig)  # its draw methods are untyped
    ax = fig.add_subplot()
    costs = [c for s in series for c in (*s.costs, *(x for x, _ in s.front))]
    right = 1.15 * max(costs, default=0.0) or 1.0
    points: list[tuple[float, float, float, float]] = []  # x, y (%), error (%), radius (pt)
    notes: list[tuple[str, float, float]] = []
    for i, s in enumerate(series):
        color = None
        if s.costs:
            ys = [100 * a for a in s.accuracies]
            errors = None if s.errors is None else [100 * e for e in s.errors]
            bars = ax.errorbar(
                s.costs, ys, yerr=errors, fmt=_MARKERS[i % len(_MARKERS)],
                linestyle="-" if s.joined else "none", capsize=3, label=s.label,
            )  # fmt: skip
            color = bars[0].get_color()
            spread = errors or [0.0] * len(ys)
            points += [(x, y, e, 4.0) for x, y, e in zip(s.costs, ys, spread, strict=False)]
            notes += [(t, x, y) for t, x, y in zip(s.notes or (), s.costs, ys, strict=False)]
        if s.front:
            # The front holds from each of its points until a dearer one does better, and
            # from the last one on: spending more buys no accuracy beyond it.
            xs = [x for x, _ in s.front] + [right]
            ys = [100 * y for _, y in s.front]
            ax.step(
                xs, [*ys, ys[-1]], where="post", linestyle="--", linewidth=1, alpha=0.7,
                color=color or "grey", label=f"{s.label}: Pareto front" if s.costs else s.label,
            )  # fmt: skip
            ax.scatter(
                xs[:-1], ys, s=160, facecolors="none", edgecolors=color or "grey", linewidths=1,
            )  # fmt: skip
            points += [(x, y, 0.0, 7.0) for x, y in zip(xs[:-1], ys, strict=False)]
    if costs and min(costs) > 0 and max(costs) / min(costs) > 20:
        ax.set_xscale("log")
    else:
        ax.set_xlim(left=0, right=right)
    ax.set_ylim(0, 100)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("accuracy (%)")
    ax.grid(True, alpha=0.3)
    columns = max(1, int(width * 72 / (0.55 * 11)))
    fig.suptitle("\n".join(textwrap.fill(line, columns) for line in title.split("\n")), size=11)
    if costs:
        handles, labels = ax.get_legend_handles_labels()
        fig.legend(handles, labels, loc="outside lower center", ncols=min(2, len(labels)),
                   fontsize=8)  # fmt: skip
    else:
        ax.text(0.5, 0.5, empty, ha="center", transform=ax.transAxes)
    if key_lines:
        blank = [Line2D([], [], linestyle="none") for _ in key_lines]
        fig.legend(blank, key_lines, loc="outside right upper", handlelength=0,
                   handletextpad=0, fontsize=8, frameon=False)  # fmt: skip
    # Lay the figure out once, then freeze it, so that notes are placed against the final
    # positions of the points.
    canvas.draw()
    ax.set_xlim(ax.get_xlim())
    fig.set_layout_engine("none")
    _place_notes(ax, canvas.get_renderer(), notes, points)
    return fig


def _place_notes(
    ax: Any,
    renderer: Any,
    notes: Sequence[tuple[str, float, float]],
    points: Sequence[tuple[float, float, float, float]],
) -> None:
    """Annotate each ``(text, x, y)`` of ``notes`` at the first free candidate position
    (:func:`accuracy_cost_figure`); markers and error bars of ``points`` are obstacles,
    and a leader line may not cross a note placed before."""
    from matplotlib.path import Path as Line
    from matplotlib.transforms import Bbox

    scale = ax.figure.dpi / 72  # display pixels per point
    area = ax.get_window_extent(renderer)
    obstacles = []
    for x, y, error, radius in points:
        (px, low), (_, high) = ax.transData.transform([(x, y - error), (x, y + error)])
        r = radius * scale
        obstacles.append(Bbox([[px - r, min(low, high) - r], [px + r, max(low, high) + r]]))
    placed: list[Any] = []
    leaders: list[Any] = []
    for text, x, y in notes:
        px, py = ax.transData.transform((x, y))
        best: tuple[float, tuple[float, float], str, str, Any] | None = None
        for distance, (dx, dy) in itertools.product(_DISTANCES, _DIRECTIONS):
            offset = (dx * 6 * distance, dy * 5 * distance)
            ha = {1: "left", 0: "center", -1: "right"}[dx]
            va = {1: "bottom", 0: "center", -1: "top"}[dy]
            note = ax.annotate(
                text, (x, y), textcoords="offset points", xytext=offset, fontsize=_NOTE_FONT,
                ha=ha, va=va,
            )  # fmt: skip
            box = note.get_window_extent(renderer).padded(1.0)
            note.remove()
            penalty = sum(_overlap(box, other) for other in (*placed, *obstacles))
            if not (area.contains(box.x0, box.y0) and area.contains(box.x1, box.y1)):
                penalty += 1e9
            penalty += 100 * sum(line.intersects_bbox(box, filled=False) for line in leaders)
            leader = Line([(px + offset[0] * scale, py + offset[1] * scale), (px, py)])
            if distance > 1:
                penalty += 100 * sum(leader.intersects_bbox(b, filled=False) for b in placed)
            if best is None or penalty < best[0]:
                best = (penalty, offset, ha, va, leader)
            if penalty == 0:
                break
        assert best is not None
        _, offset, ha, va, leader = best
        leader_line = {"arrowstyle": "-", "linewidth": 0.5, "color": "0.45", "shrinkA": 1,
                       "shrinkB": 3}  # fmt: skip
        note = ax.annotate(
            text, (x, y), textcoords="offset points", xytext=offset, fontsize=_NOTE_FONT,
            ha=ha, va=va, arrowprops=leader_line if max(map(abs, offset)) > 6 else None,
        )  # fmt: skip
        placed.append(_text_box(note, renderer).padded(1.0))
        if note.arrow_patch is not None:
            leaders.append(leader)


def _text_box(note: Any, renderer: Any) -> Any:
    """A note's text alone, in display units (an annotation's own extent adds its line)."""
    from matplotlib.text import Text

    note.update_positions(renderer)
    return Text.get_window_extent(note, renderer)


def _overlap(a: Any, b: Any) -> float:
    """The area two display boxes share (0 when they do not meet)."""
    width = min(a.x1, b.x1) - max(a.x0, b.x0)
    height = min(a.y1, b.y1) - max(a.y0, b.y0)
    return width * height if width > 0 and height > 0 else 0.0


def plot_accuracy_cost(
    series: Sequence[Series],
    path: str | os.PathLike[str],
    *,
    title: str,
    xlabel: str = "cost per question (USD)",
    empty: str = "nothing to plot",
    key: Sequence[str] = (),
) -> Path:
    """The project's one accuracy-vs-cost plot (the leaderboard's and the cost sweep's):
    accuracy (%) against cost, each :class:`Series` with its marker, notes and front, to
    the PNG ``path`` (matplotlib, the ``leaderboard`` extra, imported only here). The
    cost axis is logarithmic when the costs span more than 20 times, else linear from 0;
    with no point at all the plot says ``empty``. ``key``: lines shown beside the axes,
    saying what short notes stand for (the leaderboard numbers its points with their
    rank and lists the names there). The layout (nothing clipped, no two notes
    overlapping) is :func:`accuracy_cost_figure`'s. Returns the path."""
    fig = accuracy_cost_figure(series, title=title, xlabel=xlabel, empty=empty, key=key)
    target = Path(path)
    fig.savefig(target, dpi=_DPI, metadata={"Software": None})
    return target


def plot_frontier(
    points: Sequence[FrontierPoint],
    path: str | os.PathLike[str],
    *,
    title: str = "accuracy against cost per question",
    note: str | None = None,
) -> Path:
    """Draw ``points`` and their Pareto front (:func:`pareto_front`) to the PNG ``path``
    with :func:`plot_accuracy_cost`; return the path.

    Each agent (by ``label``) is one series; an agent whose points differ across prices is
    joined in price order and its points annotated with ``λ``, any other is annotated with
    its label once. ``note`` is a line of small text under the title (the suite and pool,
    say).
    """
    if not points:
        raise ConfigurationError("points: nothing to plot")
    by_agent: dict[str, list[FrontierPoint]] = {}
    for point in points:
        by_agent.setdefault(point.label, []).append(point)
    series = []
    for label, group in by_agent.items():
        group = sorted(group, key=lambda p: p.cost_lambda)
        xs = [p.cost_per_question_usd for p in group]
        ys = [p.accuracy for p in group]
        moves = len(set(zip(xs, ys, strict=True))) > 1
        notes = [f"λ={p.cost_lambda:g}" for p in group] if moves else [label]
        series.append(Series(label, xs, ys, notes=notes, joined=moves))
    front = [(p.cost_per_question_usd, p.accuracy) for p in pareto_front(points)]
    series.append(Series("Pareto front", front=front))
    return plot_accuracy_cost(series, path, title=title if note is None else f"{title}\n{note}")


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
