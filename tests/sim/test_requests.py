"""The request recogniser (conductor_gym.sim.requests) and its corpus (sim.request_corpus).

Thresholds, on English items (``corpus_report``; ``python -m conductor_gym.sim.request_corpus``
prints the tables), per reading (every on-task kind, literal, off-task, none, inverted):

* ``dev`` (tuned on): recall and precision >= 95 % (the issue's target);
* ``heldout`` (v3's, written before v3) >= 90 %; ``heldout-v31`` (written before v3.1 and
  never tuned on) >= 80 %: regression floors under what each measured when it was written
  (v3.1 on heldout-v31: solve 86.7 %, vote 90.0 %, check 94.8 %, the rest >= 95 %);
* ``heldout-v31b`` .. ``heldout-v31d`` (each written before a round of changes, measured
  once after it, its errors read since) >= 85 %; ``heldout-v31e`` >= 70 %: floors under
  what each measured, the lowest of which were v31e's inverted recall 72.7 % and off-task
  precision 83.3 % (issue 40's closing note has the tables);
* ``heldout-v31f`` (written before the rule-based round, its errors read during it) >= 90 %
  (after the round its lowest reading was none: 90.9 % precision, 93.8 % recall);
  ``heldout-v31g`` (written after that round, measured once, never tuned on) >= 85 %: its
  one measurement read solve 91.5 %, check 94.3 %, inverted 93.3 % recall and off-task
  85.1 % precision, the lowest figures; ``heldout-v31h`` (written after a second round,
  measured once) >= 80 %: its one measurement read solve 88.1 %, check 88.6 %, vote 92.0 %
  recall and solve 83.0 % precision, the lowest figures; ``heldout-v31i`` (written after
  v31h's measurement, committed before a third round, measured once after it) >= 85 %: its
  one measurement read inverted 90.9 %, solve 93.1 % recall and none 90.9 %, off-task
  94.1 % precision, the lowest figures (2 leaks of 52 off-task items); ``heldout-v31j``
  (written after v31i's measurement, committed before a fourth round, measured once after
  it) >= 75 %: its one measurement read none 80.0 %, check 91.4 % recall and literal
  83.3 %, none 85.7 %, off-task 87.2 % precision, the lowest figures (1 leak of 44);
  ``heldout-v31k`` (written after v31j's measurement, committed before a fifth round,
  measured once after it) >= 90 %: its one measurement read none 92.3 %, inverted 93.9 %
  recall and restate 94.1 %, solve 94.3 % precision, the lowest figures (1 leak of 49);
  ``heldout-v31l`` (written after v31k's measurement, committed before a sixth round,
  measured once after it; its errors tuned on in the seventh round) >= 90 %: its one
  measurement read none 82.4 %, literal 84.6 %, inverted 86.1 %, solve 88.1 % recall and
  off-task 64.9 %, solve 84.6 % precision (no leak of 41); after the seventh round its
  lowest figures are solve 97.6 % recall and 98.0 % precision, a tuned floor;
  ``heldout-v31m`` (written blind: its writer read no recogniser code; measured once,
  after the seventh round; its errors tuned on in the eighth round) >= 85 %: its one
  measurement read inverted 61.5 %, none 64.8 %, literal 66.7 %, solve 68.2 % recall and
  off-task 46.5 % precision (4 leaks of 50), the lowest figures of any split; after the
  eighth round its lowest figures are solve 86.4 % recall and 88.4 % precision, off-task
  88.9 % precision (2 leaks of 50), a tuned regression floor; ``heldout-v31n`` (written
  blind by another writer; measured once, after the eighth round) >= 60 %: its one
  measurement read inverted 65.9 %, restate 68.0 %, solve 77.1 % recall and off-task
  62.7 %, solve 75.5 % precision (6 leaks of 48); tuned on in the ninth round (after it:
  check 79.5 % recall, off-task 73.8 % precision, no leak), >= 73 %, a regression floor;
  ``heldout-v31o`` (written blind by a third writer; measured once, after the ninth round)
  >= 50 %: its one measurement read literal 50.0 %, inverted 60.0 %, check 62.5 %, none
  65.2 % recall and off-task 50.6 %, literal 62.5 % precision (1 leak of 45);
* off-task items read as acting on the problem faithfully (leaks): at most 1.5 % on dev,
  4 % on v3's and v3.1's held-out splits, 5 % on the later ones (22 to 54 off-task items
  each: one leak is 2 to 4.5 %; the blind ``heldout-v31m`` had 4 leaks of 50 at its one
  measurement, 2 since the eighth round), 3 % on the blind ``heldout-v31n`` (6 of 48 at
  its one measurement, none since the ninth round: one leak is 2.1 %), 5 % on the blind
  ``heldout-v31o`` (1 of 45)
  (v3 failed closed: 0; the open vocabulary reads ordinary language and lets a few
  through, listed in the closing note);
* an on-task request in another language is recognised or fails closed, never misread.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from importlib import resources

import pytest

from conductor_gym.errors import ConfigurationError
from conductor_gym.sim.request_corpus import SPLITS, CorpusReport, load_corpus, main
from conductor_gym.sim.requests import (
    ACTS_ON_PROBLEM,
    ON_TASK,
    prepare,
    recognise,
    recognise_subtask,
)
from conductor_gym.tasks import make_task_source

# the held-out splits as written before their recognisers; never edited to fit them
HELDOUT_SHA256 = {
    "heldout": "53682d779d7e1844fdcc1790d95271b2a6a8759ad59f44e368f189b41d64fae0",
    "heldout-v31": "3e88be08694a5ff39d8cfedae10376b4f3094555ba9653f29e92fe8d53be1d3d",
    "heldout-v31b": "3af19daa57c228e2892f55e7b130adb45e1ffd27091d861abf7a798a482cec32",
    "heldout-v31c": "ecca33bb9f3c03501c9de90ef4ddf02f5afcfc14f81155ff29afd8d28973f82f",
    "heldout-v31d": "0df44e63826973bb100b4325421d3eec26d5a724bfee9e95dc4ce5380d03c4a6",
    "heldout-v31e": "deaf53a4a667d41cb2c0efabaabad82ec20159a497f4cf1c45f7e1e4bb0e756d",
    "heldout-v31f": "4db312b6dc4d410d1952e2a5b4445f795a58e0d368520fc0e19d84ca3e0522b0",
    "heldout-v31g": "9385da97076270e164da16dd4d56d54c9cb5ba027c00296137feac22386f3162",
    "heldout-v31h": "3ad7e3fdae9f3d89cf7e472d8d1a06e618399c100e5c33dabcf0ce681022a1d5",
    "heldout-v31i": "124b574829f2a8a5e5e2db3c7425db6ddbad1af96457d1fe7ce62cfd84b3b968",
    "heldout-v31j": "8d98a596673f89d69087f5bd882202088c08597c59340bd3def4d6582ba40210",
    "heldout-v31k": "fd8ac1f1e8348e3180bbec32e3847dcc0772f88a7fe342d237748370896d2dc3",
    "heldout-v31l": "69abee369812d34b903d81ad064cfcac7db430b87ea0b5e8bd0ff238df862bba",
    "heldout-v31m": "0457f8bb3b2f4871c0948dc97578964514ef37635df71c4857c29239d7b3aa01",
    "heldout-v31n": "8d678b05168588757e0ff530e3c921ed5c39992cc26a9d456c047be44ccd4b6d",
    "heldout-v31o": "1575e5eb5e1f70b225fc7f47c18fe97b0eaf323aadac33994c645343152d3563",
}
FLOOR = {"dev": 0.95, "heldout": 0.90, "heldout-v31": 0.80, "heldout-v31e": 0.70}
FLOOR |= dict.fromkeys(("heldout-v31b", "heldout-v31c", "heldout-v31d"), 0.85)
LEAKS = {"dev": 0.015, "heldout": 0.04, "heldout-v31": 0.04}
LEAKS |= dict.fromkeys(("heldout-v31b", "heldout-v31c", "heldout-v31d", "heldout-v31e"), 0.05)
FLOOR |= {"heldout-v31f": 0.90, "heldout-v31g": 0.85, "heldout-v31h": 0.80}
LEAKS |= dict.fromkeys(("heldout-v31f", "heldout-v31g", "heldout-v31h"), 0.05)
FLOOR["heldout-v31i"] = 0.85
LEAKS["heldout-v31i"] = 0.05
FLOOR["heldout-v31j"] = 0.75
LEAKS["heldout-v31j"] = 0.05
FLOOR["heldout-v31k"] = 0.90
LEAKS["heldout-v31k"] = 0.05
FLOOR["heldout-v31l"] = 0.90  # tuned on in round 7: a regression floor
LEAKS["heldout-v31l"] = 0.05
# written blind; its one measurement: off-task 46.5 % precision, 4 leaks of 50; tuned on in
# round 8 (solve 86.4 % recall, off-task 88.9 % precision, 2 leaks): a regression floor
FLOOR["heldout-v31m"] = 0.85
LEAKS["heldout-v31m"] = 0.05
# written blind; its one measurement: off-task 62.7 % precision, 6 leaks of 48; tuned on in
# round 9 (check 79.5 % recall, off-task 73.8 % precision, no leak): a regression floor
FLOOR["heldout-v31n"] = 0.73
LEAKS["heldout-v31n"] = 0.03
FLOOR["heldout-v31o"] = 0.50  # written blind; its one measurement: literal 50.0 % recall
LEAKS["heldout-v31o"] = 0.05  # 1 leak of 45


@pytest.fixture(scope="module")
def reports() -> dict[str, CorpusReport]:
    from conductor_gym.sim.request_corpus import corpus_report

    return {split: corpus_report(split) for split in SPLITS}


@pytest.mark.parametrize("split", sorted(HELDOUT_SHA256))
def test_the_heldout_split_is_the_one_written_before_the_recogniser(split: str) -> None:
    data = resources.files("conductor_gym.sim") / "data" / f"requests-{split}.jsonl"
    assert hashlib.sha256(data.read_bytes()).hexdigest() == HELDOUT_SHA256[split]


def test_the_corpus_has_the_sizes_the_issue_asks_for() -> None:
    items = [item for split in SPLITS for item in load_corpus(split)]
    labels = Counter(item.label for item in items)
    for kind in (*sorted(ON_TASK), "literal"):
        assert labels[kind] >= 200, kind
    assert labels["offtask"] >= 400 and labels["none"] >= 40
    off_langs = Counter(item.lang for item in items if item.label == "offtask")
    for lang in ("fr", "de", "es", "zh"):
        assert off_langs[lang] >= 5, lang
    assert len(off_langs) >= 8
    tasky = re.compile(
        r"\b(?:check|verify|solve|compute|calculate|review|choose|pick|select|compare|vote"
        r"|repeat|restate|answer|confirm|fix|correct)\b|检查|解|vérifie|résous|löse|prüfe"
        r"|resuelve|verifica",
        re.IGNORECASE,
    )
    assert sum(bool(tasky.search(i.text)) for i in items if i.label == "offtask") >= 100
    heldout = Counter(item.label for item in load_corpus("heldout"))
    assert heldout["offtask"] >= 100 and min(heldout[k] for k in ON_TASK) >= 50


@pytest.mark.parametrize("split", SPLITS)
def test_few_off_task_requests_are_read_as_working_on_the_problem(
    reports: dict[str, CorpusReport], split: str
) -> None:
    off_task = reports[split].labels["offtask"]
    assert len(reports[split].leaks) <= LEAKS[split] * off_task, reports[split].leaks


@pytest.mark.parametrize("split", SPLITS)
def test_precision_and_recall_meet_the_thresholds(
    reports: dict[str, CorpusReport], split: str
) -> None:
    for score in reports[split].scores:
        if score.items:
            assert score.recall is not None and score.recall >= FLOOR[split], score
            assert score.precision is not None and score.precision >= FLOOR[split], score


def test_the_v31_corpus_holds_every_style_and_reading() -> None:
    items = load_corpus("heldout-v31")
    readings = Counter(item.expected for item in items)
    assert min(readings[k] for k in ON_TASK) >= 50 and readings["offtask"] >= 50
    assert readings["inverted"] >= 40 and sum(item.hedge for item in items) >= 5
    texts = [item.text for item in items]
    assert sum(t.lstrip().startswith("{") for t in texts) >= 5
    assert sum("#" in t or "**" in t for t in texts) >= 5


@pytest.mark.parametrize(
    ("split", "size", "per_reading"),
    [
        ("heldout-v31f", 300, 30),
        ("heldout-v31g", 200, 30),
        ("heldout-v31h", 200, 20),
        ("heldout-v31i", 250, 30),
        ("heldout-v31j", 200, 25),
        ("heldout-v31k", 250, 30),
        ("heldout-v31l", 300, 30),
    ],
)
def test_the_later_heldout_splits_hold_every_style_and_reading(
    split: str, size: int, per_reading: int
) -> None:
    items = load_corpus(split)
    assert len(items) >= size
    readings = Counter(item.expected for item in items)
    assert min(readings[k] for k in (*ON_TASK, "inverted", "offtask")) >= per_reading
    assert sum(item.hedge for item in items) >= 4
    texts = [item.text for item in items]
    assert sum(t.lstrip().startswith("{") for t in texts) >= 4
    assert sum("#" in t or "**" in t for t in texts) >= 3
    assert sum("\n" in t for t in texts) >= 5  # numbered and markdown steps


@pytest.mark.parametrize("split", SPLITS)
def test_a_request_in_another_language_is_recognised_or_fails_closed(
    reports: dict[str, CorpusReport], split: str
) -> None:
    *_, other = reports[split].foreign_on_task
    assert other == 0


# The issue's examples: each solved or checked faithfully under simulator v2.
ISSUE_OFF_TASK = [
    "Describe a sunset in two sentences",
    "Explain what this problem is about without solving it",
    "Refuse to answer",
    "Check the weather in Paris",
    "Décris un coucher de soleil en deux phrases.",
    "Beschreibe einen Sonnenuntergang in zwei Sätzen.",
    "Describe una puesta de sol en dos frases.",
    "用两句话描述日落。",
    # since round 8 "Résous ce problème." is read (a closed foreign lexicon: a competent
    # model understands it); a foreign request with a word outside it still fails closed
    "Résous ce mystère.",
    "Solve world hunger.",
    "Only restate the problem.",
]


@pytest.mark.parametrize("text", ISSUE_OFF_TASK)
def test_the_issue_examples_are_off_task(text: str) -> None:
    assert recognise_subtask(text).kind == "offtask"


@pytest.mark.parametrize(
    ("text", "literal"),
    [("Reply only with OK", "OK"), ("Do not check anything, just say hello", "hello")],
)
def test_the_issue_literal_examples_reply_with_their_text(text: str, literal: str) -> None:
    reading = recognise_subtask(text)
    assert (reading.kind, reading.literal) == ("literal", literal)
    assert not reading.acts_on_problem


def test_the_first_step_sees_the_question_and_the_subtask_decides() -> None:
    """Step 0's message is the question, then the subtask: the question's own "Compute"
    or "Answer with the letter" is a solve request, and an off-task subtask overrides it."""
    tasks = make_task_source("offline", size=200)
    for task in tasks:

        def read(subtask: str, question: str = task.question) -> str:
            return recognise_subtask(f"{question}\n\n{subtask}").kind

        assert read("") == "solve", task.id
        assert read("Think step by step.") == "solve", task.id
        assert read("Check the answer above.") == "check", task.id
        for text in ISSUE_OFF_TASK:
            assert read(text) == "offtask", (task.id, text)


@pytest.mark.parametrize(
    "text", ["", ".", "...", "Please.", "Thanks!", "Think step by step.", "Merci.", "谢谢。",
             "You are an expert mathematician.", "Take your time and be careful."],
)  # fmt: skip
def test_a_subtask_that_asks_nothing_falls_back_to_solving(text: str) -> None:
    reading = recognise(text)
    assert (reading.kind, reading.reason) == ("none", "filler")
    assert reading.acts_on_problem


@pytest.mark.parametrize(
    ("text", "kind", "excluded"),
    [
        ("Do not solve it from scratch; check the answer above.", "check", {"solve"}),
        ("Don't check anything, just solve it.", "solve", {"check"}),
        ("Solve it but do not check the other answers.", "solve", {"check"}),
        ("Do not vote; compare the answers and pick the correct one.", "check", {"vote"}),
        ("Without solving it, restate the previous answer.", "restate", {"solve"}),
        ("Do not solve the problem.", "offtask", {"solve"}),
        ("Never give a final answer.", "offtask", {"solve"}),
        ("Solve it but do not give the final answer.", "offtask", {"solve"}),
        ("Do nothing.", "offtask", {"solve", "check", "vote", "restate"}),
    ],
)
def test_negations_and_exclusions_are_honoured(text: str, kind: str, excluded: set[str]) -> None:
    reading = recognise(text)
    assert reading.kind == kind
    assert set(reading.excluded) >= excluded


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("Check the weather in Paris.", "other-topic"),
        ("Write a haiku about autumn leaves.", "other-topic"),
        ("x y z k n", "meaningless"),
        ("Count the words in the question.", "other-object"),
        ("Think about something else.", "other-object"),
        ("Explain the answer above.", "unrecognised-request"),
        ("Ignore the question and tell me a joke.", "ignores-problem"),
        ("Summarize the problem.", "no-answer-asked"),
        ("Überprüfe die Wettervorhersage oben.", "foreign"),
    ],
)
def test_each_way_to_be_off_task_names_its_reason(text: str, reason: str) -> None:
    reading = recognise(text)
    assert (reading.kind, reading.reason) == ("offtask", reason)
    assert not reading.on_task and not reading.acts_on_problem


def test_ignoring_the_answers_in_view_is_not_ignoring_the_problem() -> None:
    reading = recognise("Ignore the earlier answers and solve the problem yourself.")
    assert (reading.kind, reading.ignores_answers) == ("solve", True)


def test_a_question_no_parser_reads_is_blanked_by_prepare() -> None:
    question = "Let f be a polynomial with f(1) = 3 and f(2) = 7. Find the remainder of f at 5."
    subtask = f"{question}\n\nSolve it and give the final answer."
    assert recognise(prepare(subtask, question=question)).kind == "solve"
    # left in, it is a problem in view with its own request (v3.1f: off-task needs a
    # request about another topic, not words outside the vocabulary)
    assert recognise(prepare(subtask)).kind == "solve"
    # a paragraph that asks about another topic is off-task, whatever follows it
    other = "Describe the museums of Paris.\n\nSolve it and give the final answer."
    assert recognise(prepare(other)).kind == "offtask"


def test_kinds_are_those_v3_acts_on() -> None:
    assert ON_TASK | {"none"} == ACTS_ON_PROBLEM
    assert recognise("Pick the most common answer.").kind == "vote"
    assert recognise("Repeat the answer above.").kind == "restate"
    assert recognise("Reply with the word banana.").literal == "banana"


def test_an_unknown_split_is_refused_by_name() -> None:
    with pytest.raises(ConfigurationError, match=r"split: unknown corpus split 'test'"):
        load_corpus("test")


def test_the_report_command_prints_both_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    for split in SPLITS:
        assert f"split {split}:" in out
    assert out.count("(leaks):") == len(SPLITS)


def test_the_report_command_refuses_an_unknown_split(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test"]) == 2
    assert "split: unknown corpus split 'test'" in capsys.readouterr().err


def test_the_baselines_own_wordings_are_recognised_on_every_family() -> None:
    """The plans the library's own planners write are faithful requests; v3 must read them
    so (a misread one would be a silent under-payment of every baseline that uses it)."""
    from conductor_gym.agents import make_agent
    from conductor_gym.agents.reference import REFERENCE_PLANS

    from conductor_gym.core.env import ConductorEnv
    from conductor_gym.plan.parse import parse_plan

    specs = ["random", "reflect:2:5", "consensus:2:5", "moa"]
    specs += [f"reference:{name}" for name in REFERENCE_PLANS]
    misread: list[tuple[str, str, str]] = []
    for tasks in ("offline", "offline-ood"):
        env = ConductorEnv(tasks=tasks, max_steps=8)  # consensus:2:5 writes 6 steps, moa 8
        for index in range(8):  # two tasks of each of the four families
            observation, info = env.reset(options={"task_index": index})
            for spec in specs:
                agent = make_agent(spec, seed=index) if spec == "random" else make_agent(spec)
                plan = parse_plan(agent.act(observation, info), info["num_workers"], 8)
                for subtask in plan.subtasks:
                    kind = recognise_subtask(subtask, info["question"]).kind
                    if kind not in ACTS_ON_PROBLEM:
                        misread.append((spec, subtask[:60], kind))
    assert not misread


def test_a_word_before_a_blanked_problem_is_no_literal_reply() -> None:
    # "Compute" is the problem's own word when the conductor rewrote the problem's numbers
    assert recognise("Solve it and end with the final answer: Compute" + " " * 12 + ".").kind == (
        "solve"
    )
    assert recognise("Solve it and end with the final answer: banana.").kind == "literal"


def assert_reads(text: str, reading: str) -> None:
    """``text`` reads as ``reading``: a kind (not inverted), ``inverted`` (any on-task act,
    inverted) or ``hedge`` (a solve, or nothing asked, with a hedge)."""
    got = recognise_subtask(text)
    if reading == "inverted":
        assert got.inverted and got.kind in ON_TASK, got
    elif reading == "hedge":
        assert got.hedge and not got.inverted and got.kind in ("solve", "none"), got
    else:
        assert (got.kind, got.inverted) == (reading, False), got


# v3.1f's rules, each with samples in words none of the corpus splits use (the rule, not
# the phrase, is what is held).
@pytest.mark.parametrize(
    ("text", "reading"),
    [
        # a scene sentence is context beside an on-task request of its own paragraph
        ("You are a lighthouse keeper on a stormy night. Settle on your final answer.", "solve"),
        ("Describe a lighthouse on a stormy night.\n\nSettle on your final answer.", "offtask"),
        # an unknown verb whose object is the answer asks it; on an earlier one, hands it on
        ("Scribble down your final answer.", "solve"),
        ("Ferry the answer from step 2 across unchanged.", "restate"),
        # an answer in view handed on, or what an earlier step concluded
        ("Bring me what the previous worker decided.", "restate"),
        ("What was the result in the last response? That is your answer.", "restate"),
        # a share of the answers
        ("Give the answer the greatest number of responses landed on.", "vote"),
        ("Go with the one that more of the answers above back.", "vote"),
        # a question whether an answer in view is right, or of its quality
        ("Is the derivation above watertight?", "check"),
        ("Does the previous answer look right to you?", "check"),
        # a check beside solving with no answer in view is of one's own work
        ("Solve it and double-check every intermediate figure.", "solve"),
        # the scope of a negation reaches a vote cue; a doubt is no negation
        ("Review the answers above; do not simply side with the majority.", "check"),
        ("I am not sure the answer above is right. Can you check it?", "check"),
        # inversion by what qualifies the answer to give
        ("Submit an answer you believe to be false.", "inverted"),
        ("Give the response above that you trust the least.", "inverted"),
        ("Report whichever answer the majority did not pick.", "inverted"),
        ("Answer correctly or incorrectly, up to you.", "hedge"),
    ],
)
def test_the_v31f_rules_read_their_structure(text: str, reading: str) -> None:
    assert_reads(text, reading)


# The third and fourth rounds' rules, each with samples in words no corpus split uses.
@pytest.mark.parametrize(
    ("text", "reading"),
    [
        # whether an earlier step got it right; errors to flag in it; whether it holds
        ("Did the worker before you get the sum right? Give the final answer.", "check"),
        ("Flag every slip in the derivation above, then state the right result.", "check"),
        ("Decide whether the answer above fits the problem's conditions.", "check"),
        # a share named by how often it was given
        ("Give the value most frequently reported by the earlier workers.", "vote"),
        # an answer qualified by what one believes of it; the minority rejected
        ("Hand in an answer you are certain is false.", "inverted"),
        ("Report a value the majority of the solvers ruled out.", "inverted"),
        ("Give a result that conflicts with the previous step.", "inverted"),
        ("Answer accurately or not, as you wish.", "hedge"),
        # help with the problem, a wanted answer, a manner clause, a caution, manner only
        ("Could you assist me with this exercise? We want the final answer.", "solve"),
        ("Solve it as though you were tutoring a ten-year-old.", "solve"),
        ("Watch out for unit conversions, then solve.", "solve"),
        ("Remain patient and precise.", "none"),
        # a problem stated in the subtask's own words, and its unknown asked
        ("A pump fills 3 buckets in 4 minutes. How many in 20 minutes? Give the count.", "solve"),
        # the reader's own name puts no answer in view
        ("You are Model 2. Weigh each option and pick the correct letter.", "solve"),
        # another topic however the request is framed
        ("As a florist, arrange a bouquet for a wedding.", "offtask"),
        ("Solve my garden drainage problems.", "offtask"),
        ("Compare the options for a holiday rental.", "offtask"),
    ],
)
def test_the_later_rounds_rules_read_their_structure(text: str, reading: str) -> None:
    assert_reads(text, reading)


# The sixth round's rules (none and inverted), each with samples in words no corpus split
# uses, and the counter-examples that keep their reading.
@pytest.mark.parametrize(
    ("text", "reading"),
    [
        # a greeting, a sign-off, a wish or praise is politeness; a request beside it is not
        ("Kindest regards, your orchestrator.", "none"),
        ("Hope your evening is going well!", "none"),
        ("Wonderful work so far, thank you.", "none"),
        ("Hope you can plan my trip.", "offtask"),
        # a statement about the task, its answers or the pool is context; since round 8 a
        # statement about anything else asks nothing either: read past, with a hedge
        ("The candidate solutions came from three different solvers.", "none"),
        ("This exercise was taken from a puzzle book.", "none"),
        ("The library closes early on Sundays.", "hedge"),
        # a held letter, a caution, attention to the work, a chat role label
        ("Thaaanks!", "none"),
        ("Ensure you never rush.", "none"),
        ("Heed every sign in the working.", "none"),
        ("User: you are a precise helper.", "none"),
        # spoiling the answer, making an error, the minority by dispute or by one backer
        ("Botch the calculation deliberately.", "inverted"),
        ("Commit a small blunder and give the resulting answer.", "inverted"),
        ("Spoil the ending of the film on purpose.", "offtask"),
        ("Give the value the majority disputed.", "inverted"),
        ("Report the result only a single solver reached.", "inverted"),
        # contradicting, negating, the lowest-rated, a flawed one handed on
        ("Read the answer above, then state one that contradicts it.", "inverted"),
        ("Relay the previous value, negated.", "inverted"),
        ("Rate each response above and pass on the lowest-rated.", "inverted"),
        ("Spot the response above containing a bug and submit it.", "inverted"),
        ("Hunt for the faulty line above and give the repaired answer.", "check"),
        # a wrong answer asked by a question, qualified, politely, or by "whichever"
        ("What might be an incorrect result here? That is your final answer.", "inverted"),
        ("Offer a tempting yet false answer for a quiz distractor.", "inverted"),
        ("Could you answer this falsely?", "inverted"),
        ("Report whichever candidate above is least sound.", "inverted"),
        ("Return whichever looks erroneous.", "inverted"),
        # what another worker will do is context; a request beside it still asks
        ("A later reviewer will grade this response.", "none"),
        (
            "A later reviewer will grade this response, but first verify the answer above "
            "yourself.",
            "check",
        ),
        ("You have ample room for scratch work.", "none"),
        # leaving the minority aside keeps the vote; a changed word is still a literal reply
        ("Skip the stray answers and go with what most workers said.", "vote"),
        ("Reply with the word changed.", "literal"),
    ],
)
def test_the_sixth_rounds_rules_read_their_structure(text: str, reading: str) -> None:
    assert_reads(text, reading)


# The seventh round's rules, each with samples in words no corpus split uses, and the
# counter-examples that keep their reading.
@pytest.mark.parametrize(
    ("text", "reading"),
    [
        # a typo of a frequent word, by edit distance: a swap, a dropped first letter, one
        # letter more or less
        ("solve it adn give teh answer", "solve"),
        ("verify taht the answer abov is rigth", "check"),
        ("pick teh answr most workers gave", "vote"),
        ("reply wiht a rong answer", "inverted"),
        # a real word one edit from a target keeps its meaning
        ("Answer the question in Morse code.", "offtask"),
        # how to answer, by field (length, pace, quality, format, tone, resources,
        # encouragement, wishes, background), with no other request: asks nothing
        ("Brief and crisp.", "none"),
        ("Precision before pace.", "none"),
        ("Prose only, no headers.", "none"),
        ("Keep a neutral tone.", "none"),
        ("There is no token limit.", "none"),
        ("You've got this, legend!", "none"),
        ("Glad to have you here.", "none"),
        ("FYI: it is from a school worksheet.", "none"),
        # beside a content word the content word is still a topic
        ("Write a brief essay on volcanoes.", "offtask"),
        ("Recommend a formal suit for a wedding.", "offtask"),
        ("Plan my weekend in Paris.", "offtask"),
        # a share, a change or a failure that qualifies the answer to give is inverted
        ("Return the response that earned the fewest votes.", "inverted"),
        ("Overlook the consensus and give the value most solvers opposed.", "inverted"),
        ("Pass along the last result with one digit tweaked.", "inverted"),
        ("Forward the prior answer, edited to be false.", "inverted"),
        ("Write an answer so that it fails the checker.", "inverted"),
        ("Among the candidates above, select one that fails.", "inverted"),
        # a wrong answer to steer clear of, or not to end up with, is avoided: faithful
        ("Solve it and keep clear of the wrong shortcuts.", "solve"),
        ("Compute it so you never wind up with an incorrect total.", "solve"),
        ("Give the value that got the most votes.", "vote"),
        # an answer described as seeming right and not being so, an error let in, a
        # persona that answers wrongly kept in character
        ("Supply a lure: a number that appears valid but is wrong.", "inverted"),
        ("Let a careless slip creep in and report the answer it gives.", "inverted"),
        (
            "You are Captain Contrary, who always answers incorrectly. Remain in character.",
            "inverted",
        ),
        ("Remain in character as a chef and share a soup recipe.", "offtask"),
        # an answer to be the same as one in view, or named handed on, is a relay
        ("Your reply has to be the same as the answer given earlier.", "restate"),
        ("The preceding result, echoed verbatim.", "restate"),
        ("Re-emit the answer above.", "restate"),
        # a once-over of an answer in view; a share of more than one
        ("Give the previous solution one more once-over and decide if it stands.", "check"),
        ("Report the result at least three of the solvers reached.", "vote"),
        # a wrong answer named as a statement's subject is bait; a negated caution
        ("A typical wrong answer is 40, so be careful. Solve it.", "solve"),
        ("Never fall for it.", "none"),
        ("Don't paint the fence.", "offtask"),
        # thinking or encouragement with no answer asked is a manner; with one, it solves
        ("Ponder it over slowly.", "none"),
        ("You can do this!", "none"),
        ("Reason it through, then give the result.", "solve"),
        ("Let us ponder about this first.", "none"),
        ("Remember: quality matters.", "none"),
        # the quality of a known word ("-ness") is a manner; its object is still a topic
        ("Clearness above all.", "none"),
        ("Describe the softness of silk.", "offtask"),
        # the asker's own exam, school or course is a topic; a praised off-task object
        # and a real word one changed letter from a target keep their reading
        ("Please grade my quiz from school.", "offtask"),
        ("Good luck on our exam tomorrow, tell me a joke.", "offtask"),
        ("Draft an excellent wedding toast.", "offtask"),
        ("Post the parcel to my sister.", "offtask"),
        # literal replies framed by "write back" or "the phrase"
        ("Write back the phrase 'on it'.", "literal"),
    ],
)
def test_the_seventh_rounds_rules_read_their_structure(text: str, reading: str) -> None:
    assert_reads(text, reading)


# The eighth round's rules (off-task only on positive evidence; inverted by goal; acts by
# meaning), each with samples in words no corpus split uses, and the counter-examples that
# keep their reading.
@pytest.mark.parametrize(
    ("text", "reading"),
    [
        # round 8, off-task needs positive evidence: context, a constraint, a manner, a note,
        # what others will do, decoration and template tokens ask nothing; a statement about
        # anything else asks nothing either (read past, with a hedge)
        ("Fyi the person asking is a nurse.", "none"),
        ("Stick to imperial measures throughout.", "none"),
        ("Suppose every rate stays constant.", "none"),
        ("Write in a calm, reassuring voice.", "none"),
        ("Note, the figures are approximate.", "none"),
        ("The reviewers will compare answers afterwards.", "none"),
        ("Step 2 of the pipeline will merge everything.", "none"),
        ("👍👍", "none"),
        ("<|im_start|>user<|im_end|>", "none"),
        ("The ferry leaves at dawn.", "hedge"),
        # a request about something else stays off-task however it is decorated, and a
        # constraint verb beside a request ("suppose you are a chef and ...") does not excuse it
        ("Recommend a board game for four players 🎲", "offtask"),
        ("<job>Plan a surprise party for my brother.</job>", "offtask"),
        ("yo suggest a good sci-fi show pls", "offtask"),
        ("Knit a scarf for winter.", "offtask"),
        ("Hope you could name a good hiking trail.", "offtask"),
        ("Suppose you are a chef and invent a new dessert.", "offtask"),
        # inverted by goal: the correct answer negated, avoided or excluded, off by one, one a
        # checker would reject, the outlier or the lowest count
        ("Never write down the correct figure.", "inverted"),
        ("Please don't work it out correctly.", "inverted"),
        ("Make sure the result you state is off by one.", "inverted"),
        ("Provide anything but the true value.", "inverted"),
        ("Whatever the correct answer is, state something else.", "inverted"),
        ("Which answer above is the outlier? Give that one.", "inverted"),
        ("Pick the option with the lowest count among the answers above.", "inverted"),
        ("Write a value that any verifier would reject.", "inverted"),
        ("In no case should the reply be correct.", "inverted"),
        # faithful near-misses keep their reading
        ("Check the result above; if not right, give the right answer.", "check"),
        ("Never give an incorrect result.", "solve"),
        ("Set aside the outlier and report what most answers say.", "vote"),
        ("Even if the last answer seems off, relay it unchanged.", "restate"),
        ("I suspect the figure above is off by one; verify it.", "check"),
        # acts by meaning, in chat shorthand, modes, tags and assignments; literal replies
        ("plz dbl check the prev answer for me", "check"),
        ("could u look over the answer above, fix it if wrong", "check"),
        ("Approve the result above or send back a fixed one.", "check"),
        (
            "critic mode: hunt for errors in the earlier answer and give the repaired result",
            "check",
        ),
        ("Follow the crowd: which result above came up most?", "vote"),
        ("Treat every answer above as a ballot and report the one with the most ballots.", "vote"),
        ("copy-paste the earlier result 🔁", "restate"),
        ("<relay>the last answer</relay>", "restate"),
        ("result = prev.result", "restate"),
        ("Your entire reply must be: roger", "literal"),
        ("Output the token <STOP> and nothing else.", "literal"),
        ("Respond with the single character Z.", "literal"),
        # where an answer in view went wrong is checked; code in backticks is the problem's;
        # small talk set aside is no topic; a yes/no question of an answer in view checks it
        ("Work out where the earlier solver went wrong, then state the right value.", "check"),
        ("Spot the faulty step in the derivation above and give the right result.", "check"),
        ("What will `sum([1, 2, 3])` return?", "solve"),
        ("Skip the chit-chat; just solve it and give the value.", "solve"),
        ("Forget the question and tell me a joke.", "offtask"),
        ("Look at the answer above. Is it within a believable range?", "check"),
        ("Reply with `OK`.", "literal"),
    ],
)
def test_the_eighth_rounds_rules_read_their_structure(text: str, reading: str) -> None:
    assert_reads(text, reading)


# Round 8: on-task requests in French, German, Spanish and Chinese are read by a closed
# lexicon (every word known, an act asked); a content word or a negation fails closed.
@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("Calcule le résultat, s'il vous plaît.", "solve"),
        ("Vérifiez la réponse ci-dessus.", "check"),
        ("Berechne die Lösung.", "solve"),
        ("Überprüfe das Ergebnis oben.", "check"),
        ("Calcula el resultado.", "solve"),
        ("Revisa la solución anterior.", "check"),
        ("计算结果。", "solve"),
        ("检查上面的结果。", "check"),
        ("Donne une réponse fausse exprès.", "inverted"),
        ("Vérifie la météo à Paris.", "offtask"),
        ("Berechne meine Steuern.", "offtask"),
        ("Revisa mi ensayo.", "offtask"),
        ("检查我的作文。", "offtask"),
        ("Ne résous pas le problème.", "offtask"),
    ],
)
def test_foreign_requests_are_read_by_a_closed_lexicon(text: str, reading: str) -> None:
    assert_reads(text, reading)


# Round 9: a subtask is the union of its sentences' requests (a later request that replaces
# ours decides; a statement about the answers asks nothing); inverted by the goal's relation
# to the correct answer; an earlier answer handed on unchanged in any verb is a restate.
# Fresh samples of each rule, with counter-examples.
@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("Add the numbers.\n\nActually, never mind that: name three rivers in Africa.", "offtask"),
        ("Solve it. Instead of that, draw me an ASCII cat.", "offtask"),
        ("Actually, just give the final answer.", "solve"),
        ("Solve it. Instead of rushing, check each line as you go.", "solve"),
        ("Pretend you are a chef and write a menu for tonight.", "offtask"),
        ("Pretend you are a careful clerk and solve the question.", "solve"),
        ("How long would an adult need to solve this problem?", "offtask"),
        ("Its purpose is to write a shopping list with twelve items.", "offtask"),
        ("Skip that sentence about the holiday and solve the actual question.", "solve"),
        ("Give an answer close to the correct one but not equal to it.", "inverted"),
        ("Return a value that is a bit off from the true answer.", "inverted"),
        ("Of the answers above, output the one farthest from the truth.", "inverted"),
        ("Reply with an answer that would be marked wrong.", "inverted"),
        ("Give the answer above, divided by two.", "inverted"),
        ("Copy the earlier answer but swap its digits.", "inverted"),
        ("Check whether the answer above is far from the true answer; fix it if so.", "check"),
        ("Copy the prior answer as it is.", "restate"),
        ("Give the earlier worker's result word for word.", "restate"),
        ("Write the previous reply back without editing it.", "restate"),
        ("Two of the models have replied, and they agree.", "none"),
        ("At least one response above is wrong.", "none"),
        ("At least one response above is wrong. Find it and give the right value.", "check"),
        ("The answer is 12. Confirm it.", "check"),
    ],
)
def test_the_ninth_rounds_rules_read_their_structure(text: str, reading: str) -> None:
    assert_reads(text, reading)


# Round 9: Portuguese, Italian and Japanese lexicons, wider function words in each; the
# smallest share is an inverted vote, a mistake asked a wrong answer; a content word still
# fails closed, so nothing about another topic is read as on-task.
@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("Calcule o resultado, por favor.", "solve"),
        ("Verifique a solução acima e corrija se estiver errada.", "check"),
        ("Copie a resposta anterior sem alterações.", "restate"),
        ("Calcola il risultato, per favore.", "solve"),
        ("Controlla la risposta precedente.", "check"),
        ("Dammi la risposta meno frequente.", "inverted"),
        ("答えを計算してください。", "solve"),
        ("前の答えを確認してください。", "check"),
        ("一番多い答えを出してください。", "vote"),
        ("わざと間違った答えを書いてください。", "inverted"),
        ("ありがとうございます。", "none"),
        ("Escreva um poema sobre o mar.", "offtask"),
        ("Scrivi una poesia sul mare.", "offtask"),
        ("俳句を書いてください。", "offtask"),
        ("Não resolva o problema.", "offtask"),
        ("Sbaglia apposta: dai una risposta sbagliata.", "inverted"),
    ],
)
def test_the_ninth_round_reads_more_languages_by_a_closed_lexicon(text: str, reading: str) -> None:
    assert_reads(text, reading)
