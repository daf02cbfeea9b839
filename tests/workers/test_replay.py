"""Record a real run through the response cache, then replay it with no backend reachable.

The recording talks to the real llama.cpp server on loopback (SmolLM2 through LiteLLM);
the replay points the same worker at a closed port, so any call that missed the cache
would fail. The API key given to the worker must appear nowhere: not in the cache
file, not in traces or infos.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llama_server import free_port
from support import plan_text, require_spec

from conductor_gym import ConductorEnv
from conductor_gym.workers.cache import ResponseCache
from conductor_gym.workers.spec import WorkerSpec

SECRET = "sk-test-5d1c0e9a7b-never-store-me"
SEEDS = range(5)

pytestmark = pytest.mark.filterwarnings("ignore:Items .*ReadOnly:UserWarning")


def pool(api_base: str) -> list[WorkerSpec]:
    common: dict[str, Any] = {
        "backend": "litellm",
        "model": "openai/smollm2",
        "max_tokens": 24,
        "price_in_per_mtok": 2.0,
        "price_out_per_mtok": 8.0,
        "backend_options": {"api_base": api_base, "api_key_env": "CG_TEST_KEY"},
    }
    # temperature 0.2 as in the paper: sampled calls, keyed by the rollout's seed
    return [WorkerSpec("smol-a", **common), WorkerSpec("smol-b", temperature=0.0, **common)]


def action(seed: int) -> str:
    if seed % 2:
        return plan_text([0, 1], ["Answer the question.", "Check the answer above."], [[], "all"])
    return plan_text([1], ["Answer the question briefly."], [[]])


def play(env: ConductorEnv) -> list[dict[str, Any]]:
    results = []
    for seed in SEEDS:
        env.reset(seed=seed)
        _, reward, terminated, truncated, info = env.step(action(seed))
        results.append({"reward": reward, "done": (terminated, truncated), "info": info})
    return results


def test_replay_reproduces_a_recorded_run_offline(
    llama_base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    require_spec("litellm")
    monkeypatch.setenv("CG_TEST_KEY", SECRET)
    db = tmp_path / "responses.sqlite"
    recorder = ConductorEnv(tasks="offline/arithmetic", pool=pool(f"{llama_base_url}/v1"), cache=db)
    recorded = play(recorder)
    assert all(r["info"]["outcome"] in ("correct", "wrong") for r in recorded)
    assert recorder.pool.cache is not None and recorder.pool.cache.stats()["writes"] == 7

    closed = f"http://127.0.0.1:{free_port()}/v1"
    with ResponseCache(db, mode="replay") as cache:
        replayed = play(ConductorEnv(tasks="offline/arithmetic", pool=pool(closed), cache=cache))
        assert cache.stats()["hits"] == 7 and cache.stats()["misses"] == 0
    for old, new in zip(recorded, replayed, strict=True):
        assert (new["reward"], new["done"]) == (old["reward"], old["done"])
        a, b = old["info"], new["info"]
        assert b["outcome"] == a["outcome"] and b["cost_usd"] == a["cost_usd"] > 0
        assert [s.response for s in b["trace"].steps] == [s.response for s in a["trace"].steps]
        assert [(s.prompt_tokens, s.completion_tokens) for s in b["trace"].steps] == [
            (s.prompt_tokens, s.completion_tokens) for s in a["trace"].steps
        ]
        assert all(s.cached for s in b["trace"].steps) and not any(
            s.cached for s in a["trace"].steps
        )
        assert (b["billed_usd"], b["cache_saved_usd"]) == (0.0, a["billed_usd"])

    # a call the recording never made is an infrastructure error in replay, not a score
    with ResponseCache(db, mode="replay") as cache:
        env = ConductorEnv(tasks="offline/arithmetic", pool=pool(closed), cache=cache)
        env.reset(seed=99)
        _, reward, _, truncated, info = env.step(action(99))
        assert truncated and reward == 0.0 and info["error"]["transient"] is False
        assert info["error"]["error_type"] == "ReplayMiss"
        assert "the recorded run has no such call" in info["error"]["message"]

    # the key was used (the server ignores it) but is stored nowhere
    stored = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert SECRET.encode() not in stored
    for result in (*recorded, *replayed):
        info = result["info"]
        dumped = json.dumps([r.to_dict() for r in info["rounds"]]) + repr(info)
        assert SECRET not in dumped
    assert SECRET not in repr(recorder.pool.workers)
