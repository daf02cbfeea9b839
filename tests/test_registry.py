"""One registry shape: lazy ``module:attr`` targets, duplicates raise, names listed, and
every registry of the library is one."""

from __future__ import annotations

import sys

import pytest

from conductor_gym.core.agent_spec import AGENTS
from conductor_gym.core.reward import REWARD_SCHEMES
from conductor_gym.errors import ConfigurationError, UnknownNameError
from conductor_gym.graders.base import GRADERS
from conductor_gym.pool.pool import POOL_PRESETS
from conductor_gym.registry import Registry
from conductor_gym.tasks import TASK_SOURCES
from conductor_gym.workers.spec import BACKENDS


def test_a_lazy_target_is_imported_on_first_use() -> None:
    registry: Registry[object] = Registry("thing", field="thing")
    registry.register("dumps", "json.decoder:JSONDecoder.decode")
    assert "dumps" in registry and registry.names() == ["dumps"]
    import json.decoder

    assert registry.get("dumps") is json.decoder.JSONDecoder.decode


def test_a_taken_name_raises_and_the_same_target_again_does_not() -> None:
    registry: Registry[object] = Registry("thing", field="thing")
    registry.register("a", "json:dumps")
    registry.register("a", "json:dumps")  # a module imported twice
    with pytest.raises(ConfigurationError, match="thing 'a' is already registered") as caught:
        registry.register("a", "json:loads")
    assert caught.value.field == "thing"


def test_an_unknown_name_lists_the_registered_ones() -> None:
    registry: Registry[object] = Registry("thing", field="thing")
    registry.register("b", 2)
    registry.register("a", 1)
    with pytest.raises(UnknownNameError, match=r"unknown thing 'c'; registered: \['a', 'b'\]"):
        registry.get("c")
    assert isinstance(registry.unknown("c"), KeyError)


@pytest.mark.parametrize(
    ("registry", "name"),
    [
        (BACKENDS, "simulated"),
        (TASK_SOURCES, "offline"),
        (GRADERS, "numeric"),
        (REWARD_SCHEMES, "paper"),
        (AGENTS, "random"),
    ],
)
def test_every_registry_of_the_library_rejects_duplicates(
    registry: Registry[object], name: str
) -> None:
    assert isinstance(registry, Registry) and name in registry.names()
    with pytest.raises(ConfigurationError, match="already registered"):
        registry.register(name, "json:dumps")
    assert isinstance(POOL_PRESETS, Registry)


def test_registering_agents_imports_no_agent_module() -> None:
    import subprocess

    code = (
        "import sys, conductor_gym.core.agent_spec as s\n"
        "print(sorted(s.AGENTS.names()), 'conductor_gym.agents' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names, imported = out.stdout.rsplit(" ", 1)
    assert "random" in names and imported.strip() == "False"


def test_discovery_runs_once_at_the_first_lookup_it_is_needed_for() -> None:
    calls: list[str] = []
    registry: Registry[object] = Registry("thing", field="thing")

    def discover() -> None:
        calls.append("discover")
        registry.register("found", 1)
        assert "found" in registry.names()  # a lookup while discovering does not recurse

    registry._discover_with = discover  # as Registry(..., discover=discover) sets it
    registry.register("given", 2)
    assert calls == [] and registry.get("given") == 2  # a held name: no discovery
    assert registry.get("found") == 1 and calls == ["discover"]
    assert registry.names() == ["found", "given"] and "missing" not in registry
    assert calls == ["discover"]


def test_a_failed_discovery_is_raised_and_runs_again_at_the_next_lookup() -> None:
    attempts: list[int] = []

    def discover() -> None:
        attempts.append(1)
        if len(attempts) == 1:
            raise RuntimeError("a broken module")
        registry.register("found", 1)

    registry: Registry[object] = Registry("thing", field="thing", discover=discover)
    with pytest.raises(RuntimeError, match="a broken module"):
        registry.names()
    assert "found" in registry and len(attempts) == 2


def test_what_discovery_registers_wins_over_an_installed_plugin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from importlib.metadata import EntryPoint

    offered = [EntryPoint("numeric", "json:loads", "test.discovery")]
    monkeypatch.setattr("importlib.metadata.entry_points", lambda group: offered)
    registry: Registry[object] = Registry(
        "thing", group="test.discovery", discover=lambda: registry.register("numeric", "json:dumps")
    )
    import json

    assert registry.get("numeric") is json.dumps
