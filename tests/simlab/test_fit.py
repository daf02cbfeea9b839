"""Fitting a simulated pool to recorded episodes (:mod:`conductor_gym.simlab.fit`): a
parameter-recovery test on a pool with hidden, perturbed accuracies, the fitted pool file
loading in the env, fidelity on held-out seeds, and the ``sim fit`` / ``sim fidelity``
commands."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from conductor_gym import ConductorEnv
from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import Results
from conductor_gym.cli.main import main
from conductor_gym.sim.profiles import PAPER_PROFILES
from conductor_gym.simlab.fit import SimFitError, fidelity, fit, wilson_interval

# The hidden parameters: per worker, single-call accuracy per profile, far from the paper's.
TRUE = {
    "w0": ("gpt-5", {"math500": 0.55, "mmlu": 0.70, "rlpr": 0.50, "livecodebench": 0.35}),
    "w1": ("gemma-3-27b-it", {"math500": 0.60, "mmlu": 0.45, "rlpr": 0.30, "livecodebench": 0.20}),
    "w2": ("qwen3-32b-direct", {"math500": 0.90, "mmlu": 0.65, "rlpr": 0.15, "livecodebench": 0.5}),
}
TASKS = 640  # offline tasks per run: 160 per family, 4 families
BOUND_SE = 3.0  # every recovered accuracy within 3 binomial SE (12 cells at once)


def _pool_file(path: Path) -> Path:
    lines = ['name = "hidden"', 'description = "perturbed accuracies"', ""]
    for name, (model, acc) in TRUE.items():
        table = ", ".join(f"{k} = {v}" for k, v in acc.items())
        lines += [
            "[[workers]]",
            f'name = "{name}"',
            f'model = "{model}"',
            f"backend_options = {{ accuracy = {{ {table} }} }}",
            "",
        ]
    path.write_text("\n".join(lines))
    return path


def _runs(pool: Path, seed: int, limit: int = TASKS, out: Path | None = None) -> list[Results]:
    return [
        evaluate(
            f"single:{i}",
            "offline",
            repeats=1,
            limit=limit,
            seed=seed,
            progress=False,
            pool=str(pool),
            out=None if out is None else out / f"single{i}-{seed}.json",
        )
        for i in range(len(TRUE))
    ]


@pytest.fixture(scope="module")
def hidden(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _pool_file(tmp_path_factory.mktemp("simfit") / "hidden.toml")


@pytest.fixture(scope="module")
def recorded(hidden: Path) -> list[Results]:
    return _runs(hidden, seed=0)


def _tasks(runs: list[Results], start: int, stop: int) -> list[Results]:
    """The same runs cut to the episodes of tasks ``start`` to ``stop - 1``."""
    return [
        run.model_copy(
            update={"episodes": [e for e in run.episodes if start <= e.task_index < stop]}
        )
        for run in runs
    ]


def _quarter(runs: list[Results]) -> list[Results]:
    """The first quarter of the tasks (160, 40 per family)."""
    return _tasks(runs, 0, TASKS // 4)


def _errors(runs: list[Results]) -> list[tuple[float, float]]:
    fitted = fit(runs)
    out = []
    for worker in fitted.workers:
        for profile, true in TRUE[worker.name][1].items():
            est = worker.accuracy[profile]
            out.append((est.accuracy - true, math.sqrt(true * (1 - true) / est.n)))
    return out


def test_recovers_hidden_accuracies_within_bounds(recorded: list[Results]) -> None:
    fitted = fit(recorded)
    assert [w.name for w in fitted.workers] == list(TRUE)
    assert fitted.used == len(TRUE) * TASKS and fitted.skipped == 0
    for error, se in _errors(recorded):
        assert abs(error) <= BOUND_SE * se, (error, se)
    full = sum(abs(e) for e, _ in _errors(recorded)) / 12
    quarter = sum(abs(e) for e, _ in _errors(_quarter(recorded))) / 12
    assert full < quarter  # the error shrinks with 4x the episodes
    for worker in fitted.workers:  # the simulated backend's prices are recovered exactly
        model = TRUE[worker.name][0]
        assert worker.price_out_per_mtok == pytest.approx(PAPER_PROFILES[model].price_out_per_mtok)
        assert worker.price_in_per_mtok == pytest.approx(PAPER_PROFILES[model].price_in_per_mtok)
        assert worker.base_profile == model
        low, high = worker.accuracy["math500"].interval
        assert low < worker.accuracy["math500"].accuracy < high


def test_fitted_pool_loads_and_beats_the_paper_pool_on_held_out_tasks(
    hidden: Path, recorded: list[Results], tmp_path: Path
) -> None:
    fitted = tmp_path / "fitted.toml"
    fit(_tasks(recorded, 0, TASKS // 2)).to_toml(fitted)
    env = ConductorEnv(pool=str(fitted))
    _, info = env.reset(seed=0)
    assert list(info["pool"]) == list(TRUE)  # Model i is the same worker as recorded
    # Held out: other tasks (the simulator correlates repeats of one task) at another seed.
    held = _tasks(_runs(hidden, seed=1, limit=TASKS // 2 + 160), TASKS // 2, TASKS // 2 + 160)
    paper_as_named = tmp_path / "paper.toml"  # sim-paper's workers under the hidden names
    paper_as_named.write_text(
        'name = "paper"\ndescription = "paper accuracies"\n'
        + "".join(
            f'[[workers]]\nname = "{name}"\nmodel = "{model}"\n'
            for name, (model, _) in TRUE.items()
        )
    )
    truth, fitted_score, paper = (
        fidelity(hidden, held),
        fidelity(fitted, held),
        fidelity(paper_as_named, held),
    )
    assert truth.episodes == fitted_score.episodes == paper.episodes == 3 * 160
    assert truth.score < paper.score and truth.brier < paper.brier
    assert fitted_score.score < paper.score and fitted_score.brier < paper.brier
    cell = next(c for c in truth.cells if c.worker == "w2" and c.family == "arithmetic")
    assert cell.profile == "math500" and cell.n == 40 and not truth.flagged
    # single calls are played with their recorded seeds: the hidden pool, played once per
    # episode, is the recording itself
    again = fidelity(hidden, held, seeds=1)
    assert again.score == 0 and all(c.predicted == c.observed for c in again.cells)


def test_other_plans_are_replayed_and_nothing_to_fit_is_refused(hidden: Path) -> None:
    run = evaluate("moa", "offline", repeats=1, limit=8, seed=0, progress=False, pool=str(hidden))
    fitted = fit([run])  # re-played by the simulator: no single call, but steps
    assert fitted.used == 0 and fitted.traced == 8 and fitted.steps == 8 * 4
    drawn = evaluate(
        "single:0", "offline", repeats=1, limit=8, seed=0, progress=False, pool=str(hidden), k=2
    )  # k of n: the results do not map Model i to a worker, the re-play's trace does
    assert fit([drawn]).traced == 8
    with pytest.raises(SimFitError, match="recorded workers not in the pool: w"):
        fidelity("sim-paper", [drawn])
    real = drawn.model_copy(
        update={
            "workers": [w.model_copy(update={"backend": "litellm"}) for w in drawn.workers or []]
        }
    )  # a real pool's run without its response cache: nothing can be re-played
    with pytest.raises(
        SimFitError, match=r"nothing to fit in 1 results \(8 episodes not re-played"
    ):
        fit([real])
    with pytest.raises(SimFitError, match="no results"):
        fit([])


def test_wilson_interval() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(5, 10)
    assert low == pytest.approx(0.2366, abs=1e-4) and high == pytest.approx(0.7634, abs=1e-4)


def test_cli_fit_and_fidelity(
    hidden: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _runs(hidden, seed=0, limit=40, out=tmp_path)
    files = sorted(str(p) for p in tmp_path.glob("single*-0.json"))
    out = tmp_path / "fitted.toml"
    assert main(["sim", "fit", *files, "--out", str(out)]) == 0
    assert "w2" in capsys.readouterr().out and out.exists()
    assert main(["sim", "fidelity", str(out), *files]) == 0
    assert "fidelity: mean |predicted - observed|" in capsys.readouterr().out
    assert main(["sim", "fit", str(hidden), "--out", str(out)]) == 2
    assert "not a readable results file" in capsys.readouterr().err
    assert main(["sim", "fidelity", str(tmp_path / "absent.toml"), *files]) == 2
    assert "sim fidelity: " in capsys.readouterr().err
