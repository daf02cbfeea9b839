r"""The ``math`` grader gives this install's verdicts under verl's ANTLR runtime, or refuses.

verl's config stack (Hydra, OmegaConf) needs the ANTLR 4.9 runtime; math-verify's LaTeX
parser for 4.9.3 is built from an older grammar, so under it ``\boxed{10\%}`` silently
stops equalling ``10``. Each case runs a child interpreter on verl's runtime the way
``tests/trainers/test_verl.py`` does (``.venv/antlr4-9`` first on ``PYTHONPATH``, which
``make test`` installs) and compares what it reports with this process (ANTLR 4.13.2).
The side 4.13.2 runtime a verl node would install with ``pip install --target`` is a copy
of this venv's own install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from functools import cache
from importlib.metadata import distribution
from pathlib import Path
from typing import Any

import pytest
from support import require, require_spec, unavailable

from conductor_gym import ConductorEnv
from conductor_gym.graders import grade
from conductor_gym.graders.math import ANTLR_PATH_ENV, ANTLR_RUNTIME, check_antlr_runtime

ROOT = Path(__file__).resolve().parents[2]
ANTLR_4_9 = Path(sys.prefix) / "antlr4-9"

BATTERY: list[tuple[str, str, str]] = [
    ("math", r"\boxed{10\%}", "10"),
    ("math", r"\boxed{10}", r"10\%"),
    ("math", r"so it is \boxed{12.5\%}", "0.125"),
    ("math", r"The final answer is 50\%", r"\frac{1}{2}"),
    ("math", r"\boxed{3\%}", "3"),
    ("math", r"\boxed{\dfrac{3}{4}}", r"\frac34"),
    ("math", r"\boxed{\frac{1}{3}}", "0.5"),
    ("math", r"\boxed{2\sqrt{2}}", r"\sqrt{8}"),
    ("math", r"\boxed{\sqrt{3}}", r"\sqrt3"),
    ("math", r"\boxed{[1,2]}", r"x \in [1, 2]"),
    ("math", r"\boxed{(1,2]}", "[1, 2]"),
    ("math", r"\boxed{(-\infty, 3)}", "x<3"),
    ("math", r"\boxed{\text{Evelyn}}", r"\text{Evelyn}"),
    ("math", r"\boxed{\text{(C)}}", r"\text{(C)}"),
    ("math", r"\boxed{30^\circ}", "30"),
    ("math", r"\boxed{30^{\circ}}", r"30^\circ"),
    ("math", r"\boxed{\frac{\pi}{2}}", r"90^\circ"),
    ("math", r"so $x = \frac{\pi}{2}$", r"\frac{\pi}{2}"),
    ("freeform", r"The answer is $10\%$", "10"),
    ("freeform", r"Answer: \frac{1}{2}", "0.5"),
]
"""``(grader, response, reference)``: fractions, percentages, roots, intervals, text and
degrees, right and wrong; the percentages are the answers verl's runtime misreads."""

TASK = {"question": "What is one tenth, as a percentage?", "answer": "10\\%", "grader": "math"}
"""The task of one episode played on the env (a one-step plan on the simulated pool)."""

PLAN = 'model_id = [0]\nsubtasks = ["Solve the problem."]\naccess_list = [[]]'

CHILD = r"""
import json, sys
from importlib.metadata import version

import math_verify
from omegaconf import OmegaConf

from conductor_gym import ConductorEnv
from conductor_gym.graders import GraderSetupError, grade


def parsed(text):
    return math_verify.parse(
        "\\boxed{" + text + "}", extraction_config=[math_verify.LatexExtractionConfig()]
    )


report = {
    "antlr": version("antlr4-python3-runtime"),
    "omegaconf": OmegaConf.create({"a": 1, "b": "${a}"}).b,
    "math_verify_alone": bool(math_verify.verify(parsed("10"), parsed("10\\%"))),
}
try:
    report["verdicts"] = [grade(*case).correct for case in json.loads(sys.stdin.read())]
except GraderSetupError as exc:
    report["refused"] = str(exc)
    report["refused_as"] = [cls.__name__ for cls in type(exc).__mro__]
if len(sys.argv) > 1:
    env = ConductorEnv(tasks="jsonl:" + sys.argv[1])
    env.reset(seed=0)
    try:
        _, reward, _, truncated, info = env.step(sys.argv[2])
        report["episode"] = [reward, truncated, str(info["outcome"])]
    except GraderSetupError:
        report["episode"] = "refused"
print(json.dumps(report))
"""


