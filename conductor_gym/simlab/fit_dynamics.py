"""The estimators of :mod:`conductor_gym.simlab.fit` beyond single-call accuracy: what
re-played steps (:mod:`conductor_gym.simlab.fit_steps`) and paired single calls say
about each worker, each as an :class:`~conductor_gym.simlab.fit_data.Estimate`.

Contract (``p`` is the worker's accuracy on the step's profile; every estimator is per
worker, and returns nothing for a worker without the observations it needs):

* :func:`fit_relay`: the share of ``relay`` steps whose final answer is the shown answer
  asked for; the simulator's ``dynamics.relay``.
* :func:`fit_claim_pull`: per class of family (checkable ones, whose answer can be
  recomputed, :data:`~conductor_gym.sim.v3.CHECKABLE`, and lettered ones), from
  ``claim`` steps. Under simulator v3 a worker adopts an asserted answer with
  probability ``pull = base * (1.25 - p / 2)`` and otherwise solves as if it were not
  there, so ``P(right | right claim) - P(right | wrong claim) = pull``: the difference,
  divided by ``1.25 - p / 2``, estimates ``base`` (``claim_pull_checkable`` or
  ``claim_pull``) without assuming ``p``. With wrong claims only,
  ``1 - P(right | wrong claim) / p`` does (``p`` from the single calls). Families are
  pooled weighted by their steps.
* :func:`fit_correlations`: for each pair of workers, the tetrachoric correlation of
  their single-call outcomes on the same tasks (same benchmark, task index and repeat),
  family thresholds ``Phi^-1`` of the pair's own accuracies, solved by bisection with
  Plackett's formula for the bivariate normal; its standard error by the delta method
  (``dPhi2/drho`` is the bivariate density), threshold uncertainty ignored. In the
  simulator two workers' attempts correlate as ``lambda_i lambda_j`` with
  ``lambda_i^2 = call_correlation_i * task_correlation_i``, a one-factor model:
  ``lambda_i^2`` is the mean over pairs ``(j, k)`` of ``rho_ij rho_ik / rho_jk`` (two
  workers: both ``rho``), and ``task_correlation_i = lambda_i^2 / call_correlation_i``.
  ``call_correlation_i`` is the tetrachoric correlation of a worker with itself over
  repeats of a task when the runs have repeats, else the prior. Pairs the one-factor
  model cannot express (a lineage) show as residuals in :attr:`Correlations.pairs`.
* :func:`fit_tokens`: completion tokens of ``solve`` calls as a log-normal per profile
  with one spread per worker, censored at the call's ``max_tokens`` (a reply cut there is
  counted as "at least"): maximum likelihood by EM. Writes the mean per profile
  (``backend_options.tokens``; not for a profile whose every reply was cut) and
  ``dynamics.token_sigma``.
* :func:`fit_latency`: least squares of each call's latency on its completion tokens
  (every call): intercept ``latency_base_s``, slope ``1 / tokens_per_s``.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from conductor_gym.bench.results import EpisodeRecord
from conductor_gym.sim.v3 import CHECKABLE
from conductor_gym.simlab.fit_data import Estimate, profile_of
from conductor_gym.simlab.fit_steps import StepObservation

__all__ = [
    "Correlations",
    "fit_claim_pull",
    "fit_correlations",
    "fit_latency",
    "fit_relay",
    "fit_tokens",
    "tetrachoric",
]

_N = NormalDist()
# 20-point Gauss-Legendre nodes and weights on [-1, 1] (Plackett's integral).
_GL_X = (
    -0.9931285991850949, -0.9639719272779138, -0.9122344282513259, -0.8391169718222188,
    -0.7463319064601508, -0.636053680726515, -0.5108670019508271, -0.37370608871541955,
    -0.2277858511416451, -0.07652652113349734, 0.07652652113349734, 0.2277858511416451,
    0.37370608871541955, 0.5108670019508271, 0.636053680726515, 0.7463319064601508,
    0.8391169718222188, 0.9122344282513259, 0.9639719272779138, 0.9931285991850949,
)  # fmt: skip
_GL_W = (
    0.017614007139152118, 0.04060142980038694, 0.06267204833410907, 0.08327674157670475,
    0.10193011981724044, 0.11819453196151841, 0.13168863844917664, 0.14209610931838204,
    0.14917298647260374, 0.15275338713072584, 0.15275338713072584, 0.14917298647260374,
    0.14209610931838204, 0.13168863844917664, 0.11819453196151841, 0.10193011981724044,
    0.08327674157670475, 0.06267204833410907, 0.04060142980038694, 0.017614007139152118,
)  # fmt: skip


def fit_relay(steps: Iterable[StepObservation]) -> dict[str, Estimate]:
    """``dynamics.relay`` per worker (module docstring)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s in steps:
        if s.kind == "relay" and s.relayed is not None:
            counts[s.worker][0] += int(s.relayed)
            counts[s.worker][1] += 1
    return {w: Estimate.proportion(k, n) for w, (k, n) in counts.items()}


