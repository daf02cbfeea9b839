"""The dev split's generator (``tests/fixtures/make_request_corpus.py``) rewrites the
committed file exactly: its v3 base regenerated, every row the v3.1 rounds added by hand
kept, so a rerun loses nothing."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[1] / "fixtures" / "make_request_corpus.py"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_request_corpus", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_rerun_writes_the_committed_dev_split() -> None:
    generator = _generator()
    with generator.OUT.open(encoding="utf-8") as f:
        committed = [json.loads(line) for line in f if line.strip()]
    assert generator.build() == committed


def test_the_rows_added_by_hand_are_the_rounds_rows() -> None:
    generator = _generator()
    added = generator.added_by_hand()
    assert added, "the v3.1 rounds' rows are in the committed split"
    assert all(row["note"] not in generator.BASE_NOTES for row in added)
    assert all(row["note"].startswith("dev v3.1") for row in added)
