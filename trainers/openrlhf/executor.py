"""OpenRLHF 0.11.2 agent executor that plays conductor episodes (the body of ``agent.py``).

The contract, as OpenRLHF 0.11.2 defines it
-------------------------------------------
``--train.agent_func_path PATH`` names a ``.py`` file. Each rollout engine (a Ray actor
around vLLM, ``openrlhf.trainer.ray.vllm_engine``) loads it once with
``importlib.util.spec_from_file_location("agent_module", PATH)`` (not put in
``sys.modules``), asserts the module has ``AgentExecutor`` and that it subclasses
``openrlhf.utils.agent.AgentExecutorBase``, and instantiates ``AgentExecutor()`` with no
arguments. For every prompt it then awaits ``n_samples_per_prompt`` calls of
``execute(prompt, label, sampling_params, max_length, hf_tokenizer, llm_engine,
images)`` together (``asyncio.gather`` on the actor's one event loop): a GRPO group of 64
rollouts runs concurrently in one process. ``prompt`` is the dataset's ``input_key``
column after the chat template, ``label`` its ``label_key`` column.

``MultiTurnAgentExecutor(agent_instance_cls)`` implements ``execute`` for environments:
per call it builds ``agent_instance_cls()`` (no arguments), awaits
``reset({"observation": prompt, "label": label})`` (which returns a dict whose
``"observation"`` is the text to generate from), then loops: generate with
``max_tokens = max_length - tokens so far``, await ``step({"observation_text",
"action_text", "label", "sampling_params"})`` and read back ``"rewards"`` (a tensor: it
calls ``.item()``; summed over turns), ``"scores"`` (for dynamic filtering; default the
reward sum), ``"environment_feedback"`` (text appended after the action, tokens masked out
of the loss), ``"done"``, optional ``"sampling_params"`` (replace the next turn's) and
``"extra_logs"`` (the last turn's dict; every value becomes ``torch.tensor([value])`` in
the sample's metrics, so keys must be the same for every sample). There is no way to
drop one sample: group advantages reshape the rewards to ``(-1, n_samples_per_prompt)``.

What this module adds
---------------------
* :class:`ConductorEpisode` (the instance): ``reset`` parses the label
  (:func:`conductor_gym.training.prepare.parse_label`), checks its task-source
  fingerprint against the env config, resets a fresh env from the process-wide
  :class:`~conductor_gym.training.scoring.Scorer` with the label's group seed and a fresh rollout
  seed, and checks the env's conductor prompt appears verbatim in OpenRLHF's prompt
  (else the prompts file and the env config disagree: ``ValueError``). ``step`` awaits
  ``env.astep(action)``; while the episode goes on (recursion) the feedback is the
  recursive prompt as a new user turn (the config's ``chat`` format), ``""`` when done.
* :class:`AgentExecutor` builds the shared Scorer at construction (engine start-up fails
  fast on a bad config) and wraps the engine so each turn is capped at the run's
  ``--rollout.max_new_tokens`` (``MultiTurnAgentExecutor`` otherwise lets a turn run to
  ``--data.max_len``; the paper caps a completion at 1024 tokens).
* Process-wide sharing (:func:`shared_env`): one config (``CONDUCTOR_GYM_TRAIN_CONFIG``),
  one Scorer, so the pool's clients, rate limits and response cache serve every episode.

Rewards, scores and logs
------------------------
``rewards``: the env's reward (paper: 1 / 0.5 / 0; 0 on continuing turns). ``scores``:
1.0 correct, 0.0 otherwise, and ``-inf`` for an **infrastructure-truncated** episode (a
worker or grader failed after retries, or a budget ran out: the env's ``truncated``).
Such an episode's reward is 0.0 (OpenRLHF cannot drop a single sample); the ``-inf``
score puts its group's mean score outside every ``--algo.dynamic_filtering_range``, so
with ``--algo.dynamic_filtering_enable`` OpenRLHF drops the whole group and draws a
replacement prompt: the failure never becomes a learning signal. Without dynamic
filtering ``scores`` are unused and the failure counts as reward 0 (see
``env_truncated``). ``extra_logs`` (floats, every turn, the same keys:
:data:`LOG_KEYS`): ``correct``, ``parse_failure`` (invalid plan), ``env_truncated``
(named so it does not shadow OpenRLHF's own ``truncated``, the length cut-off),
``steps`` (plan steps over all rounds), ``rounds``, ``worker_calls``, ``cost_usd``,
``prompt_truncated`` (OpenRLHF cut the prompt's start to fit ``--data.max_len``),
``context_exhausted`` (a multi-turn episode stopped because ``--data.max_len`` left no
room for the next turn: reward 0, the env closed unfinished).

Imports torch and OpenRLHF; ``import conductor_gym`` never imports this module.
"""

