"""The LiteLLM backend against a real llama.cpp server on loopback (SmolLM2-135M).

No mocks: every call goes through LiteLLM and HTTP to the server started by the
``llama_base_url`` fixture; failures are provoked for real (a closed port, a wrong path,
a prompt longer than the context, a 1 ms timeout, a logit bias that forces end-of-text).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
import warnings
from typing import Any

import gymnasium as gym
import pytest
from http_support import counting_server, openai_without_key
from llama_server import free_port
from support import require_spec, solve_plan

from conductor_gym.pool.pool import WorkerPool
from conductor_gym.workers.base import Completion, WorkerError
from conductor_gym.workers.spec import WorkerSpec

PRICE_IN, PRICE_OUT = 1.5, 6.0
QUESTION = [{"role": "user", "content": "What is 2 + 3? Answer with the number."}]
EOT_TOKEN_ID = "2"  # SmolLM2's <|im_end|>

# LiteLLM's own Router types trip a pydantic notice when first used; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:Items? .*ReadOnly:UserWarning")


@pytest.fixture(scope="module")
def litellm() -> Any:
    """LiteLLM as the worker imports it (its bundled price map: no download)."""
    require_spec("litellm")
    from conductor_gym.workers.litellm import _litellm

    return _litellm()


@pytest.fixture
def base_url(llama_base_url: str, litellm: Any) -> str:
    """The server's OpenAI-compatible API root."""
    return f"{llama_base_url}/v1"


def smol_spec(
    api_base: str, name: str = "smol", *, options: dict[str, Any] | None = None, **fields: Any
) -> WorkerSpec:
    """SmolLM2 on the server at ``api_base`` through LiteLLM, priced, greedy by default."""
    settings: dict[str, Any] = {
        "model": "openai/smollm2",
        "max_tokens": 32,
        "temperature": 0.0,
        "price_in_per_mtok": PRICE_IN,
        "price_out_per_mtok": PRICE_OUT,
        **fields,
    }
    backend_options = {"api_base": api_base, **(options or {})}
    return WorkerSpec(name, backend="litellm", backend_options=backend_options, **settings)


def build(spec: WorkerSpec) -> Any:
    return WorkerPool([spec]).workers[0].worker


def play_one(spec: WorkerSpec) -> tuple[float, bool, bool, dict[str, Any]]:
    """Reward, terminated, truncated and info of one env step (a solving plan) with
    ``spec`` as the only worker."""
    env = gym.make("ConductorEnv-v0", tasks="offline", pool=[spec])
    try:
        _, info = env.reset(seed=0)
        _, reward, terminated, truncated, step = env.step(solve_plan(info["question"]))
    finally:
        env.close()
    return float(reward), terminated, truncated, step


def complete(worker: Any, max_tokens: int = 24, **kwargs: Any) -> Completion:
    kwargs.setdefault("temperature", 0.0)
    result: Completion = asyncio.run(worker.complete(QUESTION, max_tokens=max_tokens, **kwargs))
    return result


def failure(worker: Any, messages: Any = QUESTION, **kwargs: Any) -> WorkerError:
    kwargs.setdefault("max_tokens", 8)
    kwargs.setdefault("temperature", 0.0)
    with pytest.raises(WorkerError) as caught:
        asyncio.run(worker.complete(messages, **kwargs))
    assert caught.value.worker == worker.name
    return caught.value


# -- answers ---------------------------------------------------------------------------


def test_round_trip_reports_text_tokens_priced_cost_and_model(base_url: str) -> None:
    worker = build(smol_spec(base_url))
    result = complete(worker, seed=1)
    assert result.text.strip()
    assert result.prompt_tokens > 0 and result.completion_tokens > 0
    expected = (result.prompt_tokens * PRICE_IN + result.completion_tokens * PRICE_OUT) / 1e6
    assert result.cost_usd == pytest.approx(expected)
    assert result.latency_s > 0
    assert result.model == "smollm2"
    assert not result.cached


def test_max_tokens_is_honoured(base_url: str) -> None:
    worker = build(smol_spec(base_url))
    story = [{"role": "user", "content": "Tell me a long story about a lighthouse keeper."}]
    result = asyncio.run(worker.complete(story, max_tokens=6, temperature=0.0))
    assert 0 < result.completion_tokens <= 6


