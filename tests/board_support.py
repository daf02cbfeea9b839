"""Shared pieces of the leaderboard tests: real evaluation runs wrapped as submissions."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import EpisodeRecord, Results, aggregate
from conductor_gym.board.submissions import Report, Submission, make_submission

Json = dict[str, Any]

BOARD_SUITE, BOARD_REPEATS = "offline-160", 3
"""What a ranked offline entry runs: the fixed subset suite, the minimum of repeats."""


def board_run(agent: str, out: Path, **kwargs: Any) -> Results:
    """A rankable run of ``agent`` (``offline-160``, 3 repeats, the suite seed), read back
    from the file ``evaluate`` wrote, as a submitter would have it."""
    options: dict[str, Any] = {"repeats": BOARD_REPEATS, "progress": False, **kwargs}
    evaluate(agent, options.pop("suite", BOARD_SUITE), out=out, **options)
    return Results.load(out)


def wrap(results: Results, **meta: Any) -> Submission:
    fields: dict[str, Any] = {
        "name": "Random planner",
        "authors": ["conductor-gym developers"],
        "training_data": "none",
        "pool_setting": "simulated",
        "date": datetime.date(2026, 1, 1),
    }
    return make_submission(results, **{**fields, **meta})


def reaggregate(data: Json) -> None:
    """Recompute the stored metrics from the (edited) episodes, as a careful tamperer would."""
    results = data["results"]
    episodes = [EpisodeRecord.model_validate(e) for e in results["episodes"]]
    metrics = aggregate(episodes, results["repeats"])
    results["metrics"] = {k: m.model_dump(mode="json") for k, m in metrics.items()}


def messages(report: Report) -> list[str]:
    return [str(problem) for problem in report.errors]
