"""The shared pieces of fitting a simulated pool (:mod:`conductor_gym.simlab.fit`): its
error, the single-call reader, the profile of an episode and the estimate types.

Contract.

* :func:`worker_names` maps ``Model i`` to a worker name for every episode of a run, and
  only when the run shows every worker in pool order (``k`` equal to the number of
  workers, ``shuffle`` off); otherwise it is ``None`` and only a re-play
  (:mod:`conductor_gym.simlab.fit_steps`) says which worker answered.
* :func:`single_calls`: the scored episodes whose first plan is one call to one worker
  and that have no later round, with their worker's name, when the subtask is a plain
  request to solve (:func:`plain`): no answer asserted in it, no request to check,
  restate or do anything else (those are steps of their own kind, read by a re-play).
* :func:`profile_of`: a procedural family's profile (``FAMILIES[family].profile``), else
  the benchmark when it is a simulator profile, else the domain.
* :class:`AccuracyEstimate` is ``correct / n`` with its binomial standard error and 95%
  Wilson interval; :class:`Estimate` any other fitted number with its standard error,
  95% interval, the episodes or steps behind it, the prior it replaces and whether the
  pool file carries it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from conductor_gym.bench.results import EpisodeRecord, Results
from conductor_gym.core.reward import Outcome
from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import PlanParseError, parse_plan
from conductor_gym.sim.context import read
from conductor_gym.sim.profiles import IN_DOMAIN, OUT_OF_DOMAIN
from conductor_gym.sim.requests import recognise_subtask
from conductor_gym.tasks.procedural.source import FAMILIES

__all__ = [
    "Z95",
    "AccuracyEstimate",
    "Estimate",
    "SimFitError",
    "plain",
    "profile_of",
    "single_calls",
    "wilson_interval",
    "worker_names",
]

Z95 = 1.959963984540054
"""The two-sided 95% normal quantile of the intervals."""


class SimFitError(ConfigurationError):
    """Recorded results or a pool file that cannot be fitted or scored."""


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials (``(0, 1)`` for ``n = 0``)."""
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def profile_of(record: EpisodeRecord) -> str:
    """The simulator profile an episode's task uses (module docstring)."""
    if record.domain in FAMILIES:
        return FAMILIES[record.domain].profile
    if record.benchmark in (*IN_DOMAIN, *OUT_OF_DOMAIN):
        return record.benchmark
    return record.domain


def worker_names(results: Results) -> list[str] | None:
    """``Model i`` -> worker name for every episode, or ``None`` when the run drew k of n
    or shuffled ids (the map is then not recorded)."""
    names = [str(w["name"]) for w in results.pool.get("workers", [])]
    if not names and results.workers is not None:
        names = [w.name for w in results.workers]
    k = results.pool.get("k", len(names))
    if not names or k != len(names) or results.pool.get("shuffle", False):
        return None
    return names


def plain(subtask: str) -> bool:
    """Whether ``subtask`` asks to solve (or asks nothing) and asserts no answer, as the
    simulator reads it."""
    if recognise_subtask(subtask).kind not in ("solve", "none"):
        return False
    return not read((("user", subtask),)).candidates


def single_calls(results: Results) -> tuple[list[tuple[str, EpisodeRecord]], int]:
    """The single-call episodes of ``results`` with their worker names, and how many
    otherwise scored episodes were skipped (multi-step plans, recursion, unknown ids)."""
    names = worker_names(results)
    found: list[tuple[str, EpisodeRecord]] = []
    skipped = 0
    for record in results.episodes:
        if record.outcome not in (Outcome.CORRECT, Outcome.WRONG):
            continue
        if names is None or record.steps != 1 or record.worker_calls != 1 or record.followups:
            skipped += 1
            continue
        try:
            plan = parse_plan(record.completion, len(names), max_steps=1)
        except PlanParseError:
            skipped += 1
            continue
        if not plain(plan.subtasks[0]):
            skipped += 1
            continue
        found.append((names[plan.model_ids[0]], record))
    return found, skipped


@dataclass(frozen=True)
class AccuracyEstimate:
    """A worker's single-call accuracy on one profile: ``correct`` of ``n`` episodes,
    the estimate ``correct / n``, its binomial standard error and 95% Wilson interval."""

    correct: int
    n: int

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0

    @property
    def se(self) -> float:
        p = self.accuracy
        return math.sqrt(p * (1 - p) / self.n) if self.n else math.inf

    @property
    def interval(self) -> tuple[float, float]:
        return wilson_interval(self.correct, self.n)


@dataclass(frozen=True)
class Estimate:
    """One fitted number: ``value`` with standard error ``se`` and 95% interval
    ``(low, high)`` from ``n`` observations (episodes, steps or task pairs, ``unit``);
    ``prior`` is the simulator's value it replaces; ``written`` says whether the pool file
    carries it (otherwise it is reported only, with ``note`` saying why)."""

    value: float
    se: float
    n: int
    low: float
    high: float
    prior: float | None = None
    unit: str = "steps"
    written: bool = True
    note: str = ""

    @classmethod
    def normal(
        cls,
        value: float,
        se: float,
        n: int,
        *,
        bounds: tuple[float, float] = (-math.inf, math.inf),
        prior: float | None = None,
        unit: str = "steps",
    ) -> Estimate:
        """``value +- 1.96 se``, clipped to ``bounds`` (the value too)."""
        low, high = bounds
        clipped = min(high, max(low, value))
        return cls(
            value=clipped,
            se=se,
            n=n,
            low=max(low, clipped - Z95 * se),
            high=min(high, clipped + Z95 * se),
            prior=prior,
            unit=unit,
        )

    @classmethod
    def proportion(
        cls, k: int, n: int, *, prior: float | None = None, unit: str = "steps"
    ) -> Estimate:
        """``k / n`` with its binomial standard error and Wilson interval."""
        p = k / n if n else 0.0
        low, high = wilson_interval(k, n)
        se = math.sqrt(p * (1 - p) / n) if n else math.inf
        return cls(value=p, se=se, n=n, low=low, high=high, prior=prior, unit=unit)
