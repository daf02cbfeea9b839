"""``llm:<model>`` against a real OpenAI-compatible server: llama.cpp on loopback serving
SmolLM2-135M (the session fixture ``llama_base_url``). SmolLM2 is far too small to write
good plans, which is what the env's parse reasons are for. To keep a 1-thread CPU server
quick, the envs use the conductor prompt without its few-shot examples (about 400
tokens instead of 1500) and completions are short."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from conductor_gym.agents import AgentError, LLMConductor, make_agent
from llama_server import free_port
from support import require

from conductor_gym import ConductorEnv, RetryPolicy
from conductor_gym.core.prompts import DEFAULT_TEMPLATES
from conductor_gym.plan import REASONS

MAX_TOKENS = 40
PRICES = {"price_in_per_mtok": 1.0, "price_out_per_mtok": 2.0}
SHORT_PROMPT = dataclasses.replace(DEFAULT_TEMPLATES, examples=())


def _env() -> ConductorEnv:
    return ConductorEnv(templates=SHORT_PROMPT)


@pytest.fixture(scope="module")
def agent(llama_base_url: str) -> LLMConductor:
    require("litellm")
    built = make_agent(
        "llm:openai/smollm2", api_base=f"{llama_base_url}/v1", max_tokens=MAX_TOKENS, **PRICES
    )
    assert isinstance(built, LLMConductor)
    return built


def _check_scored(reward: float, info: dict[str, object]) -> bool:
    """The env's verdict on a completion is consistent; returns whether it was invalid."""
    assert reward in (0.0, 0.5, 1.0)
    error = info["parse_error"]
    if error is not None:
        assert reward == 0.0 and info["outcome"] == "invalid"
        assert error["reason"] in (*REASONS, "empty_plan")  # type: ignore[index]
        return True
    assert info["outcome"] in ("correct", "wrong")
    return False


def test_round_trip_is_scored_and_accounted(agent: LLMConductor) -> None:
    env = _env()
    obs, info = env.reset(seed=0)
    before = agent.usage
    text = agent.act(obs, info)
    usage = agent.usage
    assert isinstance(text, str) and text.strip()
    assert usage.calls == before.calls + 1
    call = agent.completions[-1]
    assert call.text == text and call.prompt_tokens > 300  # the whole conductor prompt
    assert 0 < call.completion_tokens <= MAX_TOKENS
    expected_cost = (call.prompt_tokens * 1.0 + call.completion_tokens * 2.0) / 1e6
    assert call.cost_usd == pytest.approx(expected_cost)
    assert usage.prompt_tokens - before.prompt_tokens == call.prompt_tokens
    assert [u.calls for u in agent.last_usage] == [1]
    _, reward, terminated, truncated, step_info = env.step(text)
    assert terminated and not truncated
    _check_scored(reward, step_info)


def test_act_batch_runs_concurrently_and_bad_plans_score_zero(agent: LLMConductor) -> None:
    envs = [_env(), _env()]
    resets = [env.reset(seed=seed) for env, seed in zip(envs, (1, 2), strict=True)]
    calls_before = agent.usage.calls
    texts = asyncio.run(agent.act_batch([o for o, _ in resets], [i for _, i in resets]))
    assert len(texts) == 2 and all(isinstance(t, str) for t in texts)
    assert agent.usage.calls == calls_before + 2
    assert len(agent.last_usage) == 2
    assert all(u.calls == 1 and u.prompt_tokens > 0 < u.completion_tokens for u in agent.last_usage)
    invalid = [_check_scored(*env.step(t)[1::3]) for env, t in zip(envs, texts, strict=True)]
    # 40 tokens of a 135M model never complete the three lists (or name valid ids).
    assert any(invalid)


def test_format_retries_resample_an_unparsable_plan(llama_base_url: str) -> None:
    require("litellm")
    agent = LLMConductor(
        "openai/smollm2",
        api_base=f"{llama_base_url}/v1",
        max_tokens=8,
        format_retries=1,
        seed=5,
        **PRICES,
    )
    obs, info = _env().reset(seed=0)
    agent.act(obs, info)  # 8 tokens cannot hold a plan: one resample, two calls
    assert agent.usage.calls == 2 and agent.last_usage[0].calls == 2


def test_a_closed_port_raises_after_the_retries() -> None:
    require("litellm")
    agent = LLMConductor(
        "openai/smollm2",
        api_base=f"http://127.0.0.1:{free_port()}/v1",
        retry=RetryPolicy(max_attempts=2, base_delay_s=0.0),
        timeout_s=10,
    )
    obs, info = _env().reset(seed=0)
    with pytest.raises(
        AgentError, match=r"llm:openai/smollm2: no completion after 2 attempt"
    ) as err:
        agent.act(obs, info)
    assert err.value.transient
    assert agent.usage.calls == 0 and agent.usage.failed_attempts == 2 and not agent.completions
