"""The simulated backend's fitted cost model (``tokens``, ``latency_base_s``,
``tokens_per_s``): absent, nothing changes; present, a call's tokens and latency follow
it; a bad value is refused naming the option."""

from __future__ import annotations

import asyncio
import re

import pytest

from conductor_gym.sim.versions import DEFAULT_VERSION
from conductor_gym.sim.worker import make_simulated_worker
from conductor_gym.tasks import make_task_source
from conductor_gym.workers.spec import WorkerSpec


def _calls(options: dict[str, object], n: int = 200) -> list[tuple[int, float]]:
    worker = make_simulated_worker(WorkerSpec("w", model="gpt-5", backend_options=options))
    task = next(t for t in make_task_source("offline") if t.domain == "arithmetic")
    bound = worker.for_task(task)
    messages = [{"role": "user", "content": task.question}]
    out = []
    for seed in range(n):
        c = asyncio.run(bound.complete(messages, max_tokens=100_000, temperature=0.2, seed=seed))
        out.append((c.completion_tokens, c.latency_s))
    return out


def test_without_the_options_nothing_changes() -> None:
    assert _calls({}) == _calls({"version": DEFAULT_VERSION})


def test_fitted_tokens_and_latency_are_used() -> None:
    options = {"tokens": {"math500": 50.0}, "latency_base_s": 2.0, "tokens_per_s": 10.0}
    calls = _calls(options)
    mean = sum(t for t, _ in calls) / len(calls)
    assert 44 < mean < 56  # gpt-5's math500 mean is 600 without the option
    assert all(lat == pytest.approx(2.0 + t / 10.0) for t, lat in calls)


@pytest.mark.parametrize(
    ("options", "field"),
    [
        ({"tokens": {"math500": 0}}, "tokens['math500']"),
        ({"tokens": [1, 2]}, "tokens"),
        ({"latency_base_s": -1.0}, "latency_base_s"),
        ({"tokens_per_s": "fast"}, "tokens_per_s"),
    ],
)
def test_bad_values_name_the_option(options: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"backend_options.{field}")):
        make_simulated_worker(WorkerSpec("w", model="gpt-5", backend_options=options))
