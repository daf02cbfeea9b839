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
* :func:`cut_prose` ends an anchored value where the sentence around it goes on
  (lm-eval's Minerva cut ``... I hope it is correct``, simple-evals' one-line answer):
  at a sentence end (``.``, ``!``, ``?`` before a space) or before a clause that starts
  with a connective (``, since``, ``because``, ``, not``), never inside ``$...$`` or
  brackets. :func:`anchored_answers` applies it.
* :func:`strip_reasoning` drops an R1-style ``<think>...</think>`` block: peers grade only
  what follows the reasoning.
* :func:`graded_answer` is what the graders read: after any ``</think>``, the last box
  unless a strong final-answer phrase follows it, else the last anchored phrase (cut);
  it says which rule matched.
* :func:`final_answer` is the earlier, simpler reading (the last box, else the last
  anchored phrase, uncut) that the simulator's perception is calibrated on
  (:mod:`conductor_gym.sim.context`); graders do not use it.
"""

from __future__ import annotations

import re

__all__ = [
    "CUT_SCAN_CHARS",
    "anchored_answers",
    "boxed_spans",
    "clean_answer",
    "cut_prose",
    "final_answer",
    "graded_answer",
    "last_anchored",
    "last_boxed",
    "strip_reasoning",
    "superseding_anchor",
]

_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)\s*\{")

# "answer" / "final answer", optional emphasis, then "is", ":" or "=", optional emphasis.
_ANCHOR = re.compile(
    r"\b(?:final\s+answer|answer)\s*(?:\*\*|__)?\s*(?:\bis\b\s*:?|:|=)\s*(?:\*\*|__)?[ \t]*",
    re.IGNORECASE,
)

# A phrase that commits to a final answer strongly enough to supersede an earlier box:
# "final answer" in any form, or "Answer:" opening a line (after emphasis or a heading).
_FINAL_PHRASE = re.compile(r"final\s+answer\b", re.IGNORECASE)
_ANSWER_COLON = re.compile(r"answer\s*(?:\*\*|__)?\s*[:=]", re.IGNORECASE)
_THINK_END = "</think>"
# Where trailing prose starts after an answer: a sentence end, or a clause opened by a
# connective ("x = 5, since ...", "12, not 13", "Paris because ...", "I hope ...").
_PROSE_START = re.compile(
    r"[.!?](?=\s|$)"
    r"|\s*[,;]\s+(?:since|because|as|which|where|so|hence|thus|therefore|but|not|given|"
    r"while|although|though|i\.e\.|e\.g\.)(?!\w)"
    r"|\s+(?:since|because)\b"
    r"|\s+I\s+hope\b",
    re.IGNORECASE,
)
CUT_SCAN_CHARS = 4_000
"""How far into an anchored value :func:`cut_prose` looks for the end of the answer."""
_OPENERS = {"{": "}", "(": ")", "[": "]"}

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
    return [(start, content) for start, _, content in boxes(text)]


def boxes(text: str) -> list[tuple[int, int, str]]:
    r"""Every balanced box as ``(start, end, content)``, in order of ``start`` (``end`` is
    just past its closing brace); as :func:`boxed_spans`."""
    # One pass with a stack of open braces keeps this linear even for text full of
    # unclosed boxes.
    box_starts = {m.end() - 1: m for m in _BOX_OPEN.finditer(text)}
    if not box_starts:
        return []
    spans: list[tuple[int, int, str]] = []
    stack: list[int] = []
    for pos, char in enumerate(text):
        if char == "{":
            stack.append(pos)
        elif char == "}" and stack:
            opened = stack.pop()
            box = box_starts.get(opened)
            if box is not None:
                spans.append((box.start(), pos + 1, text[box.end() : pos]))
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


def anchored_answers(text: str, *, cut: bool = True) -> list[tuple[int, str]]:
    """What follows each anchored final-answer phrase, as ``(start, cleaned value)``.

    The value is the rest of the line after the phrase (or the next non-empty line when
    the phrase ends its line, as in ``**Answer:**`` followed by the answer below it), cut
    where prose follows it (:func:`cut_prose`) and passed through :func:`clean_answer`.
    Empty values are dropped. A value also ends where the next phrase starts (``Final
    Answer: The final answer is 12`` gives ``The final`` and ``12``; the later phrase is
    the one graders read), so the work stays linear however many phrases share a line.
    ``cut=False`` gives the earlier reading: the whole rest of the line, uncut.
    """
    found: list[tuple[int, str]] = []
    matches = list(_ANCHOR.finditer(text))
    for number, match in enumerate(matches):
        line_start = match.end()
        line = _line_at(text, line_start)
        if not line.strip():
            nonblank = _NONBLANK.search(text, match.end())
            line_start = nonblank.start() if nonblank else len(text)
            line = _line_at(text, line_start)
        if cut and number + 1 < len(matches):
            line = line[: max(matches[number + 1].start() - line_start, 0)]
        value = clean_answer(cut_prose(line) if cut else line)
        if value:
            found.append((match.start(), value))
    return found


def cut_prose(value: str) -> str:
    """``value`` up to where prose follows the answer (see the module docstring).

    Outside ``$...$``, ``\\(...\\)`` and brackets only, so ``$x = 5. $`` and ``(1, 2)``
    stay whole; a cut that would leave nothing is not made. Only the first
    :data:`CUT_SCAN_CHARS` characters are searched (no answer is longer), which keeps
    :func:`anchored_answers` linear however many phrases share one long line.
    """
    depth = 0
    in_math = False
    index = 0
    length = min(len(value), CUT_SCAN_CHARS)
    while index < length:
        char = value[index]
        if char == "\\" and index + 1 < length:
            if value[index + 1] in "([":
                depth += 1
            elif value[index + 1] in ")]":
                depth = max(depth - 1, 0)
            index += 2
            continue
        if char == "$":
            in_math = not in_math
        elif char in _OPENERS:
            depth += 1
        elif char in "})]":
            depth = max(depth - 1, 0)
        elif (
            not in_math
            and depth == 0
            and char in ".!?,; \t"
            and not (char in " \t" and index > 0 and value[index - 1] in " \t")
        ):
            prose = _PROSE_START.match(value, index)
            if prose is not None and value[:index].strip() and not _decimal_point(value, index):
                return value[:index]
        index += 1
    return value


def _decimal_point(value: str, index: int) -> bool:
    """Whether the ``.`` at ``index`` sits between digits (``3.5``)."""
    return (
        value[index] == "."
        and index + 1 < len(value)
        and value[index + 1].isdigit()
        and index > 0
        and value[index - 1].isdigit()
    )


def strip_reasoning(text: str) -> str:
    """The text after the last ``</think>``, or ``text`` when there is none."""
    end = text.rfind(_THINK_END)
    return text if end < 0 else text[end + len(_THINK_END) :]


def superseding_anchor(text: str, after: int) -> str | None:
    """The value of the last strong final-answer phrase (``Final answer: X``, a line
    ``Answer: X``) that starts at or after ``after``, or ``None``: a phrase written after
    a box supersedes it (the model revised its answer). A value that reads as prose (four
    or more words, no digit, no LaTeX: "the boxed value above") refers back to the box
    and does not count."""
    for start, value in reversed(anchored_answers(text[after:])):
        if _reads_as_prose(value):
            continue
        where = after + start
        if _FINAL_PHRASE.match(text, where) or (
            _ANSWER_COLON.match(text, where) and _line_start_anchor(text, where)
        ):
            return value
    return None


def _reads_as_prose(value: str) -> bool:
    return (
        len(value.split()) >= 4
        and not any(ch.isdigit() for ch in value)
        and not any(mark in value for mark in ("\\", "$", "^", "=", "/"))
    )


def _line_start_anchor(text: str, start: int) -> bool:
    """Whether the anchor phrase at ``start`` opens its line (after emphasis marks)."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start]
    return not before.strip(" \t>#*_")


