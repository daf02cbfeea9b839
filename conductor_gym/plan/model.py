"""The plan value types: :class:`Plan`, its access entries, and :class:`PlanParseError`."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal, TypeAlias

from conductor_gym.errors import PolicyError

__all__ = ["NAMES", "REASONS", "Access", "Plan", "PlanParseError"]

Access: TypeAlias = Literal["all"] | tuple[int, ...]
"""A normalised access entry: ``"all"`` or a sorted tuple of earlier 0-based step indices."""

REASONS: tuple[str, ...] = (
    "too_long",
    "no_lists",
    "missing_list",
    "incomplete",
    "syntax",
    "too_deep",
    "not_a_list",
    "length_mismatch",
    "too_many_steps",
    "bad_model_id",
    "unknown_worker",
    "bad_subtask",
    "empty_subtask",
    "bad_access",
)
"""Every value :attr:`PlanParseError.reason` can take; see the module docstring."""

NAMES: tuple[str, str, str] = ("model_id", "subtasks", "access_list")
"""The three list names, in the order a plan lists them."""


class PlanParseError(PolicyError, ValueError):
    """A completion that does not hold a valid plan.

    Attributes:
        reason: Machine-readable code, one of :data:`REASONS`.
        detail: Human-readable explanation: which list, which step, what was found.

    ``str(err)`` is ``f"{reason}: {detail}"``.
    """

    reason: str
    detail: str

    def __init__(self, reason: str, detail: str) -> None:
        if reason not in REASONS:
            raise ValueError(f"unknown plan parse reason {reason!r}")
        super().__init__(reason, detail)

    def __reduce__(self) -> tuple[type[PlanParseError], tuple[str, str]]:
        # The default reduction would call __init__ with the single formatted message.
        return (type(self), (self.reason, self.detail))


@dataclass(frozen=True)
class Plan:
    """A validated plan of worker steps.

    Step ``i`` asks worker ``model_ids[i]`` to do ``subtasks[i]``, seeing the earlier steps
    that ``access[i]`` selects (see :meth:`visible`).

    Construction checks the structure (equal lengths, well-formed access entries) and
    raises :class:`ValueError` otherwise; the worker ids are checked by :func:`parse_plan`,
    which knows the pool size.
    """

    model_ids: tuple[int, ...]
    subtasks: tuple[str, ...]
    access: tuple[Access, ...]

    def __post_init__(self) -> None:
        n = len(self.model_ids)
        if len(self.subtasks) != n or len(self.access) != n:
            raise ValueError(
                f"Plan fields differ in length: {n} model ids, {len(self.subtasks)} subtasks, "
                f"{len(self.access)} access entries"
            )
        for step, entry in enumerate(self.access):
            if entry == "all":
                continue
            if not isinstance(entry, tuple) or any(
                type(j) is not int or not 0 <= j < step for j in entry
            ):
                raise ValueError(f"Plan access entry for step {step} is invalid: {entry!r}")
            if any(a >= b for a, b in pairwise(entry)):
                raise ValueError(f"Plan access entry for step {step} is not sorted: {entry!r}")

    def __len__(self) -> int:
        """Number of steps."""
        return len(self.model_ids)

    @property
    def is_empty(self) -> bool:
        """True for the plan with zero steps (the "stop" answer of a recursive episode)."""
        return not self.model_ids

    def visible(self, step: int) -> tuple[int, ...]:
        """Indices of the earlier steps that step ``step`` sees, in increasing order."""
        if not 0 <= step < len(self.model_ids):
            raise IndexError(f"step {step} out of range for a plan of {len(self)} steps")
        entry = self.access[step]
        return tuple(range(step)) if entry == "all" else entry

    def to_dict(self) -> dict[str, list[Any]]:
        """The plan as JSON-ready lists, keyed like the assignments of the text format."""
        return {
            "model_id": list(self.model_ids),
            "subtasks": list(self.subtasks),
            "access_list": [e if e == "all" else list(e) for e in self.access],
        }

    def to_text(self) -> str:
        """The three assignments as Python source; ``parse_plan`` reads it back unchanged."""
        model_id = ", ".join(str(m) for m in self.model_ids)
        subtasks = ", ".join(_quote(s) for s in self.subtasks)
        access = ", ".join(
            '"all"' if e == "all" else "[" + ", ".join(str(j) for j in e) + "]" for e in self.access
        )
        return f"model_id = [{model_id}]\nsubtasks = [{subtasks}]\naccess_list = [{access}]"


def _quote(s: str) -> str:
    """A double-quoted Python literal for ``s`` that survives ``ast.literal_eval``."""
    if s.isprintable() and '"' not in s and "\\" not in s:
        return f'"{s}"'
    parts: list[str] = []
    for ch in s:
        if ch == "\\":
            parts.append("\\\\")
        elif ch == '"':
            parts.append('\\"')
        elif ch.isprintable():
            parts.append(ch)
        else:
            parts.append(repr(ch)[1:-1])  # \n, \x00, \u2028, lone surrogates, ...
    return '"' + "".join(parts) + '"'
