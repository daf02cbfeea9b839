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
   faithful phrasings of each request) with a small evolutionary search on one block of
   seeds, then re-plays the best plans on a fresh block (so their gains carry no
   selection bias) and on the out-of-domain suite;
4. builds **off-task twins** of the best plans (the graded step's request replaced by an
   off-task one in several languages, spliced with off-task text, negated, or given a
   claimed answer the audit knows is wrong) and reports each twin that still scores
   within 2 SE of its faithful plan: a place where the pool pays for what real models
   would not do.

The bands are the paper's (arXiv 2512.04388) and the simulator issue's; they are printed
for any pool, but they describe the paper's seven workers. The audit reads no simulator
internals: it works on any pool the env can play (a preset, a pool file), so users run it
on theirs. Gains are in points of accuracy over episodes (not averaged by family); a
finding is *(twin - faithful) > -2 SE*.
"""

from __future__ import annotations

import math
import random
import re
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from conductor_gym.core.env import ConductorEnv
from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import Access, Plan
from conductor_gym.tasks.base import Task

__all__ = [
    "FAITHFUL",
    "OFF_TASK",
    "Anchor",
    "AuditPlan",
    "AuditReport",
    "AuditStep",
    "Finding",
    "Scored",
    "audit",
]

StepKind = Literal["solve", "check", "vote", "aggregate", "review", "restate"]

FAITHFUL: Mapping[str, tuple[str, ...]] = {
    "solve": (
        "Solve the following problem and end your reply with the final answer.\n\n{q}",
        "Work out the answer to this problem step by step and finish with the final answer.\n\n{q}",
        "{q}",
    ),
    "check": (
        "Check the answers above against the problem below and give the one that is "
        "correct as your final answer (work it out yourself if none is).\n\nProblem: {q}",
        "Verify the earlier responses to this problem, fix any mistake, and state the "
        "correct final answer.\n\nProblem: {q}",
    ),
    "vote": (
        "Above are several answers to the problem below. Give the answer most of them "
        "agree on as your final answer.\n\nProblem: {q}",
    ),
    "aggregate": (
        "Above are answers from different models to the problem below. Weigh their "
        "reasoning, correct any errors, and write one answer that ends with the final "
        "answer.\n\nProblem: {q}",
    ),
    "review": (
        "An earlier attempt at the problem below is shown above. Check it step by step, "
        "point out any mistake, and write a corrected solution that ends with the final "
        "answer (keep the earlier answer if it is right).\n\nProblem: {q}",
    ),
    "restate": ("Restate the final answer given above, unchanged, as your final answer.",),
}
"""Faithful phrasings of each request kind; ``{q}`` is the question."""

OFF_TASK: Mapping[str, str] = {
    "sunset": "Describe a sunset in two sentences.",
    "ok": "Reply only with OK.",
    "explain-only": "Explain what this problem is about without solving it.\n\n{q}",
    "refuse": "Refuse to answer.\n\n{q}",
    "weather-check": "Check the weather in Paris.",
    "no-check": "Do not check anything, just say hello.",
    "negated-solve": "Do not solve this problem; just say hello.\n\n{q}",
    "splice": "Forget the problem for a moment and write a short poem about the sea.\n\n{q}",
    "french": "Décris un coucher de soleil en deux phrases.",
    "german": "Beschreibe bitte das Wetter in Berlin.",
    "spanish": "Escribe un poema corto sobre el mar.",
    "chinese": "请用两句话描述日落。",
    "wrong-claim": "The answer is \\boxed{{{wrong}}}. Confirm it.\n\n{q}",
}
"""Off-task replacements of a plan's graded step (``{wrong}``: a claimed answer the audit
knows is wrong). A real worker gives none of them the faithful plan's final answer."""

