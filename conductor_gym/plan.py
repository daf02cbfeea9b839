"""Parse a conductor's free-text completion into a validated :class:`Plan`.

The action of a conductor is free text: reasoning, then three Python list assignments::

    model_id = [2, 0]
    subtasks = ["Solve: what is 17*23?", "Check the solution above and give the answer."]
    access_list = [[], "all"]

:func:`parse_plan` turns such a completion into a :class:`Plan` or raises
:class:`PlanParseError` with a machine-readable ``reason`` and a precise ``detail``. It never
calls ``eval`` or ``exec``: each value is cut out of the text by a small scanner and handed
to :func:`ast.literal_eval`.

Locating the lists
    An assignment is ``model_id = <value>``, ``subtasks = <value>`` or
    ``access_list = <value>`` anywhere in the text (inside or outside code fences),
    with any whitespace, newlines included, around ``=``. The name must not be part of a
    longer identifier or an attribute (``my_model_id``, ``obj.model_id``, ``model_ids``),
    ``==`` is a comparison, and JSON-style ``"model_id": [...]`` is not an assignment.
    A value must start with ``[`` (a tuple is not accepted: a parenthesis after
    ``name =`` is too often prose). The scanner follows Python's lexical rules (single,
    double and triple-quoted strings with escapes, ``#`` comments) to find the matching
    closing bracket, so brackets, quotes and ``=`` inside strings are harmless.
    As in Python, a string in single quotes (``'...'`` or ``"..."``) must end on its line;
    one that does not makes its list a syntax error, so a stray apostrophe cannot swallow
    the rest of the text.

The last complete plan wins
    Assignments whose value is a bracket expression are walked in text order and collected
    into a plan. A name already in the plan being collected drops its earlier assignment
    and everything before it (a list quoted in the reasoning does not split the plan that
    follows, and a list written again replaces the earlier one). Once all three names are
    in, each with a closed bracket expression, the plan is complete and collecting starts
    afresh. The last complete plan wins: a plan quoted in the reasoning is superseded by
    the final one, and a truncated plan after a complete one falls back to the complete
    one. The chosen plan is final: if one of its values is not a valid literal the result
    is ``syntax``, never an earlier plan. The search for assignments skips over closed
    values (an assignment quoted inside a subtask is not a plan) but continues inside
    broken ones (a broken draft may be followed by the real plan). Assignments whose value
    is not a bracket expression (``model_id = the index of a worker`` in prose) take no
    part in this; they only explain a failure.

Validation, in this order
    ``too_long`` (before anything else); then, when no group is complete, the first that
    applies of ``too_deep``, ``syntax`` (a string not closed on its line), ``incomplete``,
    ``not_a_list``, ``missing_list`` and ``no_lists``; then, for the chosen group,
    ``syntax`` and ``length_mismatch``. Three empty lists give the empty
    plan (the "stop" answer of a recursive episode). Then ``too_many_steps``, every model id
    (``bad_model_id``, ``unknown_worker``), every subtask (``bad_subtask``,
    ``empty_subtask``) and every access entry (``bad_access``). Subtasks are kept verbatim.

Access entries
    ``[]`` means no earlier step, ``"all"`` (or ``["all"]``, as the paper writes it) every
    earlier step, and a list (or tuple) of distinct earlier 0-based step indices exactly
    those steps.
    They are normalised to ``()``, ``"all"`` and a sorted tuple of indices.

Reasons (:data:`REASONS`)
    ``too_long``
        The text has more than ``max_chars`` characters; nothing was scanned.
    ``no_lists``
        No ``model_id``, ``subtasks`` or ``access_list`` assignment was found.
    ``missing_list``
        Some of the three assignments were found, but no complete plan; the detail names
        the lists missing from the last plan being collected.
    ``incomplete``
        A list is never closed, typically because the generation was cut off.
    ``syntax``
        A list of the chosen plan is a closed bracket expression but not a Python literal,
        or, when no plan is complete, a list has a string that is not closed on its line.
    ``too_deep``
        A list nests brackets deeper than ``max_depth`` (rejected while scanning, so a
        bracket bomb cannot reach the parser's recursion limits).
    ``not_a_list``
        A value does not start with ``[`` (``model_id = 2``, ``access_list = "all"``,
        ``subtasks = ("one step",)``) and no complete plan exists.
    ``length_mismatch``
        The three lists have different lengths; the detail gives all three.
    ``too_many_steps``
        The plan has more than ``max_steps`` steps.
    ``bad_model_id``
        A model id is not an integer (``True`` and ``1.0`` are not integers here).
    ``unknown_worker``
        A model id is outside ``0 .. num_workers - 1``.
    ``bad_subtask``
        A subtask is not a string.
    ``empty_subtask``
        A subtask is empty or whitespace only.
    ``bad_access``
        An access entry is none of the forms above (an index that is not earlier than its
        own step, negative, duplicated or a bool, another string, a nested list, ...).

``num_workers < 1``, ``max_steps < 1``, ``max_chars < 0`` and ``max_depth < 1`` are
programming errors and raise a plain :class:`ValueError`.
"""

