"""The "code" grader on hand-written programs, run in the real sandbox: extraction and
the comparison helpers, then stdio, call and unittest tasks that pass or fail honestly
(wrong results, timeouts, crashes, memory, malformed metadata).

Programs that try to game their tests are in ``test_graders_code_tamper.py``; shared
helpers in ``code_grader_support.py``.
"""

from __future__ import annotations

import ast

import pytest
from code_grader_support import (
    GOOD,
    LEGITIMATE,
    RecordingSandbox,
    call,
    fenced,
    unit,
)

from conductor_gym.graders import GraderError, grade
from conductor_gym.graders.code import (
    count_test_methods,
    extract_code,
    json_equal,
    missing_libraries,
    normalize_output,
)

# -- extraction and helpers ----------------------------------------------------------------


def test_extract_code_takes_the_last_python_block() -> None:
    response = (
        "Draft:\n```python\nprint(1)\n```\nFinal:\n```py\nprint(2)\n```\n"
        "Example output:\n```text\n2\n```\n"
    )
    assert extract_code(response) == "print(2)\n"
    assert extract_code("```\nprint(3)\n```") == "print(3)\n"
    assert extract_code("no code here") is None
    # An unclosed (truncated) block does not count, nor hides an earlier complete one.
    assert extract_code("```python\nprint(1)\n```\n```python\nprint(2)") == "print(1)\n"
    # A longer fence may hold a shorter one.
    assert extract_code("````python\ns = '''\n```\n'''\n````") == "s = '''\n```\n'''\n"


def test_normalize_output_and_json_equal() -> None:
    assert normalize_output("1 2  \r\n3\n\n\n") == normalize_output("1 2\n3")
    assert normalize_output(" 1") != normalize_output("1")
    assert json_equal([1, 2.0, {"a": None}], [1.0, 2, {"a": None}])
    assert not json_equal(1, True)
    assert not json_equal([1, 2], [2, 1])
    assert not json_equal("1", 1)


def test_missing_libraries() -> None:
    assert missing_libraries(["os", "json", "numpy"]) == []
    assert missing_libraries(["os", "no_such_module_q9z", "no_such_module_q9z", "x.y_q9z"]) == [
        "no_such_module_q9z",
        "x.y_q9z",
    ]


def test_count_test_methods() -> None:
    test_code = """
import unittest
from unittest import TestCase as TC

class Base(unittest.TestCase):
    def test_a(self): pass
    def helper(self): pass

class Sub(Base):
    def test_a(self): pass
    def test_b(self): pass

class Aliased(TC):
    async def test_c(self): pass

class Mixin:
    def test_m(self): pass

class WithMixin(Mixin, unittest.TestCase):
    def test_w(self): pass
"""
    assert count_test_methods(test_code) == {"Base": 1, "Sub": 2, "Aliased": 1, "WithMixin": 2}
    with pytest.raises(GraderError):
        count_test_methods("class (:")


# -- stdio ---------------------------------------------------------------------------------

ADD = "a, b = map(int, input().split())\nprint(a + b)"
STDIO_TESTS = [
    {"input": "1 2\n", "output": "3\n"},
    {"input": "20 22\n", "output": "42"},
    {"input": "-5 5\n", "output": "0\n\n"},
]


def test_stdio_passes() -> None:
    verdict = grade("code", fenced(ADD), "", code_kind="stdio", tests=STDIO_TESTS)
    assert verdict.correct, verdict
    assert verdict.extracted == ADD + "\n"
    assert verdict.reason == "stdio: passed all 3 tests"


def test_stdio_ignores_trailing_whitespace_and_uses_main_guard() -> None:
    program = (
        "def main():\n    n = int(input())\n    print(n * 2, '  ')\n    print()\n"
        "if __name__ == '__main__':\n    main()"
    )
    tests = [{"input": "21\n", "output": "42"}]
    assert grade("code", fenced(program), "", code_kind="stdio", tests=tests).correct


