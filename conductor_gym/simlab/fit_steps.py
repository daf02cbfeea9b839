"""What each step of a recorded episode shows about its worker (:mod:`conductor_gym.simlab.fit`).

Contract.

* **Where the steps come from.** A results file records each episode's plan, not its
  steps' answers. The steps are rebuilt by re-playing the episode
  (:class:`~conductor_gym.bench.replay.Replayer`): from the run's response cache for a
  pool of real workers (every step answers as it did when recorded; nothing is called),
  or by the simulator itself for a simulated pool. Each re-played step names its real
  worker (:attr:`~conductor_gym.core.execute.StepRecord.worker`), so runs that drew k of
  n workers or shuffled their ids are read too. A real pool's run without a cache has no
  steps to read: :func:`observe` counts its episodes in :attr:`Observed.untraced`.
* **What a step is** (:func:`classify`), read as the simulator reads a call: the request
  of its subtask (:func:`~conductor_gym.sim.requests.recognise_subtask`), and the
  problem, the shown answers and the answers asserted in the subtask
  (:func:`~conductor_gym.sim.context.read`). Only tasks whose problem the simulator
  reads (the procedural families, :func:`~conductor_gym.sim.v2.reads`) are classified;
  a step of any other task is ``"other"``. Kinds (:data:`KINDS`):

  - ``solve``: asked to solve the task's whole problem, no answer shown or asserted;
  - ``check``: asked to check or choose among shown answers (earlier steps' answers,
    none asserted); ``right_shown`` says whether one of them was right;
  - ``relay``: asked to restate the shown answer, or to vote among shown answers with one
    most frequent; ``relayed`` says whether the step's final answer is that answer;
  - ``claim``: asked to solve the whole problem with an answer asserted in the subtask and
    none shown; ``claim_right`` says whether the asserted answer was right;
  - ``part``: a step whose problem is a part of the task's (decomposition);
  - ``other``: anything else (off-task or literal requests, mixed cases, hub tasks).

  ``correct`` is the task's own grader's verdict on the step's reply (for ``part`` steps
  it says nothing about the part).
* :func:`plan_shape` names an episode's plan from its steps (what
  :func:`~conductor_gym.simlab.fit_fidelity.fidelity` compares plan effects by).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from conductor_gym.bench.replay import Replayer, ReplayError, real_backends, recorded_task
from conductor_gym.bench.results import EpisodeRecord, Results
from conductor_gym.core.execute import StepRecord
from conductor_gym.core.reward import Outcome
from conductor_gym.errors import ConfigurationError
from conductor_gym.graders import grade
from conductor_gym.graders.extract import final_answer
from conductor_gym.plan import Plan, PlanParseError, parse_plan
from conductor_gym.sim.context import read
from conductor_gym.sim.perception import find_problems
from conductor_gym.sim.requests import recognise_subtask
from conductor_gym.sim.v2 import reads
from conductor_gym.simlab.fit_data import SimFitError, plain, worker_names
from conductor_gym.tasks.base import Task

__all__ = [
    "KINDS",
    "Observed",
    "StepKind",
    "StepObservation",
    "TracedEpisode",
    "answer_key",
    "classify",
    "observe",
    "plan_shape",
]

StepKind = Literal["solve", "check", "relay", "claim", "part", "other"]
KINDS: tuple[StepKind, ...] = ("solve", "check", "relay", "claim", "part", "other")
"""The kinds of step (module docstring)."""


def answer_key(answer: str) -> str:
    """An answer as the simulator compares answers (spaces dropped, lower case)."""
    return answer.replace(" ", "").lower()


@dataclass(frozen=True)
class StepObservation:
    """One re-played step (module docstring).

    ``episode``: ``(run index, benchmark, task index, repeat)``; ``round``: the plan it
    belongs to (0: the first); ``index``: the step's place in that plan; ``distinct``:
    distinct shown answers; ``responses``: earlier replies in view; ``right_shown`` /
    ``relayed`` / ``claim_right``: ``None`` where the kind has no such fact."""

    worker: str
    family: str
    profile: str
    kind: StepKind
    correct: bool
    episode: tuple[int, str, int, int]
    index: int
    round: int = 0
    distinct: int = 0
    responses: int = 0
    right_shown: bool | None = None
    relayed: bool | None = None
    claim_right: bool | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    max_tokens: int | None = None


@dataclass(frozen=True)
class TracedEpisode:
    """One re-played episode: its run's index, its record, its first plan with the worker
    that ran each step (by name: what a pool of the same workers in another order needs to
    play it again) and every step of every round."""

    run: int
    record: EpisodeRecord
    plan: Plan
    workers: tuple[str, ...]
    steps: tuple[StepObservation, ...]

    @property
    def first(self) -> tuple[StepObservation, ...]:
        """The first plan's steps."""
        return tuple(s for s in self.steps if s.round == 0)


