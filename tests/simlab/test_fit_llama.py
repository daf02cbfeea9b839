"""A real pool end to end (issue 28, item 4): three workers on a real llama.cpp server
(SmolLM2-135M through LiteLLM) under settings that behave differently (greedy with a
long budget, sampled hot with a short one that cuts replies, sampled with a nucleus
limit and a system prompt of its own), recorded through the response cache, fitted,
scored on held-out tasks, and the fitted pool then run offline with
``ConductorEnv(pool="fitted.toml")``.

The tasks are a small JSON Lines suite written here (``jsonl:<path>``): additions of
small numbers in the offline ``arithmetic`` family's words, graded ``numeric``, some of
which a 135M model gets right (on the first offline tasks it got every one wrong, so
every fitted accuracy was 0 and the fidelity figures said nothing). Small on purpose
(CI): 8 tasks to fit, 4 held out; single calls plus one self-check run: 60 calls of at
most 32 tokens. With ``-s`` it prints the fit and the fidelity
(``docs/bring-your-own-pool.md``, "A real pool in CI")"""

from __future__ import annotations

import glob
import json
import re
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from support import require_spec

from conductor_gym import ConductorEnv
from conductor_gym.bench.evaluate import evaluate
from conductor_gym.bench.results import Results
from conductor_gym.cli.main import main
from conductor_gym.simlab.fit import fidelity, fit
from conductor_gym.workers.spec import WorkerSpec

pytestmark = pytest.mark.filterwarnings("ignore:Items .*ReadOnly:UserWarning")

FIT_TASKS, HELD_OUT = 8, 4
SUMS = [(1, 2), (2, 6), (3, 3), (15, 4), (7, 2), (4, 2), (11, 12), (6, 1),
        (2, 3), (12, 5), (3, 4), (8, 1)]  # fmt: skip
"""Sums the greedy worker gets right (1 + 2, 3 + 3, ...) and wrong (2 + 6 = 10, 6 + 1 = 6,
a reply cut before its sum, ...), half of each among the fitting and the held-out tasks."""
assert len(SUMS) == FIT_TASKS + HELD_OUT


