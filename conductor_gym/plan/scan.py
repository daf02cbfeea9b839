"""Locating the three list assignments in free text (see :mod:`conductor_gym.plan`).

:func:`locate` finds the last complete plan's three bracket expressions without
evaluating anything; :mod:`conductor_gym.plan.parse` turns them into a :class:`Plan`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conductor_gym.plan.model import NAMES, PlanParseError

__all__ = ["Occurrence", "line_of", "locate", "snippet", "statement_end"]

# Names are found with str.find (far faster than a regex alternation with a lookbehind);
# these check what surrounds them.
_IDENT_CHAR_RE = re.compile(r"[\w.]")
_EQUALS_RE = re.compile(r"\s*=(?!=)\s*")
# Characters that matter between the brackets of a value; everything else is skipped in C.
_CODE_RE = re.compile(r"[\[\](){}'\"#]")
# What matters after a closed value, up to the end of its statement.
_TAIL_RE = re.compile(r"[\n;#\\\[({'\"]")
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
            status, pos = _string_end(text, i)
            if status != _CLOSED:
                return status, pos


def _string_end(text: str, i: int) -> tuple[int, int]:
    """Scan the string whose opening quote is at ``text[i]``: ``(_CLOSED, index past its
    closing quote)``, ``(_UNCLOSED, len(text))`` or ``(_BAD_STRING, i)`` for a single-quoted
    string that runs into the end of its line."""
    n = len(text)
    c = text[i]
    triple = c * 3
    if text.startswith(triple, i):
        body = _BODY_RE[triple].match(text, i + 3)
        end = body.end() if body else i + 3
        if not text.startswith(triple, end):
            return _UNCLOSED, n
        return _CLOSED, end + 3
    body = _BODY_RE[c].match(text, i + 1)
    end = body.end() if body else i + 1
    if end >= n or text[end] == "\\":
        return _UNCLOSED, n
    if text[end] == "\n":
        return _BAD_STRING, i
    return _CLOSED, end + 1


def statement_end(text: str, pos: int, max_depth: int) -> int:
    """Where the Python statement that goes on at ``pos`` (just past a closed value) ends:
    at the next newline, ``;`` or ``#`` outside brackets and strings, or the end of the
    text. Backslash-newline continues the line. A bracket or string that is not closed
    ends it at the end of its line (the text is not Python there)."""
    n = len(text)
    search = _TAIL_RE.search
    while True:
        m = search(text, pos)
        if m is None:
            return n
        i = m.start()
        c = text[i]
        if c in "\n;#":
            return i
        if c == "\\":
            pos = i + 2
            continue
        status, end = _scan_value(text, i, max_depth) if c in "[({" else _string_end(text, i)
        if status != _CLOSED:
            nl = text.find("\n", i)
            return n if nl < 0 else nl
        pos = end


@dataclass(slots=True)
class Occurrence:
    name: str
    status: int
    start: int  # index of the opening bracket
    end: int  # as returned by _scan_value


def line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def snippet(text: str, pos: int, width: int = 40) -> str:
    s = text[pos : pos + width]
    return repr(s + "..." if pos + width < len(text) else s)


def locate(text: str, max_depth: int) -> dict[str, Occurrence]:
    """Find the last complete group of assignments, or raise the reason there is none."""
    n = len(text)
    occurrences: list[Occurrence] = []
    non_lists: dict[str, int] = {}  # name -> position of its last non-list value
    candidates: list[tuple[int, str]] = []
    for name in NAMES:
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
            occurrences.append(Occurrence(name, _UNCLOSED, vstart, n))
            break
        if text[vstart] != "[":
            non_lists[name] = vstart
            pos = vstart
            continue
        status, end = _scan_value(text, vstart, max_depth)
        occurrences.append(Occurrence(name, status, vstart, end))
        # After a closed value, assignments inside it (in its strings) are not plans.
        # After a broken one, keep looking inside it: it may be a draft, the plan may follow.
        pos = end if status == _CLOSED else vstart + 1

    # Group into plans. A repeated name drops the earlier assignment and everything before
    # it from the plan being collected, so a stray mention ahead of a plan does not split
    # it; a complete plan is closed off, so a truncated plan after it cannot borrow from it.
    complete: dict[str, Occurrence] | None = None
    current: list[Occurrence] = []
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
        where = f"the {o.name} list starting on line {line_of(text, o.start)}"
        if status == _TOO_DEEP:
            detail = f"{where} nests brackets deeper than the limit of {max_depth}"
        elif status == _BAD_STRING:
            detail = (
                f"{where} has a string that is not closed on its line "
                f"{line_of(text, o.end)}: {snippet(text, o.end)}"
            )
        else:
            detail = f"{where} is never closed (the text ends inside it)"
        raise PlanParseError(reason, detail)

    last = {o.name for o in current}
    missing = [name for name in NAMES if name not in last]
    for name in missing:
        if name in non_lists:
            vpos = non_lists[name]
            raise PlanParseError(
                "not_a_list",
                f"{name} on line {line_of(text, vpos)} is assigned {snippet(text, vpos)}, "
                "which does not start with '['",
            )
    if not occurrences:
        raise PlanParseError(
            "no_lists", "found no model_id = [...], subtasks = [...] or access_list = [...]"
        )
    found = [name for name in NAMES if name in last]
    detail = f"the last plan has {' and '.join(found)} but no {' or '.join(missing)} list"
    raise PlanParseError("missing_list", detail)
