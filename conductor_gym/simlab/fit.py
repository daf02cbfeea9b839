"""Fit a simulated pool to recorded episodes (``conductor-gym sim fit``); score a pool's
fidelity on held-out ones (:mod:`conductor_gym.simlab.fit_fidelity`).

Contract.

* **What is read.** :class:`~conductor_gym.bench.results.Results` files (any schema
  version that records its workers, ``v2`` on), plans of any kind, and optionally the
  response cache they were recorded with. **Single-call episodes** (a first plan of one
  step, no later round, one call, a scored outcome) of a run that shows every worker in
  pool order are read from the results alone
  (:func:`~conductor_gym.simlab.fit_data.single_calls`). Every other scored episode
  is **re-played** to read its steps (:mod:`conductor_gym.simlab.fit_steps`): from the
  cache for real workers, by the simulator for simulated ones; a real pool's run
  without a cache is counted in :attr:`FittedPool.untraced` and its episodes fit nothing.
* **What each kind of plan identifies** (:data:`IDENTIFIES`; everything else stays at the
  simulator version's prior, :data:`~conductor_gym.sim.params.VERSION_DYNAMICS`):

  ==========================  ==============================================================
  plans                       parameters
  ==========================  ==============================================================
  single calls                accuracy per worker and profile; correlations between
                              workers (the same tasks), and of a worker with itself
                              (repeats); tokens, latency, prices
  single calls on tasks the   the size effect per worker and family
  simulator reads             (``dynamics.family_structure``, fitted or switched off,
                              :mod:`conductor_gym.simlab.fit_structure`) and the accuracy
                              written for the family's profile with it
  a step shown answers,       ``check_scale``: the simulated pool is re-fitted until the
  asked to check or choose    episodes ending in such a step score as recorded;
                              P(keep | right shown), P(right | all shown wrong) reported
  restate / vote requests     ``relay``
  answers asserted in the     ``claim_pull_checkable`` / ``claim_pull``
  subtask
  every call                  latency (``latency_base_s``, ``tokens_per_s``), prices
  ==========================  ==============================================================

  The estimators are in :mod:`conductor_gym.simlab.fit_dynamics`; each estimate has a
  standard error and a 95% interval (:class:`~conductor_gym.simlab.fit_data.Estimate`).
  Not fitted, always the prior: ``mislead``, ``refine_gain``, ``echo_wrong`` (hints when
  solving), ``habit``, ``trust_partial``, ``lineage_share``,
  ``check_doubt``, the candidate and context penalties, the per-family ``check_bonus``
  (scaled as a whole by ``check_scale``), and hub benchmarks' behaviour beyond accuracy
  (the simulator reads only the procedural families' steps).
* **Which check_scale.** ``check_scale`` (simulator ``v3``) moves how often a checker
  recognises a right answer; the episodes whose first plan ends in a ``check`` step are
  played on the fitted pool (:class:`~conductor_gym.simlab.fit_play.Player`, two seeds
  each) and each checking worker's scale is bisected on ``[0, 4]`` until the pool's
  accuracy on its episodes equals the recorded one. Its standard error is the recorded
  accuracy's and the plays' binomial error divided by the slope.
* **The pool file** (:meth:`FittedPool.to_toml`, :meth:`FittedPool.specs`): one simulated
  worker per recorded worker, in pool order, at the simulator version the records name
  (else :data:`FIT_VERSION`, for a real pool), each preceded by comments naming which of
  its parameters were fitted and which are priors; ``backend_options`` carry the fitted
  ``accuracy`` (for a procedural family's profile, the one its fitted size effect needs;
  a profile with no single call keeps a recorded simulated worker's option, else the base
  profile's),
  ``tokens`` per profile, ``latency_base_s``, ``tokens_per_s`` and ``dynamics`` (every
  written estimate; a recorded simulated worker's own ``dynamics`` are *not* copied);
  prices are the fitted ones. The base profile is the recorded model when it names a
  simulator profile (``"openai/gpt-5"`` reads as ``gpt-5``), else the profile nearest the
  fitted accuracies. Every dynamics parameter is per worker in the simulated backend.

Bad input raises :class:`SimFitError` (a :class:`~conductor_gym.errors.ConfigurationError`)
naming what is wrong.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from conductor_gym.bench.results import EpisodeRecord, Results, WorkerRecord
from conductor_gym.core.reward import Outcome
from conductor_gym.sim.params import DEFAULT_VERSION, VERSION_DYNAMICS, SimDynamics
from conductor_gym.sim.profiles import PAPER_PROFILES
from conductor_gym.sim.versions import version_info
from conductor_gym.simlab.fit_data import (
    AccuracyEstimate,
    Estimate,
    SimFitError,
    profile_of,
    single_calls,
    wilson_interval,
    worker_names,
)
from conductor_gym.simlab.fit_dynamics import (
    Correlations,
    fit_claim_pull,
    fit_correlations,
    fit_latency,
    fit_relay,
    fit_tokens,
)
from conductor_gym.simlab.fit_fidelity import CellFidelity, Fidelity, PlanEffect, fidelity
from conductor_gym.simlab.fit_play import fit_check_scale
from conductor_gym.simlab.fit_steps import Observed, observe
from conductor_gym.simlab.fit_structure import StructureFit, call_sizes, fit_structure
from conductor_gym.tasks.procedural.source import FAMILIES
from conductor_gym.workers.spec import WorkerSpec

FIT_VERSION = "v3"
"""The simulator version a fitted *real* pool plays on: the latest whose dynamics the fit
identifies. v3.1's additions (trivial problems made easy, checkers anchored by shown
answers, hints) are not fitted from recordings yet, so they would play at v3.1's priors
for the paper's models; a real pool's fit stays on v3 until they are."""


__all__ = [
    "IDENTIFIES",
    "AccuracyEstimate",
    "CellFidelity",
    "Estimate",
    "Fidelity",
    "FittedPool",
    "FittedWorker",
    "PlanEffect",
    "SimFitError",
    "fidelity",
    "fit",
    "profile_of",
    "single_calls",
    "wilson_interval",
]

IDENTIFIES: Mapping[str, tuple[str, ...]] = {
    "single calls": ("accuracy", "task_correlation", "call_correlation", "tokens", "prices"),
    "check steps": ("check_scale",),
    "relay steps": ("relay",),
    "claim steps": ("claim_pull_checkable", "claim_pull"),
    "every call": ("latency_base_s", "tokens_per_s", "prices"),
}
"""Which parameters each kind of recorded plan identifies (module docstring)."""

_V3_ONLY = ("claim_pull", "claim_pull_checkable", "check_scale")


@dataclass(frozen=True)
class FittedWorker:
    """One worker's estimates (module docstring).

    ``accuracy``: per profile; ``dynamics``: :class:`~conductor_gym.sim.params.SimDynamics`
    fields, each an :class:`Estimate` (``written`` says whether the pool file sets it);
    ``checks``: reported rates (``keep | right shown``, ``right | all shown wrong``);
    ``tokens``: mean completion tokens per profile; ``latency_base_s`` /
    ``tokens_per_s``: ``None`` when the calls do not determine them; ``tokens_mean`` /
    ``tokens_sd`` / ``latency_mean_s``: raw means over its single calls; prices ``None``
    when the calls do not determine them (fewer than two, no spread, a negative fit).
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
    dynamics: Mapping[str, Estimate] = field(default_factory=dict)
    checks: Mapping[str, Estimate] = field(default_factory=dict)
    tokens: Mapping[str, Estimate] = field(default_factory=dict)
    latency_base_s: Estimate | None = None
    tokens_per_s: Estimate | None = None
    structure: Mapping[str, StructureFit] = field(default_factory=dict)

    def p(self, profile: str) -> float:
        """The worker's single-call accuracy on ``profile``: fitted, else the base profile's."""
        if profile in self.accuracy:
            return self.accuracy[profile].accuracy
        return PAPER_PROFILES[self.base_profile].p_correct(profile)


