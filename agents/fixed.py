"""Fixed-workflow baselines: one worker, self-reflection, consensus, Mixture-of-Agents.

These agents ignore the observation's wording and write the same workflow shape for
every question, restating ``info["question"]`` inside every subtask (a worker whose
access list is ``[]`` sees only its own subtask after step 0). They read
``info["num_workers"]``, ``info["max_steps"]``, ``info["self_worker_id"]`` and, for
workers named rather than numbered, ``info["pool"]``.

Contract, common to all of them:

* an id that the episode does not have (or that is the conductor itself,
  ``info["self_worker_id"]``) raises ``ConfigurationError`` at act time, naming the agent, the
  id and the valid range;
* a plan longer than ``info["max_steps"]`` is never written: ``act`` raises
  ``ConfigurationError`` saying which ``max_steps`` the env needs (see ``env_overrides``);
* in a recursive round where stopping is allowed (``info["can_stop"]``) they stop
  (three empty lists): a fixed workflow has nothing to add to its own answer.

Plans and ``env_overrides`` (``{}`` means the env's default ``max_steps=5`` suffices):

* ``single:<id>``: 1 step, access ``[]``; ``{}``.
* ``reflect:<id>:<n>``: n steps, ``[]`` then ``[i-1]`` (or ``"all"``); ``{"max_steps": n}``
  when n > 5.
* ``consensus:<id>:<n>``: n + 1 steps, n x ``[]`` then ``"all"``; ``{"max_steps": n + 1}``
  when n + 1 > 5.
* ``moa``: one step per proposer (default: every worker) with ``[]``, then the
  aggregator with ``"all"``; ``{"max_steps": 8}`` (7 workers + 1).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import Access, Plan

from .base import DEFAULT_MAX_STEPS, BaseAgent

__all__ = [
    "Consensus",
    "FixedPlanAgent",
    "MixtureOfAgents",
    "SelfReflection",
    "SingleWorker",
    "episode_worker_id",
    "stop_text",
]

SOLVE = "Solve the following problem and end your reply with the final answer.\n\n{question}"
REVISE = (
    "An earlier attempt at the problem below is shown above. Check it step by step, "
    "point out any mistake, and write a corrected solution that ends with the final "
    "answer (keep the earlier answer if it is right).\n\nProblem: {question}"
)
VOTE = (
    "Above are {n} independent answers to the problem below. Compare their final "
    "answers, pick the one that most of them agree on (if they all differ, the one with "
    "the soundest reasoning) and give it as the final answer.\n\nProblem: {question}"
)
AGGREGATE = (
    "Above are answers from {n} different models to the problem below. Weigh their "
    "reasoning, correct any errors, and write one answer of the best quality that ends "
    "with the final answer.\n\nProblem: {question}"
)


def stop_text() -> str:
    """A completion holding three empty lists (the stop answer of a recursive round)."""
    return "Nothing to add to the current answer.\nmodel_id = []\nsubtasks = []\naccess_list = []"


def episode_worker_id(agent: str, worker: int | str, info: Mapping[str, Any]) -> int:
    """The ``Model`` id of ``worker`` (an id, or a worker name looked up in
    ``info["pool"]``) in this episode; ``ConfigurationError`` when the episode has no such
    worker or it is the conductor itself."""
    num_workers = int(info["num_workers"])
    if isinstance(worker, str):
        pool = tuple(info.get("pool", ()))
        if worker not in pool:
            raise ConfigurationError(
                f"{agent}: worker {worker!r} is not in this episode's pool {pool}"
            )
        worker = pool.index(worker)
    if isinstance(worker, bool) or not isinstance(worker, int) or not 0 <= worker < num_workers:
        raise ConfigurationError(
            f"{agent}: worker id {worker!r} is not valid for this episode, which has "
            f"{num_workers} workers (Model 0 .. Model {num_workers - 1})"
        )
    if worker == info.get("self_worker_id"):
        raise ConfigurationError(f"{agent}: Model {worker} is the conductor itself, not a worker")
    return worker


def _check_id(agent: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ConfigurationError(f"{agent}: a worker id must be an int >= 0, got {value!r}")
    return value


class FixedPlanAgent(BaseAgent):
    """Base of the fixed-workflow baselines: subclasses implement :meth:`plan`."""

    why = "A fixed workflow."

    def plan(self, info: Mapping[str, Any]) -> Plan:
        """The plan for the episode that ``info`` describes."""
        raise NotImplementedError

    def steps_for(self, info: Mapping[str, Any]) -> int:
        """How many steps :meth:`plan` writes for this episode."""
        return self.required_max_steps(int(info["num_workers"]))

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        if info.get("can_stop"):
            return stop_text()
        needed, allowed = self.steps_for(info), int(info["max_steps"])
        if needed > allowed:
            raise ConfigurationError(
                f"{self.name}: writes {needed}-step plans but the env allows max_steps="
                f"{allowed}; build the env with max_steps={needed} (agent.env_overrides)"
            )
        return f"{self.why}\n{self.plan(info).to_text()}"

    @property
    def spec(self) -> str:  # type: ignore[override]  # derived from the name, read-only
        """The spec that builds this agent (``single:0``, ``moa``, ...)."""
        return self.name

    @property
    def env_overrides(self) -> dict[str, Any]:
        # The paper's full pool has 7 workers; plans that fit the default need nothing.
        needed = self.required_max_steps(7)
        return {"max_steps": needed} if needed > DEFAULT_MAX_STEPS else {}


class SingleWorker(FixedPlanAgent):
    """``single:<id>``: one step sending the whole question to ``Model <id>``."""

    why = "One model answers the question on its own."

    def __init__(self, worker: int) -> None:
        self.worker = _check_id("single", worker)
        self.name = f"single:{self.worker}"

    def plan(self, info: Mapping[str, Any]) -> Plan:
        worker = episode_worker_id(self.name, self.worker, info)
        return Plan((worker,), (SOLVE.format(question=info["question"]),), ((),))


class SelfReflection(FixedPlanAgent):
    """``reflect:<id>:<n>``: ``n`` rounds on one worker (paper §4.3, 5x self-reflection).

    Step 0 answers; each later step sees the previous step (access ``[i-1]``, or
    ``"all"`` earlier steps with ``see_all=True``) and critiques and revises it. The
    last revision is the answer.
    """

    why = "One model answers, then critiques and revises its own answer."

    def __init__(self, worker: int, rounds: int, *, see_all: bool = False) -> None:
        self.worker = _check_id("reflect", worker)
        if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 1:
            raise ConfigurationError(f"reflect: rounds must be an int >= 1, got {rounds!r}")
        self.rounds = rounds
        self.see_all = bool(see_all)
        self.name = f"reflect:{self.worker}:{rounds}"

    def required_max_steps(self, num_workers: int) -> int:
        return self.rounds

    def plan(self, info: Mapping[str, Any]) -> Plan:
        worker = episode_worker_id(self.name, self.worker, info)
        question = info["question"]
        subtasks = [SOLVE.format(question=question)]
        access: list[Access] = [()]
        for i in range(1, self.rounds):
            subtasks.append(REVISE.format(question=question))
            access.append("all" if self.see_all else (i - 1,))
        return Plan((worker,) * self.rounds, tuple(subtasks), tuple(access))


class Consensus(FixedPlanAgent):
    """``consensus:<id>:<n>``: ``n`` independent answers from one worker (access
    ``[]``), then one more step of that worker, seeing them all (``"all"``), gives the
    answer most of them agree on: ``n + 1`` steps (the paper's 5x consensus is
    ``consensus:<id>:5``, 6 steps)."""

    why = "One model answers several times independently, then picks the consensus answer."

    def __init__(self, worker: int, samples: int) -> None:
        self.worker = _check_id("consensus", worker)
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ConfigurationError(f"consensus: samples must be an int >= 1, got {samples!r}")
        self.samples = samples
        self.name = f"consensus:{self.worker}:{samples}"

    def required_max_steps(self, num_workers: int) -> int:
        return self.samples + 1

    def plan(self, info: Mapping[str, Any]) -> Plan:
        worker = episode_worker_id(self.name, self.worker, info)
        question = info["question"]
        n = self.samples
        subtasks = (SOLVE.format(question=question),) * n + (VOTE.format(n=n, question=question),)
        access: tuple[Access, ...] = ((),) * n + ("all",)
        return Plan((worker,) * (n + 1), subtasks, access)


class MixtureOfAgents(FixedPlanAgent):
    """``moa``: Mixture-of-Agents. Every proposer answers independently (access
    ``[]``), then the aggregator, seeing them all (``"all"``), writes the answer.

    Args:
        proposers: Worker ids or names (``info["pool"]``) that propose; default every
            worker of the episode (except the conductor itself).
        aggregator: Worker id or name of the aggregator (default ``0``; in the
            ``sim-paper`` pool, Gemini 2.5 Pro).
        expected_workers: Pool size :attr:`env_overrides` is sized for (default 7).

    The paper's MoA baseline makes 8 calls over its 7 workers: 7 proposers + 1
    aggregator. That is outside the paper's 5-step rule, so the env must allow it
    explicitly: :attr:`env_overrides` is ``{"max_steps": 8}`` (``expected_workers + 1``),
    and ``act`` raises ``ConfigurationError`` in an env with fewer steps than it needs.
    """

    why = "Every model answers independently, then one model aggregates their answers."

    def __init__(
        self,
        proposers: Sequence[int | str] | None = None,
        *,
        aggregator: int | str = 0,
        expected_workers: int = 7,
    ) -> None:
        if isinstance(proposers, str) or (proposers is not None and not proposers):
            raise ConfigurationError(
                "moa: proposers must be a non-empty list of worker ids or names"
            )
        if isinstance(expected_workers, bool) or not isinstance(expected_workers, int):
            raise ConfigurationError(
                f"moa: expected_workers must be an int, got {expected_workers!r}"
            )
        self.proposers = None if proposers is None else tuple(proposers)
        self.aggregator = aggregator
        self.expected_workers = expected_workers
        self.name = "moa"

    def required_max_steps(self, num_workers: int) -> int:
        return (num_workers if self.proposers is None else len(self.proposers)) + 1

    def steps_for(self, info: Mapping[str, Any]) -> int:
        if self.proposers is not None:
            return len(self.proposers) + 1
        workers = int(info["num_workers"])
        return workers + (0 if info.get("self_worker_id") is None else -1) + 1

    @property
    def env_overrides(self) -> dict[str, Any]:
        return {"max_steps": max(DEFAULT_MAX_STEPS, self.required_max_steps(self.expected_workers))}

    def plan(self, info: Mapping[str, Any]) -> Plan:
        self_id = info.get("self_worker_id")
        if self.proposers is None:
            ids = [i for i in range(int(info["num_workers"])) if i != self_id]
        else:
            ids = [episode_worker_id(self.name, p, info) for p in self.proposers]
        ids.append(episode_worker_id(self.name, self.aggregator, info))
        question = info["question"]
        n = len(ids) - 1
        subtasks = (SOLVE.format(question=question),) * n + (
            AGGREGATE.format(n=n, question=question),
        )
        access: tuple[Access, ...] = ((),) * n + ("all",)
        return Plan(tuple(ids), subtasks, access)
