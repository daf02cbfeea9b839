"""The procedural problem parsers and solvers the v2 simulator reads tasks with."""

from __future__ import annotations

import pytest

from conductor_gym.sim.perception import find_problems, normalise
from conductor_gym.sim.perception.countdown import solve_countdown
from conductor_gym.sim.perception.interpreter import Unsupported, run
from conductor_gym.tasks import make_task_source


@pytest.mark.parametrize("source", ["offline", "offline-ood"])
def test_every_generated_question_parses_to_its_own_problem(source: str) -> None:
    tasks = make_task_source(source, size=280)
    for task in tasks:
        problems = find_problems(task.question).problems
        assert len(problems) == 1, task.question
        (problem,) = problems
        assert problem.family == task.domain
        assert problem.check(task.metadata["solution"]), task.question
        assert not any(problem.check(d) for d in task.metadata["distractors"])


def test_number_formats_are_normalised() -> None:
    assert normalise("twenty-five plus 1,234 \u2212 seven \u00d7 3") == "25 plus 1234 - 7 * 3"
    a = find_problems("What is 1,200 + 36?").problems[0]
    b = find_problems("Compute thirty-six + 1\u202f200, please.").problems[-1]
    assert a.key == b.key and a.answer == b.answer == "1236"


def test_restatements_share_a_key_and_fragments_pose_nothing() -> None:
    first = find_problems("Compute 36 + 50 * 2.").problems[0]
    assert find_problems("What is the value of 2*50+36 ?").problems[0].key == first.key
    assert find_problems("numbers 2 36 50 compute value").problems == ()
    countdown = "Using the numbers 3, 5, 7, 25, write an expression that equals 80."
    reordered = "Make 80 from the numbers 25, 7, 5 and 3."
    assert find_problems(countdown).problems[0].key == find_problems(reordered).problems[0].key


def test_stated_results_are_facts_not_problems() -> None:
    found = find_problems("Note that 36 + 50 = 86, and 7 * 3 = 22.")
    assert found.problems == ()
    assert [(value, right) for _, value, right in found.stated] == [("86", True), ("22", False)]


def test_a_known_sub_result_shrinks_the_problem_and_a_wrong_one_carries_over() -> None:
    from conductor_gym.sim.perception import Fact

    whole = find_problems("Compute (36 + 50) * 3 - 7.").problems[0]
    part = find_problems("What is 36 + 50?").problems[0]
    assert part.key in whole.sub_keys()
    reduced, right = whole.reduce({part.key: Fact(part.key, "86", True)}) or (None, None)
    assert reduced is not None and right and reduced.answer == whole.answer
    assert reduced.size < whole.size
    wrong, right = whole.reduce({part.key: Fact(part.key, "87", False)}) or (None, None)
    assert wrong is not None and not right and wrong.answer == str(87 * 3 - 7)


def test_countdown_solver_finds_a_shortest_expression() -> None:
    expression, used, _ = solve_countdown((3, 5, 7, 25), 80)
    # No pair reaches 80 (3 * 25 = 75 is the nearest product), so three numbers.
    assert expression is not None and used == 3
    problem = find_problems("Using the numbers 3, 5, 7, 25, make 80.").problems[0]
    assert problem.check(expression) and not problem.check("25 * 3 + 5 + 7")
    assert solve_countdown((2, 3), 1000)[0] is None


def test_choice_value_picks_the_option() -> None:
    question = "What is the greatest common divisor of 84 and 126?\nA) 14\nB) 42\nC) 21\nD) 7"
    (problem,) = find_problems(question).problems
    assert problem.answer == "B"
    value = find_problems("What is the greatest common divisor of 84 and 126?").problems[0]
    assert value.answer == "42" and value.key in problem.sub_keys()


def test_interpreter_runs_the_subset_and_refuses_the_rest() -> None:
    result = run(
        "def f(n):\n    return n * 2\n\nt = 0\nfor x in [1, 2, 3]:\n    t += f(x)\nprint(t)"
    )
    assert result.printed == ("12",) and result.steps > 5
    for code in (
        "import os\nprint(1)",
        "print(open('x'))",
        "x = (1).__class__\nprint(x)",
        "while True:\n    pass\nprint(1)",
        "print(2 ** 10000)",
    ):
        with pytest.raises(Unsupported):
            run(code)
