"""LiteLLM workers: API models and any OpenAI-compatible server (vLLM, llama.cpp, ...).

``backend = "litellm"``; ``model`` is a LiteLLM model string: ``"openai/gpt-5"``,
``"gemini/gemini-2.5-pro"``, ``"anthropic/claude-sonnet-4-20250514"``,
``"hosted_vllm/Qwen/Qwen3-32B"``, or ``"openai/<anything>"`` with an ``api_base``.
``params`` are passed on every call (LiteLLM maps them to each provider); the call's
``max_tokens``, ``temperature`` and ``seed`` come from the pool entry and the episode.
A pool file's ``params`` are limited to the sampling, reasoning and request-body
parameters of :data:`conductor_gym.workers.credentials.SAFE_PARAMS` unless it is trusted
(LiteLLM's ``fallbacks``, ``model_list`` and the like would route the call elsewhere).

Reasoning budgets, as a pool file writes them (what LiteLLM 1.110 sends is in brackets)::

    [[workers]]   # GPT-5, minimal reasoning
    name = "gpt-5"
    backend = "litellm"
    model = "openai/gpt-5"
    params = { reasoning_effort = "minimal" }

    [[workers]]   # Gemini 2.5 Pro, 128 thinking tokens [thinkingConfig.thinkingBudget = 128]
    name = "gemini-2.5-pro"
    backend = "litellm"
    model = "gemini/gemini-2.5-pro"
    params = { thinking = { type = "enabled", budget_tokens = 128 } }

    [[workers]]   # Claude Sonnet 4, thinking off: set neither thinking nor reasoning_effort
    name = "claude-sonnet-4"
    backend = "litellm"
    model = "anthropic/claude-sonnet-4-20250514"

    [[workers]]   # Qwen3 on a vLLM server, thinking off [chat_template_kwargs in the body]
    name = "qwen3-32b"
    backend = "litellm"
    model = "hosted_vllm/Qwen/Qwen3-32B"
    params = { extra_body = { chat_template_kwargs = { enable_thinking = false } } }
    backend_options = { api_base = "http://gpu-host:8000/v1" }

Gemini 2.5 Pro cannot turn thinking off; 128 is its smallest budget (LiteLLM also maps
``reasoning_effort = "minimal"`` to 128 for that model). Claude Sonnet 4 thinks only
when asked (``reasoning_effort = "none"`` also leaves it off).

Every call sets ``drop_params=True``: a parameter the provider rejects is dropped, not an
error. So Anthropic calls go without ``seed``, and GPT-5 runs at its only temperature
(1) while it reasons: a pool's temperature is not honoured there.

``backend_options`` (checked when the worker is built; anything else is a ``ValueError``):

* ``api_base``: server URL (an OpenAI-compatible server ends in ``/v1``).
* ``api_key_env``: name of the environment variable holding the key, read at each call;
  the key is never stored on the worker, in a :class:`Completion` or in a trace. Without
  it a provider model uses the provider's variable (``OPENAI_API_KEY``, ...), while an
  ``api_base`` is taken to need no key: a placeholder is sent, never a provider key from
  the environment (a server that needs one: name its variable here). Which variables
  a pool file may name, and for which hosts, is the policy of
  :mod:`conductor_gym.workers.credentials` (checked when a pool is built from a file).
* ``timeout_s``: seconds per call (default 600).
* ``deployments``: a list of ``{api_base, api_key_env?, model?}`` tables, replicas of one
  model served as one worker through a ``litellm.Router`` (``model`` defaults to the
  worker's, ``api_key_env`` to the top-level one; no top-level ``api_base`` with it).
  Routing is ``"simple-shuffle"``: each call picks a replica at random, which spreads load
  evenly across equal replicas with no shared state; a replica that fails repeatedly is
  skipped for a few seconds (LiteLLM's cooldown). The Router reads each replica's key
  when it is built, and is rebuilt when a key changes.

Retries belong to :func:`conductor_gym.core.execute.run_plan`: LiteLLM, the OpenAI client and
the Router are told never to retry, so every failure reaches it as a
:class:`WorkerError`. By LiteLLM's exception class, transient: ``Timeout``,
``RateLimitError``, ``InternalServerError``, ``ServiceUnavailableError``,
``APIConnectionError``, ``BadGatewayError``, the Router's "no deployment available"
errors, a generic ``APIError`` with status 408, 429 or 5xx, and Python's
``TimeoutError`` and ``ConnectionError``; everything else is permanent
(``AuthenticationError``, ``NotFoundError``, ``BadRequestError`` with its
``ContextWindowExceededError``, ...). An empty answer is a transient error.

A missing key is permanent, and says which variable to set. LiteLLM refuses a provider
call without a key before sending it, naming the variable in its error, but under
classes that would read as transient (LiteLLM 1.110: ``InternalServerError`` for
OpenAI, ``APIConnectionError`` for Gemini, ``AuthenticationError`` for Anthropic). So a
failed call of a provider model (no ``api_base``, no ``api_key_env``) whose error names
a variable that ``litellm.validate_environment`` lists as missing is the permanent
``missing credentials: set OPENAI_API_KEY (...)``. Only a failed call is judged so: a
provider that authenticates otherwise (Vertex AI credentials, an AWS role) is not
refused for lacking the variables LiteLLM lists. An ``api_key_env`` that is not set is
permanent before any call.

Cost: with ``price_in_per_mtok`` or ``price_out_per_mtok`` set (an unset one counts as 0),
tokens times prices; otherwise ``litellm.completion_cost``, and 0.0 with one warning
per model when LiteLLM has no price for it.

LiteLLM is imported at the first call (it takes seconds), with
``LITELLM_LOCAL_MODEL_COST_MAP`` defaulted to ``True`` so that it reads its bundled
price map instead of downloading one, and ``litellm.suppress_debug_info`` set so its
exceptions do not print help banners. Routers are shared by every worker and episode of
the process with the same configuration.

Every LiteLLM call runs on one background event loop (a daemon thread), whatever loop
the caller awaits it from: LiteLLM caches its HTTP clients per event loop and keeps a
logging task on the loop of its last call, and each env, vector env and scorer runs its
own loop, closed with it. Called from those loops directly, LiteLLM's logging task was
left pending on closed loops ("Task was destroyed but it is pending!" at exit; on CPython
3.11 destroying it during garbage collection at exit crashed the interpreter with a
segmentation fault) and its clients outlived their loops ("Event loop is closed").
:func:`shutdown` (run at interpreter exit by itself) waits for LiteLLM's queued logging
callbacks, closes every client LiteLLM cached and stops the loop; a later call starts a
new one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import math
import os
import sys
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from conductor_gym._loop import BackgroundLoop
from conductor_gym.errors import ConfigurationError
from conductor_gym.workers.base import Completion, Message, Worker, WorkerError

if TYPE_CHECKING:
    from conductor_gym.workers.spec import WorkerSpec

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "Deployment",
    "LiteLLMWorker",
    "make_litellm_worker",
    "missing_credentials",
    "shutdown",
]

DEFAULT_TIMEOUT_S = 600.0
ROUTING_STRATEGY = "simple-shuffle"
OPTIONS = ("api_base", "api_key_env", "timeout_s", "deployments")
DEPLOYMENT_FIELDS = ("api_base", "api_key_env", "model")

# The OpenAI client refuses to send a request without some key, even to a server that
# needs none.
_PLACEHOLDER_KEY = "no-key"
# Call arguments the worker sets itself; a pool's params may not override them.
_RESERVED_PARAMS = frozenset(
    {
        "model", "messages", "stream", "n", "max_tokens", "temperature", "seed",
        "api_base", "base_url", "api_key", "timeout", "num_retries", "max_retries",
        "drop_params",
    }
)  # fmt: skip
_TRANSIENT = (
    "Timeout",
    "RateLimitError",
    "InternalServerError",
    "ServiceUnavailableError",
    "APIConnectionError",
    "BadGatewayError",
)
_ROUTER_TRANSIENT = ("RouterRateLimitError", "RouterRateLimitErrorBasic")
_RETRYABLE_STATUS = frozenset({408, 429})
_FLUSH_TIMEOUT_S = 5.0
"""Longest :func:`shutdown` waits for LiteLLM's logging callbacks, and for its clients."""

