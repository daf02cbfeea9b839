"""The graders agree with the peers' conventions on the corpus of
:mod:`conductor_gym.graders.peer_cases` (issue 38), and the agreement report prints it."""

from __future__ import annotations

import importlib.util

import pytest
from code_grader_support import GOOD, TEST_CODE, fenced

from conductor_gym.graders import GraderError, grade
from conductor_gym.graders.agreement import format_table, main, math_format_counts
from conductor_gym.graders.code.extract import extract_code
from conductor_gym.graders.code.imports import imported_modules
from conductor_gym.graders.peer_cases import CASES, CODE_CASES, Case, CodeCase

needs_math_verify = pytest.mark.skipif(
    importlib.util.find_spec("math_verify") is None, reason="math-verify is not installed"
)
MATH_GRADERS = {"math", "freeform"}


def _id(case: Case) -> str:
    return f"{case.grader}-{case.peer}-{case.response[:40]!r}-{case.reference}"


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(case, id=_id(case), marks=needs_math_verify)
        if case.grader in MATH_GRADERS
        else pytest.param(case, id=_id(case))
        for case in CASES
    ],
)
def test_each_case_gets_the_peers_verdict(case: Case) -> None:
    verdict = grade(case.grader, case.response, case.reference, **case.metadata)
    assert verdict.correct is case.expect, (case.note, verdict)


@pytest.mark.parametrize("case", CODE_CASES, ids=[case.layout for case in CODE_CASES])
def test_each_code_layout_yields_the_intended_program(case: CodeCase) -> None:
    program = extract_code(case.response, entry_point=case.entry_point)
    assert (program.strip() if program is not None else None) == case.expect


def test_example_tail_is_kept_when_the_solution_uses_what_it_assigns() -> None:
    code = "def task_func():\n    return LIMIT\n\nLIMIT = task_func  # odd, but used\n"
    assert extract_code(f"```python\n{code}```", entry_point="task_func") == code


@needs_math_verify
def test_every_reference_is_read_in_every_final_answer_format() -> None:
    for name, right, total in math_format_counts():
        assert right == total, name


def test_imported_modules_skips_optional_and_relative_imports() -> None:
    code = (
        "import os.path\nfrom pytz import utc\nfrom . import local\n"
        "try:\n    import faker\nexcept ImportError:\n    faker = None\n"
        "def test_x():\n    import openpyxl\n"
    )
    assert imported_modules(code) == ["os", "pytz", "openpyxl"]
    assert imported_modules("def broken(:") == []


def test_an_undeclared_missing_test_import_is_an_infrastructure_error() -> None:
    test_code = "import conductor_gym_no_such_module_38\n" + TEST_CODE
    with pytest.raises(GraderError, match="conductor_gym_no_such_module_38"):
        grade(
            "code",
            fenced(GOOD),
            "",
            code_kind="unittest",
            test_code=test_code,
            entry_point="task_func",
        )


def test_the_report_prints_every_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert format_table(["a", "b"], [[1, 2]]) == "| a | b |\n|---|---|\n| 1 | 2 |"
    if importlib.util.find_spec("math_verify") is None:
        pytest.skip("math-verify is not installed")
    assert main([]) == 0
    out = capsys.readouterr().out
    for name in ("graders", "peers", "formats", "code"):
        assert f"## {name}" in out


def test_an_example_tail_that_writes_into_what_the_solution_reads_is_kept() -> None:
    code = (
        "class Box:\n    pass\n\nbox = Box()\n\ndef task_func():\n    return box.value\n\n"
        "box.value = 3\nprint(task_func())\n"
    )
    assert extract_code(f"```python\n{code}```", entry_point="task_func") == code


def test_the_tests_importing_the_solution_module_is_not_a_missing_library() -> None:
    test_code = "from solution import task_func\n" + TEST_CODE
    verdict = grade(
        "code",
        fenced(GOOD),
        "",
        code_kind="unittest",
        test_code=test_code,
        entry_point="task_func",
    )
    assert verdict.correct, verdict


@pytest.mark.parametrize(
    ("grader", "response", "metadata"),
    [
        ("numeric", "Answer: " * 20_000 + "5", {}),
        ("numeric", "Answer: 5" + " " * 200_000 + "x", {}),
        ("choice", "I think it is " * 20_000, {}),
        ("countdown", "<answer>" * 50_000 + "1+2", {"numbers": [1, 2]}),
    ],
    ids=["many-anchors-one-line", "long-space-run", "many-beliefs", "unclosed-tags"],
)
def test_pathological_responses_are_graded_in_linear_time(
    grader: str, response: str, metadata: dict[str, object]
) -> None:
    # Quadratic work on these inputs would take minutes; linear work takes milliseconds.
    reference = "C" if grader == "choice" else "3" if grader == "countdown" else "5"
    assert grade(grader, response, reference, **metadata).reason
