"""Fit a simulated pool to recorded episodes, and score a pool's fidelity on held-out ones.

Contract (a first slice of fitting: what is fitted and what is not is listed here).

* **What is read.** :class:`~conductor_gym.bench.results.Results` files (any schema
  version that records its workers, ``v2`` on). Only **single-call episodes** are used:
  a first plan of one step, no follow-up round, one worker call, and a scored outcome
  (``"correct"`` or ``"wrong"``; invalid plans and infrastructure failures are left out).
  Such an episode identifies one worker's accuracy on one task family directly. Every
  other plan (several steps, recursion) is skipped: what checking, claims pull and
  correlations do stays at the simulator's priors (:class:`~conductor_gym.sim.params.SimDynamics`).
* **Which worker.** The plan's ``Model i`` is mapped to a worker name through the pool the
  results record. That map is only recorded when the pool shows every worker in pool
  order (``k`` equal to the number of workers, ``shuffle`` off); episodes of a run that
  drew k of n or shuffled ids are skipped and counted in :attr:`FittedPool.skipped`.
* **Per worker and profile.** The simulated worker's accuracy is per *profile* (the
  paper benchmark a family stands in for): a procedural family maps to
  ``FAMILIES[family].profile``; any other episode's profile is its benchmark when that
  is a simulator profile, else its domain. Families sharing a profile are pooled.
* **Estimates.** Accuracy: the observed fraction ``k / n`` with its 95% Wilson interval
  and binomial standard error. Completion tokens: mean and sample standard deviation.
  Latency: mean seconds per call. Prices: a least-squares fit of ``cost_usd`` on prompt
  and completion tokens (dollars per million tokens), when the episodes determine it.
* **The pool file** (:meth:`FittedPool.to_toml`): one simulated worker per recorded
  worker, whose ``backend_options.accuracy`` carries the fitted accuracies and whose
  prices are the fitted ones; a profile with no single-call episode keeps the recorded
  simulated worker's ``accuracy`` option, else the base profile's accuracy. The base
  profile is the recorded model when it is a simulator profile (``"openai/gpt-5"`` reads
  as ``gpt-5``), else the profile nearest the fitted accuracies. Tokens and latency are
  reported but **not** written: the simulated backend has no option for them, so the
  base profile's token and latency model is kept.
* :func:`fidelity` scores a pool file (or preset) on held-out results: per worker and
  family, predicted versus observed single-call accuracy, the Brier score of the
  single-call outcomes under the pool's probabilities, and one summary number
  (:attr:`Fidelity.score`).

Bad input raises :class:`SimFitError` (a :class:`~conductor_gym.errors.ConfigurationError`)
naming what is wrong.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from conductor_gym.bench.results import EpisodeRecord, Results, WorkerRecord
from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import PlanParseError, parse_plan
from conductor_gym.sim.profiles import IN_DOMAIN, OUT_OF_DOMAIN, PAPER_PROFILES
from conductor_gym.tasks.procedural.source import FAMILIES
from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "AccuracyEstimate",
    "CellFidelity",
    "Fidelity",
    "FittedPool",
    "FittedWorker",
    "SimFitError",
    "fidelity",
    "fit",
    "profile_of",
    "single_calls",
    "wilson_interval",
]

Z95 = 1.959963984540054
"""The two-sided 95% normal quantile of the Wilson intervals."""


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


def _worker_names(results: Results) -> list[str] | None:
    """``Model i`` -> worker name for every episode, or ``None`` when the run drew k of n
    or shuffled ids (the map is then not recorded)."""
    names = [str(w["name"]) for w in results.pool.get("workers", [])]
    if not names and results.workers is not None:
        names = [w.name for w in results.workers]
    k = results.pool.get("k", len(names))
    if not names or k != len(names) or results.pool.get("shuffle", False):
        return None
    return names


def single_calls(results: Results) -> tuple[list[tuple[str, EpisodeRecord]], int]:
    """The single-call episodes of ``results`` with their worker names, and how many
    otherwise scored episodes were skipped (multi-step plans, recursion, unknown ids)."""
    names = _worker_names(results)
    found: list[tuple[str, EpisodeRecord]] = []
    skipped = 0
    for record in results.episodes:
        if record.outcome not in ("correct", "wrong"):
            continue
        if names is None or record.steps != 1 or record.worker_calls != 1 or record.followups:
            skipped += 1
            continue
        try:
            plan = parse_plan(record.completion, len(names), max_steps=1)
        except PlanParseError:
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
class FittedWorker:
    """One worker's estimates (module docstring).

    ``accuracy`` maps a profile to its :class:`AccuracyEstimate`; ``base_profile`` is the
    simulator profile the pool file builds it from; ``tokens_mean`` / ``tokens_sd`` are
    over its single calls' completion tokens, ``latency_mean_s`` over their latencies;
    ``price_in_per_mtok`` / ``price_out_per_mtok`` are ``None`` when the episodes do not
    determine them (fewer than two calls, no spread in token counts, a negative fit).
    """

    name: str
    base_profile: str
    record: WorkerRecord | None
    accuracy: Mapping[str, AccuracyEstimate]
    calls: int
    tokens_mean: float
    tokens_sd: float
    latency_mean_s: float
    price_in_per_mtok: float | None
    price_out_per_mtok: float | None


@dataclass(frozen=True)
class FittedPool:
    """Every recorded worker, in pool order (so ``Model i`` means the same worker; one
    with no single-call episode has no estimate and keeps its base profile), and what
    was left out:
    ``used`` single-call episodes, ``skipped`` scored episodes of other plans (or of runs
    whose ``Model i`` map is not recorded), whose effects stay at the simulator's priors."""

    workers: tuple[FittedWorker, ...]
    used: int
    skipped: int
    sources: tuple[str, ...] = field(default=())

    def format(self) -> str:
        """A table of the estimates, one line per worker and profile."""
        lines = [
            f"fitted from {self.used} single-call episodes ({self.skipped} other scored "
            "episodes skipped: their plans stay at the simulator's priors)",
            f"{'worker':30} {'profile':14} {'n':>5} {'acc %':>6} {'95% interval':>14}",
        ]
        for w in self.workers:
            for profile, est in sorted(w.accuracy.items()):
                low, high = est.interval
                lines.append(
                    f"{w.name:30} {profile:14} {est.n:5d} {100 * est.accuracy:6.1f} "
                    f"{100 * low:6.1f}-{100 * high:5.1f}"
                )
            price = (
                "unfitted"
                if w.price_in_per_mtok is None or w.price_out_per_mtok is None
                else f"${w.price_in_per_mtok:.3g} in / ${w.price_out_per_mtok:.3g} out per Mtok"
            )
            lines.append(
                f"{w.name:30} tokens {w.tokens_mean:.0f} +- {w.tokens_sd:.0f}, latency "
                f"{w.latency_mean_s:.2f} s, {price} (base profile {w.base_profile})"
            )
        return "\n".join(lines)

    def to_toml(self, path: str | os.PathLike[str], *, name: str = "fitted") -> None:
        """Write a pool file of simulated workers carrying the fitted accuracies and
        prices (module docstring); ``ConductorEnv(pool=path)`` loads it offline."""
        out = [
            "# A simulated pool fitted by `conductor-gym sim fit` to recorded single-call",
            "# episodes (conductor_gym.bench.simfit). Accuracies per profile are the observed",
            "# fractions; profiles without episodes keep the recorded ones. Tokens and",
            "# latency are the base profile's (not fitted into the file).",
            f"name = {json.dumps(name)}",
            "description = "
            + json.dumps(
                f"Simulated pool fitted to {self.used} recorded single-call episodes"
                + (f" of {', '.join(self.sources)}" if self.sources else "")
            ),
            "",
        ]
        for w in self.workers:
            out += ["[[workers]]", f"name = {json.dumps(w.name)}", 'backend = "simulated"']
            out.append(f"model = {json.dumps(w.base_profile)}")
            if w.record is not None:
                out.append(f"max_tokens = {w.record.max_tokens}")
                out.append(f"temperature = {float(w.record.temperature)!r}")
            if w.price_in_per_mtok is not None and w.price_out_per_mtok is not None:
                out.append(f"price_in_per_mtok = {w.price_in_per_mtok!r}")
                out.append(f"price_out_per_mtok = {w.price_out_per_mtok!r}")
            options: dict[str, object] = {}
            accuracy: dict[str, float] = {}
            if w.record is not None and w.record.backend == "simulated":
                for key in ("version", "dynamics"):
                    if key in w.record.options:
                        options[key] = w.record.options[key]
                accuracy.update(w.record.options.get("accuracy", {}))
            accuracy.update({p: e.accuracy for p, e in w.accuracy.items()})
            options["accuracy"] = dict(sorted(accuracy.items()))
            out.append(f"backend_options = {_inline(options)}")
            out.append("")
        Path(path).write_text("\n".join(out), encoding="utf-8")


