"""Perception is total (simulator v3, item 8): for any text, program or plan, problem
perception and the simulated workers answer ("no problem here", an off-task reply, a
program they cannot trace) and never raise, with bounded work on huge inputs; an
episode never ends as an infrastructure failure because of the simulator.

The regression cases reproduce inputs that raised (or ran without end) before; the
property tests (hypothesis) hold the contract over arbitrary text, small programs and
whole plans run through real simulated episodes.
"""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import plan_text

from conductor_gym import ConductorEnv
from conductor_gym.pool import WorkerPool
from conductor_gym.sim.context import read
from conductor_gym.sim.params import VERSIONS
from conductor_gym.sim.perception import Fact, find_problems
from conductor_gym.sim.perception.interpreter import Unsupported, run
from conductor_gym.sim.perception.trace import MAX_PROGRAMS
from conductor_gym.sim.worker import paper_pool_specs

# The issue's report: a subtask holding this program made find_problems raise TypeError,
# which the env reported as an infrastructure failure of the worker.
ISSUE_PROGRAM = "x = [1, 2]\nif 3 > x:\n    print(1)\nprint(2)"

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _exercise(text: str) -> None:
    """Everything a worker asks of what it perceives in ``text``."""
    found = find_problems(text)
    for problem in found.problems:
        for answer in ("", "3", "B", "-7/2", "9" * 5000, text[:50]):
            problem.check(answer)
        problem.slips()
        keys = problem.sub_keys()
        problem.reduce({key: Fact(key, "12", True) for key in keys})
        problem.reduce({key: Fact(key, "1" * 5000, False) for key in keys})


# -- regressions: each input raised, or did not finish, before --------------------------


def test_the_issue_program_is_refused_by_the_interpreter_and_perceived_without_raising() -> None:
    with pytest.raises(Unsupported, match="'>' not supported between instances of 'int' and"):
        run(ISSUE_PROGRAM)
    found = find_problems(f"What does this print?\n\n```python\n{ISSUE_PROGRAM}\n```")
    (problem,) = found.problems
    assert problem.family == "program_trace" and problem.answer is None


@pytest.mark.parametrize(
    ("program", "message"),
    [
        ("x = 1\nprint(x is 1)", "Is"),
        ("for i in 5:\n    print(i)", "iteration over int"),
        ("x = -[1]\nprint(x)", "bad operand type for unary -: list"),
        ("x = [1]\nx[5] = 2\nprint(x)", "list assignment index out of range"),
        ("x = 5\nprint(x[1:2])", "'int' object is not subscriptable"),
        ("x = [1, 2]\nprint(x[::0])", "slice step cannot be zero"),
        ("x = 1\nx += [1]\nprint(x)", "unsupported operand type"),
        ("x = 1\nx //= 0\nprint(x)", "integer division or modulo by zero"),
        ("print(len(range(10 ** 29)))", "Python int too large"),
        ("x = 2 ** -1\nx = x ** -64\nx = x ** 64\nprint(x)", "Numerical result out of range"),
        ("print('%c' % 10 ** 8)", "%c arg not in range"),
        ("print('%' % 1)", "incomplete format"),
        # huge work, refused before it is done
        ("x = 3\ny = 2 ** 27\nx **= y\nprint(x)", "value too large"),
        ("x = 'a' * 10 ** 9\nprint(len(x))", "too much work"),
        ("x = [0] * 10 ** 8\nprint(len(x))", "too much work"),
        ("x = 'ab'\nfor i in range(40):\n    x = x + x\nprint(len(x))", "too much work"),
        ("x = [1]\nfor i in range(60):\n    x = [x, x]\nprint(x)", "too much work"),
        (
            "x = [1]\ny = [1]\nfor i in range(60):\n    x = [x, x]\n    y = [y, y]\nprint(x == y)",
            "too much work",
        ),
        ("print('%999999999d' % 1)", "format width"),
        ("print(sum([[1]] * 3000, []))", "too much work"),
    ],
)
def test_operations_python_refuses_or_that_cost_too_much_are_unsupported(
    program: str, message: str
) -> None:
    with pytest.raises(Unsupported, match=message):
        run(program)
    _exercise(program)


def test_the_bounds_leave_ordinary_programs_alone() -> None:
    assert run("x = []\nfor i in range(500):\n    x = x + [i]\nprint(sum(x))").printed == (
        str(sum(range(500))),
    )
    assert run("x = [[1, 2], [3]]\nprint(x, 'a' * 3, x[0] < x[1], '%d!' % 7)").printed == (
        "[[1, 2], [3]] aaa True 7!",
    )
    # a **= b keeps its unbounded exponent where the result fits
    assert run("x = 2\nx **= 90\ny = 1\ny **= 10 ** 20\nprint(x, y)").printed == (f"{2**90} 1",)
    looped = run("x = [0]\nx[0] = x\nprint(x)")  # a list that holds itself prints as Python's
    assert looped.printed == ("[[...]]",)


