"""Running the app under uvicorn with connection limits: slow clients cannot take it down.

uvicorn alone waits forever for a request head that never completes (a connection that
sends nothing, or a byte at a time) and keeps every such connection open, so enough of
them exhaust the process's file descriptors and every real request then times out.
:func:`run` serves the app with uvicorn's h11 protocol extended by
:class:`GuardedH11Protocol`, under :class:`ServerLimits`:

* **header timeout**: a connection must complete a request head within
  ``header_timeout_s`` of connecting, or of its first byte after a response (a client
  trickling bytes after a response, a slow body nobody reads included); else it is
  closed;
* **keep-alive**: an idle connection is closed after ``keep_alive_s`` (uvicorn's own
  ``timeout_keep_alive``);
* **unread responses**: at most ``max_unread_bytes`` of responses are held for a client
  that does not read them (the socket's send buffer is set to a quarter of it, which the
  kernel doubles, and the connection's write buffer pauses the response at half of it);
* **write timeout**: a connection whose responses stay unread past that bound for
  ``write_timeout_s`` is dropped (a client that pipelines requests and never reads);
* **connection cap**: at most ``max_connections`` open at once; one more drops the
  oldest connection whose client stopped reading its responses, else closes the oldest
  that has no request in progress (idle, or still sending its head), so neither
  half-open nor non-reading connections can lock real clients out; when every
  connection has a request in progress and reads, the new one is closed at once;
* **header size**: a request head over ``max_header_bytes`` is uvicorn's 400;
* the body timeout, the body and question size caps are the app's
  (:func:`~conductor_gym.serve.app.create_app`: 408, 413).

Logs are rate-limited (:mod:`conductor_gym.serve.logs`) on the ``uvicorn.error``,
``uvicorn.access``, ``asyncio`` and ``conductor_gym.serve`` loggers: one line per kind
per ``log_interval_s``. Binding an address other than loopback without a bearer token
logs a warning (:func:`exposure_warning`): anyone who reaches it spends the pool's
credits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import socket
from dataclasses import dataclass
from typing import Any, ClassVar

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from conductor_gym._validate import require_int
from conductor_gym.errors import ConfigurationError
from conductor_gym.serve.logs import DEFAULT_LOG_INTERVAL_S, limit_logs
from conductor_gym.workers.credentials import is_loopback_host

__all__ = [
    "LIMITED_LOGGERS",
    "GuardedH11Protocol",
    "ServerLimits",
    "exposure_warning",
    "run",
    "uvicorn_config",
]

LIMITED_LOGGERS = ("uvicorn.error", "uvicorn.access", "asyncio", "conductor_gym.serve")
"""The loggers whose records :func:`run` rate-limits."""

logger = logging.getLogger("conductor_gym.serve")


@dataclass(frozen=True)
class ServerLimits:
    """Connection limits of the server (module docstring).

    Attributes:
        header_timeout_s: Seconds a connection has to complete a request head.
        keep_alive_s: Seconds an idle keep-alive connection is kept.
        max_connections: Most connections open at once.
        max_header_bytes: Largest request head.
        write_timeout_s: Seconds a connection's responses may stay unread past
            ``max_unread_bytes`` before it is dropped.
        max_unread_bytes: Most response bytes held for a client that does not read.
    """

    header_timeout_s: float = 10.0
    keep_alive_s: float = 5.0
    max_connections: int = 512
    max_header_bytes: int = 16_384
    write_timeout_s: float = 10.0
    max_unread_bytes: int = 65_536

    def __post_init__(self) -> None:
        for name in ("header_timeout_s", "keep_alive_s", "write_timeout_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ConfigurationError(f"{name} must be a number of seconds > 0, got {value!r}")
            if not (math.isfinite(value) and value > 0):
                raise ConfigurationError(f"{name} must be a number of seconds > 0, got {value!r}")
        require_int("max_connections", self.max_connections)
        require_int("max_header_bytes", self.max_header_bytes, minimum=1024)
        require_int("max_unread_bytes", self.max_unread_bytes, minimum=16_384)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the header and write timeouts, the bound on unread
    responses and the connection cap of :attr:`limits` (module docstring);
    :func:`uvicorn_config` makes a subclass per server with its limits."""

    limits: ClassVar[ServerLimits] = ServerLimits()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._opened_at = self.loop.time()
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_cycle: Any = None
        self._write_timer: asyncio.TimerHandle | None = None
        self._stalled_at: float | None = None
        self._bound_unread(transport)
        self._arm_head_timer()
        self._enforce_cap()

    def _bound_unread(self, transport: asyncio.Transport) -> None:
        bound = self.limits.max_unread_bytes
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, bound // 4)
        transport.set_write_buffer_limits(high=bound // 2)

    def pause_writing(self) -> None:
        super().pause_writing()
        self._stalled_at = self.loop.time()
        if self._write_timer is None:
            self._write_timer = self.loop.call_later(
                self.limits.write_timeout_s, self._write_timed_out
            )

    def resume_writing(self) -> None:
        super().resume_writing()
        self._stalled_at = None
        if self._write_timer is not None:
            self._write_timer.cancel()
            self._write_timer = None

    def _write_timed_out(self) -> None:
        self._write_timer = None
        if self._stalled_at is not None and not self.transport.is_closing():
            self.transport.abort()  # close() would wait for the unread bytes forever
            logger.warning(
                "dropped a connection whose client read none of its responses for %g s",
                self.limits.write_timeout_s,
                extra={"limit_key": ("write_timeout",)},
            )

    def _drop(self) -> None:
        """Close the connection; abort it when unsent bytes would keep it open."""
        if self.transport.get_write_buffer_size():
            self.transport.abort()
        else:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self._in_request():
            self._disarm_head_timer()
        elif self._head_timer is None:
            self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        if getattr(self, "_write_timer", None) is not None:
            self._write_timer.cancel()  # type: ignore[union-attr]
            self._write_timer = None
        super().connection_lost(exc)

    def _in_request(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _arm_head_timer(self) -> None:
        self._head_cycle = self.cycle
        self._head_timer = self.loop.call_later(self.limits.header_timeout_s, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if getattr(self, "_head_timer", None) is not None:
            self._head_timer.cancel()  # type: ignore[union-attr]
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        # The cycle is the one of when the timer was armed: no request head since.
        idle = self.cycle is self._head_cycle and not self._in_request()
        if idle and not self.transport.is_closing():
            self._drop()

    def _enforce_cap(self) -> None:
        open_ = [c for c in self.connections if not c.transport.is_closing()]
        if len(open_) <= self.limits.max_connections:
            return
        others = [c for c in open_ if c is not self and isinstance(c, GuardedH11Protocol)]
        stalled = [c for c in others if c._stalled_at is not None]
        idle = [c for c in others if not c._in_request()]
        if stalled:
            min(stalled, key=lambda c: c._stalled_at or 0.0)._drop()
            kind, what = "stalled", "dropped the oldest connection that does not read"
        elif idle:
            min(idle, key=lambda c: c._opened_at)._drop()
            kind, what = "idle", "closed the oldest connection without a request in progress"
        else:
            self.transport.close()
            kind, what = "full", "every connection has a request in progress: refused a new one"
        logger.warning(
            "connection cap (%d) reached: %s",
            self.limits.max_connections,
            what,
            extra={"limit_key": ("connection_cap", kind)},
        )


def exposure_warning(host: str, api_key: str | None) -> str | None:
    """The warning for serving on ``host`` without a token, or ``None`` when ``host``
    is loopback or a token is set."""
    if api_key or is_loopback_host(host):
        return None
    return (
        f"serving on {host}, which is not a loopback address, without a bearer token: "
        "anyone who can reach it can run episodes on your pool's credits; set a token "
        "(conductor-gym serve: the variable named by --api-key-env) or bind 127.0.0.1"
    )


def uvicorn_config(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    limits: ServerLimits | None = None,
    log_level: str = "info",
    log_interval_s: float = DEFAULT_LOG_INTERVAL_S,
    **options: Any,
) -> uvicorn.Config:
    """uvicorn's config for ``app`` with ``limits`` (its own h11 protocol subclass), and
    the logs of :data:`LIMITED_LOGGERS` rate-limited; ``options`` go to
    ``uvicorn.Config``."""
    limits = limits or ServerLimits()
    protocol = type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        http=protocol,
        timeout_keep_alive=limits.keep_alive_s,  # type: ignore[arg-type]
        h11_max_incomplete_event_size=limits.max_header_bytes,
        log_level=log_level,
        **options,
    )
    # After uvicorn.Config, which configures its loggers.
    limit_logs(LIMITED_LOGGERS, log_interval_s)
    return config


def run(
    app: Any,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    api_key: str | None = None,
    limits: ServerLimits | None = None,
    log_level: str = "info",
    log_interval_s: float = DEFAULT_LOG_INTERVAL_S,
) -> None:
    """Serve ``app`` (built with ``api_key``, which is only checked here for the
    exposure warning) on ``host:port`` until interrupted (module docstring)."""
    config = uvicorn_config(
        app,
        host=host,
        port=port,
        limits=limits,
        log_level=log_level,
        log_interval_s=log_interval_s,
    )
    if (warning := exposure_warning(host, api_key)) is not None:
        logger.warning(warning)
    uvicorn.Server(config).run()
