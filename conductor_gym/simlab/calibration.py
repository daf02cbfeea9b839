"""The simulated pool's calibration table: single workers, the paper's fixed workflows and
the reference plans, each played once on **every task** of a suite through
:func:`~conductor_gym.bench.evaluate.evaluate` (never a draw with replacement), accuracy
averaged over families as the paper averages benchmarks.

``python -m conductor_gym.simlab.calibration [--pool POOL]`` prints the README's table;
``tests/simlab/test_calibration.py`` checks that the README holds exactly what it prints for
the default pool. :func:`play` is memoised per process, so the tests that hold the
simulator to the paper share its episodes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.core.env import ConductorEnv

__all__ = ["SUITES", "Row", "by_domain", "calibration_rows", "format_table", "play", "score"]

SUITES = ("offline", "offline-ood")
"""The suites of the table: in-domain and out-of-domain families."""

Outcomes = tuple[tuple[str, bool], ...]


@cache
def play(pool: str, tasks: str, agent: str) -> Outcomes:
    """``(family, correct)`` for every task of the suite ``tasks``, once each, played by
    the agent ``agent`` (a spec: ``single:0``, ``reflect:2:5``, ``reference:routed_check``)
    on ``pool``, unshuffled: :func:`~conductor_gym.bench.evaluate.evaluate` with one repeat,
    so ``conductor-gym evaluate --agent AGENT --suite TASKS --pool POOL --repeats 1
    --no-shuffle-workers`` plays the same episodes."""
    results = evaluate(agent, tasks, pool=pool, repeats=1, shuffle_workers=False, progress=False)
    return tuple((e.domain, e.correct) for e in results.episodes)


def by_domain(results: Outcomes) -> dict[str, float]:
    """Accuracy (%) per family."""
    groups: dict[str, list[bool]] = {}
    for domain, ok in results:
        groups.setdefault(domain, []).append(ok)
    return {d: 100 * sum(v) / len(v) for d, v in groups.items()}


def score(results: Outcomes) -> float:
    """Mean over families of the accuracy (%)."""
    return statistics.mean(by_domain(results).values())


@dataclass(frozen=True)
class Row:
    """One table row: the planner, its ``offline`` and ``offline-ood`` cells, its calls."""

    planner: str
    offline: str
    ood: str
    calls: str

    def markdown(self) -> str:
        return f"| {self.planner} | {self.offline} | {self.ood} | {self.calls} |"


def _workers(pool: str) -> tuple[str, ...]:
    env = ConductorEnv(pool=pool, shuffle_workers=False)
    _, info = env.reset(seed=0)
    return tuple(info["pool"])


def calibration_rows(pool: str = "sim-paper") -> list[Row]:
    """The table's rows for ``pool`` (a pool of the paper's seven workers)."""
    names = _workers(pool)
    gpt5 = names.index("gpt-5")
    singles = {
        s: [by_domain(play(pool, s, f"single:{w}")) for w in range(len(names))] for s in SUITES
    }
    means = {s: [statistics.mean(d.values()) for d in singles[s]] for s in SUITES}
    best = max(range(len(names)), key=lambda w: means["offline"][w])
    oracle = {
        s: statistics.mean(max(d[f] for d in singles[s]) for f in singles[s][0]) for s in SUITES
    }

    def both(agent: str) -> tuple[str, str]:
        return tuple(f"{score(play(pool, s, agent)):.1f}" for s in SUITES)  # type: ignore[return-value]

    reflect = score(play(pool, "offline", f"reflect:{gpt5}:5"))
    consensus = score(play(pool, "offline", f"consensus:{gpt5}:5"))
    moa = score(play(pool, "offline", "moa"))
    check, routed = both("reference:solve_then_check"), both("reference:routed_check")
    return [
        Row(
            f"best single worker ({names[best]}, simulated)",
            f"{means['offline'][best]:.1f}",
            f"{means['offline-ood'][best]:.1f}",
            "1",
        ),
        Row(
            "best worker per family (an oracle router)",
            f"{oracle['offline']:.1f}",
            f"{oracle['offline-ood']:.1f}",
            "1",
        ),
        Row(
            "GPT-5 alone / 5 rounds of self-reflection / 5x consensus",
            f"{means['offline'][gpt5]:.1f} / {reflect:.1f} / {consensus:.1f}",
            "",
            "1 / 5 / 6",
        ),
        Row(f"Mixture-of-Agents: all 7 answer, {names[0]} aggregates", f"{moa:.1f}", "", "8"),
        Row(
            "reference plan: Gemini, GPT-5, Claude solve; one checks "
            "(`reference:solve_then_check`)",
            *check,
            "4",
        ),
        Row("the same, GPT-5 checking programs (`reference:routed_check`)", *routed, "4"),
    ]


def format_table(rows: Sequence[Row]) -> str:
    """The rows as the README's Markdown table."""
    head = ["| planner | `offline` | `offline-ood` | calls |", "|---|---|---|---|"]
    return "\n".join([*head, *(r.markdown() for r in rows)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conductor_gym.simlab.calibration",
        description="Print the calibration table of a simulated pool of the paper's workers "
        "(every task of offline and offline-ood played once per planner).",
    )
    parser.add_argument("--pool", default="sim-paper", help="a simulated pool (default sim-paper)")
    args = parser.parse_args(argv)
    print(format_table(calibration_rows(args.pool)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
