r"""Grader ``"code"``: the response's program passes the task's tests in the sandbox.

Used for LiveCodeBench (``stdio`` and ``call`` tasks) and BigCodeBench (``unittest``
tasks). Every program runs in :func:`conductor_gym.sandbox.run_python` (imported when a
grade is asked for), one fresh process per run; ``reference`` is not used.

The program is the *last* fenced code block of the response whose info string is empty
or names Python (```` ```python ````, ```` ```py ````, ```` ``` ````); a block
whose closing fence is missing does not count. No such block is wrong (``extracted=None``).

Contract on ``metadata`` (a malformed one raises
:class:`~conductor_gym.graders.base.GraderError`: a broken task, not a wrong answer):

* ``code_kind`` is ``"stdio"``, ``"call"`` or ``"unittest"``;
* ``timeout_s`` (default 6.0) is the wall-clock limit per test (per test *method* for
  ``unittest``, whose tests share one run) and ``memory_mb`` (default 1024) the memory
  limit of each run.

A test passes only when its process exits cleanly (status ``ok``, exit code 0) within
its limits; grading stops at the first failing test and the ``reason`` says which test
failed and why.

``stdio``: ``tests`` is ``[{"input": str, "output": str}, ...]``. The program runs once
per test with ``input`` as stdin; it passes when stdout equals ``output`` after both are
normalised (line endings unified, trailing whitespace stripped from each line, trailing
blank lines dropped). The expected output never enters the sandbox.

``call``: ``fn_name`` names the function and ``tests`` is
``[{"input": [positional args], "output": value}, ...]`` (JSON values). A harness
written here runs in the sandbox: it reads the arguments and a per-run nonce from stdin
before the program is loaded, loads the program from ``solution.py``, takes
``Solution().<fn_name>`` (LeetCode style) or else a top-level ``<fn_name>``, calls it once
and prints ``<nonce> <JSON>`` (the program's own stdout goes to ``/dev/null``). The
*parent* decodes that JSON and compares it with the expected value (bools only equal
bools, numbers compare by value, lists and dicts element by element), so an object that
claims to equal everything fails: it cannot be serialised, or compares as plain data
after decoding. The expected outputs never enter the sandbox.

``unittest`` (BigCodeBench): ``test_code`` is a module defining ``unittest.TestCase``
classes that call the solution's ``entry_point``; ``libs`` (default ``[]``) lists the
modules the task needs. Libraries that cannot be imported here
(:func:`missing_libraries`) raise ``GraderError`` naming them: that is the machine's
fault, not the answer's. The program becomes ``solution.py``; the test module is run
with the solution's globals in scope (as BigCodeBench's own harness, which concatenates
the two) by a harness that reports the run on one line tagged with a per-run nonce read
from stdin before the solution is imported. The parent then requires:

* no test failed, errored, was skipped (a program could raise ``SkipTest``) or
  unexpectedly succeeded;
* the number of tests run equals the number of ``test*`` methods found by parsing
  ``test_code`` with :mod:`ast` here, in the parent;
* exactly one result line carries the nonce (a program printing a fake line without
  the nonce is ignored; one that printed a second tagged line is rejected);
* the test machinery is intact: before the solution is imported the harness records the
  attributes of ``unittest``'s classes and modules and of :mod:`builtins` (and, once
  loaded, of the test classes), and checks after the import and after every test that
  none was replaced, added to or removed (a module may gain attributes; nothing it had
  may change).

Before anything runs, the program is also scanned statically (:func:`scan_program`) and
rejected (wrong, with the reason) if it writes attributes of ``unittest`` / ``TestCase``
/ ``TestResult`` (or aliases of them) or of ``builtins``, or uses ``sys.modules``,
``sys._getframe``, frame objects (``f_back``, ``f_locals``, ``inspect.currentframe``,
``inspect.stack``...), ``gc.get_objects``/``get_referrers``, ``os._exit``, ``sys.exit``,
``__import__``, ``__builtins__``, ``__subclasses__`` or ``__globals__``. These checks
raise the bar for a program that games its tests; they are not a proof against one that
reads its own process memory. The sandbox, not the grader, protects the host.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from conductor_gym.graders.base import Grade, GraderError, register_grader

if TYPE_CHECKING:
    from conductor_gym.sandbox import ExecResult

__all__ = [
    "DEFAULT_MEMORY_MB",
    "DEFAULT_TIMEOUT_S",
    "count_test_methods",
    "extract_code",
    "grade_code",
    "json_equal",
    "missing_libraries",
    "normalize_output",
    "scan_program",
]

DEFAULT_TIMEOUT_S = 6.0
"""Wall-clock limit per test when ``metadata["timeout_s"]`` is not given."""

DEFAULT_MEMORY_MB = 1024
"""Memory limit per run when ``metadata["memory_mb"]`` is not given."""

_PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3"})

# -- extraction and output comparison ------------------------------------------------------


def _fence(line: str) -> tuple[int, str] | None:
    """``(backticks, info word)`` if ``line`` is a code fence, else ``None`` (string
    operations only: linear in the line, whatever it holds)."""
    stripped = line.lstrip(" \t")
    ticks = len(stripped) - len(stripped.lstrip("`"))
    if ticks < 3:
        return None
    info = stripped[ticks:]
    if "`" in info:  # an info string may not contain backticks (CommonMark)
        return None
    words = info.split()
    return ticks, words[0].lower() if words else ""


def extract_code(response: str) -> str | None:
    """The last fenced code block tagged as Python (or untagged), or ``None``.

    A fence is a line starting with three or more backticks; the block ends at a line
    holding only at least as many backticks. An unclosed block does not count.
    """
    found: str | None = None
    lines = response.splitlines()
    index = 0
    while index < len(lines):
        opening = _fence(lines[index])
        if opening is None:
            index += 1
            continue
        ticks, tag = opening
        end = index + 1
        while end < len(lines):
            closing = _fence(lines[end])
            if closing is not None and closing[0] >= ticks and not closing[1]:
                break
            end += 1
        if end >= len(lines):
            break  # unclosed: neither this block nor anything after it counts
        if tag in _PYTHON_TAGS:
            found = "\n".join(lines[index + 1 : end]) + "\n"
        index = end + 1
    return found


def normalize_output(text: str) -> str:
    """``text`` with ``\\r\\n``/``\\r`` line endings unified, trailing whitespace removed
    from every line and trailing blank lines dropped."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    stripped = [line.rstrip() for line in lines]
    while stripped and not stripped[-1]:
        stripped.pop()
    return "\n".join(stripped)


