r"""What a simulated worker did (:class:`ReplyMode`, a typed set) and the text it writes.

Every version's decision returns a :class:`ReplyMode` and a final answer (or none);
:func:`reply_text` writes the short real text that the task's grader then scores. The
relay lead (:data:`RELAY_LEAD`) opens a reply that only repeats an earlier answer, which
simulator v3.1 reads as unworked (:mod:`conductor_gym.sim.context`).
"""

from __future__ import annotations

from enum import StrEnum
from types import MappingProxyType

__all__ = ["RELAY_LEAD", "SHORT_MODES", "ReplyMode", "reply_text"]


class ReplyMode(StrEnum):
    """What a reply does (a ``str``: it compares equal to its value)."""

    NONE = "none"
    """No problem and no answer in view: the reply says the problem is missing."""
    REFUSE = "refuse"
    """The same, decided after reading (v2 and later)."""
    LITERAL = "literal"
    """The literal text the subtask asked for, nothing else."""
    UNRELATED = "unrelated"
    """An off-task reply with no final answer."""
    RELAY = "relay"
    """Repeats a shown answer."""
    VOTE = "vote"
    """The answer most shown answers give."""
    CHECK = "check"
    """Checked the shown answers against its own work."""
    REFINE = "refine"
    """Compared an earlier answer with its own work (v1)."""
    SOLVE = "solve"
    """Worked the problem."""


RELAY_LEAD = "Going by the earlier answer shown above."

_LEADS = MappingProxyType(
    {
        ReplyMode.SOLVE: "I worked through the problem step by step and checked the result.",
        ReplyMode.REFINE: "I compared the earlier answer with my own work on the problem.",
        ReplyMode.RELAY: RELAY_LEAD,
        ReplyMode.CHECK: "I checked the answers shown above against the problem.",
        ReplyMode.VOTE: "I compared the answers shown above and took the one most of them give.",
    }
)
_NO_QUESTION = (
    "I cannot answer this: the problem itself is not in my instructions or in the "
    "earlier messages, so I do not know what to solve."
)
_UNRELATED = (
    "Here is what you asked for instead; it does not address the problem, so it has "
    "no final answer."
)

SHORT_MODES = MappingProxyType({ReplyMode.RELAY: 0.25, ReplyMode.VOTE: 0.35})
"""Replies that restate rather than work: their share of a full reply's tokens."""


def reply_text(
    mode: ReplyMode, answer: str | None, grader: str, *, cut: bool = False
) -> tuple[str, int | None]:
    """The text of a reply in ``mode`` ending in ``answer``, and the most tokens it may
    take (``None``: no cap). ``cut``: the reply ran out of budget before its final answer.
    A mode outside :class:`ReplyMode` raises ``ValueError``."""
    mode = ReplyMode(mode)
    if mode in (ReplyMode.NONE, ReplyMode.REFUSE):
        return _NO_QUESTION, 60
    if mode is ReplyMode.LITERAL:
        return answer or "", 8
    if mode is ReplyMode.UNRELATED:
        return _UNRELATED, 120
    lead = _LEADS[mode]
    if cut:
        return lead + " ...", None
    if answer is None:
        return lead + " I could not reach a confident final answer.", None
    if grader == "code":
        fenced = answer if answer.lstrip().startswith("```") else f"```python\n{answer}\n```"
        return f"{lead}\n\n{fenced}", None
    return f"{lead}\n\nFinal answer: \\boxed{{{answer}}}", None
