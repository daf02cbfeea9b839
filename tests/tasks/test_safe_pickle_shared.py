"""``restricted_loads`` on pickles whose memo shares references: the plain-data check visits
each container once (linear), where walking every path was exponential in the nesting
(issue 29, item 11), and a value that contains itself is refused with its own message."""

from __future__ import annotations

import pickle

import pytest

from conductor_gym.tasks.safe_pickle import UnsafePickleError, _PlainChecker, restricted_loads


def _doubling(levels: int) -> list[object]:
    """``[x, x]`` nested ``levels`` deep: ``levels + 1`` distinct lists, ``2**levels``
    paths from the top to the innermost one."""
    value: list[object] = []
    for _ in range(levels):
        value = [value, value]
    return value


def test_shared_references_are_checked_once() -> None:
    data = pickle.dumps(_doubling(64), protocol=4)
    # Under 400 bytes, 2**64 paths: walking each one would never finish.
    assert len(data) < 400
    loaded = restricted_loads(data)
    assert loaded[0] is loaded[1]
    checker = _PlainChecker()
    checker.check(loaded, 0)
    # Each of the 65 lists is entered once; each is reached through its two references.
    assert checker.visits == 1 + 2 * 64


def test_shared_dicts_and_tuples_are_checked_once() -> None:
    inner: object = {"k": ("a", b"b", 1, 2.5, None, True)}
    for _ in range(50):
        inner = {"left": inner, "right": (inner, inner)}
    assert restricted_loads(pickle.dumps(inner, protocol=4))["right"][0] is not None


def test_a_cycle_is_refused() -> None:
    looped: list[object] = [1]
    looped.append(looped)
    with pytest.raises(UnsafePickleError, match="contains a cycle"):
        restricted_loads(pickle.dumps(looped))


def test_a_shared_unsafe_value_is_still_refused() -> None:
    shared = [1, 2]
    data = pickle.dumps([shared, shared, {"x": shared}, bytearray(b"no")], protocol=5)
    with pytest.raises(UnsafePickleError, match="bytearray, which is not plain data"):
        restricted_loads(data)
