"""The HTTP server: an OpenAI-compatible ASGI app (Starlette) over conductor models.

Routes: ``GET /v1/models``, ``GET /v1/models/{id}``, ``POST /v1/chat/completions``,
``POST /v1/completions`` (:mod:`conductor_gym.serve.protocol`; ``stream: true`` is
answered with server-sent events once the episode has run), ``GET /health`` (200
``{"status": "ok"}`` while the app serves, 503 once it shuts down) and ``GET /metrics``
(Prometheus's text format: :mod:`conductor_gym.serve.metrics`); the last two need no
token (probes and scrapers carry none, and neither plays an episode), unless
``private_monitoring`` is set: they name the models and the spend, so a server reachable
by others can ask for the token there too. Every other
response is JSON; every error is OpenAI's
``{"error": {"message", "type", "param", "code"}}`` (with a ``conductor`` field of
details where there are some): 400 a malformed request (the field named; a body that
is not JSON, nests too deeply for the parser, or holds text that is not valid Unicode
included), 401 a missing or wrong bearer token, 404 an unknown model or route, 405 a
wrong method, 408 a body not received within ``body_timeout_s``, 413 a body over
``max_request_bytes`` or a question over ``max_question_chars``, 429 when
``max_concurrency`` episodes run and ``max_queue`` more wait (with ``x-should-retry:
true`` and ``retry-after: 1``: no episode ran), and the 429, 502 and 503 of
:mod:`conductor_gym.serve.service` when an episode gives no answer. A client error is
never a 500. An unexpected exception is a 500 naming only its class. Every 5xx, and
every failure of an episode that ran, carries ``x-should-retry: false``: the official
``openai`` client would otherwise re-send it twice, playing the episode again each time.

Logs (the ``conductor_gym.serve`` logger, rate-limited by
:class:`~conductor_gym.serve.logs.RateLimitedLog`: one line per kind per
``log_interval_s``): each error response is one warning line keyed by its status and
code; an unexpected exception is one error with its traceback per exception class per
interval. A client that disconnects mid-request is not an error (a debug line).
Connection-level limits (header timeouts, a connection cap) belong to the server that
runs the app: :mod:`conductor_gym.serve.server`.

Secrets. With ``api_key`` set, every ``/v1`` request needs ``Authorization: Bearer
<api_key>`` (compared in constant time). No response repeats a request's credentials,
the server's key, or the value of any secret-looking environment variable
(:func:`~conductor_gym.serve.service.redact`): a worker's error message passes through
it before it is sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from conductor_gym._validate import require_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.serve.logs import DEFAULT_LOG_INTERVAL_S, limit_logs
from conductor_gym.serve.metrics import CONTENT_TYPE, Metrics
from conductor_gym.serve.protocol import (
    DEFAULT_MAX_QUESTION_CHARS,
    ChatRequest,
    Kind,
    chat_completion,
    model_card,
    model_list,
    parse_chat_request,
    parse_completion_request,
    stream_events,
    text_completion,
)
from conductor_gym.serve.service import ConductorModel, ServedAnswer, ServeError, redact

__all__ = [
    "DEFAULT_BODY_TIMEOUT_S",
    "DEFAULT_MAX_QUESTION_CHARS",
    "DEFAULT_MAX_REQUEST_BYTES",
    "create_app",
]

DEFAULT_MAX_REQUEST_BYTES = 1 << 20
DEFAULT_BODY_TIMEOUT_S = 30.0
"""Seconds a request body may take to arrive once the app starts reading it."""

logger = logging.getLogger("conductor_gym.serve")

_HTTP_ERRORS = {
    404: ("invalid_request_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
}


class _Admission:
    """At most ``running`` episodes at once and ``waiting`` more queued; refuse the rest."""

    def __init__(self, running: int, waiting: int) -> None:
        self.limit = running + waiting
        self.running = running
        self.admitted = 0
        self.active = 0
        self._slots = asyncio.Semaphore(running)

    @property
    def waiting(self) -> int:
        """Requests admitted that wait for a slot."""
        return self.admitted - self.active

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self.admitted >= self.limit:
            raise ServeError(
                429,
                "rate_limit_error",
                "server_busy",
                f"the server is at capacity ({self.running} running, "
                f"{self.limit - self.running} waiting): retry later",
                retry=True,
                retry_after_s=1,
            )
        self.admitted += 1
        try:
            async with self._slots:
                self.active += 1
                try:
                    yield
                finally:
                    self.active -= 1
        finally:
            self.admitted -= 1


class _CountResponses:
    """ASGI middleware: every HTTP response's status, counted by route in ``metrics``."""

    def __init__(self, app: ASGIApp, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def counting(message: Message) -> None:
            if message["type"] == "http.response.start":
                self.metrics.request(scope["path"], int(message["status"]))
            await send(message)

        await self.app(scope, receive, counting)


def create_app(
    models: Sequence[ConductorModel],
    *,
    api_key: str | None = None,
    max_concurrency: int = 64,
    max_queue: int = 256,
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES,
    max_question_chars: int = DEFAULT_MAX_QUESTION_CHARS,
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S,
    log_interval_s: float = DEFAULT_LOG_INTERVAL_S,
    private_monitoring: bool = False,
) -> Starlette:
    """The ASGI app serving ``models`` (module docstring for the contract).

    Args:
        models: The conductors, by their unique ``name``.
        api_key: The bearer token every ``/v1`` request must carry, or ``None``.
        max_concurrency: Most episodes played at once.
        max_queue: Most requests waiting for a slot; more are refused with 429.
        max_request_bytes: Largest request body accepted; larger is 413.
        max_question_chars: Longest question (the last user message) accepted; longer
            is 413.
        body_timeout_s: Most seconds the body may take to arrive; slower is 408.
        log_interval_s: The logs' rate limit: one line per kind per this many seconds.
        private_monitoring: ``/health`` and ``/metrics`` ask for ``api_key`` too.

    The models are closed when the app shuts down (its lifespan).
    """
    require_int("max_concurrency", max_concurrency)
    require_int("max_queue", max_queue, minimum=0)
    require_int("max_request_bytes", max_request_bytes)
    require_int("max_question_chars", max_question_chars)
    _require_seconds("body_timeout_s", body_timeout_s)
    if isinstance(log_interval_s, bool) or not (
        isinstance(log_interval_s, int | float) and log_interval_s >= 0
    ):
        raise ConfigurationError(f"log_interval_s must be a number >= 0, got {log_interval_s!r}")
    if api_key is not None and not api_key:
        raise ConfigurationError("api_key must be a non-empty string or None")
    if private_monitoring and api_key is None:
        raise ConfigurationError(
            "private_monitoring needs an api_key (conductor-gym serve: set the variable "
            "named by --api-key-env)"
        )
    by_name = {m.name: m for m in models}
    if not by_name:
        raise ConfigurationError("create_app needs at least one ConductorModel")
    if len(by_name) != len(models):
        raise ConfigurationError("model names must be unique")
    secrets_ = (api_key,) if api_key else ()
    admission = _Admission(max_concurrency, max_queue)
    metrics = Metrics(by_name)
    created = int(time.time())
    serving = True
    limit_logs([logger.name], log_interval_s)

    def error(exc: ServeError) -> JSONResponse:
        headers = exc.headers()
        if exc.status in (408, 413):
            # The rest of an unread or late body would be read as the next request.
            headers["connection"] = "close"
        return JSONResponse(exc.body(secrets_), status_code=exc.status, headers=headers)

    def guarded(
        handler: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        """``handler`` with every failure answered here: Starlette's handler for
        ``Exception`` re-raises to the server, which would log a second traceback."""

        async def endpoint(request: Request) -> Response:
            try:
                return await handler(request)
            except ServeError as exc:
                logger.warning(
                    "%s %r: %d %s: %s", request.method, request.url.path, exc.status,
                    exc.code, redact(exc.message, secrets_),
                    extra={"limit_key": ("error", exc.status, exc.code)},
                )  # fmt: skip
                return error(exc)
            except ClientDisconnect:
                logger.debug("%s %r: the client disconnected", request.method, request.url.path)
                return Response(status_code=400)
            except Exception as exc:
                logger.error(
                    "unexpected error serving %s %r", request.method, request.url.path,
                    exc_info=exc,
                )  # fmt: skip
                crash = f"internal error ({type(exc).__name__})"
                return error(ServeError(500, "server_error", "internal_error", crash))

        return endpoint

    def authorize(request: Request) -> None:
        if api_key is None:
            return
        scheme, _, token = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            token.strip().encode(), api_key.encode()
        ):
            raise ServeError(
                401,
                "authentication_error",
                "invalid_api_key",
                "missing or wrong bearer token (Authorization: Bearer <key>)",
            )

    def model(name: str, param: str | None = "model") -> ConductorModel:
        if name not in by_name:
            raise ServeError(
                404,
                "invalid_request_error",
                "model_not_found",
                f"the model {name!r} is not served here; served: {sorted(by_name)}",
                param=param,
            )
        return by_name[name]

    async def models_endpoint(request: Request) -> Response:
        authorize(request)
        return JSONResponse(model_list(list(by_name.values()), created))

    async def model_endpoint(request: Request) -> Response:
        authorize(request)
        return JSONResponse(model_card(model(request.path_params["model"], None), created))

    async def play(served: ConductorModel, parsed: ChatRequest) -> ServedAnswer:
        """One episode, counted in ``metrics``."""
        async with admission.slot():
            metrics.started(served.name)
            started = time.perf_counter()
            result, spent = "cancelled", None
            try:
                answer = await served.answer(parsed.question, seed=parsed.seed)
                result = "answered"
                spent = {
                    "conductor": answer.conductor.to_dict(),
                    "workers": answer.workers.to_dict(),
                }
                return answer
            except ServeError as exc:
                result = exc.code
                spent = (exc.details or {}).get("usage")
                raise
            except Exception:
                result = "internal_error"
                raise
            finally:
                metrics.finished(served.name, result, time.perf_counter() - started, spent)

    def completions_endpoint(kind: Kind) -> Callable[[Request], Awaitable[Response]]:
        parse = parse_chat_request if kind == "chat" else parse_completion_request
        respond = chat_completion if kind == "chat" else text_completion

        async def endpoint(request: Request) -> Response:
            authorize(request)
            body = await _read_json(request, max_request_bytes, body_timeout_s)
            parsed = parse(body, max_question_chars=max_question_chars)
            served = model(parsed.model)
            answer = await play(served, parsed)
            if not parsed.stream:
                return JSONResponse(respond(served.name, answer, parsed))

            async def events() -> AsyncIterator[str]:
                for event in stream_events(kind, served.name, answer, parsed):
                    yield event

            return StreamingResponse(
                events(),
                media_type="text/event-stream",
                headers={"cache-control": "no-cache", "x-accel-buffering": "no"},
            )

        return endpoint

    async def health_endpoint(request: Request) -> Response:
        if private_monitoring:
            authorize(request)
        body = {"status": "ok" if serving else "shutting_down", "models": sorted(by_name)}
        return JSONResponse(body, status_code=200 if serving else 503)

    async def metrics_endpoint(request: Request) -> Response:
        if private_monitoring:
            authorize(request)
        metrics.waiting = admission.waiting
        return Response(metrics.render(), media_type=CONTENT_TYPE)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        kind, code = _HTTP_ERRORS.get(exc.status_code, ("invalid_request_error", "http_error"))
        return error(ServeError(exc.status_code, kind, code, str(exc.detail)))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        nonlocal serving
        try:
            yield
        finally:
            serving = False
            for served in by_name.values():
                served.close()

    return Starlette(
        routes=[
            Route("/v1/models", guarded(models_endpoint), methods=["GET"]),
            Route("/v1/models/{model:path}", guarded(model_endpoint), methods=["GET"]),
            Route("/v1/chat/completions", guarded(completions_endpoint("chat")), methods=["POST"]),
            Route("/v1/completions", guarded(completions_endpoint("completion")), methods=["POST"]),
            Route("/health", guarded(health_endpoint), methods=["GET"]),
            Route("/metrics", guarded(metrics_endpoint), methods=["GET"]),
        ],
        middleware=[Middleware(_CountResponses, metrics=metrics)],
        exception_handlers={HTTPException: http_error},
        lifespan=lifespan,
    )


def _require_seconds(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not (0 < value < 1e9):
        raise ConfigurationError(f"{name} must be a number of seconds > 0, got {value!r}")


async def _read_json(request: Request, limit: int, timeout_s: float) -> Any:
    """The request's JSON body; 413 past ``limit`` bytes (declared or sent), 408 when
    it has not all arrived within ``timeout_s``, 400 if it is not JSON (or nests too
    deeply for the parser)."""
    too_large = ServeError(
        413, "invalid_request_error", "request_too_large",
        f"the request body is over the server's limit of {limit} bytes", param="body",
    )  # fmt: skip
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise too_large
    body = bytearray()

    async def read() -> None:
        async for chunk in request.stream():
            body.extend(chunk)
            if len(body) > limit:
                raise too_large

    try:
        await asyncio.wait_for(read(), timeout_s)
    except TimeoutError:
        raise ServeError(
            408, "invalid_request_error", "request_timeout",
            f"the request body did not arrive within {timeout_s:g} s", param="body",
        ) from None  # fmt: skip
    try:
        return json.loads(body)
    except RecursionError:
        message = "the request body is not JSON the server reads: it nests too deeply"
    except ValueError as exc:  # UnicodeDecodeError included
        message = f"the request body is not JSON: {exc}"
    raise ServeError(400, "invalid_request_error", "invalid_json", message, param="body")
