"""Tests for conductor_gym.plan: locating, parsing and validating conductor plans."""

from __future__ import annotations

import pickle
import random
import re
import warnings

import pytest

import conductor_gym.plan as plan_module
from conductor_gym.plan import REASONS, Access, Plan, PlanParseError, parse_plan


def P(model_ids: list[int], subtasks: list[str], access: list[Access]) -> Plan:
    """Shorthand for an expected plan."""
    return Plan(tuple(model_ids), tuple(subtasks), tuple(access))


# --------------------------------------------------------------------------- valid completions

VALID: list[tuple[str, str, int, Plan]] = [
    (
        "paper_example",
        """I will ask Model 2 to solve it, then Model 0 to check.
model_id = [2, 0]
subtasks = ["Solve: what is 17*23? End with the answer.", "Check the solution above and give the final answer."]
access_list = [[], "all"]
""",  # noqa: E501 (an LM writes long lines)
        3,
        P(
            [2, 0],
            [
                "Solve: what is 17*23? End with the answer.",
                "Check the solution above and give the final answer.",
            ],
            [(), "all"],
        ),
    ),
    (
        "python_fence",
        """The question is a tricky geometry problem. Model 1 is strongest at math, so it should
draft a solution; Model 3 is good at verification.

```python
model_id = [1, 3]
subtasks = ["Find the area of the triangle (0,0), (4,0), (0,3).", "Verify the area above."]
access_list = [[], [0]]
```
""",
        4,
        P(
            [1, 3],
            [
                "Find the area of the triangle (0,0), (4,0), (0,3).",
                "Verify the area above.",
            ],
            [(), (0,)],
        ),
    ),
    (
        "bare_fence",
        """Plan:
```
model_id = [0]
subtasks = ["Answer the question directly."]
access_list = [[]]
```""",
        1,
        P([0], ["Answer the question directly."], [()]),
    ),
    (
        "single_quotes",
        """Let's keep it simple.
model_id = [1, 1]
subtasks = ['Write a haiku about autumn.', 'Improve the haiku above.']
access_list = [[], 'all']""",
        2,
        P([1, 1], ["Write a haiku about autumn.", "Improve the haiku above."], [(), "all"]),
    ),
    (
        "escaped_quotes",
        r"""Careful with quoting here.
model_id = [0, 1]
subtasks = ["Explain what \"idempotent\" means.", 'Summarise: don\'t exceed 20 words.']
access_list = [[], [0]]
""",
        2,
        P(
            [0, 1],
            ['Explain what "idempotent" means.', "Summarise: don't exceed 20 words."],
            [(), (0,)],
        ),
    ),
    (
        "brackets_and_equals_in_strings",
        """model_id = [2, 0]
subtasks = ["Evaluate x = [1, 2, 3][-1] ** 2.", "If x != 9 (not ']'), redo; access_list = [[0]]"]
access_list = [[], "all"]""",
        3,
        P(
            [2, 0],
            [
                "Evaluate x = [1, 2, 3][-1] ** 2.",
                "If x != 9 (not ']'), redo; access_list = [[0]]",
            ],
            [(), "all"],
        ),
    ),
    (
        "multiline_trailing_commas",
        """I'll use three steps.

model_id = [
    0,
    2,
    1,
]
subtasks = [
    "List the key facts in the passage.",
    "Using the facts, answer the question.",
    "Double-check the answer against the passage.",
]
access_list = [
    [],
    [0],
    [0, 1],
]
""",
        3,
        P(
            [0, 2, 1],
            [
                "List the key facts in the passage.",
                "Using the facts, answer the question.",
                "Double-check the answer against the passage.",
            ],
            [(), (0,), (0, 1)],
        ),
    ),
    (
        "paper_style_all_in_list",
        """model_id = [3, 1, 0]
subtasks = ["Solve the problem.", "Solve it independently.", "Compare both; give the answer."]
access_list = [[], [], ["all"]]""",
        4,
        P(
            [3, 1, 0],
            [
                "Solve the problem.",
                "Solve it independently.",
                "Compare both; give the answer.",
            ],
            [(), (), "all"],
        ),
    ),
    (
        "unsorted_index_list_is_sorted",
        """model_id = [0, 1, 2, 0]
subtasks = ["A", "B", "C", "Combine C and A."]
access_list = [[], [0], [], [2, 0]]""",
        3,
        P([0, 1, 2, 0], ["A", "B", "C", "Combine C and A."], [(), (0,), (), (0, 2)]),
    ),
    (
        "two_plans_last_wins",
        """First attempt:
model_id = [0]
subtasks = ["Solve it."]
access_list = [[]]

On reflection Model 1 is better at this, and a check helps:
model_id = [1, 0]
subtasks = ["Solve it step by step.", "Check it."]
access_list = [[], "all"]
""",
        2,
        P([1, 0], ["Solve it step by step.", "Check it."], [(), "all"]),
    ),
    (
        "inline_quoted_plan_then_final",
        """A plan like `model_id = [0]`, `subtasks = ["Do everything."]`, `access_list = [[]]` would
be too naive for this question. Instead:

```python
model_id = [2, 1]
subtasks = ["Translate the text to French.", "Proofread the French translation."]
access_list = [[], [0]]
```""",
        3,
        P(
            [2, 1],
            ["Translate the text to French.", "Proofread the French translation."],
            [(), (0,)],
        ),
    ),
    (
        "truncated_plan_after_complete_falls_back",
        """model_id = [0, 1]
subtasks = ["Draft an answer.", "Refine the draft."]
access_list = [[], [0]]

Hmm, maybe a third step would help:
model_id = [0, 1, 2]
subtasks = ["Draft an answer.", "Refine the draft.", "Fin""",
        3,
        P([0, 1], ["Draft an answer.", "Refine the draft."], [(), (0,)]),
    ),
    (
        "truncated_access_list_after_complete",
        """model_id = [1]
subtasks = ["Answer."]
access_list = [[]]
model_id = [1, 0]
subtasks = ["Answer.", "Check."]
access_list = [[], [""",
        2,
        P([1], ["Answer."], [()]),
    ),
    (
        "newlines_around_equals",
        """model_id
=
[0]
subtasks =
    ["Name three prime numbers."]
access_list=[[]]""",
        1,
        P([0], ["Name three prime numbers."], [()]),
    ),
    (
        "one_line_semicolons",
        'model_id=[1,0]; subtasks=["Write code.","Review the code."]; access_list=[[],"all"]',
        2,
        P([1, 0], ["Write code.", "Review the code."], [(), "all"]),
    ),
    (
        "tuple_access_entries",
        """model_id = [1, 0]
subtasks = ["Estimate the answer.", "Refine the estimate."]
access_list = [(), (0,)]""",
        2,
        P([1, 0], ["Estimate the answer.", "Refine the estimate."], [(), (0,)]),
    ),
    (
        "parenthesised_prose_mention",
        """Every access_list = (the earlier steps a worker may read), so:
model_id = [1, 0]
subtasks = ["Estimate.", "Refine."]
access_list = [[], [0]]""",
        2,
        P([1, 0], ["Estimate.", "Refine."], [(), (0,)]),
    ),
    (
        "triple_quoted_subtask",
        '''model_id = [0, 1]
subtasks = ["""Read this poem:
  'Roses are red, violets are blue'
and explain its "meter" [briefly].""", "Rate the explanation from 1 to 10."]
access_list = [[], "all"]''',
        2,
        P(
            [0, 1],
            [
                "Read this poem:\n  'Roses are red, violets are blue'\n"
                'and explain its "meter" [briefly].',
                "Rate the explanation from 1 to 10.",
            ],
            [(), "all"],
        ),
    ),
    (
        "comments_inside_lists",
        """model_id = [
    2,  # Model 2's strength is algebra ]
    0,  # and Model 0 double-checks "everything"
]
subtasks = [
    "Solve for x: 3x + 5 = 20.",  # the real task
    "Verify the solution.",
]
access_list = [[], "all"]  # Model 0 needs to see step 0""",
        3,
        P([2, 0], ["Solve for x: 3x + 5 = 20.", "Verify the solution."], [(), "all"]),
    ),
    (
        "distractor_identifiers",
        """Not assignments: my_model_id = [9], self.model_id = [8], model_ids = [7],
if model_id == [6]: ... and subtasks_done = ["x"], old.access_list = ["y"].
model_id = [0]
subtasks = ["Do the task."]
access_list = [[]]""",
        1,
        P([0], ["Do the task."], [()]),
    ),
    (
        "json_in_reasoning_is_ignored",
        """In JSON this would be {"model_id": [4], "subtasks": ["no"], "access_list": [[]]}.
As Python:
model_id = [1]
subtasks = ["Yes."]
access_list = [[]]""",
        2,
        P([1], ["Yes."], [()]),
    ),
    (
        "any_order_of_lists",
        """access_list = [[], [0]]
subtasks = ["Gather evidence.", "Conclude."]
model_id = [1, 1]""",
        2,
        P([1, 1], ["Gather evidence.", "Conclude."], [(), (0,)]),
    ),
    (
        "prose_non_list_mention",
        """Each model_id = the index of a worker, and access_list = "all" would show everything.
model_id = [0, 1]
subtasks = ["Solve.", "Check."]
access_list = [[], "all"]""",
        2,
        P([0, 1], ["Solve.", "Check."], [(), "all"]),
    ),
    (
        "empty_plan_stops_recursion",
        """The current answer is already correct, so no further work is needed.
model_id = []
subtasks = []
access_list = []""",
        3,
        P([], [], []),
    ),
    (
        "empty_plan_in_fence",
        "```python\nmodel_id = []\nsubtasks = []\naccess_list = []\n```",
        1,
        P([], [], []),
    ),
    (
        "unicode_subtasks",
        """model_id = [0, 1]
subtasks = ["Übersetze 'Grüße' ins Englische — kurz.", "把上面的答案翻译成中文。"]
access_list = [[], [0]]""",
        2,
        P(
            [0, 1],
            ["Übersetze 'Grüße' ins Englische — kurz.", "把上面的答案翻译成中文。"],
            [(), (0,)],
        ),
    ),
    (
        "raw_string_and_backslashes",
        r"""model_id = [0, 1]
subtasks = [r"Simplify \frac{1}{2} + \frac{1}{3}.", "Save it to C:\\tmp\\out.txt\\"]
access_list = [[], [0]]""",
        2,
        P(
            [0, 1],
            ["Simplify \\frac{1}{2} + \\frac{1}{3}.", "Save it to C:\\tmp\\out.txt\\"],
            [(), (0,)],
        ),
    ),
    (
        "implicit_string_concatenation",
        """model_id = [0]
subtasks = ["Answer the question "
            "in one sentence."]
access_list = [[]]""",
        1,
        P([0], ["Answer the question in one sentence."], [()]),
    ),
    (
        "five_steps_mixed_access",
        """model_id = [0, 1, 2, 3, 0]
subtasks = ["S0", "S1", "S2", "S3", "Final answer."]
access_list = [[], [0], [0, 1], "all", [1, 3]]""",
        4,
        P(
            [0, 1, 2, 3, 0],
            ["S0", "S1", "S2", "S3", "Final answer."],
            [(), (0,), (0, 1), "all", (1, 3)],
        ),
    ),
    (
        "prose_after_plan",
        """model_id = [1]
subtasks = ["Answer."]
access_list = [[]]

Note: subtasks = instructions, see above. [This is my final plan.]""",
        2,
        P([1], ["Answer."], [()]),
    ),
    (
        "hash_and_brackets_inside_string",
        """model_id = [0]
subtasks = ["Count the #hashtags in '[a] #b [c #d]' and reply with a number."]
access_list = [[]]""",
        1,
        P([0], ["Count the #hashtags in '[a] #b [c #d]' and reply with a number."], [()]),
    ),
    (
        "crlf_line_endings",
        'Reasoning.\r\nmodel_id = [1, 0]\r\nsubtasks = [\r\n  "Solve.",\r\n  "Check."\r\n]\r\n'
        'access_list = [[], "all"]\r\n',
        2,
        P([1, 0], ["Solve.", "Check."], [(), "all"]),
    ),
    (
        "assignment_quoted_inside_subtask",
        """model_id = [0, 1]
subtasks = ["Explain why writing model_id = [3] fails when only 2 workers exist.", "Grade it."]
access_list = [[], [0]]""",
        2,
        P(
            [0, 1],
            ["Explain why writing model_id = [3] fails when only 2 workers exist.", "Grade it."],
            [(), (0,)],
        ),
    ),
    (
        "broken_draft_then_real_plan",
        """Draft (oops, I forgot a bracket): model_id = [1, 2
Let me write it properly.
model_id = [1, 2]
subtasks = ["Solve.", "Check."]
access_list = [[], "all"]""",
        3,
        P([1, 2], ["Solve.", "Check."], [(), "all"]),
    ),
    (
        "apostrophe_draft_then_real_plan",
        """I first thought of subtasks = ['Don't overthink it']. Final:
model_id = [0]
subtasks = ["Don't overthink it."]
access_list = [[]]""",
        1,
        P([0], ["Don't overthink it."], [()]),
    ),
    (
        "stray_list_mention_before_plan",
        """One step with subtasks = ["Solve it."] would be too few. So:
model_id = [0, 1]
subtasks = ["Solve it.", "Check it."]
access_list = [[], [0]]""",
        2,
        P([0, 1], ["Solve it.", "Check it."], [(), (0,)]),
    ),
    (
        "list_written_again_replaces_earlier",
        """model_id = [0]
subtasks = ["Solve it."]
Wait, Model 1 is better suited:
model_id = [1]
access_list = [[]]""",
        2,
        P([1], ["Solve it."], [()]),
    ),
    (
        "single_quotes_with_double_inside",
        """model_id = [0]
subtasks = ['Reply "yes" or "no": is 91 prime?']
access_list = ["all"]""",
        1,
        P([0], ['Reply "yes" or "no": is 91 prime?'], ["all"]),
    ),
    (
        "subtasks_kept_verbatim",
        """model_id = [0]
subtasks = ["  Solve it.\\n"]
access_list = [[]]""",
        1,
        P([0], ["  Solve it.\n"], [()]),
    ),
]


