"""Plan files: one fixed plan, written for every question, with a question placeholder.

A plan file is a conductor completion that holds a plan in the text format
:func:`~conductor_gym.plan.parse_plan` reads (the three lists ``model_id``, ``subtasks``
and ``access_list``, as :meth:`Plan.to_text` writes them; ``#`` comment lines and other
free text around them are ignored). Each subtask may contain the placeholder
:data:`QUESTION` (``{question}``), which :func:`fill_question` replaces by an episode's
question with a plain text replacement (never ``str.format``, so braces in a question or
a subtask are safe). Model ids are the episode's ``Model i`` positions.

The agent ``plan:<path>`` (``conductor_gym.agents.plan_file``) plays such a file, and
``conductor-gym sim audit --save-plans DIR`` writes the best fixed plans it finds as
such files. Both sides use :func:`read_plan_file` and :func:`write_plan_file`, which hold
the same rules: at least one step, every model id an int >= 0, at most
:data:`MAX_FILE_STEPS` steps, and ``{question}`` in at least one subtask (otherwise no
step would see the question).
"""

from __future__ import annotations

import os
from pathlib import Path

from conductor_gym.errors import ConfigurationError
from conductor_gym.plan.model import Plan, PlanParseError
from conductor_gym.plan.parse import parse_plan

__all__ = ["MAX_FILE_STEPS", "QUESTION", "fill_question", "read_plan_file", "write_plan_file"]

QUESTION = "{question}"
"""The placeholder a plan file's subtasks hold for the episode's question."""

MAX_FILE_STEPS = 64
"""The most steps a plan file may hold (the env that plays it must allow as many)."""

_ANY_ID = 2**31
"""The parser's pool size at read time: any id >= 0 is accepted there and checked
against the episode's pool when the plan is played."""


def fill_question(plan: Plan, question: str) -> Plan:
    """``plan`` with every ``{question}`` in its subtasks replaced by ``question``."""
    return Plan(
        plan.model_ids, tuple(s.replace(QUESTION, question) for s in plan.subtasks), plan.access
    )


def read_plan_file(path: str | os.PathLike[str]) -> Plan:
    """The plan in the file at ``path`` (module docstring), subtasks verbatim.

    Raises:
        ConfigurationError: the file is missing or unreadable, holds no valid plan (the
            message gives the parser's reason and detail), holds the empty plan, or no
            subtask holds ``{question}``; the message names the path.
    """
    where = f"plan file {str(path)!r}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigurationError(f"{where}: cannot read it ({exc})") from exc
    try:
        plan = parse_plan(text, num_workers=_ANY_ID, max_steps=MAX_FILE_STEPS)
    except PlanParseError as exc:
        detail = exc.detail
        if exc.reason == "unknown_worker":  # the only id the parser refuses here
            detail = f"{detail.split(',')[0]}; a model id is a Model position, an int >= 0"
        raise ConfigurationError(f"{where}: not a plan ({exc.reason}: {detail})") from exc
    _check(plan, where)
    return plan


def write_plan_file(path: str | os.PathLike[str], plan: Plan, *, comment: str = "") -> Path:
    """Write ``plan`` (subtasks holding ``{question}``) to ``path`` as a plan file, each
    line of ``comment`` first as a ``#`` line; the parent folder is created. Returns the
    path. :func:`read_plan_file` reads back the same plan.

    Raises:
        ConfigurationError: the plan breaks a rule of the module docstring (nothing is
            written then).
    """
    file = Path(path)
    _check(plan, f"plan for {str(file)!r}")
    if any(m < 0 for m in plan.model_ids):
        raise ConfigurationError(
            f"plan for {str(file)!r}: model ids must be >= 0, got {list(plan.model_ids)}",
        )
    header = "".join(f"# {line}\n" for line in comment.splitlines())
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(header + plan.to_text() + "\n", encoding="utf-8")
    return file


def _check(plan: Plan, where: str) -> None:
    if plan.is_empty:
        raise ConfigurationError(f"{where}: the plan has no steps")
    if len(plan) > MAX_FILE_STEPS:
        raise ConfigurationError(
            f"{where}: the plan has {len(plan)} steps, at most {MAX_FILE_STEPS}"
        )
    if not any(QUESTION in s for s in plan.subtasks):
        raise ConfigurationError(
            f"{where}: no subtask holds the placeholder {QUESTION}, so no step would see "
            "the question",
        )
