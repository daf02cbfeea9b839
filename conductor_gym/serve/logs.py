"""Rate-limited logs for the server: a flood of bad requests is a few lines, not megabytes.

:class:`RateLimitedLog` is a :class:`logging.Filter` that passes the first record of
each *kind* per interval and counts the rest; the next record of that kind to pass
says how many were suppressed. A kind is the record's ``limit_key`` attribute when it
has one (the app sets ``("client", status, code)`` for a client error), otherwise its
exception class when it carries one, otherwise its logger and message template. Only
warnings and errors are limited, and access-log lines of responses with status 400 or
more (uvicorn's ``uvicorn.access`` records, keyed by status); other records pass. At
most :data:`MAX_KINDS` kinds are tracked per filter; records of further kinds share one.
A record that passes keeps its traceback: at most one traceback per kind per interval.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from conductor_gym.errors import ConfigurationError

__all__ = ["DEFAULT_LOG_INTERVAL_S", "MAX_KINDS", "RateLimitedLog", "limit_logs"]

DEFAULT_LOG_INTERVAL_S = 10.0
"""Seconds during which a second record of the same kind is suppressed."""
MAX_KINDS = 256
"""Most kinds tracked by one filter."""


@dataclass
class _Kind:
    since: float
    suppressed: int = 0


class RateLimitedLog(logging.Filter):
    """One record per kind per ``interval_s`` seconds (module docstring)."""

    def __init__(
        self,
        interval_s: float = DEFAULT_LOG_INTERVAL_S,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__()
        if not (interval_s >= 0):
            raise ConfigurationError(f"log interval_s must be a number >= 0, got {interval_s!r}")
        self.interval_s = float(interval_s)
        self._clock = clock
        self._kinds: dict[Hashable, _Kind] = {}
        self._lock = threading.Lock()

    def _key(self, record: logging.LogRecord) -> Hashable | None:
        """The record's kind, or ``None`` for one that is never limited."""
        key = getattr(record, "limit_key", None)
        if key is not None:
            return ("key", record.name, key)
        if record.name == "uvicorn.access":
            status = record.args[4] if _is_access(record) else None  # type: ignore[index]
            if isinstance(status, int) and status >= 400:
                return ("access", status)
            return None
        if record.levelno < logging.WARNING:
            return None
        if record.exc_info and record.exc_info[0] is not None:
            return ("exception", record.name, record.exc_info[0].__qualname__)
        return ("message", record.name, str(record.msg))

    def filter(self, record: logging.LogRecord) -> bool:
        key = self._key(record)
        if key is None:
            return True
        now = self._clock()
        with self._lock:
            if key not in self._kinds and len(self._kinds) >= MAX_KINDS:
                key = ("other", record.name)
            kind = self._kinds.get(key)
            if kind is not None and now - kind.since < self.interval_s:
                kind.suppressed += 1
                return False
            suppressed = kind.suppressed if kind is not None else 0
            self._kinds[key] = _Kind(since=now)
        if suppressed:
            _note(record, f"[{suppressed} more like this suppressed in {self.interval_s:g} s]")
        return True


def _note(record: logging.LogRecord, note: str) -> None:
    """Add ``note`` to ``record`` so that any formatter shows it and none breaks.

    The record's ``args`` are kept as they are: a formatter may read them rather than the
    message (uvicorn's access formatter unpacks its five and ignores ``msg``; replacing
    them made it raise, and print ``--- Logging error ---`` with a traceback). So an
    access record gets the note after its client address, which every formatter of it
    shows; any other gets it at the end of its message, ``%`` escaped for its ``args``.
    """
    if _is_access(record):
        client, *rest = record.args  # type: ignore[misc]
        record.args = (f"{client} {note}", *rest)
    elif record.args:
        record.msg = f"{record.msg} {note.replace('%', '%%')}"
    else:
        record.msg = f"{record.msg} {note}"


def _is_access(record: logging.LogRecord) -> bool:
    """A uvicorn access-log record: ``(client, method, path, http_version, status)``."""
    args = record.args
    return record.name == "uvicorn.access" and isinstance(args, tuple) and len(args) == 5


def limit_logs(names: Iterable[str], interval_s: float = DEFAULT_LOG_INTERVAL_S) -> None:
    """Put a :class:`RateLimitedLog` on each named logger (once: a logger that has one
    gets ``interval_s`` instead). Filters act on records logged at that logger itself."""
    for name in names:
        logger = logging.getLogger(name)
        present = [f for f in logger.filters if isinstance(f, RateLimitedLog)]
        if present:
            for limiter in present:
                limiter.interval_s = float(interval_s)
        else:
            logger.addFilter(RateLimitedLog(interval_s))
