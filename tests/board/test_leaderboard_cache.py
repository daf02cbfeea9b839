"""A real-pool submission re-played from the response cache it ships.

The run talks to a real llama.cpp server on loopback (SmolLM2 through LiteLLM) with the
response cache recording; validation re-plays every episode from that cache with no
backend behind the workers (the results do not even record the server's address).
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
from pathlib import Path

import pytest
from board_support import messages, wrap
from support import require_spec

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import Results, aggregate
from conductor_gym.board.sections import price_table
from conductor_gym.board.submissions import SUBMISSIONS_DIR, make_submission, validate_file
from conductor_gym.cli.main import main
from conductor_gym.workers.spec import WorkerSpec

pytestmark = pytest.mark.filterwarnings("ignore:Items .*ReadOnly:UserWarning")


def specs(api_base: str) -> list[WorkerSpec]:
    common = {
        "backend": "litellm",
        "model": "openai/smollm2",
        "max_tokens": 16,
        "price_in_per_mtok": 2.0,
        "price_out_per_mtok": 8.0,
        "backend_options": {"api_base": api_base, "api_key_env": "CG_TEST_KEY"},
    }
    return [WorkerSpec("smol-a", **common), WorkerSpec("smol-b", temperature=0.0, **common)]


@pytest.fixture(scope="module")
def recorded(llama_base_url: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[Results, Path]:
    require_spec("litellm")  # not imported here: the worker imports it with the bundled price map
    folder = tmp_path_factory.mktemp("real")
    cache = folder / "responses.sqlite"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CG_TEST_KEY", "sk-local")
        results = evaluate(
            "single:0",
            "offline",
            pool=specs(f"{llama_base_url}/v1"),
            repeats=1,
            limit=2,
            cache=str(cache),
            progress=False,
        )
    assert results.metrics["overall"].infra_failures == 0
    return results, cache


def _board(tmp_path: Path, results: Results, cache: Path | None) -> Path:
    folder = tmp_path / SUBMISSIONS_DIR
    folder.mkdir(parents=True)
    if cache is not None:
        shutil.copyfile(cache, folder / cache.name)
        cache = folder / cache.name
    submission = make_submission(
        results,
        name="Smol single",
        authors=["tests"],
        training_data="none",
        pool_setting="constrained",
        response_cache=cache,
    )
    return submission.dump(folder / "smol.json")


def _edited(cache: Path, folder: Path | None, sql: str) -> Path:
    """``cache`` edited with ``sql`` (in a copy in ``folder``, or in place when ``None``)."""
    target = cache if folder is None else folder / cache.name
    if folder is not None:
        shutil.copyfile(cache, target)
    with contextlib.closing(sqlite3.connect(target)) as db, db:
        db.execute(sql)
    return target


def test_it_replays_from_the_shipped_cache(recorded: tuple[Results, Path], tmp_path: Path) -> None:
    results, cache = recorded
    report = validate_file(_board(tmp_path, results, cache))
    assert report.ok, messages(report)
    assert report.placement is not None and report.replay is not None, str(report.placement)
    assert report.replay.method == "response cache" and report.replay.episodes == 2
    assert str(report.placement.verification) == "re-played (response cache, 2 episodes)"
    assert report.placement.reasons[0].startswith("partial: the first 2 tasks")
    assert price_table(results) == "pool-file prices"


def test_without_its_cache_it_is_unverified(recorded: tuple[Results, Path], tmp_path: Path) -> None:
    results, _ = recorded
    report = validate_file(_board(tmp_path, results, None))
    assert report.ok, messages(report)
    assert report.placement is not None and report.placement.reasons[0] == (
        "unverified: the pool has real workers (litellm) and no response cache was given: "
        "their answers cannot be re-played offline"
    )


def test_cli_validate_takes_the_cache_for_one_file(
    recorded: tuple[Results, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results, cache = recorded
    entry = _board(tmp_path, results, None)
    assert main(["leaderboard", "validate", "--cache", str(cache), str(entry)]) == 0
    assert "re-played (response cache, 2 episodes)" in capsys.readouterr().out
    assert main(["leaderboard", "validate", "--cache", str(cache), str(entry), str(entry)]) == 2


def test_costs_zeroed_in_results_and_cache_are_priced_again(
    recorded: tuple[Results, Path], tmp_path: Path
) -> None:
    results, cache = recorded
    forged = _edited(cache, tmp_path, "UPDATE responses SET cost_usd = 0")
    episodes = [e.model_copy(update={"cost_usd": 0.0}) for e in results.episodes]
    zeroed = results.model_copy(update={"episodes": episodes, "metrics": aggregate(episodes, 1)})
    report = validate_file(_board(tmp_path / "b", zeroed, forged))
    assert any("cost_usd: recorded 0.0, re-played" in m for m in messages(report)), messages(report)


def test_a_swapped_cache_file_is_caught_by_its_digest(
    recorded: tuple[Results, Path], tmp_path: Path
) -> None:
    results, cache = recorded
    path = _board(tmp_path, results, cache)
    _edited(path.parent / cache.name, None, "UPDATE responses SET text = 'Final answer: 42'")
    errors = messages(validate_file(path))
    assert any("response_cache 'responses.sqlite' has SHA-256" in m for m in errors), errors


def test_a_write_ahead_log_beside_the_cache_is_not_replayed(
    recorded: tuple[Results, Path], tmp_path: Path
) -> None:
    results, cache = recorded
    path = _board(tmp_path, results, cache)
    db = sqlite3.connect(path.parent / cache.name)  # left open: the edit stays in the WAL
    with db:
        db.execute("UPDATE responses SET text = 'Final answer: \\boxed{42}'")
    report = validate_file(path)
    db.close()
    assert report.ok, messages(report)
    assert any(
        "responses.sqlite-wal (an unmerged write-ahead log) is ignored" in str(w)
        for w in report.warnings
    )


def test_a_cache_without_the_calls_fails_the_replay(
    recorded: tuple[Results, Path], tmp_path: Path
) -> None:
    results, cache = recorded
    emptied = _edited(cache, tmp_path, "DELETE FROM responses")
    errors = messages(validate_file(_board(tmp_path / "b", results, emptied)))
    assert any("outcome: recorded" in m and "re-played 'error'" in m for m in errors), errors


def test_the_wrapped_entry_names_its_cache(recorded: tuple[Results, Path]) -> None:
    results, cache = recorded
    meta = wrap(results, pool_setting="constrained", response_cache=cache).metadata
    assert meta.response_cache == "responses.sqlite"
    assert meta.response_cache_sha256 is not None and len(meta.response_cache_sha256) == 64
