"""A checkpoint's own conductor prompt: the chat a trained policy was trained to answer.

The env's observation is the conductor prompt of :mod:`conductor_gym.core.prompts` (rules,
worked examples, about 1,450 tokens). A small policy trained on a CPU cannot afford that
prompt in every rollout, so a recipe may train it on a shorter chat built from the same
facts the env gives every conductor (``info["question"]`` and ``info["num_workers"]``).
The prompt is part of the policy, not of the world: the workers, the tasks and the
grading are the env's, unchanged.

:class:`ChatPrompt` is that chat, and it travels with the checkpoint: the trainer writes
it next to the weights as ``conductor_prompt.json`` (:meth:`ChatPrompt.save`), and
``policy:<path>`` (:class:`conductor_gym.agents.policy.PolicyConductor`) reads it from
there (:meth:`ChatPrompt.find`) and writes each request with it instead of sending the
observation. A checkpoint without the file gets the observation, as before.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from conductor_gym.errors import ConfigurationError

__all__ = ["PROMPT_FILE", "ChatPrompt"]

PROMPT_FILE = "conductor_prompt.json"
"""The file name of a checkpoint's :class:`ChatPrompt`."""


@dataclass(frozen=True)
class ChatPrompt:
    """A system message and a user message written from the episode's question and its
    number of workers.

    ``user`` is a ``str.format`` template with the fields ``question`` and
    ``worker_list`` (one ``worker_item`` line per worker, e.g. ``Model 3``; ``worker_item``
    may also show the worker's ``name``, as ``"Model {id}: {name}"``).
    """

    system: str
    user: str = "Question: {question}\n\nModels:\n{worker_list}"
    worker_item: str = "Model {id}"

    def __post_init__(self) -> None:
        for name, template, fields in (
            ("user", self.user, ("question", "worker_list")),
            ("worker_item", self.worker_item, ("id",)),
        ):
            missing = [f for f in fields if "{" + f + "}" not in template]
            if missing:
                raise ConfigurationError(f"ChatPrompt.{name} must contain {missing} fields")

    def messages(
        self, question: str, num_workers: int, names: Sequence[str] = ()
    ) -> list[dict[str, str]]:
        """The chat for one episode; ``names``: the workers' names in ``Model`` order (a
        worker without one is named by its id)."""
        workers = "\n".join(
            self.worker_item.format(id=i, name=names[i] if i < len(names) else f"Model {i}")
            for i in range(num_workers)
        )
        return [
            {"role": "system", "content": self.system},
            {"role": "user", "content": self.user.format(question=question, worker_list=workers)},
        ]

    def for_info(self, info: Mapping[str, Any]) -> list[dict[str, str]]:
        """The chat for the episode an env ``info`` describes."""
        return self.messages(
            str(info["question"]), int(info["num_workers"]), tuple(info.get("pool", ()))
        )

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

    @property
    def fingerprint(self) -> str:
        """First 12 hex digits of the SHA-256 of the prompt (recorded in results)."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def save(self, folder: str | Path) -> Path:
        """Write the prompt into a checkpoint folder; returns the file."""
        path = Path(folder) / PROMPT_FILE
        path.write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        return path

    @classmethod
    def find(cls, folder: str | Path) -> ChatPrompt | None:
        """The prompt saved in ``folder``, or ``None`` when it has none (a hub id, or a
        checkpoint trained on the env's observation)."""
        path = Path(folder) / PROMPT_FILE
        if not path.is_file():
            return None
        try:
            data = json.loads(path.read_text())
            return cls(**data)
        except (ValueError, TypeError) as exc:
            raise ConfigurationError(f"{path}: not a conductor prompt ({exc})") from exc