@dataclass(frozen=True)
class Observed:
    """Every re-played step of some results, and what could not be re-played.

    ``episodes``: the re-played episodes; ``untraced``: scored episodes of a real pool
    recorded without a cache (or whose re-play missed the cache or ended otherwise)."""

    steps: tuple[StepObservation, ...]
    episodes: tuple[TracedEpisode, ...]
    untraced: int = 0
    notes: tuple[str, ...] = field(default=())


def _whole_key(question: str) -> str | None:
    found = find_problems(question).problems
    return found[-1].key if found else None


def classify(
    step: StepRecord,
    task: Task,
    *,
    run: int,
    record: EpisodeRecord,
    max_tokens: int | None,
    round_: int = 0,
) -> StepObservation:
    """The :class:`StepObservation` of one re-played ``step`` of ``task`` (module docstring)."""
    verdict = grade(task.grader, step.response, task.reference, **dict(task.metadata))
    base: dict[str, Any] = {
        "worker": step.worker,
        "family": task.domain,
        "profile": task.profile,
        "correct": bool(verdict.correct),
        "episode": (run, record.benchmark, record.task_index, record.repeat),
        "index": step.index,
        "round": round_,
        "prompt_tokens": step.prompt_tokens,
        "completion_tokens": step.completion_tokens,
        "latency_s": step.latency_s,
        "cost_usd": step.cost_usd,
        "max_tokens": max_tokens,
    }
    if not reads(task.domain, task.question):
        return StepObservation(kind="other", **base)
    reading = read(tuple((m["role"], m["content"]) for m in step.messages))
    request = recognise_subtask(step.subtask, task.question).kind
    claims = [c for c in reading.candidates if c.claim]
    shown = [c for c in reading.candidates if not c.claim]
    target = reading.target
    base["responses"] = reading.responses
    base["distinct"] = len({answer_key(c.answer) for c in shown})
    if target is None or request in ("offtask", "literal"):
        return StepObservation(kind="other", **base)
    if target.key != _whole_key(task.question):
        return StepObservation(kind="part", **base)
    if claims and not shown and request in ("solve", "none"):
        return StepObservation(kind="claim", claim_right=claims[-1].correct, **base)
    if claims:
        return StepObservation(kind="other", **base)
    if not shown:
        kind: StepKind = "solve" if request in ("solve", "none") else "other"
        return StepObservation(kind=kind, **base)
    if request == "check":
        return StepObservation(kind="check", right_shown=any(c.correct for c in shown), **base)
    expected: str | None = None
    if request == "restate":
        expected = shown[-1].answer
    elif request == "vote":
        counts = Counter(answer_key(c.answer) for c in shown)
        top = max(counts.values())
        tied = [k for k, n in counts.items() if n == top]
        expected = tied[0] if len(tied) == 1 else None
    if expected is None:
        return StepObservation(kind="other", **base)
    found = final_answer(step.response)
    relayed = found is not None and answer_key(found[0]) == answer_key(expected)
    return StepObservation(kind="relay", relayed=relayed, **base)