_lock = threading.Lock()
_litellm_module: Any = None
_transient_classes: tuple[type[BaseException], ...] | None = None
# (model, deployments, timeout) -> (fingerprints of the keys it was built with, Router)
_routers: dict[tuple[Any, ...], tuple[tuple[str | None, ...], Any]] = {}
_unpriced_models: set[str] = set()


@dataclass(frozen=True)
class Deployment:
    """One replica behind a Router: where it is and which variable holds its key."""

    api_base: str
    model: str
    api_key_env: str | None = None


class LiteLLMWorker(Worker):
    """A worker that answers through ``litellm.acompletion``, or through a shared
    ``litellm.Router`` when ``deployments`` are given (module docstring)."""

    def __init__(
        self,
        name: str,
        model: str,
        *,
        api_base: str | None = None,
        api_key_env: str | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        deployments: Sequence[Deployment] = (),
        price_in_per_mtok: float | None = None,
        price_out_per_mtok: float | None = None,
    ) -> None:
        where = f"litellm worker {name!r}"
        if not isinstance(model, str) or not model:
            raise ConfigurationError(f"{where}: model must be a non-empty LiteLLM model string")
        _check_timeout(timeout_s, f"{where}: timeout_s")
        if deployments and api_base is not None:
            raise ConfigurationError(f"{where}: give api_base per deployment, not with deployments")
        self.name = name
        self.model = model
        self.api_base = api_base
        self.api_key_env = api_key_env
        self.timeout_s = float(timeout_s)
        self.deployments = tuple(deployments)
        self.price_in_per_mtok = price_in_per_mtok
        self.price_out_per_mtok = price_out_per_mtok

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        """One chat completion; raises :class:`WorkerError` (``__cause__``: LiteLLM's
        exception) on failure or an empty answer."""
        if reserved := sorted(set(params) & _RESERVED_PARAMS):
            raise WorkerError(
                f"params {reserved} are set by the litellm worker itself",
                transient=False,
                worker=self.name,
            )
        litellm = _litellm()
        call: dict[str, Any] = {
            "messages": [dict(m) for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "drop_params": True,
            **params,
        }
        if seed is not None:
            call["seed"] = seed
        if self.deployments:
            call["model"] = _group_name(self.model)
        else:
            call.update(model=self.model, timeout=self.timeout_s, num_retries=0, max_retries=0)
            if self.api_base is not None:
                call["api_base"] = self.api_base
            if (key := self._api_key()) is not None:
                call["api_key"] = key
        start = time.perf_counter()
        try:
            response = await _background.run(self._send(litellm, call))
        except WorkerError:
            raise
        except Exception as exc:
            message = f"{type(exc).__name__}: {exc}"
            if missing := self._missing_keys_named_by(litellm, exc):
                raise WorkerError(
                    f"missing credentials: set {' or '.join(missing)} ({message})",
                    transient=False,
                    worker=self.name,
                ) from exc
            raise WorkerError(message, transient=_is_transient(exc), worker=self.name) from exc
        latency_s = time.perf_counter() - start
        return self._completion(litellm, response, latency_s)

    async def _send(self, litellm: Any, call: dict[str, Any]) -> Any:
        """The LiteLLM call, on the background loop (where the Router is built too)."""
        send = self._router(litellm).acompletion if self.deployments else litellm.acompletion
        return await send(**call)

    def _missing_keys_named_by(self, litellm: Any, exc: BaseException) -> list[str]:
        """The unset provider variables that ``exc`` names (module docstring)."""
        if self.deployments or self.api_base is not None or self.api_key_env is not None:
            return []
        try:
            report = litellm.validate_environment(model=self.model)
        except Exception:
            return []
        text = str(exc)
        return [str(name) for name in report.get("missing_keys", []) if str(name) in text]

    def _api_key(self) -> str | None:
        if self.api_key_env is not None:
            return _read_key(self.api_key_env, self.name)
        return _PLACEHOLDER_KEY if self.api_base is not None else None

    def _router(self, litellm: Any) -> Any:
        """The process's Router for this worker's deployments and current keys."""
        fingerprint = tuple(
            hashlib.sha256(_read_key(d.api_key_env, self.name).encode()).hexdigest()
            if d.api_key_env
            else None
            for d in self.deployments
        )
        config = (self.model, self.deployments, self.timeout_s)
        with _lock:
            cached = _routers.get(config)
            if cached is None or cached[0] != fingerprint:
                router = _build_router(litellm, self.model, self.deployments, self.timeout_s)
                cached = _routers[config] = (fingerprint, router)
        return cached[1]

    def _completion(self, litellm: Any, response: Any, latency_s: float) -> Completion:
        choices = getattr(response, "choices", None) or []
        text = getattr(getattr(choices[0], "message", None), "content", None) if choices else None
        if not isinstance(text, str) or not text:
            raise WorkerError("empty content", transient=True, worker=self.name)
        usage = getattr(response, "usage", None)
        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        return Completion(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=self._cost(litellm, response, prompt_tokens, completion_tokens),
            latency_s=latency_s,
            model=str(getattr(response, "model", None) or self.model),
        )

    def _cost(
        self, litellm: Any, response: Any, prompt_tokens: int, completion_tokens: int
    ) -> float:
        price_in, price_out = self.price_in_per_mtok, self.price_out_per_mtok
        if price_in is not None or price_out is not None:
            return (
                prompt_tokens * (price_in or 0.0) + completion_tokens * (price_out or 0.0)
            ) / 1e6
        try:
            cost = litellm.completion_cost(completion_response=response)
        # Pricing is accounting, never a reason to lose an answer: LiteLLM raises a
        # plain ModelNotMappedError (and others) for models it has no price for.
        except Exception:
            cost = None
        if isinstance(cost, int | float) and math.isfinite(cost):
            return float(cost)
        with _lock:
            first = self.model not in _unpriced_models
            _unpriced_models.add(self.model)
        if first:
            warnings.warn(
                f"litellm worker {self.name!r}: LiteLLM has no price for model {self.model!r}; "
                "its cost is reported as 0.0. Set price_in_per_mtok and price_out_per_mtok "
                "in the pool file.",
                stacklevel=2,
            )
        return 0.0

    def __repr__(self) -> str:
        where = (
            f"deployments={len(self.deployments)}"
            if self.deployments
            else f"api_base={self.api_base!r}"
        )
        return f"LiteLLMWorker(name={self.name!r}, model={self.model!r}, {where})"


def make_litellm_worker(spec: WorkerSpec) -> LiteLLMWorker:
    """Backend factory for ``backend="litellm"``; ``ValueError`` (naming the worker and
    the option) for a malformed or unknown backend option or a reserved param."""
    where = f"WorkerSpec(name={spec.name!r})"
    options = dict(spec.backend_options)
    if unknown := sorted(set(options) - set(OPTIONS)):
        hint = (
            "; put a key in an environment variable and name it in api_key_env"
            if any("key" in name.lower() for name in unknown)
            else ""
        )
        raise ConfigurationError(
            f"{where}.backend_options: unknown option(s) {unknown} for the litellm backend; "
            f"valid: {list(OPTIONS)}{hint}"
        )
    if reserved := sorted(set(spec.params) & _RESERVED_PARAMS):
        raise ConfigurationError(f"{where}.params: {reserved} are set by the litellm worker itself")
    at = f"{where}.backend_options"
    api_base = _optional_str(options, "api_base", at)
    api_key_env = _optional_str(options, "api_key_env", at)
    timeout_s = options.get("timeout_s", DEFAULT_TIMEOUT_S)
    _check_timeout(timeout_s, f"{at}.timeout_s")
    deployments = _deployments(options.get("deployments", ()), spec.model_name, api_key_env, at)
    if deployments and api_base is not None:
        raise ConfigurationError(f"{at}: give api_base per deployment, not with deployments")
    return LiteLLMWorker(
        spec.name,
        spec.model_name,
        api_base=api_base,
        api_key_env=api_key_env,
        timeout_s=timeout_s,
        deployments=deployments,
        price_in_per_mtok=spec.price_in_per_mtok,
        price_out_per_mtok=spec.price_out_per_mtok,
    )


def missing_credentials(spec: WorkerSpec) -> list[str]:
    """Environment variables the worker of ``spec`` needs that are not set (empty: ready).

    Named variables (``api_key_env``, top-level or per deployment) are checked directly;
    a server at an ``api_base`` without one needs nothing; a provider model needs what
    ``litellm.validate_environment`` lists (imports LiteLLM). For Gemini it lists both
    ``GOOGLE_API_KEY`` and ``GEMINI_API_KEY`` while neither is set; either one suffices.
    """
    worker = make_litellm_worker(spec)
    if worker.deployments:
        named = [d.api_key_env for d in worker.deployments if d.api_key_env]
        return sorted({name for name in named if not os.environ.get(name)})
    if worker.api_key_env is not None:
        return [] if os.environ.get(worker.api_key_env) else [worker.api_key_env]
    if worker.api_base is not None:
        return []
    report = _litellm().validate_environment(model=worker.model)
    return [str(name) for name in report.get("missing_keys", [])]


# -- internals -------------------------------------------------------------------------


async def _release_litellm() -> None:
    """What :func:`shutdown` does on the background loop before stopping it."""
    litellm = _litellm_module
    if litellm is None:
        return
    module = sys.modules.get("litellm.litellm_core_utils.logging_worker")
    logging_worker = getattr(module, "GLOBAL_LOGGING_WORKER", None)
    if logging_worker is not None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(logging_worker.flush(), _FLUSH_TIMEOUT_S)
        with contextlib.suppress(Exception):
            await logging_worker.stop()
    with contextlib.suppress(Exception):
        await asyncio.wait_for(litellm.close_litellm_async_clients(), _FLUSH_TIMEOUT_S)


_background = BackgroundLoop("conductor-gym-litellm", on_close=_release_litellm)


def shutdown() -> None:
    """Wait for LiteLLM's queued logging callbacks, close every client LiteLLM cached
    and stop the background loop of LiteLLM calls (module docstring). Runs at
    interpreter exit by itself; a later call starts a new loop."""
    _background.close()


def _litellm() -> Any:
    """LiteLLM, imported on first use (module docstring)."""
    global _litellm_module
    if _litellm_module is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        module: Any = importlib.import_module("litellm")
        module.suppress_debug_info = True
        # LiteLLM registers its exit handlers at import and at the first attribute
        # lookup; the background loop's, registered later, then runs before them.
        _ = module.acompletion
        _litellm_module = module
    return _litellm_module


def _is_transient(exc: BaseException) -> bool:
    """Whether a LiteLLM failure is worth retrying, by its class (module docstring)."""
    global _transient_classes
    if _transient_classes is None:
        litellm = _litellm()
        found = [getattr(litellm, name, None) for name in _TRANSIENT]
        try:
            router_types = importlib.import_module("litellm.types.router")
        except ImportError:
            router_types = None
        found += [getattr(router_types, name, None) for name in _ROUTER_TRANSIENT]
        classes = [c for c in found if isinstance(c, type) and issubclass(c, BaseException)]
        _transient_classes = (*classes, TimeoutError, ConnectionError)
    if isinstance(exc, _transient_classes):
        return True
    api_error = getattr(_litellm(), "APIError", None)
    if isinstance(api_error, type) and isinstance(exc, api_error):
        status = getattr(exc, "status_code", None)
        return isinstance(status, int) and (status in _RETRYABLE_STATUS or status >= 500)
    return False


def _read_key(name: str, worker: str) -> str:
    key = os.environ.get(name)
    if not key:
        raise WorkerError(
            f"environment variable {name} (api_key_env) is not set", transient=False, worker=worker
        )
    return key


def _group_name(model: str) -> str:
    return f"conductor-gym:{model}"


def _build_router(
    litellm: Any, model: str, deployments: Sequence[Deployment], timeout_s: float
) -> Any:
    model_list = []
    for deployment in deployments:
        # LiteLLM's "os.environ/NAME" reference: the Router reads the variable itself, so
        # the key is not copied into the model list.
        key = f"os.environ/{deployment.api_key_env}" if deployment.api_key_env else None
        model_list.append(
            {
                "model_name": _group_name(model),
                "litellm_params": {
                    "model": deployment.model,
                    "api_base": deployment.api_base,
                    "api_key": key or _PLACEHOLDER_KEY,
                    "timeout": timeout_s,
                    "max_retries": 0,
                },
            }
        )
    return litellm.Router(
        model_list=model_list,
        routing_strategy=ROUTING_STRATEGY,
        num_retries=0,
        timeout=timeout_s,
    )


def _check_timeout(value: Any, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigurationError(f"{where} must be a number > 0, got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise ConfigurationError(f"{where} must be a number > 0, got {value!r}")


def _optional_str(options: Mapping[str, Any], key: str, where: str) -> str | None:
    value = options.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ConfigurationError(f"{where}.{key} must be a non-empty string")
    return value


def _deployments(
    value: Any, model: str, default_key_env: str | None, where: str
) -> tuple[Deployment, ...]:
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence):
        raise ConfigurationError(f"{where}.deployments must be a list of tables")
    result = []
    for i, entry in enumerate(value):
        at = f"{where}.deployments[{i}]"
        if not isinstance(entry, Mapping):
            raise ConfigurationError(f"{at} must be a table with api_base (and api_key_env, model)")
        if unknown := sorted(set(entry) - set(DEPLOYMENT_FIELDS)):
            raise ConfigurationError(
                f"{at}: unknown field(s) {unknown}; valid: {list(DEPLOYMENT_FIELDS)}"
            )
        api_base = _optional_str(entry, "api_base", at)
        if api_base is None:
            raise ConfigurationError(f"{at}.api_base is required")
        key_env = _optional_str(entry, "api_key_env", at)
        result.append(
            Deployment(
                api_base=api_base,
                model=_optional_str(entry, "model", at) or model,
                api_key_env=key_env or default_key_env,
            )
        )
    return tuple(result)