def sums_suite(directory: Path) -> str:
    """The suite ``jsonl:<path>`` of :data:`SUMS`, as tasks of the offline ``arithmetic``
    family (profile ``math500``), whose steps the simulator reads and the fit classifies."""
    path = directory / "sums.jsonl"
    rows = [
        {
            "question": f"What is {a} + {b}?",
            "answer": str(a + b),
            "grader": "numeric",
            "domain": "arithmetic",
            "metadata": {"profile": "math500"},
        }
        for a, b in SUMS
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return f"jsonl:{path}"


def pool(api_base: str) -> list[WorkerSpec]:
    common: dict[str, Any] = {
        "backend": "litellm",
        "model": "openai/smollm2",
        "price_in_per_mtok": 0.05,
        "price_out_per_mtok": 0.2,
        "backend_options": {"api_base": api_base},
    }
    return [
        WorkerSpec("smol-greedy", temperature=0.0, max_tokens=32, **common),
        WorkerSpec("smol-hot-short", temperature=1.2, max_tokens=12, **common),
        WorkerSpec(
            "smol-nucleus",
            temperature=0.7,
            max_tokens=32,
            params={"top_p": 0.5},
            system_prompt="You are a careful calculator. Reply with the number only.",
            **common,
        ),
    ]


def record(
    specs: list[WorkerSpec], suite: str, cache: Path, limit: int, out: Path, tag: str
) -> list[Results]:
    agents = ["single:0", "single:1", "single:2", "reflect:0:2"]
    return [
        evaluate(
            agent,
            suite,
            repeats=1,
            limit=limit,
            seed=0,
            progress=False,
            pool=specs,
            shuffle_workers=False,
            cache=str(cache),
            concurrency=2,
            out=out / f"{tag}-{agent.replace(':', '_')}.json",
        )
        for agent in agents
    ]


def test_a_real_llama_pool_is_fitted_scored_and_run_offline(
    llama_base_url: str, tmp_path: Path
) -> None:
    require_spec("litellm")
    specs = pool(f"{llama_base_url}/v1")
    cache = tmp_path / "calls.sqlite"
    suite = sums_suite(tmp_path)
    runs = record(specs, suite, cache, FIT_TASKS + HELD_OUT, tmp_path, "rec")
    fitting = [
        r.model_copy(update={"episodes": [e for e in r.episodes if e.task_index < FIT_TASKS]})
        for r in runs
    ]
    held = [
        r.model_copy(update={"episodes": [e for e in r.episodes if e.task_index >= FIT_TASKS]})
        for r in runs
    ]
    outcomes = [e.correct for r in held for e in r.episodes]
    assert any(outcomes) and not all(outcomes), outcomes  # held-out tasks that discriminate
    fitted = fit(fitting, cache=cache)
    print(fitted.format())
    accuracy = {w.name: w.accuracy["math500"].accuracy for w in fitted.workers}
    assert any(0 < p < 1 for p in accuracy.values()), accuracy  # a pool that says something
    assert [w.name for w in fitted.workers] == [s.name for s in specs]
    assert fitted.used == 3 * FIT_TASKS and fitted.traced == FIT_TASKS and fitted.untraced == 0
    greedy = fitted.workers[0]
    assert greedy.price_out_per_mtok == pytest.approx(0.2) and greedy.tokens
    assert greedy.dynamics["token_sigma"].n == greedy.calls + FIT_TASKS  # + its reflect solves
    path = tmp_path / "fitted.toml"
    fitted.to_toml(path)
    score = fidelity(path, held, cache=cache, seeds=2)
    print(score.format())
    assert score.episodes == 4 * HELD_OUT and score.untraced == 0
    env = ConductorEnv(pool=str(path), tasks="offline")  # offline: no server, no cache
    _, info = env.reset(seed=0)
    assert sorted(info["pool"]) == sorted(s.name for s in specs)
    _, _, terminated, _, info = env.step(
        'model_id = [0]\nsubtasks = ["Solve the problem."]\naccess_list = [[]]'
    )
    assert terminated and info["outcome"] in ("correct", "wrong")


DOC = Path(__file__).resolve().parents[2] / "docs" / "bring-your-own-pool.md"
DOC_FIT_TASKS = "0:28"
"""The tasks whose fit split the doc's commands record here (CI time; the doc's, all 48)."""


def doc_commands() -> list[list[str]]:
    """The ``conductor-gym`` commands of the doc's ``bash`` blocks, continuation lines
    joined, as argument lists (shell words)."""
    blocks = re.findall(r"```bash\n(.*?)```", DOC.read_text(), flags=re.S)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    return [shlex.split(line) for line in lines if line.strip().startswith("conductor-gym ")]


# About a minute: make figures-check (CI) runs it; make test runs its small twin above,
# test_a_real_llama_pool_is_fitted_scored_and_run_offline.
@pytest.mark.slow
@pytest.mark.figures
def test_the_doc_runs_as_written_on_a_real_llama_pool(
    llama_base_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/bring-your-own-pool.md's commands, run in order on a llama.cpp server on
    loopback (the example pool file pointed at it, ``--task-range 0:28`` added to the
    fit split's recordings): they all exit 0, the real pool's fit passes ``sim fidelity
    --max-error`` on the held-out recorded episodes (issue 41, item 5), and the same fit
    with the paper's size effect inherited does not."""
    require_spec("litellm")
    pools = tmp_path / "docs" / "pools"
    pools.mkdir(parents=True)
    source = DOC.parent / "pools"
    text = (source / "llamacpp.toml").read_text()
    assert "http://127.0.0.1:8000/v1" in text
    (pools / "llamacpp.toml").write_text(text.replace("http://127.0.0.1:8000", llama_base_url))
    (pools / "sums.jsonl").write_text((source / "sums.jsonl").read_text())
    monkeypatch.chdir(tmp_path)
    commands = doc_commands()
    assert [c[1] for c in commands] == ["pools"] + ["evaluate"] * 6 + ["sim", "sim", "evaluate"]
    threshold = None
    for argv in commands:
        args = [a for arg in argv[1:] for a in (sorted(glob.glob(arg)) if "*" in arg else [arg])]
        if "--task-split" in args and args[args.index("--task-split") + 1] == "fit":
            args += ["--task-range", DOC_FIT_TASKS]
        if args[:2] == ["sim", "fidelity"]:
            threshold = float(args[args.index("--max-error") + 1])
            assert not [a for a in args if a.endswith("header")], args  # globs miss headers
        assert main(args) == 0, argv
    assert threshold is not None
    fitting = [Results.load(p) for p in sorted(tmp_path.glob("fit-*.json"))]
    held = [Results.load(p) for p in sorted(tmp_path.glob("heldout*.json"))]
    fitted = fit(fitting, cache=tmp_path / "calls.sqlite")
    inherited = tmp_path / "inherited.toml"
    replace(fitted, workers=tuple(replace(w, structure={}) for w in fitted.workers)).to_toml(
        inherited
    )
    good = fidelity(tmp_path / "fitted.toml", held, cache=tmp_path / "calls.sqlite")
    bad = fidelity(inherited, held, cache=tmp_path / "calls.sqlite")
    print("fitted pool:\n" + good.format() + "\n\nthe paper's size effect inherited:\n"
          + bad.format())  # fmt: skip
    assert good.score <= threshold < bad.score, (good.score, bad.score)
