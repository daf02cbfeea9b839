r"""Grader ``"code"``: the response's program passes the task's tests in the sandbox.

Used for LiveCodeBench (``stdio`` and ``call`` tasks) and BigCodeBench (``unittest``
tasks). Every program runs in :func:`conductor_gym.sandbox.run_python` (imported when a
grade is asked for), one fresh process per run; ``reference`` is not used.

The program is chosen as BigCodeBench's sanitizer chooses it (:mod:`.extract`): the last
fenced Python block that defines the entry point (``entry_point`` for ``unittest``,
``fn_name`` for ``call``), without the example calls at its end, else the unfenced code
chunk around its definition; for ``stdio``, the last Python block not labelled as
output or an example. "Example usage" and "Output" blocks never replace the solution; a
block whose closing fence is missing does not count. No program is wrong
(``extracted=None``).

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
the two). The verdict is kept out of the program's reach (:mod:`.harness` has the
details):

* A *referee* process, which never runs the program, forks the *test process*, only
  then reads a per-run nonce from stdin, and alone writes the one nonce-tagged result
  line; it is not dumpable, so the test process (same uid) can neither trace it nor
  open its descriptors or memory, and it has no descriptor to the run's output. The
  test process stays non-dumpable too, and the sandbox's seccomp filter (both
  isolation modes) refuses ``ptrace``, ``process_vm_readv``/``writev`` and making a
  process dumpable again; ``/proc`` is mounted read-only: no process rewrites its own
  or another's memory through ``/proc/<pid>/mem``.
* The test process reads the tests and its configuration before it imports the
  program (which may rewrite the files), runs every test, sends one message to the
  referee and exits with status 0 only if every test passed with the machinery intact.
* Before the program runs, the test process imports the modules the program and the
  tests name in their imports (libraries only, never a file of the work dir) and takes
  *identity snapshots*: every module's namespace and every class reachable from one,
  with its namespace. Provenance is judged against them, never by file names, by where
  code came from or by generated code.
* In the test process, ``unittest``'s classes, the harness's and the test classes are
  frozen (CPython's immutable-type flag; test classes are thawed only while the suite
  runs their class fixtures): no patch of them, not even one that undoes itself. An
  audit hook, which nothing in the process can reach or remove, ends the process as
  tampered when the program's own code takes a frame (``sys._getframe``, ``tb_frame``
  and the like, also through ``inspect``, ``traceback`` or a debugger), walks the heap
  (``gc``) or uses ``ctypes``, or when a library function does so while the program's
  code is further up the stack (it could hand the frames on: ``functools.singledispatch
  (inspect.stack)``), unless it is a known consumer that keeps them, running in its
  own module's namespace with the real builtins (logging's
  ``findCaller``, traceback's formatting, ``typing``, ``namedtuple``, pandas'
  ``find_stack_level``, matplotlib's ``warn_external``...); when it traces
  (``sys.settrace``, also for new threads), installs a signal handler (Python hands a
  handler the running frame; the default ones and ``asyncio.run``'s stay), calls
  ``os._exit`` (or re-creates ``posix``, ``_imp`` or ``_signal`` to get another),
  replaces itself (``os.exec*``), adds an audit hook, rewrites a harness function,
  swaps a module's class, opens ``/proc/.../mem``, or forges code posing as the
  harness's or a library's: code compiled under a library file's name is accepted
  only if it is that file's content, marshalled code only as the import system reads a
  library's cached bytecode, ``_imp._fix_co_filename`` only for the import system, and
  code made with ``code.replace``/``CodeType`` under such a name is refused. Code
  generated once the tests run (dataclasses' methods) is never trusted. The harness
  uses its own references to the builtins (taken before the program runs), and the
  tests do not see a global of the program that shadows a builtin (a ``len`` of its
  own).
* The parent instruments ``test_code`` (:mod:`.rewrite`): every call, comparison and
  truth test the test code writes goes through a guard of the harness. Before every
  call the test code makes, before every assertion and after every test the hook checks
  that ``unittest``'s modules, the builtins ``unittest`` uses (``round``, ``len``,
  ``filter``, ``isinstance``...) and the assertion helpers of the task's ``libs``
  (``numpy.testing``, ``pandas.testing``, imported before the program) are unchanged, so
  a patch that undoes itself when called is seen before it runs; that no thread the
  program started is still running (a thread could race a patch past a check), unless a
  thread the tests started still runs; that the functions of the modules the test code
  imports are the snapshot's (``math.isclose = operator.is_not`` is seen), and, before
  a call whose callee comes from one of their packages and after every assertion's
  check, the functions of every module of those packages (numpy's own ``isclose``
  under ``np.allclose``); that the callee of a method call is what the snapshot holds
  for its class (``DataFrame.equals`` replaced) and not a method of the program's own
  class, of a module or a mock the program made; and that the callee of a name the
  test code imports is not the program's code. A replacement the tests make
  themselves (``mock.patch`` with their mocks or their functions) is accepted: a mock
  is the tests' when it was made with none of the program's code on the stack, or is
  a child of one. No operand of an assertion, of a comparison or of a truth test of
  the test code may be an object whose class has comparison, truth, hashing or
  attribute methods that differ from the snapshot's (for a class made since: any such
  method the tests did not write, whatever its code: borrowed from a library such as
  ``unittest.mock._ANY.__eq__``, a builtin, or generated by ``dataclasses``), nor
  ``unittest.mock.ANY`` or a mock the program made, searched up to 100,000 objects deep
  into dicts, lists, tuples, sets, deques, mapping proxies, numpy object arrays, pandas
  objects and any object's attributes (:mod:`.provenance`).

The parent then requires, besides a single tagged line from the referee: no tampering
reported; exactly one message from the test process; no test failed, errored, was
skipped (a program could raise ``SkipTest``) or unexpectedly succeeded; the number of
tests run equal to the number of ``test*`` methods found by parsing ``test_code`` with
:mod:`ast` here, in the parent; and the test process's exit status 0.

Refused on purpose (fail closed): a program that leaves a thread running while the
tests run (an executor never shut down, a library's monitor thread); a test that calls
a method of an object of the program's own class; an object of the program's own
dataclass as an operand (its ``__eq__`` is code generated from names the program
chose); a signal handler of the program's; a library function that is not a known
consumer taking frames on the program's behalf; and a ``mock.patch`` by the tests with
something other than a mock or a function of theirs. What stays possible, as for any
test that runs inside the program's interpreter: a patch of a library module first
imported after the snapshot (by the program, dynamically), or of a package the test
code does not import (checking every module's functions before every call costs about
11 ms a check with numpy and pandas loaded: too slow for tests that call in loops);
rewriting a library function's closure cells; a function the tests call by a bare name
they do not import, which comes from the program's globals and that the program did
not bind by an import (a name it imports must still be what the import gave, and the
test module's names stay as they were when it loaded; a method called on a module or
a mock the program made is refused); objects
past 100,000 searched; a callback the program leaves to a library (a
``weakref.finalize``) that runs with none of its code on the stack; and a thread the
tests start that runs the program, which may race a patch while it runs. The sandbox,
not the grader, protects the host.

Before anything runs, the program is also scanned statically (:func:`scan_program`) and
rejected (wrong, with the reason) if it writes attributes of ``unittest`` / ``TestCase``
/ ``TestResult`` (or aliases of them) or of ``builtins``, or uses ``sys.modules``,
``sys._getframe``, frame objects (``f_back``, ``f_locals``, ``inspect.currentframe``,
``inspect.stack``...), ``gc.get_objects``/``get_referrers``, ``os._exit``, ``sys.exit``,
``__import__``, ``__builtins__``, ``__subclasses__`` or ``__globals__``: a first,
cheap line in front of the run-time checks above.

The package is split by concern: :mod:`.extract` (finding the program in the response),
:mod:`.compare` (output normalisation, JSON comparison), :mod:`.scan` (the static scan of
the program, counting the test methods), :mod:`.rewrite` (instrumenting ``test_code``),
:mod:`.call_harness` and :mod:`.harness` (the harness scripts run in the sandbox, reading
their nonce-tagged result line), :mod:`.provenance` (the test process's search for the
program's code and objects) and :mod:`.grade` (limits, running in the sandbox and the
grading flow of each ``code_kind``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from conductor_gym.graders.base import Grade, GraderError, register_grader
from conductor_gym.graders.code.compare import json_equal, normalize_output
from conductor_gym.graders.code.extract import extract_code
from conductor_gym.graders.code.grade import (
    DEFAULT_MEMORY_MB,
    DEFAULT_TIMEOUT_S,
    _grade_call,
    _grade_stdio,
    _grade_unittest,
    missing_libraries,
)
from conductor_gym.graders.code.harness import _CALL_HARNESS as _CALL_HARNESS
from conductor_gym.graders.code.harness import _UNITTEST_HARNESS as _UNITTEST_HARNESS
from conductor_gym.graders.code.scan import count_test_methods, scan_program

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


@register_grader("code", blocking=True)
def grade_code(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    """Grade the response's program (see :mod:`.extract`) against the task's tests (see the
    module docstring for the three ``code_kind`` values)."""
    kind = metadata.get("code_kind")
    if kind not in ("stdio", "call", "unittest"):
        raise GraderError(f"code: metadata['code_kind'] must be stdio, call or unittest: {kind!r}")
    entry_point = metadata.get("entry_point") if kind == "unittest" else metadata.get("fn_name")
    code = extract_code(response, entry_point if isinstance(entry_point, str) else None)
    if code is None or not code.strip():
        return Grade(False, None, "no fenced Python code block found in the response")
    if kind == "stdio":
        return _grade_stdio(code, metadata)
    if kind == "call":
        return _grade_call(code, metadata)
    return _grade_unittest(code, metadata)
