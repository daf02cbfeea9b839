"""A Gymnasium text space that admits every character a prompt or a plan can contain."""

from __future__ import annotations

import string
from typing import Any

import numpy as np
from gymnasium import spaces

__all__ = ["UnicodeText"]

# What ``sample`` draws from: printable ASCII, whitespace and a few non-ASCII letters.
_SAMPLE_CHARSET = string.printable + "éßπ→∑中"


class UnicodeText(spaces.Text):
    """Strings of ``min_length .. max_length`` characters over all of Unicode.

    :class:`gymnasium.spaces.Text` admits only a finite charset; prompts and plans may
    hold any character (LaTeX, code, other scripts), so membership here checks the
    type and the length only. :meth:`sample` draws from a small mixed charset.
    """

    def __init__(
        self, max_length: int, *, min_length: int = 0, seed: int | np.random.Generator | None = None
    ) -> None:
        super().__init__(max_length, min_length=min_length, charset=_SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    def __hash__(self) -> int:
        return hash((UnicodeText, self.min_length, self.max_length))
