"""verl's custom reward function for the single-turn path: the env's reward of a plan.

verl 0.9.1 loads ``reward.custom_reward_function.path`` / ``.name`` (this file,
``compute_score``) with ``verl.trainer.ppo.reward.get_custom_reward_fn``, and its reward
manager (``naive`` by default) awaits it once per rollout, a coroutine function being
awaited on the manager's loop, as ``compute_score(data_source=, solution_str=,
ground_truth=, extra_info=)``. A dict result gives ``score`` as the reward and its other
keys as ``reward_extra_info`` columns.

:func:`compute_score` plays ``solution_str`` (the decoded rollout) as one single-turn
episode of the env configured by ``$CONDUCTOR_GYM_TRAIN_CONFIG``, on the episode that
``extra_info["label"]`` names (group seed shared by the rollouts of a prompt, a fresh
rollout seed each). Use it with verl's own ``single_turn_agent`` loop; for recursion, or
to keep infrastructure failures out of the loss, use the ``conductor_gym`` agent loop
(:mod:`.agent_loop`): a reward function can only report a failure (``env_truncated`` 1,
score 0), not withdraw the sample.
"""

from __future__ import annotations

from typing import Any

# verl loads this file by path (custom_reward_function.path): an absolute import of the
# installed package, which mypy (checking the folder as ``trainers.*``) cannot follow.
from conductor_gym.training.prepare import shared_env

__all__ = ["compute_score"]


async def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, float | int]:
    """The env's reward of ``solution_str`` (module docstring), with ``correct``,
    ``parse_failure``, ``env_truncated``, ``steps``, ``cost_usd`` and the episode's
    ``rollout_seed`` (which, with the label, replays it)."""
    if not extra_info or "label" not in extra_info:
        raise KeyError("extra_info has no 'label': prepare the data with conductor-gym")
    shared = shared_env()
    ref = shared.config.check_label(str(extra_info["label"]))
    (seed,) = shared.scorer.draw_rollout_seeds(1)
    (result,) = await shared.scorer.ascore([ref], [solution_str], rollout_seeds=[seed])
    return {
        "score": 0.0 if result.truncated else result.reward,
        "correct": result.correct,
        "parse_failure": float(result.parse_failed),
        "env_truncated": float(result.truncated),
        "steps": float(result.steps),
        "cost_usd": float(result.info.get("cost_usd", 0.0)),
        "rollout_seed": seed,
    }
