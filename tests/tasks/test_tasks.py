"""Procedural task families, the ProceduralTasks source and the task-source registry."""

from __future__ import annotations

import ast
import contextlib
import io
import os
import re
import subprocess
import sys
from collections import Counter

import pytest

from conductor_gym import ConductorEnv
from conductor_gym.errors import ConfigurationError
from conductor_gym.graders import get_grader
from conductor_gym.tasks import (
    FAMILIES,
    IN_DOMAIN_FAMILIES,
    OOD_FAMILIES,
    ProceduralTasks,
    Task,
    TaskSource,
    fingerprint_tasks,
    make_task_source,
    register_task_source,
    task_source_names,
)
from conductor_gym.tasks.procedural import (
    ArithmeticConfig,
    CountdownConfig,
    ModularConfig,
    MultipleChoiceConfig,
    MultipleChoiceHardConfig,
    ProgramTraceConfig,
    ProgramTraceHardConfig,
)

EXPECTED = {
    "arithmetic": ("math500", "numeric"),
    "multiple_choice": ("mmlu", "choice"),
    "countdown": ("rlpr", "countdown"),
    "program_trace": ("livecodebench", "numeric"),
    "modular": ("aime25", "numeric"),
    "multiple_choice_hard": ("gpqa-diamond", "choice"),
    "program_trace_hard": ("bigcodebench", "numeric"),
}
ITEMS = 200


def boxed(answer: str) -> str:
    """A worker-style response, as the simulated workers write them."""
    return f"Working it through step by step.\n\nFinal answer: \\boxed{{{answer}}}"


def family_tasks(family: str, count: int = ITEMS, seed: int = 0) -> list[Task]:
    return list(ProceduralTasks([family], count, seed=seed))


# -- every family -------------------------------------------------------------------------


def test_family_table_is_complete() -> None:
    assert set(FAMILIES) == set(EXPECTED)
    assert set(IN_DOMAIN_FAMILIES) | set(OOD_FAMILIES) == set(EXPECTED)
    assert not set(IN_DOMAIN_FAMILIES) & set(OOD_FAMILIES)


@pytest.mark.parametrize("family", sorted(EXPECTED))
def test_family_tasks_are_well_formed(family: str) -> None:
    profile, grader = EXPECTED[family]
    for index, task in enumerate(family_tasks(family)):
        assert task.id == f"{family}-{index}"
        assert task.domain == family
        assert task.grader == grader
        assert task.profile == profile == task.metadata["profile"]
        assert task.question and task.reference
        assert isinstance(task.metadata["kind"], str)


@pytest.mark.parametrize("family", sorted(EXPECTED))
def test_solution_is_graded_correct_and_distractors_wrong(family: str) -> None:
    for task in family_tasks(family):
        grader = get_grader(task.grader)
        solution = task.metadata["solution"]
        verdict = grader(boxed(solution), task.reference, task.metadata)
        assert verdict.correct, (task, verdict)
        distractors = task.metadata["distractors"]
        assert 3 <= len(distractors) <= 5, task
        assert len(set(distractors)) == len(distractors), task
        assert solution not in distractors
        for wrong in distractors:
            verdict = grader(boxed(wrong), task.reference, task.metadata)
            assert not verdict.correct, (task, wrong, verdict)
            assert verdict.extracted is not None, (task, wrong, verdict)


@pytest.mark.parametrize("family", sorted(EXPECTED))
def test_families_vary(family: str) -> None:
    tasks = family_tasks(family)
    assert len({t.question for t in tasks}) >= 0.95 * len(tasks)
    assert len({t.metadata["kind"] for t in tasks}) >= (
        1 if family in ("arithmetic", "countdown") else 3
    )


@pytest.mark.parametrize("family", ["program_trace", "program_trace_hard"])
def test_program_trace_reference_is_what_the_program_prints(family: str) -> None:
    for task in family_tasks(family):
        code = task.metadata["code"]
        assert f"```python\n{code}\n```" in task.question
        lines = code.splitlines()
        assert 5 <= len(lines) <= (10 if family == "program_trace" else 15), code
        out = io.StringIO()
        # The snippets are our own generated, trusted code (fixed templates with integer
        # and word-list parameters), so running them here is safe.
        with contextlib.redirect_stdout(out):
            exec(code, {})
        assert out.getvalue() == task.reference + "\n", code


def test_countdown_solutions_use_only_allowed_numbers() -> None:
    for task in family_tasks("countdown"):
        numbers = task.metadata["numbers"]
        assert len(numbers) == 4 and sum(n in (25, 50, 75, 100) for n in numbers) >= 1
        target = int(task.reference)
        assert 1 <= target <= 999 and target not in numbers
        for expression in (task.metadata["solution"], *task.metadata["distractors"]):
            tree = ast.parse(expression, mode="eval")
            used = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)]
            assert not Counter(used) - Counter(numbers), (task, expression)
        for number in (*numbers, target):
            assert str(number) in task.question


