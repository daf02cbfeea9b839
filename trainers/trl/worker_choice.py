"""Which of its drawn workers a conductor asks: the adaptation table of a randomised pool.

When every episode draws ``k`` of ``n`` workers under shuffled ids, a ``Model i`` names a
different worker each time, so a policy that asks the same ids every time asks each drawn
worker equally often. A policy that reads its pool asks a worker at a rate that depends
on who the worker is (and on the task's family). :func:`choice_rates` counts, per family
and worker, the episodes that drew the worker, those whose plan asked it in any step and
those whose plan gave it the last step (the one whose answer is graded);
:func:`choice_table` writes them as a markdown table. Invalid plans count as drawing
without asking.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from conductor_gym.plan import Plan

__all__ = ["ALL", "ChoiceCount", "ChoiceRow", "choice_rates", "choice_table"]

ALL = "all"
"""The family name of the counts over every family."""

ChoiceRow = tuple[str, Sequence[str], Plan | None]
"""``(family, pool, plan)``: the task's family, the episode's workers in ``Model`` order
(``pool[i]`` is ``Model i``) and the parsed plan (``None``: invalid)."""


@dataclass
class ChoiceCount:
    """Episodes that drew a worker, asked it in some step, and gave it the last step."""

    drawn: int = 0
    asked: int = 0
    last: int = 0


def choice_rates(rows: Sequence[ChoiceRow]) -> dict[str, dict[str, ChoiceCount]]:
    """``{family: {worker: ChoiceCount}}`` for each family (sorted), then :data:`ALL`.

    Raises:
        ValueError: A plan asks a ``Model i`` its episode's pool does not list.
    """
    rates: dict[str, dict[str, ChoiceCount]] = {}
    for family, pool, plan in sorted(rows, key=lambda row: row[0]):
        asked = set() if plan is None else set(plan.model_ids)
        if asked and max(asked) >= len(pool):
            raise ValueError(f"a plan asks Model {max(asked)} of a pool of {len(pool)}")
        last = None if plan is None or not plan.model_ids else plan.model_ids[-1]
        for group in (family, ALL):
            counts = rates.setdefault(group, {})
            for i, name in enumerate(pool):
                count = counts.setdefault(name, ChoiceCount())
                count.drawn += 1
                count.asked += i in asked
                count.last += i == last
    if ALL in rates:
        rates[ALL] = rates.pop(ALL)  # last
    return rates


def choice_table(rates: dict[str, dict[str, ChoiceCount]]) -> str:
    """The counts as a markdown table: a row per worker (most asked first over every
    family), a column per family, each cell ``asked % / last step %`` of the episodes
    that drew the worker (``-`` where none did)."""
    families = list(rates)
    overall = rates.get(ALL, {})
    workers = sorted(overall, key=lambda w: (-overall[w].asked / overall[w].drawn, w))
    header = ["worker (asked % / last step % when drawn)", *families]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * len(header)) + "|"]
    for worker in workers:
        cells = [worker]
        for family in families:
            count = rates[family].get(worker)
            if count is None or not count.drawn:
                cells.append("-")
            else:
                asked, last = 100 * count.asked / count.drawn, 100 * count.last / count.drawn
                cells.append(f"{asked:.0f} / {last:.0f} (n={count.drawn})")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
