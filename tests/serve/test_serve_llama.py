"""``conductor-gym serve`` with real workers: SmolLM2-135M on a llama.cpp server on
loopback (the session fixture ``llama_base_url``), reached through the LiteLLM backend.
The clients are the official ``openai`` package and LiteLLM itself. No test double:
failures are provoked for real (a closed port), and the ``llm:`` conductor is SmolLM2
too, which is far too small to write a valid plan (that is the point of its test)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
from llama_server import free_port
from serve_support import served
from support import require

from conductor_gym import RetryPolicy, WorkerSpec
from conductor_gym.core.prompts import DEFAULT_TEMPLATES

openai = require("openai")
serve = require("conductor_gym.serve")

QUESTION = "What is the capital of France? Answer in one word."
PRICE_IN, PRICE_OUT = 1.0, 2.0  # USD per million tokens
SHORT_PROMPT = dataclasses.replace(DEFAULT_TEMPLATES, examples=())


def _smol(name: str, api_base: str) -> WorkerSpec:
    return WorkerSpec(
        name,
        backend="litellm",
        model="openai/smollm2",
        max_tokens=24,
        temperature=0.0,
        price_in_per_mtok=PRICE_IN,
        price_out_per_mtok=PRICE_OUT,
        backend_options={"api_base": api_base, "timeout_s": 60},
    )


@pytest.fixture(scope="module")
def base_url(llama_base_url: str) -> Iterator[str]:
    require("litellm")
    api = f"{llama_base_url}/v1"
    pool = [_smol("smol-a", api), _smol("smol-b", api)]
    dead = [_smol("smol-dead", f"http://127.0.0.1:{free_port()}/v1")]
    llm = {
        "api_base": api,
        "max_tokens": 40,
        "price_in_per_mtok": PRICE_IN,
        "price_out_per_mtok": 0.0,
    }
    models = [
        serve.ConductorModel("reflect", "reflect:0:2", pool),
        serve.ConductorModel("broken", "single:0", dead, retry=RetryPolicy(2, 0.0, 0.0)),
        serve.ConductorModel(
            "smol-conductor",
            serve_agent("llm:openai/smollm2", **llm),
            pool,
            templates=SHORT_PROMPT,
        ),
    ]
    with served(models) as url:
        yield url


def serve_agent(spec: str, **kwargs: Any) -> Any:
    from conductor_gym.agents import make_agent

    return make_agent(spec, **kwargs)


def _check_answer(content: str, usage: Any, extension: dict[str, Any]) -> None:
    steps = extension["rounds"][0]["trace"]["steps"]
    assert [s["worker"] for s in steps] == ["smol-a", "smol-a"]
    assert content == steps[-1]["response"] and content.strip()
    assert QUESTION in steps[0]["messages"][0]["content"]
    completion_tokens = sum(s["completion_tokens"] for s in steps)
    assert 0 < completion_tokens <= 48  # llama.cpp's own counts, 24 per step at most
    assert usage.completion_tokens == completion_tokens  # a fixed plan costs no conductor
    cost = sum(s["prompt_tokens"] * PRICE_IN + s["completion_tokens"] * PRICE_OUT for s in steps)
    assert extension["cost_usd"] == pytest.approx(cost / 1e6)


def test_the_openai_client_gets_the_pools_answer(base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)
    assert sorted(m.id for m in client.models.list()) == ["broken", "reflect", "smol-conductor"]
    completion = client.chat.completions.create(
        model="reflect", messages=[{"role": "user", "content": QUESTION}], seed=1
    )
    _check_answer(
        completion.choices[0].message.content, completion.usage, completion.model_extra["conductor"]
    )


def test_litellm_as_a_client_gets_the_same_kind_of_answer(base_url: str) -> None:
    litellm = require("litellm")
    response = litellm.completion(
        model="openai/reflect",
        api_base=base_url,
        api_key="unused",
        messages=[{"role": "user", "content": QUESTION}],
        seed=2,
        num_retries=0,
    )
    extension = response.model_dump()["conductor"]  # LiteLLM keeps the extension field
    _check_answer(response.choices[0].message.content, response.usage, extension)


def test_a_dead_worker_is_a_502_naming_it_and_its_error_class(base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)
    with pytest.raises(openai.InternalServerError) as failed:
        client.chat.completions.create(
            model="broken", messages=[{"role": "user", "content": QUESTION}]
        )
    assert failed.value.status_code == 502
    error = failed.value.response.json()
    assert error["error"]["type"] == "worker_error"
    detail = error["conductor"]["error"]
    assert detail["worker"] == "smol-dead" and detail["attempts"] == 2 and detail["transient"]
    assert detail["error_type"] in error["error"]["message"]
    # LiteLLM reports a refused connection as its InternalServerError
    assert detail["error_type"] == "InternalServerError"
    assert "connection" in error["error"]["message"].lower()


def test_a_small_llm_conductors_bad_plan_is_an_error_with_its_usage(base_url: str) -> None:
    client = openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)
    with pytest.raises(openai.InternalServerError) as failed:  # 40 tokens hold no plan
        client.chat.completions.create(
            model="smol-conductor", messages=[{"role": "user", "content": QUESTION}]
        )
    body = failed.value.response.json()
    assert failed.value.status_code == 500 and body["error"]["type"] == "conductor_error"
    assert body["error"]["code"] == body["conductor"]["parse_error"]["reason"]
    (text,) = body["conductor"]["completions"]
    assert text.strip()
    spent = body["conductor"]["usage"]["conductor"]  # llama.cpp's counts for the prompt
    assert spent["prompt_tokens"] > 100 and 0 < spent["completion_tokens"] <= 40
    assert spent["cost_usd"] == pytest.approx(spent["prompt_tokens"] * PRICE_IN / 1e6)
