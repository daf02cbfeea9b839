"""Wrong ``unittest`` solutions that try to forge their verdict (issue 29, item 2), run in
the real sandbox: each passes the static scan (names built at run time), each used to
reach the harness (a frame walk found the nonce and ``report()`` and a wrong solution
"passed all tests"), and each is now refused with its own reason. The verdict line comes
from a referee process that never runs the solution and holds the only descriptor to
the run's output; the test process is watched by an audit hook and runs against frozen
machinery (see :mod:`conductor_gym.graders.code.harness`). Legitimate programs that use
frames through libraries (logging, pandas' warnings, tracebacks, dataclasses) still pass.
"""

from __future__ import annotations

import pytest
from code_grader_support import TEST_CODE, unit

from conductor_gym.graders.code import scan_program

WRONG = "def task_func(values):\n    return -1\n"

# Walks up from its own frame to the harness, looking for the secret and the function
# that reports: the attack of the issue, which made a wrong solution pass.
FRAME_WALK = """
import sys

def task_func(values):
    frame = getattr(sys, "_get" + "frame")(0)
    while frame is not None:
        names = getattr(frame, "f_" + "locals")
        for key in ("nonce", "report", "finish"):
            if key in names:
                print("found", key)
        frame = getattr(frame, "f_" + "back")
    return -1
"""

ALMOST_TESTS = """
import unittest

class TestCases(unittest.TestCase):
    def test_mean(self):
        self.assertAlmostEqual(task_func([1, 2]), 1.5)
"""

