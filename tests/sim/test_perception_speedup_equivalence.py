"""The perception speed-up changed no output (simulator v3, item 7).

``tests/fixtures/perception_outputs.json`` holds what :func:`find_problems` returned, before
the speed-up, for the 3,500 offline and offline-ood questions, 1 KB contexts made of them
and 3,000 seeded fuzzed texts (``tests/fixtures/make_perception_outputs.py``): every
problem's type and fields, the stated results and the rest. Each text is read again here,
with fresh caches, and must give exactly that. The scans the speed-up rewrote (a pattern
written anew, a pattern tried only where a match may start, the number words) are also
held to the old ones directly, on every short text or many fuzzed ones.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import random
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from conductor_gym.sim.perception import find_problems, normalise, numbers
from conductor_gym.sim.perception.arithmetic import _RUN
from conductor_gym.sim.perception.base import finditer_at, word_starts
from conductor_gym.sim.perception.choice import (
    _FIRST_OPTION,
    _KINDS,
    _OPTION,
    _option_lines,
    _starts,
)
from conductor_gym.sim.perception.countdown import (
    _LIST,
    _LIST_WORDS,
    _MAX_VALUES,
    _TARGET,
    _TARGET_WORDS,
    _values,
)
from conductor_gym.sim.perception.modular import _X, _x_after_operand

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FIXTURE = FIXTURES / "perception_outputs.json"
# the fixture's generator, loaded by path ("fixtures" is also a PyPI package name)
_spec = importlib.util.spec_from_file_location(
    "make_perception_outputs", FIXTURES / "make_perception_outputs.py"
)
assert _spec is not None and _spec.loader is not None
_maker = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_maker)
corpus, digest, record = _maker.corpus, _maker.digest, _maker.record


@pytest.fixture(scope="module")
def expected() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(FIXTURE.read_text())
    return data


@pytest.fixture(scope="module")
def texts(expected: dict[str, Any]) -> list[str]:
    out: list[str] = corpus()
    assert len(out) == expected["corpus_size"] and digest(out) == expected["corpus_digest"]
    return out


def test_every_text_is_read_as_before(expected: dict[str, Any], texts: list[str]) -> None:
    find_problems.cache_clear()
    normalise.cache_clear()
    changed = []
    for i, text in enumerate(texts):
        got = record(find_problems(text))
        full = expected["full"].get(str(i))
        if full is not None:
            assert got == full, f"text {i}: {text!r}"
        if digest(got) != expected["digests"][i]:
            changed.append(i)
    assert not changed, f"{len(changed)} texts read differently, first: {texts[changed[0]]!r}"


def test_a_text_read_twice_is_read_the_same(texts: list[str]) -> None:
    # Caches (by text, by problem) must not leak one text's work into another's result.
    for text in texts[::50]:
        first = record(find_problems(text))
        find_problems.cache_clear()
        assert record(find_problems(text)) == first


# -- the rewritten scans, against the scans they replace, on every short text -------------

# The arithmetic run pattern as it was written before (see arithmetic._RUN).
OLD_RUN = re.compile(r"(?<![-(])[-(]*+\d[\d \t+\-*/()]*")


def _spans(matches: Iterable[re.Match[str]]) -> list[tuple[int, int]]:
    return [m.span() for m in matches]


def test_the_arithmetic_run_pattern_matches_as_before_on_every_short_text() -> None:
    alphabet = "1-( +)*/a\n\u0663"  # with an Arabic-Indic digit, also a \d
    for size in range(6):
        for letters in itertools.product(alphabet, repeat=size):
            text = "".join(letters)
            assert _spans(_RUN.finditer(text)) == _spans(OLD_RUN.finditer(text)), text


def _fuzz(rng: random.Random, pieces: list[str], count: int) -> list[str]:
    return ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 12))) for _ in range(count)]


def test_trying_only_the_word_starts_finds_what_a_scan_finds() -> None:
    # Choice stems (each kind, "N mod D" included) and countdown lists and targets.
    rng = random.Random(7)
    pieces = [
        "mod", "MOD ", " modulo ", "remainder of ", "Remainder when ", " is divided by ", "12",
        "7", " ", "\t", "\x1c", "\n", "x", "_", "least common multiple of ", "LCM ", "gcd(",
        "highest common factor ", "greatest ", "sum of the divisors of ", "how many divisors "
        "does ", "number of positive divisors of ", "coprime to ", "relatively prime with ",
        "totient ", "primes", ", ", " and ", "&", "numbers ", "using", "from ", "with: ",
        "equals ", "equal to", "makes", "reaches ", "target number is ", "get", "obtain ",
        "totals ", "results in ", "=", ":",
    ]  # fmt: skip
    for text in _fuzz(rng, pieces, 4000):
        lowered = text.lower()
        for kind, _, pattern, _ in _KINDS:
            got = _spans(finditer_at(pattern, text, _starts(kind, text, lowered)))
            assert got == _spans(pattern.finditer(text)), (kind, text)
        for pattern, words in ((_LIST, _LIST_WORDS), (_TARGET, _TARGET_WORDS)):
            starts = word_starts(lowered, words)
            for pos, endpos in ((0, len(text)), (3, len(text) - 2), (5, 9)):
                got = _spans(finditer_at(pattern, text, starts, pos, endpos))
                assert got == _spans(pattern.finditer(text, pos, endpos)), (pattern, text)


def test_option_lines_are_found_only_where_they_may_start() -> None:
    rng = random.Random(5)
    pieces = ["A) ", "(B. ", " C: ", "\tD) x", "E.", "F:", "G) ", "(", "x", " ", "\n", "\n\n", "7"]
    for text in _fuzz(rng, pieces, 4000):
        lines = _option_lines(text)
        got = _spans(finditer_at(_OPTION, text, lines))
        assert got == _spans(_OPTION.finditer(text)), text
        posed = any(_FIRST_OPTION.match(text, at) for at in lines)
        assert posed == (_FIRST_OPTION.search(text) is not None), text


def test_the_modular_look_before_the_pattern_lets_every_match_through() -> None:
    rng = random.Random(3)
    pieces = ["x", "3", "\u0663", " ", "\u2009", "*", "a", "^", "\n", "7x", "2 x", "5 * x", "y"]
    for text in _fuzz(rng, pieces, 4000):
        assert _x_after_operand(text) or _X.search(text) is None, text


def _old_normalise(text: str) -> str:
    """:func:`normalise` as it was written before the speed-up."""
    text = text.translate(numbers._SYMBOLS)
    if not numbers._NUMBER_WORDS.isdisjoint(numbers._LETTERS.findall(text.lower())):
        text = numbers._WORD_NUMBER.sub(numbers._word_value, text)
    if "," in text or "_" in text or "\u2009" in text or "\u202f" in text or "\u00a0" in text:
        text = numbers._SEPARATED.sub(numbers._unseparate, text)
    return text


def test_normalise_writes_numbers_as_before() -> None:
    rng = random.Random(11)
    pieces = [
        "one", "One", "ONE", "a", "A", " ", "-", "hundred", "Hundred", "twenty", "Ninety",
        "nine", "seven", "teen", "ten", "s", "x", "1", "12", "123", "1,234", ",", "_", "000",
        ".", "\u2009", "\u202f", "\u00a0", "\u2212", "\u00d7", "\u017f", "\u212a", "\u0130",
        "\n", "zero", "once", "someone", "2", "ty",
    ]  # fmt: skip
    for text in _fuzz(rng, pieces, 20000):
        assert numbers.normalise.__wrapped__(text) == _old_normalise(text), text


def _old_values(numbers: tuple[int, ...]) -> list[dict[int, str]]:
    """The countdown search as it was written before the speed-up."""

    def combine(a: int, ea: str, b: int, eb: str) -> list[tuple[int, str]]:
        out = [(a + b, f"{ea} + {eb}"), (a * b, f"({ea}) * ({eb})")]
        if a > b:
            out.append((a - b, f"{ea} - ({eb})"))
        elif b > a:
            out.append((b - a, f"{eb} - ({ea})"))
        if b > 1 and a % b == 0:
            out.append((a // b, f"({ea}) / ({eb})"))
        if a > 1 and b % a == 0:
            out.append((b // a, f"({eb}) / ({ea})"))
        return out

    table: list[dict[int, str]] = [{} for _ in range(1 << len(numbers))]
    for i, x in enumerate(numbers):
        table[1 << i][x] = str(x)
    for mask in range(1, 1 << len(numbers)):
        if mask & (mask - 1) == 0:
            continue
        sub = (mask - 1) & mask
        while sub:
            other = mask ^ sub
            if sub < other:
                for a, ea in table[sub].items():
                    for b, eb in table[other].items():
                        for v, text in combine(a, ea, b, eb):
                            if v not in table[mask] and len(table[mask]) < _MAX_VALUES:
                                table[mask][v] = text
            sub = (sub - 1) & mask
    return table


@pytest.mark.parametrize(
    "numbers", [(1, 1), (0, 3, 3), (2, 4, 8, 64), (1, 2, 3, 4, 5), (7, 13, 25, 50, 75, 100)]
)
def test_the_countdown_search_finds_what_it_found_before(numbers: tuple[int, ...]) -> None:
    # The last one fills masks up to the bound (the search stops adding there).
    old = _old_values(numbers)
    assert [list(d.items()) for d in _values.__wrapped__(numbers)] == [list(d.items()) for d in old]
    assert len(old[-1]) == _MAX_VALUES or len(numbers) < 6
