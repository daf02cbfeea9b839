"""Deterministic, documented orderings and splits by SHA-256 of item keys.

Contract. Everything here is a pure function of its arguments, identical in every process,
platform and Python version (no ``random``, no ``hash()``):

* :func:`hash_rank` orders items by ``sha256(f"{salt}:{key}")`` (hex, ascending), ties
  broken by position;
* :func:`split_sizes` gives the test / val / train counts for ``n`` items: ``test`` and
  ``val`` are ``round_half_up(n * fraction)``, ``train`` the rest. The defaults (1/5, 1/5)
  reproduce the Conductor paper's numbers exactly: MATH500's 500 problems give 100 test /
  300 train (and 100 unused, ``val``); RLPR's 77,700 give 15,540 test / 46,620 train (and
  15,540 ``val``);
* :func:`hash_split` takes the first ``test`` items of the hash order as ``"test"``, the
  next ``val`` as ``"val"`` and the rest as ``"train"``; each part (and ``"all"``) is
  returned in dataset order;
* :func:`shuffled` is the seeded shuffle every source uses for ``shuffle=True``: the hash
  order of the task ids with salt ``f"{name}:{seed}"``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import TypeVar

from conductor_gym.errors import ConfigurationError

__all__ = ["SPLITS", "SplitSizes", "hash_rank", "hash_split", "shuffled", "split_sizes"]

SPLITS = ("test", "val", "train", "all")
"""The split names :func:`hash_split` returns."""

T = TypeVar("T")


@dataclass(frozen=True)
class SplitSizes:
    """How many items each part of a hash split gets."""

    test: int
    val: int
    train: int


def _digest(salt: str, key: str) -> str:
    return hashlib.sha256(f"{salt}:{key}".encode()).hexdigest()


def hash_rank(keys: Sequence[str], salt: str) -> list[int]:
    """Indices of ``keys`` ordered by ``sha256(f"{salt}:{key}")``, ties by index."""
    return sorted(range(len(keys)), key=lambda i: (_digest(salt, keys[i]), i))


def _round_half_up(value: Fraction) -> int:
    return int((value + Fraction(1, 2)).__floor__())


def split_sizes(
    n: int, test_fraction: Fraction = Fraction(1, 5), val_fraction: Fraction = Fraction(1, 5)
) -> SplitSizes:
    """Test / val / train counts for ``n`` items (see the module docstring)."""
    if n < 0:
        raise ConfigurationError(f"n: must be >= 0, got {n}")
    if not (test_fraction >= 0 and val_fraction >= 0 and test_fraction + val_fraction <= 1):
        raise ConfigurationError("fractions: need 0 <= test, 0 <= val and test + val <= 1")
    test = _round_half_up(n * test_fraction)
    val = min(_round_half_up(n * val_fraction), n - test)
    return SplitSizes(test=test, val=val, train=n - test - val)


def hash_split(
    keys: Sequence[str],
    salt: str,
    test_fraction: Fraction = Fraction(1, 5),
    val_fraction: Fraction = Fraction(1, 5),
) -> dict[str, list[int]]:
    """Indices of ``keys`` in each of ``"test"``, ``"val"``, ``"train"`` and ``"all"``.

    The first :func:`split_sizes` ``.test`` indices of :func:`hash_rank` form ``"test"``,
    the next ``.val`` form ``"val"``, the rest ``"train"``; each list is sorted (dataset
    order). Duplicate keys are allowed (their order falls back to position).
    """
    sizes = split_sizes(len(keys), test_fraction, val_fraction)
    rank = hash_rank(keys, salt)
    test = sorted(rank[: sizes.test])
    val = sorted(rank[sizes.test : sizes.test + sizes.val])
    train = sorted(rank[sizes.test + sizes.val :])
    return {"test": test, "val": val, "train": train, "all": list(range(len(keys)))}


def shuffled(items: Sequence[T], ids: Sequence[str], name: str, seed: int) -> list[T]:
    """``items`` reordered by the hash of ``ids`` with salt ``f"{name}:{seed}"``."""
    if len(items) != len(ids):
        raise ValueError("items and ids must have the same length")
    return [items[i] for i in hash_rank(ids, f"{name}:{seed}")]