@pytest.mark.parametrize(
    ("text", "num_workers", "expected"),
    [pytest.param(text, n, plan, id=name) for name, text, n, plan in VALID],
)
def test_valid_completion(text: str, num_workers: int, expected: Plan) -> None:
    assert parse_plan(text, num_workers) == expected


def test_max_steps_argument_allows_longer_plans() -> None:
    text = (
        "model_id = [0, 0, 0, 0, 0, 0]\n"
        'subtasks = ["a", "b", "c", "d", "e", "f"]\n'
        "access_list = [[], [0], [1], [2], [3], [4]]"
    )
    plan = parse_plan(text, 1, max_steps=6)
    assert len(plan) == 6
    assert plan.access[-1] == (4,)
    with pytest.raises(PlanParseError) as info:
        parse_plan(text, 1)
    assert info.value.reason == "too_many_steps"


# --------------------------------------------------------------------------- failures

PLAN_TAIL = '\nsubtasks = ["Solve.", "Check."]\naccess_list = [[], "all"]'


def plan_text(model_id: str, subtasks: str, access_list: str) -> str:
    return f"model_id = {model_id}\nsubtasks = {subtasks}\naccess_list = {access_list}\n"


FAILURES: list[tuple[str, str, int, str, str]] = [
    # (id, text, num_workers, reason, regex the detail must match)
    (
        "too_long",
        (plan_text("[0]", '["a"]', "[[]]") + " " * 65536)[:65537],
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
        plan_text("[0,, 1]", '["a", "b"]', '[[], "all"]'),
        2,
        "syntax",
        r"model_id list on line 1 is not a Python literal",
    ),
    (
        "syntax_variable_name",
        plan_text("[worker_1]", '["a"]', "[[]]"),
        2,
        "syntax",
        r"model_id.*worker_1",
    ),
    (
        "syntax_fstring",
        plan_text("[0]", '[f"Solve {question}"]', "[[]]"),
        1,
        "syntax",
        r"subtasks list on line 2",
    ),
    (
        "syntax_expression",
        plan_text("[0]", '["a" + "b"]', "[[]]"),
        1,
        "syntax",
        r"subtasks",
    ),
    (
        "syntax_mismatched_brackets",
        plan_text("[0, 1)", '["a", "b"]', "[[], [0]]"),
        2,
        "syntax",
        r"model_id",
    ),
    (
        "syntax_call",
        plan_text("[0]", '["a"]', "[list(range(0))]"),
        1,
        "syntax",
        r"access_list list on line 3",
    ),
    (
        "syntax_huge_int",
        plan_text("[" + "9" * 5000 + "]", '["a"]', "[[]]"),
        1,
        "syntax",
        r"model_id",
    ),
    (
        "syntax_unary_chain",
        plan_text("[" + "-" * 20000 + "1]", '["a"]', "[[]]"),
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
        plan_text("[0]", '["ok"]', "[[]]") + plan_text("[0, 1]", '["a",, "b"]', "[[], [0]]"),
        2,
        "syntax",
        r"subtasks list on line 5",
    ),
    (
        "too_deep",
        plan_text("[0]", '["a"]', "[[[[[0]]]]]"),
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
        plan_text("[0, 1]", '["a", "b"]', '"all"'),
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
        plan_text("[0]", '("Solve.")', "[[]]"),
        1,
        "not_a_list",
        r"subtasks on line 2 is assigned '\(\"Solve",
    ),
    (
        "length_mismatch",
        plan_text("[0, 1]", '["Solve."]', "[[], [0]]"),
        2,
        "length_mismatch",
        r"model_id has 2 entries, subtasks 1, access_list 2",
    ),
    (
        "length_mismatch_before_bad_model_id",
        plan_text('["zero"]', "[]", "[]"),
        2,
        "length_mismatch",
        r"model_id has 1 entries, subtasks 0, access_list 0",
    ),
    (
        "too_many_steps",
        plan_text(
            "[0, 0, 0, 0, 0, 0]", '["a", "b", "c", "d", "e", "f"]', "[[], [], [], [], [], []]"
        ),
        1,
        "too_many_steps",
        r"the plan has 6 steps, at most 5",
    ),
    (
        "too_many_steps_before_unknown_worker",
        plan_text(
            "[9, 9, 9, 9, 9, 9]", '["a", "b", "c", "d", "e", "f"]', '["all", [], [], [], [], []]'
        ),
        1,
        "too_many_steps",
        r"6 steps",
    ),
    (
        "bad_model_id_string",
        plan_text('["1"]', '["a"]', "[[]]"),
        2,
        "bad_model_id",
        r"model_id\[0\] is '1', not an integer",
    ),
    (
        "bad_model_id_bool",
        plan_text("[0, True]", '["a", "b"]', "[[], [0]]"),
        2,
        "bad_model_id",
        r"model_id\[1\] is True",
    ),
    (
        "bad_model_id_float",
        plan_text("[1.0]", '["a"]', "[[]]"),
        2,
        "bad_model_id",
        r"model_id\[0\] is 1\.0",
    ),
    (
        "bad_model_id_none",
        plan_text("[None]", '["a"]', "[[]]"),
        2,
        "bad_model_id",
        r"None",
    ),
    (
        "unknown_worker_too_large",
        plan_text("[0, 3]", '["a", "b"]', "[[], [0]]"),
        3,
        "unknown_worker",
        r"model_id\[1\] is 3, but the valid worker ids are 0\.\.2",
    ),
    (
        "unknown_worker_negative",
        plan_text("[-1]", '["a"]', "[[]]"),
        3,
        "unknown_worker",
        r"model_id\[0\] is -1",
    ),
    (
        "bad_model_id_before_bad_subtask",
        plan_text('[0, "x"]', '[1, "b"]', "[[], [0]]"),
        2,
        "bad_model_id",
        r"model_id\[1\]",
    ),
    (
        "bad_subtask_int",
        plan_text("[0, 1]", '["a", 42]', "[[], [0]]"),
        2,
        "bad_subtask",
        r"subtasks\[1\] is a int, not a string: 42",
    ),
    (
        "bad_subtask_nested_list",
        plan_text("[0]", '[["a"]]', "[[]]"),
        1,
        "bad_subtask",
        r"subtasks\[0\] is a list",
    ),
    (
        "bad_subtask_bytes",
        plan_text("[0]", '[b"raw"]', "[[]]"),
        1,
        "bad_subtask",
        r"bytes",
    ),
    (
        "empty_subtask",
        plan_text("[0, 1]", '["Solve.", ""]', "[[], [0]]"),
        2,
        "empty_subtask",
        r"subtasks\[1\] is empty",
    ),
    (
        "empty_subtask_whitespace",
        plan_text("[0]", '["  \\n\\t "]', "[[]]"),
        1,
        "empty_subtask",
        r"subtasks\[0\]",
    ),
    (
        "bad_subtask_before_bad_access",
        plan_text("[0]", "[None]", "[[5]]"),
        1,
        "bad_subtask",
        r"subtasks\[0\]",
    ),
    (
        "bad_access_self_reference",
        plan_text("[0, 1]", '["a", "b"]', "[[], [1]]"),
        2,
        "bad_access",
        r"access_list\[1\] is \[1\]; step 1 needs .*0\.\.0",
    ),
    (
        "bad_access_step0_index",
        plan_text("[0]", '["a"]', "[[0]]"),
        1,
        "bad_access",
        r"access_list\[0\] is \[0\]; step 0 needs \[\] or \"all\"",
    ),
    (
        "bad_access_negative",
        plan_text("[0, 1]", '["a", "b"]', "[[], [-1]]"),
        2,
        "bad_access",
        r"access_list\[1\] is \[-1\]",
    ),
    (
        "bad_access_duplicate",
        plan_text("[0, 1, 0]", '["a", "b", "c"]', "[[], [0], [1, 1]]"),
        2,
        "bad_access",
        r"access_list\[2\] is \[1, 1\]",
    ),
    (
        "bad_access_bool",
        plan_text("[0, 1]", '["a", "b"]', "[[], [False]]"),
        2,
        "bad_access",
        r"\[False\]",
    ),
    (
        "bad_access_other_string",
        plan_text("[0, 1]", '["a", "b"]', '[[], "previous"]'),
        2,
        "bad_access",
        r"access_list\[1\] is 'previous'",
    ),
    (
        "bad_access_wrong_case",
        plan_text("[0, 1]", '["a", "b"]', '[[], "ALL"]'),
        2,
        "bad_access",
        r"'ALL'",
    ),
    (
        "bad_access_nested",
        plan_text("[0, 1]", '["a", "b"]', "[[], [[0]]]"),
        2,
        "bad_access",
        r"\[\[0\]\]",
    ),
    (
        "bad_access_all_plus_index",
        plan_text("[0, 1]", '["a", "b"]', '[[], ["all", 0]]'),
        2,
        "bad_access",
        r"\['all', 0\]",
    ),
    (
        "bad_access_bare_int",
        plan_text("[0, 1]", '["a", "b"]', "[[], 0]"),
        2,
        "bad_access",
        r"access_list\[1\] is 0;",
    ),
    (
        "bad_access_none",
        plan_text("[0]", '["a"]', "[None]"),
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


def test_too_long_is_checked_before_scanning() -> None:
    valid = plan_text("[0]", '["Solve."]', "[[]]")
    text = valid + "x" * (70 * 1024)
    with pytest.raises(PlanParseError) as info:
        parse_plan(text, 1)
    assert info.value.reason == "too_long"
    assert str(len(text)) in info.value.detail and "65536" in info.value.detail
    # A limit that fits makes the same text parse.
    assert parse_plan(text, 1, max_chars=len(text)) == P([0], ["Solve."], [()])
    with pytest.raises(PlanParseError) as info:
        parse_plan(valid, 1, max_chars=10)
    assert info.value.reason == "too_long"


def test_nesting_bomb_is_rejected_before_literal_eval() -> None:
    # literal_eval on this would hit the recursion limit; the scanner must stop first.
    bomb = "model_id = " + "[" * 1_000_000 + "]" * 1_000_000
    with pytest.raises(PlanParseError) as info:
        parse_plan(bomb, 2, max_chars=3_000_000)
    assert info.value.reason == "too_deep"


def test_max_depth_argument() -> None:
    text = plan_text("[0, 1]", '["a", "b"]', "[[], [0]]")
    assert len(parse_plan(text, 2, max_depth=2)) == 2
    with pytest.raises(PlanParseError) as info:
        parse_plan(text, 2, max_depth=1)
    assert info.value.reason == "too_deep"
    assert "limit of 1" in info.value.detail


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("model_id = [#" * 6000, id="unclosed_comments"),
        pytest.param("model_id = [" * 6000, id="unclosed_brackets"),
        pytest.param("subtasks = ['" * 5000, id="short_strings"),
        pytest.param("model_id = '''[" * 5000, id="non_list_values"),
        pytest.param("x = [" + "'a', " * 12000, id="long_unclosed_list"),
    ],
)
def test_adversarial_inputs_are_rejected(text: str) -> None:
    # Their speed (no quadratic rescans) is measured in tests/benchmarks/test_bench_plan.py.
    with pytest.raises(PlanParseError):
        parse_plan(text, 2)


