"""The plain-text table every command prints (``tasks list``, ``pools check``, the
``evaluate`` metrics): a header row, a rule of dashes under it, and left-aligned columns
two spaces apart, trailing spaces trimmed. Plain text on purpose: it reads the same in a
terminal, a log file and a doctest, with no terminal library to install."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["text_table"]


def text_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """``rows`` under ``header`` as aligned text (every row as long as the header)."""
    cells = [list(header), *map(list, rows)]
    if any(len(line) != len(header) for line in cells):
        raise ValueError(f"every table row needs {len(header)} cells")
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines)
