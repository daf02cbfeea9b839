"""Worker pools: the per-episode draw (:class:`WorkerPool`, :class:`PoolDraw`) over
configured workers (:class:`~conductor_gym.workers.spec.WorkerSpec`), pool files
(:mod:`.config`, presets in ``presets/*.toml``) and held-out worker splits
(:mod:`.splits`)."""

from conductor_gym.pool.pool import (
    POOL_PRESETS,
    PoolDraw,
    WorkerPool,
    make_pool,
    register_pool_preset,
)

__all__ = ["POOL_PRESETS", "PoolDraw", "WorkerPool", "make_pool", "register_pool_preset"]