def test_invalid_escape_is_accepted_even_when_warnings_are_errors() -> None:
    text = plan_text("[0]", r'["Match \s+ and \d in the regex."]', "[[]]")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plan = parse_plan(text, 1)
    assert plan.subtasks == ("Match \\s+ and \\d in the regex.",)


def test_last_complete_plan_is_final_even_if_invalid() -> None:
    # The last complete plan names an unknown worker: no fallback to the earlier valid one.
    text = plan_text("[0]", '["ok"]', "[[]]") + plan_text("[5]", '["bad"]', "[[]]")
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
        parse_plan(plan_text("[0]", '["a"]', "[[]]"), num_workers, max_steps, **kwargs)
    assert not isinstance(info.value, PlanParseError)


# --------------------------------------------------------------------------- the Plan type

ROUND_TRIP = [
    P([2, 0], ["Solve.", "Check."], [(), "all"]),
    P([], [], []),
    P(
        [0, 1, 2, 1, 0],
        [
            'She said "don\'t" \\ then left.',
            "Line one\nLine two\ttabbed\r\n",
            "Unicode: Grüße, 中文, emoji \U0001f600, odd \u2028 \x00 \x7f \ud800",
            "Brackets ] [ ( { and model_id = [1] and '''triple''' and \"\"\"too\"\"\"",
            "ends with a backslash \\",
        ],
        ["all", (0,), (0, 1), "all", (1, 3)],
    ),
]


