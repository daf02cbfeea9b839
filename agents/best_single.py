"""``best-single``: per domain, the one worker that did best on a calibration split.

The paper compares the conductor with its best single worker. Choosing that worker on
the test questions would leak them, so :meth:`BestSingle.calibrate` measures every
worker on a separate *calibration* split and the agent then routes each test question
of a domain to that domain's best worker, in one step.

Contract:

* calibration runs one-step plans (:class:`~agents.fixed.SingleWorker`) on the
  calibration tasks through a real ``ConductorEnv`` with the evaluation's pool and
  settings, and counts correct answers per ``(domain, worker name)``; infrastructure
  failures (``truncated``) are not counted;
* choices are stored by worker *name* (``info["pool"]`` names ``Model i``), so they hold
  whatever ids an episode shuffles or draws; at act time the best-ranked worker of the
  domain that is in the episode's pool answers, and a domain never calibrated falls
  back to the best worker over all calibration episodes;
* the calibration split must not share a question with the test source: for the
  procedural suites the default is :func:`~agents.calibration.calibration_split_for`
  (disjoint by construction); any split given explicitly is checked question by
  question, and an overlap raises ``ConfigurationError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym

from conductor_gym import ConductorEnv, Outcome
from conductor_gym.errors import ConfigurationError
from conductor_gym.plan import Plan
from conductor_gym.tasks import TaskSource, make_task_source

from .calibration import calibration_split_for
from .fixed import SOLVE, FixedPlanAgent, SingleWorker

__all__ = ["BestSingle"]


class BestSingle(FixedPlanAgent):
    """Routes each question to its domain's best calibrated worker (module docstring).

    Args:
        ranking: Domain -> worker names, best first (or a single name).
        overall: Worker names, best first, for domains not in ``ranking``.

    Attributes:
        scores: ``{domain: {worker name: (correct, episodes)}}`` from :meth:`calibrate`.
        calibration_task_ids: Ids of the tasks calibration ran on.
        calibration_source: ``(name, fingerprint)`` of the calibration split.
    """

    why = "The worker that did best on this domain's calibration questions answers alone."

    def __init__(
        self,
        ranking: Mapping[str, str | Sequence[str]] | None = None,
        overall: str | Sequence[str] = (),
    ) -> None:
        self.ranking: dict[str, tuple[str, ...]] = {
            domain: (names,) if isinstance(names, str) else tuple(names)
            for domain, names in (ranking or {}).items()
        }
        self.overall: tuple[str, ...] = (overall,) if isinstance(overall, str) else tuple(overall)
        if not self.overall and not self.ranking:
            raise ConfigurationError(
                "best-single: not calibrated; build it with BestSingle.calibrate(env_kwargs, "
                "tasks=<calibration split>) or give ranking=/overall= worker names"
            )
        self.scores: dict[str, dict[str, tuple[int, int]]] = {}
        self.calibration_task_ids: frozenset[str] = frozenset()
        self.calibration_source: tuple[str, str] | None = None
        self.name = "best-single"

    @property
    def choices(self) -> dict[str, str]:
        """Domain -> the best worker's name."""
        return {domain: names[0] for domain, names in self.ranking.items() if names}

    def describe(self) -> dict[str, Any]:
        """Choices and calibration provenance, for result files."""
        return {
            "name": self.name,
            "choices": self.choices,
            "overall": list(self.overall),
            "calibration_source": self.calibration_source,
            "calibration_tasks": len(self.calibration_task_ids),
        }

    @classmethod
    def from_spec(cls, **kwargs: Any) -> BestSingle:
        """``make_agent("best-single", ...)``: with ``ranking``/``overall`` a ready agent,
        otherwise :meth:`calibrate` with ``kwargs`` (``env``, ``tasks``, ...)."""
        if "ranking" in kwargs or "overall" in kwargs:
            return cls(**kwargs)
        return cls.calibrate(**kwargs)

    @classmethod
    def calibrate(
        cls,
        env: ConductorEnv | gym.Env[str, str] | Mapping[str, Any] | None = None,
        *,
        tasks: TaskSource | None = None,
        episodes_per_worker: int = 200,
        seed: int = 0,
    ) -> BestSingle:
        """Measure every worker on calibration tasks and return the calibrated agent.

        Args:
            env: The evaluation's ``ConductorEnv`` (or a wrapper of one), or the keyword
                arguments it is built with (default ``{}``: ``offline`` on
                ``sim-paper``). Its pool and settings are used; its *tasks* are the test
                split and are never run: a new env over ``tasks`` shares its pool.
            tasks: The calibration split. Default: the disjoint procedural split of the
                env's test source (only for procedural sources).
            episodes_per_worker: Calibration tasks, taken in order (so balanced across
                domains); each runs once on every worker of its episode's draw (with
                ``k < n`` a worker sees about ``k / n`` of them).
            seed: Seed of the first calibration episode (task ``i`` uses ``seed + i``).
        """
        if isinstance(episodes_per_worker, bool) or not isinstance(episodes_per_worker, int):
            raise ConfigurationError("best-single: episodes_per_worker must be an int >= 1")
        if episodes_per_worker < 1:
            raise ConfigurationError("best-single: episodes_per_worker must be an int >= 1")
        calib_env, test = _calibration_env(env, tasks)
        calib_tasks = calib_env.tasks
        _check_disjoint(calib_tasks, test)
        counts: dict[str, dict[str, list[int]]] = {}
        seen: set[str] = set()
        try:
            for i in range(episodes_per_worker):
                options = {"task_index": i % len(calib_tasks)}
                obs, info = calib_env.reset(seed=seed + i, options=options)
                seen.add(str(info["task_id"]))
                for worker in range(int(info["num_workers"])):
                    if worker == info.get("self_worker_id"):
                        continue
                    obs, info = calib_env.reset(seed=seed + i, options=options)
                    result = calib_env.step(SingleWorker(worker).act(obs, info))
                    if result[3]:  # truncated: an infrastructure failure, not a score
                        continue
                    cell = counts.setdefault(str(info["domain"]), {}).setdefault(
                        str(info["pool"][worker]), [0, 0]
                    )
                    cell[0] += result[4]["outcome"] == Outcome.CORRECT
                    cell[1] += 1
        finally:
            calib_env.close()
        if not counts:
            raise RuntimeError("best-single: calibration scored no episode (every one failed)")
        order = [spec.name for spec in calib_env.pool.specs]
        totals: dict[str, list[int]] = {}
        for per_name in counts.values():
            for name, (correct, n) in per_name.items():
                total = totals.setdefault(name, [0, 0])
                total[0] += correct
                total[1] += n
        agent = cls(
            {domain: _rank(per_name, order) for domain, per_name in counts.items()},
            _rank(totals, order),
        )
        agent.scores = {
            domain: {name: (c, n) for name, (c, n) in per_name.items()}
            for domain, per_name in counts.items()
        }
        agent.calibration_task_ids = frozenset(seen)
        agent.calibration_source = (calib_tasks.name, calib_tasks.fingerprint())
        return agent

    def plan(self, info: Mapping[str, Any]) -> Plan:
        pool = list(info["pool"])
        self_id = info.get("self_worker_id")
        ranked = self.ranking.get(str(info.get("domain")), self.overall)
        for name in (*ranked, *self.overall):
            if name in pool and pool.index(name) != self_id:
                worker = pool.index(name)
                return Plan((worker,), (SOLVE.format(question=info["question"]),), ((),))
        raise ConfigurationError(
            f"best-single: none of the calibrated workers {list(self.overall)} is in this "
            f"episode's pool {pool}; calibrate on the pool you evaluate"
        )


