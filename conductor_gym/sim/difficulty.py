"""How hard a problem is for a simulated model: structure, noise and lineage.

A model's attempt at a problem succeeds when ``sqrt(call_correlation) * L +
sqrt(1 - call_correlation) * e < t + bonus``, with ``e`` fresh standard normal noise
per call, ``t`` the model's calibrated threshold for the problem's family
(:func:`threshold`) and ``L`` a standard normal fixed per (problem, model):

* ``L = sqrt(task_correlation) * D + sqrt(1 - task_correlation) * M``;
* ``D = sqrt(structure_share) * z + sqrt(1 - structure_share) * h`` is the problem's
  difficulty, shared by every model: ``z`` its structural size standardised over the
  family's generated tasks (:data:`SIZE_SCALE`), ``h`` noise seeded by the problem's
  canonical key (so a restatement has the same difficulty, a sub-problem its own);
* ``M = sqrt(lineage_share) * G + sqrt(1 - lineage_share) * O`` is the model's own
  part, ``G`` shared by models of one lineage (the two Qwen3-32B modes), ``O`` its own.

``t`` solves ``mean_i Phi((t - a z_i) / sqrt(1 - a^2)) = p`` over the family's size
quantiles ``z_i``, ``a = sqrt(call_correlation * task_correlation * structure_share)``,
so a model's accuracy over the family's tasks is its calibrated ``p`` while a smaller
sub-problem (lower ``z``) is easier for everyone.
"""

from __future__ import annotations

import math
import random
from functools import lru_cache
from statistics import NormalDist

__all__ = ["SIZE_SCALE", "latent", "threshold"]

_NORMAL = NormalDist()

# family: (mean size, sd of size, 20 quantiles of the standardised size), measured on
# the first 500 tasks of each family of the ``offline`` and ``offline-ood`` sources
# (seed 0); tests/sim/test_calibration.py re-measures them.
SIZE_SCALE: dict[str, tuple[float, float, tuple[float, ...]]] = {
    "arithmetic": (
        6.3235,
        1.5733,
        (
            -1.692, -1.477, -1.078, -0.951, -0.85, -0.752, -0.519, -0.362, -0.275, -0.18,
            -0.041, 0.122, 0.332, 0.448, 0.626, 0.778, 0.985, 1.192, 1.594, 2.128,
        ),
    ),
    "multiple_choice": (
        3.3488,
        0.9767,
        (
            -1.48, -1.381, -1.3, -1.3, -1.264, -0.537, -0.365, -0.181, -0.118, 0.014, 0.112,
            0.165, 0.186, 0.211, 0.231, 0.376, 1.339, 1.519, 1.684, 1.835,
        ),
    ),
    "countdown": (
        4.3991,
        1.0611,
        (
            -1.854, -1.53, -1.344, -1.145, -1.021, -0.781, -0.462, -0.259, -0.153, -0.084,
            0.199, 0.391, 0.605, 0.766, 0.859, 0.933, 1.017, 1.174, 1.332, 1.458,
        ),
    ),
    "program_trace": (
        4.9302,
        0.7303,
        (
            -1.518, -1.329, -1.157, -0.999, -0.853, -0.717, -0.589, -0.569, -0.356, -0.306,
            0.034, 0.212, 0.232, 0.495, 0.627, 0.78, 1.098, 1.409, 1.581, 2.022,
        ),
    ),
    "modular": (
        9.6361,
        1.4532,
        (
            -2.051, -1.691, -1.364, -1.057, -0.829, -0.675, -0.464, -0.278, -0.129, 0.038,
            0.301, 0.551, 0.735, 0.82, 0.846, 0.846, 0.846, 0.969, 1.231, 1.425,
        ),
    ),
    "multiple_choice_hard": (
        4.5140,
        0.5910,
        (
            -2.058, -1.424, -1.115, -0.931, -0.809, -0.68, -0.577, -0.311, -0.124, 0.027, 0.143,
            0.24, 0.349, 0.423, 0.548, 0.661, 0.825, 1.038, 1.498, 2.111,
        ),
    ),
    "program_trace_hard": (
        10.1839,
        4.3164,
        (
            -1.039, -0.904, -0.858, -0.82, -0.701, -0.7, -0.626, -0.562, -0.284, -0.216, -0.152,
            -0.013, 0.052, 0.104, 0.148, 0.251, 0.351, 0.89, 1.963, 3.499,
        ),
    ),
}  # fmt: skip


def size_z(family: str, size: float) -> float:
    """The standardised structural size of a problem of ``family``."""
    mean, sd, _ = SIZE_SCALE[family]
    return (size - mean) / sd


@lru_cache(maxsize=1 << 16)
def _noise(key: str, model: str, lineage: str, lineage_share: float) -> tuple[float, float]:
    """``(h, M)`` for a problem key and a model (string seeds: the same in every process)."""
    shared = random.Random(f"difficulty:{key}").gauss(0.0, 1.0)
    own = random.Random(f"difficulty:{key}:{model}").gauss(0.0, 1.0)
    if lineage:
        kin = random.Random(f"difficulty:{key}:lineage:{lineage}").gauss(0.0, 1.0)
        own = math.sqrt(lineage_share) * kin + math.sqrt(1.0 - lineage_share) * own
    return shared, own


def latent(
    key: str,
    family: str,
    size: float,
    model: str,
    lineage: str,
    *,
    task_correlation: float,
    structure_share: float,
    lineage_share: float,
) -> float:
    """``L`` for a problem and a model (module docstring)."""
    shared, own = _noise(key, model, lineage, lineage_share)
    difficulty = (
        math.sqrt(structure_share) * size_z(family, size)
        + math.sqrt(1.0 - structure_share) * shared
    )
    return math.sqrt(task_correlation) * difficulty + math.sqrt(1.0 - task_correlation) * own


@lru_cache(maxsize=1 << 12)
def threshold(p: float, family: str, a: float) -> float:
    """``t`` with ``mean_i Phi((t - a z_i) / sqrt(1 - a^2)) = p`` (module docstring)."""
    if p <= 0.0:
        return -math.inf
    if p >= 1.0:
        return math.inf
    quantiles = SIZE_SCALE[family][2]
    scale = math.sqrt(max(1e-9, 1.0 - a * a))

    def rate(t: float) -> float:
        return sum(_NORMAL.cdf((t - a * z) / scale) for z in quantiles) / len(quantiles)

    low, high = -8.0, 8.0
    for _ in range(50):
        mid = (low + high) / 2
        low, high = (mid, high) if rate(mid) < p else (low, mid)
    return (low + high) / 2
