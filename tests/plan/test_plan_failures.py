"""conductor_gym.plan: every failure reason, with a precise detail, and the input limits."""

from __future__ import annotations

import re
import warnings

import pytest
from plan_cases import plan_source

from conductor_gym.plan import REASONS, Access, Plan, PlanParseError, parse_plan


def P(model_ids: list[int], subtasks: list[str], access: list[Access]) -> Plan:
    """Shorthand for an expected plan."""
    return Plan(tuple(model_ids), tuple(subtasks), tuple(access))


# --------------------------------------------------------------------------- failures

PLAN_TAIL = '\nsubtasks = ["Solve.", "Check."]\naccess_list = [[], "all"]'


FAILURES: list[tuple[str, str, int, str, str]] = [
    # (id, text, num_workers, reason, regex the detail must match)
    (
        "too_long",
        (plan_source("[0]", '["a"]', "[[]]") + " " * 65536)[:65537],
        1,
        "too_long",
        r"the text has 65537 characters, more than the limit of 65536",
    ),
    ("no_lists_prose", "Model 1 should just solve it directly.", 2, "no_lists", "found no"),
    ("no_lists_empty_text", "", 2, "no_lists", "model_id"),
    (
        "no_lists_json_only",
        '{"model_id": [0], "subtasks": ["x"], "access_list": [[]]}',
        1,
        "no_lists",
        "found no",
    ),
    (
        "no_lists_comparison_only",
        'model_id == [0] and subtasks == ["x"] and access_list == [[]]',
        1,
        "no_lists",
        "found no",
    ),
    (
        "missing_access_list",
        'model_id = [0]\nsubtasks = ["Solve."]\n',
        1,
        "missing_list",
        r"model_id and subtasks but no access_list",
    ),
    (
        "missing_two_lists",
        "Here is the routing: model_id = [1, 0]",
        2,
        "missing_list",
        r"no subtasks or access_list",
    ),
    (
        "missing_model_id_after_reassignment",
        'subtasks = ["a"]\naccess_list = [[]]\nsubtasks = ["b"]',
        2,
        "missing_list",
        r"the last plan has subtasks and access_list but no model_id list",
    ),
    (
        "incomplete_truncated_string",
        'model_id = [0, 1]\nsubtasks = ["Solve the equation", "Check the sol',
        2,
        "incomplete",
        r"subtasks list starting on line 2 is never closed",
    ),
    (
        "incomplete_after_equals",
        'model_id = [0]\nsubtasks = ["Solve."]\naccess_list = ',
        1,
        "incomplete",
        r"access_list",
    ),
    (
        "incomplete_unclosed_bracket",
        'model_id = [0]\nsubtasks = ["Solve."]\naccess_list = [[]',
        1,
        "incomplete",
        r"access_list list starting on line 3",
    ),
    (
        "incomplete_triple_quote",
        'model_id = [0]\nsubtasks = ["""Solve the following:\n 2+2 = ?"]\naccess_list = [[]]',
        1,
        "incomplete",
        r"subtasks",
    ),
    (
        "incomplete_comment_at_end",
        "model_id = [0,  # the solver",
        1,
        "incomplete",
        r"model_id",
    ),
    (
        "syntax_double_comma",
        plan_source("[0,, 1]", '["a", "b"]', '[[], "all"]'),
        2,
        "syntax",
        r"model_id list on line 1 is not a Python literal",
    ),
    (
        "syntax_variable_name",
        plan_source("[worker_1]", '["a"]', "[[]]"),
        2,
        "syntax",
        r"model_id.*worker_1",
    ),
    (
        "syntax_fstring",
        plan_source("[0]", '[f"Solve {question}"]', "[[]]"),
        1,
        "syntax",
        r"subtasks list on line 2",
    ),
    (
        "syntax_expression",
        plan_source("[0]", '["a" + "b"]', "[[]]"),
        1,
        "syntax",
        r"subtasks",
    ),
    (
        "syntax_mismatched_brackets",
        plan_source("[0, 1)", '["a", "b"]', "[[], [0]]"),
        2,
        "syntax",
        r"model_id",
    ),
    (
        "syntax_call",
        plan_source("[0]", '["a"]', "[list(range(0))]"),
        1,
        "syntax",
        r"access_list list on line 3",
    ),
    (
        "syntax_huge_int",
        plan_source("[" + "9" * 5000 + "]", '["a"]', "[[]]"),
        1,
        "syntax",
        r"model_id",
    ),
    (
        "syntax_unary_chain",
        plan_source("[" + "-" * 20000 + "1]", '["a"]', "[[]]"),
        1,
        "syntax",
        r"model_id",
    ),
    (
        "syntax_string_not_closed_on_line",
        "model_id = [0, 1]\nsubtasks = ['Don't stop', 'Go on']\naccess_list = [[], [0]]",
        2,
        "syntax",
        r"subtasks list starting on line 2 has a string that is not closed on its line 2",
    ),
    (
        "syntax_in_last_complete_plan_no_fallback",
        plan_source("[0]", '["ok"]', "[[]]") + plan_source("[0, 1]", '["a",, "b"]', "[[], [0]]"),
        2,
        "syntax",
        r"subtasks list on line 5",
    ),
    (
        "too_deep",
        plan_source("[0]", '["a"]', "[[[[[0]]]]]"),
        1,
        "too_deep",
        r"access_list list starting on line 3 nests brackets deeper than the limit of 4",
    ),
    (
        "too_deep_truncated_bomb",
        "model_id = " + "[" * 1000,
        1,
        "too_deep",
        r"model_id",
    ),
    (
        "not_a_list_int",
        "model_id = 2" + PLAN_TAIL,
        3,
        "not_a_list",
        r"model_id on line 1 is assigned '2",
    ),
    (
        "not_a_list_string",
        plan_source("[0, 1]", '["a", "b"]', '"all"'),
        2,
        "not_a_list",
        r"access_list on line 3 is assigned '\"all\"",
    ),
    (
        "not_a_list_tuple",
        "model_id = (1, 0)" + PLAN_TAIL,
        2,
        "not_a_list",
        r"model_id on line 1 is assigned '\(1, 0\)",
    ),
    (
        "not_a_list_parenthesised_string",
        plan_source("[0]", '("Solve.")', "[[]]"),
        1,
        "not_a_list",
        r"subtasks on line 2 is assigned '\(\"Solve",
    ),
    # A value that goes on after its list as Python is not that list (each of these
    # used to run as its first literal: a 1-step plan instead of 6 steps, [2, 0] ...).
    (
        "not_a_list_repeated",
        "model_id = [0]*6\nsubtasks = ['a']*6\naccess_list = [[]]*6",
        7,
        "not_a_list",
        r"^model_id on line 1 is assigned '\[0\]\*6', an operation, not one list literal",
    ),
    (
        "not_a_list_reversed",
        plan_source("[2,0][::-1]", '["a", "b"]', '[[], "all"]'),
        3,
        "not_a_list",
        r"^model_id on line 1 is assigned '\[2,0\]\[::-1\]', a subscript, not one",
    ),
    (
        "not_a_list_sliced",
        plan_source("[0]", '["a"]', "[[3, 1][1:]]") + plan_source("[0]", '["a"]', "[[]][1:]"),
        4,
        "not_a_list",
        r"^access_list on line 6 is assigned '\[\[\]\]\[1:\]', a subscript",
    ),
    (
        "not_a_list_concatenated",
        plan_source("[0]", '["a"] + ["b"]', '[[], "all"]'),
        2,
        "not_a_list",
        r"^subtasks on line 2 is assigned '\[\"a\"\] \+ \[\"b\"\]', an operation",
    ),
    (
        "not_a_list_concatenated_across_lines",
        plan_source("[0] + [\n    1]", '["a", "b"]', '[[], "all"]'),
        2,
        "not_a_list",
        r"^model_id on line 1 is assigned '\[0\] \+ \[\\n    1\]', an operation",
    ),
    (
        "not_a_list_conditional",
        plan_source("[0] if False else [5, 6]", '["a", "b"]', '[[], "all"]'),
        7,
        "not_a_list",
        r"'\[0\] if False else \[5, 6\]', a conditional expression, not one list literal",
    ),
    (
        "not_a_list_tuple_of_lists",
        plan_source("[0], [1]", '["a"]', "[[]]"),
        2,
        "not_a_list",
        r"'\[0\], \[1\]', a tuple",
    ),
    (
        "not_a_list_method_call",
        plan_source("[1, 0].copy()", '["a", "b"]', '[[], "all"]'),
        2,
        "not_a_list",
        r"'\[1, 0\]\.copy\(\)', a call",
    ),
    (
        "length_mismatch",
        plan_source("[0, 1]", '["Solve."]', "[[], [0]]"),
        2,
        "length_mismatch",
        r"model_id has 2 entries, subtasks 1, access_list 2",
    ),
    (
        "length_mismatch_before_bad_model_id",
        plan_source('["zero"]', "[]", "[]"),
        2,
        "length_mismatch",
        r"model_id has 1 entries, subtasks 0, access_list 0",
    ),
    (
        "too_many_steps",
        plan_source(
            "[0, 0, 0, 0, 0, 0]", '["a", "b", "c", "d", "e", "f"]', "[[], [], [], [], [], []]"
        ),
        1,
        "too_many_steps",
        r"the plan has 6 steps, at most 5",
    ),
    (
        "too_many_steps_before_unknown_worker",
        plan_source(
            "[9, 9, 9, 9, 9, 9]", '["a", "b", "c", "d", "e", "f"]', '["all", [], [], [], [], []]'
        ),
        1,
        "too_many_steps",
        r"6 steps",
    ),
    (
        "bad_model_id_string",
        plan_source('["1"]', '["a"]', "[[]]"),
        2,
        "bad_model_id",
        r"model_id\[0\] is '1', not an integer",
    ),
    (
        "bad_model_id_bool",
        plan_source("[0, True]", '["a", "b"]', "[[], [0]]"),
        2,
        "bad_model_id",
        r"model_id\[1\] is True",
    ),
    (
        "bad_model_id_float",
        plan_source("[1.0]", '["a"]', "[[]]"),
        2,
        "bad_model_id",
        r"model_id\[0\] is 1\.0",
    ),
    (
        "bad_model_id_none",
        plan_source("[None]", '["a"]', "[[]]"),
        2,
        "bad_model_id",
        r"None",
    ),
    (
        "unknown_worker_too_large",
        plan_source("[0, 3]", '["a", "b"]', "[[], [0]]"),
        3,
        "unknown_worker",
        r"model_id\[1\] is 3, but the valid worker ids are 0\.\.2",
    ),
    (
        "unknown_worker_negative",
        plan_source("[-1]", '["a"]', "[[]]"),
        3,
        "unknown_worker",
        r"model_id\[0\] is -1",
    ),
    (
        "bad_model_id_before_bad_subtask",
        plan_source('[0, "x"]', '[1, "b"]', "[[], [0]]"),
        2,
        "bad_model_id",
        r"model_id\[1\]",
    ),
    (
        "bad_subtask_int",
        plan_source("[0, 1]", '["a", 42]', "[[], [0]]"),
        2,
        "bad_subtask",
        r"subtasks\[1\] is a int, not a string: 42",
    ),
    (
        "bad_subtask_nested_list",
        plan_source("[0]", '[["a"]]', "[[]]"),
        1,
        "bad_subtask",
        r"subtasks\[0\] is a list",
    ),
    (
        "bad_subtask_bytes",
        plan_source("[0]", '[b"raw"]', "[[]]"),
        1,
        "bad_subtask",
        r"bytes",
    ),
    (
        "empty_subtask",
        plan_source("[0, 1]", '["Solve.", ""]', "[[], [0]]"),
        2,
        "empty_subtask",
        r"subtasks\[1\] is empty",
    ),
    (
        "empty_subtask_whitespace",
        plan_source("[0]", '["  \\n\\t "]', "[[]]"),
        1,
        "empty_subtask",
        r"subtasks\[0\]",
    ),
    (
        "bad_subtask_before_bad_access",
        plan_source("[0]", "[None]", "[[5]]"),
        1,
        "bad_subtask",
        r"subtasks\[0\]",
    ),
    (
        "bad_access_self_reference",
        plan_source("[0, 1]", '["a", "b"]', "[[], [1]]"),
        2,
        "bad_access",
        r"access_list\[1\] is \[1\]; step 1 needs .*0\.\.0",
    ),
    (
        "bad_access_step0_index",
        plan_source("[0]", '["a"]', "[[0]]"),
        1,
        "bad_access",
        r"access_list\[0\] is \[0\]; step 0 needs \[\] or \"all\"",
    ),
    (
        "bad_access_negative",
        plan_source("[0, 1]", '["a", "b"]', "[[], [-1]]"),
        2,
        "bad_access",
        r"access_list\[1\] is \[-1\]",
    ),
    (
        "bad_access_duplicate",
        plan_source("[0, 1, 0]", '["a", "b", "c"]', "[[], [0], [1, 1]]"),
        2,
        "bad_access",
        r"access_list\[2\] is \[1, 1\]",
    ),
    (
        "bad_access_bool",
        plan_source("[0, 1]", '["a", "b"]', "[[], [False]]"),
        2,
        "bad_access",
        r"\[False\]",
    ),
    (
        "bad_access_other_string",
        plan_source("[0, 1]", '["a", "b"]', '[[], "previous"]'),
        2,
        "bad_access",
        r"access_list\[1\] is 'previous'",
    ),
    (
        "bad_access_wrong_case",
        plan_source("[0, 1]", '["a", "b"]', '[[], "ALL"]'),
        2,
        "bad_access",
        r"'ALL'",
    ),
    (
        "bad_access_nested",
        plan_source("[0, 1]", '["a", "b"]', "[[], [[0]]]"),
        2,
        "bad_access",
        r"\[\[0\]\]",
    ),
    (
        "bad_access_all_plus_index",
        plan_source("[0, 1]", '["a", "b"]', '[[], ["all", 0]]'),
        2,
        "bad_access",
        r"\['all', 0\]",
    ),
    (
        "bad_access_bare_int",
        plan_source("[0, 1]", '["a", "b"]', "[[], 0]"),
        2,
        "bad_access",
        r"access_list\[1\] is 0;",
    ),
    (
        "bad_access_none",
        plan_source("[0]", '["a"]', "[None]"),
        1,
        "bad_access",
        r"None",
    ),
]


