"""The prompt dataset: one row per episode, ``prompt`` plus the ``label`` that names it.

A row is ``{"prompt": ..., "label": EpisodeRef.to_label()}``. The prompt is the env's
observation for that episode (:meth:`conductor_gym.bridge.Scorer.prompt`), either as a
plain string (TRL's *standard* format: tokenised as is) or, with ``chat=True``, as a
conversation (TRL's *conversational* format: the trainer applies the tokenizer's chat
template): optional ``prefix`` messages (a system message, few-shot turns), then the
observation as the last user message.

TRL repeats each row ``num_generations`` times (its ``RepeatSampler``), so every
completion of a GRPO group carries the same label, hence the same task and worker draw
(the group seed); each completion's episode gets a fresh rollout seed when it is scored.

A ``rollout_func`` receives only the prompts, not the other columns, so
:class:`PromptLabels` maps a prompt back to its label; :func:`build_dataset` refuses
datasets in which one prompt stands for two different episodes.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from conductor_gym.bridge import EpisodeRef, Scorer

__all__ = ["Message", "PromptLabels", "build_dataset", "make_refs", "prompt_key", "prompt_text"]

Message = dict[str, str]


def make_refs(task_indices: Iterable[int], *, seed: int = 0) -> list[EpisodeRef]:
    """One :class:`EpisodeRef` per task index; group seeds are ``seed + position`` so a run
    is reproducible and every prompt has its own worker draw."""
    return [EpisodeRef(int(i), seed + n) for n, i in enumerate(task_indices)]


def prompt_key(prompt: str | Sequence[Mapping[str, Any]]) -> str:
    """A hashable key for a prompt as TRL hands it over (a string or a list of messages)."""
    if isinstance(prompt, str):
        return prompt
    return json.dumps([{"role": m["role"], "content": m["content"]} for m in prompt])


def prompt_text(message_content: Any) -> str:
    """The text of a message's ``content`` (a string, or TRL's typed content blocks)."""
    if isinstance(message_content, str):
        return message_content
    if isinstance(message_content, list):
        return "".join(
            str(part.get("text", "")) for part in message_content if isinstance(part, dict)
        )
    return str(message_content)


@dataclass
class PromptLabels:
    """Prompt -> label (``EpisodeRef.to_label()``) for the rows of a dataset."""

    labels: dict[str, str] = field(default_factory=dict)

    def add(self, prompt: str | Sequence[Mapping[str, Any]], label: str) -> None:
        key = prompt_key(prompt)
        known = self.labels.setdefault(key, label)
        if known != label:
            raise ValueError(
                "two episodes share one prompt (labels "
                f"{known} and {label}): a rollout_func, which sees only prompts, could not "
                "tell them apart; use one group seed per task, or the reward-function path"
            )

    def label(self, prompt: str | Sequence[Mapping[str, Any]]) -> str:
        try:
            return self.labels[prompt_key(prompt)]
        except KeyError:
            raise KeyError("this prompt is not in the training dataset's PromptLabels") from None


def build_dataset(
    scorer: Scorer,
    refs: Sequence[EpisodeRef],
    *,
    chat: bool = True,
    prefix: Sequence[Message] = (),
) -> tuple[Any, PromptLabels]:
    """A ``datasets.Dataset`` with ``prompt`` and ``label`` columns, and its
    :class:`PromptLabels`. ``prefix`` messages (conversational only) come before the
    observation."""
    datasets = importlib.import_module("datasets")

    if prefix and not chat:
        raise ValueError("a message prefix needs chat=True (conversational prompts)")
    labels = PromptLabels()
    rows: list[dict[str, Any]] = []
    for ref in refs:
        observation = scorer.prompt(ref)
        prompt: str | list[Message] = observation
        if chat:
            prompt = [*map(dict, prefix), {"role": "user", "content": observation}]
        label = ref.to_label()
        labels.add(prompt, label)
        rows.append({"prompt": prompt, "label": label})
    return datasets.Dataset.from_list(rows), labels
