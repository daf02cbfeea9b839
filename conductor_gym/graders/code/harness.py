"""The harness scripts that run inside the sandbox (``call`` and ``unittest``), and
reading the single result line each one tags with its per-run nonce."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from conductor_gym.sandbox import ExecResult

_CALL_HARNESS = r"""
import json
import os
import sys


def _main():
    config = json.loads(sys.stdin.read())
    nonce = config.pop("nonce")
    dumps, write, exit_ = json.dumps, os.write, os._exit
    out = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    sys.stdin = open(os.devnull)

    def describe(exc):
        try:
            text = str(exc)
        except BaseException:
            text = "?"
        return type(exc).__name__ + (": " + text[:300] if text else "")

    def report(payload):
        try:
            line = dumps(payload, allow_nan=False)
        except (TypeError, ValueError, RecursionError, OverflowError) as exc:
            line = dumps({"error": "the result is not JSON-serialisable: " + describe(exc)})
        data = (nonce + " " + line + "\n").encode("utf-8", "replace")
        while data:
            data = data[write(out, data):]
        exit_(0)

    namespace = {"__name__": "solution", "__file__": "solution.py", "__builtins__": __builtins__}
    try:
        with open("solution.py", encoding="utf-8") as f:
            source = f.read()
        exec(compile(source, "solution.py", "exec"), namespace)
    except BaseException as exc:
        report({"error": "the program raised " + describe(exc) + " when loaded"})
    name = config["fn_name"]
    target = None
    cls = namespace.get("Solution")
    try:
        if isinstance(cls, type) and callable(getattr(cls, name, None)):
            target = getattr(cls(), name)
        elif callable(namespace.get(name)):
            target = namespace[name]
    except BaseException as exc:
        report({"error": "creating Solution() raised " + describe(exc)})
    if target is None:
        report({"error": "the program defines neither Solution." + name + " nor " + name})
    try:
        result = target(*config["args"])
    except BaseException as exc:
        report({"error": "the call raised " + describe(exc)})
    report({"result": result})


_main()
"""

_UNITTEST_HARNESS = r"""
import builtins
import json
import os
import sys
import types
import unittest
import unittest.case
import unittest.loader
import unittest.result
import unittest.suite


