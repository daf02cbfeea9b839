"""Multi-turn (recursive) episodes as a TRL ``rollout_func``.

TRL 1.16's contract (``GRPOTrainer.__init__`` docstring and ``_generate``): the trainer
calls ``rollout_func(prompts, trainer)`` with this process's slice of the generation
batch (each dataset prompt already repeated ``num_generations`` times by its sampler, so
one completion is returned per entry) and expects a dict with

* ``prompt_ids``: ``list[list[int]]``, the tokenised prompt of each entry;
* ``completion_ids``: ``list[list[int]]``, everything after the prompt;
* ``logprobs``: ``list[list[float]]`` (sampling log-probabilities, per completion token)
  or ``None`` (TRL then recomputes what it needs);
* optional ``env_mask``: ``list[list[int]]``, 1 for tokens the policy generated, 0 for
  tokens the environment inserted; TRL multiplies it into the loss mask (it is its
  ``tool_mask``), so environment tokens are context, never trained on;
* any other key: a per-entry list that TRL merges into the inputs and passes to the
  reward functions as a keyword argument.

:class:`ConductorRollout` plays each entry as one episode of the env (recursion via
``max_recursions``): it generates a plan, steps the env, and while the episode goes on
appends the recursive prompt (as the next user turn of the chat, rendered by the
tokenizer's chat template) as environment tokens, then generates the next plan, until
the episode ends. The episode's reward and statistics come back as the extra fields
``env_reward`` (``None`` for a truncated episode), ``env_outcome``, ``env_steps``,
``env_rounds``, ``env_worker_calls`` and ``env_cost_usd``, which
:func:`conductor_gym.trainers.trl.reward.rollout_reward` turns into TRL's reward and metrics.

Generation: with ``use_vllm`` (``vllm_mode="server"`` or ``"colocate"``) each turn goes
through ``trainer.vllm_generation.generate`` (TRL syncs the weights to vLLM before
calling the rollout) and the sampled tokens' log-probabilities are returned; otherwise
the trainer's own model generates with ``transformers`` ``generate`` under TRL's
``generation_config`` (temperature, top-p/k, ``max_completion_length`` per turn), as
TRL's own non-vLLM path does, and ``logprobs`` is ``None``; a trainer with a
``sampling_model()`` (:class:`~conductor_gym.trainers.trl.trainer.ConductorGRPOTrainer`:
its bf16 copy on a CPU with native bf16) generates with that model instead. In vLLM server mode with
several processes every process must make the same generate calls, so all entries
generate in every turn (lock-step); a finished episode's extra text is dropped.
"""

from __future__ import annotations

import asyncio
import copy
import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from conductor_gym._loop import LoopRunner
from conductor_gym.core.env import ConductorEnv, StepResult
from conductor_gym.core.info import StepInfo
from conductor_gym.training.scoring import EpisodeRef, Scorer

from .data import PromptLabels, prompt_text

__all__ = ["ConductorRollout"]


@dataclass
class _Episode:
    env: ConductorEnv
    conversation: list[dict[str, Any]] | str
    prompt_ids: list[int]
    completion_ids: list[int] = field(default_factory=list)
    mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    info: StepInfo | None = None
    reward: float | None = None

    @property
    def done(self) -> bool:
        return self.info is not None

    def context(self) -> list[int]:
        return self.prompt_ids + self.completion_ids


