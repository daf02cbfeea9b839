"""Pool splits: the training distribution of pools and the held-out ones
(conductor_gym.pool.splits), and suites that pair tasks with a pool split."""

from __future__ import annotations

import hashlib
import itertools
import json

import numpy as np
import pytest

from conductor_gym import ConductorEnv, ConductorVectorEnv
from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.suites import POOL_SPLIT_SUITES, get_suite, list_suites
from conductor_gym.board.submissions import make_submission, validate_submission
from conductor_gym.pool.pool import make_pool
from conductor_gym.pool.splits import (
    HELD_OUT_WORKERS,
    PAPER_WORKERS,
    POOL_SPLITS,
    TRAINING_WORKERS,
    PoolSplit,
    SplitPool,
    get_pool_split,
    with_pool_split,
)

DRAWS = 3000


def draws(split: str, n: int = DRAWS, seed: int = 0) -> list[tuple[str, ...]]:
    pool = make_pool(f"sim-paper@{split}")
    rng = np.random.default_rng(seed)
    return [pool.sample(rng).names for _ in range(n)]


TRAIN_SUPPORT = {
    combo for k in (2, 3, 4) for combo in itertools.combinations(TRAINING_WORKERS, k)
}  # every draw train can make: training workers, in configuration order


def test_training_draws_cover_the_training_distribution_and_nothing_else() -> None:
    seen = draws("train")
    assert set(seen) == TRAIN_SUPPORT  # every pool of the distribution, and only those
    assert not any(w in HELD_OUT_WORKERS for draw in seen for w in draw)
    assert set(TRAINING_WORKERS) | set(HELD_OUT_WORKERS) == set(PAPER_WORKERS)


@pytest.mark.parametrize(
    "split", ["heldout-workers", "heldout-sizes", "heldout-shuffled", "heldout-full"]
)
def test_no_held_out_draw_is_a_training_draw(split: str) -> None:
    assert not set(draws(split)) & TRAIN_SUPPORT


def test_each_held_out_split_shifts_what_it_says() -> None:
    unseen = draws("heldout-workers")
    assert all(set(d) & set(HELD_OUT_WORKERS) for d in unseen)  # an unseen worker, always
    assert {len(d) for d in unseen} == {2, 3, 4}  # ... at the training sizes
    assert {w for d in unseen for w in d} == set(PAPER_WORKERS)

    sizes = draws("heldout-sizes")
    assert {len(d) for d in sizes} == {1, 5}  # outside the training range ...
    assert {w for d in sizes for w in d} == set(TRAINING_WORKERS)  # ... same workers
    assert all(list(d) == sorted(d, key=PAPER_WORKERS.index) for d in sizes)

    shuffled = draws("heldout-shuffled")
    assert {tuple(sorted(d, key=PAPER_WORKERS.index)) for d in shuffled} == TRAIN_SUPPORT
    assert all(list(d) != sorted(d, key=PAPER_WORKERS.index) for d in shuffled)

    assert set(draws("heldout-full", n=5)) == {PAPER_WORKERS}


def test_a_seed_fixes_the_draw_and_the_env_shows_it() -> None:
    env = ConductorEnv(pool="sim-paper@heldout-shuffled")
    first = [env.reset(seed=s)[1]["pool"] for s in range(20)]
    assert first == [env.reset(seed=s)[1]["pool"] for s in range(20)]
    _, info = env.reset(seed=3)
    assert (
        info["num_workers"] == len(info["pool"])
        and f"Model {len(info['pool']) - 1}" in (env.reset(seed=3)[0])
    )
    envs = ConductorVectorEnv(8, pool="sim-paper@heldout-sizes")
    _, infos = envs.reset(seed=0)
    assert set(infos["num_workers"].tolist()) <= {1, 5}
    envs.close()


