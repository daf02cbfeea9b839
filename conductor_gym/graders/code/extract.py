"""Finding the program in a response, the way BigCodeBench's sanitizer chooses it.

BigCodeBench's sanitizer grades the code that defines the task's entry point: it reads
the code chunk of the response, keeps the imports and the definitions, and drops
top-level example calls and ``if __name__ == "__main__"`` blocks. Here, with the entry
point known (``unittest`` tasks' ``entry_point``, ``call`` tasks' ``fn_name``):

1. the program is the *last* fenced Python block (tagged ``python``, ``py``, ``python3``,
   ``py3`` or untagged) that defines the entry point at top level (``def name``, or a
   class with a method ``name``, LeetCode style); blocks that only use it ("Example
   usage", tests) or show output never replace it;
2. example usage at the end of that block is dropped: a trailing run of top-level
   statements after the last definition, when it is a ``__main__`` guard or calls the
   entry point, and writes nothing the definitions read (no ``x = ...``, ``x.attr =
   ...`` or ``x[k] = ...`` of a name they use);
3. with no fenced block at all, the unfenced code chunk around ``def name`` (its
   imports before it, its body and further definitions after it, up to the prose).

Without an entry point (``stdio`` programs), or when no block defines it, the program
is the last fenced Python block that is not labelled as output or example (a short
line ending in ``:`` right before it, such as ``Output:``, ``Example usage:``,
``Tests:``); when every block is so labelled, the last block. A fence is a line starting
with three or more backticks; the block ends at a line holding only at least as many
backticks; an unclosed block, and everything after it, does not count.
"""

from __future__ import annotations

import ast
import re
from typing import NamedTuple

__all__ = ["extract_code"]

_PYTHON_TAGS = frozenset({"", "python", "py", "python3", "py3"})
_LABEL_WORDS = re.compile(
    r"\b(?:outputs?|prints?|printed|results?|console|example|examples|usage|demo|tests?|"
    r"testing|run|running)\b",
    re.IGNORECASE,
)
_SOLUTION_WORDS = re.compile(
    r"\b(?:solution|implementation|program|function|code|fix|fixed|corrected|final)\b",
    re.IGNORECASE,
)
_CODE_START = re.compile(r"(?:import\s|from\s+\S+\s+import\s|@|#|$)")
_CODE_CONTINUE = re.compile(
    r"(?:[ \t]|import\s|from\s+\S+\s+import\s|@|#|(?:async\s+)?def\s|class\s|[A-Za-z_]\w*\s*=|$)"
)


class _Block(NamedTuple):
    tag: str
    code: str
    label: str


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


def _blocks(lines: list[str]) -> list[_Block]:
    """Every closed fenced block, with the non-empty line right before it."""
    found: list[_Block] = []
    index = 0
    previous = ""
    while index < len(lines):
        opening = _fence(lines[index])
        if opening is None:
            if lines[index].strip():
                previous = lines[index].strip()
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
        found.append(_Block(tag, "\n".join(lines[index + 1 : end]) + "\n", previous))
        previous = ""
        index = end + 1
    return found


def _labelled_aside(label: str) -> bool:
    """Whether a block's preceding line presents it as output or an example."""
    text = label.strip(" *_#>").rstrip("*_ ")
    return (
        text.endswith(":")
        and len(text) <= 60
        and _LABEL_WORDS.search(text) is not None
        and _SOLUTION_WORDS.search(text) is None
    )


def _defines(code: str, name: str) -> bool:
    """Whether ``code`` defines ``name`` at top level, or as a method of a top-level class."""
    escaped = re.escape(name)
    if re.search(rf"^(?:async[ \t]+)?def[ \t]+{escaped}\b", code, re.MULTILINE):
        return True
    return bool(
        re.search(r"^class[ \t]", code, re.MULTILINE)
        and re.search(rf"^[ \t]+(?:async[ \t]+)?def[ \t]+{escaped}\b", code, re.MULTILINE)
    )


_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom)


def _main_guard(node: ast.stmt) -> bool:
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)


def _free_names(definition: ast.stmt) -> set[str]:
    """Names ``definition`` reads that it neither binds nor takes as parameters (roughly:
    a module-level name its body depends on)."""
    loaded: set[str] = set()
    bound: set[str] = set()
    for node in ast.walk(definition):
        if isinstance(node, ast.Name):
            (loaded if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return loaded - bound


def _written_names(statement: ast.stmt) -> set[str]:
    """Names ``statement`` rebinds or writes into (``x = ...``, ``x.attr = ...``,
    ``x[0] = ...``): the root name of every store target."""
    written: set[str] = set()
    for node in ast.walk(statement):
        target: ast.AST = node
        if not isinstance(getattr(node, "ctx", None), ast.Store | ast.Del):
            continue
        while isinstance(target, ast.Attribute | ast.Subscript | ast.Starred):
            target = target.value
        if isinstance(target, ast.Name):
            written.add(target.id)
    return written


def _drop_example_tail(code: str, name: str) -> str:
    """``code`` without the example usage after its last definition (see the module
    docstring, rule 2); unchanged when it does not parse or has no such tail."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return code
    body = tree.body
    last_definition = max(
        (i for i, node in enumerate(body) if isinstance(node, _DEFINITIONS)), default=-1
    )
    tail = body[last_definition + 1 :]
    if last_definition < 0 or not tail:
        return code
    used = set().union(*(_free_names(definition) for definition in body[: last_definition + 1]))
    assigned = {name for statement in tail for name in _written_names(statement)}
    names_called = {
        node.id for statement in tail for node in ast.walk(statement) if isinstance(node, ast.Name)
    }
    example = (
        all(_main_guard(s) for s in tail) or name in names_called or "Solution" in (names_called)
    )
    if not example or assigned & used:
        return code
    kept = code.splitlines()[: tail[0].lineno - 1]
    while kept and (not kept[-1].strip() or kept[-1].lstrip().startswith("#")):
        kept.pop()
    return "\n".join(kept) + "\n"


def _unfenced_chunk(lines: list[str], name: str) -> str | None:
    """The code chunk around the top-level ``def name`` of an unfenced response."""
    pattern = re.compile(rf"(?:async[ \t]+)?def[ \t]+{re.escape(name)}\b")
    starts = [i for i, line in enumerate(lines) if pattern.match(line)]
    if not starts:
        return None
    start = end = starts[-1]
    while start > 0 and _CODE_START.match(lines[start - 1]):
        start -= 1
    while end + 1 < len(lines) and _CODE_CONTINUE.match(lines[end + 1]):
        end += 1
    chunk = lines[start : end + 1]
    while chunk and not chunk[0].strip():
        chunk.pop(0)
    while chunk and not chunk[-1].strip():
        chunk.pop()
    text = "\n".join(chunk) + "\n"
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return text


def extract_code(response: str, entry_point: str | None = None) -> str | None:
    """The program to grade, chosen by the rules in the module docstring, or ``None``."""
    lines = response.splitlines()
    python = [block for block in _blocks(lines) if block.tag in _PYTHON_TAGS]
    if entry_point:
        defining = [block for block in python if _defines(block.code, entry_point)]
        if defining:
            return _drop_example_tail(defining[-1].code, entry_point)
        if not python:
            return _unfenced_chunk(lines, entry_point)
    if not python:
        return None
    programs = [block for block in python if not _labelled_aside(block.label)]
    return (programs or python)[-1].code