@pytest.mark.parametrize(
    ("text", "families"),
    [
        # unicode digits that are digits to str.isdigit but not to int()
        ("Which of these is prime?\nA) \u00b2\nB) 3", ()),
        ("Compute " + "9" * 5000 + " + 1.", ()),  # past Python's int-string limit
        ("Compute " + " * ".join(["1" + "0" * 20] * 20) + ".", ("arithmetic",)),  # > float
        ("Compute " + " * ".join(["9" * 300] * 20) + ".", ()),  # > 2^MAX_BITS
        ("What is the greatest common divisor of " + "9" * 5000 + " and 3?", ()),
        (
            "What is the greatest common divisor of 84 and 126?\nA) 1" + "0" * 400 + "\nB) 42",
            ("multiple_choice",),
        ),
        ("What is 2^10 + 1 mod 1" + "0" * 400 + "?", ("multiple_choice",)),  # "1 mod 10^400"
        ("Find the remainder: 2^10 + 1 divided by 1" + "0" * 400 + ".", ("modular",)),
        ("What does this print?\n\nprint('" + "1" * 5000 + "')", ("program_trace",)),
        ("print(" + "-" * 3000 + "1)", ()),  # deeper than Python's own recursion
        ("print(" + "+".join(["1"] * 5000) + ")", ()),
        ("Using the numbers 3, " + "5" * 200 + ", make 80.", ()),
        # work without end before: divisors of 10^21, a 19-digit prime, 10^9 terms
        ("What is the sum of the divisors of 1000000000000000000000?", ()),
        ("Which of these is prime?\nA) 1000000000000000003\nB) 4", ("multiple_choice",)),
        ("What is 1^2 + 2^2 + 3^2 + ... + 10000000^2 divided by 100003?", ("modular",)),
        (
            "The remainder when 3^" + "9" * 3000 + " is divided by 1" + "0" * 3000 + "7?",
            ("modular",),
        ),
        ("-" * 100_000, ()),
        ("(" * 100_000 + "1", ()),
    ],
)
def test_texts_that_raised_or_ran_without_end_are_read(
    text: str, families: tuple[str, ...]
) -> None:
    assert tuple(p.family for p in find_problems(text).problems) == families
    _exercise(text)


def test_a_long_paragraph_of_prints_is_read_within_the_budget() -> None:
    # 2000 print lines in one 4000-line paragraph: each starts a program at the top, too
    # long to trace; once the parse budget is spent, each print line is tried alone.
    text = "\n".join(f"x{i} = {i}\nprint(x{i})" for i in range(2000))
    problems = find_problems(text).problems
    assert 0 < len(problems) <= MAX_PROGRAMS
    assert {p.family for p in problems} == {"program_trace"}
    assert all("\n" not in text[p.start : p.end] for p in problems)  # print lines alone


def test_a_huge_prime_option_is_judged_exactly() -> None:
    question = "Which of these numbers is prime?\nA) 1000000000000000004\nB) {}\nC) 9"
    (problem,) = find_problems(question.format(1000000000000000003)).problems
    assert problem.answer == "B"
    (composite,) = find_problems(question.format(1000000000000000001)).problems
    assert composite.answer is None  # no option is prime