def test_stdio_wrong_output_stops_at_the_first_failure(spy: RecordingSandbox) -> None:
    program = "a, b = map(int, input().split())\nprint(a + b if a < 10 else 0)"
    verdict = grade("code", fenced(program), "", code_kind="stdio", tests=STDIO_TESTS)
    assert not verdict.correct
    assert verdict.reason == "stdio: test 2 of 3 failed: wrong output"
    assert len(spy.calls) == 2


@pytest.mark.parametrize(
    ("program", "why"),
    [
        ("while True:\n    pass", "timed out after 1 s"),
        ("raise ValueError('boom')", "crashed (ValueError: boom)"),
        ("print(3)\nimport sys\nsys.exit(2)", "crashed (exit status 2)"),
        ("block = bytearray(1 << 32)\nprint(3)", "ran out of memory"),
    ],
)
def test_stdio_runs_that_do_not_exit_cleanly_fail(program: str, why: str) -> None:
    tests = [{"input": "1 2\n", "output": "3"}]
    verdict = grade(
        "code", fenced(program), "", code_kind="stdio", tests=tests, timeout_s=1, memory_mb=256
    )
    assert not verdict.correct
    assert verdict.reason == f"stdio: test 1 of 1 failed: {why}"


def test_no_code_block_is_wrong() -> None:
    verdict = grade("code", "print(3)  # no fence", "", code_kind="stdio", tests=STDIO_TESTS)
    assert not verdict.correct and verdict.extracted is None
    unclosed = grade("code", "```python\nprint(3)\n", "", code_kind="stdio", tests=STDIO_TESTS)
    assert not unclosed.correct and unclosed.extracted is None


def test_the_last_block_is_graded() -> None:
    response = fenced("print(0)") + "Fixed:\n" + fenced(ADD) + "Output:\n" + fenced("3", "text")
    assert grade("code", response, "", code_kind="stdio", tests=STDIO_TESTS).correct


def test_malformed_metadata_is_a_grader_error() -> None:
    with pytest.raises(GraderError, match="code_kind"):
        grade("code", fenced(ADD), "", code_kind="java", tests=STDIO_TESTS)
    with pytest.raises(GraderError, match="tests"):
        grade("code", fenced(ADD), "", code_kind="stdio", tests=[])
    with pytest.raises(GraderError, match="fn_name"):
        grade("code", fenced(ADD), "", code_kind="call", tests=[{"input": [], "output": 1}])


# -- call ------------------------------------------------------------------------------------

TWO_SUM = """
class Solution:
    def twoSum(self, nums: list[int], target: int) -> list[int]:
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i
        return []
"""


def test_call_solution_class_passes() -> None:
    verdict = call(TWO_SUM)
    assert verdict.correct, verdict
    assert verdict.reason == "call: passed all 3 tests"


def test_call_top_level_function_and_its_prints_pass() -> None:
    program = """
def twoSum(nums, target):
    print("debugging", nums)
    for i in range(len(nums)):
        for j in range(i + 1, len(nums)):
            if nums[i] + nums[j] == target:
                return (i, j)
"""
    assert call(program).correct  # a tuple serialises as a JSON list


@pytest.mark.parametrize(
    ("program", "why"),
    [
        (
            "class Solution:\n    def twoSum(self, nums, target):\n        return [1, 0]",
            "wrong result",
        ),
        ("def two_sum(nums, target):\n    return [0, 1]", "defines neither Solution.twoSum"),
        ("def twoSum(nums, target):\n    raise KeyError('x')", "the call raised KeyError"),
        ("import sys\nsys.exit(0)", "the program raised SystemExit: 0 when loaded"),
        ("import os\nos._exit(0)", "expected one result line from the harness, found 0"),
        ("def twoSum(nums, target):\n    return float('nan')", "not JSON-serialisable"),
    ],
)
def test_call_failures(program: str, why: str) -> None:
    verdict = call(program)
    assert not verdict.correct
    assert verdict.reason.startswith("call: test 1 of 3 failed: ") and why in verdict.reason


def test_call_bool_is_not_an_int() -> None:
    tests = [{"input": [4], "output": True}]
    assert call("def isEven(n):\n    return n % 2 == 0", tests, "isEven").correct
    assert not call("def isEven(n):\n    return 1", tests, "isEven").correct


