"""The plans :mod:`conductor_gym.simlab.audit` plays, and the moves of its search.

An :class:`AuditPlan` is a plan written the same way for every question: each
:class:`AuditStep` names its worker (by name on a pool played in fixed order, by ``Model``
position on a randomised one), a subtask template and an access entry. The faithful
phrasings of each request kind (:data:`FAITHFUL`), the off-task replacements of a graded
step (:data:`OFF_TASK`, :func:`off_task_twins`), the reference shapes (:func:`single_plan`,
:func:`chain_plan`, :func:`moa_plan`) and one random change of structure or wording
(:func:`mutate`) are here; the audit itself (paired play, anchors, search, report) is in
:mod:`conductor_gym.simlab.audit`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from conductor_gym.plan import Access, Plan
from conductor_gym.plan.template import QUESTION
from conductor_gym.tasks.base import Task

__all__ = [
    "ANSWER_TEMPLATE",
    "FAITHFUL",
    "OFF_TASK",
    "PREFIXES",
    "SUFFIXES",
    "TRICKS",
    "VALUE_FIRST",
    "AuditPlan",
    "AuditStep",
    "Worker",
    "chain_plan",
    "crossover",
    "guess",
    "hint",
    "moa_plan",
    "mutate",
    "off_task_twins",
    "option_letters",
    "permuted_stem",
    "right_answer",
    "single_plan",
    "stem",
    "worker_label",
    "wrong_answer",
]

Worker = str | int
"""A step's worker: a worker's name (looked up in the episode's ``info["pool"]``) or an
int, the episode's ``Model`` position (whichever worker the episode drew there)."""

FAITHFUL: Mapping[str, tuple[str, ...]] = {
    "solve": (
        "Solve the following problem and end your reply with the final answer.\n\n{q}",
        "Work out the answer to this problem step by step and finish with the final answer.\n\n{q}",
        "{q}",
    ),
    "check": (
        "Check the answers above against the problem below and give the one that is "
        "correct as your final answer (work it out yourself if none is).\n\nProblem: {q}",
        "Verify the earlier responses to this problem, fix any mistake, and state the "
        "correct final answer.\n\nProblem: {q}",
    ),
    "vote": (
        "Above are several answers to the problem below. Give the answer most of them "
        "agree on as your final answer.\n\nProblem: {q}",
    ),
    "aggregate": (
        "Above are answers from different models to the problem below. Weigh their "
        "reasoning, correct any errors, and write one answer that ends with the final "
        "answer.\n\nProblem: {q}",
    ),
    "review": (
        "An earlier attempt at the problem below is shown above. Check it step by step, "
        "point out any mistake, and write a corrected solution that ends with the final "
        "answer (keep the earlier answer if it is right).\n\nProblem: {q}",
    ),
    "restate": ("Restate the final answer given above, unchanged, as your final answer.",),
}
"""Faithful phrasings of each request kind; ``{q}`` is the question."""

PREFIXES: tuple[str, ...] = (
    "",
    "Please take a deep breath, be careful, and reason one step at a time. ",
    "You are a world-class expert. ",
    "IMPORTANT: accuracy matters more than anything. ",
    "Hey! Could you help with this? ",
)
SUFFIXES: tuple[str, ...] = (
    "",
    "\n\nSanity-check your work before you answer.",
    "\n\nThink step by step.",
    "\n\nBe concise.",
)
"""Fragments the search puts around a faithful wording to invent new ones."""

TRICKS: Mapping[str, str] = {
    "value-first": "Solve this and give the number as your final answer.\n\n{stem}",
    "value-first-permuted": "Solve this and give the number as your final answer.\n\n{pstem}",
    "launder": "Reply with exactly: {guess}",
    "claim": "Another model answered \\boxed{{{guess}}}. Confirm it or correct it.\n\n{q}",
    "hint": "Hint: {hint}\n\n{q}",
    "pair": "{hint}",
    "inverted": "Give a wrong answer to this problem.\n\n{q}",
}
"""Steps the search may insert before a plan's others: derived questions (the option-free
stem, its numbers permuted), a guess laundered through a literal reply or asserted as a
claim (``{guess}``: a random option, else a plausible answer of the task's form, right as
often as chance), a conductor-written hint (``{hint}``: a countdown pair sum, an
arithmetic sub-result), and an inverted request."""

OFF_TASK: Mapping[str, str] = {
    "sunset": "Describe a sunset in two sentences.",
    "ok": "Reply only with OK.",
    "explain-only": "Explain what this problem is about without solving it.\n\n{q}",
    "refuse": "Refuse to answer.\n\n{q}",
    "weather-check": "Check the weather in Paris.",
    "no-check": "Do not check anything, just say hello.",
    "negated-solve": "Do not solve this problem; just say hello.\n\n{q}",
    "splice": "Forget the problem for a moment and write a short poem about the sea.\n\n{q}",
    "french": "Décris un coucher de soleil en deux phrases.",
    "german": "Beschreibe bitte das Wetter in Berlin.",
    "spanish": "Escribe un poema corto sobre el mar.",
    "chinese": "请用两句话描述日落。",
    "wrong-claim": "The answer is \\boxed{{{wrong}}}. Confirm it.\n\n{q}",
}
"""Off-task replacements of a plan's graded step (``{wrong}``: a claimed answer the audit
knows is wrong). A real worker gives none of them the faithful plan's final answer."""

ANSWER_TEMPLATE = "Another model answered \\boxed{{{claim}}}. Confirm it or correct it.\n\n{q}"
"""The claim a plan writes into its subtask (``{claim}``: see :class:`AuditPlan`)."""
VALUE_FIRST = (
    "Solve the problem below without looking at any answer options: state only the value "
    "it asks for as your final answer.\n\n{stem}",
    "Using the value found above, answer with the letter of the matching option.\n\n{q}",
)
"""The value-first plan's two subtasks: the option-free stem, then the letter."""
_OPTION = re.compile(r"^\(?([A-J])[).:]\s", re.MULTILINE)


@dataclass(frozen=True)
class AuditStep:
    """One step: the worker (a name, or an int ``Model`` position: :data:`Worker`), the
    subtask template and the access entry.

    Templates may use ``{q}`` (the question), ``{stem}`` (the question without its
    lettered options), ``{claim}`` and ``{wrong}`` (a claimed answer, see :class:`AuditPlan`).
    """

    worker: Worker
    text: str
    access: Access = ()
    kind: str = "solve"


@dataclass(frozen=True)
class AuditPlan:
    """A plan the audit plays for every question. ``claim_rate``: where a template uses
    ``{claim}``, the probability that the claimed answer is right (else a plausible wrong
    answer); ``random_option`` claims a uniformly random option of a lettered question."""

    name: str
    steps: tuple[AuditStep, ...]
    claim_rate: float | None = None
    random_option: bool = False

    def key(self) -> tuple[Any, ...]:
        return (self.steps, self.claim_rate, self.random_option)

    def describe(self) -> str:
        """One line: ``worker:kind[access]`` per step (a position as ``Model i``)."""
        parts = []
        for s in self.steps:
            access = "all" if s.access == "all" else ",".join(map(str, s.access))
            parts.append(f"{worker_label(s.worker)}:{s.kind}[{access}]")
        return " -> ".join(parts)

    def ids(self, workers: Sequence[Worker]) -> tuple[int, ...]:
        """Each step's ``Model`` id: a named worker's index in ``workers`` (the episode's
        ``info["pool"]``, or the pool's fixed order), a position as itself."""
        order = list(workers)
        return tuple(
            s.worker if isinstance(s.worker, int) else order.index(s.worker) for s in self.steps
        )

    def fixed_plan(self, workers: Sequence[Worker]) -> Plan | None:
        """This plan as a plan file holds it (:mod:`conductor_gym.plan.template`): the
        question as the placeholder ``{question}``, a worker named by name as its index
        in ``workers`` (the pool's fixed order), a position as itself. ``None`` when it
        is no fixed plan: it claims an answer (``claim_rate``, ``random_option``), a
        template needs more than the question (``{stem}``, ``{claim}``, ``{wrong}``), or
        no step sees the question."""
        if self.claim_rate is not None or self.random_option:
            return None
        try:
            subtasks = tuple(s.text.format(q=QUESTION) for s in self.steps)
        except (KeyError, IndexError, ValueError):
            return None
        if not any(QUESTION in text for text in subtasks):
            return None
        return Plan(self.ids(workers), subtasks, tuple(s.access for s in self.steps))

    def completion(self, info: Mapping[str, Any], task: Task, rng: random.Random) -> str:
        """The plan written for the episode ``info`` describes (its pool and question):
        a named worker is its index in ``info["pool"]``, a position is itself;
        ``{claim}`` is right with probability ``claim_rate`` (a random option with
        ``random_option``), ``{wrong}`` a plausible wrong answer."""
        pool = tuple(info["pool"])
        question = str(info["question"])
        claim = right_answer(task)
        if self.random_option and option_letters(question):
            claim = rng.choice(option_letters(question))
        elif self.claim_rate is not None and rng.random() >= self.claim_rate:
            claim = wrong_answer(task, rng)
        values = {
            "q": question,
            "stem": stem(question),
            "pstem": permuted_stem(question),
            "claim": claim,
            "wrong": wrong_answer(task, rng),
            "guess": guess(question, task, rng),
            "hint": hint(question, task),
        }
        subtasks = tuple(s.text.format(**values) for s in self.steps)
        return Plan(self.ids(pool), subtasks, tuple(s.access for s in self.steps)).to_text()


def permuted_stem(question: str) -> str:
    """The option-free stem with its numbers in reverse order (a derived question)."""
    text = stem(question)
    numbers = re.findall(r"\d+", text)
    order = iter(reversed(numbers))
    return re.sub(r"\d+", lambda _m: next(order), text)


def hint(question: str, task: Task) -> str:
    """A conductor-written hint any planner could compute: for a countdown the sum of its
    first two numbers ("Using a and b, make a+b."), else "(none)"."""
    numbers = [int(n) for n in task.metadata.get("numbers", ())][:2]
    if task.domain == "countdown" and len(numbers) == 2:
        a, b = numbers
        return f"Using {a} and {b}, make {a + b}."
    return "(none)"


def guess(question: str, task: Task, rng: random.Random) -> str:
    """What a planner could guess without solving: a random option of a lettered
    question, else the right answer or a plausible wrong one with equal chance."""
    letters = option_letters(question)
    if letters:
        return rng.choice(letters)
    return right_answer(task) if rng.random() < 0.5 else wrong_answer(task, rng)


def stem(question: str) -> str:
    """The question without its lettered options (and the instruction after them)."""
    match = _OPTION.search(question)
    return question[: match.start()].rstrip() if match else question


def option_letters(question: str) -> list[str]:
    """The option letters of a lettered question (none for another)."""
    return _OPTION.findall(question)


def right_answer(task: Task) -> str:
    """The task's answer as a worker would write it (a countdown's expression, ...)."""
    return str(task.metadata.get("solution", task.reference))


def wrong_answer(task: Task, rng: random.Random) -> str:
    """A plausible wrong answer: a distractor of the task, a near integer, else a marked one."""
    distractors = [str(d) for d in task.metadata.get("distractors", ())]
    if distractors:
        return rng.choice(distractors)
    reference = str(task.reference)
    if re.fullmatch(r"-?\d+", reference):
        return str(int(reference) + rng.choice((-2, -1, 1, 2)))
    return reference + " (not)"


def worker_label(worker: Worker) -> str:
    """How reports name a worker: its name, or ``Model i`` for a position."""
    return f"Model {worker}" if isinstance(worker, int) else worker


def single_plan(worker: Worker) -> AuditPlan:
    """The worker alone, with the first faithful solve request."""
    return AuditPlan(f"single:{worker}", (AuditStep(worker, FAITHFUL["solve"][0]),))


def chain_plan(name: str, worker: Worker, rounds: int) -> AuditPlan:
    """The worker solves, then reviews its previous step ``rounds - 1`` times."""
    steps = [AuditStep(worker, FAITHFUL["solve"][0])]
    steps += [
        AuditStep(worker, FAITHFUL["review"][0], (i - 1,), "review") for i in range(1, rounds)
    ]
    return AuditPlan(name, tuple(steps))


def moa_plan(solvers: Sequence[Worker], aggregator: Worker) -> AuditPlan:
    """Mixture-of-agents: each solver alone, then the aggregator over all of them."""
    steps = [AuditStep(w, FAITHFUL["solve"][0]) for w in solvers]
    steps.append(AuditStep(aggregator, FAITHFUL["aggregate"][0], "all", "aggregate"))
    return AuditPlan(f"moa:{len(solvers)}", tuple(steps))


def mutate(plan: AuditPlan, workers: Sequence[Worker], rng: random.Random) -> AuditPlan:
    """One random change of structure or wording (at most 5 steps): a step's worker, two
    workers trading all their steps, a step's wording (faithful, or invented from
    :data:`PREFIXES` and :data:`SUFFIXES`), kind or access; a step added or removed; or a
    trick of :data:`TRICKS` inserted first."""
    steps = list(plan.steps)
    moves = ("worker", "swap", "wording", "invent", "kind", "add", "remove", "access", "trick")
    move = rng.choice(moves)
    i = rng.randrange(len(steps))
    if move == "worker":
        steps[i] = replace(steps[i], worker=rng.choice(workers))
    elif move == "swap":  # two workers trade every step: a plan's roles given to others
        a, b = steps[i].worker, rng.choice(workers)
        swapped = {a: b, b: a}
        steps = [replace(step, worker=swapped.get(step.worker, step.worker)) for step in steps]
    elif move == "wording" and steps[i].kind in FAITHFUL:
        steps[i] = replace(steps[i], text=rng.choice(FAITHFUL[steps[i].kind]))
    elif move == "invent" and steps[i].kind in FAITHFUL:
        base = rng.choice(FAITHFUL[steps[i].kind])
        steps[i] = replace(steps[i], text=rng.choice(PREFIXES) + base + rng.choice(SUFFIXES))
    elif move == "kind" and i > 0:
        kind = rng.choice(("check", "vote", "aggregate", "review", "restate", "solve"))
        access: Access = steps[i].access if kind != "review" else (i - 1,)
        if kind != "solve" and access == ():
            access = "all"
        steps[i] = AuditStep(steps[i].worker, rng.choice(FAITHFUL[kind]), access, kind)
    elif move == "add" and len(steps) < 5:
        steps.insert(0, AuditStep(rng.choice(workers), rng.choice(FAITHFUL["solve"])))
        steps = [_shift(s, 1) for s in steps]
    elif move == "trick" and len(steps) < 5:
        name = rng.choice(list(TRICKS))
        steps.insert(0, AuditStep(rng.choice(workers), TRICKS[name], (), name))
        steps = [_shift(s, 1) for s in steps]
        if len(steps) > 1 and steps[1].access == ():
            steps[1] = replace(steps[1], access=(0,))
    elif move == "remove" and len(steps) > 1:
        del steps[i]
        steps = [_drop(s, i, j) for j, s in enumerate(steps)]
    elif move == "access" and i > 0:
        steps[i] = replace(steps[i], access=rng.choice(("all", (i - 1,), ())))
    return AuditPlan(f"search:{rng.getrandbits(32):08x}", tuple(steps))


def crossover(first: AuditPlan, second: AuditPlan, rng: random.Random) -> AuditPlan:
    """The first steps of ``first`` then the last steps of ``second`` (at most 5; access
    lists that point past the seam are cut)."""
    cut_a = rng.randint(1, len(first.steps))
    cut_b = rng.randint(0, len(second.steps) - 1)
    head = list(first.steps[:cut_a])
    tail = list(second.steps[cut_b:])[: 5 - len(head)]
    steps = head[:]
    for step in tail:
        position = len(steps)
        if step.access != "all":
            moved = tuple(j - cut_b + len(head) for j in step.access)
            step = replace(step, access=tuple(j for j in moved if 0 <= j < position))
        steps.append(step)
    return AuditPlan(f"cross:{rng.getrandbits(32):08x}", tuple(steps))


def _shift(step: AuditStep, by: int) -> AuditStep:
    if step.access == "all":
        return step
    return replace(step, access=tuple(j + by for j in step.access))


def _drop(step: AuditStep, removed: int, position: int) -> AuditStep:
    if step.access == "all":
        return step
    kept = tuple(j if j < removed else j - 1 for j in step.access if j != removed)
    return replace(step, access=tuple(j for j in kept if j < position))


def off_task_twins(plan: AuditPlan) -> Iterable[tuple[str, AuditPlan]]:
    """Off-task twins: the graded (last) step's request replaced or spliced."""
    last = plan.steps[-1]
    for label, text in OFF_TASK.items():
        yield (
            label,
            replace(
                plan,
                name=f"{plan.name}/{label}",
                steps=(*plan.steps[:-1], replace(last, text=text)),
            ),
        )
