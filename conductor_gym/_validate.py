"""Argument checks shared by constructors, with messages that name the argument."""

from __future__ import annotations

import numbers

from conductor_gym.errors import ConfigurationError


def is_int(value: object) -> bool:
    """An ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def require_int(name: str, value: object, *, minimum: int = 1) -> None:
    """Raise ``ConfigurationError`` naming ``name`` unless ``value`` is an int >= ``minimum``."""
    if not is_int(value) or value < minimum:  # type: ignore[operator]
        raise ConfigurationError(f"{name} must be an int >= {minimum}, got {value!r}")


def as_seed(name: str, value: object) -> int | None:
    """``value`` as a Python int seed (``None`` stays ``None``): any integral number
    (``int``, ``numpy.int64``, ...) >= 0; ``ConfigurationError`` naming ``name`` for a bool,
    a float, a negative number or anything else."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ConfigurationError(f"{name} must be None or an integer >= 0, got {value!r}")
    return int(value)
