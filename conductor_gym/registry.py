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

**Plug-ins.** A registry built with ``group=`` also holds the installed distributions'
entry points of that group (``[project.entry-points."conductor_gym.agents"]`` in a
plug-in's ``pyproject.toml``), so a ``pip install``-ed agent or grader is found by
name. Entry points are read on the first lookup of a name that is not registered in code
(``get``, ``in``, ``names``), never at import, and a plug-in's object is imported only
when it is first asked for; an entry point that fails to import raises
:class:`~conductor_gym.errors.ConfigurationError` naming the distribution and the entry
point. A name registered in code always wins over a plug-in of the same name (the
plug-in is ignored, so installing a package never changes what a built-in name means);
two installed distributions offering one name raise on lookup of that name, naming
both. :meth:`Registry.rescan` forgets what was read (after installing in a running
process).

**Discovery.** A registry built with ``discover=`` calls that function once, the first
time it is asked for a name it does not hold or for all its names (``get``, ``in``,
``names``; never ``register``), and before any plug-in is read, so that what the
function registers counts as registered in code. The graders' registry imports every
module of :mod:`conductor_gym.graders` this way (each registers its graders), and the
TRL recipes' registers every module of their package: a new module needs no import line
or table entry anywhere.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Generic, TypeVar

from conductor_gym.errors import ConfigurationError, UnknownNameError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

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
    name (``"pool.backend"``, ``"tasks"``), named by the errors; ``group``, when given, is
    the entry-point group whose installed plug-ins the registry also holds (module
    docstring); ``discover``, when given, registers the names found by discovery (module
    docstring)."""

    def __init__(
        self,
        kind: str,
        *,
        field: str | None = None,
        group: str | None = None,
        discover: Callable[[], None] | None = None,
    ) -> None:
        self.kind = kind
        self.field = field or kind
        self.group = group
        self._discover_with = discover
        # Held while discovery runs (never together with _lock, which registering takes):
        # another thread's lookup waits for it to finish.
        self._discovery = threading.RLock()
        self._targets: dict[str, str | T] = {}
        self._loaded: dict[str, T] = {}
        # Entry points by name, read on first need (None: not read yet); a name offered
        # by several distributions maps to all of them and raises on lookup.
        self._plugins: dict[str, list[EntryPoint]] | None = None
        self._lock = threading.RLock()

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
            if known is None:  # a plug-in of this name, if one was loaded, is shadowed now
                self._loaded.pop(name, None)

    def get(self, name: str) -> T:
        """The target registered as ``name`` (or the plug-in installed as ``name``),
        imported on first use."""
        with self._lock:
            if name in self._loaded:
                return self._loaded[name]
            known = name in self._targets
        if not known:
            self._discover()
        with self._lock:
            target = self._targets.get(name)
            offers = self._scan().get(name, []) if target is None else []
        if target is not None:
            value: T = load_path(target) if isinstance(target, str) else target  # type: ignore[assignment]
        elif len(offers) == 1:
            value = self._load_plugin(offers[0])
        elif offers:
            raise ConfigurationError(
                f"{self.kind} {name!r} is offered by several installed plug-ins: "
                f"{'; '.join(_entry_label(offer) for offer in offers)}; uninstall all but one",
                field=self.field,
            )
        else:
            raise self.unknown(name)
        with self._lock:
            self._loaded[name] = value
        return value

    def rescan(self) -> None:
        """Forget the plug-ins read so far (and those imported), so that the next lookup
        reads the installed entry points again."""
        with self._lock:
            if self._plugins:
                for name in self._plugins:
                    if name not in self._targets:
                        self._loaded.pop(name, None)
            self._plugins = None

    def _discover(self) -> None:
        """Run ``discover`` once, before any plug-in is read (what it registers is
        registered in code, and wins); a failure is raised and leaves it to run again on
        the next lookup. Called without ``_lock`` held: discovery registers."""
        with self._discovery:
            discover, self._discover_with = self._discover_with, None
            if discover is None:  # done, or running in this thread (a re-entrant lookup)
                return
            try:
                discover()
            except BaseException:
                self._discover_with = discover
                raise

    def _scan(self) -> dict[str, list[EntryPoint]]:
        with self._lock:
            if self._plugins is None:
                self._plugins = {}
                if self.group is not None:
                    from importlib.metadata import entry_points

                    for entry in entry_points(group=self.group):
                        offers = self._plugins.setdefault(entry.name, [])
                        if all(entry.value != known.value for known in offers):
                            offers.append(entry)
            return {
                name: offers for name, offers in self._plugins.items() if name not in self._targets
            }

    def _load_plugin(self, entry: EntryPoint) -> T:
        try:
            value: T = entry.load()
        except Exception as exc:
            raise ConfigurationError(
                f"{self.kind} {entry.name!r}: cannot load the plug-in {_entry_label(entry)}: "
                f"{type(exc).__name__}: {exc}",
                field=self.field,
            ) from exc
        return value

    def unknown(self, name: object, *, hint: str = "") -> UnknownNameError:
        """The error for a name that is not registered (listing the names)."""
        more = f" {hint}" if hint else ""
        return UnknownNameError(
            f"unknown {self.kind} {name!r}; registered: {self.names()}{more}", field=self.field
        )

    def names(self) -> list[str]:
        """Every registered name, and every installed plug-in's, sorted."""
        self._discover()
        with self._lock:
            return sorted({*self._targets, *self._scan()})

    def __contains__(self, name: object) -> bool:
        with self._lock:
            if name in self._targets:
                return True
        if not isinstance(name, str):
            return False
        self._discover()
        with self._lock:
            return name in self._targets or name in self._scan()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.names()})"


def _entry_label(entry: EntryPoint) -> str:
    dist = entry.dist
    where = (
        f"distribution {dist.name} {dist.version}"
        if dist is not None
        else "an unknown distribution"
    )
    return f"entry point '{entry.name} = {entry.value}' of group {entry.group!r} in {where}"


def _label(target: object) -> str:
    return repr(target) if isinstance(target, str) else type(target).__name__