def _inline(value: object) -> str:
    """``value`` as a TOML inline value (tables, strings, numbers, booleans)."""
    if isinstance(value, Mapping):
        return (
            "{ "
            + ", ".join(f"{json.dumps(str(k))} = {_inline(v)}" for k, v in value.items())
            + " }"
        )
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(float(value)) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, Sequence):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    raise SimFitError(f"cannot write {value!r} into a pool file")


def _prices(calls: Sequence[EpisodeRecord]) -> tuple[float | None, float | None]:
    """Least squares of cost on (prompt, completion) tokens, in $ per million tokens."""
    spp = sum(r.prompt_tokens**2 for r in calls)
    scc = sum(r.completion_tokens**2 for r in calls)
    spc = sum(r.prompt_tokens * r.completion_tokens for r in calls)
    sp = math.fsum(r.prompt_tokens * r.cost_usd for r in calls)
    sc = math.fsum(r.completion_tokens * r.cost_usd for r in calls)
    det = spp * scc - spc * spc
    if len(calls) < 2 or det <= 1e-9 * max(1.0, spp * scc):
        return (None, None)
    a = (sp * scc - sc * spc) / det
    b = (sc * spp - sp * spc) / det
    if a < 0 or b < 0:
        return (None, None)
    return (float(f"{a * 1e6:.6g}"), float(f"{b * 1e6:.6g}"))


