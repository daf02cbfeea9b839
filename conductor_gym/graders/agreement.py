"""How often the graders agree with strong peers: ``python -m conductor_gym.graders.agreement``.

Runs the corpus of :mod:`conductor_gym.graders.peer_cases` through the registered graders
and prints four Markdown tables:

* per grader: cases, how many verdicts agree with the peer's, and how many raised (a
  grader error on a case is a disagreement);
* per peer convention: the same counts;
* MATH-style references x final-answer formats: how many of the references, each
  written in a format, the ``math`` grader finds correct;
* code layouts: whether :func:`~conductor_gym.graders.code.extract.extract_code` hands
  the tests the program BigCodeBench's sanitizer would (nothing is run).

``--cases`` also lists every disagreeing case. The README's grader section shows
:func:`readme_block`'s output (``docs/figures/grader_agreement.py`` registers it).
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from conductor_gym.graders.base import GraderError, grade
from conductor_gym.graders.code.extract import extract_code
from conductor_gym.graders.peer_cases import (
    CASES,
    CODE_CASES,
    MATH_FORMATS,
    MATH_REFERENCES,
    Case,
    CodeCase,
)

__all__ = [
    "Outcome",
    "code_outcomes",
    "format_table",
    "main",
    "math_format_counts",
    "readme_block",
    "run_cases",
]


@dataclass(frozen=True)
class Outcome:
    """One case's result: the grader's verdict (``None`` when it raised) and its reason."""

    case: Case
    correct: bool | None
    reason: str

    @property
    def agrees(self) -> bool:
        return self.correct is self.case.expect


def run_cases(cases: Iterable[Case] = CASES) -> list[Outcome]:
    """Grade every case; a grader error is recorded as a verdict of ``None``."""
    outcomes = []
    for case in cases:
        try:
            verdict = grade(case.grader, case.response, case.reference, **case.metadata)
        except GraderError as exc:
            outcomes.append(Outcome(case, None, f"raised: {exc}"))
        else:
            outcomes.append(Outcome(case, verdict.correct, verdict.reason))
    return outcomes


def _norm(code: str | None) -> str | None:
    return None if code is None else code.strip()


def code_outcomes(cases: Iterable[CodeCase] = CODE_CASES) -> list[tuple[CodeCase, bool]]:
    """``(case, whether the extracted program is the expected one)`` for each layout."""
    return [
        (case, _norm(extract_code(case.response, entry_point=case.entry_point)) == case.expect)
        for case in cases
    ]


def math_format_counts(
    references: Sequence[str] = MATH_REFERENCES,
) -> list[tuple[str, int, int]]:
    """``(format, references graded correct, references)`` for each format of
    :data:`~conductor_gym.graders.peer_cases.MATH_FORMATS`."""
    rows = []
    for name, template in MATH_FORMATS.items():
        right = 0
        for reference in references:
            response = template.format(answer=reference)
            with contextlib.suppress(GraderError):
                right += grade("math", response, reference).correct
        rows.append((name, right, len(references)))
    return rows


def _count(outcomes: Iterable[Outcome], key: str) -> dict[str, tuple[int, int, int]]:
    counts: dict[str, tuple[int, int, int]] = {}
    for outcome in outcomes:
        name = getattr(outcome.case, key)
        total, agree, raised = counts.get(name, (0, 0, 0))
        counts[name] = (total + 1, agree + outcome.agrees, raised + (outcome.correct is None))
    return counts


def format_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def _count_rows(counts: dict[str, tuple[int, int, int]]) -> list[list[str]]:
    return [
        [f"`{name}`", str(total), _share(agree, total), str(raised)]
        for name, (total, agree, raised) in counts.items()
    ]


def tables() -> dict[str, str]:
    """The four tables, by name (``graders``, ``peers``, ``formats``, ``code``)."""
    outcomes = run_cases()
    code = code_outcomes()
    by_grader = _count_rows(_count(outcomes, "grader"))
    code_right = sum(ok for _, ok in code)
    by_grader.append(["`code` (extraction)", str(len(code)), _share(code_right, len(code)), "0"])
    by_peer = _count(outcomes, "peer")
    total, agree, raised = by_peer.get("bigcodebench", (0, 0, 0))
    by_peer["bigcodebench"] = (total + len(code), agree + code_right, raised)
    head = ["cases", "agree with the peer", "raised"]
    return {
        "graders": format_table(["grader", *head], by_grader),
        "peers": format_table(["peer convention", *head], _count_rows(by_peer)),
        "formats": format_table(
            ["final-answer format", "`math` graded correct"],
            [[f"`{name}`", _share(right, n)] for name, right, n in math_format_counts()],
        ),
        "code": format_table(
            ["code layout", "graded program is the intended one"],
            [[case.layout, "yes" if ok else "no"] for case, ok in code],
        ),
    }


def readme_block() -> str:
    """The README's grader-agreement block: the per-grader and per-peer tables and the
    MATH-style format table."""
    t = tables()
    return "\n\n".join([t["graders"], t["peers"], t["formats"]])


def main(argv: Sequence[str] | None = None) -> int:
    """Print the agreement tables (``--cases``: also every disagreeing case)."""
    parser = argparse.ArgumentParser(prog="python -m conductor_gym.graders.agreement")
    parser.add_argument("--cases", action="store_true", help="list every disagreeing case")
    args = parser.parse_args(argv)
    for name, table in tables().items():
        print(f"## {name}\n\n{table}\n")
    if args.cases:
        for outcome in run_cases():
            if not outcome.agrees:
                case = outcome.case
                print(
                    f"- {case.grader} [{case.peer}] expect {case.expect}, got "
                    f"{outcome.correct}: {case.response!r} vs {case.reference!r}: {outcome.reason}"
                )
        for layout, ok in code_outcomes():
            if not ok:
                print(f"- code [{layout.layout}]: not the intended program")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
