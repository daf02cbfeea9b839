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
    placement = report.placement
    assert str(placement.verification) == (
        "cache re-play (2 episodes from the submitter's response cache)"
    )
    # A trust level of its own, in the section key: never ranked with simulated re-plays.
    assert placement.verification.trust == placement.section.trust == "cache re-play"
    assert placement.section.title().endswith(", cache re-play")
    assert str(placement.identity) == "agent re-run (2 episodes)"
    assert placement.reasons[0].startswith("partial: the first 2 tasks")
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
    assert "cache re-play (2 episodes from the submitter's response cache)" in (
        capsys.readouterr().out
    )
    assert main(["leaderboard", "validate", "--cache", str(cache), str(entry), str(entry)]) == 2


def test_costs_zeroed_in_results_and_cache_are_priced_again(
    recorded: tuple[Results, Path], tmp_path: Path
) -> None:
    results, cache = recorded
    forged = _edited(cache, tmp_path, "UPDATE responses SET cost_usd = 0")
    episodes = [e.model_copy(update={"cost_usd": 0.0}) for e in results.episodes]
    zeroed = results.model_copy(update={"episodes": episodes, "metrics": aggregate(episodes, 1)})
    errors = messages(validate_file(_board(tmp_path / "b", zeroed, forged)))
    assert any(  # the cache's costs are not its tokens at the pool file's prices
        m.startswith("cache: prices: 2 of 2 cached call(s) implausible") for m in errors
    ), errors
    from conductor_gym.bench.replay import replay_results, run_sources

    replayed = replay_results(zeroed, run_sources(zeroed), cache=forged)  # priced again too
    assert any(d.field == "cost_usd" and d.recorded == 0.0 for d in replayed.differences)


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


# -- a fabricated cache (issue 29, item 1) ---------------------------------------------------


def _pool_file(folder: Path, api_base: str) -> Path:
    """The run's pool as a file naming the live endpoint (what a spot check re-asks)."""
    rows = []
    for spec in specs(api_base):
        temperature = f"temperature = {spec.temperature}\n" if spec.name == "smol-b" else ""
        rows.append(
            f'[[workers]]\nname = "{spec.name}"\nbackend = "litellm"\n'
            f'model = "openai/smollm2"\nmax_tokens = 16\n{temperature}'
            "price_in_per_mtok = 2.0\nprice_out_per_mtok = 8.0\n"
            f'backend_options = {{ api_base = "{api_base}", api_key_env = "CG_TEST_KEY" }}\n'
        )
    path = folder / "smol-pool.toml"
    path.write_text(
        'name = "smol-live"\ndescription = "the run, live"\n\n' + "\n".join(rows), encoding="utf-8"
    )
    return path


def _oracle_cache(cache: Path, folder: Path) -> Path:
    """The attack: every cached answer replaced by the suite's reference, at 1 token and
    0.1 ms a call, as an oracle process standing in for the workers would record them."""
    import json

    from conductor_gym.bench.suites import get_suite

    tasks = [t for source in get_suite("offline", limit=2).sources.values() for t in source]
    forged = folder / "oracle.sqlite"
    shutil.copyfile(cache, forged)
    with contextlib.closing(sqlite3.connect(forged)) as db, db:
        for key, request in db.execute("SELECT key, request FROM responses").fetchall():
            text = " ".join(m["content"] for m in json.loads(request)["messages"])
            task = next(t for t in tasks if t.question in text)
            db.execute(
                "UPDATE responses SET text = ?, prompt_tokens = 1, completion_tokens = 1, "
                "latency_s = 0.0001, cost_usd = 0.00001 WHERE key = ?",
                (f"The answer is \\boxed{{{task.reference}}}", key),
            )
    return forged


@pytest.fixture(scope="module")
def forged(
    recorded: tuple[Results, Path], llama_base_url: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Results, Path]:
    """The oracle's results: evaluate run with the forged cache, every call answered by it."""
    folder = tmp_path_factory.mktemp("oracle")
    cache = _oracle_cache(recorded[1], folder)
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
    return results, cache


def test_a_fabricated_cache_replays_but_is_refused_as_implausible(
    recorded: tuple[Results, Path], forged: tuple[Results, Path], tmp_path: Path
) -> None:
    from conductor_gym.bench.replay import replay_results, run_sources

    results, cache = forged
    # The attack: the oracle's answers score every episode, and re-play without a flaw.
    assert results.metrics["overall"].accuracy == 1.0
    assert recorded[0].metrics["overall"].accuracy < 1.0
    assert replay_results(results, run_sources(results), cache=cache).ok
    # Refused: the cache is checked for plausibility before it is re-played from.
    report = validate_file(_board(tmp_path, results, cache))
    errors = messages(report)
    assert not report.ok and report.placement is None
    prompt = next(m for m in errors if m.startswith("cache: prompt tokens: "))
    assert "2 of 2 cached call(s) implausible" in prompt and "prompt_tokens 1 for " in prompt
    latency = next(m for m in errors if m.startswith("cache: latency: "))
    assert "latency_s 0.0001 (plausible: 0.001..3600 s)" in latency
    assert any(m.startswith("cache: whole cache: its 2 call(s) count 4 tokens") for m in errors)


def test_the_genuine_cache_passes_the_plausibility_checks(recorded: tuple[Results, Path]) -> None:
    from conductor_gym.bench.replay import worker_specs
    from conductor_gym.board.plausibility import check_cache

    results, cache = recorded
    found = check_cache(cache, worker_specs(results))
    assert found.ok and found.checked == 2 and found.other_rows == 0, found.problems


