"""``conductor-gym serve`` next to vLLM's and LiteLLM's servers (issue 26, item 3): the
official ``openai`` client (sync, async, streaming) and LiteLLM as clients of a real
uvicorn server on loopback, over the simulated pool; the conductors are the labelled
usage-reporting double of serve_support (it counts its calls: one per episode here) and
the fault-injection backend ``test-flaky`` of conftest.py provokes worker failures.

Each client keeps its default retries, so a test that counts episodes after a failure
shows that the failure was not re-sent (before ``x-should-retry: false``, the ``openai``
client played each failed episode three times)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_support import UsageScriptedConductor, served
from support import plan_text, require

from conductor_gym import RetryPolicy, WorkerSpec
from conductor_gym.workers.budget import Budget

openai = require("openai")
serve = require("conductor_gym.serve")
protocol = require("conductor_gym.serve.protocol")

QUESTION = "What is 17 + 25?"
TWO_STEPS = plan_text([0, 1], ["Solve the question.", "Check the answer above."], [[], "all"])
ONE_STEP = plan_text([0], ["Solve the question."], [[]])
README = Path(__file__).resolve().parents[2] / "README.md"


class Conductors:
    """The served models' conductors, by model name (each counts its episodes)."""

    def __init__(self) -> None:
        self.scripted = UsageScriptedConductor(lambda o, i: TWO_STEPS)
        self.flaky = UsageScriptedConductor(lambda o, i: ONE_STEP)
        self.babbler = UsageScriptedConductor(lambda o, i: "I refuse to plan.")
        self.frugal = UsageScriptedConductor(lambda o, i: TWO_STEPS)


@pytest.fixture(scope="module")
def conductors() -> Conductors:
    return Conductors()


@pytest.fixture(scope="module")
def base_url(conductors: Conductors) -> Iterator[str]:
    flaky = WorkerSpec(
        name="flaky-worker", backend="test-flaky", backend_options={"failures": 10**6}
    )
    models = [
        serve.ConductorModel("scripted", conductors.scripted, "sim-paper"),
        serve.ConductorModel(
            "flaky", conductors.flaky, [flaky], retry=RetryPolicy(max_attempts=2, base_delay_s=0.0)
        ),
        serve.ConductorModel("babbler", conductors.babbler, "sim-paper"),
        serve.ConductorModel(
            "frugal", conductors.frugal, "sim-paper", episode_budget=Budget(max_calls=1)
        ),
    ]
    with served(models) as url:
        yield url


@pytest.fixture(scope="module")
def client(base_url: str) -> Any:
    """The official client with its default retries (2)."""
    return openai.OpenAI(base_url=base_url, api_key="unused")


def _messages(question: str = QUESTION) -> list[dict[str, str]]:
    return [{"role": "user", "content": question}]


def _get(url: str) -> tuple[int, str, str]:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.status, response.headers["content-type"], response.read().decode()


def _metrics(base_url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of ``GET /metrics``, read by Prometheus's own parser."""
    parser = require("prometheus_client.parser")
    status, content_type, text = _get(base_url.removesuffix("/v1") + "/metrics")
    assert status == 200 and content_type.startswith("text/plain; version=0.0.4")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in parser.text_string_to_metric_families(text)
        for s in family.samples
    }


def _episodes(base_url: str, model: str, result: str) -> float:
    key = ("conductor_gym_serve_episodes_total", (("model", model), ("result", result)))
    return _metrics(base_url).get(key, 0.0)


def test_a_failed_episode_is_not_re_sent_by_the_openai_client(
    client: Any, conductors: Conductors, base_url: str
) -> None:
    before = conductors.flaky.calls
    with pytest.raises(openai.InternalServerError) as failed:
        client.chat.completions.create(model="flaky", messages=_messages())
    response = failed.value.response
    assert response.status_code == 502 and response.headers["x-should-retry"] == "false"
    assert response.json()["error"]["code"] == "worker_failed"
    assert conductors.flaky.calls - before == 1  # one episode, not three
    assert _episodes(base_url, "flaky", "worker_failed") == 1

    before = conductors.babbler.calls
    with pytest.raises(openai.InternalServerError) as invalid:
        client.chat.completions.create(model="babbler", messages=_messages())
    assert invalid.value.response.headers["x-should-retry"] == "false"
    assert conductors.babbler.calls - before == 1

    before = conductors.frugal.calls  # two steps, one call allowed: the budget runs out
    with pytest.raises(openai.RateLimitError) as spent:
        client.chat.completions.create(model="frugal", messages=_messages())
    assert spent.value.response.headers["x-should-retry"] == "false"
    assert spent.value.response.json()["error"]["code"] == "budget_exhausted"
    assert conductors.frugal.calls - before == 1


