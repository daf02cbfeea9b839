"""What a training run shows a person: its curves (a PNG) and the plans it writes (a table).

:func:`plot_curves` draws five panels over the training step from a Hugging Face
``Trainer``'s ``state.log_history`` (TRL 1.16's ``GRPOTrainer`` logs, averaged per
logging step): the batch reward, accuracy, parse-failure rate, steps per plan and worker
calls per plan, each as the logged values and a moving average, with held-out
evaluations marked on the accuracy panel. :func:`read_log_history` loads that history
from a checkpoint's ``trainer_state.json``.

:func:`plan_statistics` summarises the plans a conductor wrote, per task family (and over
all of them): how many are invalid, how many steps they take, which workers each step
position picks, how steps see each other (access patterns), and what each step asks of
its worker as the simulated workers read it (:mod:`conductor_gym.sim.instructions`).
:func:`plan_table` renders those statistics as a markdown table.

matplotlib (the ``leaderboard`` extra, which the ``trl`` extra includes) is imported
only inside :func:`plot_curves`, through the Agg canvas: no pyplot, no global backend
switch.

For a finished run (a :class:`~conductor_gym.trainers.trl.recipes.common.TrainResult`),
:func:`summary` is its text summary and :func:`write_reports` writes its ``curves.png``
and ``plans.md``.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

from conductor_gym.plan import Access, Plan
from conductor_gym.sim.instructions import classify
from conductor_gym.sim.perception import find_problems

from .worker_choice import choice_rates, choice_table

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .recipes.common import TrainResult

__all__ = [
    "ALL",
    "PANELS",
    "FamilyStats",
    "Panel",
    "PlanRow",
    "access_pattern",
    "curve",
    "plan_statistics",
    "plan_table",
    "plot_curves",
    "read_log_history",
    "step_role",
    "summary",
    "write_reports",
]


# ------------------------------------------------------------------------------- curves


@dataclass(frozen=True)
class Panel:
    """One panel of :func:`plot_curves`.

    Attributes:
        title: The panel's title.
        keys: The log keys it plots, in order of preference: the first one any entry
            holds is drawn.
        ylabel: The y axis label.
        share: A share in [0, 1], drawn as a percentage on a fixed 0-100 % axis.
        color: The line colour.
    """

    title: str
    keys: tuple[str, ...]
    ylabel: str
    share: bool
    color: str


PANELS: tuple[Panel, ...] = (
    # One reward function named "conductor" (conductor_gym.trainers.trl.reward): TRL logs
    # its batch mean as rewards/conductor/mean and the weighted total as "reward".
    Panel("Batch reward", ("rewards/conductor/mean", "reward"), "mean reward", False, "#1f77b4"),
    Panel("Accuracy", ("conductor/accuracy",), "correct answers", True, "#2ca02c"),
    Panel(
        "Parse failures",
        ("conductor/parse_failure_rate",),
        "invalid plans",
        True,
        "#d62728",
    ),
    Panel("Steps per plan", ("conductor/steps_per_plan",), "steps (valid plans)", False, "#9467bd"),
    Panel("Worker calls per plan", ("conductor/worker_calls",), "worker calls", False, "#ff7f0e"),
)
"""The panels of :func:`plot_curves`, in drawing order."""

_REWARD_STD = "reward_std"


def curve(log_history: Sequence[Mapping[str, Any]], key: str) -> tuple[list[int], list[float]]:
    """``(steps, values)`` of ``key`` over training, in log order.

    Entries without an integer ``step``, without ``key``, or whose value is not a finite
    number (TRL logs ``None`` when every value of a logging step was NaN) are skipped.
    """
    steps: list[int] = []
    values: list[float] = []
    for entry in log_history:
        step, value = entry.get("step"), entry.get(key)
        if not isinstance(step, int) or isinstance(step, bool):
            continue
        if not isinstance(value, int | float) or isinstance(value, bool):
            continue
        if not math.isfinite(value):
            continue
        steps.append(step)
        values.append(float(value))
    return steps, values


def _smoothed(values: Sequence[float], window: int) -> list[float]:
    """Centred moving average over ``window`` points (shrinking at the ends)."""
    half = window // 2
    out: list[float] = []
    for i in range(len(values)):
        part = values[max(0, i - half) : i + half + 1]
        out.append(sum(part) / len(part))
    return out


def _window(n: int, smooth: int | None) -> int:
    """The moving-average window: ``smooth``, or about a tenth of the points (odd, >= 3)."""
    if smooth is not None:
        return smooth
    return max(3, (n // 10) | 1) if n >= 6 else 1


def read_log_history(path: str | Path) -> list[dict[str, Any]]:
    """The ``log_history`` of a ``trainer_state.json`` (a checkpoint folder's, or the file).

    Raises:
        FileNotFoundError: No such file.
        ValueError: The file holds no ``log_history`` list.
    """
    path = Path(path)
    if path.is_dir():
        path = path / "trainer_state.json"
    state = json.loads(path.read_text(encoding="utf-8"))
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise ValueError(f"{path} has no 'log_history' list (not a trainer_state.json?)")
    return [e for e in history if isinstance(e, dict)]


def _format_value(value: float, share: bool) -> str:
    return f"{100 * value:.0f}%" if share else f"{value:.2f}"


def _first_logged(
    log_history: Sequence[Mapping[str, Any]], panel: Panel
) -> tuple[str, list[int], list[float]] | None:
    """The first of ``panel.keys`` that some entry logs, with its curve."""
    for key in panel.keys:
        steps, values = curve(log_history, key)
        if steps:
            return key, steps, values
    return None


def plot_curves(
    log_history: Sequence[Mapping[str, Any]],
    path: str | Path,
    *,
    title: str | None = None,
    evals: Sequence[tuple[int, float, str]] = (),
    smooth: int | None = None,
    raw: bool = True,
) -> Path:
    """Write the run's training curves to ``path`` as a PNG and return the path.

    Five panels over the training step (:data:`PANELS`): batch reward (with the spread
    of the batch's rewards, ``reward_std``, as a band when logged), accuracy,
    parse-failure rate, steps per valid plan and worker calls per plan; a sixth panel
    sums each curve up as its smoothed first and last values, and lists ``evals``.
    Entries without ``step`` or a panel's key are skipped (:func:`curve`); a panel that
    no entry logs says so.

    Args:
        log_history: ``trainer.state.log_history`` (or :func:`read_log_history`).
        path: Where to write the PNG; its folder must exist.
        title: The figure's title (default ``"GRPO training curves"``).
        evals: ``(step, accuracy, label)`` points drawn as labelled markers on the
            accuracy panel, e.g. held-out greedy accuracy before and after training.
        smooth: Moving-average window in logged points (default: about a tenth of the
            points, at least 3; no smoothed line under 6 points; 1 turns it off).
        raw: Draw the logged values as a thin line under the smoothed one (always
            drawn when there is no smoothed line).

    Raises:
        ValueError: No entry holds any panel's key (the error names them), or a
            ``smooth`` below 1.
    """
    found = [_first_logged(log_history, p) for p in PANELS]
    if all(f is None for f in found):
        wanted = [k for p in PANELS for k in p.keys]
        raise ValueError(
            f"no log entry with a 'step' holds any of the keys {wanted}: "
            f"nothing to plot (is this a GRPOTrainer's log_history?)"
        )
    if smooth is not None and smooth < 1:
        raise ValueError(f"smooth must be a window of at least 1 point, got {smooth}")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(14, 8), layout="constrained")
    fig.suptitle(title or "GRPO training curves", fontsize=15, fontweight="bold")
    axes = fig.subplots(2, 3).ravel()
    summary: list[tuple[str, str, str]] = []
    for ax, panel, logged in zip(axes, PANELS, found, strict=False):
        row = _draw_panel(ax, panel, logged, log_history, smooth=smooth, raw=raw)
        if row is not None:
            summary.append(row)
        if panel.keys[0] == "conductor/accuracy" and evals:
            _draw_evals(ax, evals)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best", fontsize=8, frameon=False)
    _draw_summary(axes[len(PANELS)], summary, evals)
    path = Path(path)
    fig.savefig(path, format="png", dpi=110, metadata={"Software": None})
    return path


def _draw_panel(
    ax: Axes,
    panel: Panel,
    logged: tuple[str, list[int], list[float]] | None,
    log_history: Sequence[Mapping[str, Any]],
    *,
    smooth: int | None,
    raw: bool,
) -> tuple[str, str, str] | None:
    """Draw one panel; return its summary row ``(title, start, end)`` (``None`` if not
    logged)."""
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    ax.grid(True, alpha=0.25)
    ax.spines[["top", "right"]].set_visible(False)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(panel.title, fontsize=12, loc="left")
    ax.set_xlabel("training step")
    ax.set_ylabel(panel.ylabel + (" (%)" if panel.share else ""))
    if panel.share:
        ax.set_ylim(-0.02, 1.02)
        ax.yaxis.set_major_formatter(PercentFormatter(1.0, decimals=0))
    if logged is None:
        ax.text(0.5, 0.5, "not logged:\n" + "\n".join(panel.keys), ha="center",
                va="center", transform=ax.transAxes, color="0.5")  # fmt: skip
        return None
    key, steps, values = logged
    window = _window(len(values), smooth)
    if key.startswith("reward"):
        _draw_reward_band(ax, log_history, panel.color)
    if raw or window == 1:
        ax.plot(steps, values, color=panel.color, alpha=0.35 if window > 1 else 0.9,
                linewidth=1.0, marker="o" if len(values) <= 30 else None, markersize=3,
                label="logged")  # fmt: skip
    line = values
    if window > 1:
        line = _smoothed(values, window)
        ax.plot(steps, line, color=panel.color, linewidth=2.4,
                label=f"moving average of {window}")  # fmt: skip
    if key.startswith("reward") and min(values) >= 0 and max(values) <= 1:
        ax.set_ylim(0, 1.02)  # the env's reward without cost terms is in [0, 1]
    elif not panel.share and min(values) >= 0:
        ax.set_ylim(bottom=0, top=max(values) * 1.1 or 1.0)
    return panel.title, _format_value(line[0], panel.share), _format_value(line[-1], panel.share)


def _draw_reward_band(ax: Axes, log_history: Sequence[Mapping[str, Any]], color: str) -> None:
    """Mean reward +- the batch's standard deviation of rewards, where both are logged."""
    means = dict(zip(*curve(log_history, "reward"), strict=True))
    stds = dict(zip(*curve(log_history, _REWARD_STD), strict=True))
    steps = [s for s in means if s in stds]
    if len(steps) < 2:
        return
    ax.fill_between(
        steps,
        [means[s] - stds[s] for s in steps],
        [means[s] + stds[s] for s in steps],
        color=color,
        alpha=0.08,
        linewidth=0,
        label="± 1 sd within the batch",
    )


def _draw_evals(ax: Axes, evals: Sequence[tuple[int, float, str]]) -> None:
    for i, (step, accuracy, label) in enumerate(evals):
        ax.plot([step], [accuracy], marker="D", markersize=9, color="black",
                markerfacecolor="gold", linestyle="none", zorder=5,
                label="held-out evaluation" if i == 0 else None)  # fmt: skip
        ax.annotate(
            f"{label}: {100 * accuracy:.1f}%",
            (step, accuracy),
            textcoords="offset points",
            xytext=(8, -14 if accuracy > 0.85 else 8),
            fontsize=9,
            fontweight="bold",
        )


def _draw_summary(
    ax: Axes, rows: Sequence[tuple[str, str, str]], evals: Sequence[tuple[int, float, str]]
) -> None:
    """The sixth panel: each curve's smoothed start and end, then the evaluations."""
    ax.axis("off")
    ax.set_title("Start → end (smoothed)", fontsize=12, loc="left")
    cells = [list(r) for r in rows]
    cells += [[f"held-out: {label}", f"step {step}", f"{100 * acc:.1f}%"]
              for step, acc, label in evals]  # fmt: skip
    table = ax.table(cellText=cells, colLabels=["curve", "start", "end"], loc="upper center",
                     cellLoc="left", colWidths=[0.58, 0.21, 0.21])  # fmt: skip
    table.auto_set_font_size(False)
    table.set_fontsize(10)
    table.scale(1.0, 1.6)
    for (row, _), cell in table.get_celld().items():
        cell.set_edgecolor("0.85")
        if row == 0:
            cell.set_text_props(fontweight="bold")


# -------------------------------------------------------------------------- statistics

PlanRow: TypeAlias = tuple[str, Plan | None] | tuple[str, str | None, Plan | None]
"""``(family, plan)`` or ``(family, question, plan)``; ``plan`` is ``None`` for an invalid
completion, ``question`` (when given) the task's question."""


class FamilyStats(TypedDict):
    """The statistics of one family's plans (:func:`plan_statistics`).

    Shares are over all the family's plans, invalid ones included; ``mean_steps`` is
    over the valid ones (as ``conductor/steps_per_plan`` logs it). Per-position counters
    are keyed by the 1-based step position.
    """

    family: str
    plans: int
    invalid: float
    mean_steps: float | None
    multi_step: float
    workers: dict[int, Counter[int]]
    access: Counter[str]
    roles: dict[int, Counter[str]]
    question_verbatim: dict[int, tuple[int, int]] | None


ALL = "all"
"""The family name of the row over every family."""


def _access_text(entry: Access) -> str:
    return entry if entry == "all" else "[" + ",".join(str(j) for j in entry) + "]"


def access_pattern(plan: Plan) -> str:
    """A plan's access list written compactly, e.g. ``[] | [0] | all``."""
    return " | ".join(_access_text(e) for e in plan.access) if plan.access else "(empty plan)"


def step_role(subtask: str) -> str:
    """What ``subtask`` asks of its worker, as a simulated worker reads it: the
    :func:`~conductor_gym.sim.instructions.classify` kind of the subtask with its
    problem statements blanked out (one of
    :data:`~conductor_gym.sim.instructions.REQUESTS`)."""
    return classify(find_problems(subtask).rest).kind


def _unpack(row: PlanRow) -> tuple[str, str | None, Plan | None]:
    if len(row) == 2:
        return row[0], None, row[1]
    if len(row) == 3:
        return row
    raise ValueError(f"a plan row is (family, plan) or (family, question, plan), got {row!r}")


def _family_stats(family: str, rows: Sequence[tuple[str | None, Plan | None]]) -> FamilyStats:
    valid = [p for _, p in rows if p is not None]
    workers: dict[int, Counter[int]] = {}
    roles: dict[int, Counter[str]] = {}
    verbatim: dict[int, list[int]] = {}
    with_question = any(q is not None for q, _ in rows)
    for question, plan in rows:
        if plan is None:
            continue
        for i, (model, subtask) in enumerate(zip(plan.model_ids, plan.subtasks, strict=True)):
            workers.setdefault(i + 1, Counter())[model] += 1
            roles.setdefault(i + 1, Counter())[step_role(subtask)] += 1
            if question is not None:
                tally = verbatim.setdefault(i + 1, [0, 0])
                tally[0] += question in subtask
                tally[1] += 1
    n = len(rows)
    return FamilyStats(
        family=family,
        plans=n,
        invalid=(n - len(valid)) / n,
        mean_steps=sum(len(p) for p in valid) / len(valid) if valid else None,
        multi_step=sum(len(p) >= 2 for p in valid) / n,
        workers=dict(sorted(workers.items())),
        access=Counter(access_pattern(p) for p in valid),
        roles=dict(sorted(roles.items())),
        question_verbatim=(
            {k: (v[0], v[1]) for k, v in sorted(verbatim.items())} if with_question else None
        ),
    )


def plan_statistics(rows: Sequence[PlanRow]) -> list[FamilyStats]:
    """Per-family statistics of the plans in ``rows``, then a row named :data:`ALL` over
    every plan.

    Each row is ``(family, plan)`` or ``(family, question, plan)``: ``family`` is the
    task family (``task.domain``: ``arithmetic``, ``countdown``, ...), ``plan`` the
    parsed :class:`~conductor_gym.plan.Plan` or ``None`` for an invalid completion, and
    ``question`` the task's question, when given, for ``question_verbatim``: per step
    position, ``(subtasks holding the question verbatim, subtasks)`` over the rows that
    gave one (``None`` when no row did).

    ``workers`` counts the model ids each step position picks, ``access`` each plan's
    access pattern (:func:`access_pattern`), ``roles`` the request each position's
    subtask makes (:func:`step_role`). Families are sorted by name.

    Raises:
        ValueError: ``rows`` is empty, or a row is not a 2- or 3-tuple.
    """
    if not rows:
        raise ValueError("plan_statistics needs at least one (family, plan) row")
    groups: dict[str, list[tuple[str | None, Plan | None]]] = {}
    everything: list[tuple[str | None, Plan | None]] = []
    for row in rows:
        family, question, plan = _unpack(row)
        groups.setdefault(family, []).append((question, plan))
        everything.append((question, plan))
    return [_family_stats(f, groups[f]) for f in sorted(groups)] + [_family_stats(ALL, everything)]


def _counts(counter: Counter[Any], name: Any = str, top: int | None = None) -> str:
    ranked = sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0])))
    shown = ranked if top is None else ranked[:top]
    text = ", ".join(f"{name(k)} {v}" for k, v in shown)
    if len(shown) < len(ranked):
        text += f", +{len(ranked) - len(shown)} more"
    return text