from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal, TypeAlias

__all__ = ["REASONS", "Access", "Plan", "PlanParseError", "parse_plan"]

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

_NAMES: tuple[str, str, str] = ("model_id", "subtasks", "access_list")


class PlanParseError(ValueError):
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
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail

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


# --------------------------------------------------------------------------- scanning

# Names are found with str.find (far faster than a regex alternation with a lookbehind);
# these check what surrounds them.
_IDENT_CHAR_RE = re.compile(r"[\w.]")
_EQUALS_RE = re.compile(r"\s*=(?!=)\s*")
# Characters that matter between the brackets of a value; everything else is skipped in C.
_CODE_RE = re.compile(r"[\[\](){}'\"#]")
# String bodies, "unrolled" so that matching is linear. A short string stops at a newline.
_BODY_RE: dict[str, re.Pattern[str]] = {
    "'": re.compile(r"[^'\\\n]*(?:\\.[^'\\\n]*)*", re.DOTALL),
    '"': re.compile(r'[^"\\\n]*(?:\\.[^"\\\n]*)*', re.DOTALL),
    "'''": re.compile(r"[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*", re.DOTALL),
    '"""': re.compile(r'[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*', re.DOTALL),
}

_CLOSED = 0  # a balanced bracket expression
_UNCLOSED = 1  # the text ends inside it
_TOO_DEEP = 2  # nested deeper than max_depth
_BAD_STRING = 3  # a single-quoted string runs into the end of its line


def _scan_value(text: str, start: int, max_depth: int) -> tuple[int, int]:
    """Scan the bracket expression opening at ``text[start]``.

    Returns ``(status, pos)``: for ``_CLOSED`` the index just past the matching bracket,
    otherwise the index of the offending bracket or quote (or ``len(text)``). Bracket kinds
    are not matched against each other; a mismatch is left for ``ast.literal_eval``.
    """
    n = len(text)
    depth = 0
    pos = start
    search = _CODE_RE.search
    while True:
        m = search(text, pos)
        if m is None:
            return _UNCLOSED, n
        i = m.start()
        c = text[i]
        if c in "[({":
            depth += 1
            if depth > max_depth:
                return _TOO_DEEP, i
            pos = i + 1
        elif c in "])}":
            depth -= 1
            pos = i + 1
            if depth == 0:
                return _CLOSED, pos
        elif c == "#":
            nl = text.find("\n", i)
            if nl < 0:
                return _UNCLOSED, n
            pos = nl + 1
        else:
            triple = c * 3
            if text.startswith(triple, i):
                body = _BODY_RE[triple].match(text, i + 3)
                end = body.end() if body else i + 3
                if not text.startswith(triple, end):
                    return _UNCLOSED, n
                pos = end + 3
            else:
                body = _BODY_RE[c].match(text, i + 1)
                end = body.end() if body else i + 1
                if end >= n or text[end] == "\\":
                    return _UNCLOSED, n
                if text[end] == "\n":
                    return _BAD_STRING, i
                pos = end + 1


