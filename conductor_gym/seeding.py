"""Every seed the library derives from another, in one place.

Each derivation is a pure function of its arguments, identical in every process,
platform and Python version (no ``random`` state, no ``hash()``). Results, caches and
board entries depend on these exact values, so a change here is a results-schema change.

======================  ==========================================  ==============================
function                what it derives                             used by
======================  ==========================================  ==============================
:func:`stream_seed`     seed of stream ``i`` of a seeded run:       plan steps (``core.execute``),
                        a fixed multiply-add mix, 63 bits           recursive rounds (``core.env``),
                                                                    policy samples (``agents``)
:func:`group_seed`      reset seed of training row ``i``: the       ``training.prepare`` and every
                        first SeedSequence word, top 62 bits        trainer adapter
:func:`rollout_seed`    episode seed of rollout ``r`` of a reset:   ``core.episode``
                        the first SeedSequence word, low 63 bits    (``options["rollout_seed"]``)
:func:`hash_seed`       seed of any labelled tuple: SHA-256 of its  evaluation episodes and agent
                        JSON, top 63 bits of the first 8 bytes      calls (``bench``), ``serve``
======================  ==========================================  ==============================

Orderings by hash (task shuffles and splits) live in :mod:`conductor_gym.tasks.splits`;
procedural task ``i`` of a family draws from ``random.Random(f"{seed}:{family}:{i}")``
(:mod:`conductor_gym.tasks.procedural`).
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from conductor_gym._validate import require_int
from conductor_gym.errors import ConfigurationError

__all__ = ["MASK_63", "group_seed", "hash_seed", "rollout_seed", "stream_seed"]

MASK_63 = (1 << 63) - 1
"""Seeds are non-negative 63-bit integers (they fit a signed 64-bit field everywhere)."""

_GOLDEN = 0x9E3779B97F4A7C15
_SPLITMIX = 0xBF58476D1CE4E5B9


def stream_seed(seed: int, stream: int) -> int:
    """The seed of stream ``stream`` (>= 0) of a run seeded with ``seed``."""
    return (seed * _GOLDEN + (stream + 1) * _SPLITMIX) & MASK_63


def _first_word(*entropy: int) -> int:
    return int(np.random.SeedSequence(list(entropy)).generate_state(1, np.uint64)[0])


def group_seed(seed: int, task_index: int) -> int:
    """The group seed of row ``task_index`` for ``seed``: deterministic, in ``[0, 2**62)``."""
    require_int("seed", seed, minimum=0)
    require_int("task_index", task_index, minimum=0)
    return _first_word(seed, task_index) >> 2


def rollout_seed(episode_seed: int, rollout: object) -> int:
    """The episode seed of rollout ``rollout`` of a reset: same task and worker draw as
    without it, fresh worker randomness; ``None`` keeps ``episode_seed``."""
    if rollout is None:
        return episode_seed
    if not isinstance(rollout, int) or isinstance(rollout, bool) or rollout < 0:
        raise ConfigurationError("reset: options['rollout_seed'] must be an int >= 0")
    return _first_word(episode_seed, rollout) & MASK_63


def hash_seed(*parts: object) -> int:
    """A 63-bit seed from the SHA-256 of the JSON of ``parts`` (JSON-serialisable)."""
    digest = hashlib.sha256(json.dumps(["conductor-gym/evaluate", *parts]).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1
