"""``conductor-gym serve``: a conductor behind an OpenAI-compatible HTTP API.

A served "model" is a conductor (any agent spec) over a worker pool
(:class:`~conductor_gym.serve.service.ConductorModel`); a chat request's last user
message (or a text completion's prompt) is the question, the conductor plans, the pool
executes, and the final step's answer is the assistant message, sent whole or streamed
(:mod:`conductor_gym.serve.protocol`, which also decides each request field: honoured,
ignored or refused). The HTTP layer is Starlette (:mod:`conductor_gym.serve.app`, with
``/health`` and Prometheus ``/metrics``: :mod:`conductor_gym.serve.metrics`), run by
uvicorn with header timeouts, a
connection cap and rate-limited logs (:mod:`conductor_gym.serve.server`, imported on its
own): ``pip install "conductor-gym[serve]"``. ``import conductor_gym`` imports none of
this package.
"""

from __future__ import annotations

from conductor_gym.serve.app import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_MAX_QUESTION_CHARS,
    DEFAULT_MAX_REQUEST_BYTES,
    create_app,
)
from conductor_gym.serve.service import (
    SIMULATED_NOTE,
    ConductorModel,
    ServedAnswer,
    ServeError,
    TokenUsage,
    redact,
)

__all__ = [
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_MAX_QUESTION_CHARS",
    "DEFAULT_MAX_REQUEST_BYTES",
    "SIMULATED_NOTE",
    "ConductorModel",
    "ServeError",
    "ServedAnswer",
    "TokenUsage",
    "create_app",
    "redact",
]
