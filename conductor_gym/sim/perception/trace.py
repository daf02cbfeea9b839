"""Programs to trace: a Python program in a text, run by :mod:`.interpreter`.

A program is the content of a fenced code block, or else the block of lines around
the last ``print(`` line that parses as Python. Its key is the dump of its syntax
tree (layout and comments do not matter); its answer is what it prints, when that is
one integer. Programs with a function definition or a nested loop have the form of
``program_trace_hard``, the others of ``program_trace``. Any program is a problem,
so a prefix of a program with its own ``print`` is a sub-problem ("the state after
some lines"); its result is not used to shorten the whole program's trace (not
modelled). Size: log2(executed statements) + 0.5 * calls^0.5 + 1.0 per function +
0.5 per nested loop.
"""

from __future__ import annotations

import ast
import math
import re
from functools import lru_cache

from conductor_gym.sim.perception.base import Problem, near_misses
from conductor_gym.sim.perception.interpreter import Unsupported, run

__all__ = ["find_trace"]

_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(?P<code>.*?)```", re.S | re.I)


def _nested_loops(tree: ast.AST) -> int:
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.While):
            count += sum(
                isinstance(inner, ast.For | ast.While) and inner is not node
                for inner in ast.walk(node)
            )
    return count


@lru_cache(maxsize=1 << 12)
def trace_program(code: str) -> tuple[str, str | None, float, str] | None:
    """``(key, answer, size, family)`` of ``code``, or ``None`` if it is not a program."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return None
    if not any(
        isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print" for n in ast.walk(tree)
    ):
        return None
    try:
        result = run(code)
    except Unsupported:
        answer = None
        steps, calls = 1, 0
    else:
        printed = result.printed[-1] if result.printed else ""
        answer = printed if re.fullmatch(r"-?\d+", printed) else None
        steps, calls = result.steps, result.calls
    functions = sum(isinstance(n, ast.FunctionDef) for n in ast.walk(tree))
    nested = _nested_loops(tree)
    family = "program_trace_hard" if functions or nested else "program_trace"
    size = math.log2(max(steps, 2)) + 0.5 * math.sqrt(calls) + functions + 0.5 * nested
    return "trace:" + ast.dump(tree), answer, size, family


def _unfenced(text: str) -> list[tuple[int, int, str]]:
    out = []
    for match in re.finditer(r"^[^\n]*\bprint\(", text, re.M):
        end = text.find("\n", match.start())
        end = len(text) if end < 0 else end
        block_start = text.rfind("\n\n", 0, match.start())
        block_start = 0 if block_start < 0 else block_start + 2
        # Walk forward from the paragraph start to the first line that parses with the
        # rest: prose lines before the code are dropped.
        lines = text[block_start:end].split("\n")
        for i in range(len(lines)):
            code = "\n".join(lines[i:])
            try:
                ast.parse(code)
            except (SyntaxError, ValueError):
                continue
            offset = block_start + sum(len(line) + 1 for line in lines[:i])
            out.append((offset, end, code))
            break
    return out


def find_trace(text: str) -> list[Problem]:
    """Programs posed in ``text`` (module docstring)."""
    blocks = [(m.start(), m.end(), m.group("code")) for m in _FENCE.finditer(text)]
    if not blocks and "print(" in text:
        blocks = _unfenced(text)
    out: list[Problem] = []
    for start, end, code in blocks:
        traced = trace_program(code.strip("\n"))
        if traced is None:
            continue
        key, answer, size, family = traced
        slips = near_misses(int(answer)) if answer is not None else ()
        out.append(Problem(family, key, answer, size, start, end, slips))
    return out