FORGERIES = [
    pytest.param(
        FRAME_WALK,
        TEST_CODE,
        "rejected: the program used frame access (sys._getframe)",
        id="frame-walk",
    ),
    pytest.param(
        "import inspect\ndef task_func(values):\n"
        "    getattr(inspect, 'current' + 'frame')()\n    return -1\n",
        TEST_CODE,
        "rejected: the program used frame access (sys._getframe)",
        id="inspect",
    ),
    pytest.param(
        "import sys\ndef task_func(values):\n    try:\n        1 / 0\n"
        "    except ZeroDivisionError:\n"
        "        getattr(sys.exc_info()[2], 'tb_' + 'frame')\n    return -1\n",
        TEST_CODE,
        "rejected: the program used frame access (tb_frame)",
        id="traceback-frame",
    ),
    pytest.param(
        "import gc\ndef task_func(values):\n    getattr(gc, 'get_' + 'objects')()\n    return -1\n",
        TEST_CODE,
        "rejected: the program used gc.get_objects",
        id="gc",
    ),
    pytest.param(
        "import sys\ndef task_func(values):\n    getattr(sys, 'set' + 'trace')(lambda *a: None)\n"
        "    return -1\n",
        TEST_CODE,
        "rejected: the program used sys.settrace",
        id="settrace",
    ),
    pytest.param(
        # A thread whose tracer would see the frames of every function it calls.
        "import threading\ndef task_func(values):\n"
        "    getattr(threading, 'set' + 'trace')(lambda *a: None)\n"
        "    worker = threading.Thread(target=sum, args=([1],))\n"
        "    worker.start()\n    worker.join()\n    return -1\n",
        TEST_CODE,
        "rejected: the program used sys.settrace",
        id="threading-settrace",
    ),
    pytest.param(
        # A debugger subclass is handed every frame, the harness's included.
        "import bdb, sys\nclass Peek(bdb.Bdb):\n    def user_call(self, frame, args):\n"
        "        pass\ndef task_func(values):\n    Peek().set_trace()\n    return -1\n",
        TEST_CODE,
        "rejected: the program used frame access (sys._getframe)",
        id="debugger",
    ),
    pytest.param(
        # The harness's own audit event, raised to thaw the test classes.
        "import sys\ndef task_func(values):\n"
        "    sys.audit('conductor_gym.fixture', '_handleClassSetUp', (), {})\n    return -1\n",
        TEST_CODE,
        "rejected: the program called the suite's class fixtures",
        id="forged-harness-event",
    ),
    pytest.param(
        # The referee's output, through /proc: it is not dumpable, so this is refused.
        "import os\ndef task_func(values):\n    try:\n"
        "        os.open(f'/proc/{os.getppid()}/fd/1', os.O_WRONLY)\n"
        "    except OSError:\n        return -1\n"
        "    raise RuntimeError('reached the referee')\n",
        TEST_CODE,
        "test_solution.TestCases.test_empty failed: AssertionError: -1 != 0",
        id="referee-descriptor",
    ),
    pytest.param(
        # A metaclass whose __getattribute__ would run inside the check of the operand.
        "import sys\nclass Meta(type):\n    def __getattribute__(cls, name):\n"
        "        getattr(sys, '_get' + 'frame')(0)\n"
        "        return type.__getattribute__(cls, name)\n"
        "class Same(metaclass=Meta):\n    def __eq__(self, other):\n        return True\n"
        "def task_func(values):\n    return Same()\n",
        TEST_CODE,
        "rejected: the program passed an assertion an object whose Same.__eq__ it defines itself",
        id="metaclass",
    ),
    pytest.param(
        # A patch of TestCase.assertEqual that would undo itself after one use.
        "import unittest\ndef task_func(values):\n    case = getattr(unittest, 'Test' + 'Case')\n"
        "    real = vars(case)['assert' + 'Equal']\n"
        "    def once(self, *a, **k):\n        setattr(case, 'assert' + 'Equal', real)\n"
        "    setattr(case, 'assert' + 'Equal', once)\n    return -1\n",
        TEST_CODE,
        "test_solution.TestCases.test_empty error: TypeError: cannot set 'assertEqual' "
        "attribute of immutable type 'TestCase'",
        id="self-restoring-assert-patch",
    ),
    pytest.param(
        # A builtin that assertAlmostEqual relies on, faked until it is used once.
        "import importlib\nb = importlib.import_module('built' + 'ins')\nreal = b.round\n"
        "def fake(*args, **kwargs):\n    setattr(b, 'ro' + 'und', real)\n    return 0\n"
        "def task_func(values):\n    setattr(b, 'ro' + 'und', fake)\n    return 99.0\n",
        ALMOST_TESTS,
        "rejected: builtins.round was replaced",
        id="assert-helper-builtin",
    ),
    pytest.param(
        "class Same:\n    def __eq__(self, other):\n        return True\n"
        "    def __ne__(self, other):\n        return False\n"
        "def task_func(values):\n    return Same()\n",
        TEST_CODE,
        "rejected: the program passed an assertion an object whose Same.__eq__ it defines itself",
        id="always-equal",
    ),
    pytest.param(
        "class Same(int):\n    __eq__ = lambda self, other: True\n"
        "def task_func(values):\n    return [Same(0)][0]\n",
        TEST_CODE,
        "rejected: the program passed an assertion an object whose Same.__eq__ it defines itself",
        id="always-equal-int",
    ),
    pytest.param(
        "from unittest import mock\ndef task_func(values):\n    return mock.ANY\n",
        TEST_CODE,
        "rejected: the program passed an assertion unittest.mock.ANY, which equals anything",
        id="mock-any",
    ),
    pytest.param(
        "import sys\ndef task_func(values):\n    getattr(sys, 'ex' + 'it')(0)\n",
        TEST_CODE,
        "test_solution.TestCases.test_empty error: SystemExit: 0",
        id="sys-exit",
    ),
    pytest.param(
        "import os\ndef task_func(values):\n    getattr(os, '_ex' + 'it')(0)\n",
        TEST_CODE,
        "rejected: the program called os._exit",
        id="os-exit",
    ),
    pytest.param(
        "import _imp, importlib.machinery as m\n"
        "def task_func(values):\n"
        "    posix = _imp.create_builtin(m.BuiltinImporter.find_spec('posix'))\n"
        "    getattr(posix, '_ex' + 'it')(0)\n",
        TEST_CODE,
        "rejected: the program re-created the built-in module posix",
        id="fresh-posix-exit",
    ),
    pytest.param(
        "import os, sys\ndef task_func(values):\n"
        "    os.execv(sys.executable, [sys.executable, '-c', 'pass'])\n",
        TEST_CODE,
        "rejected: the program replaced the test process (os.exec)",
        id="exec",
    ),
    pytest.param(
        # Never runs: the test process ends with os._exit, past atexit.
        "import atexit, os\natexit.register(lambda: os.write(1, b'forged'))\n" + WRONG,
        TEST_CODE,
        "test_solution.TestCases.test_empty failed: AssertionError: -1 != 0",
        id="atexit",
    ),
    pytest.param(
        # A claim of success on every inherited descriptor, in a signal handler.
        "import json, os, signal\n"
        "claim = json.dumps({'run': 3, 'stopped': 3, 'failures': 0, 'errors': 0,\n"
        "                    'skipped': 0, 'unexpected': 0, 'first': None}) + '\\n'\n"
        "def forge(*args):\n"
        "    for fd in range(3, 64):\n"
        "        try:\n            os.write(fd, claim.encode())\n        except OSError:\n"
        "            pass\n"
        "signal.signal(signal.SIGUSR1, forge)\n"
        "def task_func(values):\n    os.kill(os.getpid(), signal.SIGUSR1)\n    return -1\n",
        TEST_CODE,
        "the test process sent 2 result messages, expected one",
        id="signal-and-descriptors",
    ),
    pytest.param(
        # The same claim, then every descriptor closed so the harness cannot report the
        # failure: the test process's exit status still tells.
        "import json, os\n"
        "claim = json.dumps({'run': 3, 'stopped': 3, 'failures': 0, 'errors': 0,\n"
        "                    'skipped': 0, 'unexpected': 0, 'first': None}) + '\\n'\n"
        "def task_func(values):\n"
        "    for fd in range(3, 64):\n"
        "        try:\n            os.write(fd, claim.encode())\n            os.close(fd)\n"
        "        except OSError:\n            pass\n"
        "    return -1\n",
        TEST_CODE,
        "the test process exited with status 1 after its tests",
        id="descriptors-closed",
    ),
    pytest.param(
        "import unittest\ndef task_func(values):\n"
        "    base = getattr(unittest, 'Test' + 'Case')\n"
        "    for case in getattr(base, '__sub' + 'classes__')():\n"
        "        if case.__name__ == 'TestCases':\n"
        "            delattr(case, 'test_' + 'empty')\n"
        "    return sum(values)\n",
        TEST_CODE,
        "test_solution.TestCases.test_empty error: TypeError: cannot set 'test_empty' "
        "attribute of immutable type 'TestCases'",
        id="delete-test",
    ),
    pytest.param(
        # Rewrites the tests on disk when imported: they were read before.
        "open('test_solution.py', 'w').write('''\nimport unittest\n"
        "class TestCases(unittest.TestCase):\n    def test_small(self): pass\n"
        "    def test_empty(self): pass\n    def test_negative(self): pass\n''')\n" + WRONG,
        TEST_CODE,
        "test_solution.TestCases.test_empty failed: AssertionError: -1 != 0",
        id="rewrite-test-file",
    ),
]