# -- unittest --------------------------------------------------------------------------------


def test_unittest_passes() -> None:
    verdict = unit(GOOD, libs=["math"])
    assert verdict.correct, verdict
    assert verdict.reason == "unittest: passed all 3 tests"


def test_unittest_failure_names_the_test() -> None:
    verdict = unit("def task_func(values):\n    return sum(values) if values else 1")
    assert not verdict.correct
    assert verdict.reason == "unittest: test_solution.TestCases.test_empty failed: " + (
        "AssertionError: 1 != 0"
    )


def test_unittest_missing_entry_point_and_import_errors() -> None:
    assert "does not define task_func" in unit("def other(v):\n    return 0").reason
    assert "raised ZeroDivisionError" in unit("x = 1 / 0\n" + GOOD).reason


def test_unittest_with_libraries_fixtures_and_mocks() -> None:
    test_code = """
import unittest
from unittest.mock import patch

class TestCases(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.data = np.arange(4)  # np comes from the solution's namespace

    def test_mean(self):
        self.assertAlmostEqual(task_func(self.data), 1.5)

    @patch("builtins.print")
    def test_prints(self, mocked):
        task_func(self.data)
        mocked.assert_called_once()
"""
    program = (
        "import numpy as np\ndef task_func(a):\n    print('mean')\n    return float(np.mean(a))"
    )
    verdict = unit(program, test_code, libs=["numpy"])
    assert verdict.correct, verdict


def test_unittest_timeout() -> None:
    verdict = unit("def task_func(values):\n    while True:\n        pass", timeout_s=0.5)
    assert not verdict.correct
    assert verdict.reason == "unittest: the test run failed: timed out after 1.5 s"


def test_unittest_missing_libraries_are_a_grader_error() -> None:
    with pytest.raises(GraderError, match="missing libraries: no_such_lib_q9z"):
        unit(GOOD, libs=["numpy", "no_such_lib_q9z"])


def test_unittest_broken_test_code_is_a_grader_error() -> None:
    with pytest.raises(GraderError, match="no test methods"):
        unit(GOOD, "import unittest\nclass Helper:\n    pass\n")
    with pytest.raises(GraderError, match="does not parse"):
        unit(GOOD, "class (:\n")


def test_harnesses_are_valid_python() -> None:
    from conductor_gym.graders import code

    ast.parse(code._CALL_HARNESS)
    ast.parse(code._UNITTEST_HARNESS)


def test_code_grader_is_registered_as_blocking() -> None:
    # The env runs blocking graders on a worker thread (sandbox runs take seconds).
    from conductor_gym.graders import grader_blocks

    assert grader_blocks("code") and not grader_blocks("math")


def test_a_program_that_defeats_a_recursive_clean_up_is_graded_wrong() -> None:
    # Issue 39: 1,100 nested dirs made shutil.rmtree raise RecursionError; the run's
    # files stayed on the host and the grade raised GraderError (an unscored
    # infrastructure failure). The removal is iterative now: the answer is just wrong.
    program = (
        "import os\ndef task_func(values):\n    here = os.getcwd()\n"
        "    for level in range(1100):\n        os.mkdir('d')\n        os.chdir('d')\n"
        "    with open('blob', 'wb') as f:\n        f.write(b'x' * 4096)\n"
        "    os.chdir(here)\n    return -1\n"
    )
    verdict = unit(program)
    assert not verdict.correct
    assert verdict.reason.startswith("unittest: test_solution.TestCases.test_empty failed")


@pytest.mark.slow
def test_the_legitimate_battery_passes() -> None:
    # BigCodeBench-style solutions that use what real tasks use (see LEGITIMATE).
    failed = []
    for case in LEGITIMATE:
        for lib in case.libs:
            pytest.importorskip(lib)
        verdict = unit(case.program, case.tests, libs=list(case.libs))
        if not verdict.correct:
            failed.append((case.name, verdict.reason))
    assert failed == []