class ConductorRollout:
    """A TRL ``rollout_func`` that plays multi-turn conductor episodes.

    Args:
        scorer: The run's scorer; its env arguments (``max_recursions``, ``templates``,
            ``k``, ...) define the episodes.
        labels: Prompt -> label of the training dataset (:func:`.data.build_dataset`).
        plain_separator: Between a turn and the next observation for standard
            (non-chat) prompts.

    ``episodes`` counts the episodes played and ``last`` keeps the last batch's final
    ``info`` dicts (for tests and debugging).
    """

    def __init__(
        self, scorer: Scorer, labels: PromptLabels, *, plain_separator: str = "\n\n"
    ) -> None:
        self.scorer = scorer
        self.labels = labels
        self.plain_separator = plain_separator
        self.max_turns = 1 + scorer.config.max_recursions
        self.episodes = 0
        self.last: list[StepInfo | None] = []
        self._runner = LoopRunner()
        self._idle: list[ConductorEnv] = []

    # -- the rollout ---------------------------------------------------------------------

    def __call__(self, prompts: Sequence[Any], trainer: Any) -> dict[str, Any]:
        tokenizer = _tokenizer(trainer)
        refs = [EpisodeRef.from_label(self.labels.label(p)) for p in prompts]
        seeds = self.scorer.draw_rollout_seeds(len(prompts))
        episodes = [
            self._start(trainer, p, r, s) for p, r, s in zip(prompts, refs, seeds, strict=True)
        ]
        lockstep = bool(getattr(trainer, "use_vllm", False)) and (
            trainer.accelerator.num_processes > 1
        )
        try:
            for _ in range(self.max_turns):
                todo = episodes if lockstep else [e for e in episodes if not e.done]
                if not todo:
                    break
                generated, logprobs = _generate(trainer, [e.context() for e in todo])
                live = [
                    (e, g, lp)
                    for e, g, lp in zip(todo, generated, logprobs, strict=True)
                    if not e.done
                ]
                texts = tokenizer.batch_decode([g for _, g, _ in live], skip_special_tokens=True)
                results = self._runner.run(_step_all([e.env for e, _, _ in live], texts))
                for (episode, ids, lps), text, result in zip(live, texts, results, strict=True):
                    self._advance(trainer, tokenizer, episode, ids, lps, text, result)
            if unfinished := sum(not e.done for e in episodes):
                raise RuntimeError(f"{unfinished} episodes did not end in {self.max_turns} turns")
        finally:
            self._idle.extend(e.env for e in episodes)
        self.episodes += len(episodes)
        self.last = [e.info for e in episodes]
        return self._output(episodes, with_logprobs=bool(getattr(trainer, "use_vllm", False)))

    def _start(self, trainer: Any, prompt: Any, ref: EpisodeRef, seed: int) -> _Episode:
        env = self._idle.pop() if self._idle else self.scorer.make_env()
        observation, _ = self.scorer.reset(env, ref, seed)
        last = prompt if isinstance(prompt, str) else prompt_text(prompt[-1]["content"])
        if last != observation:
            raise ValueError(
                "the dataset prompt is not the env's observation for its label: build the "
                "dataset and the rollout from the same Scorer (same templates, pool, tasks)"
            )
        conversation = prompt if isinstance(prompt, str) else copy.deepcopy(list(prompt))
        return _Episode(env, conversation, _encode_prompt(trainer, conversation))

    def _advance(
        self,
        trainer: Any,
        tokenizer: Any,
        episode: _Episode,
        ids: list[int],
        logprobs: list[float] | None,
        text: str,
        result: StepResult,
    ) -> None:
        observation, reward, terminated, truncated, info = result
        episode.completion_ids += ids
        episode.mask += [1] * len(ids)
        episode.logprobs += logprobs if logprobs is not None else [0.0] * len(ids)
        if terminated or truncated:
            episode.info = info
            episode.reward = None if truncated else float(reward)
            return
        env_ids = self._env_tokens(trainer, tokenizer, episode, ids, text, observation)
        episode.completion_ids += env_ids
        episode.mask += [0] * len(env_ids)
        episode.logprobs += [0.0] * len(env_ids)

    def _env_tokens(
        self,
        trainer: Any,
        tokenizer: Any,
        episode: _Episode,
        ids: list[int],
        text: str,
        observation: str,
    ) -> list[int]:
        """The tokens between this turn's generation and the next one."""
        eos = tokenizer.eos_token_id
        closing = [] if ids and ids[-1] in _eos_ids(trainer, tokenizer) else [eos]
        if isinstance(episode.conversation, str):
            suffix = self.plain_separator + observation + self.plain_separator
            return closing + list(tokenizer(suffix, add_special_tokens=False)["input_ids"])
        episode.conversation.append({"role": "assistant", "content": text})
        before = _render(trainer, episode.conversation, generation_prompt=False)
        episode.conversation.append({"role": "user", "content": observation})
        after = _render(trainer, episode.conversation, generation_prompt=True)
        eos_text = tokenizer.eos_token or ""
        cut = (
            before.rfind(eos_text) + len(eos_text)
            if eos_text and eos_text in before
            else len(before)
        )
        if not after.startswith(before[:cut]):
            raise ValueError("the chat template renders a conversation differently when it grows")
        return closing + list(tokenizer(after[cut:], add_special_tokens=False)["input_ids"])

    def _output(self, episodes: list[_Episode], *, with_logprobs: bool) -> dict[str, Any]:
        infos = [e.info for e in episodes]
        return {
            "prompt_ids": [e.prompt_ids for e in episodes],
            "completion_ids": [e.completion_ids for e in episodes],
            "logprobs": [e.logprobs for e in episodes] if with_logprobs else None,
            "env_mask": [e.mask for e in episodes],
            "env_reward": [e.reward for e in episodes],
            "env_outcome": [str(i["outcome"] if i else None) for i in infos],
            "env_steps": [_steps_per_plan(i) if i else 0.0 for i in infos],
            "env_rounds": [len(i["rounds"]) if i else 0 for i in infos],
            "env_worker_calls": [float(i["worker_calls"]) if i else 0.0 for i in infos],
            "env_cost_usd": [float(i["cost_usd"]) if i else 0.0 for i in infos],
        }

    def close(self) -> None:
        for env in self._idle:
            env.close()
        self._idle.clear()
        self._runner.close()