@dataclass(frozen=True)
class FittedPool:
    """Every recorded worker in pool order (so ``Model i`` means the same worker; one
    with no observation keeps its base profile), and what was read: ``used`` single-call
    episodes, ``steps`` re-played steps of ``traced`` other episodes, ``untraced``
    episodes that could not be re-played, ``skipped`` scored episodes read neither way
    (the untraced ones among them)."""

    workers: tuple[FittedWorker, ...]
    used: int
    skipped: int
    sources: tuple[str, ...] = field(default=())
    version: str = FIT_VERSION
    traced: int = 0
    steps: int = 0
    untraced: int = 0
    correlations: Correlations | None = None
    notes: tuple[str, ...] = field(default=())

    def format(self) -> str:
        """The estimates as tables, one line per worker and quantity."""
        lines = [
            f"fitted from {self.used} single-call episodes and {self.steps} steps of "
            f"{self.traced} re-played episodes ({self.untraced} not re-played, {self.skipped} "
            f"scored episodes that fit nothing); simulator {self.version}",
            f"{'worker':24} {'quantity':28} {'n':>6} {'value':>9} {'95% interval':>19} "
            f"{'prior':>7}",
        ]

        def row(worker: str, what: str, e: Estimate, scale: float = 1.0) -> str:
            prior = "" if e.prior is None else f"{scale * e.prior:7.3g}"
            written = "" if e.written else f"  (reported only: {e.note})"
            return (
                f"{worker:24} {what:28} {e.n:6d} {scale * e.value:9.4g} "
                f"{scale * e.low:9.4g}-{scale * e.high:<9.4g} {prior:>7}{written}"
            )

        prior = SimDynamics(**VERSION_DYNAMICS[self.version])
        for w in self.workers:
            for profile, est in sorted(w.accuracy.items()):
                low, high = est.interval
                lines.append(
                    f"{w.name:24} {'accuracy % ' + profile:28} {est.n:6d} "
                    f"{100 * est.accuracy:9.1f} {100 * low:9.1f}-{100 * high:<9.1f}"
                )
            for family, sf in sorted(w.structure.items()):
                lines.append(
                    f"{w.name:24} {'structure_share ' + family:28} {sf.n:6d} {sf.share:9.4g} "
                    f"{sf.interval[0]:9.4g}-{sf.interval[1]:<9.4g} {prior.structure_share:7.3g}"
                    f"  ({sf.note}; accuracy written {100 * sf.accuracy:.1f}%)"
                )
            for name, e in sorted(w.dynamics.items()):
                lines.append(row(w.name, name, e))
            for name, e in sorted(w.checks.items()):
                lines.append(row(w.name, name, replace(e, written=True)))
            for profile, e in sorted(w.tokens.items()):
                lines.append(row(w.name, "tokens " + profile, e))
            if w.latency_base_s is not None and w.tokens_per_s is not None:
                lines.append(row(w.name, "latency_base_s", w.latency_base_s))
                lines.append(row(w.name, "tokens_per_s", w.tokens_per_s))
            price = (
                "unfitted"
                if w.price_in_per_mtok is None or w.price_out_per_mtok is None
                else f"${w.price_in_per_mtok:.3g} in / ${w.price_out_per_mtok:.3g} out per Mtok"
            )
            lines.append(f"{w.name:24} prices {price} (base profile {w.base_profile})")
        if self.correlations is not None and self.correlations.pairs:
            lines.append("pairs: tetrachoric correlation of single-call outcomes (one-factor fit)")
            for (a, b), (rho, se, n, model) in sorted(self.correlations.pairs.items()):
                lines.append(f"  {a} x {b}: {rho:.3f} +- {se:.3f} over {n} tasks ({model:.3f})")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)

    def specs(self) -> list[WorkerSpec]:
        """The fitted pool's workers (module docstring): what :meth:`to_toml` writes."""
        out = []
        for w in self.workers:
            options: dict[str, Any] = {"version": self.version}
            accuracy: dict[str, float] = {}
            if w.record is not None and w.record.backend == "simulated":
                accuracy.update(w.record.options.get("accuracy", {}))
            accuracy.update({p: e.accuracy for p, e in w.accuracy.items()})
            accuracy.update(
                {FAMILIES[f].profile: s.accuracy for f, s in w.structure.items() if s.n}
            )
            options["accuracy"] = dict(sorted(accuracy.items()))
            if w.tokens:
                options["tokens"] = {p: round(e.value, 3) for p, e in sorted(w.tokens.items())}
            if w.latency_base_s is not None and w.tokens_per_s is not None:
                options["latency_base_s"] = round(w.latency_base_s.value, 6)
                options["tokens_per_s"] = round(w.tokens_per_s.value, 6)
            dynamics: dict[str, Any] = {
                k: round(e.value, 6) for k, e in sorted(w.dynamics.items()) if e.written
            }
            if w.structure:
                dynamics["family_structure"] = {f: s.share for f, s in sorted(w.structure.items())}
            if dynamics:
                options["dynamics"] = dynamics
            record = w.record
            out.append(
                WorkerSpec(
                    name=w.name,
                    backend="simulated",
                    model=w.base_profile,
                    max_tokens=record.max_tokens if record is not None else 4096,
                    temperature=float(record.temperature) if record is not None else 0.2,
                    backend_options=options,
                    price_in_per_mtok=w.price_in_per_mtok,
                    price_out_per_mtok=w.price_out_per_mtok,
                )
            )
        return out

    def to_toml(self, path: str | os.PathLike[str], *, name: str = "fitted") -> None:
        """Write :meth:`specs` as a pool file; ``ConductorEnv(pool=path)`` loads it offline."""
        out = [
            "# A simulated pool fitted by `conductor-gym sim fit` (conductor_gym.simlab.fit)",
            f"# to {self.used} single-call episodes and {self.steps} re-played steps; what is",
            "# not fitted stays at the simulator version's priors.",
            f"name = {json.dumps(name)}",
            "description = "
            + json.dumps(
                f"Simulated pool fitted to {self.used} single-call episodes and "
                f"{self.traced} re-played episodes"
                + (f" of {', '.join(self.sources)}" if self.sources else "")
            ),
            "",
        ]
        for worker, spec in zip(self.workers, self.specs(), strict=True):
            out += _provenance(worker, spec, self.version)
            out += ["[[workers]]", f"name = {json.dumps(spec.name)}", 'backend = "simulated"']
            out.append(f"model = {json.dumps(spec.model)}")
            out.append(f"max_tokens = {spec.max_tokens}")
            out.append(f"temperature = {float(spec.temperature)!r}")
            if spec.price_in_per_mtok is not None and spec.price_out_per_mtok is not None:
                out.append(f"price_in_per_mtok = {spec.price_in_per_mtok!r}")
                out.append(f"price_out_per_mtok = {spec.price_out_per_mtok!r}")
            out.append(f"backend_options = {_inline(spec.backend_options)}")
            out.append("")
        Path(path).write_text("\n".join(out), encoding="utf-8")


