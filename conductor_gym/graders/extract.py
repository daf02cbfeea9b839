r"""Shared helpers that find the final answer in a model's response.

Contract: every function here is pure, never raises on any ``str`` input, and works in
time linear in the length of the text (the regular expressions below have no nested
unbounded repetition). They locate candidate answers; deciding whether a candidate is
well formed (a number, an option letter, an expression) is the grader's job.

* :func:`last_boxed` returns the content of the last ``\boxed{...}`` (or ``\fbox{...}``)
  whose braces balance.
* :func:`anchored_answers` returns what follows each anchored final-answer phrase
  ("The final answer is X", "Answer: X", "**Answer:** X", "Final answer: X"), in order.
* :func:`clean_answer` strips the decoration models put around an answer: whitespace,
  ``$`` and ``\( \)`` math delimiters, ``**`` emphasis, backticks, ``\text{...}`` and a
  trailing full stop.
* :func:`final_answer` applies the usual priority (last box, then last anchored phrase)
  and says which rule matched.
"""

from __future__ import annotations

import re

__all__ = [
    "anchored_answers",
    "boxed_spans",
    "clean_answer",
    "final_answer",
    "last_anchored",
    "last_boxed",
]

_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)\s*\{")

# "answer" / "final answer", optional emphasis, then "is", ":" or "=", optional emphasis.
_ANCHOR = re.compile(
    r"\b(?:final\s+answer|answer)\s*(?:\*\*|__)?\s*(?:\bis\b\s*:?|:|=)\s*(?:\*\*|__)?[ \t]*",
    re.IGNORECASE,
)

_TEXT_WRAP = re.compile(r"^\\(?:text|textbf|mathrm|mathbf)\s*\{(.*)\}$", re.DOTALL)

_WRAPPERS: tuple[tuple[str, str], ...] = (
    ("$$", "$$"),
    ("$", "$"),
    ("\\(", "\\)"),
    ("\\[", "\\]"),
    ("**", "**"),
    ("__", "__"),
    ("`", "`"),
)


def boxed_spans(text: str) -> list[tuple[int, str]]:
    r"""Every balanced ``\boxed{...}`` / ``\fbox{...}`` as ``(start, content)``, in order.

    A box whose braces never close is skipped. Nested boxes are reported separately
    (the inner one starts later, so it counts as the later box).
    """
    # One pass with a stack of open braces keeps this linear even for text full of
    # unclosed boxes.
    box_starts = {m.end() - 1: m for m in _BOX_OPEN.finditer(text)}
    if not box_starts:
        return []
    spans: list[tuple[int, str]] = []
    stack: list[int] = []
    for pos, char in enumerate(text):
        if char == "{":
            stack.append(pos)
        elif char == "}" and stack:
            opened = stack.pop()
            box = box_starts.get(opened)
            if box is not None:
                spans.append((box.start(), text[box.end() : pos]))
    spans.sort()
    return spans


def last_boxed(text: str) -> str | None:
    r"""Content of the last balanced ``\boxed{...}`` (or ``\fbox{...}``), or ``None``."""
    spans = boxed_spans(text)
    return spans[-1][1] if spans else None


def clean_answer(answer: str) -> str:
    r"""Strip decoration around an answer.

    Removes surrounding whitespace, ``$``/``$$``, ``\(...\)``, ``\[...\]``, ``**``, ``__``,
    backticks, a ``\text{...}``-style wrapper, and trailing ``.``, ``,``, ``;`` or ``!``;
    repeatedly, until nothing changes. The inside is left as is.
    """
    previous = None
    text = answer
    while text != previous:
        previous = text
        text = text.strip().rstrip(".,;!").strip()
        for left, right in _WRAPPERS:
            if len(text) >= len(left) + len(right) and text.startswith(left):
                if text.endswith(right):
                    text = text[len(left) : len(text) - len(right)]
                elif left in ("$", "**", "__", "`") and left not in text[len(left) :]:
                    # An unmatched opening mark (the close was cut off with the line).
                    text = text[len(left) :]
                break
        else:
            wrapped = _TEXT_WRAP.match(text)
            if wrapped is not None:
                text = wrapped.group(1)
    return text


_NONBLANK = re.compile(r"\S")


def _line_at(text: str, start: int) -> str:
    """The text from ``start`` to the end of its line (slicing only that line keeps
    repeated look-ups linear overall)."""
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def anchored_answers(text: str) -> list[tuple[int, str]]:
    """What follows each anchored final-answer phrase, as ``(start, cleaned value)``.

    The value is the rest of the line after the phrase (or the next non-empty line when
    the phrase ends its line, as in ``**Answer:**`` followed by the answer below it),
    passed through :func:`clean_answer`. Empty values are dropped.
    """
    found: list[tuple[int, str]] = []
    for match in _ANCHOR.finditer(text):
        line = _line_at(text, match.end())
        if not line.strip():
            nonblank = _NONBLANK.search(text, match.end())
            line = _line_at(text, nonblank.start()) if nonblank else ""
        value = clean_answer(line)
        if value:
            found.append((match.start(), value))
    return found


def last_anchored(text: str) -> str | None:
    """The value after the last anchored final-answer phrase, or ``None``."""
    answers = anchored_answers(text)
    return answers[-1][1] if answers else None


def final_answer(text: str) -> tuple[str, str] | None:
    r"""``(answer, rule)`` by priority: the last ``\boxed{}`` (rule ``"boxed"``), else the
    last anchored phrase (rule ``"anchored"``); ``None`` when neither is present."""
    boxed = last_boxed(text)
    if boxed is not None:
        return clean_answer(boxed), "boxed"
    anchored = last_anchored(text)
    if anchored is not None:
        return anchored, "anchored"
    return None
