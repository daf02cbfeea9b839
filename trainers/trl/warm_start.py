"""The format prior: a short supervised warm start that teaches a small policy the plan
syntax, and nothing about which plan is good.

The paper trains Qwen2.5-7B, which already writes the three Python lists when its prompt
asks for them. SmolLM2-135M does not: on our conductor chat its greedy plans parse 0 % of
the time, so GRPO has no signal to start from. Before GRPO, the ``cpu-orchestrate`` recipe
therefore fine-tunes it for a few steps on **uniformly random plans** (:func:`random_plan`),
the way a larger model's instruction tuning gives it the format for free:

* length uniform in ``1 .. max_steps``; every worker uniform among the episode's
  ``Model 0 .. Model n-1``;
* step 1's subtask is the question, copied verbatim (the env shows later steps only the
  subtasks and answers of the steps they access, so a plan that copies the question once
  lets every later step see the problem);
* every later step's subtask is one of :data:`LATER_SUBTASKS` (solve what is shown, check
  the answers shown, take the majority answer), uniform; its access is drawn from
  ``later_access``, by default always ``"all"``. A later step with access ``[]`` sees
  nothing of the question (only its own fixed subtask), so it can never help; with
  ``[]`` in the draw, half the multi-step plans carry such a step, their mean reward
  falls below one-step plans' (0.63 against 0.78 for two steps, on 3,000 training
  episodes), and GRPO learns "one step" before it can learn which multi-step plan pays
  (measured: a run with ``[]`` in the draw wrote one-step plans only by step 20).

The draw never looks at the task's answer, the workers' skills or any reward: it is a
uniform prior over a small vocabulary of plans, good and bad alike (on the held-out
offline tasks it scores below the best single worker; see ``docs/training-cpu.md``).
Which workers to ask, how many steps, which roles and which access lists pay off is left
to GRPO.

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

from conductor_gym.core.chat_prompt import ChatPrompt
from conductor_gym.plan import Access, Plan

__all__ = ["LATER_SUBTASKS", "WarmStart", "random_plan", "warm_start"]

LATER_SUBTASKS: tuple[str, ...] = (
    "Solve the problem above and end with the final answer.",
    "Check the answers above and give the correct one as your final answer.",
    "Give the answer that most of the answers above agree on.",
)
"""The subtasks a later step of a random plan draws from (solve, check, vote)."""


def random_plan(
    rng: random.Random,
    question: str,
    num_workers: int,
    max_steps: int = 3,
    later_access: Sequence[Access] = ("all",),
) -> Plan:
    """A uniformly random plan of the format prior (module docstring)."""
    steps = rng.randint(1, max_steps)
    model_ids = tuple(rng.randrange(num_workers) for _ in range(steps))
    subtasks = (question, *(rng.choice(LATER_SUBTASKS) for _ in range(steps - 1)))
    access: tuple[Access, ...] = ((), *(rng.choice(later_access) for _ in range(steps - 1)))
    return Plan(model_ids=model_ids, subtasks=subtasks, access=access)


@dataclass(frozen=True)
class WarmStart:
    """Settings of the warm start: ``steps`` optimizer steps of ``batch_size`` random
    plans each, at ``learning_rate``, plans of at most ``max_steps`` steps whose later
    steps draw their access from ``later_access``."""

    steps: int = 64
    batch_size: int = 8
    learning_rate: float = 1e-4
    max_steps: int = 3
    later_access: tuple[Access, ...] = ("all",)
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "max_steps"):
            if getattr(self, name) < (0 if name == "steps" else 1):
                raise ValueError(f"WarmStart.{name} must be positive, got {getattr(self, name)}")
        if not self.later_access:
            raise ValueError("WarmStart.later_access must hold at least one access list")
        if self.learning_rate <= 0:
            raise ValueError(f"WarmStart.learning_rate must be > 0, got {self.learning_rate}")


def _example(
    tokenizer: Any, prompt: ChatPrompt, question: str, plan: Plan, num_workers: int
) -> tuple[list[int], list[int]]:
    """Token ids of the chat plus its plan, and labels with the prompt masked (-100)."""
    text = tokenizer.apply_chat_template(
        prompt.messages(question, num_workers), tokenize=False, add_generation_prompt=True
    )
    prompt_ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    plan_ids = tokenizer(plan.to_text() + tokenizer.eos_token, add_special_tokens=False)[
        "input_ids"
    ]
    return prompt_ids + plan_ids, [-100] * len(prompt_ids) + plan_ids


def warm_start(
    model: Any,
    tokenizer: Any,
    prompt: ChatPrompt,
    questions: Sequence[str],
    num_workers: int,
    settings: WarmStart,
    *,
    bf16: bool = False,
    log_every: int = 8,
) -> dict[str, Any]:
    """Fine-tune ``model``'s trainable parameters on random plans for ``questions``
    (training tasks only), printing the loss every ``log_every`` steps (0: never).
    Returns ``{"losses": [...], "wall_s": ...}``."""
    import torch

    if not questions:
        raise ValueError("warm_start needs at least one training question")
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
            question = questions[rng.randrange(len(questions))]
            plan = random_plan(
                rng, question, num_workers, settings.max_steps, settings.later_access
            )
            rows.append(_example(tokenizer, prompt, question, plan, num_workers))
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
            loss = model(input_ids=input_ids, attention_mask=mask, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(float(loss.detach()))
        if log_every and (len(losses) % log_every == 0 or len(losses) == settings.steps):
            elapsed = time.perf_counter() - start
            print(
                f"warm start {len(losses)}/{settings.steps}: loss {losses[-1]:.3f} "
                f"({elapsed:.0f} s)",
                flush=True,
            )
    model.train(was_training)
    return {"losses": losses, "wall_s": time.perf_counter() - start}