def _provenance(worker: FittedWorker, spec: WorkerSpec, version: str) -> list[str]:
    """Comment lines saying which of a worker's parameters were fitted and which are the
    simulator version's priors (or the base profile's)."""
    fitted = [f"accuracy {p} ({e.n} calls)" for p, e in sorted(worker.accuracy.items())]
    fitted += [
        f"family_structure {f} ({f'{s.share:.2f}' if s.identified else 'off'}: {s.note})"
        for f, s in sorted(worker.structure.items())
    ]
    fitted += [f"tokens {p}" for p in sorted(worker.tokens)]
    written = sorted(k for k, e in worker.dynamics.items() if e.written)
    fitted += written
    if worker.latency_base_s is not None and worker.tokens_per_s is not None:
        fitted.append("latency_base_s, tokens_per_s")
    if spec.price_in_per_mtok is not None:
        fitted.append("prices")
    skip = {"family_structure", "check_bonus", *written}
    if worker.structure:
        skip.add("structure_share")
    priors = [f.name for f in fields(SimDynamics) if f.name not in skip]
    base = f"base profile {spec.model}: accuracy on other profiles"
    if worker.latency_base_s is None:
        base += ", latency"
    if spec.price_in_per_mtok is None:
        base += ", prices"
    return [
        f"# {worker.name}: fitted: " + "; ".join(fitted),
        f"# {worker.name}: priors (simulator {version}): " + ", ".join(priors) + f"; {base}",
    ]


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