@cache
def _on_verls_runtime(side_folder: str | None, tasks_file: str | None = None) -> dict[str, Any]:
    """What :data:`CHILD` reports, run on ANTLR 4.9 (and :data:`ANTLR_PATH_ENV` set to
    ``side_folder`` when given), playing the episode when ``tasks_file`` is given; one
    run per arguments."""
    if not (ANTLR_4_9 / "antlr4").is_dir():
        unavailable("ANTLR 4.9 (verl's runtime)", f"no {ANTLR_4_9} (make test installs it)")
    require_spec("omegaconf")
    env = {key: value for key, value in os.environ.items() if key != ANTLR_PATH_ENV}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ANTLR_4_9), env.get("PYTHONPATH")]))
    if side_folder is not None:
        env[ANTLR_PATH_ENV] = side_folder
    run = subprocess.run(
        [sys.executable, "-c", CHILD, *([tasks_file, PLAN] if tasks_file else [])],
        input=json.dumps(BATTERY),
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report: dict[str, Any] = json.loads(run.stdout)
    assert report["antlr"] == "4.9.3" and report["omegaconf"] == 1  # verl's config stack works
    return report


@cache
def _here() -> list[bool]:
    """The battery's verdicts in this process (ANTLR 4.13.2)."""
    require("math_verify")
    return [grade(*case).correct for case in BATTERY]


@pytest.fixture(scope="module")
def side_runtime(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A folder holding only antlr4-python3-runtime 4.13.2, as ``pip install --no-deps
    --target DIR`` lays it out (copied from this venv's install)."""
    dist = distribution("antlr4-python3-runtime")
    if dist.version != ANTLR_RUNTIME:
        unavailable(f"antlr4-python3-runtime {ANTLR_RUNTIME}", f"this venv has {dist.version}")
    folder = tmp_path_factory.mktemp("antlr4-13")
    for name in ("antlr4", f"antlr4_python3_runtime-{dist.version}.dist-info"):
        shutil.copytree(Path(str(dist.locate_file(name))), folder / name)
    return str(folder)


@pytest.fixture(scope="module")
def tasks_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A JSONL task source holding :data:`TASK`."""
    path = tmp_path_factory.mktemp("tasks") / "tenth.jsonl"
    path.write_text(json.dumps(TASK) + "\n")
    return str(path)


def _episode_here(tasks_file: str) -> list[Any]:
    """The episode's ``[reward, truncated, outcome]`` in this process."""
    env = ConductorEnv(tasks=f"jsonl:{tasks_file}")
    env.reset(seed=0)
    _, reward, _, truncated, info = env.step(PLAN)
    return [reward, truncated, str(info["outcome"])]


def test_this_install_grades_in_process_and_reads_percentages() -> None:
    assert check_antlr_runtime() is None
    verdicts = _here()
    assert verdicts[:5] == [True] * 5  # math-verify reads x\% as x or x/100
    assert True in verdicts[5:] and False in verdicts[5:]


def test_math_verify_alone_silently_changes_its_verdict_on_verls_runtime(
    tasks_file: str,
) -> None:
    """The bug the grader guards against, reproduced: no error, a different verdict."""
    assert _on_verls_runtime(None, tasks_file)["math_verify_alone"] is False
    mv = require("math_verify")
    gold, answer = (mv.parse(f"\\boxed{{{t}}}") for t in ("10", "10\\%"))
    assert mv.verify(gold, answer) is True


def test_grading_on_verls_runtime_without_a_side_runtime_is_refused(tasks_file: str) -> None:
    report = _on_verls_runtime(None, tasks_file)
    assert "verdicts" not in report
    assert report["refused"].startswith(
        f"math: the installed antlr4-python3-runtime is 4.9.3 and {ANTLR_PATH_ENV} is unset; "
        f"math-verify reads LaTeX as defined only with antlr4-python3-runtime {ANTLR_RUNTIME}"
    )
    assert (
        f"`pip install --no-deps --target DIR antlr4-python3-runtime=={ANTLR_RUNTIME}` "
        f"and set {ANTLR_PATH_ENV}=DIR" in report["refused"]
    )
    # a configuration error, never a GraderError (a truncated episode) nor a wrong answer
    assert "ConfigurationError" in report["refused_as"]
    assert "GraderError" not in report["refused_as"]
    assert report["episode"] == "refused"  # the env raises it: no truncation, no reward


def test_grading_on_verls_runtime_with_a_side_runtime_gives_this_installs_verdicts(
    side_runtime: str, tasks_file: str
) -> None:
    report = _on_verls_runtime(side_runtime, tasks_file)
    assert "refused" not in report, report.get("refused")
    assert report["math_verify_alone"] is False  # the child's own runtime is still 4.9
    assert report["verdicts"] == _here()
    assert report["episode"] == _episode_here(tasks_file) == [1.0, False, "correct"]


def test_a_side_folder_holding_another_runtime_is_refused() -> None:
    report = _on_verls_runtime(str(ANTLR_4_9))
    assert report["refused"].startswith(
        f"math: {ANTLR_PATH_ENV}={str(ANTLR_4_9)!r} gave the worker antlr4-python3-runtime 4.9.3;"
    )


def test_a_side_folder_that_does_not_exist_is_refused(tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere")
    report = _on_verls_runtime(missing)
    assert report["refused"].startswith(
        f"math: the installed antlr4-python3-runtime is 4.9.3 and {ANTLR_PATH_ENV}="
        f"{missing!r} is not a folder;"
    )
