"""Shared plan-parser cases: completions holding a valid plan (``VALID``, with the plan
each must parse to) and ``plan_source``, which writes the three list assignments from
their source text."""

from __future__ import annotations

from conductor_gym.plan import Access, Plan


def plan_source(model_id: str, subtasks: str, access_list: str) -> str:
    """The three assignments with the given right-hand sides, verbatim."""
    return f"model_id = {model_id}\nsubtasks = {subtasks}\naccess_list = {access_list}\n"


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
        "prose_and_comments_after_the_lists_are_not_part_of_them",
        """model_id = [1] - the solver. subtasks = ["Solve."] is the one step.
access_list = [[]]  # nothing earlier to read \\
And `model_id = [0]`, `subtasks = ["Recheck."]`, `access_list = [[]]` is the final plan.""",
        2,
        P([0], ["Recheck."], [()]),
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