def _by_position(per_step: Mapping[int, Counter[Any]], name: Any = str) -> str:
    return "; ".join(f"step {i}: {_counts(c, name)}" for i, c in per_step.items()) or "-"


def plan_table(
    stats: Sequence[FamilyStats],
    *,
    worker_names: Sequence[str] | None = None,
    top_access: int = 4,
) -> str:
    """The statistics of :func:`plan_statistics` as a markdown table, one row per family.

    Workers are written ``M<i>`` (model id ``i``), or by name with ``worker_names``
    (``worker_names[i]`` names model ``i``, e.g. the pool's worker names); each cell
    lists counts by step position, most frequent first (``step 1: M2 31, M0 9; step 2:
    M0 40``). Access patterns beyond the ``top_access`` most frequent are counted as
    ``+k more``. Step roles count the requests of :func:`step_role` in the same way.

    Raises:
        ValueError: A model id has no entry in ``worker_names``.
    """

    def worker(model: int) -> str:
        if worker_names is None:
            return f"M{model}"
        if not 0 <= model < len(worker_names):
            raise ValueError(
                f"worker_names has {len(worker_names)} names, no name for model id {model}"
            )
        return worker_names[model]

    header = [
        "family",
        "plans",
        "invalid",
        "mean steps",
        "≥2 steps",
        "workers by step",
        "access patterns",
        "step roles",
    ]
    has_question = any(s["question_verbatim"] is not None for s in stats)
    if has_question:
        header.append("question verbatim in subtask")
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for s in stats:
        mean = "-" if s["mean_steps"] is None else f"{s['mean_steps']:.2f}"
        cells = [
            f"**{s['family']}**" if s["family"] == ALL else s["family"],
            str(s["plans"]),
            f"{100 * s['invalid']:.0f}%",
            mean,
            f"{100 * s['multi_step']:.0f}%",
            _by_position(s["workers"], worker),
            _counts(s["access"], top=top_access) or "-",
            _by_position(s["roles"]),
        ]
        if has_question:
            verbatim = s["question_verbatim"] or {}
            cells.append("; ".join(f"step {i}: {k}/{n}" for i, (k, n) in verbatim.items()) or "-")
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------- a run


