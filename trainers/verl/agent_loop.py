"""A verl 0.9 agent loop that plays conductor-gym episodes (``agent_name: conductor_gym``).

The contract, as verl 0.9.1 defines it
--------------------------------------
An agent loop subclasses ``verl.experimental.agent_loop.AgentLoopBase`` and is registered
under a name, either by the ``@register(name)`` decorator (importing this module does
it) or by a YAML list of ``{name, _target_}`` entries that
``actor_rollout_ref.rollout.agent.agent_loop_config_path`` names (:data:`AGENT_LOOP_YAML`,
which also imports this module). verl's ``AgentLoopWorker`` picks the loop of each
sample from its ``agent_name`` column, builds it with ``hydra.utils.instantiate`` (the
trainer config, the LLM server client, the tokenizer, ...) and awaits
``run(sampling_params, **sample)``; the sample's columns include ``raw_prompt`` (the
chat messages) and ``extra_info``. The loop generates token ids with
``server_manager.generate(request_id=, prompt_ids=, sampling_params=)`` and returns an
``AgentLoopOutput``: ``prompt_ids``, ``response_ids`` with a ``response_mask`` (1 for
generated tokens, 0 for tokens the environment added), ``reward_score`` (a loop that
sets it skips verl's reward workers), ``num_turns`` and ``extra_fields``, whose
``reward_extra_info`` dict becomes per-sample columns (the same keys for every sample).
The rollouts of one prompt (``rollout.n``, a GRPO group) are the same sample repeated.

What this loop does
-------------------
Each rollout reads the label in ``extra_info["label"]`` (``conductor-gym train prepare``,
converted by :func:`conductor_gym.trainers.verl.data.write_dataset`), checks it against
the env config named by ``$CONDUCTOR_GYM_TRAIN_CONFIG``, and resets a fresh env of the
process's shared :class:`~conductor_gym.training.scoring.Scorer` with the label's **group seed**
(the group shares the task and the worker draw) and a fresh rollout seed. It then
generates the plan, plays it (``env.astep``), and while the episode goes on (recursion)
appends the env's recursive prompt as a user turn (masked out of the loss) and
generates again, until the episode ends or ``rollout.response_length`` is used up
(reward 0, ``context_exhausted``). ``reward_score`` is the env's reward;
``reward_extra_info`` holds :data:`LOG_KEYS`, and :data:`EPISODE_FIELD` what replays the
episode (its rollout seed among it).

Infrastructure failures
-----------------------
An episode the env truncates (a worker or grader failed after retries, a budget ran
out) is not a score. verl offers two ways to keep it out of training, chosen by the
loop's ``on_infrastructure_failure`` (a constructor argument, set in the YAML entry):

* ``"raise"`` (:data:`AGENT_LOOP_YAML`'s setting, for verl 0.9.1's default V1 trainer,
  ``trainer.use_v1=True``): the loop raises :class:`InfrastructureFailure`; the V1
  worker (``verl.trainer.ppo.v1.agent_loop_tq``) marks the rollout's whole group
  ``failure``, and with ``trainer.v1.sampler.sync_refill_failed_groups=True`` its
  replay buffer evicts the group and draws a fresh prompt, as OpenRLHF's dynamic
  filtering does for the OpenRLHF adapter. (Without that flag verl keeps the group and
  pads the missing trajectory; the launch script sets it.) The legacy trainer's worker
  gathers a batch's loops, so a raise there fails the step: use ``"mask"`` with it;
* ``"mask"`` (the constructor's default, for ``trainer.use_v1=False``): the rollout's
  ``response_mask`` is all zeros, so none of its tokens enters the policy loss, its
  reward is 0 and ``env_truncated`` is 1. Its reward still enters its group's GRPO
  mean and std (the legacy trainer has no per-sample drop there): watch
  ``env_truncated``.

Imports verl, torch and Ray; ``import conductor_gym`` never imports this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from uuid import uuid4

from verl.experimental.agent_loop.agent_loop import (
    AgentLoopBase,
    AgentLoopMetrics,
    AgentLoopOutput,
    register,
)

from conductor_gym.core.reward import Outcome
from conductor_gym.errors import ConfigurationError, InfrastructureError
from conductor_gym.training.prepare import shared_env

__all__ = [
    "AGENT_LOOP_NAME",
    "EPISODE_FIELD",
    "LOG_KEYS",
    "ConductorAgentLoop",
    "InfrastructureFailure",
]

AGENT_LOOP_NAME = "conductor_gym"

EPISODE_FIELD = "conductor_episode"
"""The ``extra_fields`` key (a per-sample column) with what reproduces the episode: the
task id, the rollout seed, the workers of the draw, the outcome, error and completions."""

LOG_KEYS = (
    "correct",
    "parse_failure",
    "env_truncated",
    "context_exhausted",
    "steps",
    "rounds",
    "worker_calls",
    "cost_usd",
)
"""The ``reward_extra_info`` keys of every rollout, in order."""

_FAILURE_MODES = ("mask", "raise")


class InfrastructureFailure(InfrastructureError, RuntimeError):
    """A rollout's episode ended on an infrastructure failure (``on_infrastructure_failure
    ="raise"``): verl's V1 trainer marks its group failed."""


