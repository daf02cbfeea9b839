"""``llm:<model>``: a frontier model as the conductor, through LiteLLM.

Paper Table 11 uses GPT-5 and Gemini 2.5 Pro as planners with the *same* conductor
prompt as the trained model. :class:`LLMConductor` sends the observation (the env's
conductor prompt, unchanged) as one user message to any LiteLLM model string
(``openai/gpt-5``, ``gemini/gemini-2.5-pro``, ``anthropic/...``) or to any
OpenAI-compatible server (``openai/<name>`` with ``api_base="http://host:port/v1"``:
vLLM, llama.cpp, ...) and returns the completion text as the action.

Contract:

* calls go through :class:`conductor_gym.workers.litellm.LiteLLMWorker` (LiteLLM is
  imported at the first call, with ``LITELLM_LOCAL_MODEL_COST_MAP`` defaulted to
  ``True``; keys are read from ``api_key_env`` at each call and never stored); its
  classification of failures by LiteLLM exception class decides what is transient;
* transient failures (timeouts, refused connections, rate limits, 5xx, an empty answer)
  are retried under ``retry`` (:class:`conductor_gym.workers.bound.RetryPolicy`, jittered
  exponential backoff); a permanent failure, or a transient one that outlives its
  attempts, raises :class:`~agents.base.AgentError` naming the model and the error. A
  failure is never returned as a completion, so it cannot be scored as a bad plan;
* ``format_retries = r`` resamples up to ``r`` more times when a completion does not
  parse as a plan for the episode (the paper resampled its frontier planners on every
  format failure, without limit); the last completion is returned either way. Each
  resample passes ``seed + i`` when a seed is set; at temperature 0 it only helps where
  the provider is not deterministic;
* every completion is accounted: :attr:`LLMConductor.usage` (prompt and completion
  tokens, cost in USD from LiteLLM's bundled price map or the given prices, calls,
  failed attempts), :attr:`LLMConductor.completions` (one
  :class:`~conductor_gym.workers.base.Completion` per call, in order of arrival) and
  ``last_usage`` (one :class:`~agents._usage.Usage` per observation of the last
  ``act_batch`` call, format resamples included), which ``conductor_gym.bench.evaluate``
  charges to each episode;
* ``act_batch`` runs its calls concurrently (at most ``max_concurrency`` in flight);
  ``act`` runs one call through ``asyncio.run`` (on a helper thread inside a loop).

Defaults: ``temperature=0.0`` (evaluation: the paper does not give its planners'
temperature; greedy decoding gives the most repeatable plans; reasoning models such as
GPT-5 ignore it, as LiteLLM drops it); ``max_tokens=1024``, the trained conductor's
limit (the paper gave frontier planners twice that: pass ``max_tokens=2048`` to match).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import PlanParseError, parse_plan
from conductor_gym.workers.base import Completion, WorkerError
from conductor_gym.workers.bound import RetryPolicy

from ._usage import LoggedConductor, Usage, UsageLog, total_usage
from .base import AgentError, check_batch

if TYPE_CHECKING:
    from conductor_gym.workers.litellm import LiteLLMWorker

__all__ = ["LLMConductor"]


class LLMConductor(LoggedConductor):
    """A LiteLLM model writing plans from the conductor prompt (module docstring).

    Args:
        model: LiteLLM model string (``"openai/gpt-5"``, ``"openai/smollm2"`` with
            ``api_base``, ...).
        api_base: Server URL (an OpenAI-compatible server ends in ``/v1``).
        api_key_env: Name of the environment variable holding the key.
        temperature, max_tokens, seed: Sampling settings of every call.
        retry: Retries of transient failures (default ``RetryPolicy()``: 3 attempts).
        timeout_s: Seconds per call.
        format_retries: Resamples when a completion does not parse (default 0).
        max_concurrency: Calls in flight at once in :meth:`act_batch`.
        params: More LiteLLM call parameters (``reasoning_effort``, ``top_p``, ...).
        price_in_per_mtok, price_out_per_mtok: USD per million tokens, overriding
            LiteLLM's price map (an unpriced model costs 0.0, with one warning).
    """

    def __init__(
        self,
        model: str,
        *,
        api_base: str | None = None,
        api_key_env: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        seed: int | None = None,
        retry: RetryPolicy | None = None,
        timeout_s: float = 600.0,
        format_retries: int = 0,
        max_concurrency: int = 16,
        params: Mapping[str, Any] | None = None,
        price_in_per_mtok: float | None = None,
        price_out_per_mtok: float | None = None,
    ) -> None:
        from conductor_gym.workers.litellm import LiteLLMWorker

        self.name = f"llm:{model}"
        for label, value, low in (
            ("max_tokens", max_tokens, 1),
            ("format_retries", format_retries, 0),
            ("max_concurrency", max_concurrency, 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise ConfigurationError(
                    f"{self.name}: {label} must be an int >= {low}, got {value!r}"
                )
        if isinstance(temperature, bool) or not isinstance(temperature, int | float):
            raise ConfigurationError(f"{self.name}: temperature must be a number >= 0")
        if temperature < 0:
            raise ConfigurationError(f"{self.name}: temperature must be a number >= 0")
        self.worker: LiteLLMWorker = LiteLLMWorker(
            self.name,
            model,
            api_base=api_base,
            api_key_env=api_key_env,
            timeout_s=timeout_s,
            price_in_per_mtok=price_in_per_mtok,
            price_out_per_mtok=price_out_per_mtok,
        )
        self.model = model
        self.temperature = float(temperature)
        self.max_tokens = max_tokens
        self.seed = seed
        self.retry = retry or RetryPolicy()
        self.format_retries = format_retries
        self.max_concurrency = max_concurrency
        self.params = dict(params or {})
        self._log = UsageLog()
        self.last_usage: list[Usage] = []
        self.spec = self.name

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        check_batch(observations, infos)
        gate = asyncio.Semaphore(self.max_concurrency)

        async def one(observation: str, info: Mapping[str, Any]) -> tuple[str, Usage]:
            async with gate:
                return await self._plan(observation, info)

        results = await asyncio.gather(
            *(one(o, i) for o, i in zip(observations, infos, strict=True))
        )
        self.last_usage = [usage for _, usage in results]
        return [text for text, _ in results]

    async def _plan(self, observation: str, info: Mapping[str, Any]) -> tuple[str, Usage]:
        """The completion for one observation, with the usage of every sample it took."""
        samples: list[Completion] = []
        for sample in range(self.format_retries + 1):
            seed = None if self.seed is None else self.seed + sample
            samples.append(await self._complete(observation, seed))
            if sample == self.format_retries or _parses(samples[-1].text, info):
                break
        return samples[-1].text, total_usage(samples)

    def describe(self) -> dict[str, Any]:
        """Settings for result files (no key, only the name of its variable)."""
        return {
            "name": self.name,
            "model": self.model,
            "api_base": self.worker.api_base,
            "api_key_env": self.worker.api_key_env,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "format_retries": self.format_retries,
            "params": self.params,
        }

    async def _complete(self, observation: str, seed: int | None) -> Completion:
        messages = [{"role": "user", "content": observation}]
        attempt = 0
        while True:
            attempt += 1
            try:
                completion = await self.worker.complete(
                    messages,
                    max_tokens=self.max_tokens,
                    temperature=self.temperature,
                    seed=seed,
                    **self.params,
                )
            except WorkerError as exc:
                self._log.failed_attempts += 1
                if not exc.transient or attempt >= self.retry.max_attempts:
                    kind = "transient error" if exc.transient else "permanent error"
                    raise AgentError(
                        f"{self.name}: no completion after {attempt} attempt(s); last "
                        f"{kind}: {exc}",
                        transient=exc.transient,
                    ) from exc
                await asyncio.sleep(self.retry.delay(attempt))
                continue
            self._log.record(completion)
            return completion

    def __repr__(self) -> str:
        return f"LLMConductor(model={self.model!r}, api_base={self.worker.api_base!r})"


def _parses(text: str, info: Mapping[str, Any]) -> bool:
    try:
        parse_plan(text, int(info["num_workers"]), int(info["max_steps"]))
    except PlanParseError:
        return False
    return True
