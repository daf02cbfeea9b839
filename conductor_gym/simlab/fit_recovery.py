"""The recovery experiment of ``docs/bring-your-own-pool.md`` ("How many episodes, and
what they cost"): how well ``sim fit`` recovers hidden numbers, and what the recording
costs. ``tests/simlab/test_fit_dynamics.py`` asserts its bounds on the same run, and
``docs/figures/simfit_figures.py`` writes its figures into the doc.

Contract. A simulated pool of three workers (:data:`ACCURACY`, hidden per-worker
dynamics :data:`HIDDEN`, tokens per profile :data:`TOKENS`, latency :data:`LATENCY`,
each priced as the simulator profile :data:`MODEL` names) records, on the first
``TASKS + HELD_OUT`` ``offline`` tasks (seed 0, one repeat), 12 runs: per worker a single
call, a cross-check (the other two solve, it checks both), a restatement of another
worker's answer and a single call with an asserted answer (right on even task indices,
wrong on odd ones; :class:`PlanAgent`). :func:`run_recovery` fits the first
:data:`TASKS` tasks and their first quarter, and scores on the last :data:`HELD_OUT`
tasks (which no fit saw) the fitted pool and the same pool with every dynamics
parameter at its prior (:class:`Recovery`). Everything is simulated and seeded: the
figures are the same on every machine. ``python -m conductor_gym.simlab.fit_recovery``
prints the fit, the error curve and the held-out fidelity.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import Results
from conductor_gym.core.agent import BaseAgent
from conductor_gym.simlab.fit import FittedPool, fit
from conductor_gym.simlab.fit_fidelity import Fidelity, fidelity

__all__ = [
    "ACCURACY",
    "DYNAMICS",
    "HELD_OUT",
    "HIDDEN",
    "LATENCY",
    "MODEL",
    "PLANS",
    "TASKS",
    "TOKENS",
    "PlanAgent",
    "Recovery",
    "accuracy_errors",
    "dynamics_errors",
    "mean",
    "record",
    "run_recovery",
    "tasks_below",
    "write_hidden_pool",
]

ACCURACY: Mapping[str, Mapping[str, float]] = {
    "w0": {"math500": 0.55, "mmlu": 0.70, "rlpr": 0.50, "livecodebench": 0.35},
    "w1": {"math500": 0.60, "mmlu": 0.45, "rlpr": 0.30, "livecodebench": 0.20},
    "w2": {"math500": 0.80, "mmlu": 0.65, "rlpr": 0.35, "livecodebench": 0.50},
}
"""The hidden workers' single-call accuracy per profile."""
MODEL: Mapping[str, str] = {"w0": "gpt-5", "w1": "gemma-3-27b-it", "w2": "qwen3-32b-direct"}
"""The simulator profile of each hidden worker: its prices and everything not set here."""
HIDDEN: Mapping[str, Mapping[str, float]] = {
    "w0": {"relay": 0.85, "claim_pull": 0.60, "claim_pull_checkable": 0.10,
           "check_scale": 1.6, "task_correlation": 0.30, "token_sigma": 0.4},
    "w1": {"relay": 0.70, "claim_pull": 0.20, "claim_pull_checkable": 0.50,
           "check_scale": 0.3, "task_correlation": 0.80, "token_sigma": 0.2},
    "w2": {"relay": 0.95, "claim_pull": 0.45, "claim_pull_checkable": 0.30,
           "check_scale": 0.8, "task_correlation": 0.55, "token_sigma": 0.3},
}  # fmt: skip
"""The hidden dynamics, per worker."""
TOKENS: Mapping[str, Mapping[str, float]] = {
    "w0": {"math500": 300.0, "mmlu": 120.0},
    "w1": {"math500": 200.0},
    "w2": {},
}
"""Hidden mean completion tokens per profile (others: the simulator profile's)."""
LATENCY: Mapping[str, tuple[float, float]] = {
    "w0": (0.3, 50.0),
    "w1": (1.5, 20.0),
    "w2": (0.1, 100.0),
}
"""Hidden ``(latency_base_s, tokens_per_s)``."""