def test_spot_check_agrees_with_a_genuine_cache_and_not_a_forged_one(
    recorded: tuple[Results, Path],
    forged: tuple[Results, Path],
    llama_base_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CG_TEST_KEY", "sk-local")
    pool = _pool_file(tmp_path, f"{llama_base_url}/v1")
    genuine = _board(tmp_path / "genuine", recorded[0], recorded[1])
    command = ["leaderboard", "spot-check", "--pool", str(pool), "--sample", "2", "--seed", "0"]
    command.append("--trust-pool-credentials")  # the key variable is the test's own
    assert main([*command, str(genuine)]) == 0
    out = capsys.readouterr().out
    assert "spot check: 2 of 2 cached call(s) re-asked, 0 failed; 2 exact" in out, out
    assert "agreement 100.0 %" in out
    fake = _board(tmp_path / "forged", forged[0], forged[1])
    assert main([*command, str(fake)]) == 1
    out = capsys.readouterr().out
    assert "0 exact, 0 same answer: agreement 0.0 %" in out, out
    assert "differs (tokens cached 1, live " in out


# -- spot checks that cannot be evaded (issue 39, item 4) ------------------------------------


def _padded(cache: Path, folder: Path, rows: int = 5) -> Path:
    """``cache`` with ``rows`` more genuine-looking calls no episode makes (padding: the
    same request with a word added, which a live model answers as it answers any call)."""
    import json

    from conductor_gym.workers.cache import cache_key

    target = folder / "padded.sqlite"
    shutil.copyfile(cache, target)
    with contextlib.closing(sqlite3.connect(target)) as db, db:
        db.row_factory = sqlite3.Row
        row = dict(db.execute("SELECT * FROM responses ORDER BY key LIMIT 1").fetchone())
        for i in range(rows):
            request = json.loads(row["request"])
            request["messages"][-1]["content"] += f" (padding {i})"
            key = cache_key(
                request["model"],
                request["messages"],
                max_tokens=request["max_tokens"],
                temperature=request["temperature"],
                seed=request["sample"],
                params=request["params"],
            )
            db.execute(
                f"INSERT INTO responses ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})",
                [*{**row, "key": key, "request": json.dumps(request)}.values()],
            )
    return target


def test_a_cache_padded_with_calls_no_episode_makes_is_refused(
    recorded: tuple[Results, Path], tmp_path: Path
) -> None:
    results, cache = recorded
    padded = _padded(cache, tmp_path)
    report = validate_file(_board(tmp_path / "entry", results, padded))
    errors = messages(report)
    assert not report.ok and len(errors) == 1, errors
    assert errors[0].startswith(
        "cache: 5 of 7 cached row(s) are used by no episode of this entry (padding, or other "
        "runs' calls"
    )
    assert "`leaderboard submit --cache` writes that copy" in errors[0]


def test_submit_ships_only_the_runs_own_calls(
    recorded: tuple[Results, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from conductor_gym.board.cache_use import cache_keys

    results, cache = recorded
    padded = _padded(cache, tmp_path)  # a cache shared with another run's calls
    results_file = tmp_path / "results.json"
    results.dump(results_file)
    argv = ["leaderboard", "submit", str(results_file), "--name", "Smol single"]
    argv += ["--author", "tests", "--training-data", "none", "--pool-setting", "constrained"]
    assert main([*argv, "--cache", str(padded), "--dir", str(tmp_path / "board")]) == 0, (
        capsys.readouterr()
    )
    shipped = tmp_path / "board" / SUBMISSIONS_DIR / "smol-single.sqlite"
    assert cache_keys(shipped) == cache_keys(cache) and len(cache_keys(padded)) == 7
    assert "(the run's own calls only)" in capsys.readouterr().out
    assert validate_file(shipped.with_suffix(".json")).ok


def test_spot_check_draws_a_fresh_seed_from_the_episodes_calls_only(
    recorded: tuple[Results, Path], llama_base_url: str, tmp_path: Path
) -> None:
    from conductor_gym.board.spotcheck import spot_check

    results, cache = recorded
    padded = _padded(cache, tmp_path, rows=40)
    pool = _pool_file(tmp_path, f"{llama_base_url}/v1")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CG_TEST_KEY", "sk-local")
        checks = [
            spot_check(results, padded, pool, sample=1, trust_credentials=True) for _ in range(2)
        ]
        again = spot_check(
            results, padded, pool, sample=1, seed=checks[0].seed, trust_credentials=True
        )
    used = {row.key for row in checks[0].calls} | {row.key for row in checks[1].calls}
    assert used <= set(_keys(cache))  # never one of the 40 padding rows
    assert checks[0].seed != checks[1].seed  # drawn afresh (63 random bits), not 0
    assert all(c.rows == 2 and c.padding == 40 for c in checks)
    summary = checks[0].summary()
    assert f"agreement 100.0 % (seed {checks[0].seed}); 40 cached row(s) no episode uses" in summary
    assert [c.key for c in again.calls] == [c.key for c in checks[0].calls]  # re-run by its seed


def _keys(cache: Path) -> list[str]:
    with contextlib.closing(sqlite3.connect(cache)) as db:
        return [key for (key,) in db.execute("SELECT key FROM responses")]