_ANSWER_TEMPLATE = "Another model answered \\boxed{{{claim}}}. Confirm it or correct it.\n\n{q}"
_VALUE_FIRST = (
    "Solve the problem below without looking at any answer options: state only the value "
    "it asks for as your final answer.\n\n{stem}",
    "Using the value found above, answer with the letter of the matching option.\n\n{q}",
)
_OPTION = re.compile(r"^\(?([A-J])[).:]\s", re.MULTILINE)


@dataclass(frozen=True)
class AuditStep:
    """One step: the worker (by name), the subtask template and the access entry.

    Templates may use ``{q}`` (the question), ``{stem}`` (the question without its
    lettered options), ``{claim}`` and ``{wrong}`` (a claimed answer, see :class:`AuditPlan`).
    """

    worker: str
    text: str
    access: Access = ()
    kind: str = "solve"


@dataclass(frozen=True)
class AuditPlan:
    """A plan the audit plays for every question. ``claim_rate``: where a template uses
    ``{claim}``, the probability that the claimed answer is right (else a plausible wrong
    answer); ``random_option`` claims a uniformly random option of a lettered question."""

    name: str
    steps: tuple[AuditStep, ...]
    claim_rate: float | None = None
    random_option: bool = False

    def key(self) -> tuple[Any, ...]:
        return (self.steps, self.claim_rate, self.random_option)

    def describe(self) -> str:
        """One line: ``worker:kind[access]`` per step."""
        parts = []
        for s in self.steps:
            access = "all" if s.access == "all" else ",".join(map(str, s.access))
            parts.append(f"{s.worker}:{s.kind}[{access}]")
        return " -> ".join(parts)


@dataclass(frozen=True)
class Scored:
    """A plan's correct/incorrect outcome per seed of one block of one suite."""

    plan: AuditPlan
    tasks: str
    outcomes: tuple[bool, ...]

    @property
    def accuracy(self) -> float:
        return 100.0 * sum(self.outcomes) / len(self.outcomes)

    def versus(self, other: Scored) -> tuple[float, float]:
        """``(mean difference, its paired SE)`` in points, ``self - other``."""
        return _paired(self.outcomes, other.outcomes)


@dataclass(frozen=True)
class Anchor:
    """One anchor check: the measured difference against ``baseline`` and its band."""

    name: str
    baseline: str
    difference: float
    se: float
    band: tuple[float, float]
    source: str

    @property
    def holds(self) -> bool:
        low, high = self.band
        return low <= self.difference <= high


