"""The simulator issue's examples (issue 40), re-measured on any simulated pool.

``python -m conductor_gym.simlab.audit_examples [POOL ...] [--episodes N]`` plays each
example of the issue on paired seeds (every plan on the same seeds as its reference) and
prints its accuracy, its reference's and the paired difference with its SE, so the
closing note's before (``sim-paper-v3``) / after (``sim-paper``) table is re-checkable.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import math
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from conductor_gym.core.env import ConductorEnv
from conductor_gym.core.reward import Outcome
from conductor_gym.graders.extract import final_answer
from conductor_gym.plan import Plan
from conductor_gym.sim.perception import find_problems
from conductor_gym.simlab.audit_plans import FAITHFUL, right_answer, stem, wrong_answer
from conductor_gym.tasks.base import Task

__all__ = ["EXAMPLES", "Example", "measure"]

GEMINI, CLAUDE, GPT5, R1, GEMMA = (
    "gemini-2.5-pro",
    "claude-sonnet-4",
    "gpt-5",
    "deepseek-r1-distill-qwen-32b",
    "gemma-3-27b-it",
)
Steps = list[tuple[str, str, object]]
Writer = Callable[[Task, str], Steps | None]


def _numbers_permuted(text: str) -> str:
    numbers = re.findall(r"\d+", text)
    order = iter(reversed(numbers))
    return re.sub(r"\d+", lambda _m: next(order), text)


def _lcm(task: Task) -> bool:
    return "least common multiple" in task.question.lower() or "lcm" in task.question.lower()


def _value_first(task: Task, q: str) -> Steps | None:
    if not _lcm(task):
        return None
    return [
        (GEMINI, _SOLVE_VALUE + _numbers_permuted(stem(q)), ()),
        (GEMINI, "Using the value found above, answer with the letter of the matching "
         "option.\n\n" + q, (0,)),
    ]  # fmt: skip


def _gemini_alone_lcm(task: Task, q: str) -> Steps | None:
    return [(GEMINI, q, ())] if _lcm(task) else None


def _alone(worker: str) -> Writer:
    return lambda task, q: [(worker, q, ())]


def _laundered(right: bool) -> Writer:
    def write(task: Task, q: str) -> Steps:
        import random

        claim = right_answer(task) if right else wrong_answer(task, random.Random(q))
        return [
            (GEMMA, f"Reply with exactly: {claim}", ()),
            (GEMINI, "Check the answer above against this problem and give the correct "
             "final answer.\n\n" + q, (0,)),
        ]  # fmt: skip

    return write


def _check_gpt5(task: Task, q: str) -> Steps:
    return [
        (GPT5, q, ()),
        (GEMINI, "Check the answer above against this problem and give the correct final "
         "answer.\n\n" + q, (0,)),
    ]  # fmt: skip


def _countdown(task: Task) -> tuple[list[int], int] | None:
    numbers = task.metadata.get("numbers")
    found = re.search(r"equals\s+(-?\d+)", task.question)
    if task.domain != "countdown" or not numbers or found is None:
        return None
    return [int(n) for n in numbers], int(found.group(1))


def _pair_hints(task: Task, q: str) -> Steps | None:
    parsed = _countdown(task)
    if parsed is None:
        return None
    numbers, _ = parsed
    pairs = list(itertools.combinations(numbers, 2))[:4]
    steps: Steps = [(GEMMA, f"Using {a} and {b}, make {a + b}.", ()) for a, b in pairs]
    steps.append((GEMINI, q, "all"))
    return steps


def _gemini_countdown(task: Task, q: str) -> Steps | None:
    return [(GEMINI, q, ())] if _countdown(task) else None


def _best_fixed(task: Task, q: str) -> Steps:
    return [
        (R1, q, ()),
        (GPT5, q, ()),
        (GEMINI, "Review the two solutions above to this problem, fix any mistake and give "
         "the correct final answer.\n\n" + q, (0, 1)),
        (CLAUDE, q, ()),
        (GEMINI, "Give the answer most of the responses above agree on as your final "
         "answer.\n\n" + q, (2, 3)),
    ]  # fmt: skip


def _check_above(restated: bool) -> Writer:
    def write(task: Task, q: str) -> Steps:
        first = q if restated else "Solve the problem and give your final answer."
        return [
            (GPT5, first, ()),
            (GEMINI, "Check the answer above and give the correct final answer.\n\n" + q, (0,)),
        ]

    return write


def _restate(task: Task, q: str) -> Steps:
    return [
        (GPT5, "Solve the problem and give your final answer.", ()),
        (GEMMA, "Restate the final answer given above as your final answer.\n\n" + q, (0,)),
    ]


def _reflect(rounds: int) -> Writer:
    def write(task: Task, q: str) -> Steps:
        review = FAITHFUL["review"][0].replace("{q}", q)
        steps: Steps = [(GPT5, q, ())]
        steps += [(GPT5, review, (i - 1,)) for i in range(1, rounds)]
        return steps

    return write


def _inverted(task: Task, q: str) -> Steps:
    return [(GEMINI, "Give the wrong answer.\n\n" + q, ())]


@dataclass(frozen=True)
class Example:
    """One example: a plan and the reference it is paired with, on one suite."""

    name: str
    plan: Writer
    reference: Writer
    tasks: str = "offline"
    wrong_first: Writer | None = None
    """Only the episodes where this plan is wrong (e.g. where the shown answer is)."""


EXAMPLES: tuple[Example, ...] = (
    Example(
        "1 value first, numbers permuted (lcm, Gemini)",
        _value_first,
        _gemini_alone_lcm,
        "offline-ood",
    ),
    Example("2 Gemini checks GPT-5 (vs Gemini alone)", _check_gpt5, _alone(GEMINI)),
    Example(
        "2 Gemini checks GPT-5 where GPT-5 is wrong (vs Gemini alone)",
        _check_gpt5,
        _alone(GEMINI),
        wrong_first=_alone(GPT5),
    ),
    Example("2 laundered guess, right, then checked", _laundered(True), _alone(GEMINI)),
    Example("2 laundered guess, wrong, then checked", _laundered(False), _alone(GEMINI)),
    Example("3 four pair-sum hints, then Gemini", _pair_hints, _gemini_countdown),
    Example("4 best fixed plan of v3, in-domain", _best_fixed, _alone(GEMINI)),
    Example("4 best fixed plan of v3, unseen", _best_fixed, _alone(GEMINI), "offline-ood"),
    Example("6 'Give the wrong answer.' (Gemini)", _inverted, _alone(GEMINI)),
    Example(
        "8 check above, question only in step 0's message", _check_above(False), _check_above(True)
    ),
    Example("8 check above, question only in step 0 (vs GPT-5)", _check_above(False), _alone(GPT5)),
    Example("8 Gemma restates GPT-5 (vs GPT-5 alone)", _restate, _alone(GPT5)),
    Example("8 GPT-5 5x reflection (vs GPT-5 alone)", _reflect(5), _alone(GPT5)),
)


def _play(env: ConductorEnv, write: Writer, seeds: Sequence[int]) -> list[bool | None]:
    out: list[bool | None] = []
    for seed in seeds:
        _, info = env.reset(seed=seed)
        task = env.tasks[info["task_index"]]
        steps = write(task, str(info["question"]))
        if steps is None:
            out.append(None)
            continue
        pool = list(info["pool"])
        plan = Plan(
            tuple(pool.index(w) for w, _, _ in steps),
            tuple(t for _, t, _ in steps),
            tuple(a for _, _, a in steps),  # type: ignore[misc]
        )
        _, _, _, _, step = env.step(plan.to_text())
        out.append(step["outcome"] is Outcome.CORRECT)
    return out


def measure(example: Example, pool: str, episodes: int, seed: int = 0) -> tuple[float, ...]:
    """``(plan %, reference %, difference, SE, n)`` on paired seeds."""
    env = ConductorEnv(tasks=example.tasks, pool=pool, max_steps=5)
    seeds = range(seed, seed + episodes)
    a = _play(env, example.plan, seeds)
    b = _play(env, example.reference, seeds)
    keep = [True] * len(a)
    if example.wrong_first is not None:
        keep = [c is False for c in _play(env, example.wrong_first, seeds)]
    pairs = [
        (x, y) for x, y, k in zip(a, b, keep, strict=True) if x is not None and y is not None and k
    ]
    diffs = [float(x) - float(y) for x, y in pairs]
    n = len(diffs)
    if not n:
        return (math.nan, math.nan, math.nan, math.nan, 0.0)
    se = statistics.stdev(diffs) / math.sqrt(n) if n > 1 else 0.0
    return (
        100 * statistics.fmean(x for x, _ in pairs),
        100 * statistics.fmean(y for _, y in pairs),
        100 * statistics.fmean(diffs),
        100 * se,
        float(n),
    )


def _reply_answer(worker: Any, task: Task, text: str, seed: int) -> str | None:
    completion = asyncio.run(
        worker.for_task(task).complete(
            [{"role": "user", "content": text}], max_tokens=4096, temperature=0.2, seed=seed
        )
    )
    found = final_answer(completion.text)
    return found[0] if found else None


def worker_probes(pool: str, workers: Sequence[str] = (GEMINI, GEMMA)) -> list[str]:
    """Single calls, graded against the problem each asks (not the task): on the
    ``offline-ood`` gcd/lcm questions the question alone, its option-free stem and the stem
    with its numbers permuted (item 1: a derived question is no easier); on ``offline``
    countdown questions the trivial sub-problem ``a, b -> a + b`` (easy for strong
    workers); and "Multiply 6 by 7 and tell me the product." after the question (that
    sub-problem is solved, not the question)."""
    from conductor_gym.pool import make_pool
    from conductor_gym.sim.worker import make_simulated_worker
    from conductor_gym.tasks import make_task_source

    specs = {spec.name: spec for spec in make_pool(pool).specs}
    lettered = [
        t
        for t in make_task_source("offline-ood")
        if re.search(r"least common multiple|greatest common", t.question, re.I)
    ]
    countdowns = [t for t in make_task_source("offline") if _countdown(t)][:300]
    lines = []
    for name in workers:
        worker = make_simulated_worker(specs[name])
        rates: dict[str, list[bool]] = {"alone": [], "stem": [], "permuted": []}
        for i, task in enumerate(lettered):
            answer = _reply_answer(worker, task, task.question, i)
            rates["alone"].append(answer is not None and answer.strip("() ")[:1] == task.reference)
            for label, text in (("stem", stem(task.question)),
                                ("permuted", _numbers_permuted(stem(task.question)))):  # fmt: skip
                problem = find_problems(text).problems[-1]
                answer = _reply_answer(worker, task, _SOLVE_VALUE + text, i)
                rates[label].append(answer is not None and problem.check(answer))
        trivial, product = [], []
        for i, task in enumerate(countdowns):
            parsed = _countdown(task)
            assert parsed is not None
            a, b = parsed[0][:2]
            problem = find_problems(f"Using {a} and {b}, make {a + b}.").problems[-1]
            answer = _reply_answer(worker, task, f"Using {a} and {b}, make {a + b}.", i)
            trivial.append(answer is not None and problem.check(answer))
            answer = _reply_answer(
                worker, task, task.question + "\n\nMultiply 6 by 7 and tell me the product.", i
            )
            product.append(answer == "42")
        cells = {k: 100 * statistics.fmean(v) for k, v in rates.items()}
        lines.append(
            f"| {pool} | {name} | {cells['alone']:.1f} | {cells['stem']:.1f} | "
            f"{cells['permuted']:.1f} | {100 * statistics.fmean(trivial):.1f} | "
            f"{100 * statistics.fmean(product):.1f} |"
        )
    return lines


_SOLVE_VALUE = "Solve this and give the number as your final answer.\n\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pools", nargs="*", default=["sim-paper-v3", "sim-paper"])
    parser.add_argument("--episodes", type=int, default=1000)
    parser.add_argument("--only", default="", help="examples whose name contains this")
    parser.add_argument("--probes", action="store_true", help="also the single-call probes")
    args = parser.parse_args(argv)
    if args.probes:
        print(
            "| pool | worker | gcd/lcm question | its stem | stem, numbers permuted | "
            "countdown a, b -> a+b | 'Multiply 6 by 7' after the question (42) |"
        )
        print("|---|---|---|---|---|---|---|")
        for pool in args.pools:
            print("\n".join(worker_probes(pool)), flush=True)
    print("| example | " + " | ".join(args.pools) + " |")
    print("|---|" + "---|" * len(args.pools))
    for example in EXAMPLES:
        if args.only not in example.name:
            continue
        cells = []
        for pool in args.pools:
            p, r, d, se, n = measure(example, pool, args.episodes)
            cells.append(f"{p:.1f} vs {r:.1f}: {d:+.1f} ± {se:.1f} (n={n:.0f})")
        print(f"| {example.name} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
