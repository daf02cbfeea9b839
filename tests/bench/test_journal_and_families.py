"""The episodes journal and the per-family metrics (issue 26 item 7).

* ``pandas.read_json(journal, lines=True)`` reads the 63-bit seeds exactly (the header
  line the journal used to start with made pandas read every seed as a float);
* a journal of the older form still reads, and resuming it rewrites it in the new form;
* resuming keeps the scored episodes and plays the infrastructure failures again;
* resuming another run's journal says what the journal holds and to pass --no-resume;
* the results file stores metrics per task family, recomputed from the episodes.
"""

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
    aggregate,
    aggregate_domains,
    is_journal,
    journal_header_path,
    journal_path,
    load_results,
    read_journal,
)
from conductor_gym.core.agent import AgentError

RUN: dict[str, Any] = {"repeats": 2, "limit": 6, "seed": 3, "progress": False}
TOTAL = 12  # 6 tasks x 2 repeats
FAMILIES = ["arithmetic", "countdown", "multiple_choice", "program_trace"]


class FlakyAgent:
    """Fault injection: the random planner, whose model is down (every ``act_batch`` call
    raises :class:`AgentError`, an infrastructure failure) while ``down`` is true."""

    spec = "random/flaky"
    name = "random"

    def __init__(self, *, down: bool) -> None:
        self.inner = RandomPlanner()
        self.down = down
        self.calls = 0

    def reseed(self, seed: int) -> None:
        self.inner.rng.seed(seed)

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        return self.inner.act(observation, info)

    async def act_batch(
        self, observations: Sequence[str], infos: Sequence[Mapping[str, Any]]
    ) -> list[str]:
        self.calls += 1
        if self.down:
            raise AgentError("connection refused by the agent's server", transient=True)
        return await self.inner.act_batch(observations, infos)


def test_pandas_reads_the_journal_with_exact_63_bit_seeds(tmp_path: Path) -> None:
    pandas = pytest.importorskip("pandas")
    out = tmp_path / "r.json"
    results = evaluate(FlakyAgent(down=False), "offline", out=out, **RUN)
    seeds = [e.seed for e in results.episodes]
    assert max(seeds) > 2**53  # beyond what a float64 holds exactly
    journal = journal_path(out)
    table = pandas.read_json(journal, lines=True)
    assert str(table["seed"].dtype) == "int64" and len(table) == TOTAL
    assert sorted(int(s) for s in table["seed"]) == sorted(seeds)
    assert "header" not in table.columns
    header = json.loads(journal_header_path(journal).read_text())["header"]
    assert header["seed"] == 3 and header["repeats"] == 2
    # the older form, a header line first, is what corrupted them
    old = tmp_path / "old.jsonl"
    old.write_text(json.dumps({"header": header}) + "\n" + journal.read_text())
    corrupted = pandas.read_json(old, lines=True)
    assert str(corrupted["seed"].dtype) == "float64"


def test_an_older_journal_still_reads_and_is_rewritten_when_resumed(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    whole = evaluate(FlakyAgent(down=False), "offline", out=out, **RUN)
    journal, sidecar = journal_path(out), journal_header_path(journal_path(out))
    header = json.loads(sidecar.read_text())["header"]
    lines = journal.read_text().splitlines()
    journal.write_text("\n".join([json.dumps({"header": header}), *lines[:5]]) + "\n")
    sidecar.unlink()
    assert is_journal(journal) and not is_journal(out)
    found, records = read_journal(journal)
    assert found == header and len(records) == 5
    assert len(load_results(journal).episodes) == 5
    agent = FlakyAgent(down=False)
    resumed = evaluate(agent, "offline", out=out, **RUN)
    assert resumed.episodes == whole.episodes and agent.calls == TOTAL - 5
    assert json.loads(sidecar.read_text())["header"] == header  # started_at kept
    assert all("header" not in json.loads(line) for line in journal.read_text().splitlines())


def test_a_journal_without_its_header_is_a_clear_error(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    evaluate(FlakyAgent(down=False), "offline", out=out, **RUN)
    journal_header_path(journal_path(out)).unlink()
    with pytest.raises(ResumeMismatchError, match=r"12 episode line\(s\) but no run header.*"
                       r"r\.json\.episodes\.jsonl\.header is missing.*--no-resume"):  # fmt: skip
        evaluate(FlakyAgent(down=False), "offline", out=out, **RUN)
    assert not is_journal(journal_path(out))


def test_resuming_a_failed_run_plays_the_failures_again(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    failed = evaluate(FlakyAgent(down=True), "offline", out=out, **RUN)
    assert failed.metrics["overall"].infra_failures == TOTAL
    # the agent's server is back: the same command retries what failed, nothing else
    agent = FlakyAgent(down=False)
    again = evaluate(agent, "offline", out=out, **RUN)
    assert again.metrics["overall"].infra_failures == 0 and agent.calls == TOTAL
    assert again.episodes == evaluate(FlakyAgent(down=False), "offline", **RUN).episodes
    assert load_results(journal_path(out)).episodes == again.episodes  # the last record wins
    done = FlakyAgent(down=False)
    evaluate(done, "offline", out=out, **RUN)
    assert done.calls == 0  # every episode scored: nothing to play


def test_resuming_another_run_says_what_the_journal_holds(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    evaluate(FlakyAgent(down=False), "offline", out=out, **RUN)
    with pytest.raises(ResumeMismatchError) as info:
        evaluate(FlakyAgent(down=False), "offline", out=out, **{**RUN, "seed": 4})
    assert str(info.value) == (
        f"{journal_path(out)} holds 12 episode line(s) of a different run (it differs in "
        "seed); pass --no-resume (resume=False) to start it afresh, or a new --out (out=)"
    )


def test_results_store_metrics_per_family(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    results = evaluate(FlakyAgent(down=False), "offline", out=out, **RUN)
    assert list(results.domain_metrics) == FAMILIES
    for family, metrics in results.domain_metrics.items():
        episodes = [e for e in results.episodes if e.domain == family]
        assert metrics == aggregate(episodes, 2)["overall"] and metrics.n == len(episodes)
    assert sum(m.n for m in results.domain_metrics.values()) == TOTAL
    data = json.loads(out.read_text())
    assert data["schema"] == "conductor-gym/results/v4"
    assert data["domain_metrics"] == {
        k: m.model_dump() for k, m in aggregate_domains(results.episodes, 2).items()
    }
    # a stored copy is never trusted: it is recomputed from the episodes
    data["domain_metrics"]["countdown"]["accuracy"] = 1.0
    out.write_text(json.dumps(data))
    assert Results.load(out).domain_metrics == results.domain_metrics
    assert load_results(journal_path(out)).domain_metrics == results.domain_metrics


def test_an_older_file_keeps_its_tag_and_is_written_without_families(tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    evaluate(FlakyAgent(down=False), "offline", out=out, **RUN)
    data = json.loads(out.read_text())
    data["schema"] = "conductor-gym/results/v3"
    del data["domain_metrics"]
    older = Results.model_validate(data)
    assert list(older.domain_metrics) == FAMILIES  # still there for the reader
    written = json.loads(older.to_json())
    assert written["schema"] == "conductor-gym/results/v3" and "domain_metrics" not in written
