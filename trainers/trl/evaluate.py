"""Greedy evaluation of a policy on held-out episodes (before and after training).

The policy writes one plan per evaluation task with greedy decoding; each plan is then
played ``repeats`` times on the env with fixed rollout seeds (the workers' randomness),
so two evaluations of the same tasks (before and after training) face exactly the same
worker draws and the comparison is paired. The standard error is over tasks (the
``repeats`` episodes of a task are averaged first, as they share one plan).

:func:`agent_eval` plays a library agent (``single:<id>``, ``best-single``, ...) on the
same episodes with the same rollout seeds, so a policy is compared with the baselines
paired as well (:func:`paired_difference`).
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from conductor_gym.core.reward import Outcome
from conductor_gym.plan import Plan
from conductor_gym.training.scoring import EpisodeRef, ScoredCompletion, Scorer

__all__ = [
    "EvalResult",
    "agent_eval",
    "greedy_completions",
    "greedy_eval",
    "paired_change",
    "paired_difference",
    "score_plans",
    "standard_error",
    "versus_best_single",
]


@dataclass
class EvalResult:
    """Scores of one greedy evaluation; ``task_rewards[i]`` is task ``i``'s mean reward."""

    task_rewards: list[float]
    task_accuracy: list[float]
    valid_rate: float
    first_worker: dict[str, int]
    wall_s: float
    completions: list[str] = field(repr=False)
    families: list[str] = field(default_factory=list, repr=False)
    questions: list[str] = field(default_factory=list, repr=False)
    plans: list[Plan | None] = field(default_factory=list, repr=False)
    pools: list[tuple[str, ...]] = field(default_factory=list, repr=False)
    """Each task's worker names (``Model i`` is ``pools[task][i]``)."""
    per_question: dict[str, float] = field(default_factory=dict)
    """Means over every episode: ``steps`` (valid plans; 0 for an invalid one),
    ``worker_calls``, ``tokens`` (workers' prompt + completion) and ``cost_usd``."""

    @property
    def mean(self) -> float:
        return float(np.mean(self.task_rewards))

    @property
    def se(self) -> float:
        return standard_error(self.task_rewards)

    @property
    def accuracy(self) -> float:
        return float(np.mean(self.task_accuracy))

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean_reward": self.mean,
            "se": self.se,
            "accuracy": self.accuracy,
            "accuracy_se": standard_error(self.task_accuracy),
            "valid_rate": self.valid_rate,
            "tasks": len(self.task_rewards),
            **self.per_question,
            "first_worker": self.first_worker,
            "wall_s": self.wall_s,
            "sample_completions": self.completions[:3],
        }


def standard_error(values: Sequence[float]) -> float:
    """The standard error of the mean of ``values`` (0.0 for fewer than two)."""
    return float(np.std(values, ddof=1) / math.sqrt(len(values))) if len(values) > 1 else 0.0


def paired_difference(
    before: EvalResult, after: EvalResult, *, metric: str = "reward"
) -> tuple[float, float]:
    """Mean and standard error of the per-task change of ``metric`` (``"reward"`` or
    ``"accuracy"``) from ``before`` to ``after`` (the same tasks, in the same order)."""
    if metric not in ("reward", "accuracy"):
        raise ValueError(f"metric must be 'reward' or 'accuracy', got {metric!r}")
    name = "task_rewards" if metric == "reward" else "task_accuracy"
    return paired_change(getattr(before, name), getattr(after, name))


