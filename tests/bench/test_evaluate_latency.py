"""``evaluate`` records each sample's latency twice: steps in order and as a graph."""

from __future__ import annotations

from pathlib import Path

import pytest
from conductor_gym.agents import RandomPlanner

from conductor_gym import ConductorEnv
from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import Results
from conductor_gym.bench.suites import get_suite
from conductor_gym.cli.evaluate import format_latency
from conductor_gym.cli.main import main
from conductor_gym.core.episode import critical_path_s
from conductor_gym.seeding import hash_seed


def test_each_sample_reports_summed_and_critical_path_latency() -> None:
    results = evaluate("random", "offline", limit=12, repeats=1, progress=False)
    env = ConductorEnv(tasks=get_suite("offline", limit=12).sources["offline"])
    agent = RandomPlanner()
    for episode in results.episodes:
        obs, info = env.reset(seed=episode.seed, options={"task_index": episode.task_index})
        agent.reseed(hash_seed("agent", episode.seed, 0))  # what evaluate gave it
        *_, info = env.step(agent.act(obs, info))
        assert episode.latency_s == pytest.approx(info["latency_s"])
        assert episode.critical_path_s == pytest.approx(critical_path_s(info["rounds"]))
    assert all(e.critical_path_s is not None for e in results.episodes)
    assert all(e.critical_path_s <= e.latency_s + 1e-9 for e in results.episodes)  # type: ignore[operator]
    assert any(e.critical_path_s < e.latency_s for e in results.episodes)  # type: ignore[operator]
    assert "% less" in format_latency(results)


def test_results_written_before_the_field_still_load(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    argv = ["evaluate", "--limit", "3", "--repeats", "1", "--no-progress", "--out", str(out)]
    assert main(argv) == 0
    data = Results.load(out).model_dump(by_alias=True)
    for episode in data["episodes"]:
        del episode["critical_path_s"]
    old = Results.model_validate(data)
    assert all(e.critical_path_s is None for e in old.episodes)
    assert format_latency(old) == "latency per sample: not recorded"