@dataclass(slots=True)
class _Occurrence:
    name: str
    status: int
    start: int  # index of the opening bracket
    end: int  # as returned by _scan_value


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def _snippet(text: str, pos: int, width: int = 40) -> str:
    s = text[pos : pos + width]
    return repr(s + "..." if pos + width < len(text) else s)


def _locate(text: str, max_depth: int) -> dict[str, _Occurrence]:
    """Find the last complete group of assignments, or raise the reason there is none."""
    n = len(text)
    occurrences: list[_Occurrence] = []
    non_lists: dict[str, int] = {}  # name -> position of its last non-list value
    candidates: list[tuple[int, str]] = []
    for name in _NAMES:
        i = text.find(name)
        while i >= 0:
            candidates.append((i, name))
            i = text.find(name, i + len(name))
    candidates.sort()

    pos = 0
    for start, name in candidates:
        if start < pos or (start and _IDENT_CHAR_RE.match(text, start - 1)):
            continue
        m = _EQUALS_RE.match(text, start + len(name))
        if m is None:
            continue
        vstart = m.end()
        if vstart >= n:  # the text ends right after "name ="
            occurrences.append(_Occurrence(name, _UNCLOSED, vstart, n))
            break
        if text[vstart] != "[":
            non_lists[name] = vstart
            pos = vstart
            continue
        status, end = _scan_value(text, vstart, max_depth)
        occurrences.append(_Occurrence(name, status, vstart, end))
        # After a closed value, assignments inside it (in its strings) are not plans.
        # After a broken one, keep looking inside it: it may be a draft, the plan may follow.
        pos = end if status == _CLOSED else vstart + 1

    # Group into plans. A repeated name drops the earlier assignment and everything before
    # it from the plan being collected, so a stray mention ahead of a plan does not split
    # it; a complete plan is closed off, so a truncated plan after it cannot borrow from it.
    complete: dict[str, _Occurrence] | None = None
    current: list[_Occurrence] = []
    for occ in occurrences:
        for k, earlier in enumerate(current):
            if earlier.name == occ.name:
                del current[: k + 1]
                break
        current.append(occ)
        if len(current) == 3 and all(o.status == _CLOSED for o in current):
            complete = {o.name: o for o in current}
            current = []
    if complete is not None:
        return complete

    for status, reason in (
        (_TOO_DEEP, "too_deep"),
        (_BAD_STRING, "syntax"),
        (_UNCLOSED, "incomplete"),
    ):
        bad = [o for o in occurrences if o.status == status]
        if not bad:
            continue
        o = bad[-1]
        where = f"the {o.name} list starting on line {_line_of(text, o.start)}"
        if status == _TOO_DEEP:
            detail = f"{where} nests brackets deeper than the limit of {max_depth}"
        elif status == _BAD_STRING:
            detail = (
                f"{where} has a string that is not closed on its line "
                f"{_line_of(text, o.end)}: {_snippet(text, o.end)}"
            )
        else:
            detail = f"{where} is never closed (the text ends inside it)"
        raise PlanParseError(reason, detail)

    last = {o.name for o in current}
    missing = [name for name in _NAMES if name not in last]
    for name in missing:
        if name in non_lists:
            vpos = non_lists[name]
            raise PlanParseError(
                "not_a_list",
                f"{name} on line {_line_of(text, vpos)} is assigned {_snippet(text, vpos)}, "
                "which does not start with '['",
            )
    if not occurrences:
        raise PlanParseError(
            "no_lists", "found no model_id = [...], subtasks = [...] or access_list = [...]"
        )
    found = [name for name in _NAMES if name in last]
    detail = f"the last plan has {' and '.join(found)} but no {' or '.join(missing)} list"
    raise PlanParseError("missing_list", detail)


# --------------------------------------------------------------------------- validation


def _literal(text: str, occ: _Occurrence) -> list[Any]:
    """Evaluate a closed value: a literal that starts at "[" and ends at its match is a list."""
    src = text[occ.start : occ.end]
    value: list[Any]
    try:
        if "\\" in src:
            # Invalid escapes such as "\s" warn (an error under -W error) but are valid.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = ast.literal_eval(src)
        else:
            value = ast.literal_eval(src)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError) as exc:
        msg = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        raise PlanParseError(
            "syntax",
            f"the {occ.name} list on line {_line_of(text, occ.start)} is not a Python literal"
            f" ({type(exc).__name__}: {msg}): {_snippet(text, occ.start)}",
        ) from None
    return value


