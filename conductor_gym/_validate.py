"""Argument checks shared by constructors, with messages that name the argument."""

from __future__ import annotations


def is_int(value: object) -> bool:
    """An ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def require_int(name: str, value: object, *, minimum: int = 1) -> None:
    """Raise ``ValueError`` naming ``name`` unless ``value`` is an int >= ``minimum``."""
    if not is_int(value) or value < minimum:  # type: ignore[operator]
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
