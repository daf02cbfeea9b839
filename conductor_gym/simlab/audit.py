"""The simulator audit: an optimizer that attacks a simulated pool (``conductor-gym sim audit``).

Every trainer is an optimizer, and it finds each place where a simulated pool pays for
something a real pool would not. The audit goes first. On **paired episodes** (every plan
plays the same seeds, so the same tasks and the same worker draws) it

1. plays every worker alone (the best single worker is the reference of every gain) and
   the oracle router (the best worker per family, read off those runs);
2. checks the **anchors** a real pool is known to keep (each a band, printed with the
   measured difference ± its paired standard error): unaided self-review, 5x
   self-reflection of GPT-5, mixture-of-agents with 2 to 7 solvers and the paper's
   8-call one, the bare value first and then the letter on lettered questions, claimed
   answers that are right as often as the worker alone, and random claimed options;
3. **searches** plan structures *and* subtask wordings (which workers, how many
   candidates, who checks, votes, aggregates, reviews or restates, access patterns, the
   faithful phrasings of each request, invented wordings, claims, hints and derived
   questions) with a genetic search on one block of seeds
   (:mod:`~conductor_gym.simlab.audit_search`): generations of children raced by
   successive halving (every child on a tenth of the block, the best third on a third,
   the best third of those in full), so a budget of 100,000 episodes tries about a
   thousand plans; then it re-plays the best plans on a fresh block (so their gains carry
   no selection bias) and on the out-of-domain suite;
4. builds **off-task twins** of the best plans (the graded step's request replaced by an
   off-task one in several languages, spliced with off-task text, negated, or given a
   claimed answer the audit knows is wrong) and reports each twin that still scores
   within 2 SE of its faithful plan: a place where the pool pays for what real models
   would not do.

Then (6.) it **searches each question family on its own** (half the search budget,
each family's search starting from the best global plans and the single workers) and
re-plays each family's best plan on that family's fresh seeds: what a plan that adapts
to the question's family gains over the best fixed plan (:class:`Adaptive`; the
simulator issue asks for at least +2, as real pools differ by benchmark).

Every mode also reports **the best fixed plan per number of calls** (1 to 5 steps): the
plan with the highest accuracy on the search block among those with that many steps
(every plan played there, single workers, anchors and the search's plans alike, that is a
fixed plan: no claimed answer, the question in a step), re-played on the fresh block with
its accuracy ± SE. A trained
conductor is compared with it at the same mean number of calls;
:meth:`AuditReport.save_plans` writes each one as a plan file that the agent
``plan:<path>`` replays (:mod:`conductor_gym.plan.template`).

**The randomised pool** (``k`` workers per episode and/or ``shuffle_workers``, the paper's
training setting): a fixed plan is the same plan for every question, so it cannot name a
worker the episode may not have drawn. Plans are then written by **position**
(``Model 0`` .. ``Model k-1``, :data:`~conductor_gym.simlab.audit_plans.Worker` an int);
the single "workers" are the positions (exchangeable under shuffled ids: their spread is
noise) and the best single is the best position; the oracle router picks, per episode,
the drawn worker (by name) that is best on the question's family; the anchors that name
a worker (GPT-5's self-reflection, the mixture of all seven with its aggregator) are
skipped, and the report says so; the others are played by position.

The bands are the paper's (arXiv 2512.04388) and the simulator issue's; they are printed
for any pool, but they describe the paper's seven workers. The audit reads no simulator
internals: it works on any pool the env can play (a preset, a pool file), so users run it
on theirs. Gains are in points of accuracy over episodes (not averaged by family); a
finding is *(twin - faithful) >= -2 SE*. The plans, their wordings and the search moves
are in :mod:`conductor_gym.simlab.audit_plans`; how plans are played on paired seeds in
:mod:`conductor_gym.simlab.audit_play`; the search in
:mod:`conductor_gym.simlab.audit_search`.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conductor_gym._validate import is_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import Plan
from conductor_gym.plan.template import write_plan_file
from conductor_gym.pool import make_pool
from conductor_gym.simlab.audit_plans import (
    ANSWER_TEMPLATE,
    FAITHFUL,
    OFF_TASK,
    VALUE_FIRST,
    AuditPlan,
    AuditStep,
    Worker,
    chain_plan,
    moa_plan,
    off_task_twins,
    single_plan,
    worker_label,
)
from conductor_gym.simlab.audit_play import Player, Scored, paired
from conductor_gym.simlab.audit_search import (
    FAMILY_PARENTS,
    FAMILY_REPLAYS,
    FAMILY_SHARE,
    Adaptive,
    evolve,
    per_family,
)

__all__ = [
    "FAITHFUL",
    "OFF_TASK",
    "Adaptive",
    "Anchor",
    "AuditPlan",
    "AuditReport",
    "AuditStep",
    "BestAtCalls",
    "Finding",
    "Scored",
    "audit",
]

MAX_CALLS = 5
"""The longest plan the search writes: best-per-calls covers 1 .. MAX_CALLS calls."""


@dataclass(frozen=True)
class Anchor:
    """One anchor check: the measured difference against ``baseline`` and its band.

    It :attr:`holds` unless the difference lies more than 2 paired SE outside the band (a
    two-sided test at about 95 %): the self-review anchor is the largest |change| of every
    worker's review, and the largest of seven noisy measurements is outside a band of
    ±2 by chance alone when each is within it (v3.1 at 400 episodes: +2.2 ± 0.8; at 1,600
    every worker is within ±0.8)."""

    name: str
    baseline: str
    difference: float
    se: float
    band: tuple[float, float]
    source: str

    @property
    def holds(self) -> bool:
        low, high = self.band
        return low - 2 * self.se <= self.difference <= high + 2 * self.se


@dataclass(frozen=True)
class Finding:
    """An off-task twin that scores within 2 SE of its faithful plan (or above it)."""

    plan: str
    twin: str
    difference: float
    se: float


@dataclass(frozen=True)
class BestAtCalls:
    """The best fixed plan with ``calls`` steps: its accuracy on the search block, then on
    the fresh block (``accuracy`` ± ``se``, the binomial SE) and its gain over the best
    single worker there (± the paired SE); ``fixed`` is the plan as a plan file holds it
    (``{question}`` placeholders, ``Model`` ids)."""

    calls: int
    plan: AuditPlan
    fixed: Plan
    search_accuracy: float
    accuracy: float
    se: float
    gain: float
    gain_se: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe, the plan written out (its description, steps and three lists)."""
        return {
            "calls": self.calls,
            "plan": self.plan.describe(),
            "steps": [vars(s) for s in self.plan.steps],
            **self.fixed.to_dict(),
            "search_accuracy": self.search_accuracy,
            "accuracy": self.accuracy,
            "se": self.se,
            "gain": self.gain,
            "gain_se": self.gain_se,
        }


