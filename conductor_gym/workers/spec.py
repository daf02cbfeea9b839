"""A configured worker: :class:`WorkerSpec`, and the backends that build one.

A spec names a backend, a model, generation settings, prices and rate limits. Backends
register a factory by import path in :data:`BACKENDS`, so none is imported until a pool
that uses it is built (``import conductor_gym`` stays free of heavy dependencies).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from conductor_gym._validate import require_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.registry import Registry
from conductor_gym.workers.base import Worker

__all__ = ["BACKENDS", "MAX_SYSTEM_PROMPT_CHARS", "WorkerFactory", "WorkerSpec", "register_backend"]

MAX_SYSTEM_PROMPT_CHARS = 20_000
"""The longest ``WorkerSpec.system_prompt`` (a pool file is shared data)."""

WorkerFactory = Callable[["WorkerSpec"], Worker]

_SECRET_NAME = re.compile(r"(api_?key|secret|password|token$|authori[sz]ation|headers)", re.I)

BACKENDS: Registry[WorkerFactory] = Registry(
    "backend", field="backend", group="conductor_gym.backends"
)
"""Worker backends: name -> factory ``(WorkerSpec) -> Worker`` (or its import path)."""
BACKENDS.register("simulated", "conductor_gym.sim.worker:make_simulated_worker")
BACKENDS.register("litellm", "conductor_gym.workers.litellm:make_litellm_worker")
BACKENDS.register("hf", "conductor_gym.workers.hf:make_hf_worker")
BACKENDS.register("vllm", "conductor_gym.workers.vllm:make_vllm_worker")


def register_backend(name: str, factory: str | WorkerFactory) -> None:
    """Register a worker backend: a factory ``(WorkerSpec) -> Worker`` or its
    ``"module:function"`` import path (preferred: it is imported only when used). A name
    taken by another factory raises."""
    BACKENDS.register(name, factory)


@dataclass(frozen=True)
class WorkerSpec:
    """One configured worker.

    Attributes:
        name: Unique name in the pool, reported in traces (never shown to the conductor).
        backend: A registered backend (``"simulated"`` in the core package).
        model: The backend's model identifier (for ``simulated``, a profile name from
            :data:`conductor_gym.sim.profiles.PAPER_PROFILES`); defaults to ``name``.
        max_tokens: Completion budget per call (paper, constrained setting: 4096).
        temperature: Sampling temperature per call (paper: 0.2).
        params: Extra backend parameters passed to every call (e.g. ``top_p``).
        backend_options: Options for building the backend client once (e.g. an API
            base URL, or ``latency_scale`` for the simulated backend).
        price_in_per_mtok: USD per million prompt tokens, or ``None`` for the backend's own.
        price_out_per_mtok: USD per million completion tokens, or ``None``.
        max_concurrency: Most calls to this worker in flight at once in this process
            (``None``: no limit).
        requests_per_minute: Most calls started per minute (``None``: no limit).
        tokens_per_minute: Most prompt plus completion tokens per minute (``None``: no
            limit); calls wait while the last minute's tokens exceed it.
        system_prompt: A system message this worker receives first in every call
            (``None``: none). It is part of the messages, so of the response cache's keys;
            the env's ``PromptTemplates.worker_system``, when set, follows it in the same
            message.

    Credentials belong in ``backend_options`` (better: in the environment variables the
    backend reads), never in ``params``: ``params`` enter the response cache's keys and
    the traces, so a secret-looking parameter name is rejected.
    """

    name: str
    backend: str = "simulated"
    model: str | None = None
    max_tokens: int = 4096
    temperature: float = 0.2
    params: Mapping[str, Any] = field(default_factory=dict)
    backend_options: Mapping[str, Any] = field(default_factory=dict)
    price_in_per_mtok: float | None = None
    price_out_per_mtok: float | None = None
    max_concurrency: int | None = None
    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    system_prompt: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        object.__setattr__(self, "backend_options", MappingProxyType(dict(self.backend_options)))
        self.validate()

    def validate(self) -> None:
        """Raise ``ConfigurationError`` naming the worker and the offending field."""
        where = f"WorkerSpec(name={self.name!r})"
        if not isinstance(self.name, str) or not self.name.strip():
            raise ConfigurationError(f"{where}.name must be a non-empty string")
        if self.backend not in BACKENDS:
            raise ConfigurationError(
                f"{where}.backend: unknown backend {self.backend!r}; registered: {BACKENDS.names()}"
            )
        require_int(f"{where}.max_tokens", self.max_tokens)
        if not isinstance(self.temperature, int | float) or not (
            math.isfinite(self.temperature) and self.temperature >= 0
        ):
            raise ConfigurationError(f"{where}.temperature must be a number >= 0")
        for price in ("price_in_per_mtok", "price_out_per_mtok"):
            value = getattr(self, price)
            if value is not None and not (
                isinstance(value, int | float) and math.isfinite(value) and value >= 0
            ):
                raise ConfigurationError(f"{where}.{price} must be None or a number >= 0")
        if self.max_concurrency is not None:
            require_int(f"{where}.max_concurrency", self.max_concurrency)
        for rate in ("requests_per_minute", "tokens_per_minute"):
            value = getattr(self, rate)
            if value is not None and not (
                isinstance(value, int | float) and math.isfinite(value) and value > 0
            ):
                raise ConfigurationError(f"{where}.{rate} must be None or a number > 0")
        if self.system_prompt is not None and not (
            isinstance(self.system_prompt, str)
            and self.system_prompt.strip()
            and len(self.system_prompt) <= MAX_SYSTEM_PROMPT_CHARS
        ):
            raise ConfigurationError(
                f"{where}.system_prompt must be None or a non-empty string of at most "
                f"{MAX_SYSTEM_PROMPT_CHARS} characters"
            )
        if fields := sorted({"max_tokens", "temperature"} & set(self.params)):
            raise ConfigurationError(
                f"{where}.params: {fields} are the worker's own fields: set "
                f"{' and '.join(f'{f} = ...' for f in fields)} at the top level of the worker "
                "(beside name and model), not in params"
            )
        if secrets := sorted(k for k in self.params if _SECRET_NAME.search(k)):
            raise ConfigurationError(
                f"{where}.params: {secrets} look like credentials; params enter cache keys "
                "and traces, so pass credentials in backend_options or environment variables"
            )

    @property
    def model_name(self) -> str:
        return self.model if self.model is not None else self.name