def json_equal(got: Any, expected: Any) -> bool:
    """Equality of two decoded JSON values: bools equal only bools, numbers compare by
    value (``1 == 1.0``), strings exactly, lists element by element, dicts key by key."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(expected, bool) and isinstance(got, bool) and got is expected
    if isinstance(expected, int | float) and isinstance(got, int | float):
        return got == expected
    if isinstance(expected, list) and isinstance(got, list):
        return len(got) == len(expected) and all(map(json_equal, got, expected))
    if isinstance(expected, dict) and isinstance(got, dict):
        return got.keys() == expected.keys() and all(
            json_equal(got[key], expected[key]) for key in expected
        )
    if isinstance(expected, str) and isinstance(got, str):
        return got == expected
    return expected is None and got is None


# -- libraries -----------------------------------------------------------------------------


def missing_libraries(libs: Iterable[str]) -> list[str]:
    """Which of ``libs`` (import names such as ``"numpy"`` or ``"sklearn"``) cannot be
    imported by this interpreter, which is the one the sandbox runs; in input order, each
    once. Only the top-level package is looked up (nothing is imported)."""
    missing: list[str] = []
    for lib in libs:
        name = str(lib).strip()
        if not name or name in missing:
            continue
        top = name.split(".", 1)[0]
        try:
            found = importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(name)
    return missing


# -- static checks -------------------------------------------------------------------------

_MACHINERY = frozenset(
    {
        "unittest",
        "TestCase",
        "TestResult",
        "TestSuite",
        "TestLoader",
        "TextTestRunner",
        "TextTestResult",
        "IsolatedAsyncioTestCase",
        "FunctionTestCase",
        "builtins",
        "__builtins__",
    }
)
_MACHINERY_MODULES = ("unittest", "builtins")
_FORBIDDEN_ATTRIBUTES = {
    "_getframe": "sys._getframe",
    "_current_frames": "sys._current_frames",
    "f_back": "frame access (f_back)",
    "f_locals": "frame access (f_locals)",
    "f_globals": "frame access (f_globals)",
    "f_builtins": "frame access (f_builtins)",
    "tb_frame": "frame access (tb_frame)",
    "gi_frame": "frame access (gi_frame)",
    "cr_frame": "frame access (cr_frame)",
    "ag_frame": "frame access (ag_frame)",
    "currentframe": "inspect frame access (currentframe)",
    "getouterframes": "inspect frame access (getouterframes)",
    "getinnerframes": "inspect frame access (getinnerframes)",
    "get_objects": "gc.get_objects",
    "get_referrers": "gc.get_referrers",
    "get_referents": "gc.get_referents",
    "_exit": "os._exit",
    "__subclasses__": "__subclasses__",
    "__globals__": "__globals__",
    "__builtins__": "__builtins__",
    "settrace": "sys.settrace",
    "setprofile": "sys.setprofile",
}
_FORBIDDEN_MODULE_ATTRIBUTES = {
    ("sys", "modules"): "sys.modules",
    ("sys", "exit"): "sys.exit",
    ("inspect", "stack"): "inspect frame access (stack)",
    ("inspect", "trace"): "inspect frame access (trace)",
}
_FORBIDDEN_NAMES = {"__import__": "__import__", "__builtins__": "__builtins__"}


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _chain_names(node: ast.expr) -> set[str]:
    """Every name and attribute name along ``a.b[c].d``."""
    names: set[str] = set()
    while isinstance(node, ast.Attribute | ast.Subscript | ast.Call):
        if isinstance(node, ast.Attribute):
            names.add(node.attr)
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Name):
        names.add(node.id)
    return names


def _watched_aliases(tree: ast.Module) -> tuple[dict[str, str], set[str]]:
    """``(modules, machinery)``: local names bound to modules (``import sys as s`` gives
    ``{"s": "sys"}``), and every local name that may refer to the test machinery
    (:data:`_MACHINERY`, names imported from ``unittest`` or ``builtins``, and names
    assigned from those, such as ``T = unittest.TestCase``)."""
    modules: dict[str, str] = {}
    machinery = set(_MACHINERY)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                local = alias.asname or alias.name.split(".", 1)[0]
                modules[local] = alias.name if alias.asname else local
                if alias.name.split(".", 1)[0] in _MACHINERY_MODULES:
                    machinery.add(local)
        elif isinstance(node, ast.ImportFrom) and node.module:
            from_machinery = node.module.split(".", 1)[0] in _MACHINERY_MODULES
            for alias in node.names:
                if from_machinery or alias.name in _MACHINERY:
                    machinery.add(alias.asname or alias.name)
    assignments = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.NamedExpr) and node.value
    ]
    changed = True
    while changed:  # names assigned from watched objects are watched too
        changed = False
        for node in assignments:
            if node.value is None or not _chain_names(node.value) & machinery:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name) and target.id not in machinery:
                    machinery.add(target.id)
                    changed = True
    return modules, machinery


def _check_node(node: ast.AST, modules: Mapping[str, str], machinery: set[str]) -> str | None:
    """Why ``node`` is forbidden by :func:`scan_program`, or ``None``."""
    if isinstance(node, ast.Attribute):
        if node.attr in _FORBIDDEN_ATTRIBUTES:
            return f"uses {_FORBIDDEN_ATTRIBUTES[node.attr]}"
        if isinstance(node.value, ast.Name):
            owner = modules.get(node.value.id, node.value.id)
            if (owner, node.attr) in _FORBIDDEN_MODULE_ATTRIBUTES:
                return f"uses {_FORBIDDEN_MODULE_ATTRIBUTES[owner, node.attr]}"
        if isinstance(node.ctx, ast.Store | ast.Del) and _chain_names(node) & machinery:
            return f"writes an attribute of the test machinery ({ast.unparse(node)[:120]})"
    elif isinstance(node, ast.Subscript):
        if isinstance(node.ctx, ast.Store | ast.Del) and _chain_names(node) & machinery:
            return f"writes into the test machinery ({ast.unparse(node)[:120]})"
    elif isinstance(node, ast.Name):
        if node.id in _FORBIDDEN_NAMES:
            return f"uses {_FORBIDDEN_NAMES[node.id]}"
    elif isinstance(node, ast.ImportFrom) and node.module:
        for alias in node.names:
            if (node.module, alias.name) in _FORBIDDEN_MODULE_ATTRIBUTES:
                return f"uses {_FORBIDDEN_MODULE_ATTRIBUTES[node.module, alias.name]}"
            if alias.name in _FORBIDDEN_ATTRIBUTES:
                return f"uses {_FORBIDDEN_ATTRIBUTES[alias.name]}"
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("setattr", "delattr")
        and node.args
        and _chain_names(node.args[0]) & machinery
    ):
        return f"calls {node.func.id} on the test machinery ({ast.unparse(node)[:120]})"
    return None


def scan_program(source: str) -> str | None:
    """Why the program may tamper with the test machinery (see the module docstring), or
    ``None`` when the static scan finds nothing. A program that does not parse passes
    the scan (it will fail its tests)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    modules, machinery = _watched_aliases(tree)
    for node in ast.walk(tree):
        problem = _check_node(node, modules, machinery)
        if problem is not None:
            return problem
    return None


