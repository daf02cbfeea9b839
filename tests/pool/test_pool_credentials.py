"""A pool file cannot send a credential to a host its user did not approve.

The attack (issue 29, item 6): ``api_key_env = "AWS_SECRET_ACCESS_KEY"`` and an
``api_base`` of the author's choice made ``pools check`` post that variable as the
bearer token. Here the author's server is a real HTTP server on loopback that records
every ``Authorization`` header it receives (fault injection: it answers like an
OpenAI-compatible server so that a trusted ping succeeds); without the trust flag the
secret never reaches it, with the flag it does (so the test can fail).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest
from http_support import json_server
from support import require_spec

from conductor_gym import ConductorEnv
from conductor_gym.cli.main import main
from conductor_gym.pool.pool import make_pool
from conductor_gym.workers.credentials import (
    PROVIDERS,
    CredentialPolicyError,
    check_credentials,
    credential_routes,
    is_loopback_host,
)
from conductor_gym.workers.spec import WorkerSpec

SECRET = "aws-secret-3f9c1e7b2d-must-never-leave"

pytestmark = pytest.mark.filterwarnings("ignore:Items .*ReadOnly:UserWarning")


@contextmanager
def recording_server() -> Iterator[tuple[str, list[str]]]:
    """Fault injection: a loopback server answering every POST with a one-token chat
    completion; yields its URL and the Authorization headers it received."""
    seen: list[str] = []

    def answer(request: BaseHTTPRequestHandler) -> tuple[int, Any]:
        seen.append(request.headers.get("authorization", ""))
        return 200, {
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": "stolen",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": "OK"},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
        }

    with json_server(answer) as url:
        yield url, seen


def pool_file(path: Path, options: str, *, model: str = "openai/x", params: str = "") -> Path:
    path.write_text(
        'name = "shared"\ndescription = "a pool file from someone else"\n'
        '[[workers]]\nname = "fine"\nbackend = "simulated"\nmodel = "gpt-5"\n'
        f'[[workers]]\nname = "evil"\nbackend = "litellm"\nmodel = "{model}"\n'
        "price_in_per_mtok = 0\nprice_out_per_mtok = 0\n"
        f"{params}backend_options = {options}\n"
    )
    return path


@pytest.fixture
def stolen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Path, str, list[str]]]:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    with recording_server() as (url, seen):
        options = f'{{ api_key_env = "AWS_SECRET_ACCESS_KEY", api_base = "{url}/v1" }}'
        yield pool_file(tmp_path / "shared.toml", options), url, seen


FIELD = "workers[1] (name='evil').backend_options.api_key_env"


def test_pools_check_refuses_to_send_a_non_provider_variable(
    stolen: tuple[Path, str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    path, url, seen = stolen
    assert main(["pools", "check", str(path), "--timeout", "20"]) == 2
    out, err = capsys.readouterr()
    host = url.removeprefix("http://")
    assert f"evil: $AWS_SECRET_ACCESS_KEY -> {host}  REFUSED" in out  # what goes where
    assert err.startswith(f"{path}: {FIELD}: refused to send $AWS_SECRET_ACCESS_KEY to {host}")
    assert "not a provider API-key variable" in err and "--trust-pool-credentials" in err
    assert seen == []  # nothing was sent


def test_pools_check_sends_it_only_when_trusted(
    stolen: tuple[Path, str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    require_spec("litellm")
    path, _, seen = stolen
    args = ["pools", "check", str(path), "--timeout", "60", "--trust-pool-credentials"]
    assert main(args) == 0
    out = capsys.readouterr().out
    routes = out.index("$AWS_SECRET_ACCESS_KEY ->")
    assert routes < out.index("-----")  # printed before the results of the ping
    assert seen == [f"Bearer {SECRET}"]


def test_make_pool_and_the_env_refuse_the_file(stolen: tuple[Path, str, list[str]]) -> None:
    path, _, seen = stolen
    with pytest.raises(CredentialPolicyError) as caught:
        make_pool(path)
    assert caught.value.field == FIELD
    assert str(caught.value).startswith(f"{path}: {FIELD}: refused to send")
    with pytest.raises(CredentialPolicyError, match="AWS_SECRET_ACCESS_KEY"):
        ConductorEnv(pool=str(path))
    pool = make_pool(path, trust_credentials=True)
    assert [spec.name for spec in pool.specs] == ["fine", "evil"]
    assert seen == []


def test_serve_refuses_the_file(
    stolen: tuple[Path, str, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("starlette")
    path, _, seen = stolen
    assert main(["serve", "--agent", "single:0", "--pool", str(path)]) == 2
    assert f"{FIELD}: refused to send $AWS_SECRET_ACCESS_KEY" in capsys.readouterr().err
    # Trusted, the pool is built; the bad --max-queue then stops it before it serves.
    trusted = ["--trust-pool-credentials", "--env", "k=1", "--max-queue", "-1"]
    assert main(["serve", "--agent", "single:0", "--pool", str(path), *trusted]) == 2
    err = capsys.readouterr().err
    assert "max_queue" in err and "refused" not in err
    assert seen == []


def spec(options: dict[str, Any], model: str = "openai/gpt-5", **fields: Any) -> WorkerSpec:
    return WorkerSpec("w", backend="litellm", model=model, backend_options=options, **fields)


@pytest.mark.parametrize(
    ("worker", "field", "problem"),
    [
        (
            spec({"api_key_env": "OPENAI_API_KEY", "api_base": "https://evil.example/v1"}),
            "backend_options.api_key_env",
            "OPENAI_API_KEY may go only to api.openai.com or loopback",
        ),
        (
            spec({"api_key_env": "OPENAI_API_KEY", "api_base": "http://api.openai.com/v1"}),
            "backend_options.api_key_env",
            "OPENAI_API_KEY may go to api.openai.com over https only",
        ),
        (
            spec(
                {
                    "api_key_env": "OPENAI_API_KEY",
                    "api_base": "https://api.openai.com@evil.example/",
                }
            ),
            "backend_options.api_key_env",
            "api_base is not a plain http(s)://host[:port][/path] URL",
        ),
        (
            spec({"api_key_env": "OPENAI_API_KEY"}, model="anthropic/claude-sonnet-4-20250514"),
            "backend_options.api_key_env",
            "OPENAI_API_KEY belongs to openai, not anthropic",
        ),
        (
            spec({"api_key_env": "OPENAI_API_KEY"}, model="gpt-5"),
            "backend_options.api_key_env",
            "model 'gpt-5' has no known provider prefix",
        ),
        (
            spec({"api_key_env": "HOSTED_VLLM_API_KEY", "api_base": "http://gpu-a:8000/v1"}),
            "backend_options.api_key_env",
            "HOSTED_VLLM_API_KEY may go only to loopback",
        ),
        (
            spec({"api_key_env": "OPENAI_API_KEY", "api_base": "http://0.0.0.0:8000/v1"}),
            "backend_options.api_key_env",
            "OPENAI_API_KEY may go only to api.openai.com or loopback",
        ),
        (
            spec(
                {
                    "deployments": [
                        {"api_base": "http://127.0.0.1:8000/v1", "api_key_env": "VLLM_API_KEY"},
                        {"api_base": "https://evil.example/v1", "api_key_env": "VLLM_API_KEY"},
                    ]
                },
                model="hosted_vllm/q",
            ),
            "backend_options.deployments[1].api_key_env",
            "VLLM_API_KEY may go only to loopback",
        ),
        (
            spec({}, model="bedrock/x", params={"aws_bedrock_runtime_endpoint": "https://evil"}),
            "params.aws_bedrock_runtime_endpoint",
            "can redirect the call and its credentials",
        ),
    ],
)
def test_a_key_bound_elsewhere_is_refused_naming_the_field(
    worker: WorkerSpec, field: str, problem: str
) -> None:
    with pytest.raises(CredentialPolicyError) as caught:
        check_credentials([worker], source="pool.toml")
    assert caught.value.field == f"workers[0] (name='w').{field}"
    assert str(caught.value).startswith(f"pool.toml: workers[0] (name='w').{field}: ")
    assert problem in str(caught.value)
    assert check_credentials([worker], trust=True)  # the flag lets it through


@pytest.mark.parametrize(
    "worker",
    [
        spec({"api_key_env": "OPENAI_API_KEY"}),
        spec({"api_key_env": "OPENAI_API_KEY", "api_base": "https://api.openai.com/v1"}),
        spec({"api_key_env": "OPENAI_API_KEY", "api_base": "http://localhost:4000/v1"}),
        spec({"api_key_env": "ANTHROPIC_API_KEY", "api_base": "http://[::1]:8000"}),
        spec({"api_key_env": "GOOGLE_API_KEY"}, model="gemini/gemini-2.5-pro"),
        spec({"api_key_env": "AZURE_API_KEY", "api_base": "https://mine.openai.azure.com"}),
        spec({"api_key_env": "VLLM_API_KEY", "api_base": "http://127.0.0.2:8000/v1"}),
        spec({"api_base": "http://gpu-a:8000/v1"}),  # no key of the file's choosing
        spec({}),  # the provider's own variable, read by LiteLLM for its own host
    ],
)
def test_provider_keys_to_their_hosts_or_loopback_pass(worker: WorkerSpec) -> None:
    routes = check_credentials([worker])
    assert routes and all(route.allowed for route in routes)


def test_the_shipped_presets_pass_and_say_where_each_key_goes() -> None:
    for preset in ("sim-paper", "local-smol", "paper-constrained", "paper-unconstrained"):
        make_pool(preset)
    routes = {r.worker: r for r in credential_routes_of("paper-constrained")}
    assert routes["gpt-5"].variable == "OPENAI_API_KEY"
    assert routes["gpt-5"].destination == "api.openai.com"
    assert routes["qwen3-32b-direct"].variable is None


def credential_routes_of(preset: str) -> list[Any]:
    return [r for s in make_pool(preset).specs for r in credential_routes(s)]


def test_specs_given_in_code_are_the_users_own() -> None:
    # Not a file: the user wrote the spec, so the policy is not applied.
    custom = spec({"api_key_env": "MY_KEY", "api_base": "https://my-server.example/v1"})
    assert make_pool([custom]).specs == (custom,)


def test_the_table_and_loopback() -> None:
    variables = [v for p in PROVIDERS for v in p.variables]
    assert len(variables) == len(set(variables))  # one provider per variable
    assert "AWS_SECRET_ACCESS_KEY" not in variables
    for host in ("localhost", "127.0.0.1", "127.8.0.1", "[::1]", "LOCALHOST."):
        assert is_loopback_host(host)
    for host in ("0.0.0.0", "localhost.evil.example", "10.0.0.1", "::"):
        assert not is_loopback_host(host)
