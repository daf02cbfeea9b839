"""Benchmark loaders on their fixtures, splits, order, fingerprints, errors, the mix and listing.

No test touches the network: loaders read ``tests/fixtures/<name>/`` (files in each
dataset's Hub format, written by ``tests/fixtures/make_fixtures.py``) or a fake Hugging
Face cache built in a temporary directory, with ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.util
import json
import os
import pickle
import shutil
import subprocess
import sys
import unittest
import zlib
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conductor_gym.cli_tasks import format_table, list_sources
from conductor_gym.tasks import (
    JsonlTasks,
    Task,
    TaskSource,
    TaskSourceError,
    make_task_source,
    task_source_names,
)
from conductor_gym.tasks.gpqa import option_permutation
from conductor_gym.tasks.livecodebench import decode_private_tests, version_files
from conductor_gym.tasks.mix import MixedTasks, paper_train_mix, stratified_pick
from conductor_gym.tasks.safe_pickle import (
    UnsafePickleError,
    decode_compressed_pickle,
    restricted_loads,
)
from conductor_gym.tasks.splits import hash_split, split_sizes

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HAS_DATASETS = importlib.util.find_spec("datasets") is not None
needs_datasets = pytest.mark.skipif(not HAS_DATASETS, reason="needs the datasets package")


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test runs offline with no token, whatever the caller's environment."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.delenv("HF_TOKEN", raising=False)


@pytest.fixture(scope="module")
def arrow_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Where ``datasets`` keeps its Arrow files for these tests."""
    return str(tmp_path_factory.mktemp("arrow-cache"))


def load(name: str, arrow_cache: str, **options: Any) -> list[Task]:
    options.setdefault("data_dir", FIXTURES / name.split("-")[0])
    return list(make_task_source(name, cache_dir=arrow_cache, **options))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def fake_hub_cache(root: Path, repo_id: str, files: dict[str, Path]) -> None:
    """Lay ``files`` (repository path -> local file) out as a cached snapshot of ``repo_id``."""
    repo = root / f"datasets--{repo_id.replace('/', '--')}"
    commit = "0" * 40
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / "main").write_text(commit)
    for relative, source in files.items():
        target = repo / "snapshots" / commit / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)


def option_lines(question: str) -> dict[str, str]:
    """``{"A": text, ...}`` from a lettered question."""
    lines = [line for line in question.splitlines() if len(line) > 2 and line[1:3] == ") "]
    return {line[0]: line[3:] for line in lines}


# -- import laziness ----------------------------------------------------------------------