_TEST_CASE_NAMES = frozenset({"TestCase", "IsolatedAsyncioTestCase"})


def _is_test_case_base(base: ast.expr, names: set[str]) -> bool:
    if isinstance(base, ast.Name):
        return base.id in names
    if isinstance(base, ast.Attribute):
        return base.attr in _TEST_CASE_NAMES
    return False


def count_test_methods(test_code: str) -> dict[str, int]:
    """``{class name: number of test methods}`` for the top-level ``unittest.TestCase``
    subclasses of ``test_code`` (found with :mod:`ast`, nothing is run), counting methods
    named ``test*`` the class defines or inherits from other classes of ``test_code``.

    Raises :class:`~conductor_gym.graders.base.GraderError` if ``test_code`` does not parse.
    """
    try:
        tree = ast.parse(test_code)
    except (SyntaxError, ValueError) as exc:
        raise GraderError(f"code: test_code does not parse: {exc}") from exc
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
    # Names that mean TestCase: its own names, aliases imported from unittest, and (found
    # below) the test classes of test_code, which may be bases of others.
    bases = set(_TEST_CASE_NAMES)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "unittest":
            bases |= {a.asname or a.name for a in node.names if a.name in _TEST_CASE_NAMES}
    cases: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, node in classes.items():
            if name not in cases and any(_is_test_case_base(b, bases | cases) for b in node.bases):
                cases.add(name)
                changed = True

    def methods(name: str, seen: frozenset[str]) -> set[str]:
        node = classes[name]
        own = {
            item.name
            for item in node.body
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef)
            and item.name.startswith("test")
        }
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
                own |= methods(base.id, seen | {base.id})
        return own

    return {name: len(methods(name, frozenset({name}))) for name in classes if name in cases}


