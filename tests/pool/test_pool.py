from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Any

import numpy as np
import pytest

from conductor_gym.errors import ConfigurationError
from conductor_gym.pool.pool import WorkerPool, make_pool
from conductor_gym.sim.profiles import PAPER_PROFILES
from conductor_gym.workers.spec import BACKENDS, WorkerSpec


def test_sim_paper_preset_has_the_seven_paper_workers_in_order() -> None:
    pool = make_pool("sim-paper")
    assert [s.name for s in pool.specs] == list(PAPER_PROFILES)
    assert pool.n == pool.k == 7
    assert all(s.max_tokens == 4096 and s.temperature == 0.2 for s in pool.specs)


def test_full_pool_without_shuffle_keeps_order_and_leaves_rng_untouched() -> None:
    pool = make_pool("sim-paper")
    rng = np.random.default_rng(3)
    state = rng.bit_generator.state
    draw = pool.sample(rng)
    assert draw.names == tuple(PAPER_PROFILES)
    assert draw.indices == tuple(range(7))
    assert rng.bit_generator.state == state


def test_k_of_n_draws_distinct_sorted_subsets_covering_all_combinations() -> None:
    pool = make_pool("sim-paper", k=3)
    rng = np.random.default_rng(0)
    seen: Counter[tuple[int, ...]] = Counter()
    for _ in range(3500):
        draw = pool.sample(rng)
        assert len(draw) == 3 and len(set(draw.indices)) == 3
        assert list(draw.indices) == sorted(draw.indices)
        assert draw.names == tuple(pool.specs[i].name for i in draw.indices)
        seen[draw.indices] += 1
    assert set(seen) == set(combinations(range(7), 3))  # all 35 subsets
    assert min(seen.values()) > 50  # about 100 each


def test_shuffle_permutes_ids() -> None:
    pool = make_pool("sim-paper", shuffle=True)
    rng = np.random.default_rng(1)
    orders = {pool.sample(rng).indices for _ in range(50)}
    assert len(orders) > 40
    assert all(sorted(o) == list(range(7)) for o in orders)


def test_sampling_is_deterministic_for_a_seed() -> None:
    pool = make_pool("sim-paper", k=4, shuffle=True)
    a = [pool.sample(np.random.default_rng(9)).indices for _ in range(3)]
    b = [pool.sample(np.random.default_rng(9)).indices for _ in range(3)]
    assert a == b


def test_workers_are_built_once_and_shared() -> None:
    pool = make_pool("sim-paper", k=2)
    rng = np.random.default_rng(0)
    first = pool.sample(rng).workers[0].worker
    assert any(d.workers[0].worker is first for d in (pool.sample(rng) for _ in range(20)))
    assert pool.workers is pool.workers


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"name": ""}, r"name must be a non-empty string"),
        (
            {"name": "w", "backend": "nope"},
            r"WorkerSpec\(name='w'\)\.backend: unknown backend 'nope'",
        ),
        ({"name": "w", "max_tokens": 0}, r"WorkerSpec\(name='w'\)\.max_tokens must be an int >= 1"),
        ({"name": "w", "temperature": -1}, r"WorkerSpec\(name='w'\)\.temperature"),
        ({"name": "w", "price_in_per_mtok": -2}, r"WorkerSpec\(name='w'\)\.price_in_per_mtok"),
    ],
)
def test_bad_worker_spec_names_the_field(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        WorkerSpec(**kwargs)  # type: ignore[arg-type]


def test_bad_pools_fail_with_clear_errors() -> None:
    spec = WorkerSpec(name="gpt-5")
    with pytest.raises(ValueError, match=r"k must be an int in 1\.\.1"):
        WorkerPool([spec], k=2)
    with pytest.raises(ValueError, match=r"repeated: \['gpt-5'\]"):
        WorkerPool([spec, spec])
    known = r"choose one of \[.*'paper-constrained', .*'sim-paper'"
    with pytest.raises(ValueError, match=rf"unknown preset 'nope'; {known}"):
        make_pool("nope")
    with pytest.raises(ValueError, match="cannot override a ready WorkerPool"):
        make_pool(WorkerPool([spec]), k=1)


def test_unknown_simulated_profile_and_option_fail_when_built() -> None:
    with pytest.raises(ValueError, match=r"\.model: unknown simulated profile 'gpt-9'"):
        WorkerPool([WorkerSpec(name="gpt-9")]).workers  # noqa: B018
    bad = WorkerSpec(name="gpt-5", backend_options={"speed": 2})
    with pytest.raises(ValueError, match=r"unknown option\(s\) \['speed'\]"):
        WorkerPool([bad]).workers  # noqa: B018


class _Bare:
    """Answers chats but declares neither hook (``for_task``, ``aggregates_calls``): it
    does not subclass Worker, so it is no Worker."""

    name = "bare"

    async def complete(self, messages: Any, **kwargs: Any) -> Any:
        raise AssertionError("never called")


def _make_bare(spec: WorkerSpec) -> Any:
    return _Bare()


def test_a_backend_that_builds_no_worker_is_refused_naming_the_backend() -> None:
    BACKENDS.register("bare-for-test", _make_bare)  # the same target again is allowed
    pool = WorkerPool([WorkerSpec(name="x", backend="bare-for-test")])
    with pytest.raises(ConfigurationError, match=r"backend 'bare-for-test' built a _Bare"):
        pool.workers  # noqa: B018 (building the workers is the act under test)
