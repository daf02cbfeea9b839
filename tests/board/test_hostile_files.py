"""Small submission files made to take validation down are refused, each with its own
message, in bounded time and memory (security issue, items 8 and 10).

The submission edited here is a real ``evaluate`` run (best-single, two tasks per source,
one repeat: cheap, and accepted as it is). Each case is the attack the issue reports,
written small: a prompt template with a format spec (``{question:>100000000}`` padded
every prompt to 100 MB), ``repeats`` as a float or an integer too large to enumerate (a
2 GB list before the refusal), a 10,000-digit integer (Python's own ``ValueError``
escaped as a traceback) and an oversized response cache. Memory is measured with
``tracemalloc``; nothing here reads a clock.
"""

from __future__ import annotations

import copy
import datetime
import json
import tracemalloc
from pathlib import Path

import pytest

from conductor_gym.bench.evaluate import evaluate
from conductor_gym.board.submissions import make_submission, validate_file, validate_submission
from conductor_gym.board.untrusted import (
    MAX_CACHE_BYTES,
    MAX_INT_DIGITS,
    UntrustedInputError,
    parse_json,
    reading_error,
)
from conductor_gym.core.prompts import PromptTemplates

Json = dict[str, object]


@pytest.fixture(scope="module")
def genuine() -> Json:
    run = evaluate("best-single", "offline", repeats=1, limit=2, progress=False)
    submission = make_submission(
        run,
        name="Best single",
        authors=["tests"],
        training_data="none",
        pool_setting="simulated",
        date=datetime.date(2026, 1, 1),
    )
    data: Json = submission.model_dump(mode="json")
    assert validate_submission(copy.deepcopy(data)).ok
    return data


def errors(data: Json, **kwargs: object) -> list[str]:
    return [str(problem) for problem in validate_submission(data, **kwargs).errors]  # type: ignore[arg-type]


def results(data: Json) -> dict[str, object]:
    inner = data["results"]
    assert isinstance(inner, dict)
    return inner


# ------------------------------------------------------------------------------ numbers


@pytest.mark.parametrize("repeats", [5e7, 1e12, 1.0])
def test_a_float_is_not_a_count(genuine: Json, repeats: float) -> None:
    data = copy.deepcopy(genuine)
    results(data)["repeats"] = repeats
    assert errors(data) == ["schema: results.repeats: Input should be a valid integer"]


def test_a_float_where_any_integer_is_expected_is_refused(genuine: Json) -> None:
    data = copy.deepcopy(genuine)
    episodes = results(data)["episodes"]
    assert isinstance(episodes, list)
    episodes[0]["steps"] = 2.0
    assert errors(data) == ["schema: results.episodes[0].steps: Input should be a valid integer"]


def test_a_huge_integer_count_is_refused_without_building_it(genuine: Json) -> None:
    data = copy.deepcopy(genuine)
    results(data)["repeats"] = 50_000_000  # enumerated, its repeat indices took 2 GB
    tracemalloc.start()
    try:
        found = errors(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found == [
        "repeats: repeats=50000000: the board allows at most 64",
        "episodes: 99999998 missing episode(s) (too many to list)",
    ]
    assert peak < 64 * 2**20, f"validation peaked at {peak:,} bytes"
    results(data)["repeats"] = 10**12  # enumerated, a MemoryError traceback
    assert errors(data)[0] == "repeats: repeats=1000000000000: the board allows at most 64"


def test_a_10000_digit_integer_is_one_line_of_rejection(genuine: Json, tmp_path: Path) -> None:
    path = tmp_path / "entry.json"
    text = json.dumps(genuine).replace('"repeats": 1', '"repeats": ' + "9" * 10_000, 1)
    path.write_text(text)
    assert [str(p) for p in validate_file(path).errors] == [
        f"file: an integer of 10,000 digits: at most {MAX_INT_DIGITS} are read"
    ]
    path.write_text(json.dumps(genuine).replace('"repeats": 1', '"repeats": 18446744073709551616'))
    assert "repeats=18446744073709551616: the board allows at most 64" in str(
        validate_file(path).errors
    )


def test_the_bounded_reader_and_the_words_for_an_unbounded_one() -> None:
    with pytest.raises(UntrustedInputError, match="JSON nested deeper than 32 levels"):
        parse_json("[" * 100_000 + "]" * 100_000)
    with pytest.raises(UntrustedInputError, match="an integer of 21 digits: at most 20"):
        parse_json(b'{"seed": -' + b"1" * 21 + b"}")
    assert parse_json('{"seed": 18446744073709551615, "x": 5e7}') == {
        "seed": 2**64 - 1,
        "x": 5e7,
    }
    try:
        json.loads("[" * 100_000 + "]" * 100_000)
    except RecursionError as exc:
        assert reading_error(exc) == "JSON nested too deep to read"
    try:
        json.loads("9" * 5000)
    except ValueError as exc:
        assert reading_error(exc) == "an integer of more than 4300 digits: not read"
    assert reading_error(ValueError("something else")) is None


# ---------------------------------------------------------------------------- templates


@pytest.mark.parametrize(
    ("template", "problem"),
    [
        ("{question:>100000000} {worker_list}", "field {question:>100000000} has a format spec"),
        ("{question:{max_steps}} {worker_list}", "field {question:{max_steps}} has a format spec"),
        ("{question!r} {worker_list}", "field {question!r} has a conversion"),
        ("{question.upper} {worker_list}", "field {question.upper} is not a plain name"),
        ("{question[0]} {worker_list}", "field {question[0]} is not a plain name"),
        ("{0} {question} {worker_list}", "field {0} is not a plain name"),
    ],
)
def test_a_template_takes_plain_fields_only(template: str, problem: str) -> None:
    with pytest.raises(ValueError) as caught:
        PromptTemplates(conductor=template)
    assert str(caught.value).startswith(f"PromptTemplates.conductor: {problem}")
    assert str(caught.value).endswith("templates take plain {name} fields only")


def test_a_recorded_format_spec_is_refused_by_the_replay_not_run(genuine: Json) -> None:
    data = copy.deepcopy(genuine)
    env = results(data)["env_kwargs"]
    assert isinstance(env, dict)
    env["templates"] = {"conductor": "{question:>100000000} {worker_list}"}
    tracemalloc.start()
    try:
        report = validate_submission(data)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert report.placement is not None and report.replay is None
    assert (
        "unverified: env_kwargs.PromptTemplates.conductor: field {question:>100000000} has a "
        "format spec; templates take plain {name} fields only"
    ) in report.placement.reasons
    assert peak < 64 * 2**20, f"validation peaked at {peak:,} bytes"


# ------------------------------------------------------------------------ the cache file


def test_a_response_cache_over_the_size_limit_is_refused_unread(
    genuine: Json, tmp_path: Path
) -> None:
    data = copy.deepcopy(genuine)
    metadata = data["metadata"]
    assert isinstance(metadata, dict)
    metadata["response_cache"] = "big.sqlite"
    with (tmp_path / "big.sqlite").open("wb") as handle:
        handle.truncate(MAX_CACHE_BYTES + 1)  # sparse: no disk used
    assert errors(data, folder=tmp_path) == [
        f"metadata: response_cache 'big.sqlite' is {MAX_CACHE_BYTES + 1:,} bytes, over the "
        f"{MAX_CACHE_BYTES:,}-byte limit"
    ]