def summary(result: TrainResult) -> str:
    """A short text summary of a run."""
    lines = [
        f"recipe {result.settings.recipe}: "
        + ", ".join(f"{k} {v:.0f}s" for k, v in result.timings.items())
    ]
    if result.precision:
        chosen = "bf16 autocast" if result.precision["bf16"] else "float32"
        lines.append(
            f"precision {chosen} ({result.precision['source']})"
            + (f": {result.precision['reason']}" if "reason" in result.precision else "")
        )
        if (schedule := result.precision.get("schedule")) is not None:
            warm = result.settings.warm_start
            lines.append(
                f"schedule {schedule}: {warm.steps if warm else 0} warm-start steps, "
                f"{result.precision['grpo_steps']} GRPO steps"
            )
    if result.plan_search is not None and result.plan_search["history"]:
        search = result.plan_search["settings"]
        episodes = search["iterations"] * search["population"] * search["tasks_per_plan"]
        lines.append(
            f"plan search: {episodes} training episodes, prior's mode "
            f"{result.plan_search['prior']['mode']} (Model i and role of each step)"
        )
    for name, ev in (("before", result.before), ("after", result.after)):
        if ev is not None:
            lines.append(
                f"{name:6s} greedy reward {ev['mean_reward']:.3f} +- {ev['se']:.3f} "
                f"(accuracy {ev['accuracy']:.3f}, valid {ev['valid_rate']:.2f}, "
                f"first worker {ev['first_worker']}) over {ev['tasks']} tasks"
            )
    if result.improvement is not None:
        lines.append(f"change {result.improvement[0]:+.3f} +- {result.improvement[1]:.3f} (paired)")
    if (change := result.paired.get("change")) is not None:
        accuracy = change["accuracy"]
        lines.append(f"accuracy change {accuracy['mean']:+.3f} +- {accuracy['se']:.3f} (paired)")
    for spec, versus in result.paired.get("versus", {}).items():
        accuracy = versus["accuracy"]
        lines.append(
            f"after minus {spec}: accuracy {accuracy['mean']:+.3f} +- {accuracy['se']:.3f} (paired)"
        )
    for spec, ev in result.baselines.items():
        lines.append(
            f"{spec:9s} reward {ev['mean_reward']:.3f} +- {ev['se']:.3f}, "
            f"accuracy {ev['accuracy']:.3f} +- {ev['accuracy_se']:.3f}"
        )
    if (best := result.versus_best_single) is not None:
        lines.append(
            f"accuracy vs the best single worker ({best['agent']}): "
            f"{best['accuracy_gain']:+.3f} +- {best['se']:.3f} (paired)"
        )
    if result.checkpoint is not None:
        lines.append(f"checkpoint: {result.checkpoint}")
    return "\n".join(lines)


