"""Wrong ``unittest`` solutions that try to forge their verdict (issue 29, item 2), run in
the real sandbox: each passes the static scan (names built at run time), each used to
reach the harness (a frame walk found the nonce and ``report()`` and a wrong solution
"passed all tests"), and each is now refused with its own reason. The verdict line comes
from a referee process that never runs the solution and holds the only descriptor to
the run's output; the test process is watched by an audit hook and runs against frozen
machinery (see :mod:`conductor_gym.graders.code.harness`). Legitimate programs that use
frames through libraries (logging, pandas' warnings, tracebacks, dataclasses) still pass.

The later ones (each graded correct before, the thread races now and then) go through
the test code itself: comparisons and truth tests it writes, library helpers it calls
directly (a patch that undoes itself, one raced by a thread), library functions and
modules the program replaced, and builtins the harness itself used to look up at run
time. The test code is now instrumented (:mod:`conductor_gym.graders.code.rewrite`) and
checked before each call, comparison and truth test; legitimate tests still pass.
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

# An object that equals everything, for the comparisons the test code writes itself.
SAME = (
    "class Same:\n    def __eq__(self, other):\n        return True\n"
    "    def __ne__(self, other):\n        return False\n"
)

# The same three checks as TEST_CODE, written as comparisons in the test code.
COMPARING_TESTS = """
import unittest

class TestCases(unittest.TestCase):
    def test_small(self):
        self.assertTrue(task_func([1, 2, 3]) == 6)

    def test_empty(self):
        assert task_func([]) == 0

    def test_negative(self):
        if task_func([-1, 1, -5]) != -5:
            self.fail("wrong sum")
"""

# A thread that patches a builtin and restores it in a tight loop, switching threads as
# often as it can: before, now and then (a run in tens) the patch slipped past the check
# made before assertAlmostEqual (which calls round) and the run was graded correct.
RACE_ROUND = """
import importlib, sys, threading
b = importlib.import_module('built' + 'ins')
real = b.round

def fake(*args, **kwargs):
    return 0

def race():
    while True:
        setattr(b, 'ro' + 'und', fake)
        setattr(b, 'ro' + 'und', real)

def task_func(values):
    sys.setswitchinterval(1e-6)
    threading.Thread(target=race, daemon=True).start()
    return 99.0
"""

# Calls a builtin the harness's audit hook used to look up at run time: the fake then
# ran inside the hook, unaudited, walked the frames to the harness's finish() and
# reported a clean run (a wrong solution passed all its tests).
HOOK_BUILTIN = """
import importlib
b = importlib.import_module('built' + 'ins')
s = importlib.import_module('s' + 'ys')
real = b.type

def fake(*args):
    setattr(b, 'ty' + 'pe', real)
    frame = getattr(s, '_get' + 'frame')(0)
    while frame is not None:
        names = getattr(frame, 'f_' + 'locals')
        if 'finish' in names and 'config' in names:
            n = names['config']['expected']
            names['finish']({'run': n, 'stopped': n, 'failures': 0, 'errors': 0,
                             'skipped': 0, 'unexpected': 0, 'first': None}, True)
        frame = getattr(frame, 'f_' + 'back')
    return real(*args)

setattr(b, 'ty' + 'pe', fake)
compile('1', 'x', 'eval')

def task_func(values):
    return -1
"""

# Swaps the tests for ones that pass, through the exec the harness loaded them with.
EXEC_SWAP = """
import importlib
b = importlib.import_module('built' + 'ins')
real = b.exec
PASSING = ('import unittest\\nclass TestCases(unittest.TestCase):\\n'
           '    def test_small(self): pass\\n    def test_empty(self): pass\\n'
           '    def test_negative(self): pass\\n')

def fake(code, *rest):
    setattr(b, 'ex' + 'ec', real)
    return real(PASSING, *rest)

setattr(b, 'ex' + 'ec', fake)

def task_func(values):
    return -1
"""

ISCLOSE_TESTS = """
import unittest
import math

