"""A worker's own system prompt (``WorkerSpec.system_prompt``, ``system_prompt`` in a pool
file): every call of that worker starts with it, it keys the response cache, results
record it, and a re-play rebuilds it. The calls go to the real llama.cpp server on
loopback (SmolLM2 through LiteLLM)."""

from __future__ import annotations

from pathlib import Path

import pytest
from llama_server import free_port
from support import plan_text, require_spec

from conductor_gym import ConductorEnv
from conductor_gym.bench.results import WorkerRecord
from conductor_gym.pool.config import load_pool_file
from conductor_gym.workers.bound import BoundWorker
from conductor_gym.workers.cache import ResponseCache
from conductor_gym.workers.spec import WorkerSpec

pytestmark = pytest.mark.filterwarnings("ignore:Items .*ReadOnly:UserWarning")

BRIEF = "You answer in as few words as you can."
PLAN = plan_text([0], ["Answer the question."], [[]])


def smol(api_base: str, system_prompt: str | None) -> list[WorkerSpec]:
    return [
        WorkerSpec(
            "smol",
            backend="litellm",
            model="openai/smollm2",
            max_tokens=16,
            temperature=0.0,
            backend_options={"api_base": api_base, "api_key_env": "CG_TEST_KEY"},
            system_prompt=system_prompt,
        )
    ]


def test_a_system_prompt_reaches_the_worker_and_keys_the_cache(
    llama_base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_spec("litellm")
    monkeypatch.setenv("CG_TEST_KEY", "sk-test-unused")
    db = tmp_path / "responses.sqlite"
    live = f"{llama_base_url}/v1"
    tokens = {}
    for prompt in (None, BRIEF):
        env = ConductorEnv(tasks="offline/arithmetic", pool=smol(live, prompt), cache=db)
        env.reset(seed=0)
        _, _, _, truncated, info = env.step(PLAN)
        assert not truncated
        tokens[prompt] = info["trace"].steps[0].prompt_tokens
    # the server saw another prompt (SmolLM2's template adds a default system message
    # when a request has none, so the count differs rather than grows)
    assert tokens[BRIEF] != tokens[None]

    closed = f"http://127.0.0.1:{free_port()}/v1"
    for prompt, replays in ((BRIEF, True), ("Another system prompt.", False)):
        with ResponseCache(db, mode="replay") as cache:
            env = ConductorEnv(tasks="offline/arithmetic", pool=smol(closed, prompt), cache=cache)
            env.reset(seed=0)
            _, _, _, truncated, _ = env.step(PLAN)
            assert truncated is not replays  # another system prompt is another call
    results_record = WorkerRecord.from_spec(smol(live, BRIEF)[0])
    assert results_record.system_prompt == BRIEF


def test_the_env_system_message_follows_the_workers_own() -> None:
    bound = BoundWorker(worker=None, system_prompt=BRIEF)  # type: ignore[arg-type]
    user = {"role": "user", "content": "Compute 2 + 2."}
    assert bound.messages([user]) == [{"role": "system", "content": BRIEF}, user]
    env_system = {"role": "system", "content": "Be careful."}
    assert bound.messages([env_system, user]) == [
        {"role": "system", "content": f"{BRIEF}\n\nBe careful."},
        user,
    ]
    assert BoundWorker(worker=None).messages([user]) == [user]  # type: ignore[arg-type]


def test_a_pool_file_sets_system_prompts_and_records_only_set_ones(tmp_path: Path) -> None:
    path = tmp_path / "pool.toml"
    path.write_text(
        'name = "p"\ndescription = "d"\n[defaults]\nsystem_prompt = "Be brief."\n'
        '[[workers]]\nname = "gpt-5"\n'
        '[[workers]]\nname = "gemini-2.5-pro"\nsystem_prompt = "Think first."\n'
    )
    config = load_pool_file(path)
    assert [s.system_prompt for s in config.specs] == ["Be brief.", "Think first."]
    assert config.describe()["workers"][1]["system_prompt"] == "Think first."
    plain = WorkerRecord.from_spec(WorkerSpec("gpt-5")).model_dump(mode="json")
    assert "system_prompt" not in plain  # records of workers without one are unchanged
    with pytest.raises(ValueError, match=r"system_prompt must be None or a non-empty string"):
        WorkerSpec("gpt-5", system_prompt="  ")
    path.write_text(path.read_text().replace('"Think first."', '""'))
    with pytest.raises(Exception, match="system_prompt"):
        load_pool_file(path)