def test_greedy_seeded_calls_are_reproducible(base_url: str) -> None:
    worker = build(smol_spec(base_url))
    first = complete(worker, max_tokens=16, seed=7)
    second = complete(worker, max_tokens=16, seed=7)
    assert first.text == second.text
    assert first.completion_tokens == second.completion_tokens


def test_spec_params_reach_the_server(base_url: str) -> None:
    # stop at the first space: the params of the pool entry are sent on every call
    spec = smol_spec(base_url, params={"stop": [" "]})
    bound = WorkerPool([spec]).workers[0]
    result = asyncio.run(
        bound.worker.complete(QUESTION, max_tokens=16, temperature=0.0, **bound.params)
    )
    assert " " not in result.text.strip()


def test_unpriced_model_costs_zero_and_warns_once(base_url: str) -> None:
    model = f"openai/unpriced-{uuid.uuid4().hex[:8]}"  # the server answers any model name
    worker = build(
        smol_spec(base_url, model=model, price_in_per_mtok=None, price_out_per_mtok=None)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [complete(worker, max_tokens=4) for _ in range(2)]
    assert [r.cost_usd for r in results] == [0.0, 0.0]
    messages = [str(w.message) for w in caught if "no price" in str(w.message)]
    assert len(messages) == 1 and model in messages[0] and "price_in_per_mtok" in messages[0]


def test_router_with_two_deployments_answers_and_is_shared(
    base_url: str, litellm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CG_TEST_REPLICA_KEY", "replica-key-not-checked-by-llama")
    spec = WorkerSpec(
        "smol-replicas",
        backend="litellm",
        model="openai/smollm2",
        price_in_per_mtok=PRICE_IN,
        price_out_per_mtok=PRICE_OUT,
        backend_options={
            "deployments": [
                {"api_base": base_url},
                {"api_base": base_url, "api_key_env": "CG_TEST_REPLICA_KEY"},
            ]
        },
    )
    worker = build(spec)
    results = [complete(worker, max_tokens=8, seed=3) for _ in range(4)]
    assert all(r.text.strip() and r.completion_tokens > 0 for r in results)
    assert len({r.text for r in results}) == 1  # same model behind both, greedy
    assert "replica-key" not in repr(worker)
    # A second pool with the same configuration shares the first one's Router.
    again = build(spec)
    assert again is not worker
    assert again._router(litellm) is worker._router(litellm)


# -- failures --------------------------------------------------------------------------


def test_connection_refused_is_transient(litellm: Any) -> None:
    worker = build(smol_spec(f"http://127.0.0.1:{free_port()}/v1"))
    error = failure(worker)
    assert error.transient
    assert isinstance(error.__cause__, litellm.InternalServerError)


def test_router_with_only_dead_deployments_is_transient(litellm: Any) -> None:
    dead = [{"api_base": f"http://127.0.0.1:{free_port()}/v1"} for _ in range(2)]
    spec = WorkerSpec(
        "dead", backend="litellm", model="openai/smollm2", backend_options={"deployments": dead}
    )
    worker = build(spec)
    error = failure(worker)
    assert error.transient
    assert type(error.__cause__).__module__.startswith("litellm")


def test_timeout_is_transient(base_url: str, litellm: Any) -> None:
    worker = build(smol_spec(base_url, options={"timeout_s": 0.001}))
    error = failure(worker, max_tokens=4)
    assert error.transient
    assert isinstance(error.__cause__, litellm.Timeout)


def test_empty_answer_is_transient(base_url: str) -> None:
    # A strong bias on the end-of-text token makes the model stop before any text.
    worker = build(smol_spec(base_url))
    error = failure(worker, logit_bias={EOT_TOKEN_ID: 100})
    assert error.transient and "empty content" in str(error)


def test_wrong_path_is_permanent_not_found(base_url: str, litellm: Any) -> None:
    worker = build(smol_spec(f"{base_url}/no-such-path"))
    error = failure(worker)
    assert not error.transient
    assert isinstance(error.__cause__, litellm.NotFoundError)


def test_prompt_beyond_the_context_is_permanent(base_url: str, litellm: Any) -> None:
    worker = build(smol_spec(base_url))
    long = [{"role": "user", "content": "word " * 2500}]  # the server's context is 2048
    error = failure(worker, messages=long)
    assert not error.transient
    assert isinstance(error.__cause__, litellm.ContextWindowExceededError)


# -- credentials -----------------------------------------------------------------------


def test_api_key_is_read_from_the_environment_and_never_kept(
    base_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conductor_gym.workers.litellm import missing_credentials

    secret = f"sk-test-{uuid.uuid4().hex}"
    monkeypatch.setenv("CG_TEST_API_KEY", secret)
    spec = smol_spec(base_url, options={"api_key_env": "CG_TEST_API_KEY"})
    worker = build(spec)
    result = complete(worker, max_tokens=4)
    assert missing_credentials(spec) == []
    for text in (repr(worker), repr(vars(worker)), repr(result), repr(result.to_dict())):
        assert secret not in text
    closed = f"http://127.0.0.1:{free_port()}/v1"
    refused = build(smol_spec(closed, options={"api_key_env": "CG_TEST_API_KEY"}))
    error = failure(refused)
    assert secret not in str(error) and secret not in repr(error.__cause__)

    monkeypatch.delenv("CG_TEST_API_KEY")
    assert missing_credentials(spec) == ["CG_TEST_API_KEY"]
    error = failure(worker)
    assert not error.transient and "CG_TEST_API_KEY" in str(error)


def test_missing_credentials_for_provider_and_local_models(
    litellm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from conductor_gym.workers.litellm import missing_credentials

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    claude = WorkerSpec("claude", backend="litellm", model="anthropic/claude-sonnet-4-20250514")
    assert missing_credentials(claude) == ["ANTHROPIC_API_KEY"]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "x")
    assert missing_credentials(claude) == []
    local = smol_spec("http://127.0.0.1:9/v1")
    assert missing_credentials(local) == []


# Provider models, the variable LiteLLM reads their key from, and the variables that
# redirect their API to another URL (here: a loopback server counting requests).
PROVIDERS = [
    ("openai/gpt-5", "OPENAI_API_KEY", ("OPENAI_BASE_URL", "OPENAI_API_BASE"), "/v1"),
    (
        "anthropic/claude-sonnet-4-20250514",
        "ANTHROPIC_API_KEY",
        ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE"),
        "",
    ),
]


@pytest.mark.parametrize(("model", "key", "redirects", "root"), PROVIDERS)
def test_missing_provider_key_is_permanent_and_nothing_is_sent(
    litellm: Any,
    monkeypatch: pytest.MonkeyPatch,
    model: str,
    key: str,
    redirects: tuple[str, ...],
    root: str,
) -> None:
    with counting_server() as (url, paths):
        for name in redirects:
            monkeypatch.setenv(name, url + root)
        for name in (key, "ANTHROPIC_AUTH_TOKEN", "OPENAI_ADMIN_KEY"):
            monkeypatch.delenv(name, raising=False)
        worker = build(WorkerSpec("provider", backend="litellm", model=model))
        error = failure(worker)
        assert not error.transient, error
        assert str(error).startswith(f"missing credentials: set {key} (")
        assert paths == []  # refused before any request
        # With a key the same worker does reach the (redirected) API: the check above
        # could not pass because nothing was ever sent anywhere.
        monkeypatch.setenv(key, "sk-test-not-a-real-key")
        error = failure(worker)
        assert not error.transient and "missing credentials" not in str(error)
        assert len(paths) == 1


def test_missing_key_in_an_env_episode_is_one_permanent_attempt(
    litellm: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    with openai_without_key(monkeypatch) as paths:
        spec = WorkerSpec("gpt-5", backend="litellm", model="openai/gpt-5", max_tokens=8)
        reward, _, truncated, step = play_one(spec)
    assert truncated and reward == 0.0 and paths == []
    error = step["error"]
    assert error["transient"] is False and error["attempts"] == 1
    assert "missing credentials: set OPENAI_API_KEY" in error["message"]


# -- configuration ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"api_bsae": "http://x/v1"}, "api_bsae"),
        ({"api_key": "sk-inline"}, "api_key_env"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"deployments": [{"api_base": "http://x/v1", "weight": 2}]}, "weight"),
        ({"deployments": [{"model": "openai/x"}]}, "api_base is required"),
        ({"api_base": "http://x/v1", "deployments": [{"api_base": "http://y/v1"}]}, "api_base"),
    ],
)
def test_bad_backend_options_name_the_worker_and_option(
    options: dict[str, Any], fragment: str
) -> None:
    spec = WorkerSpec("picky", backend="litellm", model="openai/m", backend_options=options)
    with pytest.raises(ValueError, match="picky") as caught:
        build(spec)
    assert fragment in str(caught.value)
    assert "sk-inline" not in str(caught.value)


def test_params_the_worker_sets_itself_are_rejected() -> None:
    spec = WorkerSpec("greedy", backend="litellm", model="openai/m", params={"stream": True})
    with pytest.raises(ValueError, match=r"greedy.*stream"):
        build(spec)


def test_import_and_building_workers_do_not_import_litellm() -> None:
    code = (
        "import sys, conductor_gym\n"
        "from conductor_gym.pool.pool import WorkerPool, WorkerSpec\n"
        "before = 'litellm' in sys.modules\n"
        "spec = WorkerSpec('w', backend='litellm', model='openai/gpt-5',"
        " backend_options={'api_key_env': 'OPENAI_API_KEY'})\n"
        "WorkerPool([spec]).workers\n"
        "print(before, 'litellm' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "False"]


# -- the environment -------------------------------------------------------------------


def test_env_episode_with_a_litellm_worker(base_url: str) -> None:
    reward, terminated, truncated, step = play_one(smol_spec(base_url, "smol-e2e", max_tokens=48))
    assert step["error"] is None and not truncated and terminated
    assert reward in (0.5, 1.0)
    (record,) = step["trace"].steps
    assert record.worker == "smol-e2e" and record.response.strip()
    assert 0 < record.completion_tokens <= 48 and record.prompt_tokens > 0
    assert record.cost_usd == pytest.approx(
        (record.prompt_tokens * PRICE_IN + record.completion_tokens * PRICE_OUT) / 1e6
    )


# -- process exit ----------------------------------------------------------------------

# Three envs, each with its own event loop, call the server; one is closed, the others are
# left to the interpreter's exit. Printed: each step's error message, or "answered".
SEVERAL_ENVS = """
import json, sys
import gymnasium as gym
import conductor_gym
from conductor_gym.workers.spec import WorkerSpec

spec = WorkerSpec(
    "smol", backend="litellm", model="openai/smollm2", max_tokens=8, temperature=0.0,
    price_in_per_mtok=1.0, price_out_per_mtok=1.0, params=json.loads(sys.argv[2]),
    backend_options={"api_base": sys.argv[1]},
)
plan = 'model_id = [0]\\nsubtasks = ["What is 2 + 3?"]\\naccess_list = [[]]'
envs = []
for seed in range(3):
    env = gym.make("ConductorEnv-v0", tasks="offline", pool=[spec])
    env.reset(seed=seed)
    error = env.step(plan)[4]["error"]
    print(error["message"] if error else "answered", flush=True)
    envs.append(env)
envs[0].close()
"""
EXIT_NOISE = (
    "Segmentation fault",
    "Task was destroyed but it is pending",
    "Event loop is closed",
    "Traceback",
    "LoggingWorker",
)


@pytest.mark.parametrize(
    ("params", "printed"),
    [({}, "answered"), ({"logit_bias": {EOT_TOKEN_ID: 100}}, "empty content")],
    ids=["answers", "empty-content"],
)
def test_several_envs_exit_cleanly(base_url: str, params: dict[str, Any], printed: str) -> None:
    # Before LiteLLM ran on one background loop, its logging task was left pending on the
    # envs' closed loops: "Task was destroyed but it is pending!" at exit, and after
    # empty answers (retried, so the task sat suspended in asyncio.Queue.get) a
    # segmentation fault while the garbage collector destroyed it (rc -11).
    done = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", SEVERAL_ENVS, base_url, json.dumps(params)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[:3] == [printed] * 3, done.stdout
    noise = [line for line in done.stderr.splitlines() if any(n in line for n in EXIT_NOISE)]
    assert not noise, done.stderr[-3000:]
