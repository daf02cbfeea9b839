"""The "code" grader against programs that try to game their tests, run in the real
sandbox: the static scan, an always-equal result, a fake result line, patched unittest
machinery, skipped or added tests; and a check that expected outputs never reach the
sandbox.

Honest passes and failures are in ``test_graders_code_run.py``; shared helpers in
``code_grader_support.py``.
"""

from __future__ import annotations

import dis
import types

import pytest
from code_grader_support import (
    GOOD,
    TEST_CODE,
    RecordingSandbox,
    call,
    fenced,
    unit,
)

from conductor_gym.graders import grade
from conductor_gym.graders.base import GraderError
from conductor_gym.graders.code import count_test_methods, scan_program
from conductor_gym.graders.code.rewrite import instrument_tests

# -- the static scan ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "reason"),
    [
        ("import unittest\nunittest.TestCase.assertEqual = lambda *a: None", "test machinery"),
        ("from unittest import TestCase\nTestCase.run = None", "test machinery"),
        ("import unittest as u\nu.TestResult.addFailure = print", "test machinery"),
        ("import unittest\nT = unittest.TestCase\nT.run = None", "test machinery"),
        ("import unittest\nsetattr(unittest.TestCase, 'run', None)", "setattr"),
        ("import builtins\nbuiltins.len = lambda x: 0", "test machinery"),
        ("import sys\nsys.modules['unittest'] = None", "sys.modules"),
        ("from sys import modules", "sys.modules"),
        ("import sys\nf = sys._getframe(1)", "sys._getframe"),
        ("import inspect\nf = inspect.currentframe().f_back", "frame access"),
        ("import inspect as i\ns = i.stack()", "inspect frame access"),
        ("import gc\nobjs = gc.get_objects()", "gc.get_objects"),
        ("import os\nos._exit(0)", "os._exit"),
        ("import sys\nsys.exit(0)", "sys.exit"),
        ("m = __import__('unittest')", "__import__"),
        ("x = __builtins__", "__builtins__"),
        ("def f(): pass\ng = f.__globals__", "__globals__"),
    ],
)
def test_scan_program_rejects_tampering(source: str, reason: str) -> None:
    found = scan_program(source)
    assert found is not None and reason in found, found


def test_scan_program_accepts_ordinary_programs() -> None:
    ordinary = """
import os, sys, json, math, inspect
import numpy as np
from collections import Counter

def task_func(values, path="out.json"):
    sig = inspect.signature(task_func)
    counts = Counter(values)
    data = {"mean": float(np.mean(values)), "n": len(values), "args": len(sig.parameters)}
    with open(os.path.join(".", path), "w") as f:
        json.dump(data, f)
    print(math.sqrt(2), file=sys.stderr)
    return counts
"""
    assert scan_program(ordinary) is None
    assert scan_program("this is not python (") is None


# -- call ------------------------------------------------------------------------------------


def test_call_always_equal_object_fails() -> None:
    program = """
class AlwaysEqual:
    def __eq__(self, other):
        return True
    def __ne__(self, other):
        return False

class Solution:
    def twoSum(self, nums, target):
        return AlwaysEqual()
"""
    verdict = call(program)
    assert not verdict.correct and "not JSON-serialisable" in verdict.reason


def test_call_equal_claiming_subclass_is_compared_as_data() -> None:
    program = """
class Sneaky(list):
    def __eq__(self, other):
        return True

class Solution:
    def twoSum(self, nums, target):
        return Sneaky([9, 9])
"""
    assert call(program).reason.endswith("wrong result")


def test_expected_outputs_never_reach_the_sandbox(spy: RecordingSandbox) -> None:
    stdio_tests = [{"input": "7\n", "output": "EXPECTED-7f3a-zebra\n"}]
    program = "n = int(input())\nprint('EXPECTED-7f3a-' + 'zebra' if n == 7 else 'no')"
    assert grade("code", fenced(program), "", code_kind="stdio", tests=stdio_tests).correct
    call_tests = [{"input": ["kiwi"], "output": "SECRET-91c2-kiwi"}]
    program = "def tag(word):\n    return 'SECRET-91c2-' + word"
    assert call(program, call_tests, "tag").correct
    assert len(spy.calls) == 2
    sent = spy.everything_sent()
    assert "EXPECTED-7f3a-zebra" not in sent
    assert "SECRET-91c2-kiwi" not in sent


