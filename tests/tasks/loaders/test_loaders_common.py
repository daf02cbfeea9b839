"""What every task source shares: lazy imports, errors (offline, gated, Hub, local data,
options), the Hugging Face cache offline, ``jsonl:<path>`` and the sources listing.

No test touches the network: loaders read ``tests/fixtures/<name>/`` (files in each
dataset's Hub format, written by ``tests/fixtures/make_fixtures.py``) or a fake Hugging
Face cache built in a temporary directory, with ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from loader_support import (
    FIXTURES,
    HAS_DATASETS,
    needs_datasets,
    sha,
)

from conductor_gym.cli.tasks import format_table, list_sources
from conductor_gym.tasks import JsonlTasks, TaskSourceError, make_task_source, task_source_names


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


# -- import laziness ----------------------------------------------------------------------


def test_importing_and_building_sources_does_not_import_datasets() -> None:
    code = (
        "import sys, conductor_gym\n"
        "from conductor_gym.tasks import make_task_source\n"
        "from conductor_gym.cli.tasks import list_sources\n"
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
    import socket

    import huggingface_hub
    from huggingface_hub import constants, errors

    monkeypatch.delenv("HF_HUB_OFFLINE")
    # the reachability probe connects to the endpoint first: a loopback listener answers it
    listener = socket.create_server(("127.0.0.1", 0))
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{listener.getsockname()[1]}")
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
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
    listener.close()


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
