"""The ``yardstick-pools`` block of ``docs/training-cpu.md``: the tabular yardstick
(``ideal_learner``) on both pools of simulator v3.1, with the best fixed plan and the
adaptive oracle beside it, on ``cpu-adapt``'s training and held-out episodes::

    python -m conductor_gym.trainers.trl.ideal_learner --recipe cpu-adapt --pool sim-paper \\
        --seeds 0,1 --steps 1000 --marks 20,100,500,1000 --beside
    python -m conductor_gym.trainers.trl.ideal_learner --recipe cpu-adapt --pool sim-paper \\
        --k 4 --shuffle-workers --seeds 0,1 --steps 1000 --marks 20,100,500,1000 --beside

(about 10 minutes for both on one core). :func:`settings_line` is the block's first paragraph:
``tests/trainers/test_yardstick_pools.py`` compares it with the doc in the normal suite,
so a change of the generator's settings without a regeneration fails there; the full
regeneration is marked ``figures``.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from conductor_gym.trainers.trl import ideal_learner  # type: ignore[import-not-found]

from conductor_gym.bench.readme_figures import WIDTH, wrap
from conductor_gym.core.config import EnvConfig

RECIPE = "cpu-adapt"
SEEDS: tuple[int, ...] = (0, 1)
SETTINGS = ideal_learner.LearnerSettings(steps=1000, marks=(20, 100, 500, 1000))
BESIDE = ideal_learner.Beside()

POOLS: dict[str, EnvConfig] = {
    "default pool (all 7, fixed ids)": EnvConfig(pool="sim-paper", max_steps=3),
    "randomised pool (4 of 7, shuffled ids)": EnvConfig(
        pool="sim-paper", k=4, shuffle_workers=True, max_steps=3
    ),
}
"""The two pools of the paper's settings on the current simulator (``sim-paper``)."""

COMMAND = (
    "python -m conductor_gym.trainers.trl.ideal_learner --recipe cpu-adapt --pool sim-paper "
    "[--k 4 --shuffle-workers] --seeds 0,1 --steps 1000 --marks 20,100,500,1000 --beside"
)


def settings_line(
    settings: ideal_learner.LearnerSettings = SETTINGS, seeds: Sequence[int] = SEEDS
) -> str:
    """The block's first line: what was run (the cheap check compares it with the doc)."""
    return (
        f"Held-out accuracy on `{RECIPE}`'s episodes (tasks 0-159 x 8 rollouts), simulator "
        f"v3.1; yardstick: mean of seeds {', '.join(map(str, seeds))} (lowest-highest), "
        f"{settings.prompts_per_step} prompts x {settings.num_generations} samples a step, "
        f"lr {settings.learning_rate:g}; in brackets, minus `best-single`:"
    )


def format_block(
    reports: Mapping[str, Mapping[str, Any]],
    settings: ideal_learner.LearnerSettings = SETTINGS,
    seeds: Sequence[int] = SEEDS,
) -> str:
    """One table, a column per pool (``reports``: pool label -> ``ideal_learner.run``'s
    report with ``beside``), then the plans beside it."""
    labels = list(reports)
    lines = [
        wrap(settings_line(settings, seeds)),
        "",
        "| held-out accuracy | " + " | ".join(labels) + " |",
        "|---|" + "---|" * len(labels),
    ]
    curves = {label: list(r["curves"].values()) for label, r in reports.items()}
    first = curves[labels[0]][0]
    for index, point in enumerate(first):
        cells = []
        for label in labels:
            at = [curve[index]["accuracy"] for curve in curves[label]]
            mean = sum(at) / len(at)
            best = reports[label]["best_single"]["accuracy"]
            cells.append(f"{mean:.3f} ({min(at):.3f}-{max(at):.3f}) [{100 * (mean - best):+.1f}]")
        lines.append(
            f"| yardstick after {point['step']:,} steps ({point['episodes']:,} episodes) | "
            + " | ".join(cells)
            + " |"
        )
    lines.append(
        "| `best-single` | "
        + " | ".join(
            f"{r['best_single']['accuracy']:.3f} ± {r['best_single']['accuracy_se']:.3f}"
            for r in reports.values()
        )
        + " |"
    )
    for name in ("best fixed plan", "adaptive oracle"):
        lines.append(
            f"| {name} | "
            + " | ".join(
                f"{r['beside'][name]['accuracy']:.3f} ± {r['beside'][name]['accuracy_se']:.3f} "
                f"[{100 * r['beside'][name]['gain']:+.1f} ± "
                f"{100 * r['beside'][name]['gain_se']:.1f} paired]"
                for r in reports.values()
            )
            + " |"
        )
    lines.append("")
    for label, r in reports.items():
        fixed = r["beside"]["best fixed plan"]["plan"]
        oracle = r["beside"]["adaptive oracle"]["plan"]
        lines.append(
            textwrap.fill(
                f"- {label}: best fixed plan `{fixed}`; adaptive oracle (rank #1 = the drawn "
                f"worker best on the family) {oracle}.",
                width=WIDTH,
                subsequent_indent="  ",
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return "\n".join(lines)


def pools_block(
    settings: ideal_learner.LearnerSettings = SETTINGS,
    seeds: Sequence[int] = SEEDS,
    beside: Any = BESIDE,
) -> str:
    """Run the yardstick and the rows beside it on both pools; the block's text."""
    reports = {
        label: ideal_learner.run(RECIPE, settings, seeds, env=env, beside=beside)
        for label, env in POOLS.items()
    }
    return format_block(reports, settings, seeds)
