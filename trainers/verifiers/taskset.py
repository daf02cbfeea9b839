"""The conductor-gym taskset for verifiers 0.4 (``verifiers.v1``): tasks, rubric, state.

A :class:`ConductorTaskset` yields one :class:`ConductorTask` per task of a conductor-gym
task source, in source order: its prompt is the env's conductor prompt for
``EpisodeRef(i, group_seed(seed, i))`` (:func:`conductor_gym.seeding.group_seed`), so
every rollout of a task (a GRPO group, ``vf-eval -r n``) shares the task and the
worker-pool draw, while each rollout draws a fresh rollout seed for the workers. The
task data carries the episode reference and the env settings (:attr:`ConductorData.env`),
so any process (a vf-eval run, a prime-rl env server) rebuilds the same env from the
trace alone; one :class:`~conductor_gym.training.scoring.Scorer` per settings is shared by the
process (pool clients, rate limits, cache).

The rubric. The episode is played on :class:`~conductor_gym.core.env.ConductorEnv`: by
the env's own loop for recursive episodes (:mod:`.env`), else, in the task's
``finalize`` hook, with the trace's last reply as the single completion. Its outcome is
recorded in ``trace.info["conductor"]`` (:func:`episode_state`: reward, outcome,
parse error, every round's plan and trace, tokens, cost, rollout seed) before scoring.
Then the reward ``conductor`` is the env's reward (paper: 1 / 0.5 / 0), and the metric
``conductor`` records ``correct``, ``parse_failure``, ``steps``, ``rounds``,
``worker_calls``, ``prompt_tokens``, ``completion_tokens`` and ``cost_usd``.

Infrastructure failures are not rewards: an episode truncated by a worker or grader
failure or a spent budget raises :class:`EpisodeTruncated` (a ``vf.TaskError``) from
``finalize``, so verifiers marks the rollout failed (``trace.ok`` false, the error on
``trace.errors``, no reward recorded); prime-rl and ``--resume`` treat it as an error,
never as a zero.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import threading
from collections.abc import Iterator
from typing import Any

import verifiers.v1 as vf
from pydantic import ConfigDict, Field

from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.prompts import DEFAULT_TEMPLATES
from conductor_gym.errors import InfrastructureError
from conductor_gym.pool.pool import DEFAULT_POOL
from conductor_gym.seeding import group_seed
from conductor_gym.tasks import make_task_source
from conductor_gym.training.scoring import EpisodeRef, Scorer

__all__ = [
    "STATE_KEY",
    "ConductorData",
    "ConductorTask",
    "ConductorTaskset",
    "ConductorTasksetConfig",
    "Episode",
    "EpisodeTruncated",
    "episode_state",
]

STATE_KEY = "conductor"
"""The ``trace.info`` key holding the episode's state."""


class ConductorTasksetConfig(vf.TasksetConfig):
    """``--env.taskset.*``: the conductor-gym env settings of every rollout.

    The fields are :class:`~conductor_gym.core.env.ConductorEnv`'s (``tasks`` and
    ``task_options`` build the task source, ``pool`` a preset or pool file); ``seed``
    derives each task's group seed.
    """

    model_config = ConfigDict(use_attribute_docstrings=True)

    tasks: str = "offline"
    """The task source: a registered name (``offline``: procedural tasks, no download;
    ``paper-train``, ``paper-eval``, ...) or ``jsonl:<path>``."""
    task_options: dict[str, Any] = Field(default_factory=dict)
    """Keyword arguments of the task source's factory (e.g. ``{"n": 32}``)."""
    pool: str = DEFAULT_POOL
    """The worker pool: a preset name (``paper``: the simulated paper pool) or a pool
    TOML file."""
    k: int | None = Field(None, ge=1)
    """Draw ``k`` of the pool's workers per task (a GRPO group shares the draw); unset:
    every worker."""
    shuffle_workers: bool = False
    """Shuffle the workers' order (their ``Model i`` numbers) per task."""
    reward: str = "paper"
    """The reward scheme (``paper``: 1 correct, 0.5 wrong, 0 unparseable)."""
    max_steps: int = Field(5, ge=1)
    """The most steps a plan may have."""
    max_recursions: int = Field(0, ge=0)
    """Recursive rounds after the first plan (each comes back as a user turn)."""
    force_recursion: bool | float = False
    """Require a recursive round: ``true``, or the probability of requiring one."""
    initial_round_weight: float = Field(0.0, ge=0.0)
    """The weight of the first round's grade in a recursive episode's reward."""
    cache: str | None = None
    """A response-cache file for the workers' replies (unset: no cache)."""
    few_shot: bool = True
    """Keep the conductor prompt's few-shot examples (``False``: the prompt without them,
    about 400 tokens instead of 1500)."""
    seed: int = Field(0, ge=0)
    """Derives every task's group seed (its worker draw)."""

    def env_settings(self) -> dict[str, Any]:
        """The settings the env is rebuilt from (what :attr:`ConductorData.env` holds)."""
        return dict(self.model_dump(include=set(_ENV_FIELDS)))


_ENV_FIELDS = (
    "tasks", "task_options", "pool", "k", "shuffle_workers", "reward", "max_steps",
    "max_recursions", "force_recursion", "initial_round_weight", "cache", "few_shot",
)  # fmt: skip


class ConductorData(vf.TaskData):
    """One task's wire data: the conductor prompt, the episode and the env settings."""

    task_index: int
    group_seed: int
    domain: str
    env: dict[str, Any]

    @property
    def ref(self) -> EpisodeRef:
        return EpisodeRef(self.task_index, self.group_seed)


_SCORERS: dict[str, Scorer] = {}
_SCORERS_LOCK = threading.Lock()