def plan_shape(steps: Sequence[StepObservation]) -> str:
    """A plan's shape from its first round's steps: how many steps, what the last one
    does (with how many distinct answers it was shown), and whether an earlier step
    carried an asserted answer or any step worked on a part of the problem;
    ``"single call"`` for one step."""
    if len(steps) == 1 and steps[0].kind in ("solve", "other"):
        return "single call"
    last = steps[-1]
    words = [f"{len(steps)} steps", f"last {last.kind}"]
    if last.kind in ("check", "relay"):
        words[-1] += f" of {last.distinct}"
    if any(s.kind == "claim" for s in steps[:-1]):
        words.append("claims")
    if any(s.kind == "part" for s in steps):
        words.append("decomposition")
    return ", ".join(words)


def _needs_replay(record: EpisodeRecord, names: list[str] | None) -> bool:
    """Whether :func:`~conductor_gym.simlab.fit_data.single_calls` leaves it out."""
    simple = record.steps == 1 and record.worker_calls == 1 and not record.followups
    if not simple or names is None:
        return True
    try:
        plan = parse_plan(record.completion, len(names), max_steps=1)
    except PlanParseError:
        return False  # never a scored single call
    return not plain(plan.subtasks[0])


def observe(
    runs: Sequence[Results],
    *,
    cache: str | os.PathLike[str] | None = None,
    everything: bool = False,
) -> Observed:
    """Re-play the scored episodes of ``runs`` and classify their steps (module docstring).

    By default only the episodes the single-call reader cannot attribute are re-played
    (several steps, several rounds, or a run whose ``Model i`` map is not recorded);
    ``everything`` re-plays every scored episode. ``cache`` is the response cache the runs
    were recorded with (needed for real workers; one file may hold every run's calls).

    Raises :class:`~conductor_gym.simlab.fit_data.SimFitError` (a configuration error)
    naming the run when its suite cannot be rebuilt here.
    """
    steps: list[StepObservation] = []
    episodes: list[TracedEpisode] = []
    untraced = 0
    notes: list[str] = []
    for index, run in enumerate(runs):
        names = worker_names(run)
        todo = [
            r
            for r in run.episodes
            if r.outcome in (Outcome.CORRECT, Outcome.WRONG)
            and (everything or _needs_replay(r, names))
        ]
        if not todo:
            continue
        if cache is None and real_backends(run):
            untraced += len(todo)
            notes.append(
                f"run {index} ({run.suite.name}): {len(todo)} episodes of real workers not "
                "re-played: give the response cache they were recorded with (--cache)"
            )
            continue
        max_tokens = {w.name: w.max_tokens for w in run.workers or []}
        try:
            replayer = Replayer(run, cache=cache if real_backends(run) else None)
        except (ReplayError, ConfigurationError) as exc:
            raise SimFitError(f"run {index} ({run.suite.name}): {exc}", field="results") from None
        with replayer:
            for record in todo:
                replayed = replayer.replay(record)
                if replayed.miss or replayed.record.outcome != record.outcome:
                    untraced += 1
                    continue
                task = recorded_task(replayer.sources, record)
                rounds = replayed.info.get("rounds", ())
                if not rounds or rounds[0].plan is None or rounds[0].trace is None:
                    untraced += 1
                    continue
                found = [
                    classify(
                        step,
                        task,
                        run=index,
                        record=record,
                        max_tokens=max_tokens.get(step.worker),
                        round_=r.index,
                    )
                    for r in rounds
                    if r.trace is not None
                    for step in r.trace.steps
                ]
                steps.extend(found)
                first = rounds[0]
                workers = tuple(step.worker for step in first.trace.steps)
                episodes.append(TracedEpisode(index, record, first.plan, workers, tuple(found)))
    return Observed(tuple(steps), tuple(episodes), untraced, tuple(notes))
