"""Helpers shared by the "code" grader tests (``test_graders_code_*.py``).

``fenced`` wraps a program in a response; ``call`` and ``unit`` grade a program as a
``call`` or ``unittest`` task with the shared example tests; :class:`RecordingSandbox`
(behind the ``spy`` fixture of ``conftest.py``) records what the grader sends to the
sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conductor_gym import sandbox
from conductor_gym.graders import grade


def fenced(code: str, tag: str = "python") -> str:
    return f"Here is my solution.\n\n```{tag}\n{code.strip()}\n```\n"


@dataclass
class RecordingSandbox:
    """A spy around the real ``run_python``: it records every argument the grader hands to
    the sandbox (to verify what the sandboxed program can see) and then runs the real
    sandbox unchanged. It is a verification aid, not a mock of the sandbox's behaviour."""

    calls: list[dict[str, Any]] = field(default_factory=list)

    def __call__(self, code: str, **kwargs: Any) -> sandbox.ExecResult:
        self.calls.append({"code": code, **kwargs})
        return REAL_RUN_PYTHON(code, **kwargs)

    def everything_sent(self) -> str:
        parts: list[str] = []
        for call in self.calls:
            parts += [call["code"], call.get("stdin", ""), *map(str, call.get("argv", ()))]
            for name, content in (call.get("files") or {}).items():
                parts += [name, content if isinstance(content, str) else content.decode()]
        return "\n".join(parts)


REAL_RUN_PYTHON = sandbox.run_python


# -- call ------------------------------------------------------------------------------------

CALL_TESTS = [
    {"input": [[2, 7, 11, 15], 9], "output": [0, 1]},
    {"input": [[3, 2, 4], 6], "output": [1, 2]},
    {"input": [[3, 3], 6], "output": [0, 1]},
]


def call(program: str, tests: list[dict[str, Any]] = CALL_TESTS, fn: str = "twoSum") -> Any:
    return grade("code", fenced(program), "", code_kind="call", fn_name=fn, tests=tests)


# -- unittest --------------------------------------------------------------------------------

TEST_CODE = """
import unittest

class TestCases(unittest.TestCase):
    def test_small(self):
        self.assertEqual(task_func([1, 2, 3]), 6)

    def test_empty(self):
        self.assertEqual(task_func([]), 0)

    def test_negative(self):
        self.assertEqual(task_func([-1, 1, -5]), -5)
"""
GOOD = "def task_func(values):\n    return sum(values)"


def unit(program: str, test_code: str = TEST_CODE, **metadata: Any) -> Any:
    return grade(
        "code",
        fenced(program),
        "",
        code_kind="unittest",
        test_code=test_code,
        entry_point="task_func",
        **metadata,
    )