def test_fingerprints_name_the_distribution_not_the_label() -> None:
    train = get_pool_split("train")
    renamed = PoolSplit("other", train.workers, train.sizes, description="same draws")
    assert renamed.fingerprint() == train.fingerprint()
    assert len({s.fingerprint() for s in POOL_SPLITS.values()}) == len(POOL_SPLITS)
    wider = PoolSplit("wider", train.workers, (2, 3, 4, 5))
    assert wider.fingerprint() != train.fingerprint()


def test_suites_pair_tasks_with_a_pool_split_and_fingerprint_it() -> None:
    plain, train, unseen = (
        get_suite(name, limit=20)
        for name in ("offline", "offline@train", "offline@heldout-workers")
    )
    assert (plain.pool_split, train.pool_split, unseen.pool_split) == (
        None,
        "train",
        "heldout-workers",
    )
    fingerprints = {s.fingerprint() for s in (plain, train, unseen)}
    assert len(fingerprints) == 3
    # a suite without a split keeps the fingerprint it always had
    info = plain.info()
    rows = [[s["name"], s["fingerprint"], s["size"]] for s in info["sources"]]
    assert info["fingerprint"] == hashlib.sha256(json.dumps(rows).encode()).hexdigest()[:16]
    assert train.info()["sources"] == info["sources"]  # the same questions
    assert train.with_limit(5).pool_split == "train"
    listed = [row["name"] for row in list_suites()]
    assert all(name in listed for name in POOL_SPLIT_SUITES)


def test_evaluate_draws_the_suites_pools_and_the_board_keeps_them_apart() -> None:
    results = evaluate("random", "offline@heldout-sizes", limit=6, repeats=2, progress=False)
    assert results.pool["name"] == "sim-paper@heldout-sizes"
    assert results.pool["split"]["fingerprint"] == get_pool_split("heldout-sizes").fingerprint()
    assert results.suite.name == "offline@heldout-sizes"
    assert results.suite.fingerprint == get_suite("offline@heldout-sizes", limit=6).fingerprint()
    meta = {"name": "r", "authors": ["t"], "training_data": "none", "pool_setting": "simulated"}
    report = validate_submission(make_submission(results, **meta).model_dump(mode="json"))
    assert report.ok, report.errors
    plain = evaluate("random", "offline", limit=6, repeats=2, progress=False)
    assert plain.suite.fingerprint != results.suite.fingerprint


def test_errors_name_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"unknown split 'nope'; choose one of \['train'"):
        get_pool_split("nope")
    with pytest.raises(ValueError, match="k and shuffle_workers cannot override pool split"):
        ConductorEnv(pool="sim-paper@train", k=2)
    with pytest.raises(ValueError, match=r"the pool has no worker\(s\) \['gemini-2.5-pro'"):
        make_pool("local-smol@train")
    with pytest.raises(ValueError, match="names split 'train' but the suite asks for"):
        with_pool_split("sim-paper@train", "heldout-full")
    with pytest.raises(ValueError, match=r"unknown suite 'offline@nope'.*@<pool split>"):
        get_suite("offline@nope")
    with pytest.raises(ValueError, match=r"PoolSplit\(name='x'\)\.sizes must be ints in 1\.\.2"):
        PoolSplit("x", ("a", "b"), (3,))
    with pytest.raises(ValueError, match="must_include names workers it cannot draw"):
        PoolSplit("x", ("a", "b"), (1,), must_include=("c",))
    with pytest.raises(ValueError, match="never_in_order needs shuffle"):
        PoolSplit("x", ("a", "b"), (2,), never_in_order=True)


def test_a_split_over_specs_or_a_ready_pool() -> None:
    base = make_pool("sim-paper")
    pool = with_pool_split(base, "train")
    assert isinstance(pool, SplitPool) and pool.split is POOL_SPLITS["train"]
    assert with_pool_split(pool, "train") is pool
    assert with_pool_split("sim-paper", "train") == "sim-paper@train"
    from_specs = with_pool_split(list(base.specs), "heldout-full")
    assert isinstance(from_specs, SplitPool) and from_specs.k == 7
