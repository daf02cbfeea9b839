"""Pool names that cannot pass for a preset's: look-alikes and near names are refused.

A pool file names its pool, and that name labels its results (reports, the board's
sections). A file written by someone else could name itself ``sim-paper`` with a Cyrillic i
(U+0456), or with full-width letters (U+FF53 ...), or ``sim-paper-2026`` and be read as the
shipped preset. :func:`preset_lookalike` says which preset a name imitates, and
:func:`check_pool_name` refuses it with one line naming the field and the preset.

The rule, on the name's *skeleton*: Unicode NFKC (full-width and compatibility forms
become their plain letters), case-folded, combining marks dropped, the Cyrillic and
Greek letters that look Latin made Latin, and separators (``-``, ``_``, ``.``, spaces,
Unicode dashes) removed. A name imitates a preset when its skeleton contains the
preset's: ``SIM_PAPER``, full-width or Cyrillic letters, ``sim-paper-2026``,
``official-sim-paper``. A character outside ASCII that is still left (a homoglyph from
another script) matches any letter, as long as most of the compared letters are plain
ASCII (so a name written wholly in another script is its own); digits that pass for
letters (``s1m-paper``, ``5im-paper``) match them.

A preset's exact name is not refused here (a copy of a preset's file loads as before;
telling an edited copy from the preset is left to what records the pool's workers).
Presets loaded by name are never checked.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

__all__ = ["check_pool_name", "preset_lookalike", "skeleton"]

_SEPARATORS = re.compile(r"[\s\-_.\u2010-\u2015\u2212\ufe58\ufe63\uff0d\u30fc]+")


# Latin look-alikes in other scripts (after case folding): mapped before comparing.
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁһӏԛԝɡıαοριτυνκεзвтмнкьɩⅼ",
    "aeopcyxijsdhlqwgiaopituvke3btmhkbil",
)


def skeleton(name: str) -> str:
    """``name`` in NFKC, case-folded, without combining marks, look-alike letters of
    other scripts made Latin, separators one ``-``."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    decomposed = unicodedata.normalize("NFD", folded)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    latin = unicodedata.normalize("NFC", bare).translate(_CONFUSABLES)
    return _SEPARATORS.sub("-", latin).strip("-")


def preset_lookalike(name: str, presets: Iterable[str]) -> str | None:
    """The preset of ``presets`` that ``name`` imitates (module docstring), or ``None``
    (for a preset's exact name too)."""
    presets = list(presets)
    if name in presets:
        return None
    compact = skeleton(name).replace("-", "")
    for preset in sorted(presets, key=len, reverse=True):
        if _contains(compact, skeleton(preset).replace("-", "")):
            return preset
    return None


# ASCII characters that pass for letters ("s1m-paper", "5im-paper").
_ASCII_LOOKALIKES = {"0": "o", "1": "il", "3": "e", "4": "a", "5": "s", "7": "t", "|": "il"}


def _contains(text: str, target: str) -> bool:
    """Whether a window of ``text`` as long as ``target`` matches it: each character
    equal, or an ASCII look-alike of the letter, or outside ASCII (any one letter), with
    most of the window plain ASCII."""
    width = len(target)
    for start in range(len(text) - width + 1):
        window = text[start : start + width]
        foreign = sum(not c.isascii() for c in window)
        if 2 * foreign < width and all(
            c == t or not c.isascii() or t in _ASCII_LOOKALIKES.get(c, "")
            for c, t in zip(window, target, strict=True)
        ):
            return True
    return False


def check_pool_name(name: str, presets: Iterable[str], *, where: str) -> str | None:
    """The problem line for pool name ``name`` at ``where`` (``"pool.toml: name"``), or
    ``None`` when it imitates no preset of ``presets``."""
    preset = preset_lookalike(name, presets)
    if preset is None:
        return None
    how = "looks like" if skeleton(name) == skeleton(preset) else "could pass for"
    return (
        f"{where}: {name!r} {how} the preset {preset!r} (compared in Unicode NFKC, "
        "ignoring case, separators and look-alike characters); a pool file that is not "
        "that preset must have a name of its own"
    )