@pytest.mark.parametrize(
    ("text", "num_workers", "reason", "detail"),
    [pytest.param(text, n, reason, detail, id=name) for name, text, n, reason, detail in FAILURES],
)
def test_failure(text: str, num_workers: int, reason: str, detail: str) -> None:
    with pytest.raises(PlanParseError) as info:
        parse_plan(text, num_workers)
    err = info.value
    assert err.reason == reason, err.detail
    assert re.search(detail, err.detail), err.detail
    assert str(err) == f"{err.reason}: {err.detail}"


def test_every_reason_is_exercised() -> None:
    assert {reason for _, _, _, reason, _ in FAILURES} == set(REASONS)


@pytest.mark.parametrize(
    ("values", "detail"),
    [
        pytest.param(("[worker_1]", '["a"]', "[[]]"), "a name 'worker_1' on line 1", id="name"),
        pytest.param(
            ("[0]", '["a"]', "[\n  [],\n  list(range(0))]"),
            "a call 'list(range(0))' on line 5",
            id="call",
        ),
        pytest.param(("[0]", '["a" + "b"]', "[[]]"), 'an operation \'"a" + "b"\'', id="op"),
        pytest.param(("[0]", '[f"{q}"]', "[[]]"), "an f-string 'f\"{q}\"' on line 2", id="f"),
        pytest.param(("[0]", "[{**x}]", "[[]]"), "a dict with ** unpacking", id="unpacking"),
    ],
)
def test_syntax_details_name_the_expression_and_are_deterministic(
    values: tuple[str, str, str], detail: str
) -> None:
    # ast.literal_eval's own message shows the node's repr: a memory address that changes
    # from run to run, so identical plans would get different details.
    details = set()
    for _ in range(3):
        with pytest.raises(PlanParseError) as info:
            parse_plan(plan_source(*values), 2)
        assert info.value.reason == "syntax"
        details.add(info.value.detail)
    (only,) = details
    assert " object at 0x" not in only
    assert f"(ValueError: {detail}" in only and "is not a literal value)" in only


