"""The server's counters, rendered in Prometheus's text exposition format (``GET /metrics``).

:class:`Metrics` counts what the app does; :meth:`Metrics.render` writes the families
below in the text format (version 0.0.4) any Prometheus scraper reads. The app updates
it on its event loop only, so it holds no lock.

=============================================  =========  ==============================
family                                         type       labels
=============================================  =========  ==============================
``conductor_gym_serve_requests_total``         counter    ``route``, ``status``
``conductor_gym_serve_episodes_total``         counter    ``model``, ``result``
``conductor_gym_serve_episodes_in_flight``     gauge      ``model``
``conductor_gym_serve_requests_waiting``       gauge      (none)
``conductor_gym_serve_episode_seconds``        histogram  ``model``
``conductor_gym_serve_tokens_total``           counter    ``model``, ``party``, ``kind``
``conductor_gym_serve_cost_usd_total``         counter    ``model``
=============================================  =========  ==============================

``route`` is the route's template (``/v1/chat/completions``, ``/v1/models/{model}``,
...; ``other`` for a path no route serves, so clients cannot grow the label set);
``result`` is ``answered`` or the error code of a failed episode (``worker_failed``,
``budget_exhausted``, ...); ``party`` is ``conductor`` or ``workers`` and ``kind``
``prompt`` or ``completion``. A failed episode's tokens and cost (what it spent before
failing) count too.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["CONTENT_TYPE", "LATENCY_BUCKETS_S", "ROUTES", "Metrics", "route_label"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The media type of the text format."""
LATENCY_BUCKETS_S = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""Upper bounds of the episode latency histogram, in seconds (``+Inf`` follows)."""
ROUTES = (
    "/health",
    "/metrics",
    "/v1/models",
    "/v1/chat/completions",
    "/v1/completions",
)
"""The routes counted by name; ``/v1/models/<id>`` counts as ``/v1/models/{model}``."""

_PREFIX = "conductor_gym_serve_"


def route_label(path: str) -> str:
    """The ``route`` label of a request path."""
    if path in ROUTES:
        return path
    if path.startswith("/v1/models/"):
        return "/v1/models/{model}"
    return "other"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(names: Sequence[str], values: Sequence[Any]) -> str:
    if not names:
        return ""
    pairs = ",".join(f'{n}="{_escape(str(v))}"' for n, v in zip(names, values, strict=True))
    return "{" + pairs + "}"


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if isinstance(value, float) else str(value)


class _Histogram:
    def __init__(self) -> None:
        self.buckets = [0] * len(LATENCY_BUCKETS_S)
        self.count = 0
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.count += 1
        self.sum += value
        for i, bound in enumerate(LATENCY_BUCKETS_S):
            if value <= bound:
                self.buckets[i] += 1


class Metrics:
    """The counters of one app (module docstring).

    Args:
        models: The served models' names: their series exist (at zero) from the start.
    """

    def __init__(self, models: Iterable[str]) -> None:
        self.models = tuple(models)
        self.requests: Counter[tuple[str, int]] = Counter()
        self.episodes: Counter[tuple[str, str]] = Counter()
        self.in_flight: Counter[str] = Counter({m: 0 for m in self.models})
        self.waiting = 0
        self.latency = {m: _Histogram() for m in self.models}
        self.tokens: Counter[tuple[str, str, str]] = Counter(
            {(m, p, k): 0 for m in self.models for p in _PARTIES for k in _KINDS}
        )
        self.cost_usd: dict[str, float] = dict.fromkeys(self.models, 0.0)

    def request(self, path: str, status: int) -> None:
        """Count one response of ``status`` to a request for ``path``."""
        self.requests[route_label(path), status] += 1

    def started(self, model: str) -> None:
        """An episode of ``model`` began."""
        self.in_flight[model] += 1

    def finished(
        self, model: str, result: str, seconds: float, spent: Mapping[str, Any] | None
    ) -> None:
        """An episode of ``model`` ended with ``result`` after ``seconds``; ``spent`` is
        ``{"conductor": usage, "workers": usage}`` (each ``TokenUsage.to_dict()``), or
        ``None`` when unknown."""
        self.in_flight[model] -= 1
        self.episodes[model, result] += 1
        self.latency[model].observe(seconds)
        for party, usage in (spent or {}).items():
            if party not in _PARTIES or not isinstance(usage, Mapping):
                continue
            for kind in _KINDS:
                self.tokens[model, party, kind] += int(usage.get(f"{kind}_tokens", 0))
            self.cost_usd[model] += float(usage.get("cost_usd", 0.0))

    def render(self) -> str:
        """Every family in the text exposition format."""
        lines: list[str] = []

        def family(name: str, kind: str, help_: str) -> str:
            full = _PREFIX + name
            lines.extend([f"# HELP {full} {help_}", f"# TYPE {full} {kind}"])
            return full

        def samples(name: str, labels: Sequence[str], values: Mapping[Any, float]) -> None:
            for label_values, value in sorted(values.items()):
                row = label_values if isinstance(label_values, tuple) else (label_values,)
                lines.append(f"{name}{_labels(labels, row)} {_number(value)}")

        name = family("requests_total", "counter", "HTTP responses, by route and status.")
        samples(name, ("route", "status"), self.requests)
        name = family("episodes_total", "counter", "Episodes played, by model and result.")
        samples(name, ("model", "result"), self.episodes)
        name = family("episodes_in_flight", "gauge", "Episodes being played now.")
        samples(name, ("model",), self.in_flight)
        name = family("requests_waiting", "gauge", "Requests waiting for an episode slot.")
        lines.append(f"{name} {self.waiting}")
        name = family("episode_seconds", "histogram", "Seconds an episode took.")
        for model, histogram in sorted(self.latency.items()):
            for bound, count in zip(LATENCY_BUCKETS_S, histogram.buckets, strict=True):
                lines.append(f"{name}_bucket{_labels(('model', 'le'), (model, bound))} {count}")
            lines.append(
                f"{name}_bucket{_labels(('model', 'le'), (model, '+Inf'))} {histogram.count}"
            )
            lines.append(f"{name}_sum{_labels(('model',), (model,))} {_number(histogram.sum)}")
            lines.append(f"{name}_count{_labels(('model',), (model,))} {histogram.count}")
        name = family("tokens_total", "counter", "Tokens spent, by model, party and kind.")
        samples(name, ("model", "party", "kind"), self.tokens)
        name = family("cost_usd_total", "counter", "US dollars spent, by model.")
        samples(name, ("model",), self.cost_usd)
        return "\n".join(lines) + "\n"


_PARTIES = ("conductor", "workers")
_KINDS = ("prompt", "completion")