class TestCases(unittest.TestCase):
    def test_mean(self):
        self.assertTrue(math.isclose(task_func([1, 2]), 1.5))
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
        # A claim of success on every inherited descriptor (a signal handler, which did
        # this before, is refused now: see SIGNAL_FRAME).
        "import json, os\n"
        "claim = json.dumps({'run': 3, 'stopped': 3, 'failures': 0, 'errors': 0,\n"
        "                    'skipped': 0, 'unexpected': 0, 'first': None}) + '\\n'\n"
        "def forge(*args):\n"
        "    for fd in range(3, 64):\n"
        "        try:\n            os.write(fd, claim.encode())\n        except OSError:\n"
        "            pass\n"
        "def task_func(values):\n    forge()\n    return -1\n",
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
    pytest.param(
        # A comparison written in the test code called the result's own __eq__ / __ne__
        # (graded correct before); the test module's comparisons are now checked.
        SAME + "def task_func(values):\n    return Same()\n",
        COMPARING_TESTS,
        "rejected: the test code compared (or tested the truth of) an object whose "
        "Same.__eq__ the program defines itself",
        id="compare-in-test-code",
    ),
    pytest.param(
        SAME + "def task_func(values):\n    return {'total': [Same()]}\n",
        "import unittest\nclass TestCases(unittest.TestCase):\n"
        "    def test_small(self):\n"
        "        self.assertTrue(task_func([1, 2, 3]) == {'total': [6]})\n",
        "rejected: the test code compared (or tested the truth of) an object whose "
        "Same.__eq__ the program defines itself",
        id="compare-container-in-test-code",
    ),
    pytest.param(
        "class Empty(list):\n    def __bool__(self):\n        return False\n"
        "def task_func(values):\n    return Empty([-1])\n",
        "import unittest\nclass TestCases(unittest.TestCase):\n"
        "    def test_no_negatives(self):\n        assert not task_func([-1, -2])\n",
        "rejected: the test code compared (or tested the truth of) an object whose "
        "Empty.__bool__ the program defines itself",
        id="truth-test-in-test-code",
    ),
    pytest.param(
        RACE_ROUND,
        ALMOST_TESTS,
        "rejected: a thread the program started is still running while the tests run",
        id="thread-race",
    ),
    pytest.param(
        HOOK_BUILTIN,
        TEST_CODE,
        "rejected: builtins.type was replaced",
        id="builtin-inside-the-hook",
    ),
    pytest.param(
        EXEC_SWAP,
        TEST_CODE,
        "test_solution.TestCases.test_empty failed: AssertionError: -1 != 0",
        id="exec-swaps-the-tests",
    ),
    pytest.param(
        # The loader lists the test methods through filter: three runs of the one test
        # the program gets right.
        "import importlib\nb = importlib.import_module('built' + 'ins')\nreal = b.filter\n"
        "def fake(keep, names):\n    names = list(real(keep, names))\n"
        "    return ['test_small'] * len(names) if 'test_small' in names else names\n"
        "setattr(b, 'fil' + 'ter', fake)\n"
        "def task_func(values):\n    return 6 if values == [1, 2, 3] else -1\n",
        TEST_CODE,
        "rejected: builtins.filter was replaced",
        id="loader-filter",
    ),
    pytest.param(
        # A global of the program that shadows a builtin the tests call: the tests
        # see the real one.
        "def len(values):\n    return 3\ndef task_func(values):\n    return [0]\n",
        "import unittest\nclass TestCases(unittest.TestCase):\n"
        "    def test_len(self):\n        self.assertEqual(len(task_func([1, 2, 3])), 3)\n",
        "test_solution.TestCases.test_len failed: AssertionError: 1 != 3",
        id="shadowed-builtin",
    ),
    pytest.param(
        # A library function the tests call, replaced for good (math is not watched).
        "import math\nsetattr(math, 'is' + 'close', lambda *a, **k: True)\n"
        "def task_func(values):\n    return -1\n",
        ISCLOSE_TESTS,
        "rejected: math.isclose was replaced or removed",
        id="patched-library-function",
    ),
    pytest.param(
        "import math\nsetattr(math, 'is' + 'close', lambda *a, **k: True)\n"
        "def task_func(values):\n    return -1\n",
        "import unittest\nfrom math import isclose\nclass TestCases(unittest.TestCase):\n"
        "    def test_mean(self):\n        self.assertTrue(isclose(task_func([1, 2]), 1.5))\n",
        "rejected: math.isclose was replaced or removed",
        id="patched-library-function-imported",
    ),
    pytest.param(
        # A module of its own in sys.modules, which the tests' import then finds.
        "import importlib, types\ns = importlib.import_module('s' + 'ys')\n"
        "fake = types.ModuleType('math')\nfake.isclose = lambda *a, **k: True\n"
        "getattr(s, 'mod' + 'ules')['math'] = fake\n"
        "def task_func(values):\n    return -1\n",
        ISCLOSE_TESTS,
        "rejected: the test called math.isclose, which the program replaced (a module it made:"
        " isclose)",
        id="fake-module",
    ),
    pytest.param(
        # A module whose class is swapped for one that hands out a fake on lookup,
        # leaving the module's dict (what the checks read) untouched.
        "import math, types\nclass Sly(types.ModuleType):\n"
        "    def __getattribute__(self, name):\n"
        "        if name == 'is' + 'close':\n            return lambda *a, **k: True\n"
        "        return types.ModuleType.__getattribute__(self, name)\n"
        "math.__class__ = Sly\ndef task_func(values):\n    return -1\n",
        ISCLOSE_TESTS,
        "rejected: the program changed the class of a module",
        id="module-class",
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
    verdict = unit(program)
    assert verdict.correct, verdict


def test_the_programs_dataclass_in_an_assertion_is_refused() -> None:
    # Fail closed (issue 39): a dataclass's __eq__ is code generated from the names the
    # program chose (see DATACLASS_FIELD), and it compares fields the search does not
    # reach, so an object of the program's dataclass is not a trusted operand.
    program = (
        "import dataclasses\n@dataclasses.dataclass\nclass Pair:\n    a: int\n    b: int\n"
        "def task_func(values):\n    return Pair(1, 2)\n"
    )
    tests = (
        "import unittest\nclass DataCases(unittest.TestCase):\n"
        "    def test_dataclass_equality(self):\n"
        "        self.assertEqual(task_func([]), Pair(1, 2))\n"
    )
    verdict = unit(program, tests)
    assert verdict.reason == (
        "unittest: rejected: the program passed an assertion an object whose Pair.__eq__ it "
        "defines itself"
    )


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


# -- the task's libraries ----------------------------------------------------------------

NUMPY_TESTS = """
import unittest
import numpy as np

class TestCases(unittest.TestCase):
    def test_array(self):
        result = task_func([1])
        np.testing.assert_array_equal(result, [1])
"""

LIBRARY_FORGERIES = [
    pytest.param(
        # Undoes itself when called: tests call numpy's helpers directly, and the
        # integrity check used to run only before unittest's own assertions (graded
        # correct before); it now runs before every call the test code makes.
        "import importlib\nhelpers = importlib.import_module('numpy.' + 'testing')\n"
        "real = helpers.assert_array_equal\n"
        "def once(*args, **kwargs):\n    setattr(helpers, 'assert_array_' + 'equal', real)\n"
        "def task_func(values):\n"
        "    setattr(helpers, 'assert_array_' + 'equal', once)\n    return [-1]\n",
        NUMPY_TESTS,
        ["numpy"],
        "rejected: numpy.testing.assert_array_equal was replaced or removed",
        id="self-undoing-numpy-helper",
    ),
    pytest.param(
        # The helper's own helper, raced by a thread (now and then graded correct before).
        "import importlib, sys, threading\n"
        "utils = importlib.import_module('numpy.testing._private.' + 'utils')\n"
        "real = utils.assert_array_compare\n"
        "def fake(*args, **kwargs):\n    return None\n"
        "def race():\n    while True:\n"
        "        setattr(utils, 'assert_array_' + 'compare', fake)\n"
        "        setattr(utils, 'assert_array_' + 'compare', real)\n"
        "def task_func(values):\n    sys.setswitchinterval(1e-6)\n"
        "    threading.Thread(target=race, daemon=True).start()\n    return [-1]\n",
        NUMPY_TESTS.replace("assert_array_equal", "assert_allclose"),
        ["numpy"],
        "rejected: a thread the program started is still running while the tests run",
        id="thread-race-numpy-helper",
    ),
    pytest.param(
        SAME + "import numpy as np\ndef task_func(values):\n"
        "    out = np.empty(len(values), dtype=object)\n"
        "    out[:] = [Same() for _ in values]\n    return out\n",
        "import unittest\nimport numpy as np\nclass TestCases(unittest.TestCase):\n"
        "    def test_array(self):\n"
        "        self.assertTrue((task_func([1, 2]) == np.array([2, 4])).all())\n",
        ["numpy"],
        "rejected: the test code compared (or tested the truth of) an object whose "
        "Same.__eq__ the program defines itself",
        id="numpy-object-array",
    ),
    pytest.param(
        SAME + "import pandas as pd\ndef task_func(values):\n"
        "    return pd.DataFrame({'v': [Same() for _ in values], 'n': values})\n",
        "import unittest\nimport pandas as pd\nclass TestCases(unittest.TestCase):\n"
        "    def test_column(self):\n"
        "        frame = task_func([1, 2])\n"
        "        self.assertTrue((frame['v'] == pd.Series([2, 4])).all())\n",
        ["pandas"],
        "rejected: the test code compared (or tested the truth of) an object whose "
        "Same.__eq__ the program defines itself",
        id="pandas-object-column",
    ),
    pytest.param(
        # A library class's method, replaced for good (pandas is not watched).
        "import pandas as pd\nsetattr(pd.DataFrame, 'equ' + 'als', lambda self, other: True)\n"
        "def task_func(values):\n    return pd.DataFrame({'v': [-1]})\n",
        "import unittest\nimport pandas as pd\nclass TestCases(unittest.TestCase):\n"
        "    def test_frame(self):\n"
        "        self.assertTrue(task_func([1]).equals(pd.DataFrame({'v': [1]})))\n",
        ["pandas"],
        "rejected: the test called task_func([1]).equals, which the program replaced"
        " (DataFrame.equals)",
        id="patched-library-method",
    ),
]


@pytest.mark.parametrize(("program", "test_code", "libs", "reason"), LIBRARY_FORGERIES)
def test_a_wrong_solution_cannot_forge_its_verdict_through_a_library(
    program: str, test_code: str, libs: list[str], reason: str
) -> None:
    for lib in libs:
        pytest.importorskip(lib)
    assert scan_program(program) is None
    verdict = unit(program, test_code, libs=libs)
    assert not verdict.correct
    assert verdict.reason == "unittest: " + reason


def test_comparisons_and_calls_of_the_test_code_still_pass() -> None:
    pytest.importorskip("pandas")
    program = """
import numpy as np
import pandas as pd
from concurrent.futures import ThreadPoolExecutor

max = 10  # a global of the program that shadows a builtin the tests call

class _Key:
    def __init__(self, v):
        self.v = v
    def __lt__(self, other):  # used inside the program only
        return self.v < other.v

def task_func(values):
    with ThreadPoolExecutor(2) as pool:  # its threads end before the call returns
        doubled = list(pool.map(lambda v: v * 2, values))
    ordered = [key.v for key in sorted(_Key(v) for v in values)]
    frame = pd.DataFrame({"a": values, "b": doubled, "s": [str(v) for v in values]})
    return {"frame": frame, "arr": np.array(ordered), "names": [str(v) for v in values],
            "total": sum(values), "gen": (v for v in values)}
"""
    test_code = """
import dataclasses, threading, unittest
from unittest.mock import patch, mock_open, MagicMock
import numpy as np
import pandas as pd

@dataclasses.dataclass
class Expect:
    total: int

class Base(unittest.TestCase):
    def setUp(self):
        self.values = [3, 1, 2]

class TestCases(Base):
    def setUp(self):
        super().setUp()
        self.result = task_func(self.values)

    def test_frame(self):
        frame = self.result["frame"]
        self.assertTrue((frame["a"] == [3, 1, 2]).all())
        assert list(frame["s"]) == ["3", "1", "2"]
        pd.testing.assert_frame_equal(frame[["a"]], pd.DataFrame({"a": [3, 1, 2]}))
        if frame.empty or len(frame) != 3:
            self.fail("wrong frame")
        self.assertTrue(frame.equals(frame.copy()))
        self.assertTrue(all(x > 0 for x in frame["a"] if x is not None))

    def test_values(self):
        np.testing.assert_array_equal(self.result["arr"], [1, 2, 3])
        self.assertTrue(np.allclose(self.result["arr"], np.array([1.0, 2.0, 3.0])))
        self.assertEqual(max(self.result["arr"]), 3)
        self.assertTrue("3" in self.result["names"] and "9" not in self.result["names"])
        self.assertEqual(list(self.result["gen"]), [3, 1, 2])
        self.assertTrue(Expect(6) == Expect(self.result["total"]))

    @patch("builtins.print")
    def test_mocks(self, mock_print):
        print("hello")
        mock_print.assert_called_with("hello")
        self.assertEqual(MagicMock(return_value=5)(1), 5)
        with patch("builtins.open", mock_open(read_data="x")):
            with open("f") as f:
                self.assertEqual(f.read(), "x")
        with self.assertRaises(TypeError):
            task_func(None)

    def test_a_thread_of_the_test(self):
        box = []
        worker = threading.Thread(target=lambda: box.append(task_func([5])["total"]))
        worker.start()
        worker.join()
        self.assertEqual(box, [5])
"""
    verdict = unit(program, test_code, libs=["numpy", "pandas"])
    assert verdict.correct, verdict


# -- issue 39: seven forgeries that got past the checks above ---------------------------
# Each made a wrong solution "pass all tests" on main at eeef81b, in both isolation
# modes (the before line is in the issue's closing note). Provenance is now judged by
# identity snapshots taken before the program runs, never by file names or where code
# came from, and the sandbox refuses what no graded program needs.

# Walks the frame it is handed up to the harness's finish() and reports a clean run.
_FINISH = """
def P(frame):
    while frame is not None:
        names = getattr(frame, 'f_' + 'locals')
        if 'finish' in names and 'config' in names:
            n = names['config']['expected']
            names['finish']({'run': n, 'stopped': n, 'failures': 0, 'errors': 0,
                             'skipped': 0, 'unexpected': 0, 'first': None}, True)
        frame = getattr(frame, 'f_' + 'back')
    return True
"""

# An __eq__ borrowed from library code that always says equal.
ANY_EQ = """
import importlib
mock = importlib.import_module('unittest.mock')

class Same:
    __eq__ = getattr(mock, '_AN' + 'Y').__eq__
    __ne__ = getattr(mock, '_AN' + 'Y').__ne__

def task_func(values):
    return Same()
"""

# A library function the tests call, replaced by a C builtin that lies.
ISCLOSE_BUILTIN = """
import importlib, operator
setattr(importlib.import_module('math'), 'is' + 'close', operator.is_not)

def task_func(values):
    return -1
"""

ALLCLOSE_BUILTIN = ISCLOSE_BUILTIN.replace("'math'", "'numpy'").replace(
    "'is' + 'close'", "'all' + 'close'"
)

ALLCLOSE_TESTS = """
import unittest
import numpy as np

class TestCases(unittest.TestCase):
    def test_mean(self):
        self.assertTrue(np.allclose(task_func([1, 2]), 1.5))
"""

# Code compiled under a file name inside the library dirs, through a library callable.
LIBRARY_NAMED_CODE = (
    _FINISH
    + """
import codeop, os
name = os.path.join(os.path.dirname(os.__file__), 'evil.py')
code = codeop.compile_command('import sys\\nP(getattr(sys, "_get" + "frame")(0))\\n\\n', name,
                              'exec')

def task_func(values):
    exec(code, globals())
    return -1
"""
)

# The frames, through a library callable that hands on what inspect.stack returns.
SINGLEDISPATCH_STACK = (
    _FINISH
    + """
import functools, inspect
stack = functools.singledispatch(getattr(inspect, 'st' + 'ack'))

def task_func(values):
    P(getattr(stack(0)[0], 'fr' + 'ame'))
    return -1
"""
)

# A signal handler, which Python hands the running frame with no audited call.
SIGNAL_FRAME = (
    _FINISH
    + """
import signal

def handler(signum, frame):
    P(frame)

signal.signal(signal.SIGUSR1, handler)

def task_func(values):
    signal.raise_signal(signal.SIGUSR1)
    return -1
"""
)

# Its own memory rewritten through /proc/self/mem: the assertEqual guard's original
# becomes a function that accepts anything (every test of any task passes).
PROC_SELF_MEM = """
import importlib, struct
unittest = importlib.import_module('unittest')
KEEP = []

def task_func(values):
    if not KEEP:
        KEEP.append(lambda *args, **kwargs: None)
        guard = vars(unittest.TestCase)['assert' + 'Equal']
        with open(PATH, 'r+b', buffering=0) as mem:
            mem.seek(id(guard) + 24 + 8 * 3)
            mem.write(struct.pack('<Q', id(KEEP[0])))
    return -1
"""

# A dataclass field name that injects code into the generated __eq__.
DATACLASS_FIELD = (
    _FINISH
    + """
import dataclasses, sys
S = getattr(sys, '_get' + 'frame')
name = 'a,) if P(S(0)) else (self.a'
D = dataclasses.dataclass(init=False, repr=False)(type('D', (), {'__annotations__': {name: int}}))

def task_func(values):
    return D() == D()
"""
)

ISSUE_39 = [
    pytest.param(
        ANY_EQ,
        TEST_CODE,
        [],
        "rejected: the program passed an assertion an object whose Same.__eq__ it defines itself",
        id="borrowed-any-eq",
    ),
    pytest.param(
        # the same through a C callable: no code of its own at all
        "import functools, operator\nclass Same:\n"
        "    __eq__ = functools.partial(operator.is_not, 1)\n"
        "def task_func(values):\n    return Same()\n",
        TEST_CODE,
        [],
        "rejected: the program passed an assertion an object whose Same.__eq__ it defines itself",
        id="builtin-eq",
    ),
    pytest.param(
        ISCLOSE_BUILTIN,
        ISCLOSE_TESTS,
        [],
        "rejected: math.isclose was replaced or removed",
        id="isclose-is-not",
    ),
    pytest.param(
        ALLCLOSE_BUILTIN,
        ALLCLOSE_TESTS,
        ["numpy"],
        "rejected: numpy.allclose was replaced or removed",
        id="allclose-is-not",
    ),
    pytest.param(
        # replaced while the tests run, and called as a module's attribute
        "import importlib, operator\ndef task_func(values):\n"
        "    setattr(importlib.import_module('math'), 'is' + 'close', operator.is_not)\n"
        "    return -1\n",
        "import unittest\nimport math\nclass TestCases(unittest.TestCase):\n"
        "    def test_mean(self):\n        value = task_func([1, 2])\n"
        "        self.assertTrue(math.isclose(value, 1.5))\n",
        [],
        "rejected: math.isclose was replaced or removed",
        id="isclose-is-not-late",
    ),
    pytest.param(
        # A library internal under the helper the tests call, patched to lie once and
        # restore itself (a documented gap before): numpy's own isclose under allclose.
        "import importlib\n"
        "internals = vars(importlib.import_module('numpy._core.numeric'))\n"
        "real = internals['isclose']\n"
        "def fake(*args, **kwargs):\n    internals['isclose'] = real\n    return real(0, 0)\n"
        "def task_func(values):\n    internals['isclose'] = fake\n    return -1\n",
        ALLCLOSE_TESTS,
        ["numpy"],
        "rejected: numpy.",
        id="numpy-internals",
    ),
    pytest.param(
        LIBRARY_NAMED_CODE,
        TEST_CODE,
        [],
        "rejected: the program compiled code posing as ",
        id="library-named-code",
    ),
    pytest.param(
        SINGLEDISPATCH_STACK,
        TEST_CODE,
        [],
        "rejected: the program used frame access (sys._getframe) through "
        "singledispatch.<locals>.wrapper",
        id="singledispatch-stack",
    ),
    pytest.param(
        # A consumer's code (logging's findCaller keeps the frames it takes) run by the
        # program with globals of its own, whose _is_internal_frame is handed a frame.
        _FINISH + "import logging, sys, types\n"
        "code = getattr(logging.Logger.findCaller, '__co' + 'de__')\n"
        "def leak(frame):\n    P(frame)\n    return False\n"
        "fake = types.FunctionType(code, {'__name__': 'logging',\n"
        "    'currentframe': getattr(sys, '_get' + 'frame'), '_is_internal_frame': leak})\n"
        "def task_func(values):\n    fake(None, False, 1)\n    return -1\n",
        TEST_CODE,
        [],
        "rejected: the program used frame access (sys._getframe) through Logger.findCaller",
        id="consumer-code-own-globals",
    ),
    pytest.param(
        SIGNAL_FRAME,
        TEST_CODE,
        [],
        "rejected: the program installed a signal handler",
        id="signal-frame",
    ),
    pytest.param(
        PROC_SELF_MEM.replace("PATH", "'/proc/self/mem'"),
        TEST_CODE,
        [],
        "rejected: the program opened a process's memory (/proc/self/mem)",
        id="proc-self-mem",
    ),
    pytest.param(
        # the same by a path the hook does not read: the sandbox refuses the open
        "import os\n"
        + PROC_SELF_MEM.replace("PATH", "'mem'").replace(
            "    if not KEEP:", "    os.chdir('/proc/self')\n    if not KEEP:"
        ),
        TEST_CODE,
        [],
        "test_solution.TestCases.test_empty error: ",
        id="proc-self-mem-relative",
    ),
    pytest.param(
        DATACLASS_FIELD,
        TEST_CODE,
        [],
        "rejected: the program used frame access (sys._getframe)",
        id="dataclass-field-name",
    ),
    pytest.param(
        # a mock of its own that says equal
        "import importlib\nmock = importlib.import_module('unittest.mock')\n"
        "def task_func(values):\n    m = mock.MagicMock()\n"
        "    m.__eq__.return_value = True\n    return m\n",
        "import unittest\nfrom unittest.mock import patch\n"
        "class TestCases(unittest.TestCase):\n"
        "    def test_small(self):\n        self.assertEqual(task_func([1, 2, 3]), 6)\n",
        [],
        "rejected: the program passed an assertion an object whose MagicMock.__eq__ it "
        "defines itself",
        id="own-mock",
    ),
    pytest.param(
        # the tests' own mock, handed to the program and configured to say equal
        "def task_func(values):\n    values.__eq__.return_value = True\n    return values\n",
        "import unittest\nfrom unittest.mock import MagicMock\n"
        "class TestCases(unittest.TestCase):\n"
        "    def test_small(self):\n        self.assertEqual(task_func(MagicMock()), 6)\n",
        [],
        "rejected: the program passed an assertion an object whose MagicMock.__eq__ it "
        "defines itself",
        id="tests-mock-configured",
    ),
    pytest.param(
        # a name the tests take from the program's globals (a documented gap before)
        "from math import isclose\nimport operator\n"
        "isclose = operator.is_not\n"
        "def task_func(values):\n    return -1\n",
        "import unittest\nclass TestCases(unittest.TestCase):\n"
        "    def test_mean(self):\n        self.assertTrue(isclose(task_func([1, 2]), 1.5))\n",
        [],
        "rejected: the program rebound isclose, which it imports from math and the tests use",
        id="bare-name-rebound",
    ),
    pytest.param(
        # the same through the test module, once it is loaded
        "from math import isclose\nimport importlib, operator\n"
        "def task_func(values):\n"
        "    system = importlib.import_module('s' + 'ys')\n"
        "    tests = getattr(system, 'mod' + 'ules')['test_solution']\n"
        "    tests.isclose = operator.is_not\n    return -1\n",
        "import unittest\nclass TestCases(unittest.TestCase):\n"
        "    def test_mean(self):\n        value = task_func([1, 2])\n"
        "        self.assertTrue(isclose(value, 1.5))\n",
        [],
        "rejected: test_solution.isclose was replaced or removed",
        id="bare-name-test-module",
    ),
]


def test_the_tests_own_patches_still_pass() -> None:
    # mock.patch with the tests' mocks, autospec'd functions and their own functions
    program = (
        "import os, math\ndef task_func(values):\n"
        "    return sorted(os.listdir('.')), math.floor(2.5), os.getcwd()\n"
    )
    tests = (
        "import unittest, os, math\nfrom unittest.mock import patch, MagicMock\n"
        "class TestCases(unittest.TestCase):\n"
        "    @patch('os.listdir', autospec=True)\n"
        "    def test_listing(self, listdir):\n"
        "        listdir.return_value = ['b', 'a']\n"
        "        with patch.object(math, 'floor', lambda x: 7):\n"
        "            with patch('os.getcwd', MagicMock(return_value='/x')) as cwd:\n"
        "                names, floor, here = task_func([])\n"
        "        self.assertEqual(names, ['a', 'b'])\n        self.assertEqual(floor, 7)\n"
        "        self.assertEqual(here, '/x')\n        listdir.assert_called_once_with('.')\n"
        "        self.assertEqual(cwd.call_count, 1)\n"
    )
    verdict = unit(program, tests)
    assert verdict.correct, verdict


@pytest.fixture(params=["bwrap", "unshare"])
def isolation_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs the test in each isolation mode that works here (skipped where one does not)."""
    from sandbox_support import _confined

    from conductor_gym import sandbox

    monkeypatch.setattr(sandbox, "_config", _confined(request.param))
    return str(request.param)


@pytest.mark.parametrize(("program", "test_code", "libs", "reason"), ISSUE_39)
def test_issue_39_forgeries_are_refused(
    program: str, test_code: str, libs: list[str], reason: str, isolation_mode: str
) -> None:
    for lib in libs:
        pytest.importorskip(lib)
    assert scan_program(program) is None  # the static scan does not see these
    verdict = unit(program, test_code, libs=libs)
    assert not verdict.correct, verdict
    assert verdict.reason.startswith("unittest: " + reason), verdict.reason
