"""Parameter recovery beyond accuracy (:mod:`conductor_gym.simlab.fit`): a simulated pool
with hidden per-worker dynamics (relay, claims pull, check scale, task correlation) and a
hidden cost model (tokens per profile and their spread, latency) records single calls,
cross-checks, restatements and plans with asserted answers; the fit recovers each hidden
number within stated bounds, and its error shrinks with more episodes.

The experiment is :func:`conductor_gym.simlab.fit_recovery.run_recovery`, the run whose
figures ``docs/bring-your-own-pool.md`` quotes: the last test checks that the doc holds
exactly what ``docs/figures/simfit_figures.py`` prints for this run."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from support import docs_figures_build

from conductor_gym.simlab.fit import FittedPool
from conductor_gym.simlab.fit_recovery import (
    HELD_OUT,
    HIDDEN,
    LATENCY,
    TASKS,
    TOKENS,
    Recovery,
    dynamics_errors,
    mean,
    run_recovery,
)

ROOT = Path(__file__).resolve().parents[2]

# How close each recovered number must come (in its own standard errors, or absolutely).
BOUND_SE = 3.5  # relay, claims pull, task correlation: within 3.5 SE (12 numbers at once)
# check scale: the hidden value inside the reported 95% interval; where the checks identify
# it (its SE below 0.3: a checker whose keep rate is not saturated, here w1) within 3 SE.
# A strong checker's accuracy hardly moves with the scale, so its interval is wide.
TOKENS_REL = 0.12  # mean tokens per profile: within 12%; token spread within 0.06
LATENCY_REL = 0.02  # latency model: within 2% (the simulator's latency is exact)


@pytest.fixture(scope="module")
def recovery() -> Recovery:
    return run_recovery()


@pytest.fixture(scope="module")
def fitted(recovery: Recovery) -> FittedPool:
    return recovery.large


def test_recovers_hidden_dynamics_within_bounds(fitted: FittedPool) -> None:
    print(fitted.format())  # the estimates (pytest -s)
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
        for profile, tokens in TOKENS[w.name].items():
            assert w.tokens[profile].value == pytest.approx(tokens, rel=TOKENS_REL), (
                w.name,
                profile,
            )
        base, tps = LATENCY[w.name]
        assert w.latency_base_s is not None and w.tokens_per_s is not None
        assert w.latency_base_s.value == pytest.approx(base, rel=LATENCY_REL, abs=0.01)
        assert w.tokens_per_s.value == pytest.approx(tps, rel=LATENCY_REL)
        assert w.checks["keep | right shown"].n > 0
    assert fitted.workers[1].dynamics["check_scale"].se < 0.3  # w1's scale is identified


def test_error_shrinks_with_more_episodes(recovery: Recovery) -> None:
    small, large = mean(dynamics_errors(recovery.small)), mean(dynamics_errors(recovery.large))
    print(f"mean |error| over 12 dynamics: {small:.4f} at {TASKS // 4} tasks, "
          f"{large:.4f} at {TASKS}")  # fmt: skip
    assert large < small


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


def test_fidelity_scores_plan_effects_on_held_out_tasks(recovery: Recovery) -> None:
    good, prior = recovery.fitted, recovery.priors  # tasks the fits never saw
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
    assert good.episodes == prior.episodes == 12 * HELD_OUT
    assert good.effects_agreeing == len(good.effects)
    assert good.score < prior.score


@pytest.mark.parametrize("name", ["simfit-recovery", "simfit-cost"])
def test_the_doc_quotes_this_run(recovery: Recovery, name: str) -> None:
    # run_recovery is computed once per process: the generator formats this very run
    b = docs_figures_build().block(name)
    assert b.current((ROOT / b.doc).read_text()) == b.generate(), (
        f"regenerate with python docs/figures/build.py {name}"
    )