@dataclass
class AuditReport:
    """What :func:`audit` found (module docstring); :meth:`format` prints it."""

    pool: str
    tasks: str
    ood_tasks: str | None
    episodes: int
    singles: dict[str, float]
    best_single: str
    oracle_gain: tuple[float, float]
    best: list[tuple[AuditPlan, float, float, float | None, float | None]]
    anchors: list[Anchor]
    findings: list[Finding]
    twins: int
    headroom_band: tuple[float, float] = (2.0, 9.0)
    ood_headroom_band: tuple[float, float] = (2.0, 10.0)
    notes: list[str] = field(default_factory=list)
    best_per_calls: list[BestAtCalls] = field(default_factory=list)
    k: int | None = None
    shuffle_workers: bool = False
    seed: int = 0
    candidates: int = 0
    """Plans the search tried (raced by successive halving: all on a tenth of a block,
    the best in full), in the global search and the per-family ones."""
    adaptive: Adaptive | None = None
    """The plan per question family and what it gains (:class:`Adaptive`); ``None`` when
    the budget left no room for the per-family searches."""

    @property
    def randomised(self) -> bool:
        """Whether the pool was played randomised (``k`` and/or shuffled ids), plans by
        position."""
        return self.k is not None or self.shuffle_workers

    @property
    def headroom(self) -> float:
        """The best plan's gain over the best single worker, fresh seeds, in-domain."""
        return self.best[0][1] if self.best else 0.0

    @property
    def ood_headroom(self) -> float | None:
        """The largest out-of-domain gain of the best plans (fresh seeds), if played."""
        gains = [ood for *_, ood, _ in self.best if ood is not None]
        return max(gains) if gains else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: every figure :meth:`format` prints, plans written out."""
        return {
            "pool": self.pool,
            "tasks": self.tasks,
            "ood_tasks": self.ood_tasks,
            "k": self.k,
            "shuffle_workers": self.shuffle_workers,
            "episodes": self.episodes,
            "singles": self.singles,
            "best_single": self.best_single,
            "oracle_gain": list(self.oracle_gain),
            "headroom": self.headroom,
            "headroom_band": list(self.headroom_band),
            "ood_headroom": self.ood_headroom,
            "ood_headroom_band": list(self.ood_headroom_band),
            "candidates": self.candidates,
            "adaptive": None if self.adaptive is None else self.adaptive.to_dict(),
            "best": [
                {
                    "plan": plan.describe(),
                    "steps": [vars(s) for s in plan.steps],
                    "gain": gain,
                    "se": se,
                    "ood_gain": ood,
                    "ood_se": ood_se,
                }
                for plan, gain, se, ood, ood_se in self.best
            ],
            "anchors": [{**vars(a), "band": list(a.band), "holds": a.holds} for a in self.anchors],
            "twins": self.twins,
            "findings": [vars(f) for f in self.findings],
            "best_per_calls": [b.to_dict() for b in self.best_per_calls],
            "notes": list(self.notes),
        }

    def save_plans(self, directory: str | Path) -> list[Path]:
        """Write each best-per-calls plan to ``directory/calls-<n>.plan`` (created), a
        plan file the agent ``plan:<path>`` replays; returns the paths written."""
        folder = Path(directory)
        draw = f"--pool {self.pool}"
        if self.k is not None:
            draw += f" --k {self.k}"
        if self.shuffle_workers:
            draw += " --shuffle-workers"
        written = []
        for b in self.best_per_calls:
            path = folder / f"calls-{b.calls}.plan"
            comment = (
                f"The best fixed plan with {b.calls} call(s) that conductor-gym sim audit found\n"
                f"({draw}, tasks {self.tasks}, seed {self.seed}): {b.search_accuracy:.1f}% on "
                f"the search block,\n{b.accuracy:.1f} ± {b.se:.1f}% on fresh seeds, "
                f"{b.gain:+.1f} ± {b.gain_se:.1f} over the best single.\n{b.plan.describe()}\n"
                "Model ids are the episode's positions; replay with the same draw:\n"
                f"conductor-gym evaluate --agent plan:{path} {draw}"
            )
            written.append(write_plan_file(path, b.fixed, comment=comment))
        return written

    def format(self) -> str:
        draw = ""
        if self.randomised:
            draw = f" k={self.k if self.k is not None else 'all'}" + (
                " shuffled ids" if self.shuffle_workers else " ids in pool order"
            )
        lines = [
            f"sim audit: pool={self.pool!r}{draw} tasks={self.tasks!r}"
            + (f" ood={self.ood_tasks!r}" if self.ood_tasks else "")
            + f", {self.episodes} episodes, {self.candidates} candidate plans searched",
            "",
            "single workers (accuracy %): "
            + ", ".join(f"{w} {a:.1f}" for w, a in sorted(self.singles.items(), key=_by_value)),
            f"best single: {self.best_single}; oracle router gain "
            f"{self.oracle_gain[0]:+.1f} ± {self.oracle_gain[1]:.1f}",
            "",
            "best plans found (gain over the best single, fresh seeds):",
        ]
        for plan, gain, se, ood, ood_se in self.best:
            ood_text = f"  ood {ood:+.1f} ± {ood_se:.1f}" if ood is not None else ""
            lines.append(f"  {gain:+6.1f} ± {se:.1f}{ood_text}  {plan.describe()}")
        if self.best_per_calls:
            lines += [
                "",
                "best fixed plan per number of calls (best on the search block; fresh seeds: "
                "accuracy ± SE, gain ± SE):",
            ]
            for b in self.best_per_calls:
                lines.append(
                    f"  {b.calls} call{'s' if b.calls > 1 else ' '}"
                    f"  search {b.search_accuracy:5.1f}"
                    f"  fresh {b.accuracy:5.1f} ± {b.se:.1f}  ({b.gain:+.1f} ± {b.gain_se:.1f})"
                    f"  {b.plan.describe()}"
                )
        low, high = self.headroom_band
        lines += ["", "anchors (difference ± SE, band, holds: within 2 SE of the band):"]
        lines.append(
            f"  {'headroom (best plan)':<34} {self.headroom:+6.1f}       "
            f"[{low:+.0f}, {high:+.0f}]  {'yes' if low <= self.headroom <= high else 'NO'}"
        )
        if self.ood_headroom is not None:
            low, high = self.ood_headroom_band
            ok = low <= self.ood_headroom <= high
            lines.append(
                f"  {'headroom out of domain':<34} {self.ood_headroom:+6.1f}       "
                f"[{low:+.0f}, {high:+.0f}]  {'yes' if ok else 'NO'}"
            )
        if self.adaptive is not None:
            margin, margin_se = self.adaptive.gain_over_fixed
            lines.append(
                f"  {'per-family plans over best fixed':<34} {margin:+6.1f} ± "
                f"{margin_se:.1f} [+2, ..]  {'yes' if margin >= 2 else 'NO'}  "
                f"(over the best single {self.adaptive.gain[0]:+.1f} ± {self.adaptive.gain[1]:.1f})"
            )
            for family, described in self.adaptive.plans.items():
                difference, se = self.adaptive.over_fixed[family]
                lines.append(f"    {family:<30} {difference:+6.1f} ± {se:.1f}  {described}")
        for a in self.anchors:
            lines.append(
                f"  {a.name:<34} {a.difference:+6.1f} ± {a.se:.1f} [{a.band[0]:+.0f}, "
                f"{a.band[1]:+.0f}]  {'yes' if a.holds else 'NO'}  vs {a.baseline} ({a.source})"
            )
        lines += [
            "",
            f"off-task twins scoring within 2 SE of their faithful plan: "
            f"{len(self.findings)} of {self.twins}",
        ]
        for f in self.findings:
            lines.append(f"  {f.difference:+6.1f} ± {f.se:.1f}  {f.twin:<14} of {f.plan}")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _by_value(item: tuple[str, float]) -> float:
    return -item[1]


def audit(
    *,
    pool: Any = "sim-paper",
    tasks: str = "offline",
    ood_tasks: str | None = "offline-ood",
    episodes: int = 50_000,
    per_plan: int = 400,
    top: int = 3,
    seed: int = 0,
    k: int | None = None,
    shuffle_workers: bool = False,
    progress: Callable[[str], None] | None = None,
    checkpoint: str | Path | None = None,
) -> AuditReport:
    """Attack ``pool`` on ``tasks`` with about ``episodes`` paired episodes (module
    docstring); every evaluation plays ``per_plan`` episodes of one seed block.

    ``checkpoint``: a file the outcomes played so far are saved to (every 50
    evaluations and at the end) and resumed from: an audit stopped and run again with the
    same arguments replays its saved evaluations (counted in the budget as before) and
    reports what one uninterrupted run would.

    ``FAMILY_SHARE`` (:mod:`~conductor_gym.simlab.audit_search`) of the search budget
    goes to the per-family searches when it pays for all of them (at ``per_plan=400``
    on the paper pool, from about 110,000 episodes); below that the whole search is
    global and a note says so.

    ``k`` (workers per episode, a random k-of-n draw) and ``shuffle_workers`` (shuffled
    ``Model`` ids) play the randomised pool, plans written by position (module
    docstring); neither (the default) plays every worker in the pool's order.

    Raises :class:`~conductor_gym.errors.ConfigurationError` for a budget too small to
    play the single workers and the anchors (about ``20 * per_plan`` episodes for the
    paper pool), and for a ``k`` outside ``1 .. pool size``.
    """
    if isinstance(per_plan, bool) or not isinstance(per_plan, int) or per_plan < 20:
        raise ConfigurationError(f"audit: per_plan must be an int >= 20, got {per_plan!r}")
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ConfigurationError(f"audit: episodes must be an int >= 1, got {episodes!r}")
    if not isinstance(shuffle_workers, bool):
        raise ConfigurationError(f"audit: shuffle_workers must be a bool, got {shuffle_workers!r}")
    size = make_pool(pool).n if k is not None or shuffle_workers else None
    if size is not None and k is not None and not (is_int(k) and 1 <= k <= size):
        raise ConfigurationError(f"audit: k must be an int in 1..{size} (the pool size), got {k!r}")
    say = progress or (lambda _text: None)
    player = Player(pool, seed, per_plan, k=k, shuffle=shuffle_workers)
    if checkpoint is not None:
        player.resume(Path(checkpoint), (str(pool), tasks, ood_tasks, per_plan, seed, k,
                                         shuffle_workers))  # fmt: skip
    workers = player.names(tasks)
    fixed_cost = (
        len(workers) * 2  # singles, self-review
        + 14  # the other anchors and the search's starting plans
        + (len(workers) if ood_tasks else 0)  # out-of-domain singles
        + (top + 1) * (len(OFF_TASK) + 2)  # fresh, out-of-domain and twin runs
    ) * per_plan
    if episodes < fixed_cost:
        raise ConfigurationError(
            f"audit: episodes={episodes} cannot cover the single workers and anchors of a "
            f"{len(workers)}-worker pool at per_plan={per_plan}: give at least {fixed_cost}"
        )
    # 1. single workers and the oracle router (block 0: search and anchors; 1: fresh)
    singles = {w: player.play(single_plan(w), tasks, 0) for w in workers}
    best_name = max(singles, key=lambda w: singles[w].accuracy)
    best = singles[best_name]
    say(f"single workers played; best {worker_label(best_name)} {best.accuracy:.1f}")
    fresh_best = player.play(best.plan, tasks, 1)
    oracle = _oracle(player, singles, tasks)
    oracle_gain = paired(oracle, best.outcomes)

    # 2. anchors
    anchors = _anchors(player, workers, singles, best, tasks)
    say(f"anchors played ({player.episodes} episodes)")

    # 3. the search, on block 0: every family at once, then each family on its own
    rng = random.Random(f"audit:{seed}")
    population: list[Scored] = [best]
    for starter in _starters(workers, best_name):
        population.append(player.play(starter, tasks, 0))
    families = sorted(set(player.families(tasks, 0)))
    # what step 4 plays: the out-of-domain singles, the fresh and out-of-domain runs of
    # the best plans and the off-task twins of them and of the best single worker
    reserve = ((len(workers) if ood_tasks else 0) + (top + 1) * (len(OFF_TASK) + 2)) * per_plan

    def room_for_calls() -> int:
        # step 5's fresh re-plays of the best plan per number of calls not yet re-played
        chosen = {c.plan.key() for c in _choose(population, top)}
        at_calls = _best_at_calls(player.scored(tasks, 0), workers).values()
        return per_plan * sum(
            s.plan.key() not in chosen and not player.played(s.plan, tasks, 1) for s, _ in at_calls
        )

    left = episodes - player.episodes - reserve
    starters = min(FAMILY_PARENTS, len(population)) + len(workers)
    family_budget = max(0, int(left * FAMILY_SHARE))
    # (each family's search also pays step 6's validation and fresh re-plays)
    if family_budget < len(families) * (starters + 2 + FAMILY_REPLAYS) * per_plan:
        family_budget = 0  # too small for a search per family: the whole search is global
    global_stop = episodes - reserve - family_budget
    candidates = evolve(
        player, tasks, population, workers, rng,
        room=lambda: global_stop - player.episodes - room_for_calls(),
    )  # fmt: skip
    say(f"search done: {candidates} candidates ({player.episodes} episodes)")

    # 4. the best plans on fresh seeds, out of domain, and their off-task twins
    chosen = _choose(population, top)
    results: list[tuple[AuditPlan, float, float, float | None, float | None]] = []
    findings: list[Finding] = []
    twins = 0
    ood_best = None
    if ood_tasks:
        ood_singles = {w: player.play(single_plan(w), ood_tasks, 1) for w in workers}
        ood_best = max(ood_singles.values(), key=lambda s: s.accuracy)
    for scored in chosen:
        fresh = player.play(scored.plan, tasks, 1)
        gain, se = fresh.versus(fresh_best)
        ood_gain = ood_se = None
        if ood_tasks and ood_best is not None:
            ood_gain, ood_se = player.play(scored.plan, ood_tasks, 1).versus(ood_best)
        results.append((scored.plan, gain, se, ood_gain, ood_se))
    for faithful in [fresh_best, *(player.play(c.plan, tasks, 1) for c in chosen)]:
        for label, twin in off_task_twins(faithful.plan):
            twins += 1
            difference, twin_se = player.play(twin, tasks, 1).versus(faithful)
            if difference >= -2 * twin_se:
                findings.append(Finding(faithful.plan.describe(), label, difference, twin_se))
    results.sort(key=lambda r: -r[1])

    # 5. the best fixed plan per number of calls, on fresh seeds (the search left room
    # for them; a budget too small for any search may leave none: those are skipped)
    per_calls: list[BestAtCalls] = []
    unplayed: list[int] = []
    at_calls = _best_at_calls(player.scored(tasks, 0), workers)
    for calls, (scored, fixed) in sorted(at_calls.items()):
        if not player.played(scored.plan, tasks, 1) and player.episodes >= episodes - family_budget:
            unplayed.append(calls)
            continue
        fresh = player.play(scored.plan, tasks, 1)
        p = fresh.accuracy / 100.0
        se = 100.0 * math.sqrt(p * (1.0 - p) / len(fresh.outcomes))
        gain, gain_se = fresh.versus(fresh_best)
        per_calls.append(
            BestAtCalls(
                calls, scored.plan, fixed, scored.accuracy, fresh.accuracy, se, gain, gain_se
            )
        )

    # 6. a plan per family: each family searched on its own, from the best plans so far
    adaptive = None
    notes: list[str] = []
    if family_budget and results:
        parents = sorted(population, key=lambda s: -s.accuracy)[:FAMILY_PARENTS]
        for i, family in enumerate(families):
            stop = player.episodes + (episodes - player.episodes) // (len(families) - i)
            found = [player.play(s.plan, tasks, 0, subset=family) for s in parents]
            found += [player.play(single_plan(w), tasks, 0, subset=family) for w in workers]

            def room(stop: int = stop) -> int:
                return stop - FAMILY_REPLAYS * per_plan - player.episodes

            candidates += evolve(player, tasks, found, workers, rng, subset=family, room=room)
        adaptive = per_family(player, tasks, families, results[0][0], best.plan)
        say(f"per-family search done ({player.episodes} episodes)")
    else:
        notes.append(
            "no per-family search: the budget left after the global search is too small "
            f"(give more than {episodes} episodes)"
        )
    player.save(force=True)
    if size is not None:
        notes = _randomised_notes(player, len(workers), size) + notes
    if unplayed:
        notes.append(
            "best fixed plan not re-played on fresh seeds for "
            + ", ".join(map(str, unplayed))
            + f" call(s): the budget was spent (give more than {episodes} episodes)"
        )
    return AuditReport(
        pool=str(pool),
        tasks=tasks,
        ood_tasks=ood_tasks,
        episodes=player.episodes,
        singles={worker_label(w): s.accuracy for w, s in singles.items()},
        best_single=worker_label(best_name),
        oracle_gain=oracle_gain,
        best=results,
        anchors=anchors,
        findings=findings,
        twins=twins,
        notes=notes,
        best_per_calls=per_calls,
        k=k,
        shuffle_workers=shuffle_workers,
        seed=seed,
        candidates=candidates,
        adaptive=adaptive,
    )


def _choose(population: Sequence[Scored], top: int) -> list[Scored]:
    """The ``top`` best multi-step plans of the search, one per description."""
    chosen: list[Scored] = []
    for scored in sorted(population, key=lambda s: -s.accuracy):
        shown = {c.plan.describe() for c in chosen}
        if scored.plan.describe() not in shown and len(scored.plan.steps) > 1:
            chosen.append(scored)
        if len(chosen) == top:
            break
    return chosen


def _best_at_calls(
    played: Sequence[Scored], workers: Sequence[Worker]
) -> dict[int, tuple[Scored, Plan]]:
    """Per number of steps (1 .. :data:`MAX_CALLS`), the fixed plan (with its plan-file
    form) most accurate among the ``played`` ones (every plan of the search block: the
    single workers, the anchors and the search's plans; those that claim an answer are
    no fixed plan); the first played wins a tie."""
    best: dict[int, tuple[Scored, Plan]] = {}
    for scored in played:
        calls = len(scored.plan.steps)
        if calls > MAX_CALLS or (calls in best and best[calls][0].accuracy >= scored.accuracy):
            continue
        fixed = scored.plan.fixed_plan(workers)
        if fixed is not None:
            best[calls] = (scored, fixed)
    return best


def _randomised_notes(player: Player, positions: int, size: int) -> list[str]:
    """What the report of a randomised pool means, and what it leaves out."""
    shuffled = player.shuffle
    return [
        f"randomised pool: each episode draws {positions} of the {size} workers"
        + (" under shuffled ids" if shuffled else ", ids in pool order")
        + f"; every plan names positions Model 0 .. Model {positions - 1}, not workers (a "
        "fixed plan cannot name a worker the episode may not have drawn)",
        "the single workers are positions: "
        + (
            "under shuffled ids they are exchangeable (each is a random drawn worker), so "
            "their spread is noise and the best single is the best position"
            if shuffled
            else "without shuffling a position holds the drawn workers in pool order, so "
            "they are not exchangeable"
        ),
        "oracle router: per episode the drawn worker (by name) best on the question's "
        "family, a router that reads the names, not a fixed plan",
        "anchors skipped (they name specific workers): gpt-5 5x self-reflection, MoA of "
        "all workers + aggregator; kept, by position: self-review, MoA of the 2 .. "
        f"{min(7, positions)} best positions, value first, claims",
    ]


def _oracle(player: Player, singles: Mapping[Worker, Scored], tasks: str) -> tuple[bool, ...]:
    """The oracle router, one call: per episode of block 0, the drawn worker, by name,
    with the best accuracy on the question's family over the block's episodes that drew
    it (the first in ``Model`` order on a tie). ``singles`` are keyed by name, or by
    position on a randomised pool; in fixed order every episode draws every worker, so
    this is the best worker per family."""
    env = player.env(tasks, 5)
    episodes: list[tuple[str, tuple[str, ...]]] = []
    for i in range(player.per_plan):
        _, info = env.reset(seed=player.seed + i)
        episodes.append((env.tasks[info["task_index"]].domain, tuple(info["pool"])))

    def single(position: int, name: str) -> Scored:
        return singles[position if player.randomised else name]

    seen: dict[tuple[str, str], list[bool]] = {}
    for i, (family, names) in enumerate(episodes):
        for position, name in enumerate(names):
            seen.setdefault((family, name), []).append(single(position, name).outcomes[i])
    rate = {key: statistics.fmean(outcomes) for key, outcomes in seen.items()}
    routed = []
    for i, (family, names) in enumerate(episodes):
        position = max(range(len(names)), key=lambda p: rate[family, names[p]])
        routed.append(single(position, names[position]).outcomes[i])
    return tuple(routed)


def _starters(workers: Sequence[Worker], best: Worker) -> list[AuditPlan]:
    """Seeds of the search: solvers then a checker, voter or aggregator; and two solvers
    reviewed by the best, a third solver, and the best voting between the last two (the
    best fixed plan an outside optimizer found on simulator v3)."""
    others = [w for w in workers if w != best]
    plans = []
    if len(others) >= 3:
        a, b, c = others[:3]
        plans.append(
            AuditPlan(
                "start:review-vote",
                (
                    AuditStep(a, FAITHFUL["solve"][0]),
                    AuditStep(b, FAITHFUL["solve"][0]),
                    AuditStep(best, FAITHFUL["review"][0], (0, 1), "review"),
                    AuditStep(c, FAITHFUL["solve"][0]),
                    AuditStep(best, FAITHFUL["vote"][0], (2, 3), "vote"),
                ),
            )
        )
    for n in (2, 3, 4):
        solvers = [best, *others][:n]
        for kind in ("check", "vote", "aggregate"):
            steps = [AuditStep(w, FAITHFUL["solve"][0]) for w in solvers]
            steps.append(AuditStep(best, FAITHFUL[kind][0], "all", kind))
            plans.append(AuditPlan(f"start:{n}:{kind}", tuple(steps)))
    return plans


def _anchors(
    player: Player,
    workers: Sequence[Worker],
    singles: Mapping[Worker, Scored],
    best: Scored,
    tasks: str,
) -> list[Anchor]:
    out: list[Anchor] = []
    review = [
        player.play(chain_plan(f"review:{w}", w, 2), tasks, 0).versus(singles[w]) for w in workers
    ]
    worst = max(review, key=lambda r: abs(r[0]))
    out.append(
        Anchor(
            "self-review (largest |change|)",
            "the same worker alone",
            *worst,
            (-2.0, 2.0),
            "Huang et al. 2023",
        )
    )
    if "gpt-5" in workers:
        reflect = player.play(chain_plan("reflect:gpt-5:5", "gpt-5", 5), tasks, 0)
        out.append(
            Anchor(
                "gpt-5 5x self-reflection",
                "gpt-5 alone",
                *reflect.versus(singles["gpt-5"]),
                (-1.0, 2.0),
                "paper +0.8",
            )
        )
    ranked = sorted(workers, key=lambda w: -singles[w].accuracy)
    most = min(7, len(workers))
    moa = [
        player.play(moa_plan(ranked[:n], best.plan.steps[0].worker), tasks, 0).versus(best)
        for n in range(2, most + 1)
    ]
    top_moa = max(moa, key=lambda r: r[0])
    out.append(
        Anchor(
            f"MoA, 2-{most} solvers (best of them)",
            "best single",
            *top_moa,
            (-100.0, 12.0),
            "headroom band",
        )
    )
    if len(workers) >= 7 and not player.randomised:  # the paper's aggregator, by name
        full = player.play(moa_plan(workers, best.plan.steps[0].worker), tasks, 0).versus(best)
        out.append(
            Anchor("MoA, all workers + aggregator", "best single", *full, (-4.0, 0.0), "paper -2.0")
        )
    name = best.plan.steps[0].worker
    label = worker_label(name)
    alone = player.play(best.plan, tasks, 2, subset="lettered")
    if alone.outcomes:
        value_first = AuditPlan(
            "value-first",
            (AuditStep(name, VALUE_FIRST[0]), AuditStep(name, VALUE_FIRST[1], (0,))),
        )
        vf = player.play(value_first, tasks, 2, subset="lettered")
        out.append(
            Anchor(
                "value first, then the letter",
                f"{label} alone (lettered)",
                *vf.versus(alone),
                (-100.0, 3.0),
                "simulator issue item 4",
            )
        )
    p = best.accuracy / 100.0
    honest = AuditPlan("claims", (AuditStep(name, ANSWER_TEMPLATE),), claim_rate=p)
    out.append(
        Anchor(
            "claims right as often as the worker",
            f"{label} alone",
            *player.play(honest, tasks, 0).versus(best),
            (-100.0, 2.0),
            "Sharma et al. 2023",
        )
    )
    if alone.outcomes:
        rand = AuditPlan("random-option", (AuditStep(name, ANSWER_TEMPLATE),), random_option=True)
        out.append(
            Anchor(
                "random claimed options",
                f"{label} alone (lettered)",
                *player.play(rand, tasks, 2, subset="lettered").versus(alone),
                (-100.0, -0.5),
                "claims must cost",
            )
        )
    return out