def _prices(calls: Sequence[tuple[int, int, float]]) -> tuple[float | None, float | None]:
    """Least squares of cost on (prompt, completion) tokens, in $ per million tokens."""
    spp = sum(p**2 for p, _, _ in calls)
    scc = sum(c**2 for _, c, _ in calls)
    spc = sum(p * c for p, c, _ in calls)
    sp = math.fsum(p * cost for p, _, cost in calls)
    sc = math.fsum(c * cost for _, c, cost in calls)
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


def _version(records: Mapping[str, WorkerRecord | None]) -> str:
    versions = {
        str(r.options.get("version", DEFAULT_VERSION))
        for r in records.values()
        if r is not None and r.backend == "simulated"
    }
    return versions.pop() if len(versions) == 1 else FIT_VERSION


def _checks(observed: Observed) -> dict[str, dict[str, Estimate]]:
    cells: dict[tuple[str, str], list[int]] = {}
    for s in observed.steps:
        if s.kind == "check" and s.right_shown is not None:
            key = (s.worker, "keep | right shown" if s.right_shown else "right | all shown wrong")
            cell = cells.setdefault(key, [0, 0])
            cell[0] += int(s.correct)
            cell[1] += 1
    out: dict[str, dict[str, Estimate]] = {}
    for (worker, what), (k, n) in cells.items():
        out.setdefault(worker, {})[what] = replace(
            Estimate.proportion(k, n), written=False, note="checking's outcome, observed"
        )
    return out


