"""Score conductor completions on the env: what every trainer adapter calls for rewards.

A trainer samples many completions per prompt (a GRPO group: 64 in the paper) and needs
a reward for each. :func:`score_completions` (and :class:`Scorer`, which keeps the task
source, the worker pool, its clients, cache and rate limits for a whole run) plays one
single-turn episode per completion, concurrently on one event loop, and returns rewards,
correctness and traces.

What a prompt stands for is an :class:`EpisodeRef`: a task index and a **group seed**.
Every rollout of one group is reset with the same group seed, so the group shares the
task *and* the worker-pool draw (the ``k``-of-``n`` subset and the id order): the
group-relative advantage then compares plans, not pools. Each rollout also gets its own
``rollout_seed``, so worker sampling stays independent per rollout (two identical plans
in a group can still get different worker answers, as in real training).

``EpisodeRef.to_label()`` is the string a prompt dataset stores next to the prompt (the
``label`` column of OpenRLHF's prompt datasets, a column of a TRL dataset), and
:meth:`Scorer.prompt` writes the matching conductor prompt. Multi-turn adapters
(recursion) drive an env from :meth:`Scorer.make_env` / :meth:`Scorer.reset` themselves.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from conductor_gym._loop import LoopRunner
from conductor_gym._validate import is_int, require_int
from conductor_gym.core.config import EnvConfig
from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.info import ResetInfo, StepInfo
from conductor_gym.core.reward import Outcome
from conductor_gym.errors import ConfigurationError
from conductor_gym.pool.pool import WorkerPool
from conductor_gym.tasks import TaskSource

__all__ = ["EpisodeRef", "ScoredCompletion", "Scorer", "score_completions"]


@dataclass(frozen=True)
class EpisodeRef:
    """One prompt of a training set: task ``task_index`` of the source, drawn with
    ``group_seed`` (which fixes the worker draw and everything else a reset draws)."""

    task_index: int
    group_seed: int

    def __post_init__(self) -> None:
        require_int("EpisodeRef.task_index", self.task_index, minimum=0)
        require_int("EpisodeRef.group_seed", self.group_seed, minimum=0)

    def to_label(self) -> str:
        """A compact JSON string for a dataset column."""
        return json.dumps({"task_index": self.task_index, "group_seed": self.group_seed})

    @classmethod
    def from_label(cls, label: str | EpisodeRef) -> EpisodeRef:
        """Parse :meth:`to_label`'s string (an ``EpisodeRef`` passes through)."""
        if isinstance(label, EpisodeRef):
            return label
        try:
            data = json.loads(label)
            return cls(int(data["task_index"]), int(data["group_seed"]))
        except (TypeError, ValueError, KeyError) as exc:
            raise ValueError(
                f"EpisodeRef label {label!r} is not a task_index/group_seed JSON object"
            ) from exc


@dataclass(frozen=True)
class ScoredCompletion:
    """The result of one completion's episode.

    Attributes:
        reward: The env's reward (0.0 also for ``truncated``: never train on it as a
            score; check ``truncated``).
        correct: 1.0 when the final answer was correct, else 0.0.
        outcome: How the episode ended (:class:`~conductor_gym.core.reward.Outcome`).
        truncated: An infrastructure failure or a spent budget ended the episode.
        info: The env's final ``info`` (plan, parse error, trace, tokens, cost, ...).
    """

    reward: float
    correct: float
    outcome: Outcome
    truncated: bool
    info: StepInfo

    @property
    def parse_failed(self) -> bool:
        return self.outcome == Outcome.INVALID

    @property
    def steps(self) -> int:
        plan = self.info["plan"]
        return len(plan) if plan is not None else 0


