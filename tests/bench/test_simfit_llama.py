"""A real pool end to end (issue 28, item 4): three workers on a real llama.cpp server
(SmolLM2-135M through LiteLLM) under settings that behave differently (greedy with a
long budget, sampled hot with a short one that cuts replies, sampled with a nucleus
limit), recorded through the response cache, fitted, scored on held-out tasks, and the
fitted pool then run offline with ``ConductorEnv(pool="fitted.toml")``.

Small on purpose (CI): 8 tasks to fit, 4 held out; single calls plus one self-check
run: 60 calls of at most 32 tokens, about a minute on two CPU cores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support import require_spec

from conductor_gym import ConductorEnv
from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import Results
from conductor_gym.bench.simfit import fidelity, fit
from conductor_gym.workers.spec import WorkerSpec

pytestmark = pytest.mark.filterwarnings("ignore:Items .*ReadOnly:UserWarning")

FIT_TASKS, HELD_OUT = 8, 4


def pool(api_base: str) -> list[WorkerSpec]:
    common: dict[str, Any] = {
        "backend": "litellm",
        "model": "openai/smollm2",
        "price_in_per_mtok": 0.05,
        "price_out_per_mtok": 0.2,
        "backend_options": {"api_base": api_base},
    }
    return [
        WorkerSpec("smol-greedy", temperature=0.0, max_tokens=32, **common),
        WorkerSpec("smol-hot-short", temperature=1.2, max_tokens=12, **common),
        WorkerSpec("smol-nucleus", temperature=0.7, max_tokens=32, params={"top_p": 0.5}, **common),
    ]


def record(specs: list[WorkerSpec], cache: Path, limit: int, out: Path, tag: str) -> list[Results]:
    agents = ["single:0", "single:1", "single:2", "reflect:0:2"]
    return [
        evaluate(
            agent,
            "offline",
            repeats=1,
            limit=limit,
            seed=0,
            progress=False,
            pool=specs,
            shuffle_workers=False,
            cache=str(cache),
            concurrency=2,
            out=out / f"{tag}-{agent.replace(':', '_')}.json",
        )
        for agent in agents
    ]


def test_a_real_llama_pool_is_fitted_scored_and_run_offline(
    llama_base_url: str, tmp_path: Path
) -> None:
    require_spec("litellm")
    specs = pool(f"{llama_base_url}/v1")
    cache = tmp_path / "calls.sqlite"
    runs = record(specs, cache, FIT_TASKS + HELD_OUT, tmp_path, "rec")
    fitting = [
        r.model_copy(update={"episodes": [e for e in r.episodes if e.task_index < FIT_TASKS]})
        for r in runs
    ]
    held = [
        r.model_copy(update={"episodes": [e for e in r.episodes if e.task_index >= FIT_TASKS]})
        for r in runs
    ]
    fitted = fit(fitting, cache=cache)
    print(fitted.format())
    assert [w.name for w in fitted.workers] == [s.name for s in specs]
    assert fitted.used == 3 * FIT_TASKS and fitted.traced == FIT_TASKS and fitted.untraced == 0
    greedy = fitted.workers[0]
    assert greedy.price_out_per_mtok == pytest.approx(0.2) and greedy.tokens
    assert greedy.dynamics["token_sigma"].n == greedy.calls + FIT_TASKS  # + its reflect solves
    path = tmp_path / "fitted.toml"
    fitted.to_toml(path)
    score = fidelity(path, held, cache=cache, seeds=2)
    print(score.format())
    assert score.episodes == 4 * HELD_OUT and score.untraced == 0
    env = ConductorEnv(pool=str(path), tasks="offline")  # offline: no server, no cache
    _, info = env.reset(seed=0)
    assert sorted(info["pool"]) == sorted(s.name for s in specs)
    _, _, terminated, _, info = env.step(
        'model_id = [0]\nsubtasks = ["Solve the problem."]\naccess_list = [[]]'
    )
    assert terminated and info["outcome"] in ("correct", "wrong")
