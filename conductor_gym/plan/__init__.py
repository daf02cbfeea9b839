"""Parse a conductor's free-text completion into a validated :class:`Plan`.

The action of a conductor is free text: reasoning, then three Python list assignments::

    model_id = [2, 0]
    subtasks = ["Solve: what is 17*23?", "Check the solution above and give the answer."]
    access_list = [[], "all"]

:func:`parse_plan` turns such a completion into a :class:`Plan` or raises
:class:`PlanParseError` with a machine-readable ``reason`` and a precise ``detail``. It never
calls ``eval`` or ``exec``: each value is cut out of the text by a small scanner and handed
to :func:`ast.literal_eval` (and, when Python goes on after it, the statement to
:func:`ast.parse`, which evaluates nothing).

Locating the lists
    An assignment is ``model_id = <value>``, ``subtasks = <value>`` or
    ``access_list = <value>`` anywhere in the text (inside or outside code fences),
    with any whitespace, newlines included, around ``=``. The name must not be part of a
    longer identifier or an attribute (``my_model_id``, ``obj.model_id``, ``model_ids``),
    ``==`` is a comparison, and JSON-style ``"model_id": [...]`` is not an assignment.
    A value must start with ``[`` (a tuple is not accepted: a parenthesis after
    ``name =`` is too often prose). The scanner follows Python's lexical rules (single,
    double and triple-quoted strings with escapes, ``#`` comments) to find the matching
    closing bracket, so brackets, quotes and ``=`` inside strings are harmless.
    As in Python, a string in single quotes (``'...'`` or ``"..."``) must end on its line;
    one that does not makes its list a syntax error, so a stray apostrophe cannot swallow
    the rest of the text.

The last complete plan wins
    Assignments whose value is a bracket expression are walked in text order and collected
    into a plan. A name already in the plan being collected drops its earlier assignment
    and everything before it (a list quoted in the reasoning does not split the plan that
    follows, and a list written again replaces the earlier one). Once all three names are
    in, each with a closed bracket expression, the plan is complete and collecting starts
    afresh. The last complete plan wins: a plan quoted in the reasoning is superseded by
    the final one, and a truncated plan after a complete one falls back to the complete
    one. The chosen plan is final: if one of its values is not a valid literal the result
    is ``syntax``, never an earlier plan. The search for assignments skips over closed
    values (an assignment quoted inside a subtask is not a plan) but continues inside
    broken ones (a broken draft may be followed by the real plan). Assignments whose value
    is not a bracket expression (``model_id = the index of a worker`` in prose) take no
    part in this; they only explain a failure.

Validation, in this order
    ``too_long`` (before anything else); then, when no group is complete, the first that
    applies of ``too_deep``, ``syntax`` (a string not closed on its line), ``incomplete``,
    ``not_a_list``, ``missing_list`` and ``no_lists``; then, for the chosen group,
    ``not_a_list`` (a value that goes on after its list as Python), ``syntax`` and
    ``length_mismatch``. Three empty lists give the empty
    plan (the "stop" answer of a recursive episode). Then ``too_many_steps``, every model id
    (``bad_model_id``, ``unknown_worker``), every subtask (``bad_subtask``,
    ``empty_subtask``) and every access entry (``bad_access``). Subtasks are kept verbatim.

Access entries
    ``[]`` means no earlier step, ``"all"`` (or ``["all"]``, as the paper writes it) every
    earlier step, and a list (or tuple) of distinct earlier 0-based step indices exactly
    those steps.
    They are normalised to ``()``, ``"all"`` and a sorted tuple of indices.

Reasons (:data:`REASONS`)
    ``too_long``
        The text has more than ``max_chars`` characters; nothing was scanned.
    ``no_lists``
        No ``model_id``, ``subtasks`` or ``access_list`` assignment was found.
    ``missing_list``
        Some of the three assignments were found, but no complete plan; the detail names
        the lists missing from the last plan being collected.
    ``incomplete``
        A list is never closed, typically because the generation was cut off.
    ``syntax``
        A list of the chosen plan is a closed bracket expression but not a Python literal
        (the detail names what is not: ``a name 'worker_1' on line 2``), or, when no plan
        is complete, a list has a string that is not closed on its line. Details are
        deterministic: the same text always gives the same detail.
    ``too_deep``
        A list nests brackets deeper than ``max_depth`` (rejected while scanning, so a
        bracket bomb cannot reach the parser's recursion limits).
    ``not_a_list``
        A value is not exactly one list literal: either it does not start with ``[``
        (``model_id = 2``, ``access_list = "all"``, ``subtasks = ("one step",)``) and no
        complete plan exists, or a value of the chosen plan goes on after its list as
        Python (``[0] * 6``, ``[2, 0][::-1]``, ``[3, 1][1:]``, ``[0] + [1]``,
        ``[0] if c else [5, 6]``, ``[0], [1]``, ``[0].copy()``), which would make the
        plan something other than the list written. Text after a list that does not
        read as Python with it (prose, a closing backtick, a comment) is not part of
        the value.
    ``length_mismatch``
        The three lists have different lengths; the detail gives all three.
    ``too_many_steps``
        The plan has more than ``max_steps`` steps.
    ``bad_model_id``
        A model id is not an integer (``True`` and ``1.0`` are not integers here).
    ``unknown_worker``
        A model id is outside ``0 .. num_workers - 1``.
    ``bad_subtask``
        A subtask is not a string.
    ``empty_subtask``
        A subtask is empty or whitespace only.
    ``bad_access``
        An access entry is none of the forms above (an index that is not earlier than its
        own step, negative, duplicated or a bool, another string, a nested list, ...).

``num_workers < 1``, ``max_steps < 1``, ``max_chars < 0`` and ``max_depth < 1`` are
programming errors and raise a plain :class:`ValueError`.

Plan files (:mod:`conductor_gym.plan.template`)
    One fixed plan in this text format whose subtasks hold the placeholder
    ``{question}``: ``read_plan_file``, ``write_plan_file`` and ``fill_question`` there
    (the ``plan:<path>`` agent plays one).
"""

from __future__ import annotations

from conductor_gym.plan.model import REASONS, Access, Plan, PlanParseError
from conductor_gym.plan.parse import parse_plan

__all__ = ["REASONS", "Access", "Plan", "PlanParseError", "parse_plan"]