@dataclass(frozen=True)
class Finding:
    """An off-task twin that scores within 2 SE of its faithful plan (or above it)."""

    plan: str
    twin: str
    difference: float
    se: float


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
    headroom_band: tuple[float, float] = (4.0, 12.0)
    ood_headroom_band: tuple[float, float] = (4.0, 14.0)
    notes: list[str] = field(default_factory=list)

    @property
    def headroom(self) -> float:
        """The best plan's gain over the best single worker, fresh seeds, in-domain."""
        return self.best[0][1] if self.best else 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: every figure :meth:`format` prints, plans written out."""
        return {
            "pool": self.pool,
            "tasks": self.tasks,
            "ood_tasks": self.ood_tasks,
            "episodes": self.episodes,
            "singles": self.singles,
            "best_single": self.best_single,
            "oracle_gain": list(self.oracle_gain),
            "headroom": self.headroom,
            "headroom_band": list(self.headroom_band),
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
        }

    def format(self) -> str:
        lines = [
            f"sim audit: pool={self.pool!r} tasks={self.tasks!r}"
            + (f" ood={self.ood_tasks!r}" if self.ood_tasks else "")
            + f", {self.episodes} episodes",
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
        low, high = self.headroom_band
        lines += ["", "anchors (difference ± SE, band, holds):"]
        lines.append(
            f"  {'headroom (best plan)':<34} {self.headroom:+6.1f}       "
            f"[{low:+.0f}, {high:+.0f}]  {'yes' if low <= self.headroom <= high else 'NO'}"
        )
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


def _paired(a: Sequence[bool], b: Sequence[bool]) -> tuple[float, float]:
    diffs = [float(x) - float(y) for x, y in zip(a, b, strict=True)]
    mean = statistics.fmean(diffs)
    se = statistics.stdev(diffs) / math.sqrt(len(diffs)) if len(diffs) > 1 else 0.0
    return 100.0 * mean, 100.0 * se


def _stem(question: str) -> str:
    """The question without its lettered options (and the instruction after them)."""
    match = _OPTION.search(question)
    return question[: match.start()].rstrip() if match else question


def _options(question: str) -> list[str]:
    return _OPTION.findall(question)


def _right(task: Task) -> str:
    return str(task.metadata.get("solution", task.reference))


def _wrong(task: Task, rng: random.Random) -> str:
    distractors = [str(d) for d in task.metadata.get("distractors", ())]
    if distractors:
        return rng.choice(distractors)
    reference = str(task.reference)
    if re.fullmatch(r"-?\d+", reference):
        return str(int(reference) + rng.choice((-2, -1, 1, 2)))
    return reference + " (not)"


class _Player:
    """Plays :class:`AuditPlan` objects on seed blocks of suites, memoised, counting
    every episode played."""

    def __init__(self, pool: Any, seed: int, per_plan: int) -> None:
        self.pool = pool
        self.seed = seed
        self.per_plan = per_plan
        self.episodes = 0
        self._envs: dict[tuple[str, int], ConductorEnv] = {}
        self._memo: dict[tuple[Any, ...], Scored] = {}
        self.workers: tuple[str, ...] = ()

    def env(self, tasks: str, max_steps: int) -> ConductorEnv:
        key = (tasks, max_steps)
        if key not in self._envs:
            self._envs[key] = ConductorEnv(
                tasks=tasks, pool=self.pool, max_steps=max_steps, shuffle_workers=False
            )
        return self._envs[key]

    def names(self, tasks: str) -> tuple[str, ...]:
        env = self.env(tasks, 5)
        _, info = env.reset(seed=self.seed)
        return tuple(info["pool"])

    def play(
        self, plan: AuditPlan, tasks: str, block: int, *, only: Callable[[Task], bool] | None = None
    ) -> Scored:
        memo_key = (plan.key(), tasks, block, only)
        if memo_key in self._memo:
            return self._memo[memo_key]
        env = self.env(tasks, max(5, len(plan.steps)))
        outcomes: list[bool] = []
        start = self.seed + block * 1_000_003
        seed = start
        while len(outcomes) < self.per_plan:
            _, info = env.reset(seed=seed)
            task = env.tasks[info["task_index"]]
            seed += 1
            if only is not None and not only(task):
                if seed - start > 50 * self.per_plan:
                    break
                continue
            completion = self.completion(plan, info, task, random.Random(f"claim:{seed}"))
            _, _, _, _, step_info = env.step(completion)
            self.episodes += 1
            outcomes.append(step_info["outcome"] == "correct")
        scored = Scored(plan, tasks, tuple(outcomes))
        self._memo[memo_key] = scored
        return scored

    @staticmethod
    def completion(plan: AuditPlan, info: Mapping[str, Any], task: Task, rng: random.Random) -> str:
        pool = tuple(info["pool"])
        question = str(info["question"])
        claim = _right(task)
        if plan.random_option and _options(question):
            claim = rng.choice(_options(question))
        elif plan.claim_rate is not None and rng.random() >= plan.claim_rate:
            claim = _wrong(task, rng)
        values = {
            "q": question,
            "stem": _stem(question),
            "claim": claim,
            "wrong": _wrong(task, rng),
        }
        ids = tuple(pool.index(s.worker) for s in plan.steps)
        subtasks = tuple(s.text.format(**values) for s in plan.steps)
        return Plan(ids, subtasks, tuple(s.access for s in plan.steps)).to_text()


def _single(worker: str) -> AuditPlan:
    return AuditPlan(f"single:{worker}", (AuditStep(worker, FAITHFUL["solve"][0]),))


def _chain(name: str, worker: str, rounds: int) -> AuditPlan:
    steps = [AuditStep(worker, FAITHFUL["solve"][0])]
    steps += [
        AuditStep(worker, FAITHFUL["review"][0], (i - 1,), "review") for i in range(1, rounds)
    ]
    return AuditPlan(name, tuple(steps))


def _moa(solvers: Sequence[str], aggregator: str) -> AuditPlan:
    steps = [AuditStep(w, FAITHFUL["solve"][0]) for w in solvers]
    steps.append(AuditStep(aggregator, FAITHFUL["aggregate"][0], "all", "aggregate"))
    return AuditPlan(f"moa:{len(solvers)}", tuple(steps))


def _mutate(plan: AuditPlan, workers: Sequence[str], rng: random.Random) -> AuditPlan:
    """One random change of structure or wording (at most 5 steps)."""
    steps = list(plan.steps)
    move = rng.choice(("worker", "wording", "kind", "add", "remove", "access"))
    i = rng.randrange(len(steps))
    if move == "worker":
        steps[i] = replace(steps[i], worker=rng.choice(workers))
    elif move == "wording":
        steps[i] = replace(steps[i], text=rng.choice(FAITHFUL[steps[i].kind]))
    elif move == "kind" and i > 0:
        kind = rng.choice(("check", "vote", "aggregate", "review", "restate", "solve"))
        access: Access = steps[i].access if kind != "review" else (i - 1,)
        if kind != "solve" and access == ():
            access = "all"
        steps[i] = AuditStep(steps[i].worker, rng.choice(FAITHFUL[kind]), access, kind)
    elif move == "add" and len(steps) < 5:
        steps.insert(0, AuditStep(rng.choice(workers), rng.choice(FAITHFUL["solve"])))
        steps = [_shift(s, 1) for s in steps[:1]] + [_shift(s, 1) for s in steps[1:]]
    elif move == "remove" and len(steps) > 1:
        del steps[i]
        steps = [_drop(s, i, j) for j, s in enumerate(steps)]
    elif move == "access" and i > 0:
        steps[i] = replace(steps[i], access=rng.choice(("all", (i - 1,), ())))
    return AuditPlan(f"search:{rng.getrandbits(32):08x}", tuple(steps))


def _shift(step: AuditStep, by: int) -> AuditStep:
    if step.access == "all":
        return step
    return replace(step, access=tuple(j + by for j in step.access))


def _drop(step: AuditStep, removed: int, position: int) -> AuditStep:
    if step.access == "all":
        return step
    kept = tuple(j if j < removed else j - 1 for j in step.access if j != removed)
    return replace(step, access=tuple(j for j in kept if j < position))


def _twins(plan: AuditPlan) -> Iterable[tuple[str, AuditPlan]]:
    """Off-task twins: the graded (last) step's request replaced or spliced."""
    last = plan.steps[-1]
    for label, text in OFF_TASK.items():
        yield (
            label,
            replace(
                plan,
                name=f"{plan.name}/{label}",
                steps=(*plan.steps[:-1], replace(last, text=text)),
            ),
        )


