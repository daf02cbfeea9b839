"""LiveCodeBench (``livecodebench/code_generation_lite``): contest programming problems,
graded by ``code``. Train: ``release_v1`` (400 problems); test: ``v6`` (175 problems).

Source. Current ``datasets`` refuses the repository's loading script, so the raw JSON
Lines shards are read directly (``hf_hub_download`` or ``data_dir``): ``test.jsonl``
(v1), ``test2.jsonl`` (v2), ... ``test6.jsonl`` (v6), per the version table of the
repository's ``code_generation_lite.py``: ``release_vN`` is the cumulative
``test.jsonl`` .. ``testN.jsonl``, ``vN`` the problems new in release N alone, and
``vN_vM`` releases N to M. Fields per ``lcb_runner/benchmarks/code_generation.py``:
``question_title``, ``question_content``, ``platform`` (leetcode / codeforces / atcoder),
``question_id``, ``contest_id``, ``contest_date``, ``starter_code``, ``difficulty``
(easy / medium / hard), ``public_test_cases`` (a JSON list of ``{"input", "output",
"testtype"}``), ``private_test_cases`` (the same list, either as JSON or as
``base64(zlib(pickle(...)))`` whose pickled value may itself be a JSON string) and
``metadata`` (JSON, ``{"func_name": ...}`` for LeetCode problems).

Why ``v6`` and not ``release_v6`` for test: ``release_v6`` contains ``release_v1``, the
paper's training set. Every LiveCodeBench accuracy in the paper's Table 7 is a multiple
of 1/1400 (= 1/(175 x 8)), consistent with the 175 problems new in v6 evaluated 8 times.
Pass ``version="release_v6"`` for the cumulative set.

Private tests are decoded with :func:`~conductor_gym.tasks.safe_pickle.
decode_compressed_pickle`, which refuses any pickle that references a class or function
(:class:`~conductor_gym.tasks.errors.TaskSourceError` naming the problem).

Contract (the ``code`` grader's input). Each problem becomes
``Task(id=f"livecodebench/{question_id}", question=<statement and what to write>,
reference="sha256:<hex of the tests' JSON>", grader="code")`` (the dataset has no
reference solution; the hash makes the fingerprint cover the tests) with ``metadata``:

* ``code_kind`` ``"stdio"`` (``testtype`` ``stdin``): ``tests`` = ``[{"input": str,
  "output": str}]``, public then private, all of them;
* ``code_kind`` ``"call"`` (``testtype`` ``functional``): ``fn_name`` (from
  ``metadata.func_name``) and ``tests`` = ``[{"input": [positional args], "output":
  value}]``, each argument being one line of LiveCodeBench's newline-separated JSON;
* ``profile``, ``platform``, ``difficulty``, ``contest_id``, ``contest_date``,
  ``question_title``, ``starter_code``, ``num_public_tests``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.tasks.base import Task
from conductor_gym.tasks.dataset_source import DatasetTasks, SourceConfig
from conductor_gym.tasks.errors import TaskSourceError
from conductor_gym.tasks.hub import HubFiles
from conductor_gym.tasks.safe_pickle import UnsafePickleError, decode_compressed_pickle

__all__ = [
    "LCB_FILE_SIZES",
    "LCB_VERSIONS",
    "LiveCodeBenchConfig",
    "LiveCodeBenchTasks",
    "decode_private_tests",
    "version_files",
]

_REPO = "livecodebench/code_generation_lite"
_SHARDS = ("test.jsonl", "test2.jsonl", "test3.jsonl", "test4.jsonl", "test5.jsonl", "test6.jsonl")

LCB_FILE_SIZES = {
    "test.jsonl": 400,
    "test2.jsonl": 111,
    "test3.jsonl": 101,
    "test4.jsonl": 101,
    "test5.jsonl": 167,
    "test6.jsonl": 175,
}
"""Problems per shard."""

_SPLIT_VERSIONS = {"train": "release_v1", "test": "v6"}


def _version_table() -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for end in range(1, len(_SHARDS) + 1):
        table[f"release_v{end}"] = _SHARDS[:end]
        table[f"v{end}"] = (_SHARDS[end - 1],)
        for start in range(1, end):
            table[f"v{start}_v{end}"] = _SHARDS[start - 1 : end]
    table["release_latest"] = _SHARDS
    return table


LCB_VERSIONS: dict[str, tuple[str, ...]] = _version_table()
"""Version tag -> the shards it reads."""


def version_files(version: str) -> tuple[str, ...]:
    """The shards of ``version`` (``ConfigurationError`` for an unknown tag)."""
    try:
        return LCB_VERSIONS[version]
    except KeyError:
        raise ConfigurationError(
            f"unknown LiveCodeBench version {version!r}; valid: {sorted(LCB_VERSIONS)}"
        ) from None


def decode_private_tests(raw: str) -> list[Any]:
    """The list of private test cases from ``private_test_cases`` (JSON or compressed pickle).

    Raises :class:`~conductor_gym.tasks.safe_pickle.UnsafePickleError` for a pickle that
    is not plain data and ``ValueError`` for anything else malformed.
    """
    if not raw.strip():
        return []
    try:
        value: Any = json.loads(raw)
    except json.JSONDecodeError:
        value = decode_compressed_pickle(raw)
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if isinstance(value, str):
            value = json.loads(value)
    if not isinstance(value, list):
        raise ValueError(f"private tests decode to a {type(value).__name__}, not a list")
    return value


def _call_arguments(text: str) -> list[Any]:
    """LiveCodeBench's newline-separated JSON arguments as a list of values."""
    return [json.loads(line) for line in text.strip("\n").split("\n")] if text.strip() else []