def _main():
    config = json.loads(sys.stdin.read())
    nonce = config.pop("nonce")
    dumps, write, exit_ = json.dumps, os.write, os._exit
    TestCase, TestResult, TestLoader = unittest.TestCase, unittest.TestResult, unittest.TestLoader
    out = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    sys.stdin = open(os.devnull)
    os.environ.setdefault("MPLBACKEND", "Agg")

    def describe(exc):
        try:
            text = str(exc)
        except BaseException:
            text = "?"
        return type(exc).__name__ + (": " + text[:300] if text else "")

    def report(payload):
        data = (nonce + " " + dumps(payload) + "\n").encode("utf-8", "replace")
        while data:
            data = data[write(out, data):]
        exit_(0)

    watched_classes = []
    for owner in (unittest.case, unittest.result, unittest.suite, unittest.loader):
        for value in list(vars(owner).values()):
            if isinstance(value, type) and value.__module__ == owner.__name__:
                watched_classes.extend(k for k in value.__mro__ if k is not object)
    watched_modules = [builtins, unittest, unittest.case, unittest.result, unittest.suite,
                       unittest.loader]
    class_state = {}
    test_state = {}
    module_state = {}

    def record_classes(classes):
        for klass in classes:
            if klass not in class_state:
                class_state[klass] = dict(vars(klass))

    def record_test_classes(classes):
        # Test classes may set data attributes (setUpClass does): only their methods and
        # test names are protected.
        for klass in classes:
            if klass not in class_state and klass not in test_state:
                test_state[klass] = {
                    key: value for key, value in vars(klass).items()
                    if key.startswith("test") or callable(value)
                    or isinstance(value, (staticmethod, classmethod, property))
                }

    record_classes(watched_classes)
    for module in watched_modules:
        module_state[module] = dict(vars(module))

    def tampered():
        for klass, before in class_state.items():
            now = vars(klass)
            if now.keys() != before.keys():
                return klass.__name__ + " gained or lost attributes"
            for key, value in before.items():
                if now[key] is not value:
                    return klass.__name__ + "." + key + " was replaced"
        for klass, before in test_state.items():
            now = vars(klass)
            for key, value in before.items():
                if key not in now or now[key] is not value:
                    return klass.__name__ + "." + key + " was replaced or removed"
            for key in now:
                if key.startswith("test") and key not in before:
                    return klass.__name__ + "." + key + " was added"
        for module, before in module_state.items():
            now = vars(module)
            for key, value in before.items():
                if key not in now or now[key] is not value:
                    return module.__name__ + "." + key + " was replaced or removed"
        return None

    try:
        with open("solution.py", encoding="utf-8") as f:
            source = f.read()
        solution = types.ModuleType("solution")
        solution.__file__ = os.path.abspath("solution.py")
        sys.modules["solution"] = solution
        exec(compile(source, "solution.py", "exec"), solution.__dict__)
    except BaseException as exc:
        report({"error": "the solution raised " + describe(exc) + " when imported"})
    problem = tampered()
    if problem is not None:
        report({"tampered": problem})
    if not callable(solution.__dict__.get(config["entry_point"])):
        report({"error": "the solution does not define " + config["entry_point"]})

    tests_module = types.ModuleType("test_solution")
    for key, value in solution.__dict__.items():
        if not (key.startswith("__") and key.endswith("__")):
            tests_module.__dict__[key] = value
    tests_module.__file__ = os.path.abspath("test_solution.py")
    sys.modules["test_solution"] = tests_module
    try:
        with open("test_solution.py", encoding="utf-8") as f:
            test_source = f.read()
        exec(compile(test_source, "test_solution.py", "exec"), tests_module.__dict__)
    except BaseException as exc:
        report({"error": "loading the tests raised " + describe(exc)})
    loader = TestLoader()
    suite = unittest.suite.TestSuite()
    for name in config["classes"]:
        cls = tests_module.__dict__.get(name)
        if isinstance(cls, type) and issubclass(cls, TestCase):
            record_test_classes([k for k in cls.__mro__ if k is not object])
            suite.addTests(loader.loadTestsFromTestCase(cls))

    class Result(TestResult):
        def __init__(self):
            super().__init__()
            self.failfast = True
            self.problem = None
            self.first = None
            self.stopped = 0

        def _note(self, test, kind):
            if self.first is None:
                self.first = [test.id(), kind]

        def addFailure(self, test, err):
            super().addFailure(test, err)
            self._note(test, "failed: " + describe(err[1]))

        def addError(self, test, err):
            super().addError(test, err)
            self._note(test, "error: " + describe(err[1]))

        def addSubTest(self, test, subtest, err):
            super().addSubTest(test, subtest, err)
            if err is not None:
                self._note(subtest, "failed: " + describe(err[1]))
                self.stop()

        def addSkip(self, test, reason):
            super().addSkip(test, reason)
            self._note(test, "skipped: " + str(reason)[:200])
            self.stop()

        def addUnexpectedSuccess(self, test):
            super().addUnexpectedSuccess(test)
            self._note(test, "unexpected success")
            self.stop()

        def stopTest(self, test):
            super().stopTest(test)
            self.stopped += 1
            if self.problem is None:
                self.problem = tampered()
                if self.problem is not None:
                    self.stop()

    result = Result()
    try:
        suite.run(result)
    except BaseException as exc:
        report({"error": "running the tests raised " + describe(exc)})
    problem = result.problem or tampered()
    if problem is not None:
        report({"tampered": problem})
    report({
        "run": result.testsRun,
        "stopped": result.stopped,
        "failures": len(result.failures),
        "errors": len(result.errors),
        "skipped": len(result.skipped),
        "unexpected": len(result.unexpectedSuccesses),
        "first": result.first,
    })


_main()
"""


def _tagged_line(result: ExecResult, nonce: str) -> tuple[Any, str | None]:
    """The JSON payload of the single line tagged with ``nonce``, or why there is none."""
    prefix = nonce + " "
    lines = [line for line in result.stdout.splitlines() if line.startswith(prefix)]
    if len(lines) != 1:
        return None, f"expected one result line from the harness, found {len(lines)}"
    try:
        return json.loads(lines[0][len(prefix) :]), None
    except ValueError:
        return None, "the harness's result line is not valid JSON"