def _rank(counts: Mapping[str, Sequence[int]], order: Sequence[str]) -> tuple[str, ...]:
    """Names by accuracy, then episodes, then pool order."""
    position = {name: i for i, name in enumerate(order)}
    return tuple(
        sorted(
            counts,
            key=lambda name: (
                -counts[name][0] / counts[name][1],
                -counts[name][1],
                position.get(name, len(position)),
            ),
        )
    )


def _calibration_env(
    env: ConductorEnv | gym.Env[str, str] | Mapping[str, Any] | None,
    tasks: TaskSource | None,
) -> tuple[ConductorEnv, TaskSource]:
    """A new env over the calibration tasks with the evaluation's pool and settings, and
    the test source."""
    if env is None or isinstance(env, Mapping):
        kwargs = dict(env or {})
        test = _as_source(kwargs.pop("tasks", "offline"))
        if tasks is None:
            tasks = calibration_split_for(test)
        return ConductorEnv(tasks=tasks, **kwargs), test
    base = env.unwrapped
    if not isinstance(base, ConductorEnv):
        raise ConfigurationError(
            f"best-single: env must be a ConductorEnv or its kwargs, got {env!r}"
        )
    if tasks is None:
        tasks = calibration_split_for(base.tasks)
    built = ConductorEnv(
        tasks=tasks,
        pool=base.pool,
        reward=base.reward_scheme,
        max_steps=base.max_steps,
        templates=base.templates,
        question_to_all_workers=base.question_to_all_workers,
        max_plan_chars=base.max_plan_chars,
        retry=base.retry,
        episode_budget=base.episode_budget,
    )
    return built, base.tasks


def _as_source(test: TaskSource | str) -> TaskSource:
    return make_task_source(test) if isinstance(test, str) else test


def _check_disjoint(calibration: TaskSource, test: TaskSource) -> None:
    questions = {task.question for task in test}
    shared = sum(task.question in questions for task in calibration)
    if shared:
        raise ConfigurationError(
            f"best-single: the calibration split {calibration.name!r} shares {shared} "
            f"question(s) with the test source {test.name!r}; calibrate on a disjoint split"
        )