# -- the harnesses (they run inside the sandbox) -------------------------------------------

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

# -- running ---------------------------------------------------------------------------------


def _sandbox_run(code: str, **kwargs: Any) -> ExecResult:
    from conductor_gym import sandbox

    try:
        return sandbox.run_python(code, **kwargs)
    except (OSError, ValueError) as exc:
        raise GraderError(f"code: the sandbox could not run the program: {exc}") from exc


def _limits(metadata: Mapping[str, Any]) -> tuple[float, int]:
    try:
        timeout_s = float(metadata.get("timeout_s", DEFAULT_TIMEOUT_S))
        memory_mb = int(metadata.get("memory_mb", DEFAULT_MEMORY_MB))
    except (TypeError, ValueError) as exc:
        raise GraderError(f"code: bad timeout_s or memory_mb: {exc}") from exc
    if not timeout_s > 0 or memory_mb <= 0:
        raise GraderError(f"code: timeout_s and memory_mb must be positive ({metadata!r})")
    return timeout_s, memory_mb


def _tests(metadata: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    tests = metadata.get("tests")
    if not isinstance(tests, Sequence) or isinstance(tests, str) or not tests:
        raise GraderError("code: metadata['tests'] must be a non-empty list")
    for number, test in enumerate(tests, 1):
        if not isinstance(test, Mapping) or "input" not in test or "output" not in test:
            raise GraderError(f"code: test {number} is not {{'input': ..., 'output': ...}}")
    return list(tests)


def _failed_run(result: ExecResult, timeout_s: float) -> str | None:
    """Why a run did not exit cleanly within its limits, or ``None`` if it did."""
    if result.status == "timeout":
        return f"timed out after {timeout_s:g} s"
    if result.status == "memory":
        return "ran out of memory"
    if result.status == "killed":
        return "killed for flooding its output"
    if result.status != "ok" or result.exit_code != 0:
        lines = result.stderr.strip().splitlines()
        last = lines[-1][:300] if lines else f"exit status {result.exit_code}"
        return f"crashed ({last})"
    return None


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


def _grade_stdio(code: str, metadata: Mapping[str, Any]) -> Grade:
    tests = _tests(metadata)
    timeout_s, memory_mb = _limits(metadata)
    total = len(tests)
    for number, test in enumerate(tests, 1):
        given, wanted = test["input"], test["output"]
        if not isinstance(given, str) or not isinstance(wanted, str):
            raise GraderError(f"code: stdio test {number} needs string input and output")
        result = _sandbox_run(code, stdin=given, timeout_s=timeout_s, memory_mb=memory_mb)
        why = _failed_run(result, timeout_s)
        if why is None and result.truncated:
            why = "its output was cut at the sandbox's limit"
        if why is None and normalize_output(result.stdout) != normalize_output(wanted):
            why = "wrong output"
        if why is not None:
            return Grade(False, code, f"stdio: test {number} of {total} failed: {why}")
    return Grade(True, code, f"stdio: passed all {total} tests")


def _grade_call(code: str, metadata: Mapping[str, Any]) -> Grade:
    tests = _tests(metadata)
    timeout_s, memory_mb = _limits(metadata)
    fn_name = metadata.get("fn_name")
    if not isinstance(fn_name, str) or not fn_name.isidentifier():
        raise GraderError(f"code: metadata['fn_name'] must be an identifier, got {fn_name!r}")
    total = len(tests)
    for number, test in enumerate(tests, 1):
        args = test["input"]
        if not isinstance(args, list):
            raise GraderError(f"code: call test {number} input must be a list of arguments")
        nonce = secrets.token_hex(16)
        try:
            stdin = json.dumps({"nonce": nonce, "fn_name": fn_name, "args": args})
        except (TypeError, ValueError) as exc:
            raise GraderError(f"code: call test {number} input is not JSON: {exc}") from exc
        result = _sandbox_run(
            _CALL_HARNESS,
            stdin=stdin,
            files={"solution.py": code},
            timeout_s=timeout_s,
            memory_mb=memory_mb,
        )
        why = _failed_run(result, timeout_s)
        if why is None:
            payload, why = _tagged_line(result, nonce)
            if why is None:
                if not isinstance(payload, dict):
                    why = "the harness's result is malformed"
                elif "error" in payload:
                    why = str(payload["error"])[:500]
                elif not json_equal(payload.get("result"), test["output"]):
                    why = "wrong result"
        if why is not None:
            return Grade(False, code, f"call: test {number} of {total} failed: {why}")
    return Grade(True, code, f"call: passed all {total} tests")


def _grade_unittest(code: str, metadata: Mapping[str, Any]) -> Grade:
    test_code = metadata.get("test_code")
    entry_point = metadata.get("entry_point")
    if not isinstance(test_code, str) or not test_code.strip():
        raise GraderError("code: metadata['test_code'] must be a non-empty string")
    if not isinstance(entry_point, str) or not entry_point.isidentifier():
        raise GraderError(f"code: metadata['entry_point'] must be an identifier: {entry_point!r}")
    libs = metadata.get("libs") or []
    if isinstance(libs, str) or not isinstance(libs, Sequence):
        raise GraderError(f"code: metadata['libs'] must be a list of module names: {libs!r}")
    missing = missing_libraries(libs)
    if missing:
        raise GraderError(f"code: missing libraries: {', '.join(missing)} (install them to grade)")
    counts = count_test_methods(test_code)
    expected = sum(counts.values())
    if expected == 0:
        raise GraderError("code: test_code defines no test methods")
    problem = scan_program(code)
    if problem is not None:
        return Grade(False, code, f"unittest: rejected: the program {problem}")
    timeout_s, memory_mb = _limits(metadata)
    suite_timeout = timeout_s * expected
    nonce = secrets.token_hex(16)
    stdin = json.dumps({"nonce": nonce, "entry_point": entry_point, "classes": sorted(counts)})
    result = _sandbox_run(
        _UNITTEST_HARNESS,
        stdin=stdin,
        files={"solution.py": code, "test_solution.py": test_code},
        timeout_s=suite_timeout,
        memory_mb=memory_mb,
    )
    why = _failed_run(result, suite_timeout)
    payload: Any = None
    if why is None:
        payload, why = _tagged_line(result, nonce)
    if why is None and not isinstance(payload, dict):
        why = "the harness's result is malformed"
    if why is not None:
        return Grade(False, code, f"unittest: the test run failed: {why}")
    if "tampered" in payload:
        return Grade(False, code, f"unittest: rejected: {payload['tampered']}")
    if "error" in payload:
        return Grade(False, code, f"unittest: {payload['error']}")
    first = payload.get("first")
    if first:
        return Grade(False, code, f"unittest: {first[0]} {first[1]}")
    bad = sum(int(payload.get(key, 0)) for key in ("failures", "errors", "skipped", "unexpected"))
    run = payload.get("run")
    if bad or run != expected or payload.get("stopped") != expected:
        return Grade(
            False,
            code,
            f"unittest: ran {run} tests, expected {expected}, with {bad} not passing",
        )
    return Grade(True, code, f"unittest: passed all {expected} tests")


@register_grader("code")
def grade_code(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    """Grade the response's last Python code block against the task's tests (see the
    module docstring for the three ``code_kind`` values)."""
    kind = metadata.get("code_kind")
    if kind not in ("stdio", "call", "unittest"):
        raise GraderError(f"code: metadata['code_kind'] must be stdio, call or unittest: {kind!r}")
    code = extract_code(response)
    if code is None or not code.strip():
        return Grade(False, None, "no fenced Python code block found in the response")
    if kind == "stdio":
        return _grade_stdio(code, metadata)
    if kind == "call":
        return _grade_call(code, metadata)
    return _grade_unittest(code, metadata)
