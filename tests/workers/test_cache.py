from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from cache_writer import SHARED, own_row, shared_row
from support import FlakyWorker, plan_text, solve_plan

from conductor_gym._loop import LoopRunner
from conductor_gym.core.episode import bind_task
from conductor_gym.pool.pool import WorkerPool
from conductor_gym.sim.worker import make_simulated_worker, paper_pool_specs
from conductor_gym.tasks import Task
from conductor_gym.workers.base import Completion, Message, Worker, WorkerError
from conductor_gym.workers.bound import BoundWorker
from conductor_gym.workers.cache import (
    SCHEMA_VERSION,
    CachedWorker,
    CacheError,
    ReplayMiss,
    ResponseCache,
    cache_key,
)
from conductor_gym.workers.spec import WorkerSpec, register_backend

TASK = Task(
    id="t-1",
    question="Compute 12 * 12 + 7.",
    reference="151",
    grader="numeric",
    domain="arithmetic",
    metadata={"profile": "math500", "solution": "151", "distractors": ["144", "152", "161"]},
)
MESSAGES: list[Message] = [{"role": "user", "content": f"Solve: {TASK.question}"}]
COLUMNS = {
    "key", "model", "request", "text", "prompt_tokens", "completion_tokens", "cost_usd",
    "latency_s", "created_at",
}  # fmt: skip