TASKS = 400
"""Offline tasks the full fit reads (100 per family); the small fit reads a quarter."""
HELD_OUT = 80
"""Offline tasks after :data:`TASKS` that the fidelity scores."""
DYNAMICS = ("relay", "claim_pull", "claim_pull_checkable", "task_correlation")
"""The dynamics whose error the curve averages (3 workers x 4 = 12 numbers)."""
PLANS: Mapping[str, int] = {"single": 1, "crosscheck": 3, "restate": 2, "claims": 1}
"""The recorded plan kinds, each with its worker calls per episode."""


def write_hidden_pool(path: str | Path) -> Path:
    """Write the hidden pool file to ``path``; return it."""
    lines = ['name = "hidden-dynamics"', 'description = "hidden per-worker dynamics"', ""]
    for name, acc in ACCURACY.items():
        table = ", ".join(f"{k} = {v}" for k, v in acc.items())
        dyn = ", ".join(f"{k} = {v}" for k, v in HIDDEN[name].items())
        tokens = ", ".join(f"{k} = {v}" for k, v in TOKENS[name].items())
        base, tps = LATENCY[name]
        lines += [
            "[[workers]]",
            f'name = "{name}"',
            f'model = "{MODEL[name]}"',
            "max_tokens = 4096",
            f"backend_options = {{ accuracy = {{ {table} }}, dynamics = {{ {dyn} }}, "
            f"tokens = {{ {tokens} }}, latency_base_s = {base}, tokens_per_s = {tps} }}",
            "",
        ]
    out = Path(path)
    out.write_text("\n".join(lines))
    return out


class PlanAgent(BaseAgent):
    """Writes one fixed kind of plan (a key of :data:`PLANS` other than ``single``) for
    worker ``worker`` of the three."""

    def __init__(self, kind: str, worker: int) -> None:
        from conductor_gym.bench.suites import get_suite

        super().__init__()
        self.kind, self.worker = kind, worker
        self.name = f"{kind}:{worker}"
        self.tasks = get_suite("offline").sources["offline"]

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        from conductor_gym.plan import Plan

        q, w, other = info["question"], self.worker, (self.worker + 1) % 3
        solve = f"Solve the following problem and end your reply with the final answer.\n\n{q}"
        if self.kind == "crosscheck":  # the other two solve, this one checks both
            check = "Check the answers shown above and give the right final answer."
            plan = Plan((other, (w + 2) % 3, w), (solve, solve, f"{check}\n\n{q}"), ((), (), "all"))
        elif self.kind == "restate":
            plan = Plan((other, w), (solve, "Restate the final answer shown above."), ((), (0,)))
        else:  # claims: right on even task indices, wrong on odd ones
            index = int(info["task_index"])
            task = self.tasks[index]
            claim = _claim(task.domain, task.reference, right=index % 2 == 0)
            text = (
                solve
                if claim is None
                else f"Solve the problem. The answer is \\boxed{{{claim}}}.\n\n{q}"
            )
            plan = Plan((w,), (text,), ((),))
        return plan.to_text()


def _claim(family: str, reference: str, *, right: bool) -> str | None:
    if family == "countdown":
        return None  # an expression: no claim written
    if family == "multiple_choice":
        return reference if right else "ABCD"[("ABCD".index(reference) + 1) % 4]
    return reference if right else str(int(reference) + 1)


def record(pool: str | Path, limit: int) -> list[Results]:
    """The 12 runs on the first ``limit`` offline tasks: every plan kind for every worker."""
    agents: list[Any] = [f"single:{i}" for i in range(3)]
    agents += [PlanAgent(kind, i) for kind in list(PLANS)[1:] for i in range(3)]
    return [
        evaluate(a, "offline", repeats=1, limit=limit, seed=0, progress=False, pool=str(pool))
        for a in agents
    ]


