"""``conductor-gym serve``'s OpenAI-compatible API, called with the official ``openai``
client over loopback: a real uvicorn server, real conductors (the shipped fixed agents,
or the labelled usage-reporting double of serve_support), the simulated pool, and the
fault-injection backend ``test-flaky`` of conftest.py for worker failures."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve_support import UsageScriptedConductor, served, simulated_pool_file
from support import plan_text, require

from conductor_gym import RetryPolicy, WorkerSpec

openai = require("openai")
serve = require("conductor_gym.serve")

QUESTION = "What is 17 + 25?"
TWO_STEPS = plan_text([0, 1], ["Solve the question.", "Check the answer above."], [[], "all"])


def _stop(observation: str, info: Any) -> str:
    """Plan two steps, then keep the answer (three empty lists) in the recursive round."""
    if not info["can_stop"]:
        return TWO_STEPS
    return "Keep it.\nmodel_id = []\nsubtasks = []\naccess_list = []"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    models = [
        serve.ConductorModel("reflect", "reflect:0:2", "sim-paper"),
        serve.ConductorModel("scripted", UsageScriptedConductor(_stop), "sim-paper"),
        serve.ConductorModel(
            "recursive", UsageScriptedConductor(_stop), "sim-paper", max_recursions=1
        ),
        serve.ConductorModel("babbler", UsageScriptedConductor(lambda o, i: "I refuse to plan.")),
    ]
    with served(models) as url:
        yield url


@pytest.fixture(scope="module")
def client(base_url: str) -> Any:
    return openai.OpenAI(base_url=base_url, api_key="unused", max_retries=0)


def _ask(client: Any, model: str, **kwargs: Any) -> Any:
    return client.chat.completions.create(
        model=model,
        messages=[
            {"role": "system", "content": "ignored by the conductor"},
            {"role": "user", "content": QUESTION},
        ],
        **kwargs,
    )


def test_models_lists_each_conductor_with_its_agent_and_pool(client: Any) -> None:
    listed = {m.id: m for m in client.models.list()}
    assert sorted(listed) == ["babbler", "recursive", "reflect", "scripted"]
    card = client.models.retrieve("reflect")
    assert card.id == "reflect" and card.owned_by == "conductor-gym"
    conductor = card.model_extra["conductor"]
    assert conductor["agent"] == "reflect:0:2"
    assert [w["name"] for w in conductor["pool"]["workers"]][:2] == [
        "gemini-2.5-pro",
        "claude-sonnet-4",
    ]
    assert "max_recursions=1" not in json.dumps(conductor) and listed["recursive"].model_extra


def test_an_answer_is_the_last_step_with_usage_plan_and_trace(client: Any) -> None:
    completion = _ask(client, "scripted", seed=11)
    assert completion.object == "chat.completion" and completion.model == "scripted"
    (choice,) = completion.choices
    assert choice.finish_reason == "stop" and choice.message.role == "assistant"
    extension = completion.model_extra["conductor"]
    steps = extension["rounds"][0]["trace"]["steps"]
    assert [s["worker"] for s in steps] == ["gemini-2.5-pro", "claude-sonnet-4"]
    # The final step's response, then the word that a simulated worker gave it.
    note = serve.SIMULATED_NOTE.format(worker="claude-sonnet-4", of_pool=" of pool 'sim-paper'")
    assert choice.message.content == f"{steps[-1]['response']}\n\n{note}"
    assert extension["simulated"] is True
    assert QUESTION in steps[0]["messages"][0]["content"]  # the last user message
    assert "ignored by the conductor" not in json.dumps(extension)
    assert extension["plan"] == {
        "model_id": [0, 1], "subtasks": ["Solve the question.", "Check the answer above."],
        "access_list": [[], "all"],
    }  # fmt: skip
    usage = extension["usage"]
    conductor, workers = usage["conductor"], usage["workers"]
    assert conductor["prompt_tokens"] > 100 and conductor["completion_tokens"] > 10
    assert workers["prompt_tokens"] == sum(s["prompt_tokens"] for s in steps)
    assert workers["completion_tokens"] == sum(s["completion_tokens"] for s in steps)
    assert completion.usage.prompt_tokens == conductor["prompt_tokens"] + workers["prompt_tokens"]
    assert completion.usage.completion_tokens == (
        conductor["completion_tokens"] + workers["completion_tokens"]
    )
    assert completion.usage.total_tokens == (
        completion.usage.prompt_tokens + completion.usage.completion_tokens
    )
    assert extension["cost_usd"] == pytest.approx(conductor["cost_usd"] + workers["cost_usd"])
    assert extension["worker_calls"] == 2 and extension["seed"] == 11


def test_a_seed_reproduces_the_answer_of_the_service(client: Any) -> None:
    first, again = _ask(client, "reflect", seed=3), _ask(client, "reflect", seed=3)
    direct = asyncio.run(serve.ConductorModel("x", "reflect:0:2").answer(QUESTION, seed=3))
    assert first.choices[0].message.content == again.choices[0].message.content
    assert first.model_extra["conductor"] == again.model_extra["conductor"]
    assert first.model_extra["conductor"]["rounds"] == direct.extension()["rounds"]
    assert first.usage.total_tokens == direct.usage.total_tokens
    assert first.id != again.id


def test_recursion_keeps_the_previous_answer_when_the_conductor_stops(client: Any) -> None:
    completion = _ask(client, "recursive", seed=5)
    rounds = completion.model_extra["conductor"]["rounds"]
    assert len(rounds) == 2 and rounds[1]["plan"] == {
        "model_id": [], "subtasks": [], "access_list": []
    }  # fmt: skip
    assert rounds[1]["trace"] is None and "Keep it." in rounds[1]["completion"]
    content = completion.choices[0].message.content
    assert content.startswith(rounds[0]["trace"]["final_response"] + "\n\n[conductor-gym:")


def _error(excinfo: pytest.ExceptionInfo[Any]) -> dict[str, Any]:
    body: dict[str, Any] = excinfo.value.response.json()
    assert set(body["error"]) == {"message", "type", "param", "code"}
    return body


def test_request_errors_name_the_field(client: Any, base_url: str) -> None:
    with pytest.raises(openai.NotFoundError) as missing:
        _ask(client, "gpt-5")
    assert _error(missing)["error"]["code"] == "model_not_found"
    assert _error(missing)["error"]["param"] == "model"
    with pytest.raises(openai.BadRequestError) as json_mode:
        _ask(client, "reflect", response_format={"type": "json_object"})
    assert _error(json_mode)["error"]["param"] == "response_format"
    with pytest.raises(openai.BadRequestError) as no_user:
        client.chat.completions.create(
            model="reflect", messages=[{"role": "system", "content": "hi"}]
        )
    assert _error(no_user)["error"]["param"] == "messages"
    with pytest.raises(openai.BadRequestError) as seed:
        _ask(client, "reflect", seed=-1)
    assert _error(seed)["error"]["param"] == "seed"
    with pytest.raises(openai.BadRequestError) as two:
        _ask(client, "reflect", n=2)
    assert _error(two)["error"]["param"] == "n"
    raw = openai.OpenAI(base_url=base_url.removesuffix("/v1"), api_key="x", max_retries=0)
    with pytest.raises(openai.NotFoundError) as route:
        raw.get("/v2/anything", cast_to=dict)
    assert _error(route)["error"]["code"] == "not_found"
    with pytest.raises(openai.APIStatusError) as method:
        client.get("/chat/completions", cast_to=dict)
    assert method.value.status_code == 405 and _error(method)["error"]["type"]


def test_an_invalid_plan_is_a_conductor_error_with_the_parse_reason(client: Any) -> None:
    with pytest.raises(openai.InternalServerError) as failed:
        _ask(client, "babbler")
    body = _error(failed)
    assert failed.value.status_code == 500
    assert body["error"]["type"] == "conductor_error"
    assert body["error"]["code"] == body["conductor"]["parse_error"]["reason"]
    assert body["conductor"]["completions"] == ["I refuse to plan."]


SECRET = "sk-live-0123456789abcdef"
TOKEN = "server-token-9876543210"


def test_a_failing_worker_is_a_5xx_naming_it_and_nothing_secret_leaks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CONDUCTOR_GYM_TEST_PROVIDER_API_KEY", SECRET)

    def leaky(message: str) -> Exception:
        return ConnectionResetError(f"{message}: 401 for key {SECRET} (server {TOKEN})")

    flaky = WorkerSpec(
        name="flaky-worker",
        backend="test-flaky",
        backend_options={"failures": 10, "error": leaky},
    )
    model = serve.ConductorModel(
        "conductor", "single:0", [flaky], retry=RetryPolicy(max_attempts=2, base_delay_s=0.0)
    )
    with served([model], api_key=TOKEN) as url:
        good = openai.OpenAI(base_url=url, api_key=TOKEN, max_retries=0)
        with pytest.raises(openai.InternalServerError) as failed:
            _ask(good, "conductor")
        body = _error(failed)
        assert failed.value.status_code == 502
        assert body["error"]["type"] == "worker_error" and body["error"]["code"] == "worker_failed"
        message = body["error"]["message"]
        assert "'flaky-worker'" in message and "ConnectionResetError" in message
        assert body["conductor"]["error"]["worker"] == "flaky-worker"
        # an exception that is not a WorkerError is permanent: no retry
        assert body["conductor"]["error"]["attempts"] == 1
        text = failed.value.response.text
        assert SECRET not in text and TOKEN not in text and "[redacted]" in text

        wrong = openai.OpenAI(base_url=url, api_key="not-the-token-123", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as denied:
            wrong.models.list()
        assert _error(denied)["error"]["code"] == "invalid_api_key"
        assert "not-the-token-123" not in denied.value.response.text
        assert TOKEN not in denied.value.response.text
        assert [m.id for m in good.models.list()] == ["conductor"]


def test_request_size_and_concurrency_are_bounded(tmp_path: Path) -> None:
    slow = simulated_pool_file(tmp_path / "slow.toml", latency_scale=0.05, workers=1)
    model = serve.ConductorModel("conductor", "single:0", str(slow))
    with served([model], max_concurrency=1, max_queue=1, max_request_bytes=4096) as url:
        client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
        with pytest.raises(openai.APIStatusError) as large:
            client.chat.completions.create(
                model="conductor", messages=[{"role": "user", "content": "x" * 5000}]
            )
        assert large.value.status_code == 413
        assert _error(large)["error"]["code"] == "request_too_large"

        async def burst() -> list[Any]:
            async with openai.AsyncOpenAI(base_url=url, api_key="u", max_retries=0) as aclient:
                calls = [
                    aclient.chat.completions.create(
                        model="conductor", messages=[{"role": "user", "content": QUESTION}]
                    )
                    for _ in range(4)
                ]
                return list(await asyncio.gather(*calls, return_exceptions=True))

        results = asyncio.run(burst())
        busy = [r for r in results if isinstance(r, openai.RateLimitError)]
        answered = [r for r in results if not isinstance(r, Exception)]
        assert len(answered) == 2 and len(busy) == 2  # one running, one waiting
        assert all(r.response.json()["error"]["code"] == "server_busy" for r in busy)
