"""``ConductorVectorEnv``: many conductor episodes stepped concurrently on one event loop.

Worker calls are I/O-bound, so sub-episodes are coroutines on one asyncio loop rather
than processes: ``step`` runs every sub-episode's plan at once, at most
``max_concurrency`` at a time, sharing one task source and one worker pool (so one
client per backend). Sub-env ``i`` is an ordinary :class:`ConductorEnv`, so a vector
env reset with ``seed=s`` gives exactly what ``ConductorEnv.reset(seed=s + i)`` and the
same action give.
"""

from __future__ import annotations

import asyncio
import numbers
from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from conductor_gym._loop import LoopRunner
from conductor_gym._validate import as_seed, require_int
from conductor_gym.core.config import EnvConfig
from conductor_gym.core.env import ConductorEnv, StepResult
from conductor_gym.core.self_worker import ConductorPolicy
from conductor_gym.errors import ConfigurationError

__all__ = ["ConductorVectorEnv"]


class ConductorVectorEnv(VectorEnv[tuple[str, ...], tuple[str, ...], np.ndarray]):
    """``num_envs`` conductor episodes batched as a :class:`gymnasium.vector.VectorEnv`.

    Observations and actions are tuples of strings; rewards, terminations and
    truncations are arrays; ``infos`` follow Gymnasium's vector convention (a dict of
    per-key arrays with ``_key`` masks; traces and plans in object arrays).

    Args:
        num_envs: Number of sub-episodes.
        max_concurrency: Most plans executing at once (worker calls are awaited
            concurrently up to this bound).
        autoreset_mode: ``SAME_STEP`` (default: a finished sub-episode is reset within
            the same ``step``; its last observation and info are in
            ``infos["final_obs"]`` and ``infos["final_info"]``), ``NEXT_STEP``
            (Gymnasium's default: reset on the following ``step``, ignoring that action)
            or ``DISABLED`` (reset finished sub-episodes yourself with
            ``reset(options={"reset_mask": mask})``).
        config: The sub-envs' :class:`~conductor_gym.core.config.EnvConfig` (default: all
            defaults); ``settings`` (its fields as keywords: ``tasks``, ``pool``, ``k``,
            ``cache``, ...) override it. The task source and the pool are built once and
            shared by every sub-env.
        conductor: The policy offered to each sub-env as a worker (recursion).
    """

    metadata: dict[str, Any] = {  # noqa: RUF012 (Gymnasium's API)
        "autoreset_mode": AutoresetMode.SAME_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int,
        config: EnvConfig | None = None,
        *,
        max_concurrency: int = 256,
        autoreset_mode: AutoresetMode | str = AutoresetMode.SAME_STEP,
        conductor: ConductorPolicy | None = None,
        **settings: Any,
    ) -> None:
        require_int("num_envs", num_envs)
        require_int("max_concurrency", max_concurrency)
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ConfigurationError(
                f"autoreset_mode: unknown mode {autoreset_mode!r}; choose one of "
                f"{[m.value for m in AutoresetMode]}"
            ) from None
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        base = config or EnvConfig()
        self.config = base.replace(**settings) if settings else base
        # Build the shared parts once so every sub-env uses the same clients.
        shared = self.config.shared()
        self.envs = [ConductorEnv(shared, conductor=conductor) for _ in range(num_envs)]
        self.num_envs = num_envs
        self.max_concurrency = max_concurrency
        self.single_observation_space = self.envs[0].observation_space
        self.single_action_space = self.envs[0].action_space
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        self._observations: list[str] = [""] * num_envs
        self._needs_reset = np.zeros(num_envs, dtype=np.bool_)
        self._started = np.zeros(num_envs, dtype=np.bool_)
        self._runner = LoopRunner()

    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        """Reset every sub-env (or those in ``options["reset_mask"]``).

        ``seed`` is ``None``, an integer ``s`` >= 0 (sub-env ``i`` gets ``s + i``) or one
        seed (an integer or ``None``) per sub-env, as a sequence or an array; integers
        may be numpy integers. Other ``options`` go to each sub-env's ``reset``.
        """
        seeds = self._seeds(seed)
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if mask is None:
            mask = np.ones(self.num_envs, dtype=np.bool_)
        elif not (
            isinstance(mask, np.ndarray)
            and mask.dtype == np.bool_
            and mask.shape == (self.num_envs,)
        ):
            raise ConfigurationError(
                f"reset: options['reset_mask'] must be a bool array of shape ({self.num_envs},)"
            )
        infos: dict[str, Any] = {}
        for i in np.flatnonzero(mask):
            self._observations[i], info = self.envs[i].reset(seed=seeds[i], options=options or None)
            self._needs_reset[i] = False
            self._started[i] = True
            infos = self._add_info(infos, dict(info), int(i))
        return tuple(self._observations), infos

    def step(
        self, actions: Sequence[str]
    ) -> tuple[tuple[str, ...], np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every sub-env with its action, running all plans concurrently."""
        if len(actions) != self.num_envs:
            raise ValueError(f"step: got {len(actions)} actions for {self.num_envs} sub-envs")
        if not self._started.all():
            never = np.flatnonzero(~self._started).tolist()
            raise gym.error.ResetNeeded(f"call reset() first: sub-envs {never} were never reset")
        if self.autoreset_mode == AutoresetMode.DISABLED and self._needs_reset.any():
            ended = np.flatnonzero(self._needs_reset).tolist()
            raise RuntimeError(
                f"sub-envs {ended} have ended: reset them with "
                "reset(options={'reset_mask': mask}) before stepping"
            )
        results = self._runner.run(self._step_all(actions))
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminations = np.zeros(self.num_envs, dtype=np.bool_)
        truncations = np.zeros(self.num_envs, dtype=np.bool_)
        infos: dict[str, Any] = {}
        for i, result in enumerate(results):
            if result is None:  # NEXT_STEP: this sub-env was reset instead of stepped
                self._observations[i], info = self.envs[i].reset()
                self._needs_reset[i] = False
                infos = self._add_info(infos, dict(info), i)
                continue
            obs, reward, terminated, truncated, info = result
            rewards[i], terminations[i], truncations[i] = reward, terminated, truncated
            done = terminated or truncated
            if done and self.autoreset_mode == AutoresetMode.SAME_STEP:
                new_obs, reset_info = self.envs[i].reset()
                infos = self._add_info(infos, {"final_obs": obs, "final_info": info}, i)
                obs, info = new_obs, reset_info
            elif done:
                self._needs_reset[i] = True
            self._observations[i] = obs
            infos = self._add_info(infos, dict(info), i)
        return tuple(self._observations), rewards, terminations, truncations, infos

    def _seeds(self, seed: object) -> list[int | None]:
        """One seed per sub-env from ``reset``'s ``seed`` (its docstring)."""
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, numbers.Integral):  # a bool is refused by as_seed
            first = as_seed("reset: seed", seed)
            assert first is not None
            return [first + i for i in range(self.num_envs)]
        if isinstance(seed, str | bytes) or not isinstance(seed, Sequence | np.ndarray):
            raise ConfigurationError(
                f"reset: seed must be None, an integer >= 0 or one seed per sub-env, got {seed!r}"
            )
        seeds = [as_seed(f"reset: seed[{i}]", s) for i, s in enumerate(seed)]
        if len(seeds) != self.num_envs:
            raise ConfigurationError(f"reset: got {len(seeds)} seeds for {self.num_envs} sub-envs")
        return seeds

    async def _step_all(self, actions: Sequence[str]) -> list[StepResult | None]:
        semaphore = asyncio.Semaphore(self.max_concurrency)

        async def one(i: int) -> StepResult | None:
            if self._needs_reset[i]:  # NEXT_STEP: reset instead of stepping (in step())
                return None
            async with semaphore:
                return await self.envs[i].astep(actions[i])

        return list(await asyncio.gather(*(one(i) for i in range(self.num_envs))))

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()
        self._runner.close()
