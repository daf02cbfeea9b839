"""Numbers in pool files are bounded before anything is built from them: a float is no
integer, every integer fits in 64 bits (TOML's own rule), and a file has a size limit.

Security issue, items 8 and 10: a 10,000-digit integer made Python's own integer-length
``ValueError`` escape as a traceback; each case below is a small file written here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conductor_gym.pool.config import MAX_POOL_FILE_BYTES, PoolConfigError, load_pool_file

HEAD = 'name = "p"\ndescription = "numbers"\n'
WORKER = '[[workers]]\nname = "a"\n'


def refusal(tmp_path: Path, text: str) -> str:
    path = tmp_path / "pool.toml"
    path.write_text(text)
    with pytest.raises(PoolConfigError) as caught:
        load_pool_file(path)
    return str(caught.value).removeprefix(f"{path}")


def test_an_integer_python_will_not_convert_is_one_line_naming_its_line(tmp_path: Path) -> None:
    text = HEAD + "k = " + "9" * 10_000 + "\n" + WORKER
    assert refusal(tmp_path, text) == (
        ", line 3: an integer of 10,000 digits does not fit in 64 bits (TOML integers are 64-bit)"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (HEAD + f"k = {2**63}\n" + WORKER, ": k: an integer of 19 digits"),
        (
            HEAD + WORKER + "params = { top_k = -99999999999999999999999 }\n",
            ": workers[0].params.top_k: an integer of 23 digits",
        ),
        (HEAD + "[run_budget]\nmax_calls = 1" + "0" * 30 + "\n" + WORKER, ": run_budget.max_calls"),
    ],
    ids=["k", "nested-param", "budget"],
)
def test_an_integer_outside_64_bits_is_refused_where_it_is(
    tmp_path: Path, text: str, problem: str
) -> None:
    message = refusal(tmp_path, text)
    assert message.startswith(problem)
    assert message.endswith("does not fit in 64 bits (TOML integers are 64-bit)")


def test_the_largest_64_bit_integer_is_still_a_number_like_any_other(tmp_path: Path) -> None:
    path = tmp_path / "pool.toml"
    path.write_text(HEAD + "[run_budget]\n" + f"max_calls = {2**63 - 1}\n" + WORKER)
    budget = load_pool_file(path).run_budget
    assert budget is not None and budget.max_calls == 2**63 - 1


@pytest.mark.parametrize("number", ["5e7", "1e12", "3.0"])
def test_a_float_is_never_an_integer(tmp_path: Path, number: str) -> None:
    assert refusal(tmp_path, HEAD + f"k = {number}\n" + WORKER) == (
        ": k: Input should be a valid integer"
    )


def test_a_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    text = HEAD + WORKER + "# " + "x" * MAX_POOL_FILE_BYTES + "\n"
    assert refusal(tmp_path, text) == (
        f": the file is over the {MAX_POOL_FILE_BYTES:,}-byte limit of a pool file"
    )
