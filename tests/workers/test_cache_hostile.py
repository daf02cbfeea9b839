"""Response caches a stranger crafted: only the cache's exact schema opens, and replay
reads under a value-length bound and a per-statement step bound.

Each hostile file is a real SQLite database built here in a few statements, as a
submitter could ship it beside a leaderboard entry (security issue, item 8: a cache whose
``responses`` is a recursive view ran for minutes; a ``randomblob`` view asked for
gigabytes). Every refusal happens before any row of the hostile object is read.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path

import pytest

from conductor_gym.workers.base import Completion
from conductor_gym.workers.cache import SCHEMA_VERSION, CacheError, ResponseCache, cache_request

COLUMNS = (
    "'k' AS key, 'm' AS model, 'r' AS request, {text} AS text, 1 AS prompt_tokens, "
    "1 AS completion_tokens, 0.0 AS cost_usd, 0.0 AS latency_s, 'x' AS created_at"
)
RECURSIVE_VIEW = (
    "CREATE VIEW responses AS WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 "
    f"FROM r) SELECT {COLUMNS.format(text=chr(39) + 't' + chr(39))} FROM r"
)
RANDOMBLOB_VIEW = f"CREATE VIEW responses AS SELECT {COLUMNS.format(text='randomblob(2e9)')}"
NOT_PLAIN = "not a plain response cache: it holds"
SCHEMA = "{schema}"  # stands for the genuine table's CREATE statement in the cases below


@pytest.fixture(scope="module")
def schema(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The CREATE statement of the table a genuine cache holds, read from one."""
    path = tmp_path_factory.mktemp("genuine") / "responses.sqlite"
    ResponseCache(path, "read-write").close()
    with contextlib.closing(sqlite3.connect(path)) as db:
        (sql,) = db.execute("SELECT sql FROM sqlite_master WHERE name = 'responses'").fetchone()
    return str(sql)


def crafted(path: Path, schema: str, *statements: str) -> Path:
    """A database made of ``statements`` (``SCHEMA`` in them: the genuine table's
    declaration), stamped with the cache's schema version."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        for sql in statements:
            db.execute(sql.replace(SCHEMA, schema))
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.commit()
    return path


def recorded(path: Path, text: str = "151") -> tuple[Path, str]:
    """A genuine cache holding one answer ``text``; returns it and the answer's key."""
    request = cache_request(
        "m", [{"role": "user", "content": "q"}], max_tokens=8, temperature=0.0, seed=None, params={}
    )
    completion = Completion(
        text=text, prompt_tokens=1, completion_tokens=1, cost_usd=0.0, latency_s=0.1, model="m"
    )
    with ResponseCache(path, "read-write") as cache:
        key = asyncio.run(cache.put(request, completion))
    return path, key


@pytest.mark.parametrize(
    ("statements", "held"),
    [
        ((RECURSIVE_VIEW,), "view 'responses'"),
        ((RANDOMBLOB_VIEW,), "view 'responses'"),
        ((SCHEMA, "CREATE INDEX by_model ON responses (model)"), "index 'by_model'"),
        (
            (
                SCHEMA,
                "CREATE TABLE log (x)",
                "CREATE TRIGGER t AFTER INSERT ON responses BEGIN INSERT INTO log VALUES (1); END",
            ),
            "table 'log', trigger 't'",
        ),
        (("CREATE TABLE other (x)",), "table 'other'"),
    ],
    ids=["recursive-view", "randomblob-view", "index", "trigger", "another-table"],
)
@pytest.mark.parametrize("mode", ["replay", "read-write"])
def test_anything_but_the_one_table_is_refused_naming_it(
    tmp_path: Path, schema: str, statements: tuple[str, ...], held: str, mode: str
) -> None:
    path = crafted(tmp_path / "hostile.sqlite", schema, *statements)
    with pytest.raises(CacheError) as caught:
        ResponseCache(path, "replay" if mode == "replay" else "read-write")
    assert str(caught.value) == (
        f"response cache {str(path)!r}: {NOT_PLAIN} {held}; a response cache holds the one "
        "table 'responses' and nothing else"
    )


def test_a_table_with_other_columns_or_declaration_is_refused(tmp_path: Path, schema: str) -> None:
    generated = schema.replace(
        "text TEXT NOT NULL", "text TEXT GENERATED ALWAYS AS (hex(zeroblob(1000000000))) VIRTUAL"
    )
    assert generated != schema
    path = crafted(tmp_path / "generated.sqlite", schema, generated)
    with pytest.raises(CacheError, match=r"table 'responses' has generated column\(s\) \['text'\]"):
        ResponseCache(path, "replay")
    extra = schema.replace("created_at TEXT NOT NULL", "created_at TEXT NOT NULL, extra BLOB")
    path = crafted(tmp_path / "extra.sqlite", schema, extra)
    with pytest.raises(CacheError, match=r"has columns \[.*'extra BLOB'\], not the cache's"):
        ResponseCache(path, "replay")
    check = schema.replace("created_at TEXT NOT NULL", "created_at TEXT NOT NULL CHECK (1)")
    assert check != schema
    path = crafted(tmp_path / "check.sqlite", schema, check)
    with pytest.raises(CacheError, match="is not declared as a response cache declares it"):
        ResponseCache(path, "replay")


def test_a_genuine_recording_replays(tmp_path: Path) -> None:
    path, key = recorded(tmp_path / "genuine.sqlite")
    with ResponseCache(path, "replay") as cache:
        hit = asyncio.run(cache.get(key))
    assert hit is not None and hit.text == "151" and hit.cached


def test_a_value_over_the_length_bound_is_refused_not_read(tmp_path: Path) -> None:
    path, key = recorded(tmp_path / "long.sqlite", text="x" * 5000)
    with (
        ResponseCache(path, "replay", max_value_bytes=4096) as cache,
        pytest.raises(CacheError) as caught,
    ):
        asyncio.run(cache.get(key))
    assert str(caught.value) == (
        f"response cache {str(path)!r}: a value over 4,096 bytes was refused"
    )
    with ResponseCache(path, "replay", max_value_bytes=5000) as cache:
        hit = asyncio.run(cache.get(key))
    assert hit is not None and len(hit.text) == 5000


def test_a_statement_over_the_step_bound_is_stopped(tmp_path: Path) -> None:
    # The schema check itself is the first statement a replay runs; a bound smaller than
    # it needs shows the progress handler stops a statement and says so.
    path, _ = recorded(tmp_path / "genuine.sqlite")
    with pytest.raises(CacheError) as caught:
        ResponseCache(path, "replay", max_query_steps=10)
    assert str(caught.value) == (
        f"response cache {str(path)!r}: a read ran over 10 SQLite steps and was stopped"
    )


@pytest.mark.parametrize("bound", [0, -1, 1.5, True])
def test_the_bounds_are_checked(tmp_path: Path, bound: object) -> None:
    with pytest.raises(ValueError, match=r"max_value_bytes must be an int >= 1"):
        ResponseCache(tmp_path / "c.sqlite", "replay", max_value_bytes=bound)  # type: ignore[arg-type]
