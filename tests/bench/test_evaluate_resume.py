"""Resuming an interrupted ``evaluate`` run gives exactly the uninterrupted results."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from conductor_gym.agents import RandomPlanner

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import (
    Results,
    ResumeMismatchError,
    journal_header_path,
    journal_path,
)

RUN: dict[str, Any] = {"repeats": 2, "limit": 30, "seed": 3, "progress": False}
TOTAL = 60  # 30 tasks x 2 repeats


class InterruptingAgent:
    """Fault injection: the random planner, but the ``interrupt_at``-th ``act_batch`` call
    raises ``KeyboardInterrupt``, as a user's Ctrl-C in the middle of a run would."""

    spec = "random/interruptible"
    name = "random"

    def __init__(self, interrupt_at: int | None = None) -> None:
        self.inner = RandomPlanner()
        self.interrupt_at = interrupt_at
        self.calls = 0

    def reseed(self, seed: int) -> None:
        self.inner.rng.seed(seed)

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        return self.inner.act(observation, info)

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        self.calls += 1
        if self.calls == self.interrupt_at:
            raise KeyboardInterrupt
        return await self.inner.act_batch(observations, infos)


def comparable(results: Results) -> dict[str, Any]:
    data = results.model_dump()
    del data["started_at"], data["wall_time_s"]
    return data


def test_interrupted_then_resumed_equals_uninterrupted(tmp_path: Path) -> None:
    whole = evaluate(InterruptingAgent(), "offline", out=tmp_path / "whole.json", **RUN)
    out = tmp_path / "resumed.json"
    with pytest.raises(KeyboardInterrupt):
        evaluate(InterruptingAgent(interrupt_at=TOTAL // 2), "offline", out=out, **RUN)
    assert not out.exists()
    journaled = journal_path(out).read_text().splitlines()
    assert 1 < len(journaled) < TOTAL  # some episodes, not all (the header is beside them)
    assert "header" in json.loads(journal_header_path(journal_path(out)).read_text())
    agent = InterruptingAgent()
    resumed = evaluate(agent, "offline", out=out, **RUN)
    assert agent.calls == TOTAL - len(journaled)  # only the missing episodes ran
    assert resumed.episodes == whole.episodes
    assert resumed.metrics == whole.metrics
    assert comparable(resumed) == comparable(whole)
    assert comparable(Results.load(out)) == comparable(Results.load(tmp_path / "whole.json"))
    # Everything done: a rerun plays nothing and gives the same file.
    again = InterruptingAgent()
    assert comparable(evaluate(again, "offline", out=out, **RUN)) == comparable(whole)
    assert again.calls == 0


def test_resume_survives_a_torn_last_line(tmp_path: Path) -> None:
    whole = evaluate(InterruptingAgent(), "offline", **RUN)
    out = tmp_path / "r.json"
    with pytest.raises(KeyboardInterrupt):
        evaluate(InterruptingAgent(interrupt_at=10), "offline", out=out, **RUN)
    with journal_path(out).open("a") as handle:
        handle.write('{"benchmark": "offline", "doma')  # a crash mid-write
    assert evaluate(InterruptingAgent(), "offline", out=out, **RUN).episodes == whole.episodes


def test_resuming_another_run_is_a_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    evaluate(InterruptingAgent(), "offline", out=out, **RUN)
    with pytest.raises(ResumeMismatchError, match=r"differs in seed.*new --out"):
        evaluate(InterruptingAgent(), "offline", out=out, **{**RUN, "seed": 4})
    with pytest.raises(ResumeMismatchError, match="differs in suite"):
        evaluate(InterruptingAgent(), "offline", out=out, **{**RUN, "limit": 31})
    with pytest.raises(ResumeMismatchError, match="differs in agent"):
        evaluate("random", "offline", out=out, **RUN)
    with pytest.raises(ResumeMismatchError, match="differs in env_kwargs"):
        evaluate(InterruptingAgent(), "offline", out=out, max_steps=4, **RUN)
    # resume=False starts the journal afresh.
    fresh = evaluate(InterruptingAgent(), "offline", out=out, resume=False, **{**RUN, "seed": 4})
    assert fresh.seed == 4 and Results.load(out).seed == 4


def test_out_in_a_missing_folder_creates_it(tmp_path: Path) -> None:
    out = tmp_path / "new" / "deeper" / "run.json"
    results = evaluate("random", "offline", out=out, **{**RUN, "limit": 2, "repeats": 1})
    assert Results.load(out) == results
    assert journal_path(out).is_file()