_FAMILY_OF_PROFILE = {family.profile: name for name, family in FAMILIES.items()}


def _with_structure(
    worker: FittedWorker,
    calls: Sequence[tuple[int, str, EpisodeRecord]],
    sizes: Mapping[tuple[int, tuple[str, int, int]], tuple[str, float]],
    prior: SimDynamics,
) -> FittedWorker:
    """``worker`` with its size effect fitted per family (:mod:`.fit_structure`), given the
    correlations its pool file will carry; a procedural family with single calls whose
    sizes cannot be read is switched off (``structure_share`` 0), never left at the
    prior."""

    def used(key: str) -> float:
        e = worker.dynamics.get(key)
        return e.value if e is not None and e.written else float(getattr(prior, key))

    rows: dict[str, list[tuple[float, bool]]] = {}
    for index, name, record in calls:
        if name == worker.name and (found := sizes.get((index, record.key))) is not None:
            rows.setdefault(found[0], []).append((found[1], record.correct))
    for profile in worker.accuracy:
        if (family := _FAMILY_OF_PROFILE.get(profile)) is not None:
            rows.setdefault(family, [])
    structure = {
        family: fit_structure(
            family,
            found,
            call_correlation=used("call_correlation"),
            task_correlation=used("task_correlation"),
        )
        for family, found in rows.items()
    }
    return replace(worker, structure=structure)


