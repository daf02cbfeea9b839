"""Arithmetic written in words, as symbols: "Multiply 6 by 7" reads as ``6 * 7``.

:func:`spell_operations` rewrites the common verbal forms of one operation on two numbers
(after number words became digits, :func:`~conductor_gym.sim.perception.numbers.normalise`):

=============================================  ==========
form                                           becomes
=============================================  ==========
multiply A by B, A times B, product of A and B  ``A * B``
add A and B / A to B, A plus B, sum of A and B  ``A + B``
subtract B from A, A minus B, difference ...    ``A - B``
divide A by B, A divided by B, quotient of ...  ``A / B``
=============================================  ==========

so the arithmetic parser poses them as problems. Simulator v3.1 reads its messages
through it (earlier versions do not, so their recorded results re-play unchanged).
"""

from __future__ import annotations

import re
from functools import lru_cache

from conductor_gym.sim.perception.numbers import normalise

__all__ = ["spell_operations"]

_N = r"(-?\d+(?:\.\d+)?)"
_I = re.IGNORECASE
_FORMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"\bmultiply\s+{_N}\s+(?:by|and|with)\s+{_N}", _I), r"(\1 * \2)"),
    (re.compile(rf"\bproduct\s+of\s+{_N}\s+and\s+{_N}", _I), r"(\1 * \2)"),
    (re.compile(rf"{_N}\s+(?:times|multiplied\s+by)\s+{_N}", _I), r"(\1 * \2)"),
    (re.compile(rf"\badd\s+{_N}\s+(?:and|to)\s+{_N}", _I), r"(\1 + \2)"),
    (re.compile(rf"\bsum\s+of\s+{_N}\s+and\s+{_N}", _I), r"(\1 + \2)"),
    (re.compile(rf"{_N}\s+plus\s+{_N}", _I), r"(\1 + \2)"),
    (re.compile(rf"\bsubtract\s+{_N}\s+from\s+{_N}", _I), r"(\2 - \1)"),
    (re.compile(rf"\bdifference\s+(?:of|between)\s+{_N}\s+and\s+{_N}", _I), r"(\1 - \2)"),
    (re.compile(rf"{_N}\s+minus\s+{_N}", _I), r"(\1 - \2)"),
    (re.compile(rf"\bdivide\s+{_N}\s+by\s+{_N}", _I), r"(\1 / \2)"),
    (re.compile(rf"\bquotient\s+of\s+{_N}\s+(?:and|by)\s+{_N}", _I), r"(\1 / \2)"),
    (re.compile(rf"{_N}\s+divided\s+by\s+{_N}", _I), r"(\1 / \2)"),
)
# Where some form may match: an operation word next to a number (one search, so text
# without verbal arithmetic costs one regex scan).
_GATE = re.compile(
    r"\d\s+(?:times|plus|minus|multiplied|divided)\s|"
    r"\b(?:multiply|product|add|sum|subtract|difference|divide|quotient)\s+"
    r"(?:of\s+|between\s+)?-?\d",
    _I,
)


@lru_cache(maxsize=1 << 14)
def spell_operations(text: str) -> str:
    """``text`` with each verbal operation on two numbers written with its symbol
    (module docstring); text with none is returned as it is."""
    normal = normalise(text)
    if _GATE.search(normal) is None:
        return text
    text = normal
    for pattern, symbol in _FORMS:
        text = pattern.sub(symbol, text)
    return text
