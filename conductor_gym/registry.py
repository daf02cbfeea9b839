"""One registry shape for everything the library finds by name.

Worker backends, pool presets defined in code, task sources, graders, reward schemes and
agents are each a :class:`Registry`: a name maps to an object or to the lazy import path
``"module:attr"`` of one, imported the first time it is asked for (so ``import
conductor_gym`` imports no backend, no dataset library and no agent). Registering a
name that is taken by something else raises
:class:`~conductor_gym.errors.ConfigurationError`; registering the same target again is
a no-op (modules may be imported twice). Unknown names raise a
``ConfigurationError`` that lists the registered ones. Command-line choices come from
:meth:`Registry.names`.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator
from typing import Generic, TypeVar

from conductor_gym.errors import ConfigurationError, UnknownNameError

__all__ = ["Registry", "load_path"]

T = TypeVar("T")


def load_path(path: str) -> object:
    """The object an import path ``"package.module:attr"`` names (``attr`` may be
    dotted: ``"mod:Class.factory"``)."""
    module_name, sep, attr = path.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigurationError(f"{path!r} is not a 'module:attr' import path")
    target: object = importlib.import_module(module_name)
    for part in attr.split("."):
        target = getattr(target, part)
    return target


class Registry(Generic[T]):
    """Names of one kind (``kind``: ``"backend"``, ``"task source"``, ...) mapped to
    objects or lazy ``"module:attr"`` paths; ``field`` is the setting whose value is such a
    name (``"pool.backend"``, ``"tasks"``), named by the errors."""

    def __init__(self, kind: str, *, field: str | None = None) -> None:
        self.kind = kind
        self.field = field or kind
        self._targets: dict[str, str | T] = {}
        self._loaded: dict[str, T] = {}
        self._lock = threading.Lock()

    def register(self, name: str, target: str | T) -> None:
        """Register ``target`` (an object, or the ``"module:attr"`` path of one) as
        ``name``; a name already registered to another target raises."""
        if not isinstance(name, str) or not name.strip():
            raise ConfigurationError(f"a {self.kind} name must be a non-empty string")
        with self._lock:
            known = self._targets.get(name)
            if known is not None and known is not target and known != target:
                raise ConfigurationError(
                    f"{self.kind} {name!r} is already registered (to {_label(known)})",
                    field=self.field,
                )
            self._targets[name] = target

    def get(self, name: str) -> T:
        """The target registered as ``name``, imported on first use."""
        with self._lock:
            if name in self._loaded:
                return self._loaded[name]
            try:
                target = self._targets[name]
            except KeyError:
                raise self.unknown(name) from None
        value: T = load_path(target) if isinstance(target, str) else target  # type: ignore[assignment]
        with self._lock:
            self._loaded[name] = value
        return value

    def unknown(self, name: object, *, hint: str = "") -> UnknownNameError:
        """The error for a name that is not registered (listing the names)."""
        more = f" {hint}" if hint else ""
        return UnknownNameError(
            f"unknown {self.kind} {name!r}; registered: {self.names()}{more}", field=self.field
        )

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self._targets)

    def __contains__(self, name: object) -> bool:
        return name in self._targets

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._targets)

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()})"


def _label(target: object) -> str:
    return repr(target) if isinstance(target, str) else type(target).__name__
