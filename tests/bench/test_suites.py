"""Evaluation suites: names, lazy sources, limits, fingerprints and the episode plan."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from support import write_tasks

from conductor_gym.bench.suites import (
    SUITES,
    LimitedTasks,
    episode_plan,
    episode_seed,
    get_suite,
    list_suites,
)
from conductor_gym.tasks import make_task_source


def test_named_suites_and_their_paper_splits() -> None:
    assert set(SUITES) == {"offline", "offline-160", "offline-ood", "paper-train4", "paper-ood3"}
    train = get_suite("paper-train4")
    assert [(s.name, s.source, dict(s.options)) for s in train.specs] == [
        ("math500", "math500", {"split": "test"}),
        ("mmlu", "mmlu", {"split": "test"}),
        ("rlpr", "rlpr", {"split": "test"}),
        ("livecodebench", "livecodebench", {"split": "test"}),
    ]
    assert [s.source for s in get_suite("paper-ood3").specs] == [
        "aime25",
        "bigcodebench",
        "gpqa-diamond",
    ]
    subset, whole = get_suite("offline-160"), get_suite("offline")
    assert subset.info()["sources"][0]["size"] == 160
    head = [whole.sources["offline"][i].id for i in range(160)]
    assert [task.id for task in subset.sources["offline"]] == head  # a fixed prefix
    assert subset.fingerprint() == whole.with_limit(160).fingerprint() != whole.fingerprint()
    with pytest.raises(ValueError, match=r"unknown suite 'nope'.*jsonl:<path>"):
        get_suite("nope")
    with pytest.raises(ValueError, match="limit"):
        get_suite("offline", limit=0)


def test_listing_reads_no_data() -> None:
    code = (
        "import sys\n"
        "from conductor_gym.bench.suites import get_suite, list_suites\n"
        "rows = list_suites()\n"
        "suite = get_suite('paper-train4')\n"
        "print(suite._sources is None, 'datasets' in sys.modules)\n"
        "import json; print(json.dumps({r['name']: r['size'] for r in rows}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == "True False"
    sizes = json.loads(out[1])
    assert sizes["offline"] == 2000 and sizes["paper-ood3"] == 30 + 148 + 198
    assert sizes["paper-train4"] == 100 + 14042 + 15540 + 175
    assert [row["name"] for row in list_suites()][-1] == "jsonl:<path>"


def test_limit_and_fingerprints() -> None:
    full, short = get_suite("offline"), get_suite("offline", limit=12)
    assert len(short.sources["offline"]) == 12
    assert [t.id for t in short.sources["offline"]] == [
        full.sources["offline"][i].id for i in range(12)
    ]
    info = short.info()
    assert info["limit"] == 12 and info["sources"][0]["size"] == 12
    assert short.fingerprint() == get_suite("offline", limit=12).fingerprint()
    assert short.fingerprint() != get_suite("offline", limit=13).fingerprint()
    assert short.fingerprint() != full.fingerprint()
    assert get_suite("offline-ood", limit=12).fingerprint() != short.fingerprint()
    limited = LimitedTasks(make_task_source("offline"), 3)
    with pytest.raises(IndexError):
        limited[3]
    assert short.with_limit(None).fingerprint() == full.fingerprint()


def test_jsonl_suite(tmp_path: Path) -> None:
    path = write_tasks(tmp_path / "sums.jsonl")
    suite = get_suite(f"jsonl:{path}")
    assert list(suite.sources) == ["sums"] and len(suite.sources["sums"]) == 4
    # The fingerprint names the questions, not where the file is.
    other = tmp_path / "copy"
    other.mkdir()
    write_tasks(other / "sums.jsonl")
    assert get_suite(f"jsonl:{other / 'sums.jsonl'}").fingerprint() == suite.fingerprint()
    with pytest.raises(ValueError, match="give a file"):
        get_suite("jsonl:")


def test_episode_plan_order_and_seeds() -> None:
    suite = get_suite("offline", limit=3)
    plan = episode_plan(suite, repeats=2, seed=5)
    assert [(e.repeat, e.task_index) for e in plan] == [(r, i) for r in range(2) for i in range(3)]
    assert plan[0].seed == episode_seed(5, "offline", 0, 0)
    assert len({e.seed for e in plan}) == 6
    assert episode_plan(suite, repeats=2, seed=5) == plan
    assert episode_plan(suite, repeats=2, seed=6)[0].seed != plan[0].seed
    assert all(0 <= e.seed < 2**63 for e in plan)
