"""The plan prior of the ``cpu-orchestrate`` recipe, and the search that fits it to the env.

A :class:`PlanPrior` is a distribution over the *structure* of a plan, filled in with a
question: how many steps (``1 .. max_steps``), which ``Model i`` each step asks, and each
later step's role, one of :data:`ROLES`:

* ``attempt``: the question, copied, with access ``[]``: an independent attempt;
* ``solve``: "solve the problem above", with access ``"all"``;
* ``check``: "check the answers above", with access ``"all"``;
* ``vote``: "give the answer most of the answers above agree on", with access ``"all"``.

Step 1 is always an ``attempt`` (the env shows a step only the subtasks and answers of
the steps it accesses, so the first step has to carry the question). The factors are
independent: one length distribution, one worker distribution per position, one role
distribution per later position.

:func:`search_prior` fits the prior by the **cross-entropy method** on training episodes,
with nothing but the env's reward: each iteration draws ``population`` structures, plays
each on the same ``tasks_per_plan`` training tasks (one fixed worker draw per task, so
the structures are compared paired), keeps the best ``elite`` share by mean reward and
moves every factor toward the elites' frequencies (``smoothing`` of the way), then mixes
in ``floor`` of the uniform prior, so no structure's probability reaches 0: the search
keeps exploring, and the policy warm-started on the fitted prior still samples variants
of its best structure, which gives GRPO different plans to compare in a group (a policy
that writes one plan only gets identical rewards in every group and no gradient). It reads
no answer and no worker skill; it is cheap because it needs no language model (the
simulated pool plays a few thousand episodes a second), and it is where the recipe
explores: GRPO on two CPU cores sees 640 completions, too few to find which of the
prior's ~3,000 structures pays. The policy is then warm-started on plans drawn from the
fitted prior (:mod:`.warm_start`) and refined with GRPO.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from conductor_gym.plan import Access, Plan
from conductor_gym.training.scoring import EpisodeRef, Scorer

__all__ = ["ROLES", "PlanPrior", "PlanSearch", "Structure", "search_prior"]

ROLES: dict[str, tuple[str | None, Access]] = {
    "attempt": (None, ()),
    "solve": ("Solve the problem above and end with the final answer.", "all"),
    "check": ("Check the answers above and give the correct one as your final answer.", "all"),
    "vote": ("Give the answer that most of the answers above agree on.", "all"),
}
"""Each later-step role: its subtask (``None``: the question, copied) and its access."""

_ROLE_NAMES = tuple(ROLES)


@dataclass(frozen=True)
class Structure:
    """A plan without its question: ``workers[i]`` and ``roles[i]`` of step ``i``
    (``roles[0]`` is always ``"attempt"``)."""

    workers: tuple[int, ...]
    roles: tuple[str, ...]

    def plan(self, question: str) -> Plan:
        """This structure's plan for ``question``."""
        subtasks, access = [], []
        for role in self.roles:
            text, seen = ROLES[role]
            subtasks.append(question if text is None else text)
            access.append(seen)
        return Plan(model_ids=self.workers, subtasks=tuple(subtasks), access=tuple(access))

    def describe(self) -> str:
        """``"2 attempt | 0 check"``: each step's ``Model i`` and role."""
        return " | ".join(f"{w} {r}" for w, r in zip(self.workers, self.roles, strict=True))


def _normalise(p: np.ndarray) -> np.ndarray:
    normalised: np.ndarray = p / p.sum(axis=-1, keepdims=True)
    return normalised


@dataclass(frozen=True)
class PlanPrior:
    """Independent categorical factors over a plan's structure (module docstring):
    ``lengths[k]`` is P(``k + 1`` steps), ``workers[i, w]`` P(step ``i`` asks ``Model w``),
    ``roles[i, r]`` P(step ``i + 1`` has role ``ROLES[r]``)."""

    lengths: np.ndarray
    workers: np.ndarray
    roles: np.ndarray

    @classmethod
    def uniform(cls, num_workers: int, max_steps: int = 3) -> PlanPrior:
        """Every length, worker and role equally likely: the format prior before search."""
        if num_workers < 1 or max_steps < 1:
            raise ValueError(
                f"num_workers and max_steps must be positive, got {num_workers}, {max_steps}"
            )
        return cls(
            lengths=np.full(max_steps, 1 / max_steps),
            workers=np.full((max_steps, num_workers), 1 / num_workers),
            roles=np.full((max_steps - 1, len(ROLES)), 1 / len(ROLES)),
        )

    @property
    def max_steps(self) -> int:
        return len(self.lengths)

    @property
    def num_workers(self) -> int:
        return int(self.workers.shape[1])

    def _structure(self, choose: Callable[[np.ndarray], int]) -> Structure:
        """The structure whose length, workers and later roles ``choose`` picks from each
        factor's probabilities, in that order."""
        steps = 1 + choose(self.lengths)
        workers = tuple(choose(self.workers[i]) for i in range(steps))
        roles = ("attempt", *(_ROLE_NAMES[choose(self.roles[i])] for i in range(steps - 1)))
        return Structure(workers=workers, roles=roles)

    def draw(self, rng: random.Random) -> Structure:
        """One structure, drawn with ``rng`` (the same draws for the same seed)."""
        return self._structure(lambda p: _pick(rng, p))

    def sample(self, rng: random.Random, question: str) -> Plan:
        """A plan for ``question`` drawn from the prior."""
        return self.draw(rng).plan(question)

    def refit(self, elites: Sequence[Structure], smoothing: float) -> PlanPrior:
        """Every factor moved ``smoothing`` of the way toward its frequency among
        ``elites`` (a factor no elite reaches, such as step 3 of one-step plans, stays)."""
        lengths = np.zeros_like(self.lengths)
        workers = np.zeros_like(self.workers)
        roles = np.zeros_like(self.roles)
        for s in elites:
            lengths[len(s.workers) - 1] += 1
            for i, w in enumerate(s.workers):
                workers[i, w] += 1
            for i, r in enumerate(s.roles[1:]):
                roles[i, _ROLE_NAMES.index(r)] += 1

        def move(old: np.ndarray, counts: np.ndarray) -> np.ndarray:
            total = counts.sum(axis=-1, keepdims=True)
            target = np.where(total > 0, counts / np.maximum(total, 1), old)
            return _normalise((1 - smoothing) * old + smoothing * target)

        return PlanPrior(
            move(self.lengths, lengths), move(self.workers, workers), move(self.roles, roles)
        )

    def mixed(self, floor: float) -> PlanPrior:
        """Every factor mixed with ``floor`` of the uniform distribution."""
        uniform = PlanPrior.uniform(self.num_workers, self.max_steps)
        return PlanPrior(
            *(
                (1 - floor) * mine + floor * flat
                for mine, flat in (
                    (self.lengths, uniform.lengths),
                    (self.workers, uniform.workers),
                    (self.roles, uniform.roles),
                )
            )
        )

    def mode(self) -> Structure:
        """The most likely value of every factor, as one structure."""
        return self._structure(lambda p: int(np.argmax(p)))

    def to_dict(self) -> dict[str, Any]:
        """The probabilities, rounded, for ``results.json``."""
        return {
            "lengths": [round(float(x), 4) for x in self.lengths],
            "workers": [[round(float(x), 4) for x in row] for row in self.workers],
            "roles": {
                f"step {i + 2}": {
                    r: round(float(x), 4) for r, x in zip(_ROLE_NAMES, row, strict=True)
                }
                for i, row in enumerate(self.roles)
            },
            "mode": self.mode().describe(),
        }


