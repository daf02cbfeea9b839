r"""Grader ``"choice"``: the response picks the reference option letter.

Contract: ``reference`` is one upper-case letter; ``metadata["num_choices"]`` (default 4)
makes ``A`` .. the ``num_choices``-th letter the valid options, and a reference outside
them raises :class:`~conductor_gym.graders.base.GraderError`.

The response is read after any R1-style ``</think>``, with LaTeX text wrappers and math
delimiters around a letter removed first (``Answer: $C$``, ``\textbf{(C)}``,
``$\text{C}$``), as simple-evals normalises its extracted answer. Candidates, in three
tiers (after lighteval's and simple-evals' answer patterns, which look for the answer
phrase first):

* *anchored*: ``\boxed{B}`` (also ``\boxed{(B)}``, ``\boxed{\text{B}}``, ``\boxed{B) 17}``);
  an anchored phrase (``Answer: B``, ``Answer - B``, ``**Answer:** B``, ``The answer is
  (B)``, ``The answer is surely D``, ``The final answer is option B``, ``the correct
  option is (C)``); a line that is only the letter (``(B)``, ``B.``, ``**B**``) when it
  is the response's last line;
* *stated*: a verdict on an option (``option C is correct``, ``C is the correct
  answer``); a choice (``I choose C``, ``I'll go with C``, ``I think it's B``);
* *weak*: a letter-only line elsewhere, a letter opening the response (``D. It cannot be
  A or B``, lighteval's minimal format), or a bracketed ``(B)`` that ends the response.

The answer is the last candidate (by position) of the first tier that has one: a letter
mentioned after an explicit answer (``Answer: C. Many confuse it with (A)``, ``Answer:
B. Option C is correct only when...``) does not replace it. Only an upper-case letter
counts, except inside a box. A bare letter after an anchor must stand alone: it may be
followed by punctuation, the end of the line, or a connective such as "because" or "is",
but not by an ordinary word, so the article in "Answer: A good approach is..." is not
read as option A. Letters outside the valid options are ignored. Prose that names no
option gives ``correct=False, extracted=None``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from conductor_gym.graders.base import Grade, GraderError, register_grader
from conductor_gym.graders.extract import boxed_spans, clean_answer, strip_reasoning

__all__ = ["extract_choice", "grade_choice", "option_letters"]

_ANCHOR = re.compile(
    r"(?i:\b(?:final\s+answer|answer|(?:correct|best|right)\s+(?:answer|option|choice)))"
    r"\s*(?:\*\*|__)?\s*(?:(?i:is)\b\s*:?|:|=|[-\u2013\u2014](?=\s))\s*(?:\*\*|__)?\s*"
    r"(?:(?i:surely|definitely|clearly|certainly|probably|likely|for\s+sure)\s+)?"
    r"(?:(?i:option|choice)\s+)?(?:\*\*)?"
    r"(?P<open>[(\[])?(?P<letter>[A-Z])(?P<close>[)\]])?(?:\*\*)?(?![\w'])"
)
# A verdict on an option ("option C is correct", "C is the correct answer": the phrase is
# found first, then the letter just before it) or a choice ("I choose C", "I'll go with C").
_VERDICT = re.compile(r"\b(?i:is\s+(?:the\s+)?(?:correct|right|best))\b")
_VERDICT_LETTER = re.compile(r"(?<![\w'])[(\[]?([A-Z])[)\]]?\s+\Z")
_CHOICE_MADE = re.compile(
    r"\b(?:I|I'll|I\s+will|I\s+would|[Ww]e)\s+(?i:choose|pick|select|go\s+with)\s+"
    r"(?:(?i:option|choice)\s+)?[(\[]?(?P<letter>[A-Z])\b[)\]]?"
    r"|\bI\s+(?i:think|believe|guess)\s+(?i:it's|it\s+is|it\u2019s)\s+"
    r"[(\[]?(?P<belief>[A-Z])(?![\w'])[)\]]?"
)
# A letter opening the response ("D. It cannot be A or B"): lighteval's minimal format.
_OPENING = re.compile(r"\A\s*(?:\*\*)?[(\[]?(?P<letter>[A-Z])[)\].:](?:\*\*)?(?:\s|\Z)")
# Cheap substring tests that let most responses skip the two patterns above.
_VERDICT_WORDS = ("correct", "right", "best")
_CHOICE_WORDS = ("choose", "pick", "select", "go with", "think", "believe", "guess")


def _has_any(lowered: str, words: tuple[str, ...]) -> bool:
    return any(word in lowered for word in words)


_WRAPPED_LETTER = re.compile(
    r"\\(?:textbf|text|mathbf|mathrm|textit|emph)\s*\{\s*(\(?[A-Z]\)?)\s*\}"
)
_DOLLAR_LETTER = re.compile(r"\$\s*(\(?[A-Z]\)?)\s*\$")
_LINE = re.compile(
    r"^[ \t>]*(?:\*\*)?[ \t]*[(\[]?(?P<letter>[A-Z])[)\]]?\.?[ \t]*(?:\*\*)?[ \t]*$",
    re.MULTILINE,
)
_TRAILING = re.compile(r"[(\[](?P<letter>[A-Z])[)\]][\s.!*]*\Z")
_BOXED_LETTER = re.compile(r"(?:option\s+|choice\s+)?[(\[]?([A-Za-z])[)\]]?(?:[.:)]|\s|\Z)", re.I)
# Words that may follow a bare answer letter ("Answer: B because ..."); any other word
# after it means the letter was an article or a pronoun, as in "Answer: A good approach".
_CONNECTIVES = frozenset(
    {"because", "since", "as", "is", "was", "which", "with", "and", "so", "for", "from"}
)
_FOLLOW_WORD = re.compile(r"[ \t]+(?P<word>[a-z]+)")


def option_letters(num_choices: int) -> str:
    """The valid option letters for ``num_choices`` options (``4 -> "ABCD"``)."""
    return "".join(chr(ord("A") + i) for i in range(num_choices))


def _stands_alone(text: str, end: int) -> bool:
    """Whether the bare letter ending at ``end`` is an answer and not the start of prose."""
    follow = _FOLLOW_WORD.match(text, end)
    return follow is None or follow["word"] in _CONNECTIVES


# When candidates share a position (an anchored "(C)" that also ends the response), the
# more explicit rule names it.
_RULE_RANK = {"standalone": 0, "anchored": 1, "verdict": 2, "boxed": 3}


def _unwrap_letters(response: str) -> str:
    r"""``\textbf{(C)}``, ``$\text{C}$``, ``$C$`` -> ``(C)``, ``C``, ``C``."""
    if "\\" in response:
        previous = None
        while previous != response:
            previous = response
            response = _WRAPPED_LETTER.sub(r"\1", response)
    return _DOLLAR_LETTER.sub(r"\1", response) if "$" in response else response


def _candidates(response: str) -> list[tuple[int, str, str, bool]]:
    """Every ``(position, letter, rule, explicit)`` answer candidate, in reading order."""
    found: list[tuple[int, str, str, bool]] = []
    for start, content in boxed_spans(response):
        inner = clean_answer(content)
        match = _BOXED_LETTER.match(inner)
        if match is not None:
            found.append((start, match[1].upper(), "boxed", True))
    for match in _ANCHOR.finditer(response):
        bracketed = match["open"] is not None or match["close"] is not None
        if bracketed or _stands_alone(response, match.end()):
            found.append((match.start("letter"), match["letter"], "anchored", True))
    lowered = response.lower()
    verdicts = _VERDICT.finditer(response) if _has_any(lowered, _VERDICT_WORDS) else ()
    choices = _CHOICE_MADE.finditer(response) if _has_any(lowered, _CHOICE_WORDS) else ()
    for match in verdicts:
        window = max(match.start() - 12, 0)
        letter = _VERDICT_LETTER.search(response, window, match.start())
        if letter is not None:
            found.append((letter.start(1), letter[1], "verdict", True))
    for match in choices:
        group = "letter" if match["letter"] is not None else "belief"
        if group == "letter" or _stands_alone(response, match.end()):
            found.append((match.start(group), match[group], "verdict", True))
    opening = _OPENING.match(response)
    if opening is not None:
        found.append((opening.start("letter"), opening["letter"], "standalone", False))
    last_line = response.rstrip().rfind("\n") + 1
    for match in _LINE.finditer(response):
        found.append(
            (match.start("letter"), match["letter"], "standalone", match.start() >= last_line)
        )
    trailing = _TRAILING.search(response)
    if trailing is not None:
        found.append((trailing.start("letter"), trailing["letter"], "standalone", False))
    found.sort(key=lambda item: (item[0], _RULE_RANK[item[2]]))
    return found


def extract_choice(response: str, num_choices: int = 4) -> tuple[str, str] | None:
    """``(letter, rule)`` for the response's answer letter (the last valid candidate of
    the first tier that has one, see the module docstring), or ``None``."""
    valid = option_letters(num_choices)
    candidates = [
        c for c in _candidates(_unwrap_letters(strip_reasoning(response))) if c[1] in valid
    ]
    anchored = [c for c in candidates if c[3] and c[2] != "verdict"]
    stated = [c for c in candidates if c[2] == "verdict"]
    chosen = (anchored or stated or candidates)[-1:]
    if not chosen:
        return None
    return chosen[0][1], chosen[0][2]


@register_grader("choice")
def grade_choice(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    """Grade ``response`` as correct when its chosen option letter equals ``reference``."""
    num_choices = int(metadata.get("num_choices", 4))
    if not 1 <= num_choices <= 26:
        raise GraderError(f"choice: num_choices must be in 1..26, got {num_choices}")
    valid = option_letters(num_choices)
    expected = reference.strip().upper()
    if len(expected) != 1 or expected not in valid:
        raise GraderError(f"choice: the reference {reference!r} is not one of {valid}")
    found = extract_choice(response, num_choices)
    if found is None:
        return Grade(False, None, f"no option letter ({valid[0]}-{valid[-1]}) found")
    letter, rule = found
    if letter == expected:
        return Grade(True, letter, f"{rule}: option {letter} is the reference")
    return Grade(False, letter, f"{rule}: option {letter}, but the reference is {expected}")
