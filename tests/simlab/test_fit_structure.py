"""A fitted pool reproduces its recorded accuracy on the recorded tasks and on held-out
tasks of the same source, whatever the tasks' sizes (issue 41, item 1), and
``sim fidelity`` plays single calls, so it sees a pool that does not (item 2).

The hidden world: a simulated worker whose accuracy does not move with the size of
small sums (``family_structure = {arithmetic = 0}``, as SmolLM2 on the llama.cpp pool),
recorded on a JSON Lines suite of small sums that the paper's structure model rates as
very easy (standardised size about -3). Fitting its accuracy but inheriting the paper's
``structure_share`` 0.6 (what ``sim fit`` wrote before) scores those very sums far above
the recorded accuracy; the fitted size effect is switched off and reproduces it."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from pathlib import Path

import pytest

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import Results
from conductor_gym.bench.suites import TaskSelection
from conductor_gym.cli.main import main
from conductor_gym.simlab.fit import fidelity, fit
from conductor_gym.simlab.fit_structure import LR_CRITICAL, fit_structure

pytestmark = pytest.mark.filterwarnings("ignore:Items .*ReadOnly:UserWarning")

FIT, HELD = 60, 40  # tasks


def _sums(path: Path, n: int) -> str:
    rng = random.Random(7)
    pairs: list[tuple[int, int]] = []
    while len(pairs) < n:
        pair = (rng.randint(1, 20), rng.randint(1, 20))
        if pair not in pairs:
            pairs.append(pair)
    rows = [
        {"question": f"What is {a} + {b}?", "answer": str(a + b), "grader": "numeric",
         "domain": "arithmetic", "metadata": {"profile": "math500"}}
        for a, b in pairs
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return f"jsonl:{path}"


def _hidden(path: Path) -> Path:
    path.write_text(
        'name = "hidden"\ndescription = "accuracy flat in size"\n\n[[workers]]\nname = "w0"\n'
        'model = "gemma-3-27b-it"\nbackend_options = { version = "v3", '
        "accuracy = { math500 = 0.55 }, dynamics = { family_structure = { arithmetic = 0.0 } } }\n"
    )
    return path


def _record(pool: str | Path, suite: str, start: int, stop: int, out: Path | None) -> Results:
    return evaluate(
        "single:0",
        suite,
        repeats=2,
        seed=3,
        progress=False,
        pool=str(pool),
        task_selection=TaskSelection(start=start, stop=stop),
        out=out,
    )


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("structure")
    suite = _sums(root / "sums.jsonl", FIT + HELD)
    hidden = _hidden(root / "hidden.toml")
    fitting = _record(hidden, suite, 0, FIT, root / "fit.json")
    held = _record(hidden, suite, FIT, FIT + HELD, root / "heldout.json")
    fitted = fit([fitting])
    path = root / "fitted.toml"
    fitted.to_toml(path)
    return {"root": root, "suite": suite, "fitting": fitting, "held": held, "fitted": fitted,
            "path": path}  # fmt: skip


def _within(played: Results, recorded: Results) -> tuple[float, float, float]:
    p, q = played.metrics["overall"].accuracy, recorded.metrics["overall"].accuracy
    n = len(recorded.episodes)
    return p, q, 2 * math.sqrt(max(q * (1 - q), 1e-9) / n)


def test_the_fitted_pool_reproduces_the_recorded_and_held_out_accuracy(
    world: dict[str, object],
) -> None:
    fitted, path, suite = world["fitted"], world["path"], str(world["suite"])
    structure = fitted.workers[0].structure["arithmetic"]  # type: ignore[attr-defined]
    assert not structure.identified and structure.share == 0.0, structure
    assert "family_structure" in path.read_text()  # type: ignore[attr-defined]
    for start, stop, recorded in ((0, FIT, world["fitting"]), (FIT, FIT + HELD, world["held"])):
        played = _record(path, suite, start, stop, None)  # type: ignore[arg-type]
        p, q, bound = _within(played, recorded)  # type: ignore[arg-type]
        assert abs(p - q) <= bound, (start, p, q, bound)


def test_inheriting_the_paper_structure_model_is_what_fidelity_now_catches(
    world: dict[str, object],
) -> None:
    """The pool ``sim fit`` wrote before (the fitted accuracy with the paper's size effect)
    scores these sums far above the record, and fidelity, which plays single calls, flags
    it and exits 1 over a threshold; the fitted pool passes it."""
    root, path = Path(str(world["root"])), Path(str(world["path"]))
    fitted = world["fitted"]
    before = root / "before.toml"
    replace(  # the accuracy alone, the size effect left at the paper's
        fitted,
        workers=tuple(replace(w, structure={}) for w in fitted.workers),  # type: ignore[attr-defined]
    ).to_toml(before)
    assert "family_structure" not in before.read_text()
    inherited = fidelity(before, [world["held"]])  # type: ignore[list-item]
    assert inherited.flagged and inherited.score > 25, inherited.format()
    good = fidelity(path, [world["held"]])  # type: ignore[list-item]
    assert not good.flagged and good.score < 15, good.format()
    held = str(root / "heldout.json")
    assert main(["sim", "fidelity", str(before), held, "--max-error", "15"]) == 1
    assert main(["sim", "fidelity", str(path), held, "--max-error", "15"]) == 0


def test_a_size_effect_the_data_shows_is_fitted() -> None:
    """Outcomes that follow size (the smaller half right) identify a share > 0; a share
    fitted on sizes of one value is off; every answer right is off."""
    rows = [(z / 10, z < 0) for z in range(-20, 20)]
    found = fit_structure("arithmetic", rows, call_correlation=0.97, task_correlation=0.5)
    assert found.identified and found.share > 0.5 and found.lr > LR_CRITICAL, found
    flat = [(-3.0, i % 2 == 0) for i in range(40)]
    off = fit_structure("arithmetic", flat, call_correlation=0.97, task_correlation=0.5)
    assert not off.identified and off.share == 0 and off.accuracy == pytest.approx(0.5)
    right = fit_structure("arithmetic", [(0.0, True)] * 5, call_correlation=0.9,
                          task_correlation=0.5)  # fmt: skip
    assert right.share == 0 and right.accuracy == 1.0