def _pick(rng: random.Random, p: np.ndarray) -> int:
    u, total = rng.random(), 0.0
    for i, x in enumerate(p):
        total += float(x)
        if u < total:
            return i
    return len(p) - 1


@dataclass(frozen=True)
class PlanSearch:
    """Settings of :func:`search_prior`: ``iterations`` rounds of ``population``
    structures, each played on ``tasks_per_plan`` training tasks; the best ``elite``
    share moves the prior ``smoothing`` of the way, and ``floor`` of the uniform prior is
    mixed back in. ``iterations=0`` keeps the uniform prior."""

    iterations: int = 12
    population: int = 256
    tasks_per_plan: int = 48
    elite: float = 0.1
    smoothing: float = 0.7
    floor: float = 0.1
    max_steps: int = 3
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("iterations", "population", "tasks_per_plan", "max_steps"):
            least = 0 if name == "iterations" else 1
            if getattr(self, name) < least:
                raise ValueError(f"PlanSearch.{name} must be >= {least}, got {getattr(self, name)}")
        for name in ("elite", "smoothing"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"PlanSearch.{name} must be in (0, 1], got {getattr(self, name)}")
        if not 0 <= self.floor < 1:
            raise ValueError(f"PlanSearch.floor must be in [0, 1), got {self.floor}")


def search_prior(
    scorer: Scorer,
    refs: Sequence[EpisodeRef],
    settings: PlanSearch,
    *,
    log: bool = True,
) -> tuple[PlanPrior, list[dict[str, Any]]]:
    """Fit the plan prior to ``refs`` (training episodes only) by the cross-entropy
    method (module docstring). Returns the fitted prior and one record per iteration
    (``mean_reward`` of the population, ``elite_reward``, ``best`` structure, the
    prior's ``mode`` after the update)."""
    if not refs:
        raise ValueError("search_prior needs at least one training episode")
    prior = PlanPrior.uniform(scorer.config.k or scorer.pool.n, settings.max_steps)
    rng = random.Random(settings.seed)
    seeds = np.random.default_rng(settings.seed)
    history: list[dict[str, Any]] = []
    questions = {r.task_index: scorer.tasks[r.task_index].question for r in refs}
    n_elite = max(1, round(settings.elite * settings.population))
    for iteration in range(settings.iterations):
        start = time.perf_counter()
        batch = [refs[rng.randrange(len(refs))] for _ in range(settings.tasks_per_plan)]
        rollout = [int(s) for s in seeds.integers(0, 2**62, len(batch))]
        structures = [prior.draw(rng) for _ in range(settings.population)]
        results = scorer.score(
            [ref for _ in structures for ref in batch],
            [s.plan(questions[ref.task_index]).to_text() for s in structures for ref in batch],
            rollout_seeds=rollout * len(structures),
        )
        rewards = np.array([r.reward for r in results]).reshape(len(structures), len(batch))
        means = rewards.mean(axis=1)
        order = np.argsort(-means, kind="stable")
        elites = [structures[i] for i in order[:n_elite]]
        prior = prior.refit(elites, settings.smoothing).mixed(settings.floor)
        record = {
            "iteration": iteration + 1,
            "mean_reward": float(means.mean()),
            "elite_reward": float(means[order[:n_elite]].mean()),
            "best": structures[order[0]].describe(),
            "mode": prior.mode().describe(),
            "wall_s": time.perf_counter() - start,
        }
        history.append(record)
        if log:
            print(
                f"plan search {record['iteration']}/{settings.iterations}: population reward "
                f"{record['mean_reward']:.3f}, elite {record['elite_reward']:.3f}, "
                f"mode {record['mode']} ({record['wall_s']:.1f} s)",
                flush=True,
            )
    return prior, history
