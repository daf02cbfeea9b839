"""Which rows of a submitted response cache the entry's episodes use.

Contract. A real pool's entry ships the response cache its run recorded
(:mod:`conductor_gym.board.submissions`). The rows its episodes use are the ones their
re-play looks up (:attr:`Replay.cache_keys <conductor_gym.bench.replay.Replay.cache_keys>`):
:func:`episode_calls` re-plays the entry from the cache and returns them. Any other row
is **padding**: calls of other runs (a cache shared across runs) or rows added so that a
spot check drawn from every row would mostly re-ask calls a live model answers alike.
Validation refuses a cache with padding, the spot check
(:mod:`conductor_gym.board.spotcheck`) draws only from the used rows, and
``leaderboard submit --cache`` ships a copy with the used rows only (:func:`keep_only`).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
from pathlib import Path

from conductor_gym.bench.results import Results

__all__ = ["cache_keys", "episode_calls", "keep_only"]


def episode_calls(results: Results, cache: str | os.PathLike[str]) -> frozenset[str]:
    """The keys of the rows of ``cache`` that the episodes of ``results`` look up when
    re-played from it (their task sources as
    :func:`~conductor_gym.bench.replay.run_sources` reads them).

    Raises:
        ReplayError: The run cannot be re-played here (a ``ConfigurationError``).
    """
    from conductor_gym.bench.replay import Replayer, run_sources

    with contextlib.closing(
        Replayer(results, sources=run_sources(results), cache=cache)
    ) as replayer:
        return replayer.verify().cache_keys


def cache_keys(cache: str | os.PathLike[str]) -> frozenset[str]:
    """Every row's key of the response cache ``cache`` (its schema checked first).

    Raises:
        CacheError: Not a response cache.
    """
    from conductor_gym.board.plausibility import cached_calls

    return frozenset(call.key for call in cached_calls(os.fspath(cache)))


def keep_only(
    cache: str | os.PathLike[str], keys: frozenset[str], target: str | os.PathLike[str]
) -> Path:
    """Write to ``target`` a copy of the response cache ``cache`` that holds only the rows
    whose key is in ``keys`` (compacted, one file with no write-ahead log); returns the
    target's path. ``cache`` itself is never written."""
    target = Path(target)
    shutil.copyfile(cache, target)
    drop = sorted(cache_keys(target) - keys)
    with contextlib.closing(sqlite3.connect(target)) as db:
        with db:
            db.executemany("DELETE FROM responses WHERE key = ?", [(k,) for k in drop])
        db.execute("VACUUM")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return target
