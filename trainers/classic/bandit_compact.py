"""A tabular learner on the compact plan action: a contextual bandit (UCB1) over plans.

::

    python -m conductor_gym.trainers.classic.bandit_compact --output-dir runs/bandit-default
    python -m conductor_gym.trainers.classic.bandit_compact --k 4 --shuffle-workers \\
        --output-dir runs/bandit-randomised

An **arm** is a compact plan written with worker *names*: 1 to ``max_steps`` steps
(default 2), a worker name per step, and each later step's role and access (an
``attempt`` has no access to choose). The table holds, per question family, every arm's
count and mean reward. An episode's context is its family and its drawn pool: the arms it
may play are those whose workers the pool lists, written as the ``Model i`` each is drawn
as; among them it plays an untried arm first, then the one with the highest upper
confidence bound (UCB1, ``exploration`` times the usual bonus). A named arm's value is
shared across the draws that list its workers, so the table learns from every episode of
a family what a (family x drawn pool) key would learn only from its own.

It reads what :meth:`~.compact_setup.CompactWorld.observe` reads (family, drawn names),
checkpoints its table to ``bandit.npz`` every ``checkpoint_every`` episodes (a run started
again with the same ``output_dir`` resumes), and is evaluated greedily on the fresh tasks
beside ``best-single`` and the best fixed compact plan, as :mod:`.ppo_compact` is. Its
greedy arm is the listed one played most often (UCB's recommendation).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from conductor_gym.core.compact_action import ACCESS
from conductor_gym.errors import ConfigurationError

from .compact_setup import (
    CompactWorld,
    Observation,
    WorldSettings,
    fresh_report,
    parse_settings,
    run_command,
)

__all__ = ["Arm", "BanditArgs", "CompactBandit", "main", "train"]


@dataclass(frozen=True)
class BanditArgs:
    """A run's settings (each is a ``--flag``)."""

    output_dir: str = "runs/bandit-compact"
    """where bandit.npz and results.json go; a run resumes from its bandit.npz"""
    seed: int = 0
    """seeds the tie-breaks and the training episodes"""
    pool: str = "sim-paper"
    """a pool preset or a .toml pool file"""
    k: int | None = None
    """workers drawn per episode (None: all, in the pool's order)"""
    shuffle_workers: bool = False
    """shuffle the Model ids every episode"""
    max_steps: int = 2
    """most steps of an arm (the table has N + 7 N^2 arms a family at 2, N names)"""
    eval_tasks: int = 200
    """fresh tasks: task indices 0 .. eval_tasks-1, never trained on"""
    total_episodes: int = 60_000
    """training episodes"""
    exploration: float = 0.5
    """UCB1's bonus scale (rewards lie in [0, 1])"""
    checkpoint_every: int = 5_000
    """episodes between checkpoints"""
    eval_repeats: int = 4
    """rollouts per fresh task"""
    baselines: str = "best-single"
    """comma-separated agent specs played beside the table"""
    fixed_plan_iterations: int = 8
    """rounds of the best-fixed-plan search (0: none)"""
    fixed_plan_episodes: int = 32
    """training episodes per candidate fixed plan a round"""


@dataclass(frozen=True)
class Arm:
    """A plan by worker name: ``names[i]`` (indices into the world's names), and each
    later step's ``(role, access)`` indices (``roles[i]`` for step ``i + 1``)."""

    names: tuple[int, ...]
    later: tuple[tuple[int, int], ...]


def arms(num_names: int, role_names: Sequence[str], max_steps: int) -> list[Arm]:
    """Every distinct arm: an ``attempt`` later step takes access ``all`` only (it reads
    no earlier step, so its access would not change the plan)."""
    attempt = role_names.index("attempt")
    later = [(attempt, 0)] + [
        (r, a) for r in range(len(role_names)) if r != attempt for a in range(len(ACCESS))
    ]
    return [
        Arm(names, rest)
        for steps in range(1, max_steps + 1)
        for names in itertools.product(range(num_names), repeat=steps)
        for rest in itertools.product(later, repeat=steps - 1)
    ]


