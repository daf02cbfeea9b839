"""The results schema: aggregate metrics, the Results file and the episodes journal."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from conductor_gym.bench.results import (
    SCHEMA,
    EpisodeRecord,
    Results,
    ResumeMismatchError,
    SourceInfo,
    SuiteInfo,
    aggregate,
    open_journal,
)


def record(
    benchmark: str = "b",
    *,
    repeat: int = 0,
    outcome: str = "correct",
    task_index: int = 0,
    **fields: Any,
) -> EpisodeRecord:
    reward = {"correct": 1.0, "wrong": 0.5, "invalid": 0.0, "error": 0.0}[outcome]
    base: dict[str, Any] = {
        "benchmark": benchmark,
        "domain": "d",
        "task_index": task_index,
        "task_id": f"t{task_index}",
        "repeat": repeat,
        "seed": 7,
        "reward": reward,
        "outcome": outcome,
        "correct": outcome == "correct",
        "parse_error": "no_lists" if outcome == "invalid" else None,
        "error": {"kind": "infrastructure"} if outcome == "error" else None,
        "steps": 0 if outcome == "invalid" else 2,
        "worker_calls": 2,
        "prompt_tokens": 100,
        "completion_tokens": 50,
        "cost_usd": 0.01,
        "latency_s": 1.0,
        "completion": "plan",
    }
    base.update(fields)
    return EpisodeRecord(**base)


def test_standard_error_is_over_per_repeat_means() -> None:
    # repeat 0: 4/4 correct, repeat 1: 2/4, repeat 2: 3/4 -> means 1.0, 0.5, 0.75
    outcomes = {0: ["correct"] * 4, 1: ["correct", "correct", "wrong", "wrong"]}
    outcomes[2] = ["correct", "correct", "correct", "invalid"]
    episodes = [
        record(repeat=r, outcome=o, task_index=i)
        for r, row in outcomes.items()
        for i, o in enumerate(row)
    ]
    m = aggregate(episodes, repeats=3)["overall"]
    assert m.n == 12 and m.accuracy == pytest.approx(0.75)
    means = [1.0, 0.5, 0.75]
    sd = math.sqrt(sum((x - 0.75) ** 2 for x in means) / 2)
    assert m.accuracy_se == pytest.approx(sd / math.sqrt(3))
    rewards = [1.0, 0.75, (3 + 0.0) / 4]
    centre = sum(rewards) / 3
    sd_r = math.sqrt(sum((x - centre) ** 2 for x in rewards) / 2)
    assert m.mean_reward == pytest.approx(centre) and m.mean_reward_se == pytest.approx(
        sd_r / math.sqrt(3)
    )
    assert m.parse_failure_rate == pytest.approx(1 / 12)
    assert m.mean_steps == pytest.approx(2.0)  # the invalid plan (0 steps) is not a plan
    assert aggregate(episodes, repeats=1)["overall"].accuracy_se is None


def test_infrastructure_failures_count_but_never_score() -> None:
    episodes = [
        record(outcome="correct", repeat=0),
        record(outcome="wrong", repeat=1),
        record(outcome="error", repeat=0, task_index=1, prompt_tokens=1000, cost_usd=1.0),
        record(outcome="error", repeat=1, task_index=1, planner_tokens=10),
    ]
    m = aggregate(episodes, repeats=2)["overall"]
    assert m.n == 4 and m.infra_failures == 2
    assert m.accuracy == 0.5 and m.mean_reward == 0.75 and m.parse_failure_rate == 0.0
    assert m.accuracy_se == pytest.approx(0.5)  # per-repeat means 1.0 and 0.0
    # Spending counts every episode, failures included.
    assert m.tokens_per_sample == pytest.approx((150 + 150 + 1050 + 160) / 4)
    assert m.cost_per_sample_usd == pytest.approx((0.01 * 3 + 1.0) / 4)
    only_errors = aggregate([record(outcome="error")], repeats=4)["overall"]
    assert only_errors.accuracy == 0.0 and only_errors.accuracy_se is None


def test_per_benchmark_keys_and_order_independence() -> None:
    episodes = [
        record(
            benchmark=b,
            repeat=r,
            task_index=i,
            outcome=random.Random(i + r).choice(["correct", "wrong"]),
        )
        for b in ("mmlu", "math500")
        for r in range(3)
        for i in range(5)
    ]
    metrics = aggregate(episodes, repeats=3)
    assert list(metrics) == ["overall", "math500", "mmlu"]
    assert metrics["math500"].n == 15 and metrics["overall"].n == 30
    shuffled = list(episodes)
    random.Random(1).shuffle(shuffled)
    assert aggregate(shuffled, repeats=3) == metrics
    assert aggregate([], repeats=2)["overall"].n == 0
    with pytest.raises(ValueError, match="overall"):
        aggregate([record(benchmark="overall")], repeats=1)


def test_records_reject_unknown_fields_and_bad_outcomes() -> None:
    with pytest.raises(ValidationError):
        record(bogus=1)
    with pytest.raises(ValidationError):
        record(outcome="correct", repeat=-1)
    with pytest.raises(ValidationError):
        EpisodeRecord.model_validate({**record().model_dump(), "outcome": "great"})


def results_for(episodes: list[EpisodeRecord]) -> Results:
    return Results(
        env_id="ConductorEnv-v0",
        env_version="0.1.0",
        suite=SuiteInfo(
            name="s", fingerprint="f", sources=[SourceInfo(name="b", fingerprint="g", size=1)]
        ),
        pool={"name": "sim-paper"},
        agent={"spec": "random"},
        env_kwargs={},
        repeats=1,
        seed=0,
        started_at="2025-01-01T00:00:00+00:00",
        wall_time_s=1.5,
        metrics=aggregate(episodes, 1),
        episodes=episodes,
    )


def test_results_round_trip_and_schema_key(tmp_path: Path) -> None:
    results = results_for([record()])
    path = tmp_path / "r.json"
    results.dump(path)
    data = json.loads(path.read_text())
    assert next(iter(data)) == "schema" and data["schema"] == SCHEMA
    assert results.model_dump()["schema"] == SCHEMA
    assert Results.load(path) == results
    data["extra"] = 1
    path.write_text(json.dumps(data))
    with pytest.raises(ValidationError):
        Results.load(path)


def test_a_v1_file_still_loads_and_keeps_its_tag(tmp_path: Path) -> None:
    data = json.loads(results_for([record()]).to_json())
    data["schema"] = "conductor-gym/results/v1"
    del data["workers"]
    for episode in data["episodes"]:
        del episode["final_answer"]
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(data))
    loaded = Results.load(path)
    assert loaded.schema_ == "conductor-gym/results/v1" and SCHEMA.endswith("/v4")
    assert loaded.workers is None and loaded.episodes[0].final_answer is None
    assert json.loads(loaded.to_json())["schema"] == "conductor-gym/results/v1"
    data["schema"] = "conductor-gym/results/v9"
    path.write_text(json.dumps(data))
    with pytest.raises(ValidationError, match="schema"):
        Results.load(path)


def test_journal_drops_a_torn_line_and_rejects_another_run(tmp_path: Path) -> None:
    path = tmp_path / "r.json.episodes.jsonl"
    header = {"suite": "x", "seed": 0, "started_at": "then"}
    handle, records, _ = open_journal(path, header, resume=True)
    for i in range(3):
        handle.write(record(task_index=i).model_dump_json() + "\n")
    handle.write('{"benchmark": "b", "dom')  # torn by a crash mid-write
    handle.close()
    handle, records, started = open_journal(path, {**header, "started_at": "now"}, resume=True)
    handle.close()
    assert [r.task_index for r in records] == [0, 1, 2] and started == "then"
    assert path.read_text().endswith("\n") and len(path.read_text().splitlines()) == 3
    with pytest.raises(ResumeMismatchError, match=r"differs in seed.*new --out"):
        open_journal(path, {**header, "seed": 1}, resume=True)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "not json", *lines[1:]]) + "\n")
    with pytest.raises(ResumeMismatchError, match=":2 is not an episode record"):
        open_journal(path, header, resume=True)
    handle, records, _ = open_journal(path, {**header, "seed": 1}, resume=False)
    handle.close()
    assert records == [] and path.read_text() == ""
