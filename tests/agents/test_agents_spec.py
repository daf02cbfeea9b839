"""Agent specs: the grammar of make_agent, its errors, and agents loaded from a file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conductor_gym.agents import (
    SPEC_FORMS,
    Agent,
    Consensus,
    LLMConductor,
    MixtureOfAgents,
    RandomPlanner,
    SelfReflection,
    SingleWorker,
    make_agent,
)

from conductor_gym import ConductorEnv, parse_plan


def test_each_form_builds_its_agent() -> None:
    assert isinstance(make_agent("random", seed=3), RandomPlanner)
    single = make_agent("single:2")
    assert isinstance(single, SingleWorker) and single.worker == 2
    reflect = make_agent("reflect:1:4", see_all=True)
    assert isinstance(reflect, SelfReflection) and (reflect.worker, reflect.rounds) == (1, 4)
    consensus = make_agent("consensus:0:2")
    assert isinstance(consensus, Consensus) and consensus.samples == 2
    assert isinstance(make_agent("moa", aggregator=2), MixtureOfAgents)
    # The model string is the rest of the spec, colons included.
    llm = make_agent("llm:ollama/llama3:8b", api_base="http://127.0.0.1:1/v1")
    assert isinstance(llm, LLMConductor) and llm.model == "ollama/llama3:8b"
    assert llm.name == llm.spec == "llm:ollama/llama3:8b"


@pytest.mark.parametrize(
    ("spec", "why"),
    [
        ("", "non-empty string"),
        ("smart", "unknown agent 'smart'"),
        ("single", "'single' takes 1 integer field"),
        ("single:x", "'x' is not an integer >= 0"),
        ("single:-1", "'-1' is not an integer >= 0"),
        ("single:1:2", "'single' takes 1 integer field"),
        ("reflect:0", "'reflect' takes 2 integer field"),
        ("reflect:0:0", "'0' is not an integer >= 1"),
        ("consensus:a:3", "'a' is not an integer >= 0"),
        ("random:3", "'random' takes no ':' fields"),
        ("moa:7", "'moa' takes no ':' fields"),
        ("llm:", "give a LiteLLM model string after 'llm:'"),
        ("policy: ", "give a checkpoint path after 'policy:'"),
        ("plan:", "give a plan file path (the three lists, subtasks holding {question}) after"),
        ("agent.py", "a file spec needs the class after the file"),
    ],
)
def test_malformed_specs_name_the_spec_and_the_valid_forms(spec: str, why: str) -> None:
    with pytest.raises(ValueError) as caught:
        make_agent(spec)
    message = str(caught.value)
    assert f"agent spec {spec!r}" in message and why in message
    assert message.endswith("valid forms: " + ", ".join(SPEC_FORMS))


AGENT_FILE = '''
from conductor_gym.agents import BaseAgent


class EchoAgent(BaseAgent):
    """Asks Model 0 to answer, with a configurable preamble."""

    def __init__(self, preamble: str = "Plan:") -> None:
        self.preamble = preamble

    def act(self, observation, info):
        subtask = "Answer: " + info["question"]
        return f"{self.preamble}\\nmodel_id = [0]\\nsubtasks = [{subtask!r}]\\naccess_list = [[]]"


class NotAnAgent:
    pass
'''


def test_an_agent_class_loads_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "my_agents.py"
    path.write_text(AGENT_FILE)
    agent = make_agent(f"{path}:EchoAgent", preamble="Mine.")
    assert isinstance(agent, Agent)
    env = ConductorEnv()
    obs, info = env.reset(seed=0)
    action = agent.act(obs, info)
    assert action.startswith("Mine.") and len(parse_plan(action, 7, 5)) == 1
    assert env.step(action)[4]["outcome"] in ("correct", "wrong")
    # The file is imported once: a second agent comes from the same module.
    assert type(make_agent(f"{path}:EchoAgent")) is type(agent)


def test_file_spec_errors(tmp_path: Path) -> None:
    path = tmp_path / "my_agents.py"
    path.write_text(AGENT_FILE)
    with pytest.raises(ValueError, match=r"defines no class or function 'Missing'; valid forms"):
        make_agent(f"{path}:Missing")
    with pytest.raises(ValueError, match=r"no such file .*nowhere\.py"):
        make_agent(f"{tmp_path}/nowhere.py:EchoAgent")
    with pytest.raises(TypeError, match=r"built a NotAnAgent, which lacks act"):
        make_agent(f"{path}:NotAnAgent")


def test_importing_and_building_agents_loads_no_model_library() -> None:
    code = (
        "import sys\n"
        "from conductor_gym.agents import make_agent\n"
        "make_agent('llm:openai/gpt-5'); make_agent('moa'); make_agent('reflect:0:5')\n"
        "heavy = ('torch', 'transformers', 'vllm', 'litellm')\n"
        "print([m for m in heavy if m in sys.modules])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