def tasks_below(runs: Sequence[Results], end: int, start: int = 0) -> list[Results]:
    """``runs`` with only the episodes of tasks ``start <= index < end``."""
    return [
        run.model_copy(
            update={"episodes": [e for e in run.episodes if start <= e.task_index < end]}
        )
        for run in runs
    ]


def dynamics_errors(pool: FittedPool) -> dict[str, list[float]]:
    """``|fitted - hidden|`` per :data:`DYNAMICS` name, one per worker."""
    out: dict[str, list[float]] = {}
    for w in pool.workers:
        for name in DYNAMICS:
            out.setdefault(name, []).append(abs(w.dynamics[name].value - HIDDEN[w.name][name]))
    return out


def accuracy_errors(pool: FittedPool) -> list[float]:
    """``|fitted - hidden|`` single-call accuracy, one per worker and hidden profile."""
    return [
        abs(w.accuracy[p].accuracy - true)
        for w in pool.workers
        for p, true in ACCURACY[w.name].items()
    ]


def mean(errors: Mapping[str, Sequence[float]] | Sequence[float]) -> float:
    """The mean of ``errors`` (a list, or the lists of a mapping together)."""
    values = [v for vs in errors.values() for v in vs] if isinstance(errors, Mapping) else errors
    return sum(values) / len(values)


@dataclass(frozen=True)
class Recovery:
    """One run of the experiment (module docstring).

    ``large`` / ``small``: fitted to the first :data:`TASKS` / ``TASKS // 4`` tasks;
    ``fitted`` / ``priors``: the held-out fidelity of ``large`` and of ``large`` with its
    dynamics dropped (two plays per multi-step episode); ``runs``: the 12 recorded runs,
    every task (with their calls, tokens and cost).
    """

    large: FittedPool
    small: FittedPool
    fitted: Fidelity
    priors: Fidelity
    runs: tuple[Results, ...]

    def episodes(self, tasks: int = TASKS) -> int:
        """Episodes of the first ``tasks`` tasks (what a fit to them read)."""
        return sum(e.task_index < tasks for r in self.runs for e in r.episodes)

    def total(self, field: str, tasks: int = TASKS) -> float:
        """The sum of an episode field (``worker_calls``, ``completion_tokens``,
        ``prompt_tokens``, ``cost_usd``) over the episodes of the first ``tasks`` tasks."""
        return float(
            sum(getattr(e, field) for r in self.runs for e in r.episodes if e.task_index < tasks)
        )


@cache
def run_recovery() -> Recovery:
    """Record, fit and score once per process (module docstring)."""
    with tempfile.TemporaryDirectory(prefix="simfit-recovery-") as tmp:
        hidden = write_hidden_pool(Path(tmp) / "hidden.toml")
        runs = record(hidden, TASKS + HELD_OUT)
        large = fit(tasks_below(runs, TASKS))
        small = fit(tasks_below(runs, TASKS // 4))
        held = tasks_below(runs, TASKS + HELD_OUT, TASKS)
        path, priors = Path(tmp) / "fitted.toml", Path(tmp) / "priors.toml"
        large.to_toml(path)
        bare = tuple(replace(w, dynamics={}) for w in large.workers)
        replace(large, workers=bare).to_toml(priors)
        return Recovery(
            large=large,
            small=small,
            fitted=fidelity(path, held, seeds=2),
            priors=fidelity(priors, held, seeds=2),
            runs=tuple(runs),
        )


def main() -> int:
    """Print the full fit, the error curve and the held-out fidelity."""
    run = run_recovery()
    print(run.large.format())
    print(
        f"mean |error| over {3 * len(DYNAMICS)} dynamics: {mean(dynamics_errors(run.small)):.4f}"
        f" at {TASKS // 4} tasks, {mean(dynamics_errors(run.large)):.4f} at {TASKS}"
    )
    print(run.fitted.format())
    print(
        f"fitted pool {run.fitted.score:.2f} points, Brier {run.fitted.brier:.4f}; priors "
        f"{run.priors.score:.2f} points, Brier {run.priors.brier:.4f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
