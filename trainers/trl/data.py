"""The prompt dataset: one row per episode, ``prompt`` plus the ``label`` that names it.

A row is ``{"prompt": ..., "label": EpisodeRef.to_label()}``. The prompt is the env's
observation for that episode (:meth:`conductor_gym.training.scoring.Scorer.prompt`), either as a
plain string (TRL's *standard* format: tokenised as is) or, with ``chat=True``, as a
conversation (TRL's *conversational* format: the trainer applies the tokenizer's chat
template): optional ``prefix`` messages (a system message, few-shot turns), then the
observation as the last user message. With a ``chat_prompt``
(:class:`~conductor_gym.training.chat_prompt.ChatPrompt`) the conversation is that prompt's,
written from the episode's question and number of workers, and the env's observation is
not used (the env itself is unchanged).

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

from conductor_gym.training.chat_prompt import ChatPrompt
from conductor_gym.training.scoring import EpisodeRef, Scorer

__all__ = [
    "HELD_OUT_SEED_OFFSET",
    "Message",
    "PromptLabels",
    "build_dataset",
    "make_refs",
    "prompt_key",
    "prompt_text",
]

Message = dict[str, str]

HELD_OUT_SEED_OFFSET = 10**6
"""Held-out episodes' group seeds start at the run's seed plus this, apart from the
training episodes' (``make_refs(..., seed=seed + HELD_OUT_SEED_OFFSET)``)."""


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
    chat_prompt: ChatPrompt | None = None,
    unique_prompts: bool = True,
) -> tuple[Any, PromptLabels]:
    """A ``datasets.Dataset`` with ``prompt`` and ``label`` columns, and its
    :class:`PromptLabels`. ``prefix`` messages (conversational only) come before the
    observation; a ``chat_prompt`` replaces the observation (module docstring).
    ``unique_prompts=False`` allows two episodes with one prompt (two tasks with the same
    question), which the reward-function path tells apart by their labels; the returned
    :class:`PromptLabels` is then empty."""
    datasets = importlib.import_module("datasets")

    if (prefix or chat_prompt is not None) and not chat:
        raise ValueError("a message prefix or chat prompt needs chat=True (conversations)")
    if prefix and chat_prompt is not None:
        raise ValueError("give a message prefix or a chat prompt, not both")
    labels = PromptLabels()
    rows: list[dict[str, Any]] = []
    env = scorer.make_env() if chat_prompt is not None else None
    for ref in refs:
        prompt: str | list[Message]
        if env is not None and chat_prompt is not None:
            prompt = chat_prompt.for_info(scorer.reset(env, ref)[1])
        else:
            observation = scorer.prompt(ref)
            prompt = observation
            if chat:
                prompt = [*map(dict, prefix), {"role": "user", "content": observation}]
        label = ref.to_label()
        if unique_prompts:
            labels.add(prompt, label)
        rows.append({"prompt": prompt, "label": label})
    if env is not None:
        env.close()
    return datasets.Dataset.from_list(rows), labels