def test_sync_streaming_sends_the_answer_once_in_chunks_then_done(
    client: Any, base_url: str
) -> None:
    plain = client.chat.completions.create(model="scripted", messages=_messages(), seed=7)
    answered = _episodes(base_url, "scripted", "answered")
    chunks = list(
        client.chat.completions.create(
            model="scripted", messages=_messages(), seed=7, stream=True,
            stream_options={"include_usage": True},
        )
    )  # fmt: skip
    assert _episodes(base_url, "scripted", "answered") == answered + 1
    assert all(c.object == "chat.completion.chunk" and c.model == "scripted" for c in chunks)
    assert len({c.id for c in chunks}) == 1
    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [c.choices[0].delta.content for c in chunks[1:-2]]
    assert all(0 < len(p) <= protocol.STREAM_CHUNK_CHARS for p in pieces)
    text = "".join(pieces)
    assert text == plain.choices[0].message.content and text
    assert len(pieces) == -(-len(text) // protocol.STREAM_CHUNK_CHARS)
    *_, finish, usage = chunks
    assert finish.choices[0].finish_reason == "stop"
    assert finish.model_extra["conductor"]["rounds"] == plain.model_extra["conductor"]["rounds"]
    assert usage.choices == [] and usage.usage == plain.usage
    assert all(c.usage is None for c in chunks[:-1])

    # the raw stream: SSE events, "data: [DONE]" last; no usage chunk unless asked for
    body = {"model": "scripted", "messages": _messages(), "seed": 7, "stream": True}
    with client.chat.completions.with_streaming_response.create(**body) as raw:
        assert raw.headers["content-type"].startswith("text/event-stream")
        events = [e for e in raw.read().decode().split("\n\n") if e]
    assert events[-1] == "data: [DONE]"
    parsed = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    assert parsed[-1]["choices"][0]["finish_reason"] == "stop"
    assert all("usage" not in p for p in parsed)


def test_async_client_and_async_streaming(base_url: str, conductors: Conductors) -> None:
    async def main() -> tuple[Any, list[Any], Any]:
        async with openai.AsyncOpenAI(base_url=base_url, api_key="unused") as aclient:
            plain = await aclient.chat.completions.create(
                model="scripted", messages=_messages(), seed=3
            )
            stream = await aclient.chat.completions.create(
                model="scripted", messages=_messages(), seed=3, stream=True
            )
            chunks = [c async for c in stream]
            errors = await asyncio.gather(
                aclient.chat.completions.create(model="flaky", messages=_messages(), stream=True),
                return_exceptions=True,
            )
            return plain, chunks, errors

    before = conductors.flaky.calls
    plain, chunks, errors = asyncio.run(main())
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == (
        plain.choices[0].message.content
    )
    assert plain.model_extra["conductor"]["seed"] == 3
    (error,) = errors  # a failed streamed episode is the same HTTP error, not re-sent
    assert isinstance(error, openai.InternalServerError) and error.status_code == 502
    assert conductors.flaky.calls - before == 1


def test_text_completions_play_the_same_episode(client: Any) -> None:
    chat = client.chat.completions.create(model="scripted", messages=_messages(), seed=5)
    text = client.completions.create(model="scripted", prompt=QUESTION, seed=5)
    assert text.object == "text_completion" and text.choices[0].finish_reason == "stop"
    assert text.choices[0].text == chat.choices[0].message.content
    assert text.usage == chat.usage
    listed = client.completions.create(model="scripted", prompt=[QUESTION], seed=5)
    assert listed.choices[0].text == text.choices[0].text
    chunks = list(
        client.completions.create(
            model="scripted", prompt=QUESTION, seed=5, stream=True,
            stream_options={"include_usage": True},
        )
    )  # fmt: skip
    assert "".join(c.choices[0].text for c in chunks if c.choices) == text.choices[0].text
    assert chunks[-1].usage == text.usage
    with pytest.raises(openai.BadRequestError) as two:
        client.completions.create(model="scripted", prompt=[QUESTION, QUESTION])
    assert two.value.body["param"] == "prompt" and "2 prompts" in two.value.body["message"]
    with pytest.raises(openai.BadRequestError) as tokens:
        client.completions.create(model="scripted", prompt=[1, 2, 3])
    assert "token ids" in tokens.value.body["message"]
    with pytest.raises(openai.BadRequestError) as echo:
        client.completions.create(model="scripted", prompt=QUESTION, echo=True)
    assert echo.value.body["param"] == "echo" and echo.value.body["code"] == "unsupported"


TOOL = {"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tools", [TOOL]),
        ("tool_choice", "required"),
        ("response_format", {"type": "json_object"}),
        ("n", 2),
        ("logprobs", True),
        ("logit_bias", {"50256": -100}),
    ],
)
def test_a_field_the_server_cannot_honour_is_a_400_naming_it(
    client: Any, field: str, value: Any
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        client.chat.completions.create(
            model="scripted", messages=_messages(), extra_body={field: value}
        )
    error = refused.value.body
    assert error["param"] == field and error["code"] == "unsupported"
    assert f"'{field}' is not supported ({protocol.FIELDS[field].reason})" in error["message"]


def test_ignored_fields_are_listed_and_stop_is_honoured(client: Any) -> None:
    plain = client.chat.completions.create(
        model="scripted", messages=_messages(), seed=9, temperature=0.2, max_tokens=5,
        tools=[], response_format={"type": "text"}, extra_body={"top_k": 4},
    )  # fmt: skip
    assert plain.model_extra["conductor"]["ignored_fields"] == [
        "max_tokens",
        "temperature",
        "top_k",
    ]
    answer = plain.choices[0].message.content
    stop = answer[len(answer) // 2 :][:3]
    cut = client.chat.completions.create(model="scripted", messages=_messages(), seed=9, stop=stop)
    assert cut.choices[0].message.content == answer[: answer.find(stop)]
    assert cut.model_extra["conductor"]["ignored_fields"] == []
    with pytest.raises(openai.BadRequestError) as hot:
        client.chat.completions.create(model="scripted", messages=_messages(), temperature="hot")
    assert hot.value.body["param"] == "temperature"


def test_health_and_metrics(base_url: str, client: Any) -> None:
    root = base_url.removesuffix("/v1")
    status, _, body = _get(root + "/health")
    assert status == 200 and json.loads(body)["status"] == "ok"
    client.chat.completions.create(model="scripted", messages=_messages(), seed=1)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-5", messages=_messages())
    samples = _metrics(base_url)

    def value(name: str, **labels: str) -> float:
        return samples[(name, tuple(sorted(labels.items())))]

    requests = "conductor_gym_serve_requests_total"
    assert value(requests, route="/v1/chat/completions", status="200") >= 1
    assert value(requests, route="/v1/chat/completions", status="404") >= 1
    assert value(requests, route="/health", status="200") >= 1
    answered = value("conductor_gym_serve_episodes_total", model="scripted", result="answered")
    latency = "conductor_gym_serve_episode_seconds"
    assert value(f"{latency}_count", model="scripted") == answered
    assert value(f"{latency}_bucket", model="scripted", le="+Inf") == answered
    assert value("conductor_gym_serve_episodes_in_flight", model="scripted") == 0
    tokens = "conductor_gym_serve_tokens_total"
    assert value(tokens, model="scripted", party="workers", kind="completion") > 0
    assert value(tokens, model="scripted", party="conductor", kind="prompt") > 0
    assert value("conductor_gym_serve_cost_usd_total", model="scripted") > 0


def test_litellm_as_a_client(
    base_url: str, conductors: Conductors, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    litellm = require("litellm")
    target = {"api_base": base_url, "api_key": "unused", "messages": _messages(), "seed": 4}
    plain = litellm.completion(model="openai/scripted", **target)
    answer = plain.choices[0].message.content
    assert answer and plain.usage.total_tokens > 0
    chunks = list(litellm.completion(model="openai/scripted", stream=True, **target))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == answer

    async def streamed() -> str:
        stream = await litellm.acompletion(model="openai/scripted", stream=True, **target)
        return "".join([c.choices[0].delta.content or "" async for c in stream])

    assert asyncio.run(streamed()) == answer
    before = conductors.flaky.calls
    with pytest.raises(litellm.exceptions.BadGatewayError) as failed:
        litellm.completion(model="openai/flaky", **target)
    assert failed.value.status_code == 502 and "flaky-worker" in str(failed.value)
    assert conductors.flaky.calls - before == 1


def _readme_fields() -> dict[str, str]:
    """The README's table of request fields: field name -> policy."""
    section = README.read_text().split("## Serving a conductor", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(
        r"^\| (`[a-z_]+`(?:, `[a-z_]+`)*) \| (honoured|ignored|refused) \|", section, re.M
    )
    return {name: policy for names, policy in rows for name in re.findall(r"`([a-z_]+)`", names)}


def test_the_readme_table_is_the_servers_field_policy() -> None:
    assert _readme_fields() == {name: rule.policy for name, rule in protocol.FIELDS.items()}


def test_a_long_answer_streams_in_chunks_that_rebuild_it() -> None:
    model = serve.ConductorModel("s", UsageScriptedConductor(lambda o, i: ONE_STEP), "sim-paper")
    played = asyncio.run(model.answer(QUESTION, seed=2))
    long = "Ünïcode ✓ and a long answer. " * 40  # 1160 characters: five chunks
    answer = dataclasses.replace(played, content=long)
    request = protocol.ChatRequest("s", QUESTION, 2, stream=True, stop=("never there",))
    events = list(protocol.stream_events("completion", "s", answer, request))
    assert events[-1] == "data: [DONE]\n\n"
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-1]]
    texts = [c["choices"][0]["text"] for c in chunks]
    assert [len(t) for t in texts] == [256, 256, 256, 256, 136, 0]
    assert "".join(texts) == long
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
    assert all(c["object"] == "text_completion" for c in chunks)
