"""Loaders of the math and multiple-choice benchmarks on their fixtures: MATH500, MMLU,
GPQA-Diamond, AIME25 and RLPR (fields, letters, option order, splits by content).

No test touches the network: loaders read ``tests/fixtures/<name>/`` (files in each
dataset's Hub format, written by ``tests/fixtures/make_fixtures.py``) or a fake Hugging
Face cache built in a temporary directory, with ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import csv

from loader_support import (
    FIXTURES,
    load,
    needs_datasets,
    read_jsonl,
    sha,
)

from conductor_gym.tasks import make_task_source
from conductor_gym.tasks.gpqa import option_permutation


def option_lines(question: str) -> dict[str, str]:
    """``{"A": text, ...}`` from a lettered question."""
    lines = [line for line in question.splitlines() if len(line) > 2 and line[1:3] == ") "]
    return {line[0]: line[3:] for line in lines}


# -- MATH500 ------------------------------------------------------------------------------


@needs_datasets
def test_math500_maps_fields(arrow_cache: str) -> None:
    rows = read_jsonl(FIXTURES / "math500" / "test.jsonl")
    tasks = load("math500", arrow_cache, split="all")
    assert [t.id for t in tasks] == [f"math500/{r['unique_id']}" for r in rows]
    first, row = tasks[0], rows[0]
    assert first.question == row["problem"] and first.reference == row["answer"]
    assert first.grader == "math" and first.domain == "math500"
    assert dict(first.metadata) == {
        "profile": "math500",
        "subject": row["subject"],
        "level": row["level"],
        "unique_id": row["unique_id"],
    }
    assert tasks[-1].reference == "\\frac{1}{3}"


@needs_datasets
def test_math500_split_follows_the_documented_hash(arrow_cache: str) -> None:
    rows = read_jsonl(FIXTURES / "math500" / "test.jsonl")
    by_hash = sorted(rows, key=lambda r: sha(f"math500:{r['unique_id']}"))
    expected = {
        "test": {f"math500/{r['unique_id']}" for r in by_hash[:2]},
        "val": {f"math500/{r['unique_id']}" for r in by_hash[2:4]},
        "train": {f"math500/{r['unique_id']}" for r in by_hash[4:]},
    }
    for split, ids in expected.items():
        source = make_task_source(
            "math500", data_dir=FIXTURES / "math500", split=split, cache_dir=arrow_cache
        )
        got = [t.id for t in source]
        assert set(got) == ids, split
        assert got == [t for t in (f"math500/{r['unique_id']}" for r in rows) if t in ids]
        assert source.name == ("math500" if split == "test" else f"math500[{split}]")


# -- MMLU ---------------------------------------------------------------------------------


@needs_datasets
def test_mmlu_maps_fields_and_letters(arrow_cache: str) -> None:
    tasks = load("mmlu", arrow_cache)
    assert [t.id for t in tasks] == [f"mmlu/test/{i}" for i in range(5)]
    first = tasks[0]
    assert first.question == (
        "Which planet is closest to the Sun?\n\nA) Venus\nB) Mercury\nC) Mars\nD) Earth\n\n"
        "Answer with the letter of the correct option."
    )
    assert (first.reference, first.grader, first.domain) == ("B", "choice", "mmlu")
    assert first.metadata["num_choices"] == 4 and first.metadata["subject"] == "astronomy"
    assert first.metadata["profile"] == "mmlu" and first.metadata["distractors"] == ["A", "C", "D"]
    assert [t.reference for t in tasks] == ["B", "C", "A", "D", "B"]
    train = make_task_source(
        "mmlu", data_dir=FIXTURES / "mmlu", split="train", cache_dir=arrow_cache
    )
    assert train.name == "mmlu[auxiliary_train]"
    assert [t.reference for t in train] == ["A", "B", "C", "D"]
    assert train[0].id == "mmlu/auxiliary_train/0" and train[0].metadata["subject"] == ""


# -- GPQA ---------------------------------------------------------------------------------


@needs_datasets
def test_gpqa_shuffles_options_per_item_and_keeps_the_answer(arrow_cache: str) -> None:
    with (FIXTURES / "gpqa" / "gpqa_diamond.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    tasks = load("gpqa-diamond", arrow_cache, data_dir=FIXTURES / "gpqa")
    assert [t.id for t in tasks] == [f"gpqa-diamond/{r['Record ID']}" for r in rows]
    for task, row in zip(tasks, rows, strict=True):
        options = option_lines(task.question)
        assert options[task.reference] == row["Correct Answer"].strip()
        wrong = {row[f"Incorrect Answer {i}"].strip() for i in (1, 2, 3)}
        assert {text for letter, text in options.items() if letter != task.reference} == wrong
        assert task.question.startswith(row["Question"].strip() + "\n\nA) ")
        order = option_permutation(row["Record ID"])
        assert task.reference == "ABCD"[order.index(0)]
        assert task.grader == "choice" and task.metadata["num_choices"] == 4
        assert task.metadata["subdomain"] == row["Subdomain"]
    assert "None" in option_lines(tasks[1].question).values()  # not read as a missing value
    assert len({t.reference for t in tasks}) > 1  # the answer is not always at the same letter
    shuffled = {
        t.id: t.question
        for t in load("gpqa-diamond", arrow_cache, data_dir=FIXTURES / "gpqa", shuffle=True, seed=9)
    }
    assert shuffled == {t.id: t.question for t in tasks}  # permutation follows the id only
    reseeded = load("gpqa-diamond", arrow_cache, data_dir=FIXTURES / "gpqa", option_seed=1)
    assert [t.question for t in reseeded] != [t.question for t in tasks]


def test_gpqa_permutation_is_a_function_of_the_record_id() -> None:
    perms = {tuple(option_permutation(f"rec{i}")) for i in range(40)}
    assert len(perms) > 10
    assert option_permutation("recX") == option_permutation("recX")
    assert sorted(option_permutation("recX")) == [0, 1, 2, 3]


# -- AIME ---------------------------------------------------------------------------------


@needs_datasets
def test_aime25_reads_both_parts(arrow_cache: str) -> None:
    tasks = load("aime25", arrow_cache)
    assert [t.id for t in tasks] == [f"aime25/{p}-{k}" for p in ("I", "II") for k in (1, 2, 3)]
    assert [t.reference for t in tasks] == ["6", "99", "1", "12", "24", "120"]
    assert tasks[0].question == "Find the invented quantity $1+2+3$."
    assert tasks[0].grader == "math" and tasks[3].metadata["part"] == "II"
    assert tasks[3].metadata["problem"] == 1
    part = make_task_source(
        "aime25", data_dir=FIXTURES / "aime25", part="II", cache_dir=arrow_cache
    )
    assert part.name == "aime25[II]" and [t.id for t in part] == [t.id for t in tasks[3:]]


# -- RLPR ---------------------------------------------------------------------------------


@needs_datasets
def test_rlpr_maps_fields_and_splits_by_content(arrow_cache: str) -> None:
    tasks = load("rlpr", arrow_cache, split="all")
    assert len(tasks) == 8 and tasks[0].id == "rlpr/0"
    assert tasks[0].question == "An invented car goes 60 km in 2 h. Its mean speed in km/h?"
    assert "Think it through" not in tasks[0].question  # the system turn is dropped
    assert (tasks[0].reference, tasks[0].grader) == ("30", "freeform")
    assert tasks[2].reference == "20%" and tasks[0].metadata["ability"] == "Physics"
    assert tasks[0].metadata["data_source"] == "WebInstruct-verified"
    keyed = sorted(tasks, key=lambda t: sha(f"rlpr:{t.question}\x00{t.reference}"))
    test = load("rlpr", arrow_cache)
    assert {t.id for t in test} == {t.id for t in keyed[:2]}
    train = load("rlpr", arrow_cache, split="train")
    assert {t.id for t in train} == {t.id for t in keyed[4:]}