def audit(
    *,
    pool: Any = "sim-paper",
    tasks: str = "offline",
    ood_tasks: str | None = "offline-ood",
    episodes: int = 50_000,
    per_plan: int = 400,
    top: int = 3,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> AuditReport:
    """Attack ``pool`` on ``tasks`` with about ``episodes`` paired episodes (module
    docstring); every evaluation plays ``per_plan`` episodes of one seed block.

    Raises :class:`~conductor_gym.errors.ConfigurationError` for a budget too small to
    play the single workers and the anchors (about ``20 * per_plan`` episodes for the
    paper pool).
    """
    if isinstance(per_plan, bool) or not isinstance(per_plan, int) or per_plan < 20:
        raise ConfigurationError(f"audit: per_plan must be an int >= 20, got {per_plan!r}")
    if isinstance(episodes, bool) or not isinstance(episodes, int) or episodes < 1:
        raise ConfigurationError(f"audit: episodes must be an int >= 1, got {episodes!r}")
    say = progress or (lambda _text: None)
    player = _Player(pool, seed, per_plan)
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
    singles = {w: player.play(_single(w), tasks, 0) for w in workers}
    best_name = max(singles, key=lambda w: singles[w].accuracy)
    best = singles[best_name]
    say(f"single workers played; best {best_name} {best.accuracy:.1f}")
    fresh_best = player.play(best.plan, tasks, 1)
    oracle = _oracle(player, singles, tasks)
    oracle_gain = _paired(oracle, best.outcomes)

    # 2. anchors
    anchors = _anchors(player, workers, singles, best, tasks)
    say(f"anchors played ({player.episodes} episodes)")

    # 3. the search, on block 0
    rng = random.Random(f"audit:{seed}")
    population: list[Scored] = [best]
    for starter in _starters(workers, best_name):
        population.append(player.play(starter, tasks, 0))
    # what step 4 plays: the out-of-domain singles, the fresh and out-of-domain runs of
    # the best plans and the off-task twins of them and of the best single worker
    reserve = ((len(workers) if ood_tasks else 0) + (top + 1) * (len(OFF_TASK) + 2)) * per_plan
    while player.episodes + per_plan + reserve <= episodes:
        ranked = sorted(population, key=lambda s: -s.accuracy)[:8]
        parent = ranked[min(int(rng.expovariate(0.7)), len(ranked) - 1)].plan
        child = _mutate(parent, workers, rng)
        population.append(player.play(child, tasks, 0))
    say(f"search done: {len(population)} plans ({player.episodes} episodes)")

    # 4. the best plans on fresh seeds, out of domain, and their off-task twins
    chosen: list[Scored] = []
    for scored in sorted(population, key=lambda s: -s.accuracy):
        shown = {c.plan.describe() for c in chosen}
        if scored.plan.describe() not in shown and len(scored.plan.steps) > 1:
            chosen.append(scored)
        if len(chosen) == top:
            break
    results: list[tuple[AuditPlan, float, float, float | None, float | None]] = []
    findings: list[Finding] = []
    twins = 0
    ood_best = None
    if ood_tasks:
        ood_singles = {w: player.play(_single(w), ood_tasks, 1) for w in workers}
        ood_best = max(ood_singles.values(), key=lambda s: s.accuracy)
    for scored in chosen:
        fresh = player.play(scored.plan, tasks, 1)
        gain, se = fresh.versus(fresh_best)
        ood_gain = ood_se = None
        if ood_tasks and ood_best is not None:
            ood_gain, ood_se = player.play(scored.plan, ood_tasks, 1).versus(ood_best)
        results.append((scored.plan, gain, se, ood_gain, ood_se))
    for faithful in [fresh_best, *(player.play(c.plan, tasks, 1) for c in chosen)]:
        for label, twin in _twins(faithful.plan):
            twins += 1
            difference, twin_se = player.play(twin, tasks, 1).versus(faithful)
            if difference >= -2 * twin_se:
                findings.append(Finding(faithful.plan.describe(), label, difference, twin_se))
    results.sort(key=lambda r: -r[1])
    return AuditReport(
        pool=str(pool),
        tasks=tasks,
        ood_tasks=ood_tasks,
        episodes=player.episodes,
        singles={w: s.accuracy for w, s in singles.items()},
        best_single=best_name,
        oracle_gain=oracle_gain,
        best=results,
        anchors=anchors,
        findings=findings,
        twins=twins,
    )


def _oracle(player: _Player, singles: Mapping[str, Scored], tasks: str) -> tuple[bool, ...]:
    """The best worker per family, one call: outcomes on block 0."""
    env = player.env(tasks, 5)
    families = []
    for i in range(player.per_plan):
        _, info = env.reset(seed=player.seed + i)
        families.append(env.tasks[info["task_index"]].domain)
    per_family: dict[str, str] = {}
    for family in set(families):
        idx = [i for i, f in enumerate(families) if f == family]
        per_family[family] = max(singles, key=lambda w: sum(singles[w].outcomes[i] for i in idx))
    return tuple(singles[per_family[f]].outcomes[i] for i, f in enumerate(families))


def _starters(workers: Sequence[str], best: str) -> list[AuditPlan]:
    """Seeds of the search: solvers then a checker, voter or aggregator."""
    others = [w for w in workers if w != best]
    plans = []
    for n in (2, 3, 4):
        solvers = [best, *others][:n]
        for kind in ("check", "vote", "aggregate"):
            steps = [AuditStep(w, FAITHFUL["solve"][0]) for w in solvers]
            steps.append(AuditStep(best, FAITHFUL[kind][0], "all", kind))
            plans.append(AuditPlan(f"start:{n}:{kind}", tuple(steps)))
    return plans


def _anchors(
    player: _Player,
    workers: Sequence[str],
    singles: Mapping[str, Scored],
    best: Scored,
    tasks: str,
) -> list[Anchor]:
    out: list[Anchor] = []
    review = [
        _paired(player.play(_chain(f"review:{w}", w, 2), tasks, 0).outcomes, singles[w].outcomes)
        for w in workers
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
        reflect = player.play(_chain("reflect:gpt-5:5", "gpt-5", 5), tasks, 0)
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
    moa = [
        player.play(_moa(ranked[:n], best.plan.steps[0].worker), tasks, 0).versus(best)
        for n in range(2, min(7, len(workers)) + 1)
    ]
    top_moa = max(moa, key=lambda r: r[0])
    out.append(
        Anchor(
            "MoA, 2-7 solvers (best of them)",
            "best single",
            *top_moa,
            (-100.0, 12.0),
            "headroom band",
        )
    )
    if len(workers) >= 7:
        full = player.play(_moa(workers, best.plan.steps[0].worker), tasks, 0).versus(best)
        out.append(
            Anchor("MoA, all workers + aggregator", "best single", *full, (-4.0, 0.0), "paper -2.0")
        )
    name = best.plan.steps[0].worker
    lettered = _lettered
    alone = player.play(best.plan, tasks, 2, only=lettered)
    if alone.outcomes:
        value_first = AuditPlan(
            "value-first",
            (AuditStep(name, _VALUE_FIRST[0]), AuditStep(name, _VALUE_FIRST[1], (0,))),
        )
        vf = player.play(value_first, tasks, 2, only=lettered)
        out.append(
            Anchor(
                "value first, then the letter",
                f"{name} alone (lettered)",
                *vf.versus(alone),
                (-100.0, 3.0),
                "simulator issue item 4",
            )
        )
    p = best.accuracy / 100.0
    honest = AuditPlan("claims", (AuditStep(name, _ANSWER_TEMPLATE),), claim_rate=p)
    out.append(
        Anchor(
            "claims right as often as the worker",
            f"{name} alone",
            *player.play(honest, tasks, 0).versus(best),
            (-100.0, 2.0),
            "Sharma et al. 2023",
        )
    )
    if alone.outcomes:
        rand = AuditPlan("random-option", (AuditStep(name, _ANSWER_TEMPLATE),), random_option=True)
        out.append(
            Anchor(
                "random claimed options",
                f"{name} alone (lettered)",
                *player.play(rand, tasks, 2, only=lettered).versus(alone),
                (-100.0, -0.5),
                "claims must cost",
            )
        )
    return out


def _lettered(task: Task) -> bool:
    return "num_choices" in task.metadata
