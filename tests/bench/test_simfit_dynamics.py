"""Parameter recovery beyond accuracy (:mod:`conductor_gym.bench.simfit`): a simulated pool
with hidden per-worker dynamics (relay, claims pull, check scale, task correlation) and a
hidden cost model (tokens per profile and their spread, latency) records single calls,
self-checks, restatements and plans with asserted answers; the fit recovers each hidden
number within stated bounds, and its error shrinks with more episodes."""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import Results
from conductor_gym.bench.simfit import FittedPool, fit
from conductor_gym.bench.suites import get_suite
from conductor_gym.core.agent import BaseAgent
from conductor_gym.plan import Plan

ACCURACY = {
    "w0": {"math500": 0.55, "mmlu": 0.70, "rlpr": 0.50, "livecodebench": 0.35},
    "w1": {"math500": 0.60, "mmlu": 0.45, "rlpr": 0.30, "livecodebench": 0.20},
    "w2": {"math500": 0.80, "mmlu": 0.65, "rlpr": 0.35, "livecodebench": 0.50},
}
MODEL = {"w0": "gpt-5", "w1": "gemma-3-27b-it", "w2": "qwen3-32b-direct"}
HIDDEN: dict[str, dict[str, float]] = {
    "w0": {"relay": 0.85, "claim_pull": 0.60, "claim_pull_checkable": 0.10,
           "check_scale": 1.6, "task_correlation": 0.30, "token_sigma": 0.4},
    "w1": {"relay": 0.70, "claim_pull": 0.20, "claim_pull_checkable": 0.50,
           "check_scale": 0.3, "task_correlation": 0.80, "token_sigma": 0.2},
    "w2": {"relay": 0.95, "claim_pull": 0.45, "claim_pull_checkable": 0.30,
           "check_scale": 0.8, "task_correlation": 0.55, "token_sigma": 0.3},
}  # fmt: skip
TOKENS = {"w0": {"math500": 300.0, "mmlu": 120.0}, "w1": {"math500": 200.0}, "w2": {}}
LATENCY = {"w0": (0.3, 50.0), "w1": (1.5, 20.0), "w2": (0.1, 100.0)}
TASKS = 400  # offline tasks per run, 100 per family (the error-curve run uses a quarter)

# How close each recovered number must come (in its own standard errors, or absolutely).
BOUND_SE = 3.5  # relay, claims pull, task correlation: within 3.5 SE (12 numbers at once)
# check scale: the hidden value inside the reported 95% interval; where the checks identify
# it (its SE below 0.3: a checker whose keep rate is not saturated, here w1) within 3 SE.
# A strong checker's accuracy hardly moves with the scale, so its interval is wide.
TOKENS_REL = 0.12  # mean tokens per profile: within 12%; token spread within 0.06
LATENCY_REL = 0.02  # latency model: within 2% (the simulator's latency is exact)


def _pool_file(path: Path) -> Path:
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
    path.write_text("\n".join(lines))
    return path


class PlanAgent(BaseAgent):
    """Writes one fixed kind of plan for worker ``worker`` (a test plan writer)."""

    def __init__(self, kind: str, worker: int) -> None:
        super().__init__()
        self.kind, self.worker = kind, worker
        self.name = f"{kind}:{worker}"
        self.tasks = get_suite("offline").sources["offline"]

    def act(self, observation: str, info: Mapping[str, Any]) -> str:
        q, w, other = info["question"], self.worker, (self.worker + 1) % 3
        solve = f"Solve the following problem and end your reply with the final answer.\n\n{q}"
        if self.kind == "crosscheck":  # the other two solve, this one checks both
            check = "Check the answers shown above and give the right final answer."
            plan = Plan((other, (w + 2) % 3, w), (solve, solve, f"{check}\n\n{q}"), ((), (), "all"))
        elif self.kind == "restate":
            plan = Plan((other, w), (solve, "Restate the final answer shown above."), ((), (0,)))
        else:  # claims: right on even task indices, wrong on odd ones
            task = self.tasks[int(info["task_index"])]
            claim = _claim(task.domain, task.reference, right=info["task_index"] % 2 == 0)
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


def _record(pool: Path, limit: int) -> list[Results]:
    agents: list[Any] = [f"single:{i}" for i in range(3)]
    agents += [PlanAgent(kind, i) for kind in ("crosscheck", "restate", "claims") for i in range(3)]
    return [
        evaluate(a, "offline", repeats=1, limit=limit, seed=0, progress=False, pool=str(pool))
        for a in agents
    ]


@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _pool_file(tmp_path_factory.mktemp("simfit-dyn") / "hidden.toml")


