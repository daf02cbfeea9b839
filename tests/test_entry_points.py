"""Plug-in discovery: real distributions, pip-installed into a temporary ``--target``
folder put on ``sys.path``, offer agents, graders and reward schemes by entry point; the
registries find them by name, built-ins win, a broken or doubly offered entry point fails
with its own message, and once the folder is gone the names are unknown again."""

from __future__ import annotations

import importlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from conductor_gym.core.agent_spec import AGENTS, make_agent, spec_forms
from conductor_gym.core.reward import REWARD_SCHEMES, RewardScheme, make_reward_scheme
from conductor_gym.errors import ConfigurationError, UnknownNameError
from conductor_gym.graders.base import GRADERS, get_grader
from conductor_gym.registry import Registry
from conductor_gym.tasks import TASK_SOURCES
from conductor_gym.workers.spec import BACKENDS

REGISTRIES = (AGENTS, GRADERS, REWARD_SCHEMES, TASK_SOURCES, BACKENDS)

DEMO_MODULE = """
from conductor_gym.core.reward import RewardScheme
from conductor_gym.graders.base import Grade


class DemoAgent:
    def __init__(self, arg: str = "none", **kwargs: object) -> None:
        self.arg = arg
        self.kwargs = kwargs

    def act(self, observation, info):
        return "model_id = [0]\\nsubtasks = ['solve']\\naccess_list = [[]]"

    async def act_batch(self, observations, infos):
        return [self.act(o, i) for o, i in zip(observations, infos)]


def not_an_agent():
    return 42


def exact(response, reference, metadata):
    same = response.strip() == reference.strip()
    return Grade(correct=same, extracted=response.strip(), reason="exact match")


GENEROUS = RewardScheme(correct=1.0, wrong=0.75, invalid=0.0)
"""

DEMO_PYPROJECT = """
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "cg-plugin-demo"
version = "0.1.0"

[tool.setuptools]
py-modules = ["cg_plugin_demo"]

[project.entry-points."conductor_gym.agents"]
demo-agent = "cg_plugin_demo:DemoAgent"
demo-broken = "cg_plugin_demo_missing:DemoAgent"
demo-not-agent = "cg_plugin_demo:not_an_agent"
random = "cg_plugin_demo:DemoAgent"
twice = "cg_plugin_demo:DemoAgent"

[project.entry-points."conductor_gym.graders"]
demo-exact = "cg_plugin_demo:exact"

[project.entry-points."conductor_gym.rewards"]
demo-generous = "cg_plugin_demo:GENEROUS"
"""

RIVAL_PYPROJECT = """
[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "cg-plugin-rival"
version = "2.0.0"

[tool.setuptools]
py-modules = ["cg_plugin_rival"]

[project.entry-points."conductor_gym.agents"]
twice = "cg_plugin_rival:Agent"
"""


def _package(root: Path, pyproject: str, module: str, source: str) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text(textwrap.dedent(pyproject))
    (root / f"{module}.py").write_text(source)
    return root


