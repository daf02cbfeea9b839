"""The graders' registry finds the built-in graders itself (issue 43): ``import
conductor_gym`` imports no grader module, the first lookup imports every module of
:mod:`conductor_gym.graders`, and a new grader module is found with no import line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conductor_gym.graders import grader_blocks, registered_graders

NEW_GRADER = """
from conductor_gym.graders.base import Grade, register_grader


@register_grader("test-discovered", blocking=True)
def grade_exact(response, reference, metadata):
    return Grade(response.strip() == reference, response.strip(), "exact match")
"""


def test_every_built_in_grader_is_found_and_code_blocks() -> None:
    assert {"choice", "code", "countdown", "freeform", "math", "numeric"} <= set(
        registered_graders()
    )
    assert grader_blocks("code") and not grader_blocks("numeric")
    assert not grader_blocks("no-such-grader")


def test_a_new_module_in_the_package_is_found_without_an_import_line(tmp_path: Path) -> None:
    (tmp_path / "exact_test_grader.py").write_text(NEW_GRADER)
    code = (
        "import sys\n"
        "import conductor_gym\n"
        "import conductor_gym.graders as graders\n"
        "print(sorted(m for m in sys.modules if m.startswith('conductor_gym.graders.')))\n"
        f"graders.__path__.append({str(tmp_path)!r})  # the module sits in the package\n"
        "print(graders.grade('test-discovered', ' 42 ', '42').correct,\n"
        "      graders.grader_blocks('test-discovered'),\n"
        "      'numeric' in graders.registered_graders())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    imported_at_start, found = out.stdout.splitlines()
    assert imported_at_start == "['conductor_gym.graders.base']"
    assert found == "True True True"
