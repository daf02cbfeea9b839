"""verl's agent loop, reward function and launch config (the cases: ``verl_cases.py``),
run in an interpreter of their own.

verl composes its config with Hydra and OmegaConf, whose parsers need the ANTLR 4.9
runtime, while math-verify (the ``math`` grader) needs ANTLR 4.13 to parse LaTeX fully
(with 4.9, ``10\\%`` no longer equals ``10``). The test venv keeps 4.13; ``make test``
installs 4.9.3 apart in ``.venv/antlr4-9``, and the verl cases run in a child pytest with
that folder first on its path. Nothing else differs from the parent run.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from support import require_spec, unavailable

ANTLR_4_9 = Path(sys.prefix) / "antlr4-9"
CASES = Path(__file__).with_name("verl_cases.py")


def test_the_verl_cases_pass_with_the_antlr_runtime_hydra_needs() -> None:
    require_spec("verl")
    if not (ANTLR_4_9 / "antlr4").is_dir():
        unavailable("ANTLR 4.9 for Hydra", f"no {ANTLR_4_9} (make test installs it)")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ANTLR_4_9),
               os.environ.get("PYTHONPATH")])))  # fmt: skip
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(CASES)],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert " passed" in run.stdout and " failed" not in run.stdout
