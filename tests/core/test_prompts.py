from __future__ import annotations

import dataclasses
import re

import pytest

from conductor_gym.core.prompts import DEFAULT_TEMPLATES, FewShotExample, PromptTemplates
from conductor_gym.plan import Plan, parse_plan
from conductor_gym.sim.profiles import PAPER_PROFILES

QUESTION = "What is 17 * 23? Give the number."


def test_conductor_prompt_lists_ordinal_workers_only() -> None:
    prompt = DEFAULT_TEMPLATES.conductor_prompt(QUESTION, num_workers=3, max_steps=5)
    assert "Model 0\nModel 1\nModel 2" in prompt
    assert "Model 3\n" not in prompt.split("AVAILABLE LANGUAGE MODELS:")[1]
    assert prompt.rstrip().endswith("Model 2")
    assert QUESTION in prompt
    assert "between 1 and 5 steps" in prompt
    for key in PAPER_PROFILES:  # real worker names never reach the conductor
        assert key not in prompt


def test_conductor_prompt_has_rules_and_four_examples() -> None:
    prompt = DEFAULT_TEMPLATES.conductor_prompt(QUESTION, num_workers=7, max_steps=3)
    for needle in ("model_id = [", "subtasks = [", "access_list = [", '"all"', "[0, 2]"):
        assert needle in prompt
    assert [f"EXAMPLE {i}:" in prompt for i in range(1, 6)] == [True] * 4 + [False]
    assert "between 1 and 3 steps" in prompt
    assert prompt.index("EXAMPLE 4:") < prompt.index("USER QUESTION:")


def test_no_examples_when_disabled() -> None:
    templates = dataclasses.replace(DEFAULT_TEMPLATES, examples=())
    prompt = templates.conductor_prompt(QUESTION, 2, 5)
    assert "EXAMPLE" not in prompt and "examples below" not in prompt


def test_custom_example_and_braces_in_question() -> None:
    templates = PromptTemplates(examples=(FewShotExample("Q?", "model_id = [0]"),))
    prompt = templates.conductor_prompt("Simplify \\frac{1}{2} + {x}", 1, 5)
    assert "EXAMPLE 1:\nQuestion: Q?" in prompt
    assert "\\frac{1}{2} + {x}" in prompt


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        (
            "conductor",
            "no fields at all",
            "conductor lacks the field(s) ['question', 'worker_list']",
        ),
        ("conductor", "{question} {worker_list} {oops}", "unknown field(s) ['oops']"),
        ("recursive", "{question}", "recursive lacks the field(s) ['answer', 'continuation']"),
        ("self_call", "{context}", "self_call lacks the field(s) ['task']"),
        ("first_step", "{subtask}", "first_step lacks the field(s) ['question']"),
        ("worker_list_item", "Model {id", "worker_list_item is not a valid template"),
    ],
)
def test_bad_template_fails_at_construction(field: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        PromptTemplates(**{field: value})


def test_recursive_prompt_offers_empty_lists_unless_forced() -> None:
    prompt = DEFAULT_TEMPLATES.recursive_prompt(QUESTION, "391", num_workers=2, max_steps=4)
    assert "model_id = [], subtasks = [], access_list = []" in prompt
    assert "CURRENT FINAL ANSWER:\n391" in prompt
    assert QUESTION in prompt and "up to 4 steps" in prompt and "between 1 and 4 steps" in prompt
    forced = DEFAULT_TEMPLATES.recursive_prompt(QUESTION, "391", 2, 4, may_stop=False)
    assert "three empty lists are not accepted" in forced
    assert "model_id = [], subtasks = []" not in forced


def test_self_worker_is_marked_in_the_worker_list() -> None:
    prompt = DEFAULT_TEMPLATES.conductor_prompt(QUESTION, num_workers=3, max_steps=5, self_id=2)
    models = prompt.split("AVAILABLE LANGUAGE MODELS:\n")[1]
    assert models.startswith("Model 0\nModel 1\nModel 2 (yourself:")


def test_self_call_question_flattens_the_step_chat() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Solve it."},
        {"role": "assistant", "content": "42"},
        {"role": "user", "content": "Plan how to check 42."},
    ]
    question = DEFAULT_TEMPLATES.self_call_question(messages)
    assert question == (
        "An earlier step was asked:\nSolve it.\nIt answered:\n42\n\nPlan how to check 42."
    )


