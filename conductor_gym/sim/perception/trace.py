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

Work is bounded whatever the text: a syntax tree deeper than :data:`MAX_DEPTH` is no
program, an answer longer than :data:`MAX_ANSWER_DIGITS` digits is none, the search for
unfenced programs parses at most :data:`PARSE_BUDGET` characters in all (up to the
line of each syntax error, at least 100 an attempt; the programs nearest the end
first), then tries each ``print`` line alone; of one text's programs the last ones are
traced, at most :data:`MAX_PROGRAMS` of them and :data:`TRACE_BUDGET` characters in
all (a longer program is none); the interpreter bounds each run (:mod:`.interpreter`).
"""

from __future__ import annotations

import ast
import math
import re
import warnings
from functools import lru_cache

from conductor_gym.sim.perception.base import Problem, near_misses
from conductor_gym.sim.perception.interpreter import Unsupported, run_module

__all__ = [
    "MAX_ANSWER_DIGITS",
    "MAX_DEPTH",
    "MAX_PROGRAMS",
    "PARSE_BUDGET",
    "TRACE_BUDGET",
    "find_trace",
]

MAX_DEPTH = 300
MAX_ANSWER_DIGITS = 1000
PARSE_BUDGET = 100_000
MAX_PROGRAMS = 16
TRACE_BUDGET = 20_000
_ATTEMPT_COST = 100  # what one parse attempt is charged at least (its fixed cost)

_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(?P<code>.*?)```", re.S | re.I)


def _parse_costed(code: str) -> tuple[ast.Module | None, int]:
    """The syntax tree of ``code``, or ``None`` if it does not parse (or is deeper than
    :data:`MAX_DEPTH`), and the characters the parser read: up to the line of a syntax
    error (the parser stops there), else all of them."""
    tree, _, cost = _parse_walked(code)
    return tree, cost


def _parse_walked(code: str) -> tuple[ast.Module | None, list[ast.AST], int]:
    """:func:`_parse_costed` with the nodes of the tree (those of :func:`ast.walk`, in
    another order; none when there is no tree)."""
    try:
        with warnings.catch_warnings():  # text read as code: its SyntaxWarnings are noise
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(code)
    except SyntaxError as exc:
        if exc.lineno is None:
            return None, [], len(code)
        read = code.split("\n", exc.lineno)
        return None, [], len(code) - (len(read[-1]) if len(read) > exc.lineno else 0)
    except (ValueError, RecursionError, MemoryError):
        return None, [], len(code)
    nodes, depth = _walk(tree)
    if depth > MAX_DEPTH:
        return None, [], len(code)
    return tree, nodes, len(code)


def _walk(tree: ast.AST) -> tuple[list[ast.AST], int]:
    """Every node of ``tree`` (its own stack, so any depth is fine) and the depth."""
    nodes: list[ast.AST] = []
    deepest = 0
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        nodes.append(node)
        deepest = max(deepest, depth)
        for name in node._fields:  # as ast.iter_child_nodes reads them
            try:
                field = getattr(node, name)
            except AttributeError:
                continue
            if isinstance(field, ast.AST):
                stack.append((field, depth + 1))
            elif isinstance(field, list):
                stack.extend((item, depth + 1) for item in field if isinstance(item, ast.AST))
    return nodes, deepest


def _nested_loops(nodes: list[ast.AST]) -> int:
    """Loops inside loops, over the ``nodes`` of a tree (:func:`ast.walk`)."""
    count = 0
    for node in nodes:
        if isinstance(node, ast.For | ast.While):
            count += sum(
                isinstance(inner, ast.For | ast.While) and inner is not node
                for inner in ast.walk(node)
            )
    return count


@lru_cache(maxsize=1 << 12)
def trace_program(code: str) -> tuple[str, str | None, float, str] | None:
    """``(key, answer, size, family)`` of ``code``, or ``None`` if it is not a program."""
    tree, nodes, _ = _parse_walked(code)
    if tree is None:
        return None
    if not any(isinstance(n, ast.Call) and getattr(n.func, "id", "") == "print" for n in nodes):
        return None
    try:
        result = run_module(tree)
    except Unsupported:
        answer = None
        steps, calls = 1, 0
    else:
        printed = result.printed[-1] if result.printed else ""
        answer = (
            printed
            if len(printed) <= MAX_ANSWER_DIGITS and re.fullmatch(r"-?\d+", printed)
            else None
        )
        steps, calls = result.steps, result.calls
    functions = sum(isinstance(n, ast.FunctionDef) for n in nodes)
    nested = _nested_loops(nodes)
    family = "program_trace_hard" if functions or nested else "program_trace"
    size = math.log2(max(steps, 2)) + 0.5 * math.sqrt(calls) + functions + 0.5 * nested
    return "trace:" + ast.dump(tree), answer, size, family


def _unfenced(text: str) -> list[tuple[int, int, str]]:
    out = []
    budget = PARSE_BUDGET
    for match in reversed(list(re.finditer(r"^[^\n]*\bprint\(", text, re.M))):
        end = text.find("\n", match.start())
        end = len(text) if end < 0 else end
        block_start = text.rfind("\n\n", 0, match.start())
        block_start = 0 if block_start < 0 else block_start + 2
        # Walk forward from the paragraph start to the first line that parses with the
        # rest: prose lines before the code are dropped.
        lines = text[block_start:end].split("\n")
        offset = block_start
        for i in range(len(lines)):
            if budget <= 0:  # spent: only the print line itself is still tried
                offset = end - len(lines[-1])
            code = text[offset:end]
            tree, cost = _parse_costed(code)
            budget -= max(cost, _ATTEMPT_COST)
            if tree is not None:
                out.append((offset, end, code))
                break
            if offset == end - len(lines[-1]):
                break
            offset += len(lines[i]) + 1
    out.reverse()
    return out


def find_trace(text: str) -> list[Problem]:
    """Programs posed in ``text`` (module docstring)."""
    blocks = [(m.start(), m.end(), m.group("code")) for m in _FENCE.finditer(text)]
    if not blocks and "print(" in text:
        blocks = _unfenced(text)
    out: list[Problem] = []
    budget = TRACE_BUDGET
    for start, end, code in reversed(blocks[-MAX_PROGRAMS:]):
        code = code.strip("\n")
        if len(code) > budget:
            continue
        budget -= len(code)
        traced = trace_program(code)
        if traced is None:
            continue
        key, answer, size, family = traced
        slips = near_misses(int(answer)) if answer is not None else ()
        out.append(Problem(family, key, answer, size, start, end, slips))
    out.reverse()
    return out