class UnreachableWorker(Worker):
    """Test double for "no backend reachable": every call fails permanently."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.calls = 0

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        self.calls += 1
        raise WorkerError("no backend reachable (test double)", transient=False, worker=self.name)


class SecretHoldingWorker(Worker):
    """Test double: a real simulated worker behind a client that holds a credential."""

    def __init__(self, inner: Worker, api_key: str) -> None:
        self.name = inner.name
        self.inner = inner
        self.api_key = api_key
        self.headers = {"Authorization": f"Bearer {api_key}"}

    async def complete(
        self,
        messages: Sequence[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int | None = None,
        **params: Any,
    ) -> Completion:
        return await self.inner.complete(
            messages, max_tokens=max_tokens, temperature=temperature, seed=seed, **params
        )

    def __repr__(self) -> str:
        return f"SecretHoldingWorker(api_key={self.api_key!r})"


def sim(name: str = "gpt-5") -> Worker:
    """A real simulated worker bound to :data:`TASK`."""
    worker: Worker = make_simulated_worker(WorkerSpec(name=name)).for_task(TASK)
    return worker


def ask(worker: Worker, *, seed: int | None = 7, temperature: float = 0.2, **kw: Any) -> Completion:
    messages = kw.pop("messages", MESSAGES)
    return asyncio.run(
        worker.complete(messages, max_tokens=4096, temperature=temperature, seed=seed, **kw)
    )


def rows(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("SELECT * FROM responses ORDER BY key").fetchall()


# -- the cache and the cached worker ------------------------------------------------------


def test_miss_then_hit_returns_the_original_accounting(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    with ResponseCache(db) as cache:
        worker = CachedWorker(sim(), cache, model="gpt-5")
        assert worker.name == "gpt-5" and isinstance(worker, Worker)
        first = ask(worker)
        second = ask(worker)
        assert cache.stats() == {"hits": 1, "misses": 1, "writes": 1, "uncached": 0}
    assert not first.cached and second.cached
    assert second == dataclasses.replace(first, cached=True)
    assert first == ask(sim())  # the cache did not change the answer
    [row] = rows(db)
    assert json.loads(row[2]) == {
        "model": "gpt-5",
        "messages": MESSAGES,
        "max_tokens": 4096,
        "temperature": 0.2,
        "params": {},
        "sample": 7,
    }
    assert row[0] == cache_key(
        "gpt-5", MESSAGES, max_tokens=4096, temperature=0.2, seed=7, params={}
    )


def test_replay_answers_from_the_recording_and_a_miss_is_permanent(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    with ResponseCache(db) as cache:
        recorded = ask(CachedWorker(sim(), cache, model="gpt-5"))
    with ResponseCache(db, mode="replay") as cache:
        backend = UnreachableWorker("gpt-5")
        worker = CachedWorker(backend, cache, model="gpt-5")
        assert ask(worker) == dataclasses.replace(recorded, cached=True)
        other = [{"role": "user", "content": "Something never asked."}]
        key = cache_key("gpt-5", other, max_tokens=4096, temperature=0.2, seed=7, params={})
        with pytest.raises(ReplayMiss) as miss:
            ask(worker, messages=other)
        with pytest.raises(ReplayMiss, match="without a seed"):
            ask(worker, seed=None)
        with pytest.raises(RuntimeError, match="replay"):
            asyncio.run(cache.put({"model": "x"}, recorded))
        assert cache.stats()["hits"] == 1 and cache.stats()["misses"] == 1
    assert isinstance(miss.value, WorkerError) and miss.value.transient is False
    assert "'gpt-5'" in str(miss.value) and key[:12] in str(miss.value)
    assert "no such call" in str(miss.value)
    assert backend.calls == 0 and len(rows(db)) == 1


def test_greedy_calls_with_different_seeds_share_a_row(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    with ResponseCache(db) as cache:
        worker = CachedWorker(sim(), cache, model="gpt-5")
        answers = [ask(worker, seed=s, temperature=0.0) for s in (1, 2, None, 3)]
    assert [a.cached for a in answers] == [False, True, True, True]
    assert {dataclasses.replace(a, cached=False) for a in answers} == {answers[0]}
    assert len(rows(db)) == 1 and json.loads(rows(db)[0][2])["sample"] is None


def test_sampled_calls_keep_one_row_per_seed_and_replay_their_own(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    seeds = range(8)
    with ResponseCache(db) as cache:
        worker = CachedWorker(sim(), cache, model="gpt-5")
        recorded = [ask(worker, seed=s) for s in seeds]
    assert not any(a.cached for a in recorded) and len(rows(db)) == len(seeds)
    assert len({a.completion_tokens for a in recorded}) > 1  # independent samples
    with ResponseCache(db, mode="replay") as cache:
        worker = CachedWorker(UnreachableWorker("gpt-5"), cache, model="gpt-5")
        replayed = [ask(worker, seed=s) for s in reversed(seeds)][::-1]
    assert replayed == [dataclasses.replace(a, cached=True) for a in recorded]


def test_sampled_call_without_seed_passes_through_uncached(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    with ResponseCache(db) as cache:
        worker = CachedWorker(sim(), cache, model="gpt-5")
        answers = [ask(worker, seed=None) for _ in range(3)]
        assert cache.stats() == {"hits": 0, "misses": 0, "writes": 0, "uncached": 3}
    assert not any(a.cached for a in answers) and rows(db) == []


def test_worker_errors_propagate_unchanged_and_are_never_stored(tmp_path: Path) -> None:
    db = tmp_path / "c.sqlite"
    flaky = FlakyWorker("flaky", failures=1)  # fault injection: one transient outage
    with ResponseCache(db) as cache:
        worker = CachedWorker(flaky, cache, model="flaky-model")
        with pytest.raises(WorkerError) as error:
            ask(worker)
        assert error.value.transient and not isinstance(error.value, ReplayMiss)
        assert rows(db) == []
        assert not ask(worker).cached and ask(worker).cached
    assert flaky.calls == 2 and len(rows(db)) == 1


def test_keys_are_canonical_and_cover_every_part_of_a_call() -> None:
    base: dict[str, Any] = {"max_tokens": 64, "temperature": 0.0, "seed": 1, "params": {}}
    key = cache_key("m", MESSAGES, **base)
    assert len(key) == 64 and int(key, 16) >= 0
    same = [
        cache_key("m", MESSAGES, **{**base, "temperature": 0}),
        cache_key("m", MESSAGES, **{**base, "seed": None}),
        cache_key("m", [{"content": MESSAGES[0]["content"], "role": "user"}], **base),
    ]
    assert set(same) == {key}
    params = {"top_p": 0.9, "stop": ["\n"]}
    assert cache_key("m", MESSAGES, **{**base, "params": params}) == cache_key(
        "m", MESSAGES, **{**base, "params": dict(reversed(params.items()))}
    )
    different = [
        cache_key("other", MESSAGES, **base),
        cache_key("m", [*MESSAGES, {"role": "assistant", "content": "x"}], **base),
        cache_key("m", MESSAGES, **{**base, "max_tokens": 65}),
        cache_key("m", MESSAGES, **{**base, "temperature": 0.2}),
        cache_key("m", MESSAGES, **{**base, "params": params}),
    ]
    assert len({key, *different}) == len(different) + 1
    with pytest.raises(TypeError, match="param 'logit_bias'"):
        cache_key("m", MESSAGES, **{**base, "params": {"logit_bias": {1, 2}}})
    with pytest.raises(ValueError, match="not cacheable"):
        cache_key("m", MESSAGES, **{**base, "temperature": 0.5, "seed": None})


def test_modes_and_file_checks(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="mode"):
        ResponseCache(tmp_path / "c.sqlite", mode="write")  # type: ignore[arg-type]
    off = tmp_path / "off.sqlite"
    with ResponseCache(off, mode="off") as cache:
        worker = CachedWorker(sim(), cache, model="gpt-5")
        assert not ask(worker).cached and not ask(worker).cached
        assert cache.stats() == {"hits": 0, "misses": 0, "writes": 0, "uncached": 0}
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(FileNotFoundError, match="no recorded"):
        ResponseCache(tmp_path / "missing.sqlite", mode="replay")

    (tmp_path / "text.sqlite").write_text("not a database, just text " * 100)
    other = tmp_path / "other.sqlite"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE things (x)")
    newer = tmp_path / "newer.sqlite"
    ResponseCache(newer).close()
    with sqlite3.connect(newer) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    for path, mode, match in [
        (tmp_path / "text.sqlite", "read-write", "not a usable SQLite"),
        (other, "read-write", "not a response cache"),
        (newer, "read-write", f"schema version {SCHEMA_VERSION + 1}"),
        (newer, "replay", "use a new cache file"),
        (empty, "replay", "not a recorded response cache"),
    ]:
        with pytest.raises(CacheError, match=match):
            ResponseCache(path, mode=mode)  # type: ignore[arg-type]


def test_one_cache_serves_many_event_loops_and_threads(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    worker = CachedWorker(sim(), cache, model="gpt-5")
    first = ask(worker)  # asyncio.run: a fresh loop per call
    runner = LoopRunner()
    results: list[Completion] = [
        runner.run(worker.complete(MESSAGES, max_tokens=4096, temperature=0.2, seed=7))
    ]
    thread = threading.Thread(target=lambda: results.append(ask(worker)))
    thread.start()
    thread.join()
    runner.close()
    assert results == [dataclasses.replace(first, cached=True)] * 2
    cache.close()
    cache.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        ask(worker)


def test_for_task_is_kept_only_when_the_wrapped_worker_binds_tasks(tmp_path: Path) -> None:
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        unbound = CachedWorker(make_simulated_worker(WorkerSpec(name="gpt-5")), cache, "gpt-5")
        with pytest.raises(WorkerError, match="no task bound"):
            ask(unbound)
        bound = bind_task(BoundWorker(unbound, 4096, 0.2), TASK)
        assert isinstance(bound.worker, CachedWorker) and bound.worker is not unbound
        assert bound.worker.cache is cache and bound.worker.name == "gpt-5"
        assert ask(bound.worker) == ask(sim())
        plain = BoundWorker(CachedWorker(FlakyWorker("f", 0), cache, "f"))
        assert plain.worker.for_task(TASK) is plain.worker and bind_task(plain, TASK) is plain


def test_only_the_allowed_columns_are_written_never_a_secret(tmp_path: Path) -> None:
    secret = "sk-TEST-do-not-store-0123456789"
    db = tmp_path / "c.sqlite"
    with ResponseCache(db) as cache:
        worker = CachedWorker(SecretHoldingWorker(sim(), secret), cache, model="gpt-5")
        answers = [ask(worker, seed=s, top_p=0.95) for s in range(20)]
        files = [p for p in tmp_path.iterdir() if p.name.startswith("c.sqlite")]
        assert {p.name for p in files} >= {"c.sqlite", "c.sqlite-wal"}
        data = b"".join(p.read_bytes() for p in files)
        assert secret.encode() not in data and answers[0].text.encode() in data
        assert secret not in repr(worker)
    assert secret.encode() not in db.read_bytes()
    with sqlite3.connect(db) as conn:
        assert {c[1] for c in conn.execute("PRAGMA table_info(responses)")} == COLUMNS
        assert [t[0] for t in conn.execute("SELECT name FROM sqlite_master")] == ["responses"]
        requests = [json.loads(r[0]) for r in conn.execute("SELECT request FROM responses")]
    assert len(requests) == 20
    assert all(
        set(r) == {"model", "messages", "max_tokens", "temperature", "params", "sample"}
        for r in requests
    )
    assert all(r["params"] == {"top_p": 0.95} for r in requests)


# -- a whole env recorded, then replayed with no backend ----------------------------------


@pytest.fixture(scope="module", autouse=True)
def _cached_backend() -> None:
    # A test backend that takes its cache from backend_options: the registered-backend
    # hook is how a pool builds any worker, so the env runs unmodified, and each pool
    # gets its own cache without global state.
    def cached(spec: WorkerSpec) -> Worker:
        options = spec.backend_options
        inner: Worker = UnreachableWorker(spec.name)
        if options["reachable"]:
            inner = make_simulated_worker(dataclasses.replace(spec, backend_options={}))
        return CachedWorker(inner, options["cache"], spec.model_name)

    register_backend("test-cached", cached)


def cached_pool(cache: ResponseCache, *, reachable: bool) -> WorkerPool:
    options = {"cache": cache, "reachable": reachable}
    specs = [
        dataclasses.replace(spec, backend="test-cached", backend_options=options)
        for spec in paper_pool_specs()
    ]
    return WorkerPool(specs, k=3, shuffle=True)


def action(seed: int, question: str) -> str:
    """A mix of plans: one to three steps, steps without the question, an invalid one."""
    kind = seed % 5
    if kind == 0:
        return solve_plan(question, seed % 3)
    if kind == 1:
        return plan_text(
            [0, 1, 2],
            [f"Solve: {question}", "Check the work above.", "State the final answer."],
            [[], "all", [0, 1]],
        )
    if kind == 2:
        return plan_text([2, 0], [f"Solve {question}", "Give the final answer."], [[], [0]])
    if kind == 3:
        return plan_text([1], ["Give the final answer."], [[]])
    return "I would rather not plan."


def play(pool: WorkerPool, seeds: range) -> list[dict[str, Any]]:
    """Play one episode per seed; what each produced, with the cache's flags set apart
    (``cached`` per step, and how the cost splits into billed and saved)."""
    env = gym.make("ConductorEnv-v0", pool=pool)
    episodes = []
    for seed in seeds:
        _, info = env.reset(seed=seed)
        _, reward, terminated, truncated, info = env.step(action(seed, info["question"]))
        trace = info["trace"].to_dict() if info["trace"] is not None else {"steps": []}
        flags = [step.pop("cached", None) for step in trace["steps"]]
        split = [trace.pop(k, None) for k in ("billed_usd", "cache_saved_usd")]
        keys = ("outcome", "error", "pool", "worker_calls", "prompt_tokens", "cost_usd")
        episodes.append(
            {
                "step": (reward, terminated, truncated),
                "info": {k: info[k] for k in keys},
                "trace": trace,
                "cache": {"flags": flags, "billed_saved": split},
            }
        )
    env.close()
    return episodes


def cache_flags(episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e.pop("cache") for e in episodes]


def test_an_env_run_replays_exactly_with_no_backend(tmp_path: Path) -> None:
    db = tmp_path / "run.sqlite"
    seeds = range(40)
    with ResponseCache(db) as cache:
        recorded = play(cached_pool(cache, reachable=True), seeds)
        calls = sum(e["info"]["worker_calls"] for e in recorded)
        assert cache.stats()["misses"] == cache.stats()["writes"] == calls > 40
    assert {e["info"]["outcome"] for e in recorded} == {"correct", "wrong", "invalid"}
    with ResponseCache(db, mode="replay") as cache:
        replayed = play(cached_pool(cache, reachable=False), seeds)
        assert cache.stats() == {"hits": calls, "misses": 0, "writes": 0, "uncached": 0}
    recorded_flags, replayed_flags = cache_flags(recorded), cache_flags(replayed)
    assert replayed == recorded
    # Only the cache's own flags differ: every replayed step is cached, none recorded.
    assert all(f["flags"] == [False] * len(f["flags"]) for f in recorded_flags)
    assert all(f["flags"] == [True] * len(f["flags"]) for f in replayed_flags)
    for before, after, episode in zip(recorded_flags, replayed_flags, recorded, strict=True):
        if episode["trace"]["steps"]:
            cost = episode["trace"]["cost_usd"]
            assert before["billed_saved"] == [cost, 0] and after["billed_saved"] == [0, cost]
    # A different run is not in the recording: it fails as an infrastructure error.
    with ResponseCache(db, mode="replay") as cache:
        [other] = play(cached_pool(cache, reachable=False), range(1000, 1001))
    error = other["info"]["error"]
    assert other["step"][2] and error["error_type"] == "ReplayMiss"
    assert "no such call" in error["message"]


# -- several processes writing at once, one of them killed --------------------------------


def _logged(log: Path) -> list[tuple[str, int]]:
    if not log.exists():
        return []
    complete = log.read_text().split("\n")[:-1]  # a torn last line is not a logged key
    return [(key, int(i)) for key, i in (line.split() for line in complete)]


def test_concurrent_writers_and_a_killed_one_lose_no_committed_row(tmp_path: Path) -> None:
    db = tmp_path / "shared.sqlite"
    script = Path(__file__).resolve().parents[1] / "cache_writer.py"
    n, victim_rows = 300, 10**6
    logs = [tmp_path / f"writer-{i}.log" for i in range(5)]

    def start(i: int, rows: int) -> subprocess.Popen[str]:
        command = [sys.executable, str(script), str(db), str(i), str(rows), str(logs[i])]
        return subprocess.Popen(command, stderr=subprocess.PIPE, text=True)

    procs = [start(i, n if i < 4 else victim_rows) for i in range(5)]
    victim = procs[4]
    deadline = time.monotonic() + 120  # a guard against hanging, not a timing assertion
    while len(_logged(logs[4])) < 40:
        assert victim.poll() is None, victim.communicate()[1]
        assert time.monotonic() < deadline, "the victim wrote nothing"
        time.sleep(0.005)
    os.kill(victim.pid, signal.SIGKILL)
    assert victim.wait(timeout=60) == -signal.SIGKILL
    for proc in procs[:4]:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err

    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        stored = {r[0]: r for r in conn.execute("SELECT * FROM responses")}
    for index, log in enumerate(logs):
        logged = _logged(log)
        if index < 4:
            assert [i for _, i in logged] == list(range(n))
            assert sum(r[1] == f"reported/writer-{index}" for r in stored.values()) == n
        assert len(logged) >= 40
        for key, i in logged:
            request, completion = own_row(index, i)
            row = stored[key]
            assert json.loads(row[2]) == request and row[8]
            assert row[3:8] + row[1:2] == dataclasses.astuple(completion)[:6]
    shared = [r for r in stored.values() if r[1] == "reported/shared"]
    assert sorted(r[3] for r in shared) == sorted(shared_row(j)[1].text for j in range(SHARED))
    with ResponseCache(db, mode="replay") as cache:
        key, i = _logged(logs[4])[-1]
        hit = asyncio.run(cache.get(key))
    assert hit == dataclasses.replace(own_row(4, i)[1], cached=True)