PLAN = Plan(
    model_ids=(0, 1, 0, 1),
    subtasks=("first", "second", "third", "fourth"),
    access=((), (), "all", (0, 2)),
)
RESPONSES = ["r0", "r1", "r2"]


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (0, [("user", f"{QUESTION}\n\nfirst")]),
        (1, [("user", "second")]),
        (
            2,
            [
                ("user", "first"),
                ("assistant", "r0"),
                ("user", "second"),
                ("assistant", "r1"),
                ("user", "third"),
            ],
        ),
        (
            3,
            [
                ("user", "first"),
                ("assistant", "r0"),
                ("user", "third"),
                ("assistant", "r2"),
                ("user", "fourth"),
            ],
        ),
    ],
    ids=["first-step-gets-question", "empty-access", "all", "indices"],
)
def test_worker_messages_follow_access(step: int, expected: list[tuple[str, str]]) -> None:
    messages = DEFAULT_TEMPLATES.worker_messages(QUESTION, PLAN, step, RESPONSES[:step])
    assert [(m["role"], m["content"]) for m in messages] == expected


def test_prior_turns_reach_only_steps_with_all_access() -> None:
    prior = [("Solve it (previous round).", "r-prev")]
    with_all = DEFAULT_TEMPLATES.worker_messages(QUESTION, PLAN, 2, RESPONSES[:2], prior=prior)
    assert [m["content"] for m in with_all[:2]] == ["Solve it (previous round).", "r-prev"]
    indices = DEFAULT_TEMPLATES.worker_messages(QUESTION, PLAN, 3, RESPONSES, prior=prior)
    assert "r-prev" not in [m["content"] for m in indices]


def test_question_to_all_workers_and_system_prompt() -> None:
    templates = PromptTemplates(worker_system="Be brief.")
    messages = templates.worker_messages(
        QUESTION, PLAN, 1, RESPONSES[:1], question_to_all_workers=True
    )
    assert messages[0] == {"role": "system", "content": "Be brief."}
    assert messages[-1] == {"role": "user", "content": f"{QUESTION}\n\nsecond"}


@pytest.mark.parametrize("index", range(len(DEFAULT_TEMPLATES.examples)))
def test_every_few_shot_example_is_a_valid_plan(index: int) -> None:
    example = DEFAULT_TEMPLATES.examples[index]
    plan = parse_plan(example.response, num_workers=4, max_steps=5)
    assert 1 <= len(plan) <= 5 and plan.subtasks[-1]


def test_the_worker_list_may_name_the_drawn_workers() -> None:
    """``worker_list_item`` may show ``{name}``: with shuffled ids and k of n drawn, the
    conductor then reads who each ``Model i`` is from its own observation."""
    from conductor_gym import ConductorEnv

    templates = PromptTemplates(worker_list_item="Model {id}: {name}")
    env = ConductorEnv(k=3, shuffle_workers=True, templates=templates)
    for seed in range(4):
        observation, info = env.reset(seed=seed)
        listed = observation.split("AVAILABLE LANGUAGE MODELS:\n")[1].split("\n")[:3]
        assert listed == [f"Model {i}: {name}" for i, name in enumerate(info["pool"])]
    # the default stays the paper's: ids alone
    observation, info = ConductorEnv(k=3, shuffle_workers=True).reset(seed=0)
    assert not any(name in observation for name in info["pool"])
    with pytest.raises(ValueError, match=re.escape("worker_list_item")):
        PromptTemplates(worker_list_item="Model {id}: {model}")
