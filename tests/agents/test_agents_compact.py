"""``compact:<path>`` (:class:`CompactPolicy`): a compact-action policy file played as a
conductor. It reads the family and the drawn worker *names*, so a policy that prefers a
name asks it wherever the episode lists it; it is deterministic, writes the templates'
subtasks, plays through ``evaluate``, and refuses a missing or foreign file and an
episode it cannot read, naming what to fix. Importing it imports no torch."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from conductor_gym.agents import CompactPolicy, make_agent

from conductor_gym import ConductorEnv, EnvConfig, parse_plan
from conductor_gym.bench.evaluate import evaluate
from conductor_gym.core.compact_action import RoleTemplates
from conductor_gym.training.compact_network import PolicyShape, build_network, save_policy

torch = pytest.importorskip("torch")

NAMES = (
    "gemini-2.5-pro",
    "claude-sonnet-4",
    "gpt-5",
    "deepseek-r1-distill-qwen-32b",
    "gemma-3-27b-it",
    "qwen3-32b-thinking",
    "qwen3-32b-direct",
)
FAMILIES = ("arithmetic", "countdown", "multiple_choice", "program_trace")
RANDOMISED = EnvConfig(pool="sim-paper", k=4, shuffle_workers=True)


def a_policy(tmp_path: Path, favourite: str = "gpt-5", steps: int = 2) -> Path:
    """A policy that writes ``steps``-step plans: ``favourite`` attempts (when drawn),
    then checks with access to every step."""
    shape = PolicyShape(
        families=FAMILIES, names=NAMES, k=4, max_steps=5, roles=RoleTemplates().roles,
        hidden=8, sequential_workers=True,
    )  # fmt: skip
    network = build_network(shape)
    with torch.no_grad():
        for parameter in network.parameters():
            parameter.zero_()
        network.length.bias[steps - 1] = 5.0
        network.quality.bias[NAMES.index(favourite)] = 5.0
        roles = len(shape.roles)
        check = list(shape.roles).index("check")
        network.role.bias.view(4, roles)[:, check] = 5.0
    return save_policy(tmp_path / "policy.pt", network, shape)


def test_it_asks_the_favoured_name_wherever_the_episode_lists_it(tmp_path: Path) -> None:
    agent = make_agent(f"compact:{a_policy(tmp_path)}")
    assert isinstance(agent, CompactPolicy)
    env = ConductorEnv(RANDOMISED)
    positions = set()
    drawn = 0
    for seed in range(40):
        obs, info = env.reset(seed=seed)
        text = agent.act(obs, info)
        assert agent.act(obs, info) == text  # greedy: the same plan every time
        plan = parse_plan(text, num_workers=4)
        assert len(plan.model_ids) == 2
        assert plan.subtasks[0] == info["question"] and plan.access == ((), "all")
        assert plan.subtasks[1] == RoleTemplates().roles["check"]
        if "gpt-5" in info["pool"]:
            drawn += 1
            assert plan.model_ids[0] == info["pool"].index("gpt-5")
            positions.add(plan.model_ids[0])
        _, _, terminated, _, step = env.step(text)
        assert terminated and step["parse_error"] is None
    assert drawn >= 10 and len(positions) >= 3  # ids were shuffled; the name was followed


def test_it_plays_through_evaluate_and_records_its_hash(tmp_path: Path) -> None:
    path = a_policy(tmp_path, steps=1)
    results = evaluate(
        f"compact:{path}", "offline-160", limit=8, repeats=1, progress=False,
        pool="sim-paper", k=4, shuffle_workers=True,
    )  # fmt: skip
    assert results.agent["spec"] == f"compact:{path}"
    assert len(results.agent["checkpoint_sha256"]) == 64
    overall = results.metrics["overall"]
    assert overall.n == 8 and overall.mean_steps == 1.0 and overall.parse_failure_rate == 0.0


def test_refusals_name_what_to_fix(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no such file"):
        make_agent(f"compact:{tmp_path / 'missing.pt'}")
    foreign = tmp_path / "foreign.pt"
    torch.save({"weights": [1, 2]}, foreign)
    with pytest.raises(ValueError, match="not a compact policy file"):
        make_agent(f"compact:{foreign}")
    text = tmp_path / "text.pt"
    text.write_text("hello")
    with pytest.raises(ValueError, match="not a compact policy file"):
        make_agent(f"compact:{text}")
    agent = make_agent(f"compact:{a_policy(tmp_path)}")
    env = ConductorEnv(EnvConfig(pool="sim-paper", k=3, shuffle_workers=True))
    obs, info = env.reset(seed=0)
    with pytest.raises(ValueError, match="reads k=4"):
        agent.act(obs, info)
    obs, info = ConductorEnv(RANDOMISED).reset(seed=0)
    with pytest.raises(ValueError, match="max_steps=5"):
        agent.act(obs, {**info, "max_steps": 3})


def test_importing_it_imports_no_torch() -> None:
    code = (
        "import sys, conductor_gym.agents.compact_policy, conductor_gym.training.compact_network; "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