def last_anchored(text: str) -> str | None:
    """The value after the last anchored final-answer phrase, or ``None``."""
    answers = anchored_answers(text)
    return answers[-1][1] if answers else None


def graded_answer(text: str) -> tuple[str, str] | None:
    r"""``(answer, rule)`` as the graders read it, in the text after any ``</think>``: the
    last ``\boxed{}`` (rule ``"boxed"``) unless a strong final-answer phrase follows it
    (:func:`superseding_anchor`, rule ``"anchored"``), else the last anchored phrase, cut
    where prose follows it (rule ``"anchored"``); ``None`` when neither is present."""
    text = strip_reasoning(text)
    found = boxes(text)
    if found:
        later = superseding_anchor(text, found[-1][1])
        if later is not None:
            return later, "anchored"
        return clean_answer(found[-1][2]), "boxed"
    anchored = last_anchored(text)
    if anchored is not None:
        return anchored, "anchored"
    return None


def final_answer(text: str) -> tuple[str, str] | None:
    r"""``(answer, rule)``: the last ``\boxed{}`` (rule ``"boxed"``), else the value after
    the last anchored phrase, uncut (rule ``"anchored"``); ``None`` when neither is present.

    The simulator's reading of a chat (:mod:`conductor_gym.sim.context`) is calibrated on
    this; graders use :func:`graded_answer`.
    """
    boxed = last_boxed(text)
    if boxed is not None:
        return clean_answer(boxed), "boxed"
    answers = anchored_answers(text, cut=False)
    if answers:
        return answers[-1][1], "anchored"
    return None
