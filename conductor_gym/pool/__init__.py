"""Worker pools: the configured workers (:class:`WorkerSpec`), the per-episode draw
(:class:`WorkerPool`, :class:`PoolDraw`), and pool files (:mod:`.config`, presets in
``presets/*.toml``)."""

from conductor_gym.pool.base import (
    POOL_PRESETS,
    PoolDraw,
    WorkerPool,
    WorkerSpec,
    make_pool,
    register_backend,
    register_pool_preset,
)

__all__ = [
    "POOL_PRESETS",
    "PoolDraw",
    "WorkerPool",
    "WorkerSpec",
    "make_pool",
    "register_backend",
    "register_pool_preset",
]