def test_arithmetic_answer_is_the_value_of_the_expression() -> None:
    for task in family_tasks("arithmetic"):
        match = re.fullmatch(r"(?:Compute|Evaluate|What is the value of) (.+?)[.?]", task.question)
        assert match is not None, task.question
        expression = match[1]
        tree = ast.parse(expression, mode="eval")
        assert {type(n.op) for n in ast.walk(tree) if isinstance(n, ast.BinOp)} <= {
            ast.Add,
            ast.Sub,
            ast.Mult,
        }
        # Our own generated expression of integers and + - *, checked by Python itself.
        assert eval(compile(tree, "<arithmetic>", "eval"), {"__builtins__": {}}) == int(
            task.reference
        )


@pytest.mark.parametrize("family", ["multiple_choice", "multiple_choice_hard"])
def test_choice_questions_letter_their_options_and_spread_the_answer(family: str) -> None:
    tasks = family_tasks(family, 400)
    for task in tasks:
        for letter in "ABCD":
            assert f"\n{letter}) " in task.question
        assert task.metadata["num_choices"] == 4
        assert sorted([task.reference, *task.metadata["distractors"]]) == list("ABCD")
    positions = Counter(task.reference for task in tasks)
    assert set(positions) == set("ABCD")
    assert min(positions.values()) >= 60, positions  # ~100 each if uniform


def test_multiple_choice_prime_questions_have_exactly_one_prime() -> None:
    def is_prime(n: int) -> bool:
        return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))

    seen = 0
    for task in family_tasks("multiple_choice"):
        if task.metadata["kind"] != "prime":
            continue
        seen += 1
        options = {line[0]: int(line[3:]) for line in task.question.splitlines()[1:5]}
        assert [letter for letter, n in options.items() if is_prime(n)] == [task.reference]
    assert seen > 20


def test_modular_answers_are_in_0_to_999() -> None:
    for task in family_tasks("modular"):
        assert 0 <= int(task.reference) <= 999


def test_configs_change_what_is_generated() -> None:
    one_op = ProceduralTasks([ArithmeticConfig(min_ops=1, max_ops=1)], 50)
    for task in one_op:
        assert sum(task.question.count(op) for op in (" + ", " - ", " * ")) == 1
    six = ProceduralTasks([MultipleChoiceConfig(num_choices=6)], 30)
    for task in six:
        assert task.metadata["num_choices"] == 6 and "\nF) " in task.question
        assert len(task.metadata["distractors"]) == 5
        assert get_grader("choice")(boxed(task.reference), task.reference, task.metadata).correct
    three = ProceduralTasks([ArithmeticConfig(num_distractors=3)], 30)
    assert all(len(t.metadata["distractors"]) == 3 for t in three)


# -- determinism --------------------------------------------------------------------------


def test_same_arguments_give_the_same_tasks() -> None:
    first = ProceduralTasks(IN_DOMAIN_FAMILIES, 80, seed=3)
    second = ProceduralTasks(IN_DOMAIN_FAMILIES, 80, seed=3)
    assert list(first) == list(second)
    assert [second[i] for i in reversed(range(80))] == list(reversed(list(first)))


def test_generate_is_a_pure_function_of_index_and_seed() -> None:
    for config in FAMILIES.values():
        assert config.generate(17, 5) == config.generate(17, 5)
        assert config.generate(17, 5) != config.generate(18, 5)


def test_different_seeds_give_different_tasks() -> None:
    a = ProceduralTasks(IN_DOMAIN_FAMILIES, 80, seed=0)
    b = ProceduralTasks(IN_DOMAIN_FAMILIES, 80, seed=1)
    differ = sum(x.question != y.question for x, y in zip(a, b, strict=True))
    assert differ >= 75
    assert [t.id for t in a] == [t.id for t in b]


def test_fingerprint_is_stable_and_tracks_the_seed() -> None:
    source = ProceduralTasks(OOD_FAMILIES, 60, seed=0)
    assert source.fingerprint() == source.fingerprint()
    assert source.fingerprint() == fingerprint_tasks(list(ProceduralTasks(OOD_FAMILIES, 60)))
    assert source.fingerprint() != ProceduralTasks(OOD_FAMILIES, 60, seed=1).fingerprint()
    assert source.fingerprint() != ProceduralTasks(OOD_FAMILIES, 61, seed=0).fingerprint()


