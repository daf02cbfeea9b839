"""The harness scripts that run inside the sandbox (``call`` and ``unittest``), and
reading the single result line each one tags with its per-run nonce.

The ``unittest`` harness is two processes (see :mod:`conductor_gym.graders.code` for the
guarantees). ``_referee`` makes itself non-dumpable, forks ``_tester``, reads the nonce
from stdin, waits for the tester and prints ``<nonce> {"messages", "payload",
"tampered", "exit", "signal"}``: how many messages the tester sent on its pipe, the
single one decoded, the first tampering reported, and how the tester ended. ``_tester``
points its stdin and stdout at ``/dev/null``, reads ``harness.json`` (``entry_point``,
``classes``, ``expected``, ``libs``), the tests and the program, freezes the machinery,
installs its audit hook, then imports the program and runs the tests; it sends one message
(JSON: the counts, an ``error`` or a ``tampered`` reason) and exits 0 only after a clean
run.
Objects the program can reach hold nothing it could use: the assertion and fixture
wrappers are frozen tuples (``Guard``) that only raise audit events, and every check and
every secret lives in the hook's closure.
"""

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
    import posix
    import types
    import unittest
    import unittest.case
    import unittest.loader
    import unittest.result
    import unittest.suite

    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    sys.stdin = open(os.devnull)
    libc.prctl(4, 1, 0, 0, 0)  # dumpable again: its own /proc/self stays readable
    os.environ.setdefault("MPLBACKEND", "Agg")
    dumps, write, exit_, getpid, kill = json.dumps, os.write, os._exit, os.getpid, os.kill
    getframe, get_ident, audit = sys._getframe, _thread.get_ident, sys.audit
    create_builtin = _imp.create_builtin
    FunctionType, CodeType = types.FunctionType, types.CodeType
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
            test_code = compile(f.read(), "test_solution.py", "exec", dont_inherit=True)
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

    os._exit = posix._exit = guarded_exit
    _imp.create_builtin = guarded_create_builtin

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

    watched_classes = [Result, Guard]
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
                     (_imp, "create_builtin")]
    # What the assertions call: tests may patch other builtins (print, open, input).
    assertion_builtins = ("abs", "all", "any", "bool", "dict", "enumerate", "float",
                          "getattr", "hasattr", "hash", "id", "int", "isinstance",
                          "issubclass", "iter", "len", "list", "map", "max", "min",
                          "next", "repr", "round", "set", "sorted", "str", "sum", "tuple",
                          "type", "zip")
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

    def tampered():
        # Reads only dicts captured up front (a module's class can be swapped for one
        # whose __getattribute__ would run the program's code here).
        for klass, (name, now, before) in class_state.items():
            if len(now) != len(before):
                return name + " gained or lost attributes"
            for key, value in before.items():
                if now.get(key) is not value:
                    return name + "." + key + " was replaced"
        for klass, (name, now, before) in test_state.items():
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
        return None

    # -- which code is the solution's ----------------------------------------------------

    trusted_dirs = []
    for entry in sys.path[1:]:
        if entry and os.path.isdir(entry):
            for path in {entry, os.path.realpath(entry)}:
                trusted_dirs.append(path.rstrip("/") + "/")
    trusted_dirs = tuple(trusted_dirs)
    own = {}

    def adopt(code):
        if id(code) not in own:
            own[id(code)] = code
            for const in code.co_consts:
                if isinstance(const, CodeType):
                    adopt(const)

    frame = getframe(0)
    while frame is not None:
        adopt(frame.f_code)
        frame = frame.f_back
    adopt(test_code)
    del frame
    protected_files = {"main.py", "test_solution.py", "harness.json", sys.argv[0],
                       os.path.abspath("test_solution.py")}
    # Library functions that hand their caller a frame: the caller is the one to judge.
    leaky = {("inspect.py", n) for n in ("currentframe", "stack", "trace",
                                          "getouterframes", "getinnerframes")}
    leaky |= {("traceback.py", "walk_stack"), ("traceback.py", "walk_tb")}
    leaky_files = {"bdb.py", "pdb.py", "trace.py", "profile.py", "cProfile.py"}

    def trusted(code):
        if own.get(id(code)) is code:
            return True
        name = code.co_filename
        return type(name) is str and (starts(name, "<frozen ") or starts(name, trusted_dirs))

    def is_leaky(code):
        name = code.co_filename
        if type(name) is not str or not trusted(code):
            return False
        if code.co_name == "<lambda>" and name.endswith("/logging/__init__.py"):
            return True
        if "/ctypes/" in name or name.rsplit("/", 1)[-1] in leaky_files:
            return True  # wrappers and debuggers that hand on what they get: judge the caller
        return (name.rsplit("/", 1)[-1], code.co_name) in leaky

    def blamed(frame):
        # Is the solution's code the one asking? Skips the helpers that return frames.
        while frame is not None and is_leaky(frame.f_code):
            frame = frame.f_back
        return frame is not None and not trusted(frame.f_code)

    # -- the operands of an assertion --------------------------------------------------

    dunders = ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__",
               "__len__", "__contains__", "__iter__", "__next__", "__hash__", "__sub__",
               "__rsub__", "__abs__", "__round__", "__float__", "__int__", "__index__",
               "__getattribute__", "__getattr__", "__instancecheck__", "__subclasscheck__")
    builtin_kinds = (types.BuiltinFunctionType, types.WrapperDescriptorType,
                     types.MethodDescriptorType, types.MethodWrapperType,
                     types.ClassMethodDescriptorType, types.GetSetDescriptorType,
                     types.MemberDescriptorType, type(None))
    # C-level readers, immune to a metaclass's __getattribute__.
    type_mro = vars(type)["__mro__"].__get__
    type_dict = vars(type)["__dict__"].__get__
    type_name = vars(type)["__name__"].__get__
    function_code = vars(FunctionType)["__code__"].__get__
    static_func = vars(staticmethod)["__func__"].__get__
    class_func = vars(classmethod)["__func__"].__get__
    # The assertions whose verdict an operand's own methods could decide.
    comparisons = {name for name in dir(TestCase) if name.startswith(("assert", "fail"))
                   and not name.startswith(("assertRaises", "assertWarns", "assertLogs",
                                            "assertNoLogs", "assertIsInstance",
                                            "assertNotIsInstance", "assertIsNone",
                                            "assertIsNotNone", "assertIs", "fail"))
                   or name in ("failUnlessEqual", "failIfEqual", "failUnlessAlmostEqual",
                               "failIfAlmostEqual", "failUnless", "failIf")}
    checked_types = {}  # id(class) -> (class, finding)

    def forged_type(klass):
        # Only C-level reads of what the program made: its classes may have metaclasses
        # whose methods would otherwise run here, inside the hook, unaudited.
        known = checked_types.get(id(klass))
        if known is not None and known[0] is klass:
            return known[1]
        checked_types[id(klass)] = (klass, None)
        found = None
        for base in type_mro(klass):
            members = type_dict(base)
            if (type_name(base) == "_ANY" and type(members.get("__module__")) is str
                    and members.get("__module__") == "unittest.mock"):
                found = "the program passed an assertion unittest.mock.ANY, which equals anything"
                break
            for name in dunders:
                attr = members.get(name)
                if type(attr) is staticmethod:
                    attr = static_func(attr)
                elif type(attr) is classmethod:
                    attr = class_func(attr)
                if type(attr) in builtin_kinds:
                    continue
                code = function_code(attr) if type(attr) is FunctionType else None
                if code is None:
                    call = type_dict(type(attr)).get("__call__")
                    code = function_code(call) if type(call) is FunctionType else None
                if code is not None and not trusted(code):
                    found = ("the program passed an assertion an object whose "
                             + type_name(base) + "." + name + " it defines itself")
                    break
            if found is not None:
                break
        checked_types[id(klass)] = (klass, found)
        return found

    def forged_operand(values):
        todo, seen, budget = list(values), set(), 10000
        while todo and budget:
            value = todo.pop()
            budget -= 1
            if id(value) in seen:
                continue
            seen.add(id(value))
            klass = type(value)
            found = forged_type(klass)
            if found is not None:
                return found
            if klass is dict:
                todo.extend(dict.keys(value))
                todo.extend(dict.values(value))
            elif klass is list or klass is tuple or klass is set or klass is frozenset:
                todo.extend(value)
        return None

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
                return "the program used frame access (" + name + ")"
            return None
        if event in ("object.__setattr__", "object.__delattr__"):
            target, name = args[0], args[1]
            if id(target) in frozen_ids:
                return "the program wrote to " + type_name(target)
            if type(target) is FunctionType and type(name) is str and name in function_attrs:
                code = function_code(target)
                if own.get(id(code)) is code or blamed(frame):
                    return "the program rewrote a function's " + name
            return None
        if event == "exec":
            # dataclasses writes __eq__ and friends as source and execs it: such code
            # is as trusted as its caller.
            code = args[0]
            if (type(code) is CodeType and frame is not None and trusted(frame.f_code)
                    and type(frame.f_code.co_filename) is str
                    and frame.f_code.co_filename.endswith("/dataclasses.py")):
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
            if starts(filename, trusted_dirs) and blamed(frame):
                return "the program compiled code posing as " + filename
            return None
        if event == "os.exec":
            return "the program replaced the test process (os.exec)" if getpid() == me else None
        what = blamed_events.get(event)
        if what is not None and blamed(frame):
            return "the program used " + what
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
                problem = forged_operand(list(call_args[1:]) + list(dict.values(call_kwargs)))
            return problem
        if event == "conductor_gym.check":
            return tampered()
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
            if name in ("posix", "_imp", "builtins", "sys"):
                return "the program re-created the built-in module " + name
            box.append(create_builtin(spec))
            return None
        return "the program raised the harness's audit event " + event

    def hook(event, args):
        if not event.startswith(("sys.", "gc.", "ctypes.", "object.", "code.", "compile",
                                 "exec", "os.exec", "conductor_gym.")):
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
    frozen_ids = {id(klass) for klass in class_state}
    for klass in class_state:
        set_frozen(klass, True)
    sys.addaudithook(hook)

    # -- the solution, then the tests ----------------------------------------------------

    try:
        solution = types.ModuleType("solution")
        solution.__file__ = os.path.abspath("solution.py")
        sys.modules["solution"] = solution
        exec(compile(source, "solution.py", "exec", dont_inherit=True), solution.__dict__)
    except BaseException as exc:
        finish({"error": "the solution raised " + describe(exc) + " when imported"})
    problem = tampered()
    if problem is not None:
        finish({"tampered": problem})
    if not callable(solution.__dict__.get(config["entry_point"])):
        finish({"error": "the solution does not define " + config["entry_point"]})

    tests_module = types.ModuleType("test_solution")
    for key, value in solution.__dict__.items():
        if not (key.startswith("__") and key.endswith("__")):
            tests_module.__dict__[key] = value
    tests_module.__file__ = os.path.abspath("test_solution.py")
    sys.modules["test_solution"] = tests_module
    try:
        exec(test_code, tests_module.__dict__)
    except BaseException as exc:
        finish({"error": "loading the tests raised " + describe(exc)})
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
