"""How much a recorded worker's accuracy depends on a problem's structural size, per family
(:mod:`conductor_gym.simlab.fit`): the simulator's structure model fitted, or switched
off, instead of inherited.

Contract. The simulator (v2 and later, :mod:`conductor_gym.sim.difficulty`) makes a
problem of standardised size ``z`` right with probability
``Phi((t - a z) / sqrt(1 - a^2))``, ``a = sqrt(call_correlation * task_correlation *
structure_share)``, where ``t`` is calibrated so that the worker's accuracy over the
family's generated tasks is its ``accuracy`` for the family's profile. Recorded tasks
need not look like the generated ones (a suite of small sums sits at ``z`` about -3), so
the paper's ``structure_share`` (0.6) would lift a fitted accuracy far above what the
worker did on exactly those tasks. :func:`fit_structure` therefore fits, per worker and
family, from the single calls on tasks whose problem the simulator reads:

* for each ``structure_share`` on a grid of twentieths, the ``t`` at which the mean
  predicted accuracy over the *recorded* tasks equals the recorded accuracy, and the
  binomial log-likelihood of the outcomes there;
* the share is the maximum-likelihood one when it beats share 0 by a likelihood-ratio
  test at 5% (``2 * gain > 3.84``), else **0: switched off** (the data cannot identify a
  size effect, as with a handful of tasks of nearly one size, or with every answer right
  or every answer wrong); its interval is the grid's shares within that test of the best;
* the ``accuracy`` written for the family's profile is the one that makes the simulator's
  calibration return this ``t``: the mean of ``Phi((t - a z_q) / sqrt(1 - a^2))`` over the
  family's size quantiles ``z_q`` (:data:`~conductor_gym.sim.difficulty.SIZE_SCALE`).
  With the share switched off it is the recorded accuracy itself.

So a fitted worker scores its recorded accuracy on the recorded tasks in expectation, and
on other tasks of the same source as long as their sizes look like the recorded ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from conductor_gym.bench.replay import ReplayError, recorded_task, run_sources
from conductor_gym.bench.results import EpisodeRecord, Results
from conductor_gym.sim.difficulty import SIZE_SCALE, size_z
from conductor_gym.sim.perception import find_problems
from conductor_gym.sim.v2 import reads

__all__ = ["LR_CRITICAL", "StructureFit", "call_sizes", "fit_structure"]

LR_CRITICAL = 3.841458820694124
"""The chi-square (1 degree of freedom) 95% quantile of the likelihood-ratio test."""

_GRID = tuple(i / 20 for i in range(21))
_NORMAL = NormalDist()


@dataclass(frozen=True)
class StructureFit:
    """One worker and family (module docstring): ``share`` the fitted
    ``structure_share`` (0 when ``identified`` is false: switched off), ``interval`` the
    shares within the test of the best, ``lr`` twice the log-likelihood gain of the best
    share over 0, ``accuracy`` the number written for the family's profile, from
    ``correct`` of ``n`` recorded single calls."""

    family: str
    n: int
    correct: int
    share: float
    interval: tuple[float, float]
    lr: float
    identified: bool
    accuracy: float
    note: str


def _threshold(zs: Sequence[float], a: float, target: float) -> float:
    scale = math.sqrt(max(1e-9, 1.0 - a * a))
    low, high = -12.0, 12.0
    for _ in range(60):
        mid = (low + high) / 2
        rate = math.fsum(_NORMAL.cdf((mid - a * z) / scale) for z in zs) / len(zs)
        low, high = (mid, high) if rate < target else (low, mid)
    return (low + high) / 2


def _loglik(rows: Sequence[tuple[float, bool]], a: float, t: float) -> float:
    scale = math.sqrt(max(1e-9, 1.0 - a * a))
    total = 0.0
    for z, y in rows:
        p = min(1 - 1e-12, max(1e-12, _NORMAL.cdf((t - a * z) / scale)))
        total += math.log(p if y else 1 - p)
    return total


def fit_structure(
    family: str,
    rows: Sequence[tuple[float, bool]],
    *,
    call_correlation: float,
    task_correlation: float,
) -> StructureFit:
    """Fit ``structure_share`` for one worker and ``family`` from ``rows`` of (standardised
    size, correct) single calls, given the correlations the fitted pool will use (module
    docstring)."""
    n = len(rows)
    k = sum(y for _, y in rows)
    if n == 0 or k in (0, n):
        why = "task sizes not read" if n == 0 else "every answer right or every answer wrong"
        return StructureFit(
            family, n, k, 0.0, (0.0, 1.0), 0.0, False, k / n if n else 0.0,
            f"{why}: no size effect to fit (off)",
        )  # fmt: skip
    zs = [z for z, _ in rows]
    fits = []
    for share in _GRID:
        a = math.sqrt(call_correlation * task_correlation * share)
        t = _threshold(zs, a, k / n)
        fits.append((share, a, t, _loglik(rows, a, t)))
    best = max(fits, key=lambda f: f[3])
    lr = 2 * (best[3] - fits[0][3])
    near = [f[0] for f in fits if 2 * (best[3] - f[3]) <= LR_CRITICAL]
    identified = lr > LR_CRITICAL
    share, a, t, _ = best if identified else fits[0]
    scale = math.sqrt(max(1e-9, 1.0 - a * a))
    quantiles = SIZE_SCALE[family][2]
    accuracy = math.fsum(_NORMAL.cdf((t - a * z) / scale) for z in quantiles) / len(quantiles)
    spread = max(zs) - min(zs)
    note = (
        f"size effect fitted (likelihood ratio {lr:.2f} > {LR_CRITICAL:.2f})"
        if identified
        else f"not identified (likelihood ratio {lr:.2f}, sizes spread {spread:.2f} sd): off"
    )
    return StructureFit(family, n, k, share, (min(near), max(near)), lr, identified, accuracy, note)


def call_sizes(
    results: Sequence[Results], calls: Sequence[tuple[int, str, EpisodeRecord]]
) -> tuple[dict[tuple[int, tuple[str, int, int]], tuple[str, float]], tuple[str, ...]]:
    """Per single call ``(run, worker, record)``, keyed ``(run, record.key)``, the family
    and standardised size of its task's problem as the simulator reads it (tasks it does
    not read are left out), and a note per run whose tasks cannot be read here (their
    calls fit no size effect: it stays off)."""
    sizes: dict[tuple[int, tuple[str, int, int]], tuple[str, float]] = {}
    notes: list[str] = []
    sources: dict[int, Any] = {}
    for index, _, record in calls:
        if index not in sources:
            try:
                sources[index] = run_sources(results[index])
            except ReplayError as exc:
                sources[index] = None
                notes.append(f"{results[index].suite.name}: task sizes not read ({exc})")
        if sources[index] is None:
            continue
        try:
            task = recorded_task(sources[index], record)
        except ReplayError:
            continue
        if not reads(task.domain, task.question):
            continue
        problem = find_problems(task.question).problems[-1]
        sizes[(index, record.key)] = (problem.family, size_z(problem.family, problem.size))
    return sizes, tuple(notes)