@pytest.mark.parametrize("plan", ROUND_TRIP, ids=["simple", "empty", "tricky_strings"])
def test_round_trip(plan: Plan) -> None:
    text = plan.to_text()
    assert parse_plan(text, 3) == plan
    # Also inside a realistic completion.
    assert parse_plan(f"Reasoning first.\n```python\n{text}\n```\n", 3) == plan


def test_round_trip_random_strings() -> None:
    rng = random.Random(7)
    alphabet = "ab \"'\\\n\t[](){}#=,é\x00\u2028\U0001f600"
    for _ in range(300):
        n = rng.randint(1, 5)
        subtasks = [
            "x" + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(n)
        ]
        access: list[Access] = []
        for step in range(n):
            kind = rng.random()
            if kind < 0.3:
                access.append("all")
            else:
                access.append(tuple(sorted(rng.sample(range(step), rng.randint(0, step)))))
        plan = P([rng.randrange(4) for _ in range(n)], subtasks, access)
        assert parse_plan(plan.to_text(), 4) == plan


def test_to_text_format() -> None:
    plan = P([2, 0], ["Solve.", 'Say "hi".'], [(), "all"])
    assert plan.to_text() == (
        'model_id = [2, 0]\nsubtasks = ["Solve.", "Say \\"hi\\"."]\naccess_list = [[], "all"]'
    )


