"""The warm start: a short supervised stage that teaches a small policy to write the plans
of a :class:`~conductor_gym.trainers.trl.plan_prior.PlanPrior`.

The paper trains Qwen2.5-7B, which already writes the three Python lists when its prompt
asks for them. SmolLM2-135M does not: on our conductor chat its greedy plans parse 0 % of
the time, so GRPO has no signal to start from. Before GRPO, the ``cpu-orchestrate`` recipe
therefore fine-tunes it on plans drawn from a prior over plan structures, for questions of
the training tasks. With the uniform prior (:meth:`PlanPrior.uniform`) this is a pure
format prior; the recipe draws from the prior its cross-entropy search fitted to the
training episodes' rewards (:func:`~conductor_gym.trainers.trl.plan_prior.search_prior`),
so the policy starts from the structures that paid there.

:func:`warm_start` is the loop: prompt tokens are masked out of the loss (the policy learns
to write plans, not prompts), AdamW, a constant learning rate, optional bf16 autocast, and
a seeded draw, so two runs with the same seed train the same weights.
"""

from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from conductor_gym.plan import Plan
from conductor_gym.training.chat_prompt import ChatPrompt

from .plan_prior import PlanPrior

__all__ = ["WarmStart", "warm_start"]


@dataclass(frozen=True)
class WarmStart:
    """Settings of the warm start: ``steps`` optimizer steps of ``batch_size`` plans
    drawn from the prior, at ``learning_rate``; each step's gradient is accumulated over
    chunks of ``micro_batch_size`` examples (the same gradient, in less memory)."""

    steps: int = 32
    batch_size: int = 8
    learning_rate: float = 1e-4
    micro_batch_size: int = 2
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "micro_batch_size"):
            least = 0 if name == "steps" else 1
            if getattr(self, name) < least:
                raise ValueError(f"WarmStart.{name} must be >= {least}, got {getattr(self, name)}")
        if self.learning_rate <= 0:
            raise ValueError(f"WarmStart.learning_rate must be > 0, got {self.learning_rate}")


def _example(
    tokenizer: Any,
    prompt: ChatPrompt,
    question: str,
    plan: Plan,
    num_workers: int,
    names: Sequence[str] = (),
) -> tuple[list[int], list[int]]:
    """Token ids of the chat plus its plan, and labels with the prompt masked (-100)."""
    text = tokenizer.apply_chat_template(
        prompt.messages(question, num_workers, names), tokenize=False, add_generation_prompt=True
    )
    prompt_ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    plan_ids = tokenizer(plan.to_text() + tokenizer.eos_token, add_special_tokens=False)[
        "input_ids"
    ]
    return prompt_ids + plan_ids, [-100] * len(prompt_ids) + plan_ids


def _loss(model: Any, rows: Sequence[tuple[list[int], list[int]]], pad: int, bf16: bool) -> Any:
    """The mean token loss of ``rows`` (left-padded to one width)."""
    import torch

    width = max(len(ids) for ids, _ in rows)
    input_ids = torch.tensor([[pad] * (width - len(ids)) + ids for ids, _ in rows])
    labels = torch.tensor([[-100] * (width - len(lab)) + lab for _, lab in rows])
    mask = torch.tensor([[0] * (width - len(ids)) + [1] * len(ids) for ids, _ in rows])
    autocast = (
        torch.autocast(model.device.type, dtype=torch.bfloat16)
        if bf16
        else contextlib.nullcontext()
    )
    with autocast:
        return model(input_ids=input_ids, attention_mask=mask, labels=labels).loss


def _targets(rows: Sequence[tuple[list[int], list[int]]]) -> int:
    """The tokens of ``rows`` the loss is taken on (labels past the first, not masked)."""
    return sum(sum(x != -100 for x in labels[1:]) for _, labels in rows)


def warm_start(
    model: Any,
    tokenizer: Any,
    prompt: ChatPrompt,
    questions: Sequence[str],
    prior: PlanPrior,
    settings: WarmStart,
    *,
    names: Sequence[Sequence[str]] | None = None,
    bf16: bool = False,
    log_every: int = 8,
) -> dict[str, Any]:
    """Fine-tune ``model``'s trainable parameters on plans drawn from ``prior`` for ``questions``
    (training tasks only), printing the loss every ``log_every`` steps (0: never).
    ``names``: for each question, the workers its episode drew, in ``Model`` order (the
    chat shows them when the prompt's ``worker_item`` names workers). Returns
    ``{"losses": [...], "wall_s": ...}``."""
    import torch

    if not questions:
        raise ValueError("warm_start needs at least one training question")
    if names is not None and len(names) != len(questions):
        raise ValueError(
            f"warm_start: names has {len(names)} entries for {len(questions)} questions"
        )
    rng = random.Random(settings.seed)
    torch.manual_seed(settings.seed)
    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(parameters, lr=settings.learning_rate)
    pad = tokenizer.pad_token_id
    losses: list[float] = []
    start = time.perf_counter()
    was_training = model.training
    model.train()
    for _ in range(settings.steps):
        rows = []
        for _ in range(settings.batch_size):
            index = rng.randrange(len(questions))
            question = questions[index]
            plan = prior.sample(rng, question)
            shown = names[index] if names is not None else ()
            rows.append(_example(tokenizer, prompt, question, plan, prior.num_workers, shown))
        targets = _targets(rows)
        total = 0.0
        for first in range(0, len(rows), settings.micro_batch_size):
            chunk = rows[first : first + settings.micro_batch_size]
            share = _targets(chunk) / targets
            loss = _loss(model, chunk, pad, bf16) * share
            loss.backward()
            total += float(loss.detach())
        optimizer.step()
        optimizer.zero_grad()
        losses.append(total)
        if log_every and (len(losses) % log_every == 0 or len(losses) == settings.steps):
            elapsed = time.perf_counter() - start
            print(
                f"warm start {len(losses)}/{settings.steps}: loss {losses[-1]:.3f} "
                f"({elapsed:.0f} s)",
                flush=True,
            )
    model.train(was_training)
    return {"losses": losses, "wall_s": time.perf_counter() - start}