def test_invalid_escape_is_accepted_even_when_warnings_are_errors() -> None:
    text = plan_source("[0]", r'["Match \s+ and \d in the regex."]', "[[]]")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plan = parse_plan(text, 1)
    assert plan.subtasks == ("Match \\s+ and \\d in the regex.",)


def test_last_complete_plan_is_final_even_if_invalid() -> None:
    # The last complete plan names an unknown worker: no fallback to the earlier valid one.
    text = plan_source("[0]", '["ok"]', "[[]]") + plan_source("[5]", '["bad"]', "[[]]")
    with pytest.raises(PlanParseError) as info:
        parse_plan(text, 2)
    assert info.value.reason == "unknown_worker"


@pytest.mark.parametrize(
    ("num_workers", "max_steps", "kwargs"),
    [
        pytest.param(0, 5, {}, id="no_workers"),
        pytest.param(2, 0, {}, id="no_steps"),
        pytest.param(2, 5, {"max_depth": 0}, id="no_depth"),
        pytest.param(2, 5, {"max_chars": -1}, id="negative_chars"),
    ],
)
def test_programmer_errors_raise_plain_value_error(
    num_workers: int, max_steps: int, kwargs: dict[str, int]
) -> None:
    with pytest.raises(ValueError) as info:
        parse_plan(plan_source("[0]", '["a"]', "[[]]"), num_workers, max_steps, **kwargs)
    assert not isinstance(info.value, PlanParseError)