def write_reports(result: TrainResult) -> list[Path]:
    """``curves.png`` (training curves, with the held-out accuracy before and after) and,
    after an evaluation, ``plans.md`` (what the trained policy's plans do, per family, and
    in a drawn or shuffled pool which workers they ask before and after GRPO,
    :mod:`.worker_choice`) in the run's output folder; returns the files written."""
    out = Path(result.settings.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    steps = max((int(entry.get("step", 0)) for entry in result.log_history), default=0)
    evals = [
        (step, float(ev["accuracy"]), f"held-out {name}")
        for step, name, ev in ((0, "before", result.before), (steps, "after", result.after))
        if ev is not None
    ]
    if any("reward" in entry for entry in result.log_history):
        title = f"{result.settings.recipe}: {result.settings.model}"
        written.append(
            plot_curves(result.log_history, out / "curves.png", title=title, evals=evals)
        )
    after = result.evaluations.get("after")
    if after is not None:
        rows = list(zip(after.families, after.questions, after.plans, strict=True))
        orders = set(after.pools)  # one order unless the pool shuffles or draws k of n
        names = list(orders.pop()) if len(orders) == 1 else None
        table = plan_table(plan_statistics(rows), worker_names=names)
        if names is None:  # a drawn or shuffled pool: who each plan asks, by worker name
            for stage in ("before", "after"):
                if (ev := result.evaluations.get(stage)) is not None:
                    choices = zip(ev.families, ev.pools, ev.plans, strict=True)
                    table += f"\nWorker choice {stage} GRPO:\n\n"
                    table += choice_table(choice_rates(list(choices)))
        (out / "plans.md").write_text(table + "\n")
        written.append(out / "plans.md")
    return written
