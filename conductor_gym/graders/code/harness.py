"""The harness script of ``unittest`` tasks that runs inside the sandbox (the ``call``
one is in :mod:`.call_harness`, the part that tells the program's code and values from
the rest in :mod:`.provenance`), and reading the single result line each one tags with
its per-run nonce.

The ``unittest`` harness is two processes (see :mod:`conductor_gym.graders.code` for the
guarantees). ``_referee`` makes itself non-dumpable, forks ``_tester``, reads the nonce
from stdin, waits for the tester and prints ``<nonce> {"messages", "payload",
"tampered", "exit", "signal"}``: how many messages the tester sent on its pipe, the
single one decoded, the first tampering reported, and how the tester ended. ``_tester``
points its stdin and stdout at ``/dev/null``, reads ``harness.json`` (``entry_point``,
``classes``, ``expected``, ``libs``, ``guards``), the tests (instrumented by
:mod:`.rewrite`) and the program, imports the libraries the program and the tests
import, freezes the machinery, takes the identity snapshots (:mod:`.provenance`),
installs its audit hook, then imports the program and runs the tests; it sends one
message (JSON: the counts, an ``error`` or a ``tampered`` reason) and exits 0 only
after a clean run.
Objects the program can reach hold nothing it could use: the assertion and fixture
wrappers (``Guard``) and the guards of the test code's calls and comparisons
(``Caller``, ``MethodCaller``, ``Checker``, swapped for their ``guards`` tokens in the test
module's code constants) are frozen tuples that only raise audit events, and every check
and every secret lives in the hook's closure. ``_tester`` takes its own references to the
builtins before the program runs (what runs inside the hook runs unaudited), replaces
``_thread.start_new_thread`` so that it knows which running threads the program started,
``_signal.signal`` and ``_imp._fix_co_filename`` with guards the hook answers (the real
ones are held only in its closure), ``unittest.mock.NonCallableMock.__new__`` so that
it knows which mocks the tests made, stays non-dumpable as the referee made it,
and does not hand the tests a global of the program that shadows a builtin.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from conductor_gym.graders.code.call_harness import _CALL_HARNESS as _CALL_HARNESS
from conductor_gym.graders.code.provenance import _PROVENANCE

if TYPE_CHECKING:
    from conductor_gym.sandbox import ExecResult

_UNITTEST_TEMPLATE = r"""
import json
import os
import sys


