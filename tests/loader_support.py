"""Helpers shared by the loader tests (``loaders/test_loaders_*.py``).

No test touches the network: loaders read ``tests/fixtures/<name>/`` (files in each
dataset's Hub format, written by ``tests/fixtures/make_fixtures.py``) or a fake Hugging
Face cache built in a temporary directory, with ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from conductor_gym.tasks import Task, make_task_source

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HAS_DATASETS = importlib.util.find_spec("datasets") is not None
needs_datasets = pytest.mark.skipif(not HAS_DATASETS, reason="needs the datasets package")


def load(name: str, arrow_cache: str, **options: Any) -> list[Task]:
    options.setdefault("data_dir", FIXTURES / name.split("-")[0])
    return list(make_task_source(name, cache_dir=arrow_cache, **options))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