@register(AGENT_LOOP_NAME)
class ConductorAgentLoop(AgentLoopBase):
    """Plays one conductor-gym episode per rollout (module docstring)."""

    def __init__(self, *args: Any, on_infrastructure_failure: str = "mask", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if on_infrastructure_failure not in _FAILURE_MODES:
            raise ConfigurationError(
                f"on_infrastructure_failure must be one of {_FAILURE_MODES}, "
                f"got {on_infrastructure_failure!r}"
            )
        self.on_infrastructure_failure = on_infrastructure_failure
        self.response_length = int(self.rollout_config.response_length)
        self.shared = shared_env()

    async def run(self, sampling_params: dict[str, Any], **kwargs: Any) -> AgentLoopOutput:
        messages = list(kwargs["raw_prompt"])
        label = str(kwargs["extra_info"]["label"])
        ref = self.shared.config.check_label(label)
        scorer = self.shared.scorer
        env = scorer.make_env()
        rollout_seed = scorer.draw_rollout_seeds(1)[0]
        observation, info = scorer.reset(env, ref, rollout_seed)
        if observation.strip() not in str(messages[-1]["content"]):
            env.close()
            raise ConfigurationError(
                f"label {label!r}: the prompt is not this env's conductor prompt (the "
                f"dataset and the env config {self.shared.path} disagree); rerun "
                "`conductor-gym train prepare`"
            )
        tokens = await self.ct_build_initial_tokens(messages)
        mask: list[int] = []
        request_id = uuid4().hex
        reward, truncated, done, turns = 0.0, False, False, 1
        try:
            while len(mask) < self.response_length:
                params = {**sampling_params, "max_tokens": self.response_length - len(mask)}
                output = await self.server_manager.generate(
                    request_id=request_id, prompt_ids=tokens, sampling_params=params
                )
                generated = output.token_ids
                merged, mask, _ = await self.ct_merge_assistant_token(tokens, generated, mask)
                tokens, turns = merged.token_ids, turns + 1
                text = self.tokenizer.decode(generated, skip_special_tokens=True)  # type: ignore[attr-defined]  # verl types it AutoTokenizer
                messages.append({"role": "assistant", "content": text})
                observation, reward, terminated, truncated, info = await env.astep(text)
                if terminated or truncated:
                    done = True
                    break
                previous = list(messages)
                messages.append({"role": "user", "content": observation})
                merged, mask, _ = await self.ct_merge_context_msg(previous, messages, tokens, mask)
                tokens, turns = merged.token_ids, turns + 1
        finally:
            env.close()
        if truncated and self.on_infrastructure_failure == "raise":
            raise InfrastructureFailure(f"label {label!r}: {info.get('error')}")
        if truncated or not done:
            reward = 0.0
        if truncated:
            mask = [0] * len(mask)
        split = len(tokens) - len(mask)  # the merges keep the mask aligned with the tail
        return AgentLoopOutput(
            prompt_ids=tokens[:split],
            response_ids=tokens[split:][: self.response_length],
            response_mask=mask[: self.response_length],
            reward_score=float(reward),
            num_turns=turns,
            metrics=AgentLoopMetrics(),
            extra_fields={
                "reward_extra_info": _logs(info, truncated, exhausted=not done),
                EPISODE_FIELD: {
                    "task_id": info["task_id"],
                    "rollout_seed": rollout_seed,
                    "workers": list(info["pool"]),
                    "outcome": info.get("outcome"),
                    "error": info.get("error"),
                    "completions": [m["content"] for m in messages if m["role"] == "assistant"],
                },
            },
        )


def _logs(info: Mapping[str, Any], truncated: bool, *, exhausted: bool) -> dict[str, float]:
    rounds = info.get("rounds") or ()
    outcome = info.get("outcome") if not exhausted else None
    logs = {
        "correct": float(outcome == Outcome.CORRECT),
        "parse_failure": float(outcome == Outcome.INVALID),
        "env_truncated": float(truncated),
        "context_exhausted": float(exhausted),
        "steps": float(sum(len(r.plan) for r in rounds if r.plan is not None)),
        "rounds": float(len(rounds)),
        "worker_calls": float(info.get("worker_calls", 0)),
        "cost_usd": float(info.get("cost_usd", 0.0)),
    }
    assert tuple(logs) == LOG_KEYS
    return logs