def test_to_dict() -> None:
    plan = P([1, 0, 2], ["a", "b", "c"], [(), "all", (0, 1)])
    assert plan.to_dict() == {
        "model_id": [1, 0, 2],
        "subtasks": ["a", "b", "c"],
        "access_list": [[], "all", [0, 1]],
    }


def test_visible() -> None:
    plan = P([0, 0, 0, 0], ["a", "b", "c", "d"], ["all", (0,), "all", (0, 2)])
    assert plan.visible(0) == ()
    assert plan.visible(1) == (0,)
    assert plan.visible(2) == (0, 1)
    assert plan.visible(3) == (0, 2)
    with pytest.raises(IndexError):
        plan.visible(4)
    with pytest.raises(IndexError):
        plan.visible(-1)


def test_len_and_is_empty() -> None:
    plan = P([0, 1], ["a", "b"], [(), ()])
    assert len(plan) == 2
    assert not plan.is_empty
    empty = P([], [], [])
    assert len(empty) == 0
    assert empty.is_empty


def test_plan_is_frozen_and_hashable() -> None:
    plan = P([0], ["a"], [()])
    with pytest.raises(AttributeError):
        plan.model_ids = (1,)  # type: ignore[misc]
    assert hash(plan) == hash(P([0], ["a"], [()]))