class CompactBandit:
    """The table: ``counts[f, a]`` and ``sums[f, a]`` of arm ``a`` in family ``f``."""

    def __init__(self, world: CompactWorld, max_steps: int, exploration: float) -> None:
        if max_steps > world.settings.max_steps:
            raise ConfigurationError(
                f"an arm of {max_steps} steps does not fit the env's max_steps "
                f"({world.settings.max_steps})",
                field="max_steps",
            )
        self.world = world
        self.exploration = exploration
        self.arms = arms(len(world.names), world.env.templates.names, max_steps)
        members = np.zeros((len(self.arms), len(world.names)), dtype=bool)
        for i, arm in enumerate(self.arms):
            members[i, list(arm.names)] = True
        self._members = members
        shape = (len(world.families), len(self.arms))
        self.counts = np.zeros(shape)
        self.sums = np.zeros(shape)

    def listed(self, observation: Observation) -> np.ndarray:
        """Which arms the episode's pool can play (every worker of the arm drawn)."""
        drawn = np.zeros(len(self.world.names), dtype=bool)
        drawn[observation.names] = True
        return np.asarray(~(self._members & ~drawn).any(axis=1), dtype=bool)

    def choose(self, observation: Observation, rng: np.random.Generator | None) -> int:
        """An arm: UCB1 among the listed ones (untried first) with ``rng``, or with
        ``rng=None`` UCB's recommendation: the listed arm played most often (the best mean
        among those on a tie), which, unlike the best mean, is not the luckiest of many
        rarely played arms."""
        f = int(np.argmax(observation.features[: len(self.world.families)]))
        ok = self.listed(observation)
        n, total = self.counts[f], self.sums[f]
        if rng is None:
            most = np.where(ok, n, -1.0)
            means = np.where(most == most.max(), total / np.maximum(n, 1), -1.0)
            return int(np.argmax(means))
        untried = np.flatnonzero(ok & (n == 0))
        if untried.size:
            return int(rng.choice(untried))
        t = n[ok].sum()
        bound = total / np.maximum(n, 1) + self.exploration * np.sqrt(
            2 * np.log(max(t, 1.0)) / np.maximum(n, 1)
        )
        return int(np.argmax(np.where(ok, bound, -np.inf)))

    def vector(self, arm: int, observation: Observation) -> np.ndarray:
        """Arm ``arm`` as a compact action vector for the episode's draw."""
        spec = self.arms[arm]
        s = self.world.settings.max_steps
        where = {int(name): position for position, name in enumerate(observation.names)}
        vector = np.zeros(1 + s + 2 * (s - 1), dtype=np.int64)
        vector[0] = len(spec.names) - 1
        for i, name in enumerate(spec.names):
            vector[1 + i] = where[name]
        for i, (role, access) in enumerate(spec.later):
            vector[1 + s + i] = role
            vector[1 + s + (s - 1) + i] = access
        return vector

    def update(self, observation: Observation, arm: int, reward: float) -> None:
        f = int(np.argmax(observation.features[: len(self.world.families)]))
        self.counts[f, arm] += 1
        self.sums[f, arm] += reward


def train(args: BanditArgs) -> dict[str, Any]:
    """Train (or resume), evaluate on fresh tasks and write ``results.json``."""
    world = CompactWorld(
        WorldSettings(
            pool=args.pool,
            k=args.k,
            shuffle_workers=args.shuffle_workers,
            max_steps=args.max_steps,
            eval_tasks=args.eval_tasks,
            seed=args.seed,
        )
    )
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    bandit = CompactBandit(world, args.max_steps, args.exploration)
    checkpoint = out / "bandit.npz"
    start = 0
    shape = repr(dataclasses.replace(args, output_dir="", total_episodes=0, checkpoint_every=0))
    if checkpoint.exists():
        saved = np.load(checkpoint)
        if str(saved["settings"]) != shape:
            raise SystemExit(f"{checkpoint}: saved with other settings; use another --output-dir")
        bandit.counts, bandit.sums, start = saved["counts"], saved["sums"], int(saved["episode"])
        print(f"resumed from {checkpoint} at episode {start:,}", flush=True)
    clock = time.perf_counter()
    recent: list[float] = []
    for e in range(start, args.total_episodes):
        observation = world.observe(world.reset_training(e))
        arm = bandit.choose(observation, np.random.default_rng([args.seed, e, 3]))
        reward = world.play(bandit.vector(arm, observation))
        bandit.update(observation, arm, reward)
        recent.append(reward)
        if (e + 1) % args.checkpoint_every == 0 or e + 1 == args.total_episodes:
            partial = out / "bandit.tmp.npz"
            np.savez(partial, counts=bandit.counts, sums=bandit.sums, episode=e + 1, settings=shape)
            os.replace(partial, checkpoint)
            print(
                f"episodes {e + 1:,}: mean reward {np.mean(recent):.3f} since the last "
                f"checkpoint ({time.perf_counter() - clock:.0f} s)",
                flush=True,
            )
            recent = []

    def greedy(observation: Observation) -> np.ndarray:
        return bandit.vector(bandit.choose(observation, None), observation)

    results = {
        "args": dataclasses.asdict(args),
        "arms": len(bandit.arms),
        **fresh_report(world, greedy, args, "bandit"),
        "wall_s": time.perf_counter() - clock,
    }
    (out / "results.json").write_text(json.dumps(results, indent=1))
    world.close()
    return results


def parse_args(argv: Sequence[str] | None = None) -> BanditArgs:
    args, parser = parse_settings(
        BanditArgs,
        argv,
        prog="python -m conductor_gym.trainers.classic.bandit_compact",
        description="A UCB1 contextual bandit over compact plans (family x drawn pool); "
        "evaluated on fresh tasks beside best-single and the best fixed compact plan",
        positive=("total_episodes", "checkpoint_every", "eval_repeats", "max_steps"),
    )
    if args.exploration < 0:
        parser.error(f"--exploration must be >= 0, got {args.exploration}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return run_command("bandit_compact", train, args, args.output_dir)


if __name__ == "__main__":
    raise SystemExit(main())