@dataclass(frozen=True)
class LiveCodeBenchConfig(SourceConfig):
    """Options of :class:`LiveCodeBenchTasks` (plus those of :class:`SourceConfig`).

    Attributes:
        split: ``"test"`` (default, version ``v6``) or ``"train"`` (``release_v1``).
        version: Any version tag of :data:`LCB_VERSIONS`; overrides ``split``.
    """

    split: str = "test"
    version: str | None = None

    @property
    def resolved_version(self) -> str:
        """``version``, else the split's version."""
        return self.version or _SPLIT_VERSIONS[self.split]

    def validate(self) -> None:
        """Check every field; ``ConfigurationError`` names the first bad one."""
        super().validate()
        if self.split not in _SPLIT_VERSIONS:
            raise ConfigurationError(f"split: must be 'test' or 'train', got {self.split!r}")
        if self.version is not None:
            try:
                version_files(self.version)
            except ValueError as exc:
                raise ConfigurationError(f"version: {exc}") from None


class LiveCodeBenchTasks(DatasetTasks[LiveCodeBenchConfig]):
    """LiveCodeBench code generation as a task source (see the module docstring)."""

    domain = "livecodebench"

    @classmethod
    def default_config(cls) -> LiveCodeBenchConfig:
        """Test (v6), dataset order."""
        return LiveCodeBenchConfig()

    def hub_files(self) -> HubFiles:
        """The shards of the configured version."""
        return HubFiles(_REPO, version_files(self.config.resolved_version), "json")

    def variant(self) -> str:
        """The version when it is not ``v6``."""
        version = self.config.resolved_version
        return "" if version == "v6" else version

    @property
    def expected_size(self) -> int:
        """Problems in the configured version's shards (175 for v6, 400 for release_v1)."""
        return sum(LCB_FILE_SIZES[name] for name in version_files(self.config.resolved_version))

    def read(self) -> list[dict[str, Any]]:
        """Every row of the shards, read line by line with the standard library."""
        rows: list[dict[str, Any]] = []
        for path in self.resolve(self.hub_files()):
            rows.extend(self._read_jsonl(path))
        return rows

    @staticmethod
    def _read_jsonl(path: Path) -> list[dict[str, Any]]:
        rows = []
        try:
            with path.open(encoding="utf-8") as handle:
                for number, line in enumerate(handle, start=1):
                    if not line.strip():
                        continue
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise TaskSourceError(
                            _REPO,
                            f"{path}:{number} is not valid JSON ({exc.msg}).",
                            "The file may be truncated; delete it and download it again.",
                        ) from exc
                    if not isinstance(row, dict):
                        raise TaskSourceError(_REPO, f"{path}:{number} is not a JSON object.")
                    rows.append(row)
        except OSError as exc:
            raise TaskSourceError(_REPO, f"could not read {path} ({exc}).") from exc
        return rows

    def build(self, rows: list[dict[str, Any]]) -> list[Task]:
        """One ``code`` task per problem."""
        return [self._task(n, row) for n, row in enumerate(rows)]

    def _task(self, n: int, row: dict[str, Any]) -> Task:
        qid = str(row.get("question_id") or f"row{n}")
        try:
            public = json.loads(row.get("public_test_cases") or "[]")
            private = decode_private_tests(str(row.get("private_test_cases") or ""))
            extra = json.loads(row.get("metadata") or "{}")
            content = str(row["question_content"]).strip()
        except UnsafePickleError as exc:
            raise TaskSourceError(
                _REPO,
                f"problem {qid}: private_test_cases holds a pickle that is not plain data "
                f"({exc}); refusing to load it.",
                "The file may have been tampered with; delete it and download it again.",
            ) from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise TaskSourceError(
                _REPO, f"problem {qid}: malformed field ({type(exc).__name__}: {exc})."
            ) from exc
        cases = list(public) + list(private)
        kinds = {str(case.get("testtype", "stdin")) for case in cases if isinstance(case, dict)}
        if not cases or len(kinds) != 1 or not kinds <= {"stdin", "functional"}:
            raise TaskSourceError(
                _REPO,
                f"problem {qid}: expected test cases of one type (stdin or functional), "
                f"got {sorted(kinds) or 'none'}.",
            )
        starter = str(row.get("starter_code") or "")
        meta: dict[str, Any] = {
            "platform": str(row.get("platform") or ""),
            "difficulty": str(row.get("difficulty") or ""),
            "contest_id": str(row.get("contest_id") or ""),
            "contest_date": str(row.get("contest_date") or ""),
            "question_title": str(row.get("question_title") or ""),
            "starter_code": starter,
            "num_public_tests": len(public),
        }
        try:
            if kinds == {"functional"}:
                fn_name = str(extra.get("func_name") or "") if isinstance(extra, dict) else ""
                if not fn_name:
                    raise ValueError("functional tests but no metadata.func_name")
                tests: list[dict[str, Any]] = [
                    {"input": _call_arguments(str(c["input"])), "output": json.loads(c["output"])}
                    for c in cases
                ]
                meta.update(code_kind="call", fn_name=fn_name)
                question = (
                    f"{content}\n\nComplete the method `{fn_name}` of this Python 3 code and "
                    f"give the whole code:\n```python\n{starter.rstrip()}\n```"
                )
            else:
                tests = [{"input": str(c["input"]), "output": str(c["output"])} for c in cases]
                meta["code_kind"] = "stdio"
                question = (
                    f"{content}\n\nWrite a Python 3 program that reads the input from standard "
                    "input and prints the answer to standard output."
                )
        except (KeyError, TypeError, ValueError) as exc:
            raise TaskSourceError(
                _REPO, f"problem {qid}: malformed test case ({type(exc).__name__}: {exc})."
            ) from exc
        meta["tests"] = tests
        digest = hashlib.sha256(
            json.dumps(tests, sort_keys=True, ensure_ascii=False).encode()
        ).hexdigest()
        return self.task(qid, question, f"sha256:{digest}", "code", meta)
