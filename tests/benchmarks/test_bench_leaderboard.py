"""Benchmark: validating a leaderboard entry re-plays every episode.

Target: re-playing a 160-episode simulated entry takes under 2 s on 2 cores. The entry is
the heaviest baseline, the 8-step mixture of agents, on ``offline-160`` with one repeat
(160 episodes, 1280 simulated worker calls); the second benchmark is the whole
``validate_submission`` of it (schema, suite fingerprint, seeds, metrics, then the
re-play). Run: ``make bench``.
"""

from __future__ import annotations

from typing import Any

import pytest
from board_support import wrap

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.replay import replay_results
from conductor_gym.bench.results import Results
from conductor_gym.board.sections import offline_suite
from conductor_gym.board.submissions import validate_submission


@pytest.fixture(scope="module")
def entry() -> Results:
    results = evaluate("moa", "offline-160", repeats=1, progress=False)
    assert len(results.episodes) == 160
    return results


def test_replay_a_160_episode_simulated_entry(benchmark: Any, entry: Results) -> None:
    found = offline_suite("offline-160")
    assert found is not None
    sources = found[0].sources
    replay = benchmark(replay_results, entry, sources)
    assert replay.ok and replay.episodes == 160 and replay.method == "simulated"


def test_validate_a_160_episode_submission(benchmark: Any, entry: Results) -> None:
    raw = wrap(entry, name="MoA").model_dump(mode="json")
    report = benchmark(validate_submission, raw)
    assert report.ok and report.replay is not None and report.replay.episodes == 160