@pytest.mark.parametrize(
    ("model_ids", "subtasks", "access"),
    [
        pytest.param((0, 1), ("a",), ((), ()), id="length_mismatch"),
        pytest.param((0,), ("a",), ((0,),), id="self_reference"),
        pytest.param((0, 0, 0), ("a", "b", "c"), ((), (), (1, 0)), id="unsorted"),
        pytest.param((0, 0), ("a", "b"), ((), "some"), id="bad_string"),
        pytest.param((0, 0), ("a", "b"), ((), [0]), id="list_not_tuple"),
    ],
)
def test_plan_constructor_checks_structure(
    model_ids: tuple[int, ...], subtasks: tuple[str, ...], access: tuple[object, ...]
) -> None:
    with pytest.raises(ValueError):
        Plan(model_ids, subtasks, access)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the error type


def test_plan_parse_error() -> None:
    err = PlanParseError("syntax", "the model_id list is broken")
    assert isinstance(err, ValueError)
    assert err.reason == "syntax"
    assert err.detail == "the model_id list is broken"
    assert str(err) == "syntax: the model_id list is broken"
    copy = pickle.loads(pickle.dumps(err))
    assert (copy.reason, copy.detail, str(copy)) == (err.reason, err.detail, str(err))
    with pytest.raises(ValueError):
        PlanParseError("not_a_reason", "x")


