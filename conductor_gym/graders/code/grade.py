"""Limits, running in the sandbox, and the grading flow of each ``code_kind``
(``stdio``, ``call``, ``unittest``)."""

from __future__ import annotations

import importlib.util
import json
import secrets
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from conductor_gym.graders.base import Grade, GraderError
from conductor_gym.graders.code.compare import json_equal, normalize_output
from conductor_gym.graders.code.harness import _CALL_HARNESS, _UNITTEST_HARNESS, _tagged_line
from conductor_gym.graders.code.imports import imported_modules
from conductor_gym.graders.code.rewrite import instrument_tests
from conductor_gym.graders.code.scan import count_test_methods, scan_program

if TYPE_CHECKING:
    from conductor_gym.sandbox import ExecResult

__all__ = ["DEFAULT_MEMORY_MB", "DEFAULT_TIMEOUT_S", "missing_libraries"]

DEFAULT_TIMEOUT_S = 6.0
"""Wall-clock limit per test when ``metadata["timeout_s"]`` is not given."""

DEFAULT_MEMORY_MB = 1024
"""Memory limit per run when ``metadata["memory_mb"]`` is not given."""

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
    # The run's own files (the program is solution.py) are importable in the sandbox.
    own = {"solution", "test_solution", "harness"}
    undeclared = missing_libraries(m for m in imported_modules(test_code) if m not in own)
    if undeclared:
        raise GraderError(
            f"code: the tests import {', '.join(undeclared)}, which the task does not declare "
            "in libs and this machine does not have (install it to grade)"
        )
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
    guards = {
        kind: f"conductor_gym.{kind}.{secrets.token_hex(8)}" for kind in ("call", "attr", "value")
    }
    config = {
        "entry_point": entry_point,
        "classes": sorted(counts),
        "expected": expected,
        "libs": [str(lib) for lib in libs],
        "guards": guards,
    }
    result = _sandbox_run(
        _UNITTEST_HARNESS,
        stdin=json.dumps({"nonce": nonce}),
        files={
            "solution.py": code,
            "test_solution.py": instrument_tests(test_code, guards),
            "harness.json": json.dumps(config),
        },
        timeout_s=suite_timeout,
        memory_mb=memory_mb,
    )
    why = _failed_run(result, suite_timeout)
    report: Any = None
    if why is None:
        report, why = _tagged_line(result, nonce)
    if why is None and not (isinstance(report, dict) and "messages" in report):
        why = "the harness's result is malformed"
    if why is not None:
        return Grade(False, code, f"unittest: the test run failed: {why}")
    return _unittest_verdict(code, report, expected)


def _unittest_verdict(code: str, report: Mapping[str, Any], expected: int) -> Grade:
    """The grade from the referee's report on the test process (see :mod:`.harness`):
    passed only when the process exited with status 0 after sending exactly one message,
    the counts of a clean run of every expected test."""
    payload = report.get("payload")
    if report.get("tampered"):
        return Grade(False, code, f"unittest: rejected: {report['tampered']}")
    if report.get("messages") != 1 or not isinstance(payload, dict):
        return Grade(
            False,
            code,
            "unittest: the test process sent "
            f"{report.get('messages')} result messages, expected one",
        )
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
    if report.get("exit") != 0:
        ended = (
            f"was killed by signal {report.get('signal')}"
            if report.get("signal") is not None
            else f"exited with status {report.get('exit')}"
        )
        return Grade(False, code, f"unittest: the test process {ended} after its tests")
    return Grade(True, code, f"unittest: passed all {expected} tests")
