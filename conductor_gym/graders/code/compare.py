"""Comparing a program's output with the expected one: normalised text (``stdio``) and
decoded JSON values (``call``)."""

from __future__ import annotations

from typing import Any

__all__ = ["json_equal", "normalize_output"]


def normalize_output(text: str) -> str:
    """``text`` with ``\\r\\n``/``\\r`` line endings unified, trailing whitespace removed
    from every line and trailing blank lines dropped."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    stripped = [line.rstrip() for line in lines]
    while stripped and not stripped[-1]:
        stripped.pop()
    return "\n".join(stripped)


def json_equal(got: Any, expected: Any) -> bool:
    """Equality of two decoded JSON values: bools equal only bools, numbers compare by
    value (``1 == 1.0``), strings exactly, lists element by element, dicts key by key."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(expected, bool) and isinstance(got, bool) and got is expected
    if isinstance(expected, int | float) and isinstance(got, int | float):
        return got == expected
    if isinstance(expected, list) and isinstance(got, list):
        return len(got) == len(expected) and all(map(json_equal, got, expected))
    if isinstance(expected, dict) and isinstance(got, dict):
        return got.keys() == expected.keys() and all(
            json_equal(got[key], expected[key]) for key in expected
        )
    if isinstance(expected, str) and isinstance(got, str):
        return got == expected
    return expected is None and got is None