def test_importing_and_building_sources_does_not_import_datasets() -> None:
    code = (
        "import sys, conductor_gym\n"
        "from conductor_gym.tasks import make_task_source\n"
        "from conductor_gym.cli_tasks import list_sources\n"
        "sources = [make_task_source(n) for n in ('math500', 'mmlu', 'gpqa-diamond', 'aime25',"
        " 'rlpr', 'livecodebench', 'bigcodebench', 'paper-train')]\n"
        "rows = list_sources()\n"
        "print('datasets' in sys.modules)\n"
        f"s = make_task_source('math500', data_dir={str(FIXTURES / 'math500')!r}, split='all')\n"
        "print(len(s), 'datasets' in sys.modules)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.split("\n")
    assert out[0] == "False"
    if HAS_DATASETS:
        assert out[1] == "8 True"  # the data really is read through datasets, when used


def test_building_a_source_reads_nothing(tmp_path: Path) -> None:
    source = make_task_source("math500", data_dir=tmp_path / "absent")
    assert not source.loaded
    with pytest.raises(TaskSourceError, match="not a directory"):
        len(source)


# -- MATH500 ------------------------------------------------------------------------------


@needs_datasets
def test_math500_maps_fields(arrow_cache: str) -> None:
    rows = read_jsonl(FIXTURES / "math500" / "test.jsonl")
    tasks = load("math500", arrow_cache, split="all")
    assert [t.id for t in tasks] == [f"math500/{r['unique_id']}" for r in rows]
    first, row = tasks[0], rows[0]
    assert first.question == row["problem"] and first.reference == row["answer"]
    assert first.grader == "math" and first.domain == "math500"
    assert dict(first.metadata) == {
        "profile": "math500",
        "subject": row["subject"],
        "level": row["level"],
        "unique_id": row["unique_id"],
    }
    assert tasks[-1].reference == "\\frac{1}{3}"


@needs_datasets
def test_math500_split_follows_the_documented_hash(arrow_cache: str) -> None:
    rows = read_jsonl(FIXTURES / "math500" / "test.jsonl")
    by_hash = sorted(rows, key=lambda r: sha(f"math500:{r['unique_id']}"))
    expected = {
        "test": {f"math500/{r['unique_id']}" for r in by_hash[:2]},
        "val": {f"math500/{r['unique_id']}" for r in by_hash[2:4]},
        "train": {f"math500/{r['unique_id']}" for r in by_hash[4:]},
    }
    for split, ids in expected.items():
        source = make_task_source(
            "math500", data_dir=FIXTURES / "math500", split=split, cache_dir=arrow_cache
        )
        got = [t.id for t in source]
        assert set(got) == ids, split
        assert got == [t for t in (f"math500/{r['unique_id']}" for r in rows) if t in ids]
        assert source.name == ("math500" if split == "test" else f"math500[{split}]")


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


# -- MMLU ---------------------------------------------------------------------------------


@needs_datasets
def test_mmlu_maps_fields_and_letters(arrow_cache: str) -> None:
    tasks = load("mmlu", arrow_cache)
    assert [t.id for t in tasks] == [f"mmlu/test/{i}" for i in range(5)]
    first = tasks[0]
    assert first.question == (
        "Which planet is closest to the Sun?\n\nA) Venus\nB) Mercury\nC) Mars\nD) Earth\n\n"
        "Answer with the letter of the correct option."
    )
    assert (first.reference, first.grader, first.domain) == ("B", "choice", "mmlu")
    assert first.metadata["num_choices"] == 4 and first.metadata["subject"] == "astronomy"
    assert first.metadata["profile"] == "mmlu" and first.metadata["distractors"] == ["A", "C", "D"]
    assert [t.reference for t in tasks] == ["B", "C", "A", "D", "B"]
    train = make_task_source(
        "mmlu", data_dir=FIXTURES / "mmlu", split="train", cache_dir=arrow_cache
    )
    assert train.name == "mmlu[auxiliary_train]"
    assert [t.reference for t in train] == ["A", "B", "C", "D"]
    assert train[0].id == "mmlu/auxiliary_train/0" and train[0].metadata["subject"] == ""


# -- GPQA ---------------------------------------------------------------------------------


@needs_datasets
def test_gpqa_shuffles_options_per_item_and_keeps_the_answer(arrow_cache: str) -> None:
    with (FIXTURES / "gpqa" / "gpqa_diamond.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    tasks = load("gpqa-diamond", arrow_cache, data_dir=FIXTURES / "gpqa")
    assert [t.id for t in tasks] == [f"gpqa-diamond/{r['Record ID']}" for r in rows]
    for task, row in zip(tasks, rows, strict=True):
        options = option_lines(task.question)
        assert options[task.reference] == row["Correct Answer"].strip()
        wrong = {row[f"Incorrect Answer {i}"].strip() for i in (1, 2, 3)}
        assert {text for letter, text in options.items() if letter != task.reference} == wrong
        assert task.question.startswith(row["Question"].strip() + "\n\nA) ")
        order = option_permutation(row["Record ID"])
        assert task.reference == "ABCD"[order.index(0)]
        assert task.grader == "choice" and task.metadata["num_choices"] == 4
        assert task.metadata["subdomain"] == row["Subdomain"]
    assert "None" in option_lines(tasks[1].question).values()  # not read as a missing value
    assert len({t.reference for t in tasks}) > 1  # the answer is not always at the same letter
    shuffled = {
        t.id: t.question
        for t in load("gpqa-diamond", arrow_cache, data_dir=FIXTURES / "gpqa", shuffle=True, seed=9)
    }
    assert shuffled == {t.id: t.question for t in tasks}  # permutation follows the id only
    reseeded = load("gpqa-diamond", arrow_cache, data_dir=FIXTURES / "gpqa", option_seed=1)
    assert [t.question for t in reseeded] != [t.question for t in tasks]


def test_gpqa_permutation_is_a_function_of_the_record_id() -> None:
    perms = {tuple(option_permutation(f"rec{i}")) for i in range(40)}
    assert len(perms) > 10
    assert option_permutation("recX") == option_permutation("recX")
    assert sorted(option_permutation("recX")) == [0, 1, 2, 3]


# -- AIME ---------------------------------------------------------------------------------


@needs_datasets
def test_aime25_reads_both_parts(arrow_cache: str) -> None:
    tasks = load("aime25", arrow_cache)
    assert [t.id for t in tasks] == [f"aime25/{p}-{k}" for p in ("I", "II") for k in (1, 2, 3)]
    assert [t.reference for t in tasks] == ["6", "99", "1", "12", "24", "120"]
    assert tasks[0].question == "Find the invented quantity $1+2+3$."
    assert tasks[0].grader == "math" and tasks[3].metadata["part"] == "II"
    assert tasks[3].metadata["problem"] == 1
    part = make_task_source(
        "aime25", data_dir=FIXTURES / "aime25", part="II", cache_dir=arrow_cache
    )
    assert part.name == "aime25[II]" and [t.id for t in part] == [t.id for t in tasks[3:]]


# -- RLPR ---------------------------------------------------------------------------------


@needs_datasets
def test_rlpr_maps_fields_and_splits_by_content(arrow_cache: str) -> None:
    tasks = load("rlpr", arrow_cache, split="all")
    assert len(tasks) == 8 and tasks[0].id == "rlpr/0"
    assert tasks[0].question == "An invented car goes 60 km in 2 h. Its mean speed in km/h?"
    assert "Think it through" not in tasks[0].question  # the system turn is dropped
    assert (tasks[0].reference, tasks[0].grader) == ("30", "freeform")
    assert tasks[2].reference == "20%" and tasks[0].metadata["ability"] == "Physics"
    assert tasks[0].metadata["data_source"] == "WebInstruct-verified"
    keyed = sorted(tasks, key=lambda t: sha(f"rlpr:{t.question}\x00{t.reference}"))
    test = load("rlpr", arrow_cache)
    assert {t.id for t in test} == {t.id for t in keyed[:2]}
    train = load("rlpr", arrow_cache, split="train")
    assert {t.id for t in train} == {t.id for t in keyed[4:]}


# -- LiveCodeBench ------------------------------------------------------------------------


@needs_datasets
def test_livecodebench_versions_and_test_kinds(arrow_cache: str) -> None:
    test = load("livecodebench", arrow_cache)
    assert [t.id for t in test] == ["livecodebench/abc990_b", "livecodebench/9100"]
    stdio, call = test
    assert stdio.metadata["code_kind"] == "stdio" and stdio.grader == "code"
    assert stdio.metadata["tests"] == [
        {"input": "a b c\n", "output": "c b a\n"},  # public
        {"input": "x\n", "output": "x\n"},  # private, pickled JSON string
    ]
    assert stdio.question.startswith("Read a line and print its words in reverse order.")
    assert "standard input" in stdio.question
    assert call.metadata["code_kind"] == "call" and call.metadata["fn_name"] == "longestRun"
    assert call.metadata["tests"] == [
        {"input": ["aabbb"], "output": 3},
        {"input": ["z"], "output": 1},
        {"input": ["ab\ncd"], "output": 1},
    ]
    assert "```python\nclass Solution:\n    def longestRun(self, s: str) -> int:" in call.question
    assert call.metadata["difficulty"] == "hard" and call.metadata["platform"] == "leetcode"
    tests_json = json.dumps(call.metadata["tests"], sort_keys=True, ensure_ascii=False)
    assert call.reference == f"sha256:{sha(tests_json)}"

    train = load("livecodebench", arrow_cache, split="train")
    assert [t.id for t in train] == [
        "livecodebench/abc900_a",
        "livecodebench/9001",
        "livecodebench/1900A",
    ]
    assert train[1].metadata["tests"][1:] == [
        {"input": [[1, 1, 1], 2], "output": 3},
        {"input": [[], 0], "output": 0},
    ]
    assert train[2].metadata["tests"][1] == {"input": "-1 -2 -3\n", "output": "-1\n"}
    assert len(train[0].metadata["tests"]) == 3  # 1 public + 2 private, all kept
    assert make_task_source("livecodebench", split="train").name == "livecodebench[release_v1]"

    with pytest.raises(TaskSourceError, match=r"test2\.jsonl"):
        load("livecodebench", arrow_cache, version="release_v6")
    both = [FIXTURES / "livecodebench" / "test.jsonl", FIXTURES / "livecodebench" / "test6.jsonl"]
    assert len(load("livecodebench", arrow_cache, data_files=both, data_dir=None)) == 5
    assert version_files("v6") == ("test6.jsonl",)
    assert (
        version_files("release_v6")[-1] == "test6.jsonl" and len(version_files("release_v6")) == 6
    )
    assert make_task_source("livecodebench").expected_size == 175


def test_livecodebench_refuses_a_malicious_pickle(tmp_path: Path) -> None:
    source = make_task_source("livecodebench", data_dir=FIXTURES / "livecodebench_malicious")
    with pytest.raises(TaskSourceError, match=r"problem 6666: .*not plain data") as info:
        source.load()
    assert "system" in str(info.value)
    assert isinstance(info.value.__cause__, UnsafePickleError)


# -- the restricted unpickler -------------------------------------------------------------


class _MakesDirectory:
    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (os.makedirs, (str(self.path),))


def test_restricted_unpickler_accepts_plain_data_only(tmp_path: Path) -> None:
    plain = {"a": [1, 2.5, "x", None, True, (3, 4)], 5: {"nested": []}}
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        assert restricted_loads(pickle.dumps(plain, protocol=protocol)) == plain
    for protocol in range(3, pickle.HIGHEST_PROTOCOL + 1):  # bytes need protocol >= 3
        assert restricted_loads(pickle.dumps([b"raw"], protocol=protocol)) == [b"raw"]
    target = tmp_path / "created-by-pickle"
    with pytest.raises(UnsafePickleError, match=r"os\.makedirs|posix|makedirs"):
        restricted_loads(pickle.dumps(_MakesDirectory(target)))
    assert not target.exists()  # nothing ran
    from collections import OrderedDict

    with pytest.raises(UnsafePickleError, match=r"collections\.OrderedDict"):
        restricted_loads(pickle.dumps(OrderedDict(a=1)))  # any class lookup is refused
    with pytest.raises(UnsafePickleError, match="set"):
        restricted_loads(pickle.dumps({1, 2}))


def test_decode_private_tests_formats() -> None:
    cases = [{"input": "1\n", "output": "2\n", "testtype": "stdin"}]
    encode = lambda value: base64.b64encode(zlib.compress(pickle.dumps(value))).decode()  # noqa: E731
    assert decode_private_tests(json.dumps(cases)) == cases
    assert decode_private_tests(encode(json.dumps(cases))) == cases
    assert decode_private_tests(encode(cases)) == cases
    assert decode_private_tests("") == []
    with pytest.raises(ValueError, match="exceeds"):
        decode_compressed_pickle(encode("x" * 10_000), max_bytes=100)
    with pytest.raises(ValueError):
        decode_private_tests("not base64 !!!")


# -- BigCodeBench -------------------------------------------------------------------------


@needs_datasets
def test_bigcodebench_maps_fields_and_reports_missing_libraries(arrow_cache: str) -> None:
    source = make_task_source(
        "bigcodebench", data_dir=FIXTURES / "bigcodebench", cache_dir=arrow_cache
    )
    tasks = list(source)
    assert [t.id for t in tasks] == [f"bigcodebench/{n}" for n in (9001, 9002, 9003)]
    first = tasks[0]
    assert first.grader == "code" and first.metadata["code_kind"] == "unittest"
    assert first.metadata["entry_point"] == "task_func" and first.metadata["libs"] == [
        "math",
        "itertools",
    ]
    assert first.metadata["task_id"] == "BigCodeBench/9001"
    assert first.reference.endswith('    """\n    return sum(values)\n')
    assert "```python\nimport math\nimport itertools\ndef task_func(values):" in first.question
    assert source.missing_libraries() == {"notarealfixturelib": ["bigcodebench/9003"]}
    # The reference is the canonical program: it passes the task's own unittest.
    for task in tasks[:2]:
        namespace: dict[str, Any] = {}
        exec(task.reference + "\n" + task.metadata["test_code"], namespace)
        suite = unittest.TestLoader().loadTestsFromTestCase(namespace["TestCases"])
        with open(os.devnull, "w") as sink:
            assert unittest.TextTestRunner(stream=sink).run(suite).wasSuccessful()


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


# -- errors -------------------------------------------------------------------------------


def test_offline_without_cache_names_hf_hub_offline(tmp_path: Path) -> None:
    for name in ("math500", "mmlu", "aime25", "bigcodebench", "livecodebench", "rlpr"):
        with pytest.raises(TaskSourceError, match="HF_HUB_OFFLINE") as info:
            make_task_source(name, cache_dir=tmp_path).load()
        assert "data_dir" in str(info.value) and isinstance(info.value, RuntimeError)
        assert "HF_TOKEN" not in str(info.value)


def test_gated_dataset_without_cache_names_hf_token(tmp_path: Path) -> None:
    with pytest.raises(TaskSourceError, match="HF_TOKEN") as info:
        make_task_source("gpqa-diamond", cache_dir=tmp_path).load()
    message = str(info.value)
    assert message.startswith("Idavidrein/gpqa:") and "HF_HUB_OFFLINE" in message
    assert "https://huggingface.co/datasets/Idavidrein/gpqa" in message  # where to accept terms


def _response(status: int) -> Any:
    return SimpleNamespace(headers={}, request=None, status_code=status)


def test_hub_errors_become_task_source_errors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import huggingface_hub
    from huggingface_hub import errors

    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("HF_TOKEN", "hf_fixture_token")
    calls: list[dict[str, Any]] = []
    raised: list[Exception] = []

    def fake_download(repo_id: str, filename: str, **kwargs: Any) -> str:
        calls.append({"repo_id": repo_id, "filename": filename, **kwargs})
        raise raised[-1]

    monkeypatch.setattr(huggingface_hub, "hf_hub_download", fake_download)
    cases = [
        (errors.GatedRepoError("403 gated", response=_response(403)), "gated.*HF_TOKEN"),
        (errors.RepositoryNotFoundError("404", response=_response(404)), "not found"),
        (errors.EntryNotFoundError("missing"), "layout may have changed"),
        (errors.HfHubHTTPError("401", response=_response(401)), "HF_TOKEN"),
        (ConnectionError("down"), "could not be reached"),
    ]
    for exc, pattern in cases:
        raised.append(exc)
        with pytest.raises(TaskSourceError, match=pattern) as info:
            make_task_source("gpqa-diamond", cache_dir=tmp_path).load()
        assert info.value.__cause__ is exc and info.value.dataset == "Idavidrein/gpqa"
    assert calls[0]["token"] == "hf_fixture_token" and calls[0]["local_files_only"] is False
    assert calls[0]["repo_type"] == "dataset" and calls[0]["cache_dir"] == str(tmp_path)
    assert calls[0]["filename"] == "gpqa_diamond.csv"
    raised.append(ConnectionError("x"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(TaskSourceError):
        make_task_source("gpqa-diamond", token="explicit").load()
    assert calls[-1]["token"] == "explicit" and calls[-1]["local_files_only"] is True


def test_local_data_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(TaskSourceError, match=r"no file matching 'test\.jsonl'"):
        make_task_source("math500", data_dir=tmp_path).load()
    with pytest.raises(TaskSourceError, match="data_files not found"):
        make_task_source("math500", data_files=[tmp_path / "nope.jsonl"]).load()
    monkeypatch.setitem(sys.modules, "datasets", None)  # as if it were not installed
    with pytest.raises(TaskSourceError, match="pip install"):
        make_task_source("math500", data_dir=FIXTURES / "math500").load()


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['splitt'\]"):
        make_task_source("math500", splitt="train")
    with pytest.raises(ValueError, match="split"):
        make_task_source("mmlu", split="nope")
    with pytest.raises(ValueError, match="version"):
        make_task_source("livecodebench", version="v99")
    with pytest.raises(ValueError, match="subset"):
        make_task_source("gpqa-diamond", subset="gpqa_tiny")
    with pytest.raises(ValueError, match="data_files"):
        make_task_source("aime25", data_files=[])
    assert "secret" not in repr(make_task_source("gpqa-diamond", token="secret"))


# -- the Hugging Face cache, offline ------------------------------------------------------


@needs_datasets
def test_loads_from_the_hub_cache_offline(tmp_path: Path, arrow_cache: str) -> None:
    hub = tmp_path / "hub"
    fake_hub_cache(
        hub, "HuggingFaceH4/MATH-500", {"test.jsonl": FIXTURES / "math500" / "test.jsonl"}
    )
    shard = "all/test-00000-of-00001.parquet"
    fake_hub_cache(hub, "cais/mmlu", {shard: FIXTURES / "mmlu" / shard})
    math = make_task_source("math500", cache_dir=str(hub), split="all")
    mmlu = make_task_source("mmlu", cache_dir=str(hub))
    assert math.offline_available() and mmlu.offline_available()
    assert len(math) == 8 and len(mmlu) == 5
    assert not make_task_source("mmlu", cache_dir=str(hub), split="dev").offline_available()
    assert not make_task_source("aime25", cache_dir=str(hub)).offline_available()


# -- JSON Lines ---------------------------------------------------------------------------


def test_jsonl_source(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    lines = [
        {"question": "1+1?", "answer": "2", "grader": "numeric"},
        {
            "question": "Pick B.",
            "answer": "B",
            "grader": "choice",
            "id": "q-b",
            "domain": "quiz",
            "metadata": {"num_choices": 3, "profile": "mmlu"},
        },
        {"question": "2*3?", "answer": 6, "grader": "numeric"},
    ]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    source = make_task_source(f"jsonl:{path}")
    assert isinstance(source, JsonlTasks) and source.name == f"jsonl:{path}"
    tasks = list(source)
    assert [t.id for t in tasks] == ["mine/0", "q-b", "mine/2"]
    assert (tasks[0].question, tasks[0].reference, tasks[0].grader) == ("1+1?", "2", "numeric")
    assert tasks[0].domain == "mine" and tasks[0].metadata == {"profile": "mine"}
    assert tasks[1].domain == "quiz" and tasks[1].profile == "mmlu"
    assert tasks[1].metadata["num_choices"] == 3 and tasks[2].reference == "6"
    assert source.offline_available() and source.fingerprint() == JsonlTasks(path).fingerprint()
    shuffled = make_task_source(f"jsonl:{path}", shuffle=True, seed=4)
    assert [t.id for t in shuffled] == sorted(
        (t.id for t in tasks), key=lambda i: sha(f"jsonl:4:{i}")
    )


@pytest.mark.parametrize(
    ("content", "pattern"),
    [
        (
            '{"question": "q", "answer": "a", "grader": "g"}\n{bad json\n',
            r"mine.jsonl:2 is not valid JSON",
        ),
        ('{"question": "q", "answer": "a"}\n', r"lacks \['grader'\]"),
        ('{"question": "q", "answer": "a", "grader": "g", "id": "x"}\n' * 2, "repeats the id 'x'"),
        ("\n", "holds no tasks"),
    ],
)
def test_jsonl_errors(tmp_path: Path, content: str, pattern: str) -> None:
    path = tmp_path / "mine.jsonl"
    path.write_text(content)
    with pytest.raises(TaskSourceError, match=pattern):
        len(make_task_source(f"jsonl:{path}"))


def test_jsonl_prefix_and_unknown_names(tmp_path: Path) -> None:
    with pytest.raises(TaskSourceError, match="cannot read"):
        len(make_task_source(f"jsonl:{tmp_path / 'absent.jsonl'}"))
    with pytest.raises(ValueError, match="give a file"):
        make_task_source("jsonl:")
    with pytest.raises(ValueError, match=r"unknown task source 'nope'; registered: \["):
        make_task_source("nope")


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


# -- listing ------------------------------------------------------------------------------


def test_list_sources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from huggingface_hub import constants

    hub = tmp_path / "hub"
    hub.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(hub))
    rows = {row["name"]: row for row in list_sources()}
    assert set(rows) == {*task_source_names(), "jsonl:<path>"}
    sizes = {
        name: rows[name]["size"]
        for name in (
            "math500",
            "mmlu",
            "gpqa-diamond",
            "aime25",
            "rlpr",
            "livecodebench",
            "bigcodebench",
            "paper-train",
            "offline",
        )
    }
    assert sizes == {
        "math500": 100,
        "mmlu": 14042,
        "gpqa-diamond": 198,
        "aime25": 30,
        "rlpr": 15540,
        "livecodebench": 175,
        "bigcodebench": 148,
        "paper-train": 960,
        "offline": 2000,
    }
    assert (
        rows["offline"]["offline_available"] is True and rows["jsonl:<path>"]["offline_available"]
    )
    assert rows["offline/countdown"]["domain"] == "countdown"
    assert rows["gpqa-diamond"]["domain"] == "gpqa-diamond"
    assert not any(rows[name]["offline_available"] for name in ("math500", "mmlu", "paper-train"))
    fake_hub_cache(
        hub, "HuggingFaceH4/MATH-500", {"test.jsonl": FIXTURES / "math500" / "test.jsonl"}
    )
    shard = "all/test-00000-of-00001.parquet"
    fake_hub_cache(hub, "cais/mmlu", {shard: FIXTURES / "mmlu" / shard})
    rows = {row["name"]: row for row in list_sources()}
    assert (
        rows["math500"]["offline_available"] is True and rows["mmlu"]["offline_available"] is True
    )
    assert rows["aime25"]["offline_available"] is False
    table = format_table(list_sources())
    lines = table.splitlines()
    assert lines[0].split() == ["name", "size", "domain", "offline", "available"]
    assert set(lines[1]) <= {"-", " "}
    assert any(line.split()[:2] == ["math500", "100"] and line.endswith("yes") for line in lines)
    assert any(line.startswith("jsonl:<path>") and " - " in line for line in lines)