@pytest.fixture(scope="module")
def fitted(hidden: Path) -> FittedPool:
    return fit(_record(hidden, TASKS))


def _errors(pool: FittedPool) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for w in pool.workers:
        for name in ("relay", "claim_pull", "claim_pull_checkable", "task_correlation"):
            out.setdefault(name, []).append(abs(w.dynamics[name].value - HIDDEN[w.name][name]))
    return out


def test_recovers_hidden_dynamics_within_bounds(fitted: FittedPool) -> None:
    print(fitted.format())  # the estimates the docs quote (pytest -s)
    for w in fitted.workers:
        for name in ("relay", "claim_pull", "claim_pull_checkable", "task_correlation"):
            est, true = w.dynamics[name], HIDDEN[w.name][name]
            assert est.written and abs(est.value - true) <= BOUND_SE * est.se, (w.name, name, est)
        scale, true = w.dynamics["check_scale"], HIDDEN[w.name]["check_scale"]
        assert scale.low <= true <= scale.high, (w.name, scale)
        if scale.se < 0.3:
            assert abs(scale.value - true) <= 3 * scale.se, (w.name, scale)
        assert w.dynamics["token_sigma"].value == pytest.approx(
            HIDDEN[w.name]["token_sigma"], abs=0.06
        )
        for profile, mean in TOKENS[w.name].items():
            assert w.tokens[profile].value == pytest.approx(mean, rel=TOKENS_REL), (w.name, profile)
        base, tps = LATENCY[w.name]
        assert w.latency_base_s is not None and w.tokens_per_s is not None
        assert w.latency_base_s.value == pytest.approx(base, rel=LATENCY_REL, abs=0.01)
        assert w.tokens_per_s.value == pytest.approx(tps, rel=LATENCY_REL)
        assert w.checks["keep | right shown"].n > 0
    assert fitted.workers[1].dynamics["check_scale"].se < 0.3  # w1's scale is identified


def test_error_shrinks_with_more_episodes(hidden: Path, fitted: FittedPool) -> None:
    small = _errors(fit(_record(hidden, TASKS // 4)))
    large = _errors(fitted)
    mean_small = sum(sum(v) for v in small.values()) / sum(len(v) for v in small.values())
    mean_large = sum(sum(v) for v in large.values()) / sum(len(v) for v in large.values())
    print(f"mean |error| over 12 dynamics: {mean_small:.4f} at {TASKS // 4} tasks, "
          f"{mean_large:.4f} at {TASKS}")  # fmt: skip
    assert mean_large < mean_small


def test_fitted_pool_file_carries_the_dynamics(fitted: FittedPool, tmp_path: Path) -> None:
    from conductor_gym.pool.config import load_pool_file
    from conductor_gym.sim.worker import make_simulated_worker

    path = tmp_path / "fitted.toml"
    fitted.to_toml(path)
    worker = make_simulated_worker(load_pool_file(path).specs[0])
    assert math.isclose(
        worker.dynamics.relay, fitted.workers[0].dynamics["relay"].value, abs_tol=1e-6
    )
    assert worker.tokens and worker.profile.tokens_per_s > 0


def test_fidelity_scores_plan_effects_on_held_out_tasks(
    hidden: Path, fitted: FittedPool, tmp_path: Path
) -> None:
    from conductor_gym.bench.simfit import fidelity

    path = tmp_path / "fitted.toml"
    fitted.to_toml(path)
    priors = tmp_path / "priors.toml"  # the same accuracies, every dynamics at its prior
    text = path.read_text().splitlines()
    priors.write_text(
        "\n".join(
            line.split(', "dynamics" = ')[0] + " }" if '"dynamics"' in line else line
            for line in text
        )
    )
    held = [  # tasks the fit never saw (the simulator correlates repeats of one task)
        run.model_copy(update={"episodes": [e for e in run.episodes if e.task_index >= TASKS]})
        for run in _record(hidden, TASKS + 80)
    ]
    good, prior = fidelity(path, held, seeds=2), fidelity(priors, held, seeds=2)
    print(good.format())
    print(f"fitted pool {good.score:.2f} points, Brier {good.brier:.4f}; priors "
          f"{prior.score:.2f} points, Brier {prior.brier:.4f}")  # fmt: skip
    shapes = {e.shape for e in good.effects}  # two solvers agreeing show one answer
    assert shapes == {
        "3 steps, last check of 2",
        "3 steps, last check of 1",
        "2 steps, last relay of 1",
        "1 steps, last claim",
    }
    assert good.episodes == prior.episodes == 12 * 80
    assert good.effects_agreeing == len(good.effects)
    assert good.score < prior.score
