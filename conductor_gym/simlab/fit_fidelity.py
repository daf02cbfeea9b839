"""How well a simulated pool predicts held-out recorded episodes (``conductor-gym sim
fidelity``; :mod:`conductor_gym.simlab.fit` fits the pool).

Contract.

* **Each episode's probability.** Every scored episode is *played* on the pool, single
  calls included: its first plan ``seeds`` times, on its recorded task with its recorded
  reset seed (then ``seed + j * SEED_STRIDE``), each step sent to the worker that ran it
  (:class:`~conductor_gym.simlab.fit_play.Player`); the share graded correct is its
  probability. So the pool's whole model (its structure model on these very tasks among
  it) is scored, not a number copied from the pool file. A single call's worker is read
  from the results (:func:`~conductor_gym.simlab.fit_data.single_calls`); any other
  episode is re-played to read its steps (:mod:`conductor_gym.simlab.fit_steps`; a real
  pool's needs its ``cache``). Episodes with a later round (recursion) are not scored.
* **Cells.** Episodes are grouped by plan shape
  (:func:`~conductor_gym.simlab.fit_steps.plan_shape`), the worker of the last step
  and the task family; per cell, the mean predicted against the observed accuracy, their
  standard errors ``sqrt(q (1 - q) / n)`` each, the cell's Brier score, and a **flag**
  when they differ by more than 2 SE of the difference,
  ``sqrt((obs (1 - obs) + pred (1 - pred)) / n)`` (both are rates over the same ``n``
  tasks: the recorded worker's and the simulated one's).
* **The summary number**, :attr:`Fidelity.score`: the mean absolute error of predicted
  against observed accuracy in percentage points over the cells, weighted by their
  episodes, ``100 * sum n_c |pred_c - obs_c| / sum n_c`` (lower is better; sampling noise
  alone keeps it above 0: :attr:`Fidelity.noise` is what it would be in expectation were
  every cell's difference only its sampling error, ``sqrt(2 / pi)`` SE per cell).
  :attr:`Fidelity.brier`: the mean of ``(p - outcome)^2`` over every scored episode;
  :attr:`Fidelity.calibration`: the episodes binned by ``p`` (tenths), with mean ``p``
  and observed accuracy per bin.
* **Plan effects** (:class:`PlanEffect`), per shape other than a single call: the mean
  over its episodes of (outcome minus the held-out single-call accuracy of the last
  step's worker on that family), observed, against the same under the pool (its
  probability minus its accuracy). ``se`` is the observed effect's standard error (the
  episodes' and the single calls' binomial errors); ``sign_agrees`` is true when the
  observed effect is within 2 SE of 0 (no sign to disagree with) or the predicted one has
  its sign; ``within`` when the two effects differ by at most 2 SE. An episode whose
  worker and family have no held-out single call has no baseline and is left out of the
  effects (not of the cells).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conductor_gym.bench.results import Results
from conductor_gym.plan import parse_plan
from conductor_gym.sim.profiles import SimProfile
from conductor_gym.simlab.fit_data import SimFitError, profile_of, single_calls, worker_names
from conductor_gym.simlab.fit_play import Player
from conductor_gym.simlab.fit_steps import TracedEpisode, observe, plan_shape
from conductor_gym.workers.spec import WorkerSpec

__all__ = ["SINGLE", "CellFidelity", "Fidelity", "PlanEffect", "fidelity"]

SINGLE = "single call"
"""The plan shape of a one-step plan."""


@dataclass(frozen=True)
class CellFidelity:
    """One plan shape, worker (of the last step) and family: the pool's mean predicted
    accuracy, the observed one over ``n`` held-out episodes, and the mean squared error
    of the predictions (that cell's Brier score)."""

    worker: str
    family: str
    profile: str
    n: int
    predicted: float
    observed: float
    brier: float
    shape: str = SINGLE

    @property
    def observed_se(self) -> float:
        return math.sqrt(self.observed * (1 - self.observed) / self.n)

    @property
    def predicted_se(self) -> float:
        return math.sqrt(self.predicted * (1 - self.predicted) / self.n)

    @property
    def se(self) -> float:
        """The standard error of ``predicted - observed`` (module docstring)."""
        return math.hypot(self.observed_se, self.predicted_se)

    @property
    def flagged(self) -> bool:
        """Whether predicted and observed differ by more than 2 SE."""
        return abs(self.predicted - self.observed) > 2 * self.se + 1e-12


@dataclass(frozen=True)
class PlanEffect:
    """A plan shape's effect over single calls, observed and predicted (module docstring)."""

    shape: str
    n: int
    observed: float
    predicted: float
    se: float

    @property
    def sign_agrees(self) -> bool:
        if abs(self.observed) <= 2 * self.se:
            return True
        return math.copysign(1, self.predicted) == math.copysign(1, self.observed)

    @property
    def within(self) -> bool:
        return abs(self.predicted - self.observed) <= 2 * self.se


@dataclass(frozen=True)
class Fidelity:
    """How well a pool predicts held-out episodes (module docstring defines the figures).
    ``missing`` lists recorded workers the pool does not have (their episodes are not
    scored); ``untraced`` counts episodes that could not be re-played."""

    cells: tuple[CellFidelity, ...]
    score: float
    brier: float
    episodes: int
    missing: tuple[str, ...]
    effects: tuple[PlanEffect, ...] = ()
    calibration: tuple[tuple[float, int, float, float], ...] = ()
    untraced: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def noise(self) -> float:
        """The score sampling error alone would give, in expectation (module docstring)."""
        total = sum(c.n for c in self.cells)
        spread = math.fsum(c.n * math.sqrt(2 / math.pi) * c.se for c in self.cells)
        return 100 * spread / total if total else 0.0

    @property
    def flagged(self) -> tuple[CellFidelity, ...]:
        """The cells whose predicted and observed accuracy differ by more than 2 SE."""
        return tuple(c for c in self.cells if c.flagged)

    @property
    def effects_agreeing(self) -> int:
        """Plan shapes whose observed and predicted effects agree in sign."""
        return sum(e.sign_agrees for e in self.effects)

    def format(self) -> str:
        """The cells, the plan effects, the calibration, then the summary."""
        lines = [
            f"{'plan':34} {'worker':22} {'family':20} {'n':>5} {'recorded %':>12} "
            f"{'predicted %':>12} {'diff':>6} {'2 SE':>5} {'brier':>6}"
        ]
        for c in self.cells:
            lines.append(
                f"{c.shape:34} {c.worker:22} {c.family:20} {c.n:5d} "
                f"{100 * c.observed:5.1f} +-{100 * c.observed_se:4.1f} "
                f"{100 * c.predicted:5.1f} +-{100 * c.predicted_se:4.1f} "
                f"{100 * (c.predicted - c.observed):+6.1f} {200 * c.se:5.1f} {c.brier:6.3f}"
                + ("  OFF BY > 2 SE" if c.flagged else "")
            )
        if self.effects:
            lines.append(
                f"plan effects over single calls (points): {'plan':34} {'n':>5} {'obs':>6} "
                f"{'+- se':>6} {'pred':>6} sign size"
            )
            for e in self.effects:
                lines.append(
                    f"{'':42}{e.shape:34} {e.n:5d} {100 * e.observed:6.1f} {100 * e.se:6.1f} "
                    f"{100 * e.predicted:6.1f} {'yes' if e.sign_agrees else 'NO':>4} "
                    f"{'yes' if e.within else 'NO':>4}"
                )
        lines.append(
            f"calibration: {'p (played)':>12} {'episodes':>9} {'mean p %':>9} {'obs %':>6}"
        )
        for low, n, p, o in self.calibration:
            lines.append(
                f"{'':12} {low:5.1f}-{low + 0.1:<5.1f} {n:9d} {100 * p:9.1f} {100 * o:6.1f}"
            )
        lines.append(
            f"fidelity: mean |predicted - observed| accuracy {self.score:.2f} points "
            f"(episode-weighted over cells; sampling noise alone about {self.noise:.2f}), "
            f"Brier {self.brier:.4f}, over {self.episodes} episodes; cells off by more than "
            f"2 SE {len(self.flagged)}/{len(self.cells)}; plan effects agreeing in sign "
            f"{self.effects_agreeing}/{len(self.effects)}"
        )
        if self.missing:
            lines.append(f"not in the pool (not scored): {', '.join(self.missing)}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _pool_specs(pool: str | os.PathLike[str]) -> tuple[WorkerSpec, ...]:
    from conductor_gym.pool.config import load_pool_file, load_preset

    text = str(pool)
    config = (
        load_pool_file(pool) if text.endswith(".toml") or Path(text).exists() else load_preset(text)
    )
    return config.specs


def fidelity(
    pool: str | os.PathLike[str],
    results: Iterable[Results],
    *,
    cache: str | os.PathLike[str] | None = None,
    seeds: int = 4,
) -> Fidelity:
    """Score ``pool`` (a pool file or preset of simulated workers) on the scored episodes
    of ``results`` (module docstring; :class:`Fidelity` defines the figures); ``cache``
    is the response cache a real pool's runs were recorded with; ``seeds`` plays per
    multi-step episode.

    Raises :class:`SimFitError` for a pool worker that is not simulated, or when no
    episode of a worker in the pool can be scored.
    """
    from conductor_gym.sim.worker import make_simulated_worker

    runs = list(results)
    specs = _pool_specs(pool)
    profiles: dict[str, SimProfile] = {}
    for spec in specs:
        if spec.backend != "simulated":
            raise SimFitError(
                f"worker {spec.name!r} has backend {spec.backend!r}: fidelity scores a pool of "
                "simulated workers",
                field="pool",
            )
        profiles[spec.name] = make_simulated_worker(spec).profile
    # (shape, worker, family) -> [(p, outcome)]
    scored: dict[tuple[str, str, str], list[tuple[float, bool]]] = {}
    cell_profile: dict[tuple[str, str, str], str] = {}
    missing: dict[str, None] = {}
    players: dict[int, Player] = {}

    def play(episode: TracedEpisode) -> float:
        if episode.run not in players:
            players[episode.run] = Player(runs[episode.run], specs)
        return players[episode.run].outcome(episode, seeds)

    for index, run in enumerate(runs):
        for name, record in single_calls(run)[0]:
            if name not in profiles:
                missing[name] = None
                continue
            key = (SINGLE, name, record.domain)
            plan = parse_plan(record.completion, len(worker_names(run) or ()), max_steps=1)
            p = play(TracedEpisode(index, record, plan, (name,), ()))
            scored.setdefault(key, []).append((p, record.correct))
            cell_profile[key] = profile_of(record)
    observed = observe(runs, cache=cache)
    for episode in observed.episodes:
        first = episode.first
        if episode.record.followups or not first:
            continue
        if absent := [w for w in episode.workers if w not in profiles]:
            missing.update(dict.fromkeys(absent))
            continue
        last = first[-1]
        shape = plan_shape(first)
        p = play(episode)
        key = (shape, last.worker, last.family)
        scored.setdefault(key, []).append((p, episode.record.correct))
        cell_profile[key] = last.profile
    if not scored:
        raise SimFitError(
            "no scored episode of a worker in the pool"
            + (f"; recorded workers not in the pool: {', '.join(missing)}" if missing else ""),
            field="results",
        )
    cells = []
    for (shape, name, family), rows in sorted(scored.items()):
        n = len(rows)
        cells.append(
            CellFidelity(
                worker=name,
                family=family,
                profile=cell_profile[(shape, name, family)],
                n=n,
                predicted=math.fsum(p for p, _ in rows) / n,
                observed=sum(y for _, y in rows) / n,
                brier=math.fsum((p - y) ** 2 for p, y in rows) / n,
                shape=shape,
            )
        )
    every = [row for rows in scored.values() for row in rows]
    total = sum(c.n for c in cells)
    score = 100 * math.fsum(c.n * abs(c.predicted - c.observed) for c in cells) / total
    return Fidelity(
        cells=tuple(cells),
        score=score,
        brier=math.fsum((p - y) ** 2 for p, y in every) / len(every),
        episodes=len(every),
        missing=tuple(missing),
        effects=_effects(cells),
        calibration=_calibration(every),
        untraced=observed.untraced,
        notes=observed.notes,
    )


def _effects(cells: Sequence[CellFidelity]) -> tuple[PlanEffect, ...]:
    base = {(c.worker, c.family): c for c in cells if c.shape == SINGLE}
    shapes = sorted({c.shape for c in cells if c.shape != SINGLE})
    out = []
    for shape in shapes:
        used = [(c, base[(c.worker, c.family)]) for c in cells if c.shape == shape]
        used = [(c, b) for c, b in used if b.n > 0]
        n = sum(c.n for c, _ in used)
        if not n:
            continue
        obs = math.fsum(c.n * (c.observed - b.observed) for c, b in used) / n
        pred = math.fsum(c.n * (c.predicted - b.predicted) for c, b in used) / n
        y = math.fsum(c.n * c.observed for c, _ in used) / n
        var = y * (1 - y) / n
        var += math.fsum((c.n / n) ** 2 * b.observed * (1 - b.observed) / b.n for c, b in used)
        out.append(PlanEffect(shape, n, obs, pred, math.sqrt(var)))
    return tuple(out)


def _calibration(rows: Sequence[tuple[float, bool]]) -> tuple[tuple[float, int, float, float], ...]:
    bins: dict[int, list[tuple[float, bool]]] = {}
    for p, y in rows:
        bins.setdefault(min(9, int(p * 10)), []).append((p, y))
    return tuple(
        (b / 10, len(v), math.fsum(p for p, _ in v) / len(v), sum(y for _, y in v) / len(v))
        for b, v in sorted(bins.items())
    )
