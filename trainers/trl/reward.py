"""TRL reward functions backed by the env (single-turn) and by a rollout's episodes.

TRL 1.16's contract (``GRPOTrainer._calculate_rewards``): a custom reward function is
called once per generation batch as
``func(prompts=..., completions=..., completion_ids=..., **columns, trainer_state=...,
log_extra=..., log_metric=...)`` where ``columns`` are the dataset's other columns
(here ``label``), one value per completion, and returns one float per completion (or
``None``: that completion is left out of its group's baseline and gets advantage 0).
Completions are strings for a standard dataset and ``[{"role": "assistant", "content":
...}]`` for a conversational one. A function whose ``__call__`` is ``async`` is detected
(``trl.trainer.utils.is_async_callable``) and awaited on the trainer's daemon event loop,
concurrently with the other async reward functions; ``log_metric(name, value)`` adds a
scalar to the step's logs (averaged per logging step), ``log_extra(column, values)`` a
column to the completions table. The reward is logged as ``rewards/<name>/mean``, with
``name`` taken from the function's ``__name__``.

:class:`ConductorReward` (``__name__`` ``"conductor"``) plays one episode per completion
with :meth:`conductor_gym.training.scoring.Scorer.ascore`: the label gives the task and the group
seed (shared by the group, so by its worker draw), and every completion gets a fresh
rollout seed. An episode ``truncated`` by an infrastructure failure or a spent budget
returns ``None``: it is not a score and must not be trained on. It logs
``conductor/accuracy``, ``conductor/parse_failure_rate``, ``conductor/truncated_rate``,
``conductor/steps_per_plan`` (valid plans), ``conductor/worker_calls`` and
``conductor/cost_usd`` (per episode).

:func:`rollout_reward` is the reward function of the ``rollout_func`` path
(:mod:`conductor_gym.trainers.trl.rollout`): the episodes already ran there, and their rewards and
statistics arrive as the rollout's extra fields.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from conductor_gym.core.reward import Outcome
from conductor_gym.training.scoring import ScoredCompletion, Scorer

from .data import prompt_text

__all__ = ["ConductorReward", "completion_text", "episode_metrics", "rollout_reward"]

MetricLogger = Callable[[str, float], None]


def completion_text(completion: str | Sequence[Any]) -> str:
    """The conductor's text: the string itself, or the concatenated assistant messages of
    a conversational completion."""
    if isinstance(completion, str):
        return completion
    return "".join(
        prompt_text(m.get("content", ""))
        for m in completion
        if isinstance(m, dict) and m.get("role", "assistant") == "assistant"
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def episode_metrics(
    outcomes: Sequence[str],
    steps: Sequence[int],
    worker_calls: Sequence[float],
    costs: Sequence[float],
) -> dict[str, float]:
    """Batch statistics of finished episodes (``steps`` counts the steps of each valid
    plan; 0 for an invalid one)."""
    n = len(outcomes)
    valid_steps = [
        float(s)
        for s, o in zip(steps, outcomes, strict=True)
        if o in (Outcome.CORRECT, Outcome.WRONG)
    ]
    return {
        "conductor/accuracy": _mean([float(o is Outcome.CORRECT) for o in outcomes]),
        "conductor/parse_failure_rate": _mean([float(o is Outcome.INVALID) for o in outcomes]),
        "conductor/truncated_rate": _mean([float(o is Outcome.ERROR) for o in outcomes]),
        "conductor/steps_per_plan": _mean(valid_steps),
        "conductor/worker_calls": _mean([float(c) for c in worker_calls]),
        "conductor/cost_usd": _mean([float(c) for c in costs]),
        "conductor/episodes": float(n),
    }


def _log(log_metric: MetricLogger | None, metrics: dict[str, float]) -> None:
    if log_metric is not None:
        for name, value in metrics.items():
            log_metric(name, value)


class ConductorReward:
    """Async TRL reward function: scores each completion on the env via ``scorer``.

    Args:
        scorer: The run's :class:`~conductor_gym.training.scoring.Scorer` (single-turn:
            ``max_recursions=0``), shared by every call (its pool, clients, cache).
        label_column: The dataset column holding ``EpisodeRef.to_label()``.

    ``episodes`` counts the episodes played so far, ``last`` holds the last batch's
    :class:`~conductor_gym.training.scoring.ScoredCompletion` results and ``history`` every batch's
    returned rewards, in order (for tests and debugging).
    """

    __name__ = "conductor"

    def __init__(self, scorer: Scorer, *, label_column: str = "label") -> None:
        self.scorer = scorer
        self.label_column = label_column
        self.episodes = 0
        self.last: list[ScoredCompletion] = []
        self.history: list[list[float | None]] = []

    async def __call__(
        self,
        prompts: Sequence[Any],
        completions: Sequence[Any],
        log_metric: MetricLogger | None = None,
        log_extra: Callable[[str, list[Any]], None] | None = None,
        **columns: Any,
    ) -> list[float | None]:
        if self.label_column not in columns:
            raise KeyError(
                f"the dataset has no {self.label_column!r} column (EpisodeRef.to_label()): "
                f"columns passed were {sorted(columns)}"
            )
        labels = list(columns[self.label_column])
        texts = [completion_text(c) for c in completions]
        results = await self.scorer.ascore(labels, texts)
        self.episodes += len(results)
        self.last = results
        _log(
            log_metric,
            episode_metrics(
                [r.outcome for r in results],
                [r.steps for r in results],
                [r.info["worker_calls"] for r in results],
                [r.info["cost_usd"] for r in results],
            ),
        )
        if log_extra is not None:
            log_extra("outcome", [r.outcome for r in results])
        rewards = [None if r.truncated else r.reward for r in results]
        self.history.append(rewards)
        return rewards


def rollout_reward(
    completions: Sequence[Any],
    env_reward: Sequence[float | None],
    log_metric: MetricLogger | None = None,
    env_outcome: Sequence[str] = (),
    env_steps: Sequence[int] = (),
    env_worker_calls: Sequence[float] = (),
    env_cost_usd: Sequence[float] = (),
    log_extra: Callable[[str, list[Any]], None] | None = None,
    **_: Any,
) -> list[float | None]:
    """The episode rewards a ``rollout_func`` computed (``None`` for truncated
    episodes), with the same metrics as :class:`ConductorReward`."""
    if env_outcome:
        _log(
            log_metric,
            episode_metrics(env_outcome, env_steps, env_worker_calls, env_cost_usd),
        )
        if log_extra is not None:
            log_extra("outcome", list(env_outcome))
    return list(env_reward)


rollout_reward.__name__ = "conductor"
