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
import functools
import json
import operator
import secrets
import threading
import types
import typing
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import verifiers.v1 as vf
from pydantic import ConfigDict, Field, Strict, create_model, model_validator

from conductor_gym.core.config import CONFIG_FIELDS, EnvConfig
from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.prompts import DEFAULT_TEMPLATES
from conductor_gym.core.reward import Outcome
from conductor_gym.errors import ConfigurationError, InfrastructureError
from conductor_gym.seeding import group_seed
from conductor_gym.training.scoring import EpisodeRef, Scorer

__all__ = [
    "STATE_KEY",
    "ConductorData",
    "ConductorTask",
    "ConductorTaskset",
    "ConductorTasksetConfig",
    "Episode",
    "EpisodeTruncated",
    "env_config",
    "episode_state",
]

STATE_KEY = "conductor"
"""The ``trace.info`` key holding the episode's state."""


def _json_form(annotation: Any) -> Any:
    """The type a taskset field takes on the command line: the env field's own type where
    it is plain JSON (strictness dropped, since ``vf-eval`` flags arrive as text), else
    ``Any`` (a JSON value :meth:`EnvConfig.from_dict` checks and rebuilds)."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _json_form(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        parts = tuple(_json_form(part) for part in typing.get_args(annotation))
        return Any if Any in parts else functools.reduce(operator.or_, parts)
    if annotation in _PLAIN or typing.get_origin(annotation) is dict:
        return annotation
    return Any


_PLAIN = (bool, int, float, str, type(None))


def _env_field(name: str) -> tuple[Any, Any]:
    """``EnvConfig``'s field ``name`` as a taskset field: its JSON type, its JSON default,
    its bounds and its description."""
    source = EnvConfig.model_fields[name]
    bounds = [rule for rule in source.metadata if not isinstance(rule, Strict)]
    annotation = _json_form(source.annotation)
    if bounds:
        annotation = typing.Annotated[annotation, *bounds]
    return annotation, Field(_DEFAULTS[name], description=source.description)


_DEFAULTS = EnvConfig().to_dict()

if TYPE_CHECKING:

    class _EnvFields(vf.TasksetConfig):
        """For the type checker: the fields made below are read through ``Any``."""

        def __getattr__(self, name: str) -> Any: ...

else:
    _EnvFields = create_model(
        "_EnvFields",
        __base__=vf.TasksetConfig,
        __module__=__name__,
        **{name: _env_field(name) for name in CONFIG_FIELDS},
    )


class ConductorTasksetConfig(_EnvFields):
    """``--env.taskset.*``: every :class:`~conductor_gym.core.config.EnvConfig` field, in
    its JSON form and with its description (derived from ``EnvConfig``, so a new env
    setting is a new flag here with no edit), plus the taskset's own ``few_shot`` and
    ``seed``. ``EnvConfig`` checks every value when the config is built; a bad one
    raises :class:`~conductor_gym.errors.ConfigurationError` naming the field.
    """

    model_config = ConfigDict(use_attribute_docstrings=True)

    few_shot: bool = True
    """Keep the conductor prompt's few-shot examples (``False``: the prompt without them,
    about 400 tokens instead of 1500)."""
    seed: int = Field(0, ge=0)
    """Derives every task's group seed (its worker draw)."""

    @model_validator(mode="after")
    def _check_env(self) -> ConductorTasksetConfig:
        env_config(self.env_settings())
        return self

    def env_settings(self) -> dict[str, Any]:
        """The settings the env is rebuilt from (what :attr:`ConductorData.env` holds):
        every ``EnvConfig`` field and ``few_shot``."""
        return dict(self.model_dump(include={*CONFIG_FIELDS, "few_shot"}))


def env_config(settings: Mapping[str, Any]) -> EnvConfig:
    """The ``EnvConfig`` of a taskset's :meth:`~ConductorTasksetConfig.env_settings`
    (``few_shot=False`` drops the prompt's examples)."""
    env = dict(settings)
    few_shot = env.pop("few_shot", True)
    config = EnvConfig.from_dict(env, where="--env.taskset")
    if few_shot:
        return config
    templates = config.templates or DEFAULT_TEMPLATES
    return config.replace(templates=dataclasses.replace(templates, examples=()))


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
    """This process's :class:`~conductor_gym.training.scoring.Scorer` for ``settings`` (what
    :meth:`ConductorTasksetConfig.env_settings` returns, with ``few_shot``; built once, with
    fresh worker randomness per process)."""
    key = json.dumps(settings, sort_keys=True)
    with _SCORERS_LOCK:
        if key not in _SCORERS:
            _SCORERS[key] = Scorer(env_config(settings), seed=secrets.randbits(62))
        return _SCORERS[key]


class EpisodeTruncated(InfrastructureError, vf.TaskError):
    """The episode ended on an infrastructure failure or a spent budget: no reward."""


class Episode:
    """One rollout's conductor-gym episode on a fresh env of the shared scorer.

    Raises ``ConfigurationError`` at construction when the env's conductor prompt is not the
    task's prompt (the task was written under other env settings).
    """

    def __init__(self, data: ConductorData) -> None:
        self.scorer = shared_scorer(data.env)
        self.rollout_seed = self.scorer.draw_rollout_seeds(1)[0]
        self.env: ConductorEnv = self.scorer.make_env()
        observation, self.info = self.scorer.reset(self.env, data.ref, self.rollout_seed)
        if observation != data.prompt:
            self.env.close()
            raise ConfigurationError(
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
            "correct": float(state["outcome"] == Outcome.CORRECT),
            "parse_failure": float(state["outcome"] == Outcome.INVALID),
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