def _base_profile(record: WorkerRecord | None, name: str, acc: Mapping[str, float]) -> str:
    for candidate in (record.model if record else None, name):
        if candidate is not None and candidate.rsplit("/", 1)[-1] in PAPER_PROFILES:
            return candidate.rsplit("/", 1)[-1]

    def distance(key: str) -> float:
        profile = PAPER_PROFILES[key]
        return sum((profile.p_correct(p) - a) ** 2 for p, a in acc.items())

    return min(PAPER_PROFILES, key=distance)


def fit(results: Sequence[Results]) -> FittedPool:
    """Fit a simulated pool to the single-call episodes of ``results`` (module docstring).

    Raises :class:`SimFitError` when no run records its workers' names or none has a
    single-call episode.
    """
    if not results:
        raise SimFitError("fit: no results given", field="results")
    records: dict[str, WorkerRecord | None] = {}
    calls: dict[str, list[tuple[str, EpisodeRecord]]] = {}
    used = skipped = 0
    for run in results:
        for name in _worker_names(run) or []:
            records.setdefault(name, None)
        for worker in run.workers or []:
            if records.get(worker.name) is None:
                records[worker.name] = worker
        found, left = single_calls(run)
        skipped += left
        used += len(found)
        for name, record in found:
            calls.setdefault(name, []).append((profile_of(record), record))
    if not calls:
        raise SimFitError(
            f"fit: no single-call episode in {len(results)} results ({skipped} other scored "
            "episodes); record runs of one-step plans (agent single:<i>) on a pool that shows "
            "every worker unshuffled",
            field="results",
        )
    workers = []
    for name, worker_record in records.items():
        episodes = [r for _, r in calls.get(name, [])]
        counts: dict[str, list[int]] = {}
        for profile, r in calls.get(name, []):
            cell = counts.setdefault(profile, [0, 0])
            cell[0] += int(r.correct)
            cell[1] += 1
        accuracy = {p: AccuracyEstimate(correct=c, n=n) for p, (c, n) in counts.items()}
        tokens = [float(r.completion_tokens) for r in episodes]
        mean = math.fsum(tokens) / len(tokens) if tokens else 0.0
        sd = (
            math.sqrt(math.fsum((t - mean) ** 2 for t in tokens) / (len(tokens) - 1))
            if len(tokens) > 1
            else 0.0
        )
        price_in, price_out = _prices(episodes)
        workers.append(
            FittedWorker(
                name=name,
                base_profile=_base_profile(
                    worker_record, name, {p: e.accuracy for p, e in accuracy.items()}
                ),
                record=worker_record,
                accuracy=accuracy,
                calls=len(episodes),
                tokens_mean=mean,
                tokens_sd=sd,
                latency_mean_s=(
                    math.fsum(r.latency_s for r in episodes) / len(episodes) if episodes else 0.0
                ),
                price_in_per_mtok=price_in,
                price_out_per_mtok=price_out,
            )
        )
    sources = tuple(dict.fromkeys(run.suite.name for run in results))
    return FittedPool(workers=tuple(workers), used=used, skipped=skipped, sources=sources)


