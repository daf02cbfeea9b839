"""Finding the program in a response: the last fenced code block tagged as Python."""

from __future__ import annotations

__all__ = ["extract_code"]

_PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3"})


def _fence(line: str) -> tuple[int, str] | None:
    """``(backticks, info word)`` if ``line`` is a code fence, else ``None`` (string
    operations only: linear in the line, whatever it holds)."""
    stripped = line.lstrip(" \t")
    ticks = len(stripped) - len(stripped.lstrip("`"))
    if ticks < 3:
        return None
    info = stripped[ticks:]
    if "`" in info:  # an info string may not contain backticks (CommonMark)
        return None
    words = info.split()
    return ticks, words[0].lower() if words else ""


def extract_code(response: str) -> str | None:
    """The last fenced code block tagged as Python (or untagged), or ``None``.

    A fence is a line starting with three or more backticks; the block ends at a line
    holding only at least as many backticks. An unclosed block does not count.
    """
    found: str | None = None
    lines = response.splitlines()
    index = 0
    while index < len(lines):
        opening = _fence(lines[index])
        if opening is None:
            index += 1
            continue
        ticks, tag = opening
        end = index + 1
        while end < len(lines):
            closing = _fence(lines[end])
            if closing is not None and closing[0] >= ticks and not closing[1]:
                break
            end += 1
        if end >= len(lines):
            break  # unclosed: neither this block nor anything after it counts
        if tag in _PYTHON_TAGS:
            found = "\n".join(lines[index + 1 : end]) + "\n"
        index = end + 1
    return found