def test_tasks_are_the_same_in_another_process() -> None:
    script = (
        "from conductor_gym.tasks import make_task_source as m;"
        "print(m('offline', size=120, seed=9).fingerprint())"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    here = make_task_source("offline", size=120, seed=9).fingerprint()
    assert out.stdout.strip() == here


# -- the source ---------------------------------------------------------------------------


def test_source_interleaves_families() -> None:
    source = ProceduralTasks(OOD_FAMILIES, 10, seed=0)
    assert isinstance(source, TaskSource)
    assert len(source) == 10
    for i, task in enumerate(source):
        family = OOD_FAMILIES[i % 3]
        assert task.domain == family and task.id == f"{family}-{i // 3}"
        assert task == FAMILIES[family].generate(i // 3, 0)
    assert len(list(source)) == 10


@pytest.mark.parametrize("index", [-1, 10, 11, 10**9])
def test_source_index_out_of_range(index: int) -> None:
    with pytest.raises(IndexError):
        ProceduralTasks(["arithmetic"], 10)[index]


def test_source_rejects_non_integer_indices() -> None:
    with pytest.raises(TypeError):
        ProceduralTasks(["arithmetic"], 10)["3"]  # type: ignore[index]


def test_source_default_name_and_repr() -> None:
    source = ProceduralTasks(["countdown", "modular"], 4, seed=2)
    assert source.name == "procedural/countdown+modular"
    assert "seed=2" in repr(source)
    assert ProceduralTasks(["countdown"], 4, name="mine").name == "mine"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"families": ["arithmetic", "nope"], "size": 5}, "unknown family 'nope'"),
        ({"families": [], "size": 5}, "families"),
        ({"families": "arithmetic", "size": 5}, "families"),
        ({"families": ["modular", "modular"], "size": 5}, "once"),
        ({"families": ["modular"], "size": 0}, "size"),
        ({"families": ["modular"], "size": 2.5}, "size"),
        ({"families": ["modular"], "size": 5, "seed": "0"}, "seed"),
    ],
)
def test_source_validation(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message) as caught:
        ProceduralTasks(**kwargs)  # type: ignore[arg-type]
    if "unknown family" in message:
        for name in EXPECTED:
            assert name in str(caught.value)


@pytest.mark.parametrize(
    ("make", "field"),
    [
        (lambda: ArithmeticConfig(min_ops=0), "ArithmeticConfig.min_ops"),
        (lambda: ArithmeticConfig(min_ops=4, max_ops=3), "ArithmeticConfig.max_ops"),
        (lambda: ArithmeticConfig(num_distractors=6), "ArithmeticConfig.num_distractors"),
        (lambda: MultipleChoiceConfig(num_choices=3), "MultipleChoiceConfig.num_choices"),
        (lambda: MultipleChoiceConfig(max_value=100), "MultipleChoiceConfig.max_value"),
        (lambda: CountdownConfig(count=2), "CountdownConfig.count"),
        (lambda: CountdownConfig(big_numbers=()), "CountdownConfig.big_numbers"),
        (lambda: CountdownConfig(target_min=0), "CountdownConfig.target_min"),
        (lambda: CountdownConfig(target_max=5), "CountdownConfig.target_max"),
        (lambda: ProgramTraceConfig(list_min=1), "ProgramTraceConfig.list_min"),
        (lambda: ProgramTraceConfig(value_max=5), "ProgramTraceConfig.value_max"),
        (lambda: ModularConfig(exponent_max=3), "ModularConfig.exponent_max"),
        (lambda: MultipleChoiceHardConfig(num_choices=7), "MultipleChoiceHardConfig.num_choices"),
        (lambda: ProgramTraceHardConfig(list_max=1), "ProgramTraceHardConfig.list_max"),
    ],
)
def test_config_validation_names_the_field(make: object, field: str) -> None:
    assert callable(make)
    with pytest.raises(ValueError, match=field):
        make()


# -- registry -----------------------------------------------------------------------------


def test_builtin_sources() -> None:
    names = task_source_names()
    assert {"offline", "offline-ood"} <= set(names)
    offline = make_task_source("offline")
    assert (offline.name, len(offline)) == ("offline", 2000)
    assert {offline[i].domain for i in range(8)} == set(IN_DOMAIN_FAMILIES)
    ood = make_task_source("offline-ood")
    assert (ood.name, len(ood)) == ("offline-ood", 1500)
    assert {ood[i].domain for i in range(6)} == set(OOD_FAMILIES)
    for family in EXPECTED:
        single = make_task_source(f"offline/{family}")
        assert (single.name, len(single)) == (f"offline/{family}", 1000)
        assert single[5].id == f"{family}-5"


def test_make_task_source_passes_overrides() -> None:
    small = make_task_source("offline", size=12, seed=4)
    assert len(small) == 12
    assert small.fingerprint() == ProceduralTasks(IN_DOMAIN_FAMILIES, 12, seed=4).fingerprint()


def test_unknown_source_lists_the_names() -> None:
    with pytest.raises(ValueError, match="unknown task source 'nope'") as caught:
        make_task_source("nope")
    for name in ("offline", "offline-ood", "offline/countdown"):
        assert repr(name) in str(caught.value)


def test_register_task_source() -> None:
    def factory(**kwargs: object) -> TaskSource:
        return ProceduralTasks(["modular"], 3, name="test-three-modular")

    if "test-three-modular" not in task_source_names():
        register_task_source("test-three-modular", factory)
    assert len(make_task_source("test-three-modular")) == 3
    with pytest.raises(ValueError, match="already registered"):
        register_task_source("offline", factory)


def test_an_unknown_task_option_is_a_configuration_error_naming_it() -> None:
    with pytest.raises(ConfigurationError, match=r"^task_options: .*'nn'.*size, seed, name"):
        make_task_source("offline", nn=3)
    with pytest.raises(ConfigurationError) as caught:
        ConductorEnv(task_options={"limit": 3})
    assert caught.value.field == "task_options" and "'limit'" in str(caught.value)
    assert len(make_task_source("offline", size=5)) == 5  # a real option still passes