@dataclass(frozen=True)
class CellFidelity:
    """One worker and family: the pool's predicted single-call accuracy, the observed
    one over ``n`` held-out episodes, and the mean squared error of the prediction
    (that cell's Brier score)."""

    worker: str
    family: str
    profile: str
    n: int
    predicted: float
    observed: float
    brier: float


@dataclass(frozen=True)
class Fidelity:
    """How well a pool predicts held-out single-call episodes.

    ``score``: the mean absolute error of predicted against observed accuracy, in
    percentage points, over the worker x family cells weighted by their episodes
    (``sum n_c |pred_c - obs_c| / sum n_c * 100``; lower is better, 0 is a perfect fit
    of the accuracies; sampling noise alone keeps it above 0). ``brier``: the mean over
    the single-call episodes of ``(p - outcome)^2`` with ``p`` the pool's probability for
    that worker and profile (lower is better). ``missing`` lists recorded workers the
    pool file does not have (their episodes are not scored).
    """

    cells: tuple[CellFidelity, ...]
    score: float
    brier: float
    episodes: int
    missing: tuple[str, ...]

    def format(self) -> str:
        """The cells, then the summary."""
        lines = [f"{'worker':30} {'family':22} {'n':>5} {'pred %':>7} {'obs %':>6} {'brier':>6}"]
        for c in self.cells:
            lines.append(
                f"{c.worker:30} {c.family:22} {c.n:5d} {100 * c.predicted:7.1f} "
                f"{100 * c.observed:6.1f} {c.brier:6.3f}"
            )
        lines.append(
            f"fidelity: mean |predicted - observed| accuracy {self.score:.2f} points "
            f"(episode-weighted), Brier {self.brier:.4f}, over {self.episodes} single-call "
            "episodes"
        )
        if self.missing:
            lines.append(f"not in the pool (not scored): {', '.join(self.missing)}")
        return "\n".join(lines)


def _pool_specs(pool: str | os.PathLike[str]) -> tuple[WorkerSpec, ...]:
    from conductor_gym.pool.config import load_pool_file, load_preset

    text = str(pool)
    config = (
        load_pool_file(pool) if text.endswith(".toml") or Path(text).exists() else load_preset(text)
    )
    return config.specs


def fidelity(pool: str | os.PathLike[str], results: Iterable[Results]) -> Fidelity:
    """Score ``pool`` (a pool file or preset of simulated workers) on the single-call
    episodes of ``results`` (module docstring; :class:`Fidelity` defines the figures).

    Raises :class:`SimFitError` for a pool worker that is not simulated, or when no
    single-call episode of a worker in the pool is found.
    """
    from conductor_gym.sim.worker import make_simulated_worker

    profiles = {}
    for spec in _pool_specs(pool):
        if spec.backend != "simulated":
            raise SimFitError(
                f"worker {spec.name!r} has backend {spec.backend!r}: fidelity scores a pool of "
                "simulated workers",
                field="pool",
            )
        profiles[spec.name] = make_simulated_worker(spec).profile
    cells: dict[tuple[str, str], list[int]] = {}
    cell_profile: dict[tuple[str, str], str] = {}
    missing: dict[str, None] = {}
    squared: list[float] = []
    for run in results:
        for name, record in single_calls(run)[0]:
            if name not in profiles:
                missing[name] = None
                continue
            profile = profile_of(record)
            p = profiles[name].p_correct(profile)
            squared.append((p - float(record.correct)) ** 2)
            cell = cells.setdefault((name, record.domain), [0, 0])
            cell[0] += int(record.correct)
            cell[1] += 1
            cell_profile[(name, record.domain)] = profile
    if not cells:
        raise SimFitError(
            "no single-call episode of a worker in the pool"
            + (f"; recorded workers not in the pool: {', '.join(missing)}" if missing else ""),
            field="results",
        )
    scored = []
    for (name, family), (correct, n) in sorted(cells.items()):
        predicted = profiles[name].p_correct(cell_profile[(name, family)])
        observed = correct / n
        brier = (correct * (1 - predicted) ** 2 + (n - correct) * predicted**2) / n
        scored.append(
            CellFidelity(
                worker=name,
                family=family,
                profile=cell_profile[(name, family)],
                n=n,
                predicted=predicted,
                observed=observed,
                brier=brier,
            )
        )
    total = sum(c.n for c in scored)
    score = 100 * math.fsum(c.n * abs(c.predicted - c.observed) for c in scored) / total
    return Fidelity(
        cells=tuple(scored),
        score=score,
        brier=math.fsum(squared) / len(squared),
        episodes=len(squared),
        missing=tuple(missing),
    )