def test_a_patched_library_assertion_helper_is_rejected() -> None:
    pytest.importorskip("numpy")
    program = (
        "import importlib\n"
        "helpers = importlib.import_module('numpy.' + 'testing')\n"
        "setattr(helpers, 'assert_array_' + 'equal', lambda *a, **k: None)\n"
        "def task_func(values):\n    return [-1]\n"
    )
    test_code = (
        "import unittest\nimport numpy as np\n"
        "class TestCases(unittest.TestCase):\n"
        "    def test_array(self):\n"
        "        np.testing.assert_array_equal(task_func([1]), [1])\n"
    )
    assert scan_program(program) is None
    verdict = unit(program, test_code, libs=["numpy"])
    assert verdict.reason == (
        "unittest: rejected: numpy.testing.assert_array_equal was replaced or removed"
    )


@pytest.mark.parametrize(("program", "test_code", "reason"), FORGERIES)
def test_a_wrong_solution_cannot_forge_its_verdict(
    program: str, test_code: str, reason: str
) -> None:
    assert scan_program(program) is None  # the static scan does not see these
    verdict = unit(program, test_code)
    assert not verdict.correct
    assert verdict.reason == "unittest: " + reason


def test_frame_walk_from_the_issue_finds_nothing_to_forge_with() -> None:
    # Even where frames are allowed (a library asking for one), the harness's secret is
    # not in this process: the referee read the nonce after forking the test process.
    from conductor_gym.graders.code import _UNITTEST_HARNESS

    tester = _UNITTEST_HARNESS.split("def _tester(", 1)[1]
    assert "nonce" not in tester


def test_libraries_that_use_frames_still_pass() -> None:
    program = """
import dataclasses, inspect, logging, multiprocessing, threading, traceback, warnings
import subprocess, sys

logging.basicConfig(level=logging.INFO)
log = logging.getLogger("solution")

@dataclasses.dataclass
class Pair:
    a: int
    b: int

def task_func(values):
    log.info("summing %d values", len(values))
    warnings.warn("a warning from the solution")
    assert len(inspect.signature(task_func).parameters) == 1
    try:
        1 / 0
    except ZeroDivisionError:
        text = traceback.format_exc()
    assert "ZeroDivisionError" in text
    box = []
    worker = threading.Thread(target=lambda: box.append(sum(values)))
    worker.start()
    worker.join()
    out = subprocess.run([sys.executable, "-c", "print(7)"], capture_output=True, text=True)
    assert out.stdout.strip() == "7"
    assert Pair(1, 2) == Pair(1, 2)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        assert pool.map(abs, [-1, -2]) == [1, 2]  # its workers leave through os._exit
    return box[0]
"""
    test_code = (
        TEST_CODE
        + """
class DataCases(unittest.TestCase):
    def test_dataclass_equality(self):
        self.assertEqual(Pair(1, 2), Pair(1, 2))  # __eq__ written by dataclasses
        self.assertNotEqual(Pair(1, 2), Pair(2, 1))
"""
    )
    verdict = unit(program, test_code)
    assert verdict.correct, verdict


def test_pandas_warnings_still_pass() -> None:
    pytest.importorskip("pandas")
    program = """
import warnings
import pandas as pd

def task_func(values):
    frame = pd.DataFrame({"v": values})
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        frame["v"].iloc[0:0] = 0  # pandas locates the caller's frame for its warning
    return int(frame["v"].sum())
"""
    test_code = (
        TEST_CODE
        + """
class PandasCases(unittest.TestCase):
    def test_frame_equal(self):
        frame = pd.DataFrame({"v": [1, 2]})
        self.assertTrue(frame.equals(pd.DataFrame({"v": [1, 2]})))
        self.assertEqual(list(frame["v"]), [1, 2])
"""
    )
    verdict = unit(program, test_code, libs=["pandas"])
    assert verdict.correct, verdict