def _referee():
    # Never runs the solution. It alone holds the run's stdout and the nonce (read only
    # after the tester is forked, so the tester's memory holds no copy), and it is not
    # dumpable: a process of the same uid can neither ptrace it nor open its /proc
    # entries (fd, mem). The tester cannot write the result line, only die or report.
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE
        os._exit(3)
    read_end, write_end = os.pipe()
    exit_ = os._exit  # the tester replaces os._exit with its guard
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read_end)
            _tester(write_end, libc)
        finally:
            exit_(2)
    os.close(write_end)
    nonce = json.loads(sys.stdin.read())["nonce"]
    _, status = os.waitpid(pid, 0)
    os.set_blocking(read_end, False)
    data = b""
    while len(data) < 1 << 20:
        try:
            chunk = os.read(read_end, 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            break
        data += chunk
    messages = [line for line in data.split(b"\n") if line.strip()]
    decoded = []
    for message in messages[:100]:
        try:
            decoded.append(json.loads(message))
        except ValueError:
            decoded.append(None)
    tampered = [m["tampered"] for m in decoded if isinstance(m, dict) and "tampered" in m]
    report = {
        "messages": len(messages),
        "payload": decoded[0] if len(messages) == 1 else None,
        "tampered": str(tampered[0])[:500] if tampered else None,
        "exit": os.WEXITSTATUS(status) if os.WIFEXITED(status) else None,
        "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status) else None,
    }
    line = (nonce + " " + json.dumps(report) + "\n").encode("utf-8", "replace")
    while line:
        line = line[os.write(1, line):]
    os._exit(0)


def _tester(channel, libc):
    # Runs the solution and the tests. It exits 0 only after every test passed with
    # the machinery intact; everything else (a tampering found, an exception, a signal,
    # os._exit) ends it otherwise. An audit hook, which nothing here can reach or
    # remove, refuses the solution's ways to the harness's state and to exit(0).
    import _imp
    import _thread
    import builtins
    import ctypes
    import functools
    import json
    import os
    import posix
    import sys
    import threading
    import types
    import unittest
    import unittest.case
    import unittest.loader
    import unittest.result
    import unittest.suite
    import warnings

    # The builtins the harness calls are its own references, taken before the program
    # runs: the program may patch the builtins module, and code that runs inside the
    # audit hook runs unaudited (a patched builtin there could walk the frames).
    (BaseException, Exception, ImportError, OSError, RuntimeError, TypeError,
     ValueError, any, bool, bytes, callable, classmethod, compile, complex, dict,
     dir, exec, float, frozenset, getattr, id, int, isinstance, issubclass, len,
     list, next, object, open, property, range, set, setattr, slice, staticmethod,
     str, super, tuple, type, vars, __import__) = (
        builtins.BaseException, builtins.Exception, builtins.ImportError,
        builtins.OSError, builtins.RuntimeError, builtins.TypeError,
        builtins.ValueError, builtins.any, builtins.bool, builtins.bytes,
        builtins.callable, builtins.classmethod, builtins.compile, builtins.complex,
        builtins.dict, builtins.dir, builtins.exec, builtins.float,
        builtins.frozenset, builtins.getattr, builtins.id, builtins.int,
        builtins.isinstance, builtins.issubclass, builtins.len, builtins.list,
        builtins.next, builtins.object, builtins.open, builtins.property,
        builtins.range, builtins.set, builtins.setattr, builtins.slice,
        builtins.staticmethod, builtins.str, builtins.super, builtins.tuple,
        builtins.type, builtins.vars, builtins.__import__)
    builtin_names = frozenset(vars(builtins))

    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    sys.stdin = open(os.devnull)
    # The tester stays non-dumpable, as the referee made it: its /proc/self/mem is then
    # closed to it (root's), and the sandbox's seccomp filter refuses making it dumpable.
    os.environ.setdefault("MPLBACKEND", "Agg")
    dumps, write, exit_, getpid, kill = json.dumps, os.write, os._exit, os.getpid, os.kill
    getframe, get_ident, audit = sys._getframe, _thread.get_ident, sys.audit
    create_builtin, start_thread = _imp.create_builtin, _thread.start_new_thread
    FunctionType, CodeType, ModuleType = types.FunctionType, types.CodeType, types.ModuleType
    ModuleSpec = type(sys.__spec__)
    me = getpid()

    def describe(exc):
        try:
            text = str(exc)
        except BaseException:
            text = "?"
        return type(exc).__name__ + (": " + text[:300] if text else "")

    def send(payload):
        data = (dumps(payload) + "\n").encode("utf-8", "replace")
        try:
            while data:
                data = data[write(channel, data):]
        except OSError:
            pass

    def finish(payload, passed=False):
        send(payload)
        exit_(0 if passed else 1)

    # Read before the solution runs: it may rewrite the files.
    try:
        with open("harness.json", encoding="utf-8") as f:
            config = json.load(f)
        with open("test_solution.py", encoding="utf-8") as f:
            test_text = f.read()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the guards' tokens are called constants
            test_code = compile(test_text, "test_solution.py", "exec", dont_inherit=True)
        with open("solution.py", encoding="utf-8") as f:
            source = f.read()
    except BaseException as exc:
        finish({"error": "the harness could not read its files: " + describe(exc)})

    # The assertion helpers of the task's libraries, imported before the program can
    # patch them (a patch that undoes itself before the next check stays possible).
    libs = {str(lib).split(".")[0] for lib in config.get("libs", [])}
    for helper in ("numpy.testing", "pandas.testing", "pandas._testing"):
        if helper.split(".")[0] in libs:
            try:
                __import__(helper)
            except Exception:
                continue

    # The libraries the program and the tests import (as written, anywhere in them),
    # imported now: what exists before the program runs is judged by identity (see
    # .provenance). Never a module of the work dir.
    import ast
    import importlib.util

    def imported_modules(text):
        try:
            tree = ast.parse(text)
        except BaseException:
            return []
        names = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module)
                names += [node.module + "." + alias.name for alias in node.names]
        return names

    here = os.path.realpath(os.getcwd()) + "/"

    def library(name):
        try:
            spec = importlib.util.find_spec(name.partition(".")[0])
        except BaseException:
            return False
        if spec is None:
            return False
        places = [spec.origin or ""] + list(spec.submodule_search_locations or ())
        return not any(os.path.realpath(place).startswith(here) for place in places if place)

    test_imports = imported_modules(test_text)
    for name in dict.fromkeys(imported_modules(source) + test_imports):
        if name.partition(".")[0] not in ("solution", "test_solution", "main") and library(name):
            try:
                __import__(name)
            except BaseException:
                continue
    reach_names = [name for name in dict.fromkeys(test_imports) if name in sys.modules]

    def import_bindings(text):
        # The globals a module's own import statements bind: name -> (module, attribute)
        try:
            body = list(ast.parse(text).body)
        except BaseException:
            return {}
        bound = {}
        while body:
            node = body.pop()
            if isinstance(node, (ast.If, ast.Try)):
                body += node.body + node.orelse + getattr(node, "finalbody", [])
                body += [s for handler in getattr(node, "handlers", []) for s in handler.body]
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        bound[alias.asname] = (alias.name, None)
                    else:
                        top = alias.name.partition(".")[0]
                        bound[top] = (top, None)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    if alias.name != "*":
                        bound[alias.asname or alias.name] = (node.module, alias.name)
        return bound

    # The program's imported names the tests use without importing them (BigCodeBench's
    # tests see the program's globals): checked once the program has run.
    program_bindings = import_bindings(source)
    test_tree_names = set()
    try:
        test_tree_names = {node.id for node in ast.walk(ast.parse(test_text))
                           if isinstance(node, ast.Name)}
    except BaseException:
        pass
    borrowed_names = {name: where for name, where in program_bindings.items()
                      if name in test_tree_names and name not in import_bindings(test_text)}

    # -- what the solution may not change ------------------------------------------------

    class Result(unittest.TestResult):
        def __init__(self):
            super().__init__()
            self.failfast = True
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

        def stopTest(self, test, _audit=audit):
            super().stopTest(test)
            self.stopped += 1
            _audit("conductor_gym.check")

    # Wrappers the solution can reach but not change: a frozen tuple subclass whose items
    # are (audit, event, name, original). The hook does the checking (and the thawing).
    class Guard(tuple):
        __slots__ = ()

        def __get__(self, obj, owner=None, _bind=types.MethodType):
            return self if obj is None else _bind(self, obj)

        def __call__(self, *args, **kwargs):
            self[0](self[1], self[2], args, kwargs)
            try:
                return self[3](*args, **kwargs)
            finally:
                self[0](self[1] + ".after", self[2], args, kwargs)

    # The guards the instrumented test code calls (see .rewrite): the harness swaps them
    # for their tokens in the test module's code constants, out of the program's reach.
    class Caller(tuple):
        __slots__ = ()

        def __call__(self, label, function, /, *args, **kwargs):
            self[0]("conductor_gym.call", label, False, None, function, args, kwargs)
            return function(*args, **kwargs)

    class MethodCaller(tuple):
        __slots__ = ()

        def __call__(self, label, owner, name, /, *args, **kwargs):
            function = self[1](owner, name)
            self[0]("conductor_gym.call", label, True, owner, function, args, kwargs, name)
            return function(*args, **kwargs)

    class Checker(tuple):
        __slots__ = ()

        def __call__(self, value, /):
            self[0]("conductor_gym.value", value)
            return value

    tokens = config.get("guards", {})
    guards = {tokens.get("call"): Caller((audit,)),
              tokens.get("attr"): MethodCaller((audit, getattr)),
              tokens.get("value"): Checker((audit,))}

    def with_guards(code):
        consts = []
        for const in code.co_consts:
            if type(const) is CodeType:
                const = with_guards(const)
            elif type(const) is str and const in guards:
                const = guards[const]
            consts.append(const)
        return code.replace(co_consts=tuple(consts))

    test_code = with_guards(test_code)

    TestCase, TestSuite = unittest.TestCase, unittest.suite.TestSuite
    for name in list(vars(TestCase)):
        if name.startswith(("assert", "fail")) and isinstance(vars(TestCase)[name],
                                                             types.FunctionType):
            original = vars(TestCase)[name]
            setattr(TestCase, name, Guard((audit, "conductor_gym.assert", name, original)))
    # The suite writes to test classes around their class fixtures, which are otherwise
    # frozen like the machinery.
    for name in ("_handleClassSetUp", "_tearDownPreviousClass"):
        original = vars(TestSuite)[name]
        setattr(TestSuite, name, Guard((audit, "conductor_gym.fixture", name, original)))

    def guarded_exit(status, _audit=audit):
        _audit("conductor_gym.exit", status)

    def guarded_create_builtin(spec, _audit=audit):
        box = []
        _audit("conductor_gym.create_builtin", spec, box)
        if not box:
            raise ImportError("the harness refused to create a built-in module here")
        return box[0]

    def guarded_start(function, args, kwargs=None, _audit=audit):
        box = []
        _audit("conductor_gym.thread", function, args, kwargs, box)
        if len(box) != 1:
            raise RuntimeError("the harness refused to start a thread")
        started, value = box[0]
        if not started:
            raise value
        return value

    # A token per running thread: one the program started (its starter's stack holds the
    # program's code), or one the tests started.
    live, test_live = set(), set()

    def run_thread(token, running, function, args, kwargs):
        try:
            return function(*args, **kwargs)
        finally:
            running.discard(token)

    def guarded_signal(signalnum, handler, _audit=audit):
        box = []
        _audit("conductor_gym.signal", signalnum, handler, box)
        if len(box) != 1:
            raise RuntimeError("the harness refused to install a signal handler")
        return box[0]

    def guarded_fix_co_filename(code, path, _audit=audit):
        # The hook renames (nothing the program can reach holds the real function).
        _audit("conductor_gym.fix_co_filename", code, path)

    import _signal
    import signal
    set_signal, fix_co_filename = _signal.signal, _imp._fix_co_filename
    # A Python signal handler is handed the frame that was running: the program may not
    # install one (the interpreter's own, and asyncio's, stay).
    signal_handlers = (signal.SIG_DFL, signal.SIG_IGN, signal.default_int_handler)
    _signal.signal = guarded_signal
    _imp._fix_co_filename = guarded_fix_co_filename
    os._exit = posix._exit = guarded_exit
    _imp.create_builtin = guarded_create_builtin
    _thread.start_new_thread = _thread.start_new = guarded_start
    threading._start_new_thread = guarded_start

    # Freezing a class (CPython's immutable-type flag) makes every write to it fail,
    # type.__setattr__ included: no patch of the machinery, not even one that undoes
    # itself before a check could see it.
    py_object, c_ulong = ctypes.py_object, ctypes.c_ulong
    type_modified = ctypes.pythonapi.PyType_Modified
    flags_offset = next(off for off in range(0, 512, 8)
                        if c_ulong.from_address(id(TestCase) + off).value == TestCase.__flags__)

    def set_frozen(klass, frozen):
        cell = c_ulong.from_address(id(klass) + flags_offset)
        cell.value = cell.value | 256 if frozen else cell.value & ~256
        type_modified(py_object(klass))

    watched_classes = [Result, Guard, Caller, MethodCaller, Checker]
    for owner in (unittest.case, unittest.result, unittest.suite, unittest.loader):
        for value in list(vars(owner).values()):
            if isinstance(value, type) and value.__module__ == owner.__name__:
                watched_classes.extend(k for k in value.__mro__ if k is not object)
    watched_modules = [unittest, unittest.case, unittest.result, unittest.suite,
                       unittest.loader]
    for name, module in list(sys.modules.items()):
        if isinstance(module, types.ModuleType) and name.startswith(
                ("numpy.testing", "pandas.testing", "pandas._testing")):
            watched_modules.append(module)

    # Of other modules, what the harness relies on (tests may patch the rest).
    watched_names = [(os, "_exit"), (posix, "_exit"), (sys, "audit"), (sys, "addaudithook"),
                     (_imp, "create_builtin"), (_imp, "_fix_co_filename"),
                     (_signal, "signal"), (_thread, "start_new_thread"),
                     (_thread, "start_new"), (threading, "_start_new_thread")]
    for name, module in list(sys.modules.items()):
        parent, _, child = name.rpartition(".")
        if child in ("testing", "_testing") and parent in ("numpy", "pandas"):
            watched_names.append((sys.modules[parent], child))
    # What unittest's modules (the loader, the suite, the assertions) call: tests may
    # patch other builtins (print, open, input).
    assertion_builtins = ("abs", "all", "any", "bool", "bytes", "callable", "classmethod",
                          "dict", "dir", "enumerate", "filter", "float", "frozenset",
                          "getattr", "hasattr", "hash", "id", "int", "isinstance",
                          "issubclass", "iter", "len", "list", "map", "max", "min",
                          "next", "object", "range", "repr", "round", "set", "sorted",
                          "staticmethod", "str", "sum", "super", "tuple", "type", "zip",
                          "__import__", "AssertionError", "AttributeError", "BaseException",
                          "Exception", "ImportError", "IndexError", "KeyError",
                          "KeyboardInterrupt", "NotImplemented", "NotImplementedError",
                          "TypeError", "ValueError")
    starts = str.startswith
    machinery_names = {name for name in dir(TestCase)
                       if not (name.startswith("__") and name.endswith("__"))}
    machinery_names -= {"_classSetupFailed", "_class_cleanups"}
    class_state = {}
    test_state = {}
    for klass in watched_classes:
        if klass not in class_state:
            class_state[klass] = (klass.__name__, vars(klass), dict(vars(klass)))
    module_state = [(module.__name__, vars(module), dict(vars(module)))
                    for module in watched_modules]
    watched_names += [(builtins, key) for key in assertion_builtins]
    name_state = [(module.__name__, vars(module), key, vars(module)[key])
                  for module, key in watched_names]

    def record_test_classes(classes):
        # Test classes may set data attributes (setUpClass does): only their methods and
        # test names are protected.
        for klass in classes:
            if klass not in class_state and klass not in test_state:
                test_state[klass] = (klass.__name__, vars(klass), {
                    key: value for key, value in vars(klass).items()
                    if key.startswith("test") or callable(value)
                    or isinstance(value, (staticmethod, classmethod, property))
                })

    def tampered(classes=True):
        # Reads only dicts captured up front (a module's class can be swapped for one
        # whose __getattribute__ would run the program's code here). The frozen classes
        # are left out of the checks before each call of the test code (classes=False),
        # which must be cheap: nothing can write to them. A thread of the
        # program could patch and restore between a check and what it checks: none may
        # run while the tests do (unless a thread of the tests' own, which may run the
        # program too, still runs).
        if live and not test_live:
            return "a thread the program started is still running while the tests run"
        for klass, (name, now, before) in class_state.items() if classes else ():
            if len(now) != len(before):
                return name + " gained or lost attributes"
            for key, value in before.items():
                if now.get(key) is not value:
                    return name + "." + key + " was replaced"
        for klass, (name, now, before) in test_state.items() if classes else ():
            for key, value in before.items():
                if now.get(key) is not value:
                    return name + "." + key + " was replaced or removed"
            for key in now:
                if type(key) is not str:
                    return name + " was given an attribute that is not named by a string"
                if key not in before and (starts(key, "test") or key in machinery_names):
                    return name + "." + key + " was added"
        for name, now, before in module_state:
            for key, value in before.items():
                if now.get(key, now) is not value:
                    return name + "." + key + " was replaced or removed"
        for name, now, key, value in name_state:
            if now.get(key) is not value:
                return name + "." + key + " was replaced"
        for name, now, before in reach_state:
            for key, value in before.items():
                current = now.get(key, now)
                if current is not value and not accepted(current):
                    return name + "." + key + " was replaced or removed"
        for top in packages if classes else ():
            problem = package_tampered(top)
            if problem is not None:
                return problem
        return None

    # @provenance (see .provenance)

    # -- the hook -------------------------------------------------------------------------

    frame_attrs = {"tb_frame", "gi_frame", "cr_frame", "ag_frame"}
    function_attrs = {"__code__", "__defaults__", "__kwdefaults__", "__globals__",
                      "__closure__", "__dict__"}
    blamed_events = {
        "sys._getframe": "frame access (sys._getframe)",
        "sys._current_frames": "frame access (sys._current_frames)",
        "gc.get_objects": "gc.get_objects",
        "gc.get_referrers": "gc.get_referrers",
        "gc.get_referents": "gc.get_referents",
        "ctypes.dlsym": "ctypes (a C function)",
        "ctypes.dlsym/handle": "ctypes (a C function)",
        "ctypes.call_function": "ctypes (a C call)",
        "ctypes.string_at": "ctypes (raw memory)",
        "ctypes.wstring_at": "ctypes (raw memory)",
        "ctypes.cdata": "ctypes (raw memory)",
        "ctypes.cdata/buffer": "ctypes (raw memory)",
        "ctypes.PyObj_FromPtr": "ctypes (raw memory)",
        "code.__new__": "a hand-made code object",
    }
    busy = set()

    def judge(event, args, frame):
        if starts(event, "conductor_gym."):
            return judge_own(event, args, frame)
        if event == "sys.addaudithook":
            return "the program added an audit hook"
        if event in ("sys.settrace", "sys.setprofile"):
            # Whoever installs it (threading does, for threading.settrace), the tracer
            # would see every frame.
            return "the program used " + event
        if event == "object.__getattr__":
            name = args[1]
            if type(name) is str and name in frame_attrs and blamed(frame):
                return "the program used frame access (" + name + ")" + asker(frame)
            return None
        if event in ("object.__setattr__", "object.__delattr__"):
            target, name = args[0], args[1]
            if id(target) in frozen_ids:
                return "the program wrote to " + type_name(target)
            if (name == "__class__" and type(name) is str
                    and any(base is ModuleType for base in type_mro(type(target)))
                    and blamed(frame)):
                return "the program changed the class of a module"
            if type(target) is FunctionType and type(name) is str and name in function_attrs:
                code = function_code(target)
                if own.get(id(code)) is code or blamed(frame):
                    return "the program rewrote a function's " + name
            return None
        if event == "exec":
            # Code made while the test module loads (dataclasses' methods of the tests'
            # classes) is the tests'; code made once the tests run is not trusted, by
            # whoever made it.
            code = args[0]
            if (type(code) is CodeType and loading_tests and code is not solution_code
                    and not program_on_stack(frame)):
                adopt(code)
            return None
        if event == "compile":
            filename = args[1]
            if type(filename) is bytes:
                filename = filename.decode("utf-8", "replace")
            if type(filename) is not str:
                return "the program compiled code with a file name that is not a string"
            if filename in protected_files or starts(filename, "<frozen "):
                return "the program compiled code posing as " + filename
            if starts(filename, trusted_dirs) and not library_file(filename, args[0], 0):
                # A library's code is what its file holds, as the import system reads it.
                return "the program compiled code posing as " + filename
            return None
        if event == "code.__new__":
            filename = args[1] if len(args) > 1 else None
            if type(filename) is not str:
                return "the program made a code object whose file name is not a string"
            if (filename in protected_files or starts(filename, "<frozen ")
                    or starts(filename, trusted_dirs)) and blamed(frame):
                return "the program made a code object posing as " + filename + asker(frame)
        if event == "marshal.loads":
            # Only the import system's reading of a library's cached bytecode.
            path = None
            if frame is not None and frame.f_code is compile_bytecode_code:
                path = frame.f_locals.get("bytecode_path")
            if not (type(path) is str and starts(path, trusted_dirs)
                    and library_file(path, args[0], 16)):
                return "the program loaded marshalled code"
            return None
        if event == "marshal.load":
            return "the program loaded marshalled code"
        if event == "open":
            path = args[0] if args else None
            if type(path) is bytes:
                path = path.decode("utf-8", "replace")
            if type(path) is str and starts(path, "/proc/") and path.endswith("/mem"):
                return "the program opened a process's memory (" + path + ")"
            return None
        if event == "os.exec":
            return "the program replaced the test process (os.exec)" if getpid() == me else None
        what = blamed_events.get(event)
        if what is not None and blamed(frame):
            return "the program used " + what + asker(frame)
        return None

    def judge_own(event, args, frame):
        # The harness's own events; the program may raise them too, so their arguments
        # are checked before use.
        if event in ("conductor_gym.assert", "conductor_gym.assert.after"):
            name, call_args, call_kwargs = args if len(args) == 3 else (None, None, None)
            if type(name) is not str or type(call_args) is not tuple:
                return "the program forged a harness event"
            if type(call_kwargs) is not dict:
                return "the program forged a harness event"
            if event == "conductor_gym.assert.after":
                return None
            problem = tampered()
            if problem is None and name in comparisons:
                found = forged_operand(list(call_args[1:]) + list(dict_values(call_kwargs)))
                if found == ANY:
                    problem = "the program passed an assertion " + ANY + ", which equals anything"
                elif found is not None:
                    problem = ("the program passed an assertion an object whose " + found
                               + " it defines itself")
            return problem
        if event == "conductor_gym.check":
            return tampered()
        if event == "conductor_gym.call":
            if len(args) not in (6, 7) or type(args[0]) is not str or type(args[1]) is not bool:
                return "the program forged a harness event"
            label, method, owner, function, call_args, call_kwargs = args[:6]
            if type(call_args) is not tuple or type(call_kwargs) is not dict:
                return "the program forged a harness event"
            if type(function) is MethodType and type(method_function(function)) is Guard:
                return None  # an assertion, whose guard checks everything next
            problem = tampered(False)
            if problem is None and label:
                top = callee_package(owner if method else None, function)
                problem = package_tampered(top) if top is not None else None
            if problem is None and method and len(args) == 7:
                what = replaced(owner, args[6], function)
                if what is not None:
                    problem = ("the test called " + label + ", which the program replaced ("
                               + what + ")")
            if problem is None and label and forged_callable(function):
                if not (method and (test_instance(owner) or owner is solution)):
                    problem = "the test called " + label + ", which is the program's own code"
            return problem
        if event == "conductor_gym.value":
            found = forged_operand(args) if len(args) == 1 else "?"
            if found == ANY:
                return "the test code compared " + ANY + ", which equals anything"
            if found is not None:
                return ("the test code compared (or tested the truth of) an object whose "
                        + found + " the program defines itself")
            return None
        if event == "conductor_gym.thread":
            return start_guarded(args, frame)
        if event == "conductor_gym.mock":
            return register_mock(args, frame)
        if event == "conductor_gym.signal":
            signalnum, handler, box = args if len(args) == 3 else (None, None, None)
            if type(box) is not list:
                return "the program forged a harness event"
            if not signal_handler_allowed(handler):
                return "the program installed a signal handler"
            try:
                box.append(set_signal(signalnum, handler))
            except Exception:
                pass
            return None
        if event == "conductor_gym.fix_co_filename":
            caller = frame.f_back if frame is not None else None
            if caller is None or caller.f_code is not compile_bytecode_code or len(args) != 2:
                return "the program renamed a code object's file (_imp._fix_co_filename)"
            fix_co_filename(args[0], args[1])
            return None
        if event in ("conductor_gym.fixture", "conductor_gym.fixture.after"):
            # Only the suite, through its frozen wrapper, may thaw the test classes.
            if frame is None or frame.f_code is not guard_code or blamed(frame.f_back):
                return "the program called the suite's class fixtures"
            for klass in test_state:
                set_frozen(klass, event == "conductor_gym.fixture.after")
            return tampered() if event == "conductor_gym.fixture.after" else None
        if event == "conductor_gym.exit":
            status = args[0] if len(args) == 1 else None
            if getpid() == me:
                return "the program called os._exit"
            exit_(status if type(status) is int else 1)
        if event == "conductor_gym.create_builtin":
            spec, box = args if len(args) == 2 else (None, None)
            if type(spec) is not ModuleSpec or type(box) is not list:
                return "the program forged a harness event"
            name = vars(spec).get("name")
            if type(name) is not str:
                return "the program forged a harness event"
            if name in ("posix", "_imp", "builtins", "sys", "_thread", "_signal"):
                return "the program re-created the built-in module " + name
            box.append(create_builtin(spec))
            return None
        return "the program raised the harness's audit event " + event

    def start_guarded(args, frame):
        # Starts a thread for guarded_start, tracked in live (its starter's stack holds
        # the program's code) or test_live until its function returns.
        function, thread_args, kwargs, box = args if len(args) == 4 else (None,) * 4
        if type(box) is not list:
            return "the program forged a harness event"
        if type(thread_args) is not tuple or (kwargs is not None and type(kwargs) is not dict):
            box.append((False, TypeError("start_new_thread takes a tuple and a dict")))
            return None
        program = False
        while frame is not None and not program:
            program = not trusted(frame.f_code)
            frame = frame.f_back
        token, running = object(), live if program else test_live
        running.add(token)
        try:
            box.append((True, start_thread(run_thread, (token, running, function,
                                                        thread_args, kwargs or {}))))
        except Exception as exc:
            running.discard(token)
            box.append((False, exc))
        return None

    def signal_handler_allowed(handler):
        if (type(handler) is int and handler in (0, 1)) or handler is signal_handlers[2]:
            return True
        # asyncio.run's, which only raises KeyboardInterrupt
        if type(handler) is not MethodType:
            return False
        code = function_code(method_function(handler)) if type(
            method_function(handler)) is FunctionType else None
        return (code is not None and trusted(code) and code.co_qualname == "Runner._on_sigint"
                and code.co_filename.endswith("/asyncio/runners.py"))

    compile_bytecode_code = sys.modules["_frozen_importlib_external"]._compile_bytecode.__code__
    posix_open, posix_read, posix_close, posix_fstat = (posix.open, posix.read, posix.close,
                                                        posix.fstat)
    read_flags = posix.O_RDONLY | posix.O_CLOEXEC

    def library_file(path, data, skip):
        # Whether data is the file at path (past its first skip bytes): read with C calls
        # only (this runs inside the hook). No "." or ".." components: the file must be
        # the one its name says, inside a library directory.
        if "/./" in path or "/../" in path or "//" in path:
            return False
        if type(data) is str:
            data = data.encode("utf-8", "surrogatepass")
        if type(data) is not bytes:
            return False
        try:
            fd = posix_open(path, read_flags)
        except OSError:
            return False
        try:
            if posix_fstat(fd).st_size != len(data) + skip:
                return False
            held, want = [], len(data) + skip
            while want > 0:
                chunk = posix_read(fd, want)
                if not chunk:
                    return False
                held.append(chunk)
                want -= len(chunk)
            return b"".join(held)[skip:] == data
        except OSError:
            return False
        finally:
            posix_close(fd)

    def hook(event, args):
        if not event.startswith(("sys.", "gc.", "ctypes.", "object.", "code.", "compile",
                                 "exec", "os.exec", "conductor_gym.", "marshal.", "open")):
            return
        ident = get_ident()
        if ident in busy:
            return
        busy.add(ident)
        try:
            try:
                frame = getframe(1)
            except ValueError:
                frame = None
            problem = judge(event, args, frame)
        except BaseException:
            problem = "the program broke the harness's audit"
        finally:
            busy.discard(ident)
        if problem is not None:
            send({"tampered": problem})
            kill(getpid(), 9)

    guard_code = vars(Guard)["__call__"].__code__
    solution = solution_code = None
    loading_tests = False
    frozen_ids = {id(klass) for klass in class_state}
    for klass in class_state:
        set_frozen(klass, True)
    sys.addaudithook(hook)

    # -- the solution, then the tests ----------------------------------------------------

    try:
        solution = types.ModuleType("solution")
        solution.__file__ = os.path.abspath("solution.py")
        sys.modules["solution"] = solution
        solution_code = compile(source, "solution.py", "exec", dont_inherit=True)
        exec(solution_code, solution.__dict__)
    except BaseException as exc:
        finish({"error": "the solution raised " + describe(exc) + " when imported"})
    problem = tampered()
    if problem is not None:
        finish({"tampered": problem})
    if not callable(solution.__dict__.get(config["entry_point"])):
        finish({"error": "the solution does not define " + config["entry_point"]})

    for name, (module_name, attr) in borrowed_names.items():
        # What the import gave, as the snapshot holds it, is what the tests get.
        entry = known_modules.get(id(sys.modules.get(module_name)))
        if entry is None or name not in solution.__dict__:
            continue
        want = entry[0] if attr is None else entry[1].get(attr, MISSING)
        if want is MISSING:
            want = sys.modules.get(module_name + "." + attr, MISSING)
        if want is not MISSING and solution.__dict__[name] is not want:
            finish({"tampered": "the program rebound " + name + ", which it imports from "
                                + module_name + " and the tests use"})

    tests_module = types.ModuleType("test_solution")
    # The tests see the solution's globals (as BigCodeBench's harness, which concatenates
    # the two), but not one that shadows a builtin they may call (a len of its own).
    for key, value in solution.__dict__.items():
        if not (key.startswith("__") and key.endswith("__")) and key not in builtin_names:
            tests_module.__dict__[key] = value
    tests_module.__file__ = os.path.abspath("test_solution.py")
    tests_namespace[0] = vars(tests_module)
    sys.modules["test_solution"] = tests_module
    loading_tests = True
    try:
        exec(test_code, tests_module.__dict__)
    except BaseException as exc:
        finish({"error": "loading the tests raised " + describe(exc)})
    loading_tests = False
    # The test module's functions, modules and classes (its own and the program's names
    # it sees) stay as they are now: the program may reach the module (sys.modules).
    reach_state.append(("test_solution", vars(tests_module),
                        {key: value for key, value in vars(tests_module).items()
                         if callable(value)
                         or any(base is ModuleType for base in type_mro(type(value)))}))
    loader = unittest.TestLoader()
    suite = unittest.suite.TestSuite()
    for name in config["classes"]:
        cls = tests_module.__dict__.get(name)
        if isinstance(cls, type) and issubclass(cls, TestCase):
            record_test_classes([k for k in cls.__mro__ if k is not object])
            suite.addTests(loader.loadTestsFromTestCase(cls))
    for klass in test_state:
        set_frozen(klass, True)

    result = Result()
    try:
        suite.run(result)
    except BaseException as exc:
        finish({"error": "running the tests raised " + describe(exc)})
    problem = tampered()
    if problem is not None:
        finish({"tampered": problem})
    counts = {
        "run": result.testsRun,
        "stopped": result.stopped,
        "failures": len(result.failures),
        "errors": len(result.errors),
        "skipped": len(result.skipped),
        "unexpected": len(result.unexpectedSuccesses),
        "first": result.first,
    }
    bad = counts["failures"] + counts["errors"] + counts["skipped"] + counts["unexpected"]
    passed = (not bad and counts["first"] is None and counts["run"] == config["expected"]
              and counts["stopped"] == config["expected"])
    finish(counts, passed)


_referee()
"""

_UNITTEST_HARNESS = _UNITTEST_TEMPLATE.replace("    # @provenance (see .provenance)\n", _PROVENANCE)


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
