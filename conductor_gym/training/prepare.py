"""Training data for conductor trainers: prompt rows, labels and the env config.

A trainer (OpenRLHF's agent file, a TRL reward function) must rebuild *exactly* the env
that wrote its prompts: the same task source, worker pool, ``k``, id shuffling, step
limit and recursion settings. :func:`prepare_prompts` writes both halves at once:

* ``<out>`` (JSON Lines): one row per task, in task order::

      {"prompt": <Scorer.prompt(ref)>, "label": <label>, "task_id": ..., "domain": ...,
       "datasource": <domain>, "task_index": i}

  ``ref = EpisodeRef(i, group_seed(seed, i))``: the group seed is a pure function of
  ``(seed, i)``, so every rollout of a row shares the task and the worker-pool draw.
  ``label`` is :meth:`EpisodeRef.to_label`'s JSON object plus one key, ``"tasks"``: the
  task source's fingerprint (:func:`make_label`). :meth:`EpisodeRef.from_label` reads it
  unchanged (it ignores extra keys); :func:`parse_label` also returns the fingerprint.
  ``datasource`` is the column OpenRLHF groups its eval metrics by.
* ``<out stem>.env.json`` (:func:`config_path_for`): a :class:`TrainConfig`, the
  :class:`~conductor_gym.core.config.EnvConfig` of the episodes (everything needed to rebuild
  the :class:`~conductor_gym.training.scoring.Scorer`, :meth:`TrainConfig.scorer`) plus the
  fingerprint and size of the task source, the group-seed seed and the chat format.

Consistency is checked loudly, never assumed: :meth:`TrainConfig.scorer` fails when the
task source it builds has another fingerprint or size than the one recorded (the data
changed under the config), and :meth:`TrainConfig.check_label` fails on a label whose
fingerprint is not the config's (a prompts file paired with another config).

Trainers find the config through the environment variable :data:`CONFIG_ENV`
(``CONDUCTOR_GYM_TRAIN_CONFIG``). Nothing here imports torch or any trainer library.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from conductor_gym._validate import is_int, require_int
from conductor_gym.core.config import EnvConfig
from conductor_gym.errors import ConfigurationError
from conductor_gym.seeding import group_seed
from conductor_gym.tasks import TaskSource
from conductor_gym.tasks.jsonl import JSONL_PREFIX
from conductor_gym.training.scoring import EpisodeRef, Scorer

__all__ = [
    "CHAT_FORMATS",
    "CONFIG_ENV",
    "CONFIG_FORMAT",
    "PrepareResult",
    "SharedEnv",
    "TrainConfig",
    "config_path_for",
    "env_config_path",
    "make_label",
    "parse_label",
    "prepare_prompts",
    "shared_env",
]

CONFIG_ENV = "CONDUCTOR_GYM_TRAIN_CONFIG"
"""Environment variable holding the path of the env config JSON a trainer process uses."""

CONFIG_FORMAT = "conductor-gym/train-env/2"

CHAT_FORMATS: dict[str, dict[str, str]] = {
    # ChatML (Qwen2.5, SmolLM2, ...): close the assistant turn unless the generation
    # already did, then a user turn holding the env's observation, then open the reply.
    "chatml": {
        "turn_end": "<|im_end|>",
        "feedback": "\n<|im_start|>user\n{observation}<|im_end|>\n<|im_start|>assistant\n",
    },
    # No chat template: the observation between blank lines.
    "plain": {"turn_end": "", "feedback": "\n\n{observation}\n\n"},
}
"""How a multi-turn episode's next observation is spliced into the token stream (the
conductor's chat format): ``turn_end`` closes the conductor's turn when its generation
did not end with it, ``feedback`` is the next turn with ``{observation}`` replaced."""


def make_label(ref: EpisodeRef, fingerprint: str) -> str:
    """``ref.to_label()``'s JSON object with ``"tasks": fingerprint`` added."""
    data = json.loads(ref.to_label())
    data["tasks"] = fingerprint
    return json.dumps(data)


def parse_label(label: str) -> tuple[EpisodeRef, str | None]:
    """The episode and task-source fingerprint of a label (``None``: a plain
    ``EpisodeRef`` label without one). Raises ``ValueError`` on anything else."""
    ref = EpisodeRef.from_label(label)
    fingerprint = json.loads(label).get("tasks")
    if fingerprint is not None and not isinstance(fingerprint, str):
        raise ValueError(f"label {label!r}: 'tasks' must be a fingerprint string")
    return ref, fingerprint


def config_path_for(prompts_path: str | os.PathLike[str]) -> Path:
    """Where the env config of a prompts file lives: ``prompts.jsonl`` ->
    ``prompts.env.json`` (same folder, same stem)."""
    path = Path(prompts_path)
    return path.with_name(path.stem + ".env.json")