async def _step_all(envs: list[ConductorEnv], actions: list[str]) -> list[StepResult]:
    return list(await asyncio.gather(*(e.astep(a) for e, a in zip(envs, actions, strict=True))))


def _steps_per_plan(info: StepInfo) -> float:
    sizes = [len(r.plan) for r in info["rounds"] if r.plan is not None and len(r.plan)]
    return sum(sizes) / len(sizes) if sizes else 0.0


# -- tokenisation and generation (TRL's trainer attributes) ------------------------------


def _tokenizer(trainer: Any) -> Any:
    processing = trainer.processing_class
    return getattr(processing, "tokenizer", processing)


def _eos_ids(trainer: Any, tokenizer: Any) -> set[int]:
    ids = getattr(trainer, "eos_token_ids", None) or [tokenizer.eos_token_id]
    return {int(i) for i in ids}


def _render(trainer: Any, conversation: list[dict[str, Any]], *, generation_prompt: bool) -> str:
    text = trainer.processing_class.apply_chat_template(
        conversation,
        chat_template=getattr(trainer, "chat_template", None),
        add_generation_prompt=generation_prompt,
        tokenize=False,
        **(getattr(trainer, "chat_template_kwargs", None) or {}),
    )
    return str(text)


def _encode_prompt(trainer: Any, conversation: list[dict[str, Any]] | str) -> list[int]:
    """The prompt's token ids, as TRL tokenises a prompt of that format."""
    if isinstance(conversation, str):
        return list(trainer.processing_class(text=[conversation])["input_ids"][0])
    encoded = trainer.processing_class.apply_chat_template(
        conversation=[conversation],
        chat_template=getattr(trainer, "chat_template", None),
        add_generation_prompt=True,
        tokenize=True,
        return_dict=True,
        **(getattr(trainer, "chat_template_kwargs", None) or {}),
    )
    return list(encoded["input_ids"][0])


def _generate(
    trainer: Any, contexts: list[list[int]]
) -> tuple[list[list[int]], list[list[float] | None]]:
    """One sampled continuation per context (see the module docstring)."""
    if getattr(trainer, "use_vllm", False):
        _, completion_ids, logprobs, _ = trainer.vllm_generation.generate(
            prompts=contexts, images=None, num_generations=1
        )
        return (
            [list(ids) for ids in completion_ids],
            [
                [float(lp[0]) if lp[0] is not None else float("nan") for lp in row]
                for row in logprobs
            ],
        )
    return _generate_transformers(trainer, contexts), [None] * len(contexts)


def _generate_transformers(trainer: Any, contexts: list[list[int]]) -> list[list[int]]:
    import torch

    unwrap_model_for_generation = importlib.import_module("trl.models").unwrap_model_for_generation

    tokenizer = _tokenizer(trainer)
    width = max(len(c) for c in contexts)
    pad = tokenizer.pad_token_id
    device = trainer.accelerator.device
    input_ids = torch.tensor([[pad] * (width - len(c)) + c for c in contexts], device=device)
    attention = torch.tensor(
        [[0] * (width - len(c)) + [1] * len(c) for c in contexts], device=device
    )
    args = trainer.args
    # ConductorGRPOTrainer samples with a bf16 copy of the policy where that pays
    sampling_model = getattr(trainer, "sampling_model", None)
    with (
        unwrap_model_for_generation(
            trainer.model_wrapped if sampling_model is None else sampling_model(),
            trainer.accelerator,
            gather_deepspeed3_params=args.ds3_gather_for_generation,
            generation_kwargs=trainer.generation_kwargs,
            gradient_checkpointing_kwargs=args.gradient_checkpointing_kwargs,
        ) as model,
        torch.no_grad(),
    ):
        output = model.generate(
            input_ids=input_ids,
            attention_mask=attention,
            generation_config=trainer.generation_config,
        )
    eos = _eos_ids(trainer, tokenizer)
    rows: list[list[int]] = []
    for generated in output[:, width:].tolist():
        stop = next((j for j, t in enumerate(generated) if t in eos), None)
        rows.append(generated if stop is None else generated[: stop + 1])
    return rows