def fit_claim_pull(
    steps: Iterable[StepObservation], accuracy: Callable[[str, str], float]
) -> dict[str, dict[str, Estimate]]:
    """Per worker, ``{"claim_pull_checkable": ..., "claim_pull": ...}`` where the steps
    identify them (module docstring); ``accuracy(worker, profile)`` is ``p``."""
    cells: dict[tuple[str, str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for s in steps:
        if s.kind != "claim" or s.claim_right is None:
            continue
        cell = cells[(s.worker, s.family, s.profile)]
        offset = 0 if s.claim_right else 2
        cell[offset] += int(s.correct)
        cell[offset + 1] += 1
    pooled: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for (worker, family, profile), (kr, nr, kw, nw) in cells.items():
        p = accuracy(worker, profile)
        factor = 1.25 - p / 2
        if nw == 0:
            continue
        wrong = kw / nw
        if nr > 0:
            right = kr / nr
            base = (right - wrong) / factor
            var = (right * (1 - right) / nr + wrong * (1 - wrong) / nw) / factor**2
        elif p > 0:
            base = (1 - wrong / p) / factor
            var = wrong * (1 - wrong) / nw / (p * factor) ** 2
        else:
            continue
        key = (worker, "claim_pull_checkable" if family in CHECKABLE else "claim_pull")
        n = float(nr + nw)
        pooled[key][0] += n * base
        pooled[key][1] += n * n * var
        pooled[key][2] += n
    out: dict[str, dict[str, Estimate]] = defaultdict(dict)
    for (worker, name), (total, var, n) in pooled.items():
        out[worker][name] = Estimate.normal(
            total / n, math.sqrt(var) / n, int(n), bounds=(0.0, 1.0)
        )
    return dict(out)


def _phi2_density(h: float, k: float, r: float) -> float:
    det = 1.0 - r * r
    return math.exp(-(h * h - 2 * r * h * k + k * k) / (2 * det)) / (2 * math.pi * math.sqrt(det))


def _phi2(h: float, k: float, rho: float) -> float:
    """``P(X < h, Y < k)`` for standard normals of correlation ``rho`` (Plackett)."""
    half = rho / 2
    integral = sum(
        w * _phi2_density(h, k, half * (x + 1)) for x, w in zip(_GL_X, _GL_W, strict=True)
    )
    return _N.cdf(h) * _N.cdf(k) + half * integral


def tetrachoric(tables: Sequence[tuple[int, int, int, int]]) -> tuple[float, float, int] | None:
    """``(rho, se, n)`` from 2x2 tables ``(both right, only first, only second, n)``, one
    per family (each with its own thresholds); ``None`` without an informative table;
    ``se`` is infinite where ``rho`` sits at the search's bound (``|rho| > 0.99``)."""
    usable = []
    for both, first, second, n in tables:
        p1, p2 = (both + first) / n, (both + second) / n
        if n > 0 and 0 < p1 < 1 and 0 < p2 < 1:
            usable.append((_N.inv_cdf(p1), _N.inv_cdf(p2), both, n))
    if not usable:
        return None
    target = sum(b for _, _, b, _ in usable)

    def expected(rho: float) -> float:
        return sum(n * _phi2(h, k, rho) for h, k, _, n in usable)

    low, high = -0.995, 0.995
    for _ in range(40):
        mid = (low + high) / 2
        low, high = (mid, high) if expected(mid) < target else (low, mid)
    rho = (low + high) / 2
    slope = sum(n * _phi2_density(h, k, rho) for h, k, _, n in usable)
    var = sum(b * (1 - b / n) for _, _, b, n in usable)
    n_total = sum(n for *_, n in usable)
    if abs(rho) > 0.99 or slope <= 0:
        # at the search's bound the tables fit any stronger correlation as well: the
        # delta method's SE (over a vanishing density) would be a meaningless huge number
        return rho, math.inf, n_total
    return rho, math.sqrt(var) / slope, n_total


@dataclass(frozen=True)
class Correlations:
    """Paired single calls (module docstring): ``pairs`` maps a pair of workers to its
    tetrachoric ``(rho, se, pairs of calls)`` and the one-factor model's fit of it;
    ``call`` each worker's correlation with itself over repeats; ``task`` each worker's
    fitted ``task_correlation``."""

    pairs: Mapping[tuple[str, str], tuple[float, float, int, float]]
    call: Mapping[str, Estimate]
    task: Mapping[str, Estimate]


def fit_correlations(
    calls: Sequence[tuple[int, str, EpisodeRecord]], prior_call: Mapping[str, float]
) -> Correlations:
    """:class:`Correlations` from single calls ``(run, worker, record)`` (module docstring);
    ``prior_call`` is each worker's ``call_correlation`` when repeats do not fit it."""
    by_task: dict[tuple[str, int, int], dict[str, EpisodeRecord]] = defaultdict(dict)
    by_repeat: dict[tuple[str, str, int], dict[int, EpisodeRecord]] = defaultdict(dict)
    for _, worker, record in calls:
        by_task[(record.benchmark, record.task_index, record.repeat)][worker] = record
        by_repeat[(worker, record.benchmark, record.task_index)][record.repeat] = record
    workers = sorted({w for _, w, _ in calls})

    def tables(pairs: Iterable[tuple[EpisodeRecord, EpisodeRecord]]) -> list[tuple[int, ...]]:
        cells: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for a, b in pairs:
            cell = cells[profile_of(a)]
            cell[0] += int(a.correct and b.correct)
            cell[1] += int(a.correct and not b.correct)
            cell[2] += int(b.correct and not a.correct)
            cell[3] += 1
        return [tuple(c) for c in cells.values()]

    rho: dict[tuple[str, str], tuple[float, float, int]] = {}
    for i, a in enumerate(workers):
        for b in workers[i + 1 :]:
            pairs = [(t[a], t[b]) for t in by_task.values() if a in t and b in t]
            found = tetrachoric(tables(pairs))  # type: ignore[arg-type]
            if found is not None:
                rho[(a, b)] = found
    call: dict[str, Estimate] = {}
    for w in workers:
        pairs = []
        for (worker, _, _), reps in by_repeat.items():
            if worker == w and len(reps) > 1:
                ordered = [reps[r] for r in sorted(reps)]
                pairs += list(itertools.pairwise(ordered))
        found = tetrachoric(tables(pairs))  # type: ignore[arg-type]
        if found is not None:
            value, se, n = found
            call[w] = Estimate.normal(
                value, se, n, bounds=(0.0, 1.0), prior=prior_call.get(w), unit="repeat pairs"
            )

    def r(a: str, b: str) -> tuple[float, float, int] | None:
        return rho.get((a, b)) or rho.get((b, a))

    task: dict[str, Estimate] = {}
    loadings: dict[str, float] = {}
    for w in workers:
        others = [o for o in workers if o != w and r(w, o) is not None]
        triads = []
        for j, a in enumerate(others):
            for b in others[j + 1 :]:
                ab, wa, wb = r(a, b), r(w, a), r(w, b)
                if ab is None or wa is None or wb is None or ab[0] <= 0.05:
                    continue
                rel = (wa[1] / max(wa[0], 1e-3)) ** 2 + (wb[1] / max(wb[0], 1e-3)) ** 2
                rel += (ab[1] / ab[0]) ** 2
                triads.append((wa[0] * wb[0] / ab[0], rel, wa[2] + wb[2]))
        if triads:
            square = sum(t[0] for t in triads) / len(triads)
            rel_se = math.sqrt(sum(t[1] for t in triads) / len(triads) / len(triads))
            n = max(t[2] for t in triads)
        elif len(workers) == 2 and others:
            found = r(w, others[0])
            assert found is not None
            square, rel_se, n = found[0], found[1] / max(found[0], 1e-3), found[2]
        else:
            continue
        loadings[w] = math.sqrt(max(0.0, square))
        cc = call[w].value if w in call else prior_call.get(w, 1.0)
        value = square / max(cc, 1e-6)
        task[w] = Estimate.normal(
            value, abs(value) * rel_se, n, bounds=(0.0, 1.0), unit="task pairs"
        )
    pairs_out = {
        key: (*found, loadings.get(key[0], 0.0) * loadings.get(key[1], 0.0))
        for key, found in rho.items()
    }
    return Correlations(pairs=pairs_out, call=call, task=task)


def fit_tokens(
    calls: Iterable[tuple[str, str, int, int | None]],
) -> tuple[dict[str, dict[str, Estimate]], dict[str, Estimate]]:
    """From ``(worker, profile, completion tokens, max_tokens)`` of solve calls: per worker
    the mean completion tokens per profile and the log-normal spread (module docstring)."""
    data: dict[str, list[tuple[str, float, bool]]] = defaultdict(list)
    for worker, profile, tokens, cap in calls:
        censored = cap is not None and tokens >= cap
        data[worker].append((profile, math.log(max(1, tokens)), censored))
    means: dict[str, dict[str, Estimate]] = {}
    sigmas: dict[str, Estimate] = {}
    for worker, rows in data.items():
        profiles = sorted({p for p, _, _ in rows})
        mu = {p: sum(y for q, y, _ in rows if q == p) / sum(q == p for q, _, _ in rows)
              for p in profiles}  # fmt: skip
        sigma = max(0.05, math.sqrt(sum((y - mu[p]) ** 2 for p, y, _ in rows) / len(rows)))
        if all(c for _, _, c in rows):
            continue  # every reply cut: the spread and mean are not identified
        for _ in range(200):
            first: dict[str, list[float]] = {p: [] for p in profiles}
            second = 0.0
            for p, y, cut in rows:
                if cut:
                    alpha = (y - mu[p]) / sigma
                    tail = max(1e-12, 1 - _N.cdf(alpha))
                    mills = _N.pdf(alpha) / tail
                    first[p].append(mu[p] + sigma * mills)
                    second += sigma * sigma * (1 + alpha * mills)
                else:
                    first[p].append(y)
                    second += (y - mu[p]) ** 2
            new_mu = {p: sum(v) / len(v) for p, v in first.items()}
            new_sigma = max(0.05, math.sqrt(second / len(rows)))
            done = abs(new_sigma - sigma) < 1e-7 and all(
                abs(new_mu[p] - mu[p]) < 1e-7 for p in profiles
            )
            mu, sigma = new_mu, new_sigma
            if done:
                break
        means[worker] = {}
        for p in profiles:
            if all(cut for q, _, cut in rows if q == p):
                continue  # every reply on it cut: its mean is not identified
            n = sum(q == p for q, _, _ in rows)
            mean = math.exp(mu[p] + sigma * sigma / 2)
            means[worker][p] = Estimate.normal(
                mean, mean * sigma / math.sqrt(n), n, bounds=(0.0, math.inf), unit="calls"
            )
        sigmas[worker] = Estimate.normal(
            sigma, sigma / math.sqrt(2 * len(rows)), len(rows), unit="calls"
        )
    return means, sigmas


def fit_latency(
    calls: Iterable[tuple[str, int, float]],
) -> dict[str, tuple[Estimate, Estimate]]:
    """From ``(worker, completion tokens, latency_s)`` of every call: per worker
    ``(latency_base_s, tokens_per_s)`` by least squares (module docstring); a worker
    whose calls do not determine a positive slope is left out."""
    data: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for worker, tokens, latency in calls:
        data[worker].append((float(tokens), float(latency)))
    out: dict[str, tuple[Estimate, Estimate]] = {}
    for worker, rows in data.items():
        n = len(rows)
        if n < 3:
            continue
        mx = math.fsum(x for x, _ in rows) / n
        my = math.fsum(y for _, y in rows) / n
        sxx = math.fsum((x - mx) ** 2 for x, _ in rows)
        if sxx <= 0:
            continue
        slope = math.fsum((x - mx) * (y - my) for x, y in rows) / sxx
        if slope <= 0:
            continue
        base = my - slope * mx
        resid = math.fsum((y - base - slope * x) ** 2 for x, y in rows) / max(1, n - 2)
        se_slope = math.sqrt(resid / sxx)
        se_base = math.sqrt(resid * (1 / n + mx * mx / sxx))
        tps = 1 / slope
        out[worker] = (
            Estimate.normal(base, se_base, n, bounds=(0.0, math.inf), unit="calls"),
            Estimate.normal(tps, tps * se_slope / slope, n, bounds=(1e-9, math.inf), unit="calls"),
        )
    return out
