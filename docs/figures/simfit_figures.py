"""The figures of ``docs/bring-your-own-pool.md``, "How many episodes, and what they cost":
one run of :func:`conductor_gym.simlab.fit_recovery.run_recovery` (simulated and
seeded, so the same on every machine), the run whose
bounds ``tests/simlab/test_fit_dynamics.py`` asserts. That test also checks that the doc
holds what these generators print.

* :func:`recovery_block` (``simfit-recovery``): the error table at ``TASKS // 4`` and
  ``TASKS`` tasks, the recovered numbers and the held-out fidelity of the fitted pool and
  of its priors;
* :func:`cost_block` (``simfit-cost``): the calls, tokens and dollars of recording that
  design, at the simulator's price table for the workers' profiles
  (:data:`conductor_gym.sim.profiles.PAPER_PROFILES`).

``python -m conductor_gym.simlab.fit_recovery`` prints the fit itself.
"""

from __future__ import annotations

import math

from conductor_gym.bench.readme_figures import StaleProseError, wrap
from conductor_gym.sim.profiles import PAPER_PROFILES
from conductor_gym.simlab.fit_recovery import (
    ACCURACY,
    DYNAMICS,
    HELD_OUT,
    HIDDEN,
    MODEL,
    PLANS,
    TASKS,
    Recovery,
    accuracy_errors,
    dynamics_errors,
    mean,
    run_recovery,
)

RECOVERY_HEAD = "| tasks per run (`n`) | episodes in all | mean abs. error |\n|---|---|---|"
IDENTIFIED_SE = 0.3
"""A check scale with a smaller SE is identified (the test's bound)."""
NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _max_error(errors: dict[str, list[float]], *names: str) -> float:
    return max(v for name in names for v in errors[name])


def _check_scales(run: Recovery) -> str:
    """The identified check scales against their hidden values, then the others'
    intervals."""
    identified, whole, partly = [], [], []
    for w in run.large.workers:
        est, true = w.dynamics["check_scale"], HIDDEN[w.name]["check_scale"]
        if est.se < IDENTIFIED_SE:
            identified.append(f"{w.name}'s `check_scale` {est.value:.2f} for a hidden {true:g}")
        elif (est.low, est.high) == (0.0, 4.0):
            whole.append((w.name, true))
        else:
            partly.append(f"{w.name}'s {est.low:.2f} to {est.high:.2f} (hidden {true:g})")
    if not identified:
        raise StaleProseError("no worker's check_scale is identified (SE below 0.3)")
    text = ", ".join(identified)
    if whole:
        names = " and ".join(f"{name}'s" for name, _ in whole)
        hidden = " and ".join(f"{true:g}" for _, true in whole)
        text += (
            f", while {names} intervals (hidden {hidden}) span the whole range, 0 to 4: "
            "strong checkers"
        )
    if partly:
        text += "; the interval of " + ", ".join(partly)
    return text


def _accuracy(run: Recovery) -> str:
    """The accuracy's mean error against its binomial SE, at both sizes."""
    parts = []
    for tasks, pool in ((TASKS, run.large), (TASKS // 4, run.small)):
        error = 100 * mean(accuracy_errors(pool))
        se = 100 * mean(
            [
                math.sqrt(p * (1 - p) / w.accuracy[profile].n)
                for w in pool.workers
                for profile, p in ACCURACY[w.name].items()
            ]
        )
        if error > 2 * se:
            raise StaleProseError(f"accuracy at {tasks} tasks errs {error:.2f} > 2 x {se:.2f}")
        parts.append((tasks, error, se))
    (big, e1, s1), (small, e2, s2) = parts
    return (
        f"accuracy within its binomial error: a mean error of {e1:.2f} points at {big} tasks, "
        f"where `sqrt(p(1-p)/n)` averages {s1:.2f} ({e2:.2f} against {s2:.2f} at {small} tasks)"
    )


def recovery_block() -> str:
    """The ``simfit-recovery`` block: table, recovered numbers, held-out fidelity."""
    run = run_recovery()
    small, large = dynamics_errors(run.small), dynamics_errors(run.large)
    if mean(large) >= mean(small):
        raise StaleProseError("the dynamics' error does not shrink with more episodes")
    rows = [
        f"| {n} | {run.episodes(n):,} | {mean(errors):.4f} |"
        for n, errors in ((TASKS // 4, small), (TASKS, large))
    ]
    claims = sorted({w.dynamics["claim_pull"].n for w in run.large.workers})
    claim_steps = str(claims[0]) if len(claims) == 1 else f"{claims[0]}-{claims[-1]}"
    corr_se = mean([w.dynamics["task_correlation"].se for w in run.large.workers])
    good, prior = run.fitted, run.priors
    if good.score >= prior.score:
        raise StaleProseError("the fitted pool does not score better than its priors")
    shapes = len(good.effects)
    signs, sizes = good.effects_agreeing, sum(e.within for e in good.effects)
    if signs == sizes == shapes:
        agree = (
            f"all {NUMBER_WORDS.get(shapes, shapes)} plan shapes' effects agree in sign and size"
        )
    else:
        agree = f"of {shapes} plan shapes' effects {signs} agree in sign and {sizes} in size"
    text = (
        f"At {TASKS} tasks relay comes within {_max_error(large, 'relay'):.2f} of its hidden "
        f"value, claims pull within "
        f"{_max_error(large, 'claim_pull', 'claim_pull_checkable'):.2f} ({claim_steps} claim "
        f"steps per worker and class), task correlation within "
        f"{_max_error(large, 'task_correlation'):.2f} (its SE is about {corr_se:.1f}: three "
        f"workers pin the one-factor model loosely); {_check_scales(run)}; {_accuracy(run)}. "
        f"On {HELD_OUT} held-out tasks ({good.episodes:,} episodes) the fitted pool "
        f"scores {good.score:.2f} points (Brier {good.brier:.4f}), the same accuracies with "
        f"every dynamics parameter at its prior {prior.score:.2f} points (Brier "
        f"{prior.brier:.4f}), and {agree}."
    )
    if len(DYNAMICS) * len(run.large.workers) != 12:
        raise StaleProseError("the doc's table averages 12 dynamics numbers")
    return "\n".join([RECOVERY_HEAD, *rows]) + "\n\n" + wrap(text)


def cost_block() -> str:
    """The ``simfit-cost`` block: what recording the design at ``TASKS`` tasks took."""
    run = run_recovery()
    workers = len(run.large.workers)
    calls = int(run.total("worker_calls"))
    expected = TASKS * workers * sum(PLANS.values())
    if calls != expected:
        raise StaleProseError(f"the design made {calls} calls, not {expected}")
    per_plan = " + ".join(str(c) for c in PLANS.values())
    prices = ", ".join(
        f"{model} ${PAPER_PROFILES[model].price_in_per_mtok:.2f} in / "
        f"${PAPER_PROFILES[model].price_out_per_mtok:.2f} out"
        for model in MODEL.values()
    )
    text = (
        f"The recovery design at {TASKS} tasks, {TASKS} x {workers} workers x ({per_plan} "
        f"calls) = {calls:,} calls, recorded {int(run.total('completion_tokens')):,} "
        f"completion and {int(run.total('prompt_tokens')):,} prompt tokens; at the "
        f"simulator's prices for its workers' profiles ({prices} per million tokens) it "
        f"cost ${run.total('cost_usd'):,.2f}."
    )
    return wrap(text)


GENERATORS = {"simfit-recovery": recovery_block, "simfit-cost": cost_block}
"""Block name -> generator."""