def test_a_power_sum_over_many_periods_is_exact() -> None:
    (problem,) = find_problems("Find 1^3 + 2^3 + ... + 100000^3 divided by 7.").problems
    assert problem.answer == str(sum(i**3 for i in range(1, 100_001)) % 7)
    (long,) = find_problems("Find 1^3 + 2^3 + ... + 10000000000^3 divided by 7.").problems
    n = 10**10
    assert long.answer == str((n * (n + 1) // 2) ** 2 % 7)
    # 99999 powers of a 3000-digit exponent: past the budget, so no power sum is posed
    costly = "Find 1^{0} + 2^{0} + ... + 99999^{0} divided by 1000003.".format("9" * 3000)
    assert not any(p.key.startswith("modular:power_sum") for p in find_problems(costly).problems)


# -- properties ---------------------------------------------------------------------


NAMES = st.sampled_from(["x", "y", "z", "i"])


def _literal() -> st.SearchStrategy[str]:
    return st.one_of(
        st.integers(-(10**6), 10**6).map(str),
        st.sampled_from(["10 ** 40", "2 ** -1", "10 ** 10 ** 6", "0", "True", "'ab'", "''"]),
        st.text(alphabet="ab1 %d", max_size=4).map(repr),
    )


EXPRESSIONS = st.recursive(
    st.one_of(_literal(), NAMES),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.tuples(inner, st.sampled_from(["+", "-", "*", "//", "%", "**"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.tuples(inner, st.sampled_from(["<", ">", "==", "!=", "in", "not in", "is"]), inner).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"
        ),
        st.tuples(st.sampled_from(["len", "abs", "min", "max", "sum", "range"]), inner).map(
            lambda t: f"{t[0]}({t[1]})"
        ),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}:]"),
        inner.map(lambda e: f"-{e}"),
        inner.map(lambda e: f"not {e}"),
    ),
    max_leaves=8,
)


def _statements(depth: int) -> st.SearchStrategy[list[str]]:
    simple = st.one_of(
        st.tuples(NAMES, EXPRESSIONS).map(lambda t: [f"{t[0]} = {t[1]}"]),
        st.tuples(NAMES, st.sampled_from(["+=", "-=", "*=", "//=", "%=", "**="]), EXPRESSIONS).map(
            lambda t: [f"{t[0]} {t[1]} {t[2]}"]
        ),
        st.tuples(NAMES, EXPRESSIONS, EXPRESSIONS).map(lambda t: [f"{t[0]}[{t[1]}] = {t[2]}"]),
        EXPRESSIONS.map(lambda e: [f"print({e})"]),
    )
    if depth == 0:
        return simple

    def indent(lines: list[str]) -> list[str]:
        return ["    " + line for line in lines]

    body = st.lists(_statements(depth - 1), min_size=1, max_size=3).map(
        lambda blocks: [line for block in blocks for line in block]
    )
    return st.one_of(
        simple,
        st.tuples(EXPRESSIONS, body, body).map(
            lambda t: [f"if {t[0]}:", *indent(t[1]), "else:", *indent(t[2])]
        ),
        st.tuples(NAMES, EXPRESSIONS, body).map(
            lambda t: [f"for {t[0]} in {t[1]}:", *indent(t[2])]
        ),
        st.tuples(EXPRESSIONS, body).map(lambda t: [f"while {t[0]}:", *indent(t[1])]),
        st.tuples(EXPRESSIONS, body).map(
            lambda t: ["def f(x):", *indent(t[1]), f"    return {t[0]}"]
        ),
    )


PRELUDE = ["x = 1", "y = [2, 'a', [3]]", "z = 'bc'", "i = 0"]  # every name bound
PROGRAMS = st.lists(_statements(2), min_size=1, max_size=6).map(
    lambda blocks: "\n".join([*PRELUDE, *(line for block in blocks for line in block), "print(x)"])
)

# Text a conductor may write: anything, or a mix of prose and problem-shaped pieces.
PIECES = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "Compute 36 + 50 * 2.",
            "36 + 50 = 86",
            "(((1 + 2)",
            "7 / 0 + 1",
            "\\boxed{42}",
            "Using the numbers 3, 5, 7 and 25, make 80.",
            "mod 7",
            "divided by 0",
            "What is 2^10 + 3 mod 5?",
            "1^2 + 2^2 + ... + 9^2 mod 4",
            "3x = 4 (mod 0)",
            "What is the sum of the divisors of 0?",
            "the gcd of 0 and 0",
            "lcm of 0, 0, 0",
            "\nA) 1/0\nB) 2/3\n",
            "\nA) 7\nB) 9\nC) \u0663\n",
            "Which is prime?",
            "remainder of 5 divided by 0",
            "twenty-one \u2212 4 \u00d7 3",
            "1,234,567",
            "print(",
            "```python\n",
            "```",
            "\n\n",
            "Final answer: 5",
            "the answer is B",
            "\u0661\u0662 + \u0663",
            "\u00b2 + 1",
        ]
    ),
    PROGRAMS,
    PROGRAMS.map(lambda p: f"What does this print?\n\n```python\n{p}\n```"),
)
TEXTS = st.one_of(st.text(), st.lists(PIECES, max_size=6).map(" ".join))


@SETTINGS
@given(st.text())
def test_any_text_is_read_without_raising(text: str) -> None:
    _exercise(text)


@SETTINGS
@given(PROGRAMS)
def test_any_small_program_runs_or_is_unsupported(program: str) -> None:
    with contextlib.suppress(Unsupported):
        run(program)
    _exercise(program)
    _exercise(f"What integer does this program print?\n\n```python\n{program}\n```")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["system", "user", "assistant"]), TEXTS), max_size=5))
def test_any_chat_is_read_without_raising(turns: list[tuple[str, str]]) -> None:
    read(tuple(turns))


@pytest.fixture(scope="module", params=VERSIONS)
def env(request: pytest.FixtureRequest) -> ConductorEnv:
    """An env on the paper's simulated pool, for each simulator version."""
    return ConductorEnv(pool=WorkerPool(paper_pool_specs(version=request.param)))


ACCESS = st.one_of(st.just("all"), st.lists(st.integers(0, 4), max_size=3, unique=True))
PLANS = st.lists(
    st.tuples(
        st.integers(0, 6),
        (TEXTS | st.just("{question}")).map(lambda s: s if s.strip() else "Solve it."),
        ACCESS,
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), steps=PLANS)
def test_no_plan_ends_an_episode_as_an_infrastructure_failure(
    env: ConductorEnv, seed: int, steps: list[tuple[int, str, str | list[int]]]
) -> None:
    _, info = env.reset(seed=seed)
    question = info["question"]
    access = [
        a if isinstance(a, str) else [j for j in a if j < i] for i, (_, _, a) in enumerate(steps)
    ]
    completion = plan_text(
        [m for m, _, _ in steps],
        [question if s == "{question}" else s for _, s, _ in steps],
        access,
    )
    _, _, terminated, truncated, info = env.step(completion)
    assert not truncated and info["error"] is None, info["error"]
    assert terminated