def test_reasons_are_documented() -> None:
    assert len(set(REASONS)) == len(REASONS) == 14
    doc = plan_module.__doc__ or ""
    for reason in REASONS:
        assert f"``{reason}``\n" in doc, reason


def test_public_api() -> None:
    assert sorted(plan_module.__all__) == sorted(
        ["Access", "REASONS", "Plan", "PlanParseError", "parse_plan"]
    )


# --------------------------------------------------------------------------- robustness

_GARBAGE_TOKENS = [
    "[",
    "]",
    "'",
    '"',
    "=",
    ",",
    "\n",
    " ",
    "model_id",
    "subtasks",
    "access_list",
    "all",
    "(",
    ")",
    "#",
    "\\",
    '"""',
    *"0123456789",
]


def _check_outcome(text: str, num_workers: int) -> str:
    """Parse and return the reason (or "ok"); anything but PlanParseError fails the test."""
    try:
        plan = parse_plan(text, num_workers)
    except PlanParseError as err:
        assert err.reason in REASONS
        return err.reason
    assert all(0 <= m < num_workers for m in plan.model_ids)
    assert all(isinstance(s, str) and s.strip() for s in plan.subtasks)
    assert len(plan) <= 5
    return "ok"


def test_random_garbage_only_raises_plan_parse_error() -> None:
    rng = random.Random(1234)
    reasons: set[str] = set()
    for _ in range(3000):
        tokens = rng.choices(_GARBAGE_TOKENS, k=rng.randint(0, 60))
        reasons.add(_check_outcome("".join(tokens), 3))
    assert len(reasons) >= 5, reasons


def test_mutated_plans_only_raise_plan_parse_error() -> None:
    rng = random.Random(99)
    base = VALID[6][1] + VALID[17][1]  # multi-line lists, comments
    reasons: set[str] = set()
    for _ in range(3000):
        chars = list(base)
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(chars))
            op = rng.random()
            if op < 0.4:
                del chars[i]
            elif op < 0.8:
                chars.insert(i, rng.choice("[]()'\"#=,\n\\0123456789x"))
            else:
                chars[i] = rng.choice(_GARBAGE_TOKENS)
        reasons.add(_check_outcome("".join(chars), 3))
    assert "ok" in reasons
    assert len(reasons) >= 8, reasons
