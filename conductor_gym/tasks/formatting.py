"""Question text shared by the loaders (our own wording).

Contract: :func:`lettered_question` renders a multiple-choice question as the stem, one
``"A) option"`` line per option, and a closing instruction to answer with the letter;
the ``choice`` grader reads the answer letter from the response. :func:`option_letters`
gives the letters for ``n`` options.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["lettered_question", "option_letters"]


def option_letters(n: int) -> str:
    """The first ``n`` upper-case letters (``4 -> "ABCD"``); ``n`` must be 2..26."""
    if not 2 <= n <= 26:
        raise ValueError(f"a choice question needs 2..26 options, got {n}")
    return "".join(chr(ord("A") + i) for i in range(n))


def lettered_question(stem: str, options: Sequence[str]) -> str:
    """``stem``, the options as ``"A) ..."`` lines, then the answer instruction."""
    letters = option_letters(len(options))
    body = "\n".join(f"{letter}) {option}" for letter, option in zip(letters, options, strict=True))
    return f"{stem.strip()}\n\n{body}\n\nAnswer with the letter of the correct option."