def paired_change(before: Sequence[float], after: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of ``after[i] - before[i]`` (per-task values, paired)."""
    diff = [a - b for a, b in zip(after, before, strict=True)]
    return float(np.mean(diff)), standard_error(diff)


def versus_best_single(
    baselines: Mapping[str, EvalResult], policy: EvalResult
) -> tuple[str, float, float] | None:
    """The ``single:<id>`` of ``baselines`` with the highest accuracy (the first of a tie),
    and the paired accuracy difference ``policy`` minus it with its standard error;
    ``None`` when no baseline is a single worker."""
    singles = [spec for spec in baselines if spec.startswith("single:")]
    if not singles:
        return None
    best = max(singles, key=lambda spec: baselines[spec].accuracy)
    return (best, *paired_difference(baselines[best], policy, metric="accuracy"))


def greedy_completions(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Any],
    *,
    max_new_tokens: int,
    batch_size: int = 16,
    bf16: bool = False,
) -> list[str]:
    """Greedy completions for conversational (chat template) or plain prompts; ``bf16``
    runs them under bfloat16 autocast, as the trainer's forward passes with ``bf16=True``."""
    import contextlib

    import torch

    texts = [
        p
        if isinstance(p, str)
        else tokenizer.apply_chat_template(list(p), tokenize=False, add_generation_prompt=True)
        for p in prompts
    ]
    was_training = model.training
    model.eval()
    out: list[str] = []
    try:
        for start in range(0, len(texts), batch_size):
            chunk = texts[start : start + batch_size]
            encoded = tokenizer(
                chunk,
                return_tensors="pt",
                padding=True,
                add_special_tokens=isinstance(prompts[0], str),
            ).to(model.device)
            autocast = (
                torch.autocast(model.device.type, dtype=torch.bfloat16)
                if bf16
                else contextlib.nullcontext()
            )
            with torch.no_grad(), autocast:
                generated = model.generate(
                    **encoded,
                    max_new_tokens=max_new_tokens,
                    do_sample=False,
                    pad_token_id=tokenizer.pad_token_id,
                )
            width = encoded["input_ids"].shape[1]
            out += tokenizer.batch_decode(generated[:, width:], skip_special_tokens=True)
    finally:
        model.train(was_training)
    return out


def greedy_eval(
    model: Any,
    tokenizer: Any,
    scorer: Scorer,
    refs: Sequence[EpisodeRef],
    prompts: Sequence[Any],
    *,
    repeats: int = 4,
    seed: int = 12345,
    max_new_tokens: int = 48,
    batch_size: int = 16,
    bf16: bool = False,
) -> EvalResult:
    """Evaluate greedy plans on ``refs`` (whose prompts are ``prompts``), each played with
    ``repeats`` rollout seeds drawn from ``seed``. ``scorer`` must be single-turn."""
    start = time.perf_counter()
    completions = greedy_completions(
        model, tokenizer, prompts, max_new_tokens=max_new_tokens, batch_size=batch_size, bf16=bf16
    )
    return score_plans(scorer, refs, completions, repeats=repeats, seed=seed, start=start)


def score_plans(
    scorer: Scorer,
    refs: Sequence[EpisodeRef],
    completions: Sequence[str],
    *,
    repeats: int = 4,
    seed: int = 12345,
    start: float | None = None,
) -> EvalResult:
    """Play ``completions[i]`` on ``refs[i]``'s episode ``repeats`` times, with rollout seeds
    drawn from ``seed`` (the same seeds for every caller with the same ``refs``)."""
    start = time.perf_counter() if start is None else start
    seeds = [int(s) for s in np.random.default_rng(seed).integers(0, 2**62, len(refs) * repeats)]
    results = scorer.score(
        [r for r in refs for _ in range(repeats)],
        [c for c in completions for _ in range(repeats)],
        rollout_seeds=seeds,
    )
    rewards = np.array([r.reward for r in results]).reshape(len(refs), repeats)
    correct = np.array([r.correct for r in results]).reshape(len(refs), repeats)
    workers: Counter[str] = Counter()
    for result in results[::repeats]:
        plan = result.info["plan"]
        workers[f"Model {plan.model_ids[0]}" if plan else "invalid"] += 1
    return EvalResult(
        task_rewards=[float(x) for x in rewards.mean(axis=1)],
        task_accuracy=[float(x) for x in correct.mean(axis=1)],
        valid_rate=float(np.mean([r.outcome is not Outcome.INVALID for r in results])),
        first_worker=dict(workers),
        wall_s=time.perf_counter() - start,
        completions=list(completions),
        families=[r.info["domain"] for r in results[::repeats]],
        questions=[r.info["question"] for r in results[::repeats]],
        plans=[r.info["plan"] for r in results[::repeats]],
        pools=[tuple(r.info["pool"]) for r in results[::repeats]],
        per_question=_per_question(results),
    )


def _per_question(results: Sequence[ScoredCompletion]) -> dict[str, float]:
    return {
        "steps": float(np.mean([r.steps for r in results])),
        "worker_calls": float(np.mean([r.info["worker_calls"] for r in results])),
        "tokens": float(
            np.mean([r.info["prompt_tokens"] + r.info["completion_tokens"] for r in results])
        ),
        "cost_usd": float(np.mean([r.info["cost_usd"] for r in results])),
    }


def agent_eval(
    scorer: Scorer,
    refs: Sequence[EpisodeRef],
    agent: str,
    *,
    repeats: int = 4,
    seed: int = 12345,
) -> EvalResult:
    """Play the library agent ``agent`` (a spec such as ``single:2``) on ``refs``, with
    the rollout seeds :func:`greedy_eval` uses for the same ``refs``, ``repeats`` and
    ``seed``. Its plan is written from each episode's reset (a fixed-plan agent writes
    the same plan for every repeat); an agent with a ``reseed`` method (the random
    planner) is reseeded with each episode's group seed first, so its plans, and the
    figures made of them, are the same on every call."""
    from conductor_gym.core.agent_spec import make_agent

    start = time.perf_counter()
    conductor = make_agent(agent)
    reseed = getattr(conductor, "reseed", None)  # BaseAgent's; the Agent protocol lacks it
    env = scorer.make_env()
    completions = []
    try:
        for ref in refs:
            observation, info = scorer.reset(env, ref)
            if reseed is not None:
                reseed(ref.group_seed)
            completions.append(conductor.act(observation, info))
    finally:
        env.close()
    return score_plans(scorer, refs, completions, repeats=repeats, seed=seed, start=start)