@pytest.fixture(scope="module")
def target(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding the two plug-in distributions, installed there by pip."""
    work = tmp_path_factory.mktemp("plugins")
    demo = _package(work / "demo", DEMO_PYPROJECT, "cg_plugin_demo", DEMO_MODULE)
    rival = _package(work / "rival", RIVAL_PYPROJECT, "cg_plugin_rival", "Agent = None\n")
    site = work / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--disable-pip-version-check", "--target", str(site),
         str(demo), str(rival)],
        check=True, capture_output=True,
    )  # fmt: skip
    assert sorted(p.name for p in site.glob("*.dist-info")) == [
        "cg_plugin_demo-0.1.0.dist-info",
        "cg_plugin_rival-2.0.0.dist-info",
    ]
    return site


def _rescan_all() -> None:
    importlib.invalidate_caches()
    for registry in REGISTRIES:
        registry.rescan()


@pytest.fixture
def installed(target: Path) -> Iterator[Path]:
    """The plug-ins on ``sys.path`` for one test; gone again (and forgotten) after it."""
    sys.path.insert(0, str(target))
    _rescan_all()
    try:
        yield target
    finally:
        sys.path.remove(str(target))
        for name in ("cg_plugin_demo", "cg_plugin_rival"):
            sys.modules.pop(name, None)
        _rescan_all()


def test_an_installed_agent_is_built_by_name_with_or_without_its_argument(
    installed: Path,
) -> None:
    agent = make_agent("demo-agent", seed=3)
    assert type(agent).__name__ == "DemoAgent"
    assert (agent.arg, agent.kwargs) == ("none", {"seed": 3})  # type: ignore[attr-defined]
    assert make_agent("demo-agent:a:b").arg == "a:b"  # type: ignore[attr-defined]
    assert "demo-agent" in AGENTS and "demo-agent" in AGENTS.names()
    assert "demo-agent[:<arg>]" in spec_forms()
    with pytest.raises(ConfigurationError, match=r"give the argument after 'demo-agent:'"):
        make_agent("demo-agent:")


def test_an_installed_grader_and_reward_scheme_are_found_by_name(installed: Path) -> None:
    grade = get_grader("demo-exact")(" 42 ", "42", {})
    assert grade.correct and grade.reason == "exact match"
    assert "demo-exact" in GRADERS.names()
    assert make_reward_scheme("demo-generous") == RewardScheme(correct=1.0, wrong=0.75)
    assert make_reward_scheme("demo-generous:2").cost_lambda == 2.0


def test_a_built_in_name_wins_over_a_plugin_of_the_same_name(installed: Path) -> None:
    built_in = type(make_agent("random"))
    assert (built_in.__module__, built_in.__name__) == (
        "conductor_gym.agents.random_planner",
        "RandomPlanner",
    )
    assert "random[:<arg>]" not in spec_forms()


def test_an_entry_point_that_fails_to_import_names_its_distribution(installed: Path) -> None:
    with pytest.raises(ConfigurationError) as caught:
        make_agent("demo-broken")
    assert str(caught.value) == (
        "agent: agent 'demo-broken': cannot load the plug-in entry point "
        "'demo-broken = cg_plugin_demo_missing:DemoAgent' of group 'conductor_gym.agents' in "
        "distribution cg-plugin-demo 0.1.0: ModuleNotFoundError: "
        "No module named 'cg_plugin_demo_missing'"
    )
    assert isinstance(caught.value.__cause__, ModuleNotFoundError)


def test_a_plugin_that_builds_no_agent_is_refused(installed: Path) -> None:
    with pytest.raises(TypeError, match=r"the plug-in 'demo-not-agent' built a int, which lacks"):
        make_agent("demo-not-agent")


def test_a_name_offered_by_two_distributions_names_both(installed: Path) -> None:
    with pytest.raises(ConfigurationError, match="offered by several installed plug-ins") as caught:
        make_agent("twice")
    message = str(caught.value)
    assert "distribution cg-plugin-demo 0.1.0" in message
    assert "'twice = cg_plugin_rival:Agent'" in message
    assert "distribution cg-plugin-rival 2.0.0" in message


def test_once_uninstalled_the_names_are_unknown_and_the_known_ones_listed(target: Path) -> None:
    _rescan_all()
    with pytest.raises(
        ConfigurationError, match=r"unknown agent 'demo-agent'; valid forms: random"
    ):
        make_agent("demo-agent")
    with pytest.raises(UnknownNameError) as caught:
        get_grader("demo-exact")
    assert str(caught.value).startswith("grader: unknown grader 'demo-exact'; registered: [")
    assert "'numeric'" in str(caught.value) and "demo-exact" not in GRADERS.names()


def test_a_registry_without_a_group_reads_no_entry_points(installed: Path) -> None:
    registry: Registry[object] = Registry("agent", field="agent")
    assert registry.names() == [] and "demo-agent" not in registry