class Scorer:
    """Scores completions on a shared task source and worker pool.

    Args:
        config: The episodes' :class:`~conductor_gym.core.config.EnvConfig` (default: all
            defaults); ``settings`` (its fields as keywords: ``tasks``, ``pool``, ``k``,
            ``reward``, ``cache``, ...) override it. The task source and the pool are built
            once, and every episode of the scorer shares them. Single-turn scoring
            (:meth:`score`) requires ``max_recursions=0``; multi-turn adapters drive
            :meth:`make_env` themselves.
        max_concurrency: Most episodes in flight at once.
        seed: Seeds the rollout seeds drawn when a call passes none.
    """

    def __init__(
        self,
        config: EnvConfig | None = None,
        *,
        max_concurrency: int = 256,
        seed: int = 0,
        **settings: Any,
    ) -> None:
        require_int("max_concurrency", max_concurrency)
        base = config or EnvConfig()
        self.config = base.replace(**settings) if settings else base
        self._shared = self.config.shared()
        self.tasks: TaskSource = self._shared.tasks
        self.pool: WorkerPool = self._shared.pool
        self.max_concurrency = max_concurrency
        self._rng = np.random.default_rng(seed)
        self._idle: list[ConductorEnv] = []
        self._runner = LoopRunner()
        self.make_env()  # fail on bad arguments now, not at the first score

    def make_env(self) -> ConductorEnv:
        """A new env on this scorer's tasks and pool (clients, cache, limits shared)."""
        return ConductorEnv(self._shared)

    def reset(
        self, env: ConductorEnv, ref: EpisodeRef, rollout_seed: int | None = None
    ) -> tuple[str, ResetInfo]:
        """Reset ``env`` to ``ref``'s episode (with ``rollout_seed``'s worker randomness)."""
        options: dict[str, Any] = {"task_index": ref.task_index}
        if rollout_seed is not None:
            options["rollout_seed"] = rollout_seed
        return env.reset(seed=ref.group_seed, options=options)

    def prompt(self, ref: EpisodeRef) -> str:
        """The conductor prompt of ``ref``'s episode (identical for every rollout)."""
        env = self._take()
        try:
            return self.reset(env, ref)[0]
        finally:
            self._idle.append(env)

    def draw_rollout_seeds(self, n: int) -> list[int]:
        """``n`` fresh rollout seeds from this scorer's generator."""
        return [int(s) for s in self._rng.integers(0, 2**62, size=n)]

    async def ascore(
        self,
        refs: Sequence[EpisodeRef | str],
        completions: Sequence[str],
        *,
        rollout_seeds: Sequence[int] | None = None,
    ) -> list[ScoredCompletion]:
        """Play one episode per completion, concurrently; results in input order."""
        if len(refs) != len(completions):
            raise ValueError(f"got {len(refs)} refs for {len(completions)} completions")
        if rollout_seeds is None:
            rollout_seeds = self.draw_rollout_seeds(len(completions))
        elif len(rollout_seeds) != len(completions) or not all(map(is_int, rollout_seeds)):
            raise ValueError("rollout_seeds must be one int per completion")
        if self.config.max_recursions:
            raise ConfigurationError(
                "single-turn scoring needs max_recursions=0; drive multi-turn episodes "
                "with make_env() and reset()"
            )
        parsed = [EpisodeRef.from_label(r) for r in refs]
        semaphore = asyncio.Semaphore(self.max_concurrency)

        async def one(ref: EpisodeRef, completion: str, rollout_seed: int) -> ScoredCompletion:
            async with semaphore:
                env = self._take()
                try:
                    self.reset(env, ref, rollout_seed)
                    _, reward, terminated, truncated, info = await env.astep(completion)
                finally:
                    self._idle.append(env)
            assert terminated or truncated  # max_recursions=0: one plan ends the episode
            outcome = info["outcome"]
            assert outcome is not None  # the episode ended
            return ScoredCompletion(
                reward=float(reward),
                correct=1.0 if outcome == Outcome.CORRECT else 0.0,
                outcome=outcome,
                truncated=bool(truncated),
                info=info,
            )

        return list(
            await asyncio.gather(
                *(one(r, c, s) for r, c, s in zip(parsed, completions, rollout_seeds, strict=True))
            )
        )

    def score(
        self,
        refs: Sequence[EpisodeRef | str],
        completions: Sequence[str],
        *,
        rollout_seeds: Sequence[int] | None = None,
    ) -> list[ScoredCompletion]:
        """:meth:`ascore` from synchronous code."""
        return self._runner.run(self.ascore(refs, completions, rollout_seeds=rollout_seeds))

    def _take(self) -> ConductorEnv:
        return self._idle.pop() if self._idle else self.make_env()

    def close(self) -> None:
        for env in self._idle:
            env.close()
        self._idle.clear()
        self._runner.close()


def score_completions(
    refs: Sequence[EpisodeRef | str],
    completions: Sequence[str],
    *,
    rollout_seeds: Sequence[int] | None = None,
    scorer: Scorer | None = None,
    **scorer_kwargs: Any,
) -> list[ScoredCompletion]:
    """Score ``completions`` (``refs[i]`` is the episode completion ``i`` answers).

    Uses ``scorer`` when given (reuse one across a run: it holds the pool, its clients
    and cache), else builds a :class:`Scorer` from ``scorer_kwargs`` for this call.
    From inside a running event loop, ``await scorer.ascore(...)`` instead.
    """
    if scorer is not None and scorer_kwargs:
        raise ConfigurationError("pass either a scorer or Scorer arguments, not both")
    own = scorer is None
    scorer = scorer or Scorer(**scorer_kwargs)
    try:
        return scorer.score(refs, completions, rollout_seeds=rollout_seeds)
    finally:
        if own:
            scorer.close()
