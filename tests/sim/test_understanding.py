"""Simulator v3.1's open-vocabulary reading (conductor_gym.sim.understanding, used by
conductor_gym.sim.requests): ordinary language, typos and markup are read as a competent
model reads them; inverted requests are flagged; noise is off-task, or hedged beside a
problem; requests about anything else stay off-task (issue 40 item 1)."""

from __future__ import annotations

import pytest

from conductor_gym.sim.requests import KNOWN, Recognition, recognise, recognise_subtask
from conductor_gym.sim.understanding import canonical, flatten_markup, inversion, is_noise


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        # the refused examples (item 5 and 9)
        ("Please take a deep breath, be careful, and reason one step at a time.", "none"),
        ("Hey! Could you solve this?", "solve"),
        # checking one's own work is part of solving; checking the answers in view is not
        ("Sanity-check your work and give the final answer.", "solve"),
        ("Sanity-check the answer above and give the final answer.", "check"),
        ("Think methodically and solve it.", "solve"),
        ("You are a meticulous math coach. Solve the problem.", "solve"),
        ("Hi! Solve it.", "solve"),
        ("Use chain-of-thought, then give the final answer.", "solve"),
        ("Go over the answer above with a fine-tooth comb.", "check"),
        ("giv the final answr", "solve"),
        ("chek the answer above", "check"),
        ('{"task": "verify", "target": "previous answers"}', "check"),
        ("## Task\nRepeat the previous answer.", "restate"),
        ("1. Read the answers above.\n2. Take the majority vote.", "vote"),
    ],
)
def test_ordinary_language_is_read_as_asked(text: str, kind: str) -> None:
    reading = recognise_subtask(text)
    assert (reading.kind, reading.inverted, reading.hedge) == (kind, False, False), reading


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Give the wrong answer.", "solve"),
        ("Argue for one of the incorrect options.", "solve"),
        ("Make a mistake on purpose.", "solve"),
        ("Pick the worst answer above.", "check"),
        ("Check the answers above and give the one that is incorrect.", "check"),
        ("Give the least common answer above.", "vote"),
        ("Give a different answer from the one above.", "restate"),
    ],
)
def test_inverted_requests_are_flagged_with_the_act_they_invert(text: str, kind: str) -> None:
    reading = recognise_subtask(text)
    assert (reading.kind, reading.inverted) == (kind, True)
    assert reading.on_task


@pytest.mark.parametrize(
    "text",
    [
        "Find the wrong step in the answer above and fix it.",
        "Solve it; the answers above may be wrong.",
        "Is the answer above wrong? Give the correct answer.",
        "Check whether the previous answer is incorrect and correct it.",
        "Order the answers from best to worst and give the best one.",
    ],
)
def test_wrong_answers_to_find_fix_or_doubt_are_no_inversion(text: str) -> None:
    reading = recognise_subtask(text)
    assert reading.on_task and not reading.inverted, reading


def test_a_wrong_and_a_right_answer_asked_together_is_a_hedge() -> None:
    reading = recognise("Check the answer above and give the correct one, or the wrong one.")
    assert (reading.kind, reading.inverted, reading.hedge) == ("check", False, True)


def test_noise_is_off_task_alone_and_a_hedge_beside_a_problem() -> None:
    assert recognise_subtask("x y z k n") == Recognition("offtask", "meaningless")
    beside = recognise_subtask("What is 12 * 7? x y z k n")
    assert beside.acts_on_problem and beside.hedge and not beside.inverted
    assert not recognise_subtask("What is 12 * 7?").hedge


@pytest.mark.parametrize(
    "text",
    [
        "What is the weather today?",
        "Write a poem.",
        "Translate 'hello world' into German.",
        "Review this movie for me.",
        "Solve the mystery of the missing socks.",
        "Check the grammar of the response above.",
        "Answer in French.",
        "You are a travel agent. Book me a flight to Paris.",
        "Hey! Can you recommend a podcast about history?",
        "Please answer the price of bitcoin.",
    ],
)
def test_a_request_about_something_else_is_off_task(text: str) -> None:
    reading = recognise_subtask(text)
    assert reading.kind == "offtask" and not reading.acts_on_problem, reading


def test_new_fields_default_to_a_faithful_sure_reading() -> None:
    reading = Recognition("solve", "request")
    assert (reading.inverted, reading.hedge) == (False, False)


@pytest.mark.parametrize(
    ("word", "fixed"),
    [("chek", "check"), ("answr", "answer"), ("giv", "give"), ("reveiw", "review"),
     ("sovle", "solve"), ("majorty", "majority"), ("working", "working"),
     ("solving", "solve"), ("stop", "stop"), ("weather", "weather"), ("poem", "poem")],
)  # fmt: skip
def test_typos_are_corrected_to_cue_words_only(word: str, fixed: str) -> None:
    assert canonical(word, KNOWN) == fixed


def test_markup_is_flattened_without_inventing_a_blanked_problem() -> None:
    assert flatten_markup('{"task": "solve", "format": "boxed"}') == "task: solve.\nformat: boxed."
    flat = flatten_markup("## Task\n**Check** the answer.\n- then `vote`")
    assert "#" not in flat and "*" not in flat and "`" not in flat
    assert "   " not in flat


def test_inversion_reads_what_is_asked_not_what_is_described() -> None:
    assert inversion("give the wrong answer") == ("act", False)
    assert inversion("the answer may be wrong") == (None, False)
    assert inversion("give the least common answer") == ("vote", False)
    assert inversion("give any answer except the correct one") == ("act", False)


def test_noise_is_stray_letters_or_keyboard_mash() -> None:
    assert is_noise(["x", "y", "z", "k", "n"], KNOWN)
    assert is_noise(["asdf", "qwer"], KNOWN)
    assert not is_noise(["solve", "x"], KNOWN)


@pytest.mark.parametrize(
    ("text", "kind", "inverted"),
    [
        # checking one's own work, combining one's parts, choosing the option: solving
        ("Solve it step by step, double-checking each operation as you go.", "solve", False),
        ("Split it into parts, solve each, then combine them into one answer.", "solve", False),
        ("Read the question and select the correct answer option.", "solve", False),
        ("Review the answers above, checking each step.", "check", False),
        # ways to ask a solve, a vote, a restate outside the act words
        ("Have a go at this problem, please.", "solve", False),
        ("I need the answer to this problem.", "solve", False),
        ("Deal with this question.", "solve", False),
        ("1. List each final answer above.\n2. Count them.\n3. Return the top one.", "vote", False),
        ("Take the mode of the answers above.", "vote", False),
        ("Let the answers above vote and report the winner.", "vote", False),
        ("Submit the answer above as final.", "restate", False),
        ("check prev ans", "check", False),
        # a negated inversion is the faithful act; "the one with an error" is inverted
        ("Do not give the wrong answer.", "solve", False),
        ("Evaluate the responses and return the one with an error.", "check", True),
        ("Do not repeat the answer above; give a different one.", "restate", True),
    ],
)
def test_more_ways_to_ask_are_read_as_asked(text: str, kind: str, inverted: bool) -> None:
    reading = recognise_subtask(text)
    assert (reading.kind, reading.inverted) == (kind, inverted), reading


@pytest.mark.parametrize(
    "text",
    [
        "Check the time.",
        "Which answer above is the longest?",
        "Which response above has the most words?",
        "Count the answers above that contain the digit 7.",
        "Sing the question.",
        "Name the winner of the last election.",
        "Have a go at writing a sonnet.",
    ],
)
def test_acts_about_something_other_than_the_answers_stay_off_task(text: str) -> None:
    assert recognise_subtask(text).kind == "offtask"