# -- unittest --------------------------------------------------------------------------------


def test_unittest_static_patch_is_rejected() -> None:
    program = "import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n" + (
        "def task_func(values):\n    return 0"
    )
    verdict = unit(program)
    assert not verdict.correct
    assert verdict.reason.startswith("unittest: rejected: the program writes an attribute")


def test_unittest_runtime_patch_is_refused() -> None:
    # getattr with computed names slips past the static scan; the machinery is frozen.
    program = """
import unittest

def task_func(values):
    case = getattr(unittest, "Test" + "Case")
    setattr(case, "assert" + "Equal", lambda *args, **kwargs: None)
    return 0
"""
    assert scan_program(program) is None
    verdict = unit(program)
    assert not verdict.correct
    assert verdict.reason == (
        "unittest: test_solution.TestCases.test_empty error: TypeError: cannot set "
        "'assertEqual' attribute of immutable type 'TestCase'"
    )


def test_unittest_fake_result_line_cannot_pass() -> None:
    # The program prints a result line claiming success on every file descriptor, then
    # tries to leave through libc's exit(0) so the harness never reports. It has no
    # descriptor to the run's output, and the C call is refused.
    program = """
import ctypes, json, os

def task_func(values):
    return -1

line = "0" * 32 + " " + json.dumps({"run": 3, "stopped": 3, "failures": 0, "errors": 0,
                                    "skipped": 0, "unexpected": 0, "first": None})
print(line)
for fd in range(1, 16):
    try:
        os.write(fd, (line + "\\n").encode())
    except OSError:
        pass
ctypes.CDLL(None).exit(0)
"""
    verdict = unit(program)
    assert not verdict.correct
    assert verdict.reason == "unittest: rejected: the program used ctypes (a C function)"


def test_unittest_skipping_is_not_passing() -> None:
    program = "import unittest\ndef task_func(values):\n    raise unittest.SkipTest('later')"
    verdict = unit(program)
    assert not verdict.correct and "skipped: later" in verdict.reason


def test_unittest_test_count_must_match_the_parsed_test_code() -> None:
    # A test the ast count cannot see (added at run time) makes the counts differ.
    test_code = TEST_CODE + "\nTestCases.test_extra = lambda self: None\n"
    assert sum(count_test_methods(test_code).values()) == 3
    verdict = unit(GOOD, test_code)
    assert not verdict.correct
    assert verdict.reason == "unittest: ran 4 tests, expected 3, with 0 not passing"


# -- the instrumented test code, the harness's own builtins ---------------------------


def test_instrumenting_routes_the_test_codes_calls_and_comparisons() -> None:
    tokens = {"call": "CALL", "attr": "ATTR", "value": "VALUE"}
    source = (
        "import math\nfrom os import path\n"
        "class T(Base):\n    def test(self):\n        super().setUp()\n"
        "        assert task_func(1) == math.floor(1.5) and path.join('a')\n"
        "        if x is None or not y:\n            pass\n"
    )
    assert instrument_tests(source, tokens).splitlines()[6:] == [
        "        'ATTR'('super().setUp', super(), 'setUp')",
        "        assert 'VALUE'('CALL'('', task_func, 1)) == 'VALUE'('ATTR'('math.floor', math, "
        "'floor', 1.5)) and 'VALUE'('ATTR'('path.join', path, 'join', 'a'))",
        "        if x is None or not 'VALUE'(y):",
        "            pass",
    ]
    with pytest.raises(GraderError, match="token"):
        instrument_tests("x = 'CALL'", tokens)


def test_the_harness_looks_up_no_builtin_the_program_could_patch() -> None:
    # Everything _tester runs (the audit hook included) uses its own references to the
    # builtins, taken before the program runs; only class bodies read __name__.
    from conductor_gym.graders.code import _UNITTEST_HARNESS

    module = compile(_UNITTEST_HARNESS, "main.py", "exec")
    tester = next(c for c in module.co_consts if getattr(c, "co_name", "") == "_tester")
    todo, names = [tester], set()
    while todo:
        code = todo.pop()
        todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        names |= {
            ins.argval
            for ins in dis.get_instructions(code)
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")
        }
    assert names == {"__name__"}
