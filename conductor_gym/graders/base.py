"""The grader interface and registry.

The registry finds the built-in graders itself: the first time it is asked for a name
it does not hold (or for every name), it imports each module of
:mod:`conductor_gym.graders` (:func:`_import_grader_modules`), and each module registers
its graders with :func:`register_grader`. A new grader is a module with a decorated
function; no import line or table lists it.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

from conductor_gym.errors import ConfigurationError, InfrastructureError
from conductor_gym.registry import Registry

__all__ = [
    "Grade",
    "GraderError",
    "GraderFn",
    "GraderSetupError",
    "get_grader",
    "grade",
    "grader_blocks",
    "register_grader",
]


@dataclass(frozen=True)
class Grade:
    """The verdict on one response.

    Attributes:
        correct: Whether the response's final answer matches the reference.
        extracted: The final answer found in the response, or ``None`` if none was found.
        reason: A short human-readable explanation (why it was judged so).
    """

    correct: bool
    extracted: str | None
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class GraderError(InfrastructureError, RuntimeError):
    """The grader itself failed (an infrastructure error, never a wrong answer)."""

    kind = "grader"


class GraderSetupError(ConfigurationError):
    """This install cannot run the grader as its verdicts are defined (an incompatible
    dependency, such as the ANTLR runtime math-verify parses LaTeX with).

    A configuration error, not a :class:`GraderError`: it is never a wrong answer nor a
    truncated episode, it stops the run, and :func:`grade` raises it as it is. The message
    names what is installed, what is needed and how to fix it.
    """


GraderFn = Callable[[str, str, Mapping[str, Any]], Grade]
"""``grader(response, reference, metadata) -> Grade``."""


def _import_grader_modules() -> None:
    """Import every module of :mod:`conductor_gym.graders` (each registers its graders)."""
    package = importlib.import_module("conductor_gym.graders")
    for module in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        importlib.import_module(module.name)


GRADERS: Registry[GraderFn] = Registry(
    "grader", field="grader", group="conductor_gym.graders", discover=_import_grader_modules
)
"""Graders: name -> ``grader(response, reference, metadata) -> Grade``."""
_BLOCKING: set[str] = set()


def register_grader(name: str, *, blocking: bool = False) -> Callable[[GraderFn], GraderFn]:
    """Decorator registering ``fn`` under ``name`` (names are unique).

    ``blocking=True`` marks a grader that waits on something slow (a subprocess): the
    env then runs it on a worker thread so other episodes keep stepping meanwhile.
    """

    def decorate(fn: GraderFn) -> GraderFn:
        GRADERS.register(name, fn)
        if blocking:
            _BLOCKING.add(name)
        return fn

    return decorate


def grader_blocks(name: str) -> bool:
    """Whether the grader ``name`` was registered as ``blocking``."""
    return name in GRADERS and name in _BLOCKING  # `in` finds the built-ins first


def get_grader(name: str) -> GraderFn:
    """Return the grader registered as ``name``; an unknown name raises
    :class:`~conductor_gym.errors.UnknownNameError` (a ``KeyError``) listing the names."""
    return GRADERS.get(name)


def registered_graders() -> list[str]:
    """Names of every registered grader, sorted."""
    return GRADERS.names()


def grade(name: str, response: str, reference: str, **metadata: Any) -> Grade:
    """Grade ``response`` against ``reference`` with the grader called ``name``.

    Lets a user audit one answer without building an environment. Any exception
    raised inside the grader is re-raised as :class:`GraderError`, except a
    :class:`GraderSetupError` (an install that cannot grade as defined), raised as it is.
    """
    fn = get_grader(name)
    try:
        return fn(response, reference, metadata)
    except (GraderError, GraderSetupError):
        raise
    except Exception as exc:  # a broken grader run must never read as a wrong answer
        raise GraderError(f"grader {name!r} failed: {type(exc).__name__}: {exc}") from exc
