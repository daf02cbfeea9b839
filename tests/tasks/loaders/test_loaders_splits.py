"""Which items a task source yields and in what order: the paper's split sizes, order,
seeded shuffles and fingerprints, and the paper-train mix.

No test touches the network: loaders read ``tests/fixtures/<name>/`` (files in each
dataset's Hub format, written by ``tests/fixtures/make_fixtures.py``) or a fake Hugging
Face cache built in a temporary directory, with ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path
from typing import Any

from loader_support import (
    FIXTURES,
    load,
    needs_datasets,
    read_jsonl,
    sha,
)

from conductor_gym.tasks import Task, TaskSource, make_task_source
from conductor_gym.tasks.mix import MixedTasks, paper_train_mix, stratified_pick
from conductor_gym.tasks.splits import hash_split, split_sizes

# -- paper split sizes --------------------------------------------------------------------


def test_hash_split_reproduces_the_papers_sizes() -> None:
    for n, (test, train) in {500: (100, 300), 77_700: (15_540, 46_620)}.items():
        parts = hash_split([f"item-{i}" for i in range(n)], "salt")
        assert (len(parts["test"]), len(parts["train"])) == (test, train)
        assert len(parts["val"]) == n - test - train
        assert sorted(parts["test"] + parts["val"] + parts["train"]) == list(range(n))
    assert split_sizes(8) == split_sizes(8)
    assert (split_sizes(8).test, split_sizes(8).val, split_sizes(8).train) == (2, 2, 4)
    rlpr = make_task_source("rlpr")
    assert rlpr.expected_size == 15_540
    assert make_task_source("rlpr", split="train").expected_size == 46_620


@needs_datasets
def test_math500_gives_100_test_and_300_train_on_500_problems(
    tmp_path: Path, arrow_cache: str
) -> None:
    path = tmp_path / "test.jsonl"
    path.write_text(
        "".join(
            json.dumps(
                {
                    "problem": f"p{i}",
                    "solution": "s",
                    "answer": str(i),
                    "subject": "Algebra",
                    "level": 1 + i % 5,
                    "unique_id": f"test/algebra/{i}.json",
                }
            )
            + "\n"
            for i in range(500)
        )
    )
    sizes = {}
    ids: dict[str, set[str]] = {}
    for split in ("test", "train", "val", "all"):
        source = make_task_source("math500", data_files=[path], split=split, cache_dir=arrow_cache)
        ids[split] = {t.id for t in source}
        sizes[split] = len(ids[split])
        assert source.expected_size == sizes[split]
    assert sizes == {"test": 100, "train": 300, "val": 100, "all": 500}
    assert not ids["test"] & ids["train"] and ids["test"] | ids["train"] | ids["val"] == ids["all"]


@needs_datasets
def test_unseen_benchmarks_keep_every_item(tmp_path: Path, arrow_cache: str) -> None:
    import datasets

    for part in ("I", "II"):
        (tmp_path / f"aime2025-{part}.jsonl").write_text(
            "".join(
                json.dumps({"question": f"q{part}{i}", "answer": str(i)}) + "\n" for i in range(15)
            )
        )
    aime = make_task_source("aime25", data_dir=tmp_path, cache_dir=arrow_cache)
    assert len(aime) == 30 == aime.expected_size

    columns = [
        "Question",
        "Correct Answer",
        "Incorrect Answer 1",
        "Incorrect Answer 2",
        "Incorrect Answer 3",
        "Record ID",
    ]
    with (tmp_path / "gpqa_diamond.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows([f"q{i}", "yes", "no", "maybe", "never", f"rec{i}"] for i in range(198))
    gpqa = make_task_source("gpqa-diamond", data_dir=tmp_path, cache_dir=arrow_cache)
    assert len(gpqa) == 198 == gpqa.expected_size

    names = ["task_id", "complete_prompt", "canonical_solution", "test", "entry_point", "libs"]
    rows = [
        dict(
            zip(
                names,
                [
                    f"BigCodeBench/{i}",
                    "def task_func():\n",
                    "    return 1\n",
                    "",
                    "task_func",
                    "['math']",
                ],
                strict=True,
            )
        )
        for i in range(148)
    ]
    (tmp_path / "data").mkdir()
    datasets.Dataset.from_list(rows).to_parquet(
        str(tmp_path / "data" / "v0.1.4-00000-of-00001.parquet")
    )
    bcb = make_task_source("bigcodebench", data_dir=tmp_path, cache_dir=arrow_cache)
    assert len(bcb) == 148 == bcb.expected_size


# -- order and fingerprints ---------------------------------------------------------------


@needs_datasets
def test_order_is_deterministic_and_shuffle_is_seeded(arrow_cache: str) -> None:
    plain = load("rlpr", arrow_cache, split="all")
    again = load("rlpr", arrow_cache, split="all")
    assert [t.id for t in plain] == [t.id for t in again] == [f"rlpr/{i}" for i in range(8)]
    one = load("rlpr", arrow_cache, split="all", shuffle=True, seed=1)
    assert [t.id for t in one] == [
        t.id for t in load("rlpr", arrow_cache, split="all", shuffle=True, seed=1)
    ]
    assert [t.id for t in one] == sorted((t.id for t in plain), key=lambda i: sha(f"rlpr:1:{i}"))
    two = load("rlpr", arrow_cache, split="all", shuffle=True, seed=2)
    assert sorted(t.id for t in two) == sorted(t.id for t in one) and two != one


@needs_datasets
def test_fingerprints_are_stable_and_sensitive_to_content(tmp_path: Path, arrow_cache: str) -> None:
    def fingerprint(name: str, data_dir: Path, **options: Any) -> str:
        source: TaskSource = make_task_source(
            name, data_dir=data_dir, cache_dir=arrow_cache, **options
        )
        return source.fingerprint()

    original = fingerprint("math500", FIXTURES / "math500", split="all")
    assert original == fingerprint("math500", FIXTURES / "math500", split="all")
    copy = tmp_path / "math500"
    copy.mkdir()
    rows = read_jsonl(FIXTURES / "math500" / "test.jsonl")
    (copy / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert fingerprint("math500", copy, split="all") == original
    rows[3]["answer"] = "11"
    (copy / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert fingerprint("math500", copy, split="all") != original
    assert original != fingerprint("math500", FIXTURES / "math500", split="all", shuffle=True)

    lcb = FIXTURES / "livecodebench"
    before = fingerprint("livecodebench", lcb)
    edited = tmp_path / "lcb"
    edited.mkdir()
    rows = read_jsonl(lcb / "test6.jsonl")
    rows[1]["private_test_cases"] = rows[1]["private_test_cases"].replace('"1"', '"2"', 1)
    (edited / "test6.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert fingerprint("livecodebench", edited) != before  # hidden tests are covered


# -- the paper-train mix ------------------------------------------------------------------


FIXTURE_POOLS = {
    "math500": {"data_dir": FIXTURES / "math500"},
    "mmlu": {"data_dir": FIXTURES / "mmlu"},
    "rlpr": {"data_dir": FIXTURES / "rlpr"},
    "livecodebench": {"data_dir": FIXTURES / "livecodebench"},
}


@needs_datasets
def test_paper_train_mix_counts_on_fixtures(arrow_cache: str) -> None:
    mix = make_task_source(
        "paper-train", per_domain=2, cache_dir=arrow_cache, source_options=FIXTURE_POOLS
    )
    assert isinstance(mix, MixedTasks)
    assert not any(source.loaded for source in mix.sources)
    tasks = list(mix)
    assert mix.counts() == {"math500": 2, "mmlu": 2, "rlpr": 2, "livecodebench": 2}
    assert [t.domain for t in tasks] == ["math500", "mmlu", "rlpr", "livecodebench"] * 2
    math_train = {
        t.id
        for t in make_task_source(
            "math500", split="train", data_dir=FIXTURES / "math500", cache_dir=arrow_cache
        )
    }
    picked_math = [t for t in tasks if t.domain == "math500"]
    assert {t.id for t in picked_math} <= math_train
    assert len({t.metadata["subject"] for t in picked_math}) == 2  # diversity
    assert all(t.id.startswith("mmlu/auxiliary_train/") for t in tasks if t.domain == "mmlu")
    rlpr_train = {
        t.id
        for t in make_task_source(
            "rlpr", split="train", data_dir=FIXTURES / "rlpr", cache_dir=arrow_cache
        )
    }
    assert {t.id for t in tasks if t.domain == "rlpr"} <= rlpr_train
    lcb = [t for t in tasks if t.domain == "livecodebench"]
    assert len({t.metadata["platform"] for t in lcb}) == 2 and all(
        t.id != "livecodebench/abc990_b" for t in lcb
    )
    whole = paper_train_mix(cache_dir=arrow_cache, source_options=FIXTURE_POOLS)
    assert whole.counts() == {"math500": 4, "mmlu": 4, "rlpr": 4, "livecodebench": 3}
    again = paper_train_mix(per_domain=2, cache_dir=arrow_cache, source_options=FIXTURE_POOLS)
    assert again.fingerprint() == mix.fingerprint()
    shuffled = paper_train_mix(
        per_domain=2, shuffle=True, cache_dir=arrow_cache, source_options=FIXTURE_POOLS
    )
    assert sorted(t.id for t in shuffled) == sorted(t.id for t in tasks)
    assert make_task_source("paper-train").expected_size == 960


def _task(n: int, subject: str, level: int) -> Task:
    return Task(f"math500/{n}", "q", "1", "math", "math500", {"subject": subject, "level": level})


def test_stratified_pick_balances_strata_and_takes_the_hardest() -> None:
    tasks = [_task(i, "big", 1 + i % 5) for i in range(10)]
    tasks += [_task(10, "small", 1), _task(11, "small", 5), _task(12, "tiny", 2)]
    picked = stratified_pick(tasks, 6, "salt")
    counts = Counter(t.metadata["subject"] for t in picked)
    assert counts == {"big": 3, "small": 2, "tiny": 1}
    big = [t for t in picked if t.metadata["subject"] == "big"]
    assert [t.metadata["level"] for t in big] == [5, 5, 4]
    small = [t for t in picked if t.metadata["subject"] == "small"]
    assert [t.metadata["level"] for t in small] == [5, 1]
    assert stratified_pick(tasks, 6, "salt") == picked
    assert len(stratified_pick(tasks, 100, "salt")) == len(tasks)