def _short(value: object, width: int = 60) -> str:
    r = repr(value)
    return r if len(r) <= width else r[: width - 3] + "..."


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _access_entry(entry: object, step: int) -> Access:
    if entry == "all" and isinstance(entry, str):
        return "all"
    if isinstance(entry, list | tuple):
        if len(entry) == 1 and entry[0] == "all" and isinstance(entry[0], str):
            return "all"
        if all(_is_int(j) and 0 <= j < step for j in entry) and len(set(entry)) == len(entry):
            return tuple(sorted(entry))
    if step == 0:
        allowed = '[] or "all" (step 0 has no earlier steps)'
    else:
        allowed = f'[], "all" or a list of distinct step indices in 0..{step - 1}'
    raise PlanParseError(
        "bad_access", f"access_list[{step}] is {_short(entry)}; step {step} needs {allowed}"
    )


def parse_plan(
    text: str,
    num_workers: int,
    max_steps: int = 5,
    *,
    max_chars: int = 65536,
    max_depth: int = 4,
) -> Plan:
    """Parse and validate the plan in a conductor completion.

    Args:
        text: The completion: free text ending (usually) in the three assignments.
        num_workers: Size of the episode's worker pool; model ids must be in
            ``0 .. num_workers - 1``.
        max_steps: Most steps a plan may have.
        max_chars: Longer texts are rejected unscanned (``too_long``).
        max_depth: Deepest bracket nesting accepted inside one list (``too_deep``).

    Returns:
        The last complete plan in ``text``; three empty lists give the empty plan.

    Raises:
        PlanParseError: The text holds no valid plan; ``reason`` is one of :data:`REASONS`.
        ValueError: ``num_workers``, ``max_steps``, ``max_chars`` or ``max_depth`` is out
            of range (a programming error, not a bad completion).
    """
    if num_workers < 1:
        raise ValueError(f"num_workers must be at least 1, got {num_workers}")
    if max_steps < 1:
        raise ValueError(f"max_steps must be at least 1, got {max_steps}")
    if max_chars < 0:
        raise ValueError(f"max_chars must be non-negative, got {max_chars}")
    if max_depth < 1:
        raise ValueError(f"max_depth must be at least 1, got {max_depth}")
    if len(text) > max_chars:
        raise PlanParseError(
            "too_long", f"the text has {len(text)} characters, more than the limit of {max_chars}"
        )

    group = _locate(text, max_depth)
    model_ids = _literal(text, group["model_id"])
    subtasks = _literal(text, group["subtasks"])
    access = _literal(text, group["access_list"])

    n = len(model_ids)
    if len(subtasks) != n or len(access) != n:
        raise PlanParseError(
            "length_mismatch",
            f"model_id has {n} entries, subtasks {len(subtasks)}, access_list {len(access)}; "
            "they must be equally long",
        )
    if n == 0:
        return Plan((), (), ())
    if n > max_steps:
        raise PlanParseError("too_many_steps", f"the plan has {n} steps, at most {max_steps}")

    for step, mid in enumerate(model_ids):
        if not _is_int(mid):
            raise PlanParseError(
                "bad_model_id", f"model_id[{step}] is {_short(mid)}, not an integer worker id"
            )
        if not 0 <= mid < num_workers:
            raise PlanParseError(
                "unknown_worker",
                f"model_id[{step}] is {mid}, but the valid worker ids are 0..{num_workers - 1}",
            )
    for step, sub in enumerate(subtasks):
        if not isinstance(sub, str):
            raise PlanParseError(
                "bad_subtask",
                f"subtasks[{step}] is a {type(sub).__name__}, not a string: {_short(sub)}",
            )
        if not sub.strip():
            raise PlanParseError("empty_subtask", f"subtasks[{step}] is empty: {_short(sub)}")
    normalised = tuple(_access_entry(entry, step) for step, entry in enumerate(access))
    return Plan(tuple(model_ids), tuple(subtasks), normalised)
