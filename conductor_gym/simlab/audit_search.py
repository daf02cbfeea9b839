"""The search of :mod:`conductor_gym.simlab.audit`: a genetic search raced by successive
halving (:func:`evolve`), run on every family at once and on each family on its own, and
the plan per family it reports (:func:`per_family`, :class:`Adaptive`).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from conductor_gym.simlab.audit_plans import AuditPlan, Worker, crossover, mutate
from conductor_gym.simlab.audit_play import Player, Scored

__all__ = [
    "FAMILY_PARENTS",
    "FAMILY_REPLAYS",
    "FAMILY_SHARE",
    "GENERATION",
    "VALIDATED",
    "Adaptive",
    "evolve",
    "per_family",
]

GENERATION = 24
"""Children per generation of the search (fewer when the budget has room for fewer)."""
FAMILY_SHARE = 0.5
"""The share of the search budget spent searching each question family on its own."""
VALIDATED = 3
"""Per family, how many of its search's best plans are re-played on a validation block."""
FAMILY_REPLAYS = VALIDATED + 4
"""Runs per family after its search: the finalists and the best fixed plan on the
validation block, the pick, the best fixed plan and the best single on fresh seeds."""
FAMILY_PARENTS = 6
"""The best plans of the global search each family's search starts from (with the
single workers)."""


def _rungs(full: int) -> tuple[int, ...]:
    """The episodes a child is played on at each rung of successive halving: a tenth of
    the block, a third, the whole (a third of the children go on at each rung)."""
    return tuple(sorted({min(full, max(20, full // 10)), min(full, max(20, full // 3)), full}))


def _generation_cost(children: int, rungs: Sequence[int]) -> int:
    cost, alive, played = 0, children, 0
    for n in rungs:
        cost += alive * (n - played)
        played, alive = n, max(1, math.ceil(alive / 3))
    return cost


def evolve(
    player: Player,
    tasks: str,
    population: list[Scored],
    workers: Sequence[Worker],
    rng: random.Random,
    *,
    room: Callable[[], int],
    subset: str | None = None,
) -> int:
    """A genetic search on block 0 (of ``subset``), in generations: parents from the 8
    best of ``population`` (rank-weighted), children by mutation or crossover; each
    generation is raced by successive halving (:func:`_rungs`: every child on a tenth of
    the block, the best third on a third, the best third of those in full), and the
    children played in full join ``population``. Stops when ``room()`` (episodes left)
    cannot pay for one child in full; returns the number of children tried."""
    full = len(player.seeds(tasks, 0, subset))
    rungs = _rungs(full)
    candidates = 0
    while True:
        size = GENERATION
        while size > 0 and _generation_cost(size, rungs) > room():
            size -= 1
        if size == 0:
            return candidates
        ranked = sorted(population, key=lambda s: -s.accuracy)[:8]
        children: dict[tuple[Any, ...], AuditPlan] = {}
        for _ in range(50 * size):
            if len(children) == size:
                break
            parent = ranked[min(int(rng.expovariate(0.7)), len(ranked) - 1)].plan
            if len(ranked) > 1 and rng.random() < 0.3:
                child = crossover(parent, ranked[rng.randrange(len(ranked))].plan, rng)
            else:
                child = mutate(parent, workers, rng)
            if not player.tried(child, tasks, 0, subset) and child.key() not in children:
                children[child.key()] = child
        if not children:
            return candidates
        candidates += len(children)
        alive = list(children.values())
        for n in rungs:
            scored = [player.play(c, tasks, 0, subset=subset, n=n) for c in alive]
            if n == full:
                population.extend(scored)
                break
            scored.sort(key=lambda s: -s.accuracy)
            alive = [s.plan for s in scored[: max(1, math.ceil(len(scored) / 3))]]


@dataclass(frozen=True)
class Adaptive:
    """A plan per question family (the most accurate on the family's search block, from
    its own search), re-played on each family's fresh block and compared, family by
    family on paired seeds, with the best fixed plan and the best single worker there;
    the totals weigh each family by its share of the suite."""

    plans: dict[str, str]
    over_fixed: dict[str, tuple[float, float]]
    gain: tuple[float, float]
    """Over the best single worker (± paired SE)."""
    gain_over_fixed: tuple[float, float]
    """Over the best fixed plan (± paired SE)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "plans": dict(self.plans),
            "over_fixed": {f: list(v) for f, v in self.over_fixed.items()},
            "gain": list(self.gain),
            "gain_over_fixed": list(self.gain_over_fixed),
        }


def per_family(
    player: Player, tasks: str, families: Sequence[str], fixed: AuditPlan, single: AuditPlan
) -> Adaptive | None:
    """The per-family plans (:class:`Adaptive`): per family, of the :data:`VALIDATED`
    most accurate plans of its search and the best fixed plan, the most accurate on the
    search block and a validation block together; ``None`` when a family has none."""
    shares = Counter(player.families(tasks, 1))
    total = sum(shares[f] for f in families)
    plans: dict[str, str] = {}
    over_fixed: dict[str, tuple[float, float]] = {}
    gain = [0.0, 0.0]
    margin = [0.0, 0.0]
    for family in families:
        found = player.scored(tasks, 0, family)
        if not found or not total:
            return None
        # the family's best few and the best fixed plan, re-played on a validation block
        # (block 3) and picked on both blocks: the search block alone picks its luckiest
        finalists = sorted(found, key=lambda s: -s.accuracy)[:VALIDATED]
        if fixed.key() not in {s.plan.key() for s in finalists}:
            finalists.append(player.play(fixed, tasks, 0, subset=family))
        pick = max(
            finalists,
            key=lambda s: s.accuracy + player.play(s.plan, tasks, 3, subset=family).accuracy,
        )
        plans[family] = pick.plan.describe()
        fresh = player.play(pick.plan, tasks, 1, subset=family)
        weight = shares[family] / total
        for into, baseline in ((margin, fixed), (gain, single)):
            difference, se = fresh.versus(player.play(baseline, tasks, 1, subset=family))
            into[0] += weight * difference
            into[1] += (weight * se) ** 2
            if baseline is fixed:
                over_fixed[family] = (difference, se)
    return Adaptive(
        plans,
        over_fixed,
        (gain[0], math.sqrt(gain[1])),
        (margin[0], math.sqrt(margin[1])),
    )