from __future__ import annotations

import contextvars
import copy
import importlib
from dataclasses import dataclass
from typing import Any

from openrlhf.utils.agent import (  # type: ignore[import-untyped, import-not-found, unused-ignore]
    AgentInstanceBase,
    MultiTurnAgentExecutor,
)

from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.info import StepInfo
from conductor_gym.core.reward import Outcome
from conductor_gym.errors import ConfigurationError
from conductor_gym.training.prepare import SharedEnv, shared_env

__all__ = [
    "LOG_KEYS",
    "TRUNCATED_SCORE",
    "AgentExecutor",
    "ConductorEpisode",
    "SharedEnv",
    "shared_env",
]

torch: Any = importlib.import_module("torch")

LOG_KEYS = (
    "correct",
    "parse_failure",
    "env_truncated",
    "steps",
    "rounds",
    "worker_calls",
    "cost_usd",
    "prompt_truncated",
    "context_exhausted",
)
"""The ``extra_logs`` keys of every rollout, in order."""

TRUNCATED_SCORE = float("-inf")
"""``scores`` of an infrastructure-truncated episode: outside any filtering range."""


@dataclass
class _Turn:
    """Per-``execute`` state shared by the engine wrapper and the episode (via a
    context variable: each ``execute`` runs as its own asyncio task)."""

    tokenizer: Any
    last_token_text: str | None = None
    episode: ConductorEpisode | None = None


_TURN: contextvars.ContextVar[_Turn | None] = contextvars.ContextVar(
    "conductor_gym_openrlhf_turn", default=None
)


class _TurnCappedEngine:
    """The rollout engine as ``MultiTurnAgentExecutor`` calls it, with each turn capped
    at ``cap`` new tokens and the text of each turn's last token recorded (vLLM keeps a
    stop token in ``token_ids`` but not in ``text``)."""

    def __init__(self, engine: Any, cap: int | None, turn: _Turn) -> None:
        self._engine = engine
        self._cap = cap
        self._turn = turn

    async def generate(self, prompt_token_ids: Any, sampling_params: Any, **kwargs: Any) -> Any:
        if self._cap is not None and (
            sampling_params.max_tokens is None or sampling_params.max_tokens > self._cap
        ):
            sampling_params.max_tokens = self._cap  # the caller passes a private copy
        output = await self._engine.generate(prompt_token_ids, sampling_params, **kwargs)
        token_ids = list(output.outputs[0].token_ids)
        self._turn.last_token_text = (
            self._turn.tokenizer.decode(token_ids[-1:], skip_special_tokens=False)
            if token_ids
            else ""
        )
        return output

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


