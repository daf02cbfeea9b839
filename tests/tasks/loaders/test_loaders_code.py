"""Loaders of the code benchmarks on their fixtures: LiveCodeBench (versions, test kinds,
private tests, a malicious pickle), the restricted unpickler, and BigCodeBench.

No test touches the network: loaders read ``tests/fixtures/<name>/`` (files in each
dataset's Hub format, written by ``tests/fixtures/make_fixtures.py``) or a fake Hugging
Face cache built in a temporary directory, with ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import base64
import json
import os
import pickle
import unittest
import zlib
from pathlib import Path
from typing import Any

import pytest
from loader_support import (
    FIXTURES,
    load,
    needs_datasets,
    sha,
)

from conductor_gym.tasks import TaskSourceError, make_task_source
from conductor_gym.tasks.livecodebench import decode_private_tests, version_files
from conductor_gym.tasks.safe_pickle import (
    UnsafePickleError,
    decode_compressed_pickle,
    restricted_loads,
)

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