def env_config_path() -> str:
    """The absolute path in :data:`CONFIG_ENV`; ``RuntimeError`` when it is unset."""
    path = os.environ.get(CONFIG_ENV)
    if not path:
        raise RuntimeError(
            f"{CONFIG_ENV} is not set: point it at the .env.json file that "
            "`conductor-gym train prepare` wrote next to the prompts (for Ray jobs, "
            "pass it in --runtime-env-json's env_vars)"
        )
    return os.path.abspath(path)


def _portable(value: str | None) -> str | None:
    """Absolute path for an existing relative file path (a trainer may run elsewhere)."""
    if value is None:
        return None
    if value.startswith(JSONL_PREFIX):
        return JSONL_PREFIX + str(Path(value[len(JSONL_PREFIX) :]).resolve())
    if (os.sep in value or value.endswith(".toml")) and Path(value).exists():
        return str(Path(value).resolve())
    return value


@dataclass(frozen=True)
class TrainConfig:
    """Everything a trainer process needs to rebuild the env of a prompts file.

    ``env`` is the episodes' :class:`~conductor_gym.core.config.EnvConfig` (its task source
    given by name; ``cache`` is a response-cache file used by trainers, not by
    :func:`prepare_prompts`); ``task_fingerprint``/``num_tasks`` are what the task source
    was when the prompts were written; ``seed`` is the seed the group seeds came from;
    ``chat`` is one of :data:`CHAT_FORMATS` (or the same two keys, edited).
    """

    env: EnvConfig
    task_fingerprint: str
    num_tasks: int
    seed: int = 0
    chat: dict[str, str] = field(default_factory=lambda: dict(CHAT_FORMATS["chatml"]))

    def __post_init__(self) -> None:
        if not isinstance(self.env, EnvConfig) or not isinstance(self.env.tasks, str):
            raise ConfigurationError("must be an EnvConfig with a named task source", field="env")
        if set(self.chat) != {"turn_end", "feedback"} or "{observation}" not in str(
            self.chat.get("feedback")
        ):
            raise ConfigurationError(
                "needs 'turn_end' and a 'feedback' containing "
                f"'{{observation}}', got {self.chat!r}",
                field="chat",
            )

    # -- files ------------------------------------------------------------------------

    def to_json(self) -> str:
        data = {
            "format": CONFIG_FORMAT,
            "env": self.env.to_dict(),
            "task_fingerprint": self.task_fingerprint,
            "num_tasks": self.num_tasks,
            "seed": self.seed,
            "chat": self.chat,
        }
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], where: str = "train config") -> TrainConfig:
        """Build from a parsed JSON object; unknown keys or a wrong ``format`` raise."""
        data = dict(data)
        if data.pop("format", None) != CONFIG_FORMAT:
            raise ConfigurationError(f"{where}: not a {CONFIG_FORMAT!r} file")
        known = {f.name for f in fields(cls)}
        if unknown := sorted(set(data) - known):
            raise ConfigurationError(f"{where}: unknown keys {unknown}; valid: {sorted(known)}")
        try:
            env = EnvConfig.from_dict(data.pop("env", {}), where=f"{where}: env")
            return cls(env=env, **data)
        except TypeError as exc:
            raise ConfigurationError(f"{where}: {exc}") from exc

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TrainConfig:
        """Read a config file written by :func:`prepare_prompts`."""
        with open(path, encoding="utf-8") as handle:
            return cls.from_mapping(json.load(handle), where=str(path))

    @classmethod
    def from_env(cls) -> tuple[str, TrainConfig]:
        """The config named by :data:`CONFIG_ENV` and its absolute path."""
        path = env_config_path()
        return path, cls.load(path)

    # -- the env ----------------------------------------------------------------------

    def task_source(self) -> TaskSource:
        return self.env.build_tasks()

    def scorer(
        self, *, seed: int = 0, use_cache: bool = True, source: TaskSource | None = None
    ) -> Scorer:
        """The Scorer of this config, after checking the task source is the recorded one.

        ``source`` skips building the task source again (it is checked all the same).
        Raises ``RuntimeError`` when the task source's fingerprint or size differ from
        the config's (the data changed since the prompts were written).
        """
        source = source if source is not None else self.task_source()
        found = source.fingerprint()
        if found != self.task_fingerprint or len(source) != self.num_tasks:
            raise RuntimeError(
                f"task source {self.env.tasks!r} now has fingerprint {found} and "
                f"{len(source)} tasks, but the prompts were prepared on "
                f"{self.task_fingerprint} ({self.num_tasks} tasks): rerun "
                "`conductor-gym train prepare` or restore the data"
            )
        env = self.env.replace(tasks=source, task_options={})
        return Scorer(env if use_cache else env.replace(cache=None), seed=seed)

    def check_label(self, label: str) -> EpisodeRef:
        """The episode of ``label``; ``ValueError`` when its task-source fingerprint is
        missing or not this config's, or its task index is out of range."""
        ref, fingerprint = parse_label(label)
        if fingerprint != self.task_fingerprint:
            raise ConfigurationError(
                f"label {label!r} was prepared on task source {fingerprint}, but the env "
                f"config ({CONFIG_ENV}) is for {self.task_fingerprint} ({self.env.tasks!r}): "
                "the prompt dataset and the env config do not belong together"
            )
        if ref.task_index >= self.num_tasks:
            raise ValueError(f"label {label!r}: task_index is outside 0..{self.num_tasks - 1}")
        return ref


