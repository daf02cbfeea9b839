"""conductor_gym.plan: the Plan and PlanParseError types, and robustness to garbage."""

from __future__ import annotations

import pickle
import random

import pytest
from plan_cases import VALID, plan_source

import conductor_gym.plan as plan_module
from conductor_gym.plan import REASONS, Access, Plan, PlanParseError, parse_plan


def P(model_ids: list[int], subtasks: list[str], access: list[Access]) -> Plan:
    """Shorthand for an expected plan."""
    return Plan(tuple(model_ids), tuple(subtasks), tuple(access))


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


def test_too_long_is_checked_before_scanning() -> None:
    valid = plan_source("[0]", '["Solve."]', "[[]]")
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
    text = plan_source("[0, 1]", '["a", "b"]', "[[], [0]]")
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