def fit(results: Sequence[Results], *, cache: str | os.PathLike[str] | None = None) -> FittedPool:
    """Fit a simulated pool to ``results`` (module docstring); ``cache`` is the response
    cache a real pool's runs were recorded with.

    Raises :class:`SimFitError` when no run records its workers or nothing fits.
    """
    if not results:
        raise SimFitError("fit: no results given", field="results")
    records: dict[str, WorkerRecord | None] = {}
    calls: list[tuple[int, str, EpisodeRecord]] = []
    skipped = 0
    for index, run in enumerate(results):
        for name in worker_names(run) or [str(w.get("name")) for w in run.pool.get("workers", [])]:
            records.setdefault(name, None)
        for worker in run.workers or []:
            if records.get(worker.name) is None:
                records[worker.name] = worker
        singles, _ = single_calls(run)
        calls += [(index, name, record) for name, record in singles]
    observed = observe(results, cache=cache)
    read = {(e.run, e.record.key) for e in observed.episodes} | {(i, r.key) for i, _, r in calls}
    for index, run in enumerate(results):
        scored = (r for r in run.episodes if r.outcome in (Outcome.CORRECT, Outcome.WRONG))
        skipped += sum((index, r.key) not in read for r in scored)
    if not calls and not observed.steps:
        raise SimFitError(
            f"fit: nothing to fit in {len(results)} results ({observed.untraced} episodes not "
            "re-played); record runs of one-step plans (agent single:<i>) on a pool that shows "
            "every worker unshuffled, or give the response cache (--cache)",
            field="results",
        )
    version = _version(records)
    prior = SimDynamics(**VERSION_DYNAMICS[version])
    max_tokens = {n: r.max_tokens for n, r in records.items() if r is not None}
    solve = [(n, profile_of(r), r.completion_tokens, max_tokens.get(n)) for _, n, r in calls]
    solve += [
        (s.worker, s.profile, s.completion_tokens, s.max_tokens)
        for s in observed.steps
        if s.kind == "solve"
    ]
    tokens, sigmas = fit_tokens(solve)
    every = [
        (r.prompt_tokens, r.completion_tokens, r.cost_usd, r.latency_s, n) for _, n, r in calls
    ]
    every += [
        (s.prompt_tokens, s.completion_tokens, s.cost_usd, s.latency_s, s.worker)
        for s in observed.steps
    ]
    latency = fit_latency((w, c, lat) for _, c, _, lat, w in every)
    correlations = fit_correlations(calls, {n: prior.call_correlation for n in records})
    relay = fit_relay(observed.steps)
    checks = _checks(observed)
    workers = []
    for name, worker_record in records.items():
        mine = [r for _, n, r in calls if n == name]
        counts: dict[str, list[int]] = {}
        for r in mine:
            cell = counts.setdefault(profile_of(r), [0, 0])
            cell[0] += int(r.correct)
            cell[1] += 1
        accuracy = {p: AccuracyEstimate(correct=c, n=n) for p, (c, n) in counts.items()}
        raw = [float(r.completion_tokens) for r in mine]
        mean = math.fsum(raw) / len(raw) if raw else 0.0
        sd = (
            math.sqrt(math.fsum((t - mean) ** 2 for t in raw) / (len(raw) - 1))
            if len(raw) > 1
            else 0.0
        )
        price_in, price_out = _prices([(p, c, cost) for p, c, cost, _, w in every if w == name])
        dynamics: dict[str, Estimate] = {}
        if name in relay:
            dynamics["relay"] = replace(relay[name], prior=prior.relay)
        if name in correlations.task:
            dynamics["task_correlation"] = replace(
                correlations.task[name], prior=prior.task_correlation
            )
        if name in correlations.call:
            dynamics["call_correlation"] = correlations.call[name]
        if name in sigmas:
            dynamics["token_sigma"] = replace(sigmas[name], prior=prior.token_sigma)
        lat = latency.get(name)
        workers.append(
            FittedWorker(
                name=name,
                base_profile=_base_profile(
                    worker_record, name, {p: e.accuracy for p, e in accuracy.items()}
                ),
                record=worker_record,
                accuracy=accuracy,
                calls=len(mine),
                tokens_mean=mean,
                tokens_sd=sd,
                latency_mean_s=math.fsum(r.latency_s for r in mine) / len(mine) if mine else 0.0,
                price_in_per_mtok=price_in,
                price_out_per_mtok=price_out,
                dynamics=dynamics,
                checks=checks.get(name, {}),
                tokens=tokens.get(name, {}),
                latency_base_s=None if lat is None else lat[0],
                tokens_per_s=None if lat is None else lat[1],
            )
        )
    by_name = {w.name: w for w in workers}
    pulls = fit_claim_pull(observed.steps, lambda w, p: by_name[w].p(p))
    for name, found in pulls.items():
        extra = {k: replace(e, prior=getattr(prior, k)) for k, e in found.items()}
        by_name[name] = replace(by_name[name], dynamics={**by_name[name].dynamics, **extra})
    sizes, size_notes = call_sizes(results, calls)
    for name in by_name:
        by_name[name] = _with_structure(by_name[name], calls, sizes, prior)
    pool = FittedPool(
        workers=tuple(by_name[w.name] for w in workers),
        used=len(calls),
        skipped=skipped,
        sources=tuple(dict.fromkeys(run.suite.name for run in results)),
        version=version,
        traced=len(observed.episodes),
        steps=len(observed.steps),
        untraced=observed.untraced,
        correlations=correlations,
        notes=observed.notes + size_notes,
    )
    scales = fit_check_scale(pool.specs(), pool.version, results, observed.episodes)
    final = []
    for w in pool.workers:
        dynamics = dict(w.dynamics)
        if w.name in scales:
            dynamics["check_scale"] = scales[w.name]
        if not version_info(version).bounded_checking:
            dynamics = {
                k: replace(e, written=False, note=f"simulator {version} has no {k}")
                if k in _V3_ONLY
                else e
                for k, e in dynamics.items()
            }
        final.append(replace(w, dynamics=dynamics))
    return replace(pool, workers=tuple(final))