class ConductorEpisode(AgentInstanceBase):  # type: ignore[misc]
    """One conductor episode (one rollout), on a fresh env of the shared Scorer."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.shared = shared_env()
        self.env: ConductorEnv | None = None
        self.prompt_core = ""
        self.prompt_truncated = False
        self.turns = 0
        self.last_info: StepInfo | None = None

    async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Reset to the label's episode; the observation stays OpenRLHF's prompt."""
        prompt = states["observation"]
        label = states["label"]
        ref = self.shared.config.check_label(label)
        scorer = self.shared.scorer
        env = scorer.make_env()
        observation, _ = scorer.reset(env, ref, scorer.draw_rollout_seeds(1)[0])
        core = observation.strip()
        if core not in prompt:
            env.close()
            raise ConfigurationError(
                f"label {label!r}: the prompt is not this env's conductor prompt (pool, "
                "k, max_steps or templates differ between the prompts file and the env "
                f"config {self.shared.path}); rerun `conductor-gym train prepare`"
            )
        self.env, self.prompt_core, self.turns = env, core, 0
        turn = _TURN.get()
        if turn is not None:
            turn.episode = self
        return {"observation": prompt}

    async def step(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        """Play the completion; see the module docstring for the returned keys."""
        env = self.env
        if env is None:
            raise RuntimeError("step() before reset() or after the episode ended")
        action = str(states["action_text"])
        if self.turns == 0:
            self.prompt_truncated = self.prompt_core not in str(
                states.get("observation_text", self.prompt_core)
            )
        self.turns += 1
        turn_end = self.shared.config.chat["turn_end"]
        plan_text = action.rstrip()
        if turn_end and plan_text.endswith(turn_end):
            plan_text = plan_text[: -len(turn_end)]
        observation, reward, terminated, truncated, info = await env.astep(plan_text)
        self.last_info = info
        done = bool(terminated or truncated)
        score = 0.0
        if done:
            env.close()
            self.env = None
            score = TRUNCATED_SCORE if truncated else float(info["outcome"] == Outcome.CORRECT)
        return {
            "rewards": torch.tensor(float(reward)),
            "scores": torch.tensor(score),
            "environment_feedback": "" if done else self._feedback(observation, action),
            "done": done,
            "extra_logs": self.logs(info, truncated=bool(truncated)),
        }

    def _feedback(self, observation: str, action: str) -> str:
        chat = self.shared.config.chat
        turn_end = chat["turn_end"]
        turn = _TURN.get()
        closed = action.rstrip().endswith(turn_end) or (
            turn is not None and turn.last_token_text == turn_end
        )
        prefix = "" if not turn_end or closed else turn_end
        return prefix + chat["feedback"].replace("{observation}", observation)

    def logs(
        self, info: StepInfo | None, *, truncated: bool = False, exhausted: bool = False
    ) -> dict[str, float]:
        """The ``extra_logs`` of this episode given the env's latest ``info`` (``None``:
        no step was played)."""
        rounds = info["rounds"] if info is not None else ()
        outcome = info["outcome"] if info is not None else None
        logs = {
            "correct": float(outcome == Outcome.CORRECT),
            "parse_failure": float(outcome == Outcome.INVALID),
            "env_truncated": float(truncated),
            "steps": float(sum(len(r.plan) for r in rounds if r.plan is not None)),
            "rounds": float(len(rounds)),
            "worker_calls": float(info["worker_calls"] if info is not None else 0),
            "cost_usd": float(info["cost_usd"] if info is not None else 0.0),
            "prompt_truncated": float(self.prompt_truncated),
            "context_exhausted": float(exhausted),
        }
        assert tuple(logs) == LOG_KEYS
        return logs

    def abandon(self) -> dict[str, float]:
        """End an episode the executor stopped early (no tokens left under
        ``--data.max_len`` for the next turn): close the env; the logs say so."""
        if self.env is not None:
            self.env.close()
            self.env = None
        return self.logs(self.last_info, exhausted=True)


class AgentExecutor(MultiTurnAgentExecutor):  # type: ignore[misc]
    """What OpenRLHF instantiates (no arguments): :class:`ConductorEpisode` per rollout,
    turns capped at ``--rollout.max_new_tokens``."""

    def __init__(self) -> None:
        self.shared = shared_env()  # fail at engine start-up on a bad config or data
        super().__init__(ConductorEpisode)

    async def execute(
        self,
        prompt: str,
        label: str,
        sampling_params: Any,
        max_length: int,
        hf_tokenizer: Any,
        llm_engine: Any,
        images: Any = None,
    ) -> dict[str, Any]:
        # A private copy: the n concurrent calls of a group share one object, and the
        # base class rewrites its max_tokens every turn.
        params = copy.deepcopy(sampling_params)
        turn = _Turn(hf_tokenizer)
        engine = _TurnCappedEngine(llm_engine, getattr(params, "max_tokens", None), turn)
        token = _TURN.set(turn)
        try:
            result: dict[str, Any] = await super().execute(
                prompt, label, params, max_length, hf_tokenizer, engine, images
            )
        finally:
            _TURN.reset(token)
        episode = turn.episode
        if episode is not None and episode.env is not None:
            # The base class ran out of context before the episode ended: reward 0 so
            # far (continuing turns earn 0), flagged; the same log keys as any sample.
            result["extra_logs"] = episode.abandon()
        return result