def shared_scorer(settings: dict[str, Any]) -> Scorer:
    """This process's :class:`~conductor_gym.training.scoring.Scorer` for ``settings`` (built
    once, with fresh worker randomness per process)."""
    key = json.dumps(settings, sort_keys=True)
    with _SCORERS_LOCK:
        if key not in _SCORERS:
            options = dict(settings)
            tasks, task_options = options.pop("tasks"), options.pop("task_options")
            if not options.pop("few_shot"):
                options["templates"] = dataclasses.replace(DEFAULT_TEMPLATES, examples=())
            _SCORERS[key] = Scorer(
                tasks=make_task_source(tasks, **task_options),
                pool=options.pop("pool"),
                seed=secrets.randbits(62),
                **options,
            )
        return _SCORERS[key]


class EpisodeTruncated(InfrastructureError, vf.TaskError):
    """The episode ended on an infrastructure failure or a spent budget: no reward."""


class Episode:
    """One rollout's conductor-gym episode on a fresh env of the shared scorer.

    Raises ``ValueError`` at construction when the env's conductor prompt is not the
    task's prompt (the task was written under other env settings).
    """

    def __init__(self, data: ConductorData) -> None:
        self.scorer = shared_scorer(data.env)
        self.rollout_seed = self.scorer.draw_rollout_seeds(1)[0]
        self.env: ConductorEnv = self.scorer.make_env()
        observation, self.info = self.scorer.reset(self.env, data.ref, self.rollout_seed)
        if observation != data.prompt:
            self.env.close()
            raise ValueError(
                f"task {data.id!r}: the env's conductor prompt differs from the task's; "
                "the task was written under other env settings"
            )
        self.reward = 0.0
        self.truncated = False
        self.done = False
        self.completions: list[str] = []

    async def step(self, completion: str) -> str | None:
        """Play ``completion``; the next observation (a recursive round), or ``None``
        when the episode has ended (the env is then closed)."""
        self.completions.append(completion)
        observation, reward, terminated, truncated, self.info = await self.env.astep(completion)
        if terminated or truncated:
            self.reward, self.truncated, self.done = float(reward), bool(truncated), True
            self.env.close()
            return None
        return observation

    def record(self, trace: vf.Trace) -> None:
        """Put :func:`episode_state` in ``trace.info``."""
        trace.info[STATE_KEY] = episode_state(self)


def episode_state(episode: Episode) -> dict[str, Any]:
    """The JSON-ready state of a finished episode (module docstring)."""
    info: dict[str, Any] = dict(episode.info)
    rounds = info.get("rounds", ())
    return {
        "reward": episode.reward,
        "outcome": info.get("outcome"),
        "truncated": episode.truncated,
        "error": info.get("error"),
        "parse_error": info.get("parse_error"),
        "task_id": info["task_id"],
        "rollout_seed": episode.rollout_seed,
        "workers": list(info["pool"]),
        "completions": list(episode.completions),
        "rounds": [r.to_dict() for r in rounds],
        "steps": sum(len(r.plan) for r in rounds if r.plan is not None),
        "worker_calls": int(info.get("worker_calls", 0)),
        "prompt_tokens": int(info.get("prompt_tokens", 0)),
        "completion_tokens": int(info.get("completion_tokens", 0)),
        "cost_usd": float(info.get("cost_usd", 0.0)),
    }


class ConductorTask(vf.Task[ConductorData, vf.State, vf.TaskConfig]):
    """A conductor-gym task: its rubric is the env's reward (module docstring)."""

    async def finalize(self, trace: vf.Trace, runtime: Any) -> None:
        if STATE_KEY not in trace.info:  # single-turn: no env loop played it
            episode = Episode(self.data)
            if await episode.step(trace.last_reply) is not None:
                episode.env.close()
                raise vf.TaskError(
                    "this episode is multi-turn (max_recursions > 0): play it with the "
                    "conductor-gym env's own run loop (the taskset's bundled Env)"
                )
            episode.record(trace)
        state = trace.info[STATE_KEY]
        if state["truncated"]:
            error = state["error"] or {}
            raise EpisodeTruncated(
                f"infrastructure failure, not a reward ({error.get('kind')}): "
                f"{error.get('message', error)}"
            )

    @vf.reward
    async def conductor(self, trace: vf.Trace) -> float:
        """The env's reward of this rollout's episode."""
        return float(trace.info[STATE_KEY]["reward"])

    @vf.metric
    async def conductor_episode(self, trace: vf.Trace) -> dict[str, float]:
        """Outcome, plan size, worker calls, tokens and cost of the episode."""
        state = trace.info[STATE_KEY]
        return {
            "correct": float(state["outcome"] == "correct"),
            "parse_failure": float(state["outcome"] == "invalid"),
            "steps": float(state["steps"]),
            "rounds": float(len(state["rounds"])),
            "worker_calls": float(state["worker_calls"]),
            "prompt_tokens": float(state["prompt_tokens"]),
            "completion_tokens": float(state["completion_tokens"]),
            "cost_usd": float(state["cost_usd"]),
        }


class ConductorTaskset(vf.Taskset[ConductorTask, ConductorTasksetConfig]):
    """Every task of the configured source, in order (module docstring)."""

    def load(self) -> Iterator[ConductorTask]:
        settings = self.config.env_settings()
        scorer = shared_scorer(settings)
        for index in range(len(scorer.tasks)):
            ref = EpisodeRef(index, group_seed(self.config.seed, index))
            task = scorer.tasks[index]
            data = ConductorData(
                id=task.id,
                name=task.id,
                prompt=scorer.prompt(ref),
                task_index=index,
                group_seed=ref.group_seed,
                domain=task.domain,
                env=settings,
            )
            yield ConductorTask(data, self.config.task)