@dataclass(frozen=True)
class SharedEnv:
    """The process-wide env of one config file: its path, the config and its Scorer."""

    path: str
    config: TrainConfig
    scorer: Scorer


_SHARED: dict[str, SharedEnv] = {}
_SHARED_LOCK = threading.Lock()


def shared_env() -> SharedEnv:
    """The :class:`SharedEnv` of ``$CONDUCTOR_GYM_TRAIN_CONFIG``, built on first use in
    this process (checking the task-source fingerprint) and reused after: a trainer's
    rollout process (an OpenRLHF engine, a verl agent-loop worker) shares one Scorer,
    so the pool's clients, rate limits and response cache serve every episode."""
    path = env_config_path()
    with _SHARED_LOCK:
        if path not in _SHARED:
            config = TrainConfig.load(path)
            # Fresh worker randomness per process: the group seed (task, pool draw) comes
            # from the label; two engines must not replay the same rollout seeds.
            scorer = config.scorer(seed=secrets.randbits(62))
            _SHARED[path] = SharedEnv(path, config, scorer)
        return _SHARED[path]


@dataclass(frozen=True)
class PrepareResult:
    """What :func:`prepare_prompts` wrote."""

    prompts_path: Path
    config_path: Path
    config: TrainConfig
    rows: int
    domains: dict[str, int]
    prompt_chars: tuple[int, int]  # shortest, longest


def prepare_prompts(
    out: str | os.PathLike[str],
    *,
    config: EnvConfig | None = None,
    seed: int = 0,
    limit: int | None = None,
    chat_format: str = "chatml",
    **settings: Any,
) -> PrepareResult:
    """Write the prompt rows of the config's tasks to ``out`` and its train config next
    to it.

    One row per task index ``0 .. n-1`` (``n`` = ``limit`` or the source's size), see
    the module docstring. The episodes are ``config`` (an
    :class:`~conductor_gym.core.config.EnvConfig`, default: all defaults) with ``settings``
    (its fields as keywords: ``tasks``, ``pool``, ``k``, ``max_recursions``, ...)
    applied; relative file paths in it are made absolute (a trainer may run elsewhere).
    ``chat_format`` names one of :data:`CHAT_FORMATS`. Overwrites both files.
    """
    require_int("seed", seed, minimum=0)
    if limit is not None and (not is_int(limit) or limit < 1):
        raise ConfigurationError(f"must be an int >= 1 or None, got {limit!r}", field="limit")
    if chat_format not in CHAT_FORMATS:
        raise ConfigurationError(
            f"choose one of {sorted(CHAT_FORMATS)}, got {chat_format!r}", field="chat_format"
        )
    env = (config or EnvConfig()).replace(**settings)
    env = env.replace(
        tasks=_portable(env.tasks) if isinstance(env.tasks, str) else env.tasks,
        pool=_portable(env.pool) if isinstance(env.pool, str) else env.pool,
        cache=_portable(env.cache) if isinstance(env.cache, str) else env.cache,
    )
    base = TrainConfig(
        env=env, task_fingerprint="", num_tasks=0, seed=seed, chat=dict(CHAT_FORMATS[chat_format])
    )
    source = base.task_source()
    fingerprint = source.fingerprint()
    train_config = replace(base, task_fingerprint=fingerprint, num_tasks=len(source))
    scorer = train_config.scorer(use_cache=False, source=source)
    count = len(source) if limit is None else min(limit, len(source))
    prompts_path = Path(out)
    config_path = config_path_for(prompts_path)
    prompts_path.parent.mkdir(parents=True, exist_ok=True)
    domains: dict[str, int] = {}
    lengths: list[int] = []
    try:
        with open(prompts_path, "w", encoding="utf-8") as handle:
            for index in range(count):
                ref = EpisodeRef(index, group_seed(seed, index))
                task = source[index]
                prompt = scorer.prompt(ref)
                row = {
                    "prompt": prompt,
                    "label": make_label(ref, fingerprint),
                    "task_id": task.id,
                    "domain": task.domain,
                    "datasource": task.domain,
                    "task_index": index,
                }
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                domains[task.domain] = domains.get(task.domain, 0) + 1
                lengths.append(len(prompt))
    finally:
        scorer.close()
    config_path.write_text(train_config.to_json(), encoding="utf-8")
    return PrepareResult(
        prompts_path=prompts_path,
        config_path=config_path,
        config=train_config,
        rows=count,
        domains=domains,
        prompt_chars=(min(lengths, default=0), max(lengths, default=0)),
    )
