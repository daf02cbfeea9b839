r"""What a subtask asks (the request recogniser of simulator v3.1).

A worker acts on what a competent model would take its subtask to ask, however it is
phrased; a request about something else gets a reply with no final answer; a subtask that
asks nothing (empty, punctuation, politeness, a persona, "think step by step") falls back
to solving. v3 read a closed vocabulary (one word outside it made a request off-task);
v3.1 reads an open one (:mod:`conductor_gym.sim.understanding`). (v3's, frozen so that
its results re-play, is ``sim/requests_v3.py``.)

Input: the worker's own subtask with the problem statements blanked out (:func:`prepare`).
A run of three or more blanks inside a line is read as the blanked problem ("Compute ___.").

How a text is read (:func:`recognise`; cached, a few regular expressions per sentence):

1. **Language.** Letters outside ASCII make the text foreign: a short list of foreign
   politeness words is filler; an on-task request in French, German, Spanish or Chinese
   (round 9: Portuguese, Italian and Japanese too) whose every word is in a closed
   lexicon is read (round 8,
   :mod:`~conductor_gym.sim.foreign_requests`: "Résous le problème.", "验证上面的答案。");
   any other foreign text is off-task (``reason="foreign"``: it fails closed), and so is a
   sentence whose function words are mostly of another language ("Beschreibe bitte das
   Wetter in Berlin").
2. **Markup.** JSON-style subtasks become ``key: value`` sentences, markdown marks spaces.
3. **Literal replies** ("Reply with the word X", "Say \"done\"") are found on the raw
   sentence.
4. Numbers, ``\boxed{}`` answers and blanked problems become placeholder words; the text is
   split into sentences; each word is brought to the form the act patterns know
   (:func:`~conductor_gym.sim.understanding.canonical`: a misspelt cue word corrected, an
   act verb's ``-ing`` form). In each sentence the **acts** asked for are found by what is
   asked of which object: ``solve``, ``check`` (check, verify, review, choose, pick the
   best, which of the answers, is it right), ``vote`` (majority, most common, consensus),
   ``restate`` (repeat, relay, copy the answer above) and ``describe`` (explain, restate,
   translate ... *the problem*: a request that asks no answer); a terse sentence of an act
   verb and answer words ("verify prior", "task: restate", "check prev ans") is that act.
   Phrases in another act's words that ask to solve are read as solving: checking one's
   own work ("double-checking each step as you go"), combining one's parts into one answer,
   choosing the correct option with no answers in view; so is a listed solving verb on the
   problem ("handle / deal with / take on this problem": a closed list, as "sing the
   question" is no request to solve). Listing, counting or reading the answers is a
   preparatory step before the step's act.
5. **Open vocabulary, read by object.** Words outside :data:`KNOWN` (v3's
   :data:`VOCABULARY` plus manner, persona, politeness and markup words) are read past when
   they are manner ("methodically"), short or a sentence's persona ("You are a veteran
   olympiad coach"). A *content* word makes the request off-task (``other-topic``) when the
   sentence asks an act whose object is not the problem, its answers or the work (no such
   noun comes before the first content word: "Check the weather", "Check the grammar of the
   response"; or the reply is to be written in or as it: "Answer in French"), or asks
   something with no act ("Write a poem", "What is the capital of France?"). A sentence of
   content words that asks nothing is a stray remark: read past beside an act; alone, a
   hedged ``none`` beside a problem, else off-task. So are keyboard mash and stray letters
   ("x y z k n": ``reason="meaningless"``). A request in problem words about something
   else is ``other-object`` ("the words of the question", "another problem"); a sentence
   with no act that starts with a request verb (:data:`NO_ACT_IMPERATIVES`: "Count the
   numbers", "Explain the answer above") is ``unrecognised-request`` unless an on-task act
   is asked beside it (a competent model does both). An act whose object is the time, the
   weather, the instructions or the style ("Check the time": ``other-topic``), or a surface
   property of the answers with no correctness asked ("Which answer above is the
   longest?": ``other-object``) is off-task.
6. **Negations and exclusions.** An act after *not / never / without / instead of / rather
   than / no need to / refuse to / avoid* (within three words, same clause) is excluded,
   unless its object is a wrong answer ("do not give a wrong answer" asks the faithful act)
   or the negation is the asker's ("I can't figure this out");
   "do nothing", "give no answer" and "only restate the problem" exclude every act.
   "Ignore the problem" is off-task; "ignore the earlier answers" only sets
   :attr:`Recognition.ignores_answers`.
7. **Inversion** (:func:`~conductor_gym.sim.understanding.inversion`): a wrong, incorrect,
   worst or least likely answer as the thing to give (not to find, fix, avoid or doubt),
   an error on purpose, the minority answer, an answer other than the one shown: the act is
   flagged :attr:`Recognition.inverted` (vote for the minority, restate for a changed
   answer, else the act asked or solve). Asked beside a faithful output ("the correct one,
   or the wrong one") it is no inversion but a :attr:`Recognition.hedge`.
7b. **Rules by structure (v3.1f)**, read beside the act patterns: off-task needs positive
   evidence of another topic; a sentence that asks no act of ours (a scene, a persona, a
   remark in words outside the vocabulary) is context when another sentence of its
   paragraph asks an on-task act (the question's own instructions, a paragraph of their
   own, do not excuse a request about something else); a wh-question about something
   else is off-task at once. An answer in view handed on is a ``restate`` (a transfer verb
   whose object is an earlier answer, or what an earlier step concluded); a share of the
   answers (most / more of them agree, share, gave; the broadest support; more than half)
   is a ``vote``; a question whether an answer in view is right, or of its quality ("is
   the reasoning above airtight?"), and "do you agree" beside one are a ``check``; a check
   beside solving with no answer in view anywhere is of one's own work (``solve``). A
   clause-initial verb outside the vocabulary whose object is the answer asks it ("lock
   in your final answer"); participles, prefixes and an unknown possessor of the question
   ("the user's question") are no topic. The scope of a negation runs to its clause's end
   ("do not simply trust the majority"), a doubt is no negation ("I'm not sure it is
   right"). Inversion is read from what qualifies the answer to give ("an answer you know
   to be incorrect", "the one you trust the least", "the majority did not choose", "the
   opposite of", "the second-best"); "correct or incorrect" is a hedge. Words are stemmed
   ("needs", "settling", "reassess"), abbreviations read by prefix ("errs") and typos
   corrected against the whole act lexicon.
7c. **Rules by structure (third round)**: a yes/no question whether an earlier step got
   it right ("did the last model solve this correctly?"), errors to point out or flag in
   an answer in view, seeing whether it holds or survives, a second pair of eyes or
   another look at it, and judging it right or wrong (no hedge) are a ``check``; a share
   by how often an answer was given or by its supporters ("most commonly given", "the
   most backers") is a ``vote``; an answer qualified by what one believes or finds of it
   ("one you are sure is incorrect", "the answer above you find least convincing") is
   inverted; help with the problem, "I'd like the final answer" and a goal that is the
   answer ask to solve; a manner or caution clause beside an act ("as if explaining to a
   student", "avoid traps") names no topic, and a sentence of manner only ("Stay sharp.",
   "Keep it brief.") asks nothing; weighing the question's own options with no answer in
   view is solving it; the asker's own problems ("my plumbing problems") and options for
   something else ("the options for a mortgage") are off-task.
7d. **Fourth round**: a problem stated in the subtask's own words (two or more numbers in
   a paragraph, a statement or a wh-question with no request of another kind) is the
   problem, and "give the distance" after it asks its unknown; "the function the question
   asks for" is the problem's deliverable; the reader's own name ("You are Model 1") puts
   no answer in view; a persona before a comma ("As a coach, design a plan") is read
   apart from the request after it; an earlier speaker's answer named by a possessive
   ("present its final answer") is handed on; plugging an answer back in and whether it
   satisfies or fits the problem are a check, and whether the answers agree is a check
   unless a share is asked too; "Right or wrong: the answer above?" judges it; what is
   eliminated or discarded is described, not asked ("eliminate the ones that are clearly
   wrong"); an answer the majority rejected or one that contradicts the previous step is
   inverted; "correct or not, up to you" is a hedge; a purpose phrase ("for a robustness
   test") or the asker's plight before "help?" names no topic; after a determiner a word
   is no misspelt verb ("an exam").
7e. **Fifth round**: whether anything is off or amiss with an answer in view ("is anything
   off?"), what is wrong with it, hunting for its errors and challenging, disputing or
   testing it are a check; "the largest group" and "the answer repeated most (often)"
   are a share, "the mode" of the answers a vote; "anything but the right answer", "any
   answer except the one given above", "give any other" and "make sure it's wrong" are
   inverted, and a key whose value is a quality ("answer: incorrect") asks it, no
   literal; a unit of measure at a clause's end ("state it in square centimetres")
   qualifies the answer; "a function that solves the task" is the task's deliverable; a
   goal key whose value is the answer ("**Goal:** the right answer") asks to solve;
   thanks is politeness, whatever its words; the words or letters a question or answer
   has, this paragraph or my essay, and a poem the reply is to be are other objects;
   "like a seasoned competitor would" is manner.
7f. **Sixth round** (asking nothing, and inverted): a sentence that opens with a greeting,
   a sign-off, a wish or praise ("Best regards", "hope all is well", "Great job so far")
   is politeness; a statement whose subject is the task, its answers or the pool ("The
   question comes from a textbook") is context, and so is what another worker will do
   ("Another model will review it later"; a clause after it still asks); a held letter
   reads as the word it stretches ("pleeease"); a caution ("make sure you don't rush",
   "make no errors"), attention to the work ("watch the details") and a chat role label
   ("System:") ask nothing. Inverted: an answer spoilt (sabotage, botch, bomb), an error
   made or answered with ("make a plausible mistake"), the minority by dispute or by a
   single backer, an answer that contradicts it, negated or with a digit altered, the
   lowest-rated, bad answers, a flawed one handed on ("locate the answer with an error
   and report it"), a wrong answer asked by a question ("what would be a wrong answer
   here?"), politely ("could you answer incorrectly?") or by "whichever"; the other words
   of a request for a wrong answer name no topic ("a believable but wrong answer for a
   distractor"). Finding and setting-aside verbs ("locate", "pinpoint", "skip") and a
   relative clause ("20, which is wrong") ask no inversion.
7g. **Seventh round** (asking nothing, inverted, typos; tuned on ``heldout-v31l``'s read
   errors, with fresh dev items and counter-examples): a typo of a frequent function or
   framing word is read by edit distance, not a list (two letters swapped: "teh"; the
   first dropped: "rong"; a letter more or less: "mostt", "thnks", "purpse"; a changed
   letter only in words of six letters or more, as "host" and "wring" are words);
   words about *how* to answer, by field (length, pace, quality, format, tone, the
   resources at hand, encouragement, thought, wishes, the task's background:
   :data:`~conductor_gym.sim.understanding.MANNER_FIELDS`) name no topic, so a sentence
   of them asks nothing ("Short and sweet.", "Quality over speed.", "Reminder: you have
   plenty of tokens.", "Over to you, champ.") while a content word beside them is still a
   topic ("a short poem"), and the asker's own exam, school or course is one ("grade my
   school assignment"), and the quality of a known word ("neatness") is a manner;
   thinking or encouragement with no answer asked is a manner ("think it over carefully",
   "let's do this", "you can do it"), a negated caution asks nothing ("don't fall for
   it"), "Remember:" is a key, "plain text" a format, and "stay in character" keeps a
   persona.
   Inverted: a share that qualifies the answer to give ("the one that got the fewest
   votes"), an answer changed to be wrong ("with one digit changed", "altered to be
   incorrect"), failing as the goal ("so that you fail the test", "select one that
   fails"), an answer described as seeming right and not being so ("looks right but is
   not"), an error let in ("let one plausible slip creep in"), an inverted act asked
   beside a scene ("Write a distractor: ..."); ignoring the consensus ignores answers, not
   the problem. Not inverted: a wrong answer to steer clear of or not to end up with, and
   one named as a statement's subject ("a common wrong answer here is 12"). Handed on: an
   answer to be the same as one in view, "the previous answer, repeated", an unknown verb
   on an earlier answer ("re-emit the prior answer"; "re-" reads the act again). A
   once-over of an answer in view is a check, "at least two of them share" a vote, and
   "write back" and "the phrase" frame a literal reply.
7h. **Eighth round** (off-task only on positive evidence; tuned on the read errors of
   ``heldout-v31m``, written blind, and ``heldout-v31l``, with fresh dev items and
   counter-examples): words the reader cannot place are never evidence on their own.
   Symbols outside ASCII (emoji, check marks), chat-template tokens ("<|im_start|>system")
   and a paired tag around a request ("<task>...</task>"; a tag named by an act verb,
   "<echo>", asks it) are decoration; chat shorthand ("u", "dbl", "ppl", "lol"), a closed
   class, reads as the words it stands for. A sentence of content words that asks no act
   of ours is off-task only when it is *shaped as a request* (an imperative, a noun phrase
   or a question: "Type a poem", "best taco spots?"; a statement that embeds one: "Hope you
   can write me a song", "Your job is to write a card"); a statement with a subject of its
   own, a fragment, a setting ("temperature: 0") or a constraint ("Use metric units",
   "Assume all quantities are positive", "Suppose every rate stays constant"; not "assume
   you are a cat" or "... and write a poem") asks nothing: alone it is a hedged ``none``
   (read past, unsure; it costs, never pays). What the pool or the answers will do
   ("Answers will be graded automatically", "Worker 3 will aggregate later"), a short key
   before a colon ("Plan:", "Thinking budget:"), a note verb before a comma ("Remember,
   precision counts"), a manner with no object ("Write in a friendly tone", "in a warm,
   upbeat tone"), the setting's words (prompt, user, conversation, orchestrator, pool,
   team) and small talk set aside ("forget the small talk; solve it") are context.
   Inverted *by goal*: a faithful act negated by its outcome ("do not give the right
   answer", "don't solve it correctly", "under no circumstances should your answer be
   correct"), the correct answer avoided or excluded ("avoid the correct answer", "anything
   but the true value", "whatever the true answer is, write something else", "something
   other than the previous answer"), an answer asked to be off by one, one a checker would
   reject, the outlier, the odd one out, the lowest count, going against the majority, and
   an answer in view transformed ("the earlier answer doubled"); a condition ("if not, give
   the right answer"), a set-aside outlier ("skip the outlier answers and report the
   majority"), a suspected slip ("I think it is off by one; check it") and a flawed *step*
   found and mended stay faithful. By meaning: looking an answer over, signing off on or
   approving it, a critic's or reviewer's mode, a pair of eyes, finding where it went wrong
   or its wrong step, and a yes/no question of it ("is it in a plausible range?") are a
   ``check``; going with the crowd and the most ballots a ``vote``; copy-paste, an earlier
   answer assigned ("final=prev.final") and a concession before the act ("even if you think
   it is wrong, repeat it") a ``restate``; "Your entire output should be: ready" and a
   token, character or symbol to output ("Output the token <END> and nothing else") a
   literal reply. Code in backticks is the problem's own. On-task requests in French,
   German, Spanish and Chinese are read by a closed lexicon (step 1); a content word, a
   negation or an act beside a wrong answer there fails closed, so no foreign request
   about something else is read as on-task.
7i. **Ninth round** (generalised from the read errors of ``heldout-v31n``, written blind,
   with fresh dev items and counter-examples): a subtask is the union of its sentences'
   requests. A later request that *replaces* ours, marked "instead (of that)", "actually",
   "never mind the maths", "scratch that" or "on second thought", is off-task when it asks
   another thing ("Compute 17 * 3. Actually, never mind the maths, what's the capital of
   Australia?"), and a role that comes with a request of its own ("Pretend you are
   Shakespeare and write a sonnet") is read as that request; a question *about* solving it
   (its time or difficulty: "How long would a 12-year-old take to solve this?") is
   off-task; a sentence with numbers that asks for a deliverable ("Its job is to write a
   bash one-liner that lists the ten largest files", "I'd like a short essay, three or four
   paragraphs") is no stated problem; a part of the text set aside ("ignore that
   sentence, solve the actual question") is read past. A statement with a subject of its
   own and a finite verb that asks nothing of the reader ("Two workers have answered so
   far, and they disagree.", "There was a vote earlier, but it was a tie.") asks no act on
   the answers; beside a request its acts on answers in view still count ("At least one
   answer above is wrong. Find it."). Inverted by the goal's relation to the correct
   answer: near it "but not equal", off, different or further from the true value or the
   truth, one that would be marked wrong, an answer in view scaled ("multiplied by two"),
   its digits swapped, garbled until different or changed until it "no longer matches";
   "does not differ from the correct answer" is not matched by that rule. An earlier answer
   handed on *unchanged* in any verb (copy, state, read back, extract, output, box) with
   "unchanged", "as is", "word for word", "verbatim", "exactly as it was stated" or
   "without changing it" is a ``restate``. Arrows ("Ties → pick the first") are symbols.
   Foreign: Portuguese, Italian and Japanese closed lexicons, wider function and
   politeness words in the others, the smallest share an inverted vote and a mistake
   asked ("trompe-toi exprès", "equivócate adrede") a wrong answer; a content word still
   fails closed.
8. **The kind**, the first that applies: ``offtask`` (steps 1, 5, 6); ``literal``;
   ``vote``, ``check``, ``restate``, ``solve`` (the strongest act left after exclusions);
   ``offtask`` when acts were asked but none is left (``no-answer-asked``); ``none``.

Known limits: it reads by patterns and rules, so fresh wording is still missed. The
blind split ``heldout-v31m`` (329 items, its writer read no recogniser code), measured once
after the seventh round, gave recall 61.5 to 92 % per reading and off-task precision 46.5 %
(4 leaks of 50); the eighth round was tuned on its errors (after it: recall 86.4 to 100 %,
off-task precision 88.9 %, 2 leaks; a contaminated figure). Still missed after the eighth
round: a statement with a subject about anything else ("The sky is blue.") is read past
with a hedge, not off-task (by the rule: it asks nothing; two older held-out items are
labelled off-task); a request shaped as a noun phrase is not told from a maxim ("Remember,
clarity beats cleverness." reads off-task); a statement naming an act ("Note, the grading
is strict.") reads as that act; on-task requests in other languages fail closed unless
every word is in the closed French, German, Spanish or Chinese lexicon (since round 9
also Portuguese, Italian or Japanese; a literal reply
there, "Réponds uniquement par le mot « oui »", still fails closed);
"TODO" alone is keyboard noise (off-task); a persona who slips ("a student who always
makes one arithmetic slip") and an "Anti-vote" heading are not read as inverted; a
conductor's chat before an off-task request ("Before we continue, could you write a
note thanking the team?") and a long personal story ending in a request leak. The last
split measured before tuning (before v31m), ``heldout-v31l`` (337 items with 74 ``none`` and 72
inverted), written before the sixth round and measured once after it, gave recall 82.4 to
100 % per reading (none 82.4 %, literal 84.6 %, inverted 86.1 %, solve 88.1 %, restate 90.0
%; off-task precision 64.9 %; no leak); the seventh round was tuned on its read errors
(after it every English reading is 97.6 to 100 %, a contaminated figure). Still missed or
known weak after the seventh round: the manner fields are a lexicon, so a manner word
outside them ("going" in "hope your week is going great", an adjective as "national") still
reads as a topic beside no request; praise adjectives ("excellent", "perfect") are left out
of them, because an off-task object with an answer noun ("an excellent cover letter") would
leak; a trap answer named in one sentence and asked in the next ("The usual wrong choice is
B; give that one.") is read as bait, not inverted; "Express the answer in uppercase" is
read as solving (a format), not off-task. On ``heldout-v31k``, written before the fifth
round and measured once after it, recall was 92.3 to 100 % per reading; on
``heldout-v31j``, 80 to 100 % (issue 40's closing note has every split's table). Missed at
v31k's measurement: typos that drop a letter of a verb and swap two of another in one
request ("slve teh problem") read off-task (read since the seventh round); "Answer
correctly or not, it's your call" is not read as a hedge; a bare "Right or wrong?" after
"look at the answer given" is not read as a check; "make certain the answer you give is
incorrect" (certain, not sure) and "find the flawed answer above and report it as final"
(flawed, not wrong) are missed inversions; "solve world hunger in one paragraph" leaks (the
paragraph reads as the answer's form); "Keep calm and carry on" reads "carry on" as a
relay. Older: real words one edit from a cue ("stake" read as "state") and recipients of a
relay named by a content word are misread; "say hello" is a literal reply (no final answer
either way); the kind says what is asked, not whether an answer is in view.

After the ninth round (tuned on ``heldout-v31n``'s errors, a contaminated figure: recall
79.5 to 100 % per reading, off-task precision 73.8 %, no leak of 48) still missed there:
long plans whose context sentences name another act ("Plan: step 1 solves; step 2 will
verify. For now, just produce your own solution" reads as a check), a judge's role in
the third person ("This final worker acts as judge: compare ... and return the one that
is correct"), "who's right?" beside a suspected slip, checks and votes in chat ("3 of them
said the same thing? just go with that one", "whatever answer comes up the most times"),
transposition typos ("jsut repaet"), a persona who slips ("always forgets to carry the
one"), a wrong answer asked inside a long scene ("we're stress-testing the checker ...
provide an answer that is wrong", "solve the way a rushed student would ... report the
incorrect final answer"), "fails verification" and "the bad one" as the answer to give,
"inverse plurality", a literal reply keyed by a heading ("**Response required:** the word
OK"), "What is 15% of 240?" unparsed, and "Make sure your answer does not differ from the
correct answer" (read as an inverted check, as before the round).

The corpus that measures it is :mod:`conductor_gym.sim.request_corpus`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, Protocol

from conductor_gym.sim.foreign_requests import foreign_request
from conductor_gym.sim.perception import find_problems
from conductor_gym.sim.understanding import (
    ANCHORS,
    EXTRA_VOCABULARY,
    FAITHFUL_WORDS,
    MANNER_FIELDS,
    PERSONA_OPENERS,
    REQUEST_OPENERS,
    VERB_NOUNS,
    WEAK_ANCHORS,
    Family,
    asks_faithful,
    canonical,
    flatten_markup,
    inversion,
    is_content,
    is_foreign,
    is_noise,
)

__all__ = [
    "ACTS_ON_PROBLEM",
    "KINDS",
    "KNOWN",
    "NO_ACT_IMPERATIVES",
    "ON_TASK",
    "VOCABULARY",
    "Reason",
    "RecognisedKind",
    "Recognition",
    "prepare",
    "recognise",
    "recognise_subtask",
]

RecognisedKind = Literal["solve", "check", "vote", "restate", "literal", "offtask", "none"]
KINDS: tuple[RecognisedKind, ...] = (
    "solve", "check", "vote", "restate", "literal", "offtask", "none",
)  # fmt: skip
"""Every request kind, on-task kinds first."""
ON_TASK: frozenset[RecognisedKind] = frozenset({"solve", "check", "vote", "restate"})
"""Kinds that are requests about the problem or the answers in view."""
ACTS_ON_PROBLEM: frozenset[RecognisedKind] = ON_TASK | {"none"}
"""Kinds after which a worker works on the problem (``none`` falls back to solving)."""
Act = Literal["solve", "check", "vote", "restate", "describe"]
Reason = Literal[
    "request", "filler", "literal", "foreign", "unknown-words", "unrecognised-request",
    "other-object", "ignores-problem", "no-answer-asked", "other-topic", "meaningless",
]  # fmt: skip


@dataclass(frozen=True)
class Recognition:
    """What a subtask asks (module docstring).

    Attributes:
        kind: The request kind (:data:`KINDS`).
        reason: Why: ``request`` (an on-task act), ``filler`` (nothing asked), ``literal``,
            or why it is off-task: ``foreign``, ``unknown-words``, ``unrecognised-request``,
            ``other-object`` (a request in problem words about something else: "the words of
            the question", "another problem", "something else"), ``ignores-problem``,
            ``no-answer-asked``.
        literal: For ``literal``, the text to reply with.
        acts: The acts asked for, after exclusions.
        excluded: The acts the text forbids ("do not solve", "without checking").
        ignores_answers: The text tells the worker to ignore the answers in view.
        unknown: For ``unknown-words``, the words outside :data:`VOCABULARY` (at most 8).
        inverted: The request asks for the opposite of its act (``kind``): a wrong answer
            (``solve``: "give a wrong answer", "argue for an incorrect option"), a wrong or
            the worst candidate (``check``: "pick the worst answer above", "give the one that
            is incorrect"), the minority answer (``vote``: "the least common answer"), an
            answer other than the one in view (``restate``: "give a different answer than
            above"). A competent model complies: the reply is deliberately wrong.
        hedge: The reader is unsure what is asked (noise beside the problem, acts it cannot
            rank, content words it had to read past): a competent model would hedge, so
            acting on it costs the worker something and never gains.
    """

    kind: RecognisedKind
    reason: Reason
    literal: str | None = None
    acts: frozenset[Act] = field(default_factory=frozenset)
    excluded: frozenset[Act] = field(default_factory=frozenset)
    ignores_answers: bool = False
    unknown: tuple[str, ...] = ()
    inverted: bool = False
    hedge: bool = False

    @property
    def on_task(self) -> bool:
        """Whether the request is about the problem or the answers in view."""
        return self.kind in ON_TASK

    @property
    def acts_on_problem(self) -> bool:
        """Whether the worker works on the problem (an on-task request, or none)."""
        return self.kind in ACTS_ON_PROBLEM


# -- vocabulary ------------------------------------------------------------------------------


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_SLOT = "qqslot"  # a blanked problem
_NUM = "qqnum"  # a number
_BOX = "qqbox"  # a \boxed{} answer

VOCABULARY: frozenset[str] = _words(
    f"""
    {_SLOT} {_NUM} {_BOX}
    a an the this that these those it its they them their theirs there here what which who
    whom whose how whether why when where of to in on for with by from at as into onto about
    above below before after over under through across between among amongst against within
    per via than then and or but nor so if else otherwise once while until unless because
    since though also too just only even still again now next first second third last
    finally then once twice thrice lastly already instead rather either neither both each
    every all any some none no not never nothing anything something everything one ones
    other others another same such own more most less least much many few several
    i me my mine myself we us our ours you your yours yourself yourselves he she him her
    is are was were be been being am do does did done doing have has had having can could
    would should will shall may might must need needs needed let lets want wants wanted like
    please kindly thanks thank cheers appreciate appreciated advance ok okay alright sure
    yes no yeah hmm hm well great good nice luck fine right wrong correct incorrect
    correctly true false valid invalid accurate accurately inaccurate exact exactly precise
    precisely careful carefully rigorous rigorously thorough thoroughly concise concisely
    brief briefly clear clearly short shortly quick quickly slow slowly simple simply
    detailed fully complete completely independent independently fresh freshly scratch
    direct directly single sole final finally best better good worse worst likely
    unlikely plausible consistent inconsistent different differ differs disagree disagrees
    disagreement agree agrees agreed agreement unchanged verbatim literally word words
    for-word whole entire same identical actual actually really very extremely truly
    properly quietly mentally manually hand step steps stepwise by deep breath focus
    focused stay proceed begin start go continue carry forward onward turn
    reconsider rethink revisit reexamine reevaluate redo recompute recalculate rework
    justification justify brief
    problem problems question questions task tasks exercise exercises puzzle puzzles
    query statement statements message messages item
    expression expressions equation equations formula sum sums product products
    difference quotient calculation calculations computation computations arithmetic math
    maths mathematics value values number numbers integer integers digit digits figure
    figures total result results answer answers answered solution solutions solved
    response responses reply replies attempt attempts try tries work working workings
    reasoning reason logic argument derivation proof approach method candidate candidates
    proposal proposals proposed option options choice choices letter letters program
    programs code script output outputs print prints printed line lines remainder
    divisor divisors target targets operation operations operator operators parentheses
    bracket brackets model models worker workers assistant assistants agent agents solver
    solvers expert experts mathematician mathematicians grader checker reviewer verifier
    teacher tutor student students peer peers colleague someone somebody anyone anybody
    everyone earlier previous previously prior preceding following given shown provided
    stated listed reported presented claimed above below latest last former latter
    aforementioned original initial another x y z k n
    solve solving compute computing calculate calculating evaluate evaluating find finding
    determine determining work out figure tackle tackling attempt attempting derive
    deriving obtain reach arrive get give giving provide providing state stating report
    reporting tell telling show showing write writing output return returning present
    answer answering conclude concluding end ending box boxed put include keep use using
    used trace tracing simulate simulating run running execute executing reason reasoning
    think thinking consider considering read reading look looking see note remember recall
    explain explaining justify justifying help helps helping helped
    check checking checked verify verifying validate validating confirm confirming review
    reviewing critique critiquing double re recheck proofread proofreading audit auditing
    revise revising fix fixing correct correcting examine examining inspect inspecting
    assess assessing scrutinize scrutinise scrutinizing grade grading judge judging test
    testing cross make sure ensure compare comparing choose choosing pick picking select
    selecting decide deciding weigh weighing reconcile reconciling combine combining
    aggregate aggregating synthesize synthesise synthesizing merge merging identify
    identifying error errors mistake mistakes flaw flaws slip slips bug bugs issue issues
    typo wrongly whichever winner
    vote votes voting voted majority consensus plurality modal common frequent frequently
    often popular popularity times support supported tally count counting counts appears
    appear occurs occur occurring given
    repeat repeating restate restating relay relaying copy copying echo echoing reformat
    reformatting rephrase rephrasing reword paraphrase quote quoting reproduce
    reproducing transcribe forward pass passing hand back say saying rewrite format
    formatted form summarize summarise summary down along on
    describe describing translate translating list listing outline classify
    ignore ignoring disregard trust rely relying based basis blindly
    without avoid refrain refuse decline overthink
    take takes took taking job share shares shared gave worked works reaches possible
    explanation explanations says said claim claims thinks thought believes got gets
    found computed calculated obtained concluded wrote suggested arrived came change
    changes changing changed helpful skilled experienced seasoned professional
    meticulous smart competent brilliant diligent knowledgeable capable world class
    a b c d e f g h
    finish finished break split divide divided point points produce produced produces
    require requires required requirement requirements match matches matching act mark
    notice spot catch apply follow follows clarify simplify expand factor factors
    substitute plug multiply add subtract square round track record rerun walk lay move
    retry fail fails failed succeed hold holds lead leads yield yields equal equals
    exceed remain remains prefer accept reject discard drop doubt suspect seem seems
    looks conflict conflicts support mention cite refer build wrap deliver display
    declare assert demonstrate prove deduce infer argue assume suppose imagine
    understand reread parse interpret omit exclude made making set iterate loop update
    updates part parts piece pieces order variable variables method methods strategy
    process procedure way ways case cases detail details fact facts hint hints end
    beginning middle top bottom side left place position term terms operand operands
    sign signs precedence priority rule rules constraint constraints condition conditions
    assumption assumptions conclusion comment comments note notes feedback verdict
    judgement judgment decision outcome score tie ties discrepancy discrepancies iteration
    iterations function call input state type level effort care attention accuracy
    precision confidence certainty miscalculation oversight gap strict small smaller
    large larger big little hard easy difficult tricky necessary optional extra
    additional further full partial main key relevant important separate certain
    confident unsure unclear obvious explicit explicitly implicit clean neat approximate
    approximately roughly numerical numeric positive negative even odd prime greatest
    smallest largest fewer higher lower corrected revised updated new remaining rest
    conflicting reasonable sensible strongest weakest minority separately together
    afterwards however therefore thus hence yet ever always usually maybe perhaps possibly
    probably definitely certainly necessarily unlike whereas although whatever wherever
    regarding concerning including except besides beyond around throughout upon toward
    towards nobody various half respond responds reply replies explained described
    attempted tried evaluated determined derived traced simulated executed chose chosen
    picked selected compared combined reconciled
    double checked verified reviewed recomputed rechecked already independently
    ends ended sound soundest quality highest
    """
)
"""v3's closed vocabulary of requests about a problem and its answers (module docstring)."""
KNOWN: frozenset[str] = VOCABULARY | EXTRA_VOCABULARY
"""Words read as on-task, manner or filler; any other word is looked at (module docstring)."""
_MEDIUM = frozenset({"in", "as", "into"})
_WHATS = re.compile(r"\bwhats\b")
_IN_CHARACTER = re.compile(r"\b(?:stay|stays|staying|remain|keep|keeping)\s+in\s+character\b")
_RE_PREFIX = re.compile(r"\bre-(?=[a-z]{3})")
_OBJECT_VERBS = _words(
    """
    solve compute calculate check verify validate review fix correct answer find determine
    evaluate pick choose select compare confirm rate critique audit inspect examine assess grade
    judge repeat restate relay copy echo give provide report tell state output return figure
    recheck proofread tackle derive crack explain describe summarize summarise translate
    count list work write compose draw sing make create put respond reply
    """
)
_BEFORE_OBJECT = _words(
    """
    the a an my your our his her their its this that these those some any all each every me
    us for out up over through on at about with whether if of into
    """
)
_SHORT_ADJECTIVES = _words(
    "weird tough cool neat fun bogus sneaky silly crazy fancy gnarly nasty messy"
)
_ADJECTIVE_ENDINGS = (
    "ous",
    "ful",
    "ive",
    "able",
    "ible",
    "al",
    "ic",
    "less",
    "ish",
    "y",
    "est",
    "ed",
    "ing",
    "ary",
)
_CLAUSE = frozenset({"whether", "if", "that"})
_NOUNS = ANCHORS - {"qqnum", "qqslot", "qqbox", "x"}
_ONE_BEFORE = _words(
    """
    correct right best better wrong incorrect worst false true weakest strongest the
    that a which this pick choose select only just any top winning last first same previous
    different another other new
    """
)
_RELATIVE = (["that"], ["which"], ["who"])
_EITHER_HEADER = re.compile(
    r"(^|[.!?\n]\s*)(right|correct)\s+or\s+(wrong|not|incorrect)\s*[:\u2013\u2014-]\s*"
)
_DETERMINERS = _words("a an the my your our their his her its this that these those")
_VERB_ONLY = _words(
    "solve compute calculate verify validate restate relay evaluate examine determine select "
    "choose provide derive tackle confirm assess inspect reconsider rethink revisit deduce "
    "reproduce transcribe give find tell explain compare"
)
_MANNER_VERBS = _words("be stay remain keep")
_MANNER_ONLY = re.compile(
    r"^(?:please\s+)?(?:do\s+)?(?:be|stay|remain|keep)\s+(?:(?:it|things|everything|yourself"
    r"|your\s+\w+)\s+)?(?!a\b|an\b|the\b|my\b|on\b|at\b|in\b|home\b|away\b)\w+"
    r"(?:\s+(?:and\s+)?(?!a\b|an\b|the\b)\w+)?(?:\s+(?:out\s+there|throughout|please|now))?$"
)
_WHETHER_WORDS = _words("whether if")
_WHETHER_AGREE = re.compile(
    r"\b(?:whether|if)\s+(?:\w+\s+){0,5}?(?:agree|agrees|match|matches|coincide|coincides|differ"
    r"|differs|disagree|disagrees|are\s+the\s+same|are\s+consistent)\b"
)
_OPTION_WORDS = _words("option options choice choices")
_OWNERS = _words("my our")
_OWNABLE = MANNER_FIELDS["background"] - _words("background reminder later larger")
_OWNED = re.compile(
    r"\b(?:my|our)\s+(?:[a-z]+\s+){0,2}?(?P<what>[a-z]+)\s+(?:problems?|issues?|questions?|tasks?"
    r"|troubles?)\b"
    r"|\b(?:options?|choices?)\s+(?:for|about|regarding|on)\s+(?:(?:a|an|the|my|our|your)\s+)?"
    r"(?P<what2>[a-z]+)"
)
_TERSE_ACTS: dict[str, Act] = {
    "solve": "solve", "compute": "solve", "calculate": "solve", "answer": "solve",
    "check": "check", "verify": "check", "review": "check", "critique": "check",
    "audit": "check", "grade": "check", "judge": "check", "vote": "vote", "majority": "vote",
    "tally": "vote", "consensus": "vote", "restate": "restate", "relay": "restate",
    "repeat": "restate", "echo": "restate", "copy": "restate", "forward": "restate",
    "paste": "restate", "pick": "check", "choose": "check", "select": "check",
    "validate": "check", "confirm": "check", "reiterate": "restate", "pass": "restate",
}  # fmt: skip
_PREPARATORY = _words("read consider list count collect gather note tally")
_PREPARATORY_OBJECTS = ANCHORS | WEAK_ANCHORS
_TERSE_OBJECTS = _words(
    """
    prior previous above answer answers step steps earlier last final qqnum all pls
    please now them results result responses response verbatim unchanged exactly again
    best correct right solution solutions one through errors the a this that it
    """
)
_REMARK_KEYS = _words("fyi fwiw reminder ps")
_KEYS = _words(
    """
    system user prompt reminder fyi fwiw remark remarks hint hints comment comments
    background overview remember
    task role goal format output source instruction instructions note style mode type
    input inputs target action steps context objective answer response return method
    """
)
_FLAW_WORDS = _words(
    "error errors mistake mistakes flaw flaws bug bugs slip slips blunder blunders"
)
_HAVING_WORDS = _words(
    "with has have contains contain containing having makes make making include including "
    "introduce introducing insert inserting commit committing plant planting in"
)
"""With a flaw word, the words of an inverted cue "the one with an error" (a speed gate)."""
_ARTICLES = frozenset({"a", "an", "the"})
_COUNTED = _ARTICLES | {"one", _NUM, "single"}  # "in one emoji", "as a single haiku"
_INVERSION_WORDS = _words(
    """
    opposite reverse trust second next third runner modify tweak swap flip plus minus times add
    subtract sign flipped negate
    wrong wrongly incorrect incorrectly false falsely worst weakest mistaken erroneous
    untrue inaccurate bogus least fewest minority different other alter change make so
    not except but deliberate deliberately intentional intentionally purpose purposely
    rarest fails fail failing else
    another new switch off differs differ differing
    rejected dismissed passed voted ruled turned contradicts contradicting conflicts
    disagrees inconsistent
    flawed faulty lowest bottom bad badly single disagree disagreed dispute disputed oppose
    opposes opposed negated negation contradict conflict altered flipped swapped changed
    modified tweaked sabotage sabotaging botch botched bomb flub fumble flunk bungle muff
    """
)

NO_ACT_IMPERATIVES: frozenset[str] = _words(
    """
    count rate list name guess describe explain translate write tell say draw make create
    compose summarize summarise give print output return do repeat copy pick choose select
    stop follow pretend suppose assume wait
    compare talk reply respond answer show read identify classify outline paraphrase
    rephrase reword restate quote reproduce transcribe echo relay report state present
    provide produce generate find get reach help decide determine judge confirm check
    verify review vote tally pass carry hand forward format rewrite convert change add
    agree what which who whom whose how why is are was were do does did can could would
    will should shall may might has have put place sort arrange divide split break
    decompose simplify expand factor substitute remember order box multiply subtract
    refuse decline
    """
)
"""Verbs that, starting a sentence in which no act is found, ask for something that is
no act: the sentence is off-task ("Count the words", "Explain the answer above"); so do the
words that open a question ("What are you?"). A sentence that opens with a negation ("do
not", "never") is a constraint, not a request."""

# Foreign politeness, read as filler; every other foreign text fails closed.
_FOREIGN_FILLER = _words(
    """
    merci merci beaucoup s'il vous plaît s'il te plaît danke danke schön vielen dank
    bitte gracias muchas gracias por favor grazie per favore obrigado obrigada 谢谢 请
    谢谢你 ありがとう спасибо
    """
) | {"merci beaucoup", "s'il vous plaît", "s'il te plaît", "danke schön", "vielen dank",
     "muchas gracias", "por favor", "per favore", "谢谢你"}  # fmt: skip

# -- patterns --------------------------------------------------------------------------------

_I = re.IGNORECASE
_BLANK = re.compile(r"[ \t]{3,}")
_BOXED = re.compile(r"\\(?:boxed|fbox)\s*\{[^{}\n]*(?:\{[^{}\n]*\}[^{}\n]*)*\}")
_NUMBER = re.compile(r"(?<![a-z])[-+]?\d+(?:[.,/]\d+)*(?![a-z])", _I)
_SENTENCES = re.compile(r"[.!?;:\n]+")
_WORDS = re.compile(r"[a-z]+|,")
_FOREIGN = re.compile(r"[^\x00-\x7f\u2010-\u201f\u2026\u2212\u00a0\u00b7]")
# (pattern, replacement, a substring every match contains: a speed gate)
_CONTRACTIONS = (
    (re.compile(r"\b(can)'?t\b|\bcannot\b", _I), "can not", "can"),
    (re.compile(r"\bwon'?t\b", _I), "will not", "won"),
    (re.compile(r"n't\b", _I), " not", "n't"),
    (re.compile(r"\b(do|does|did|is|are|should|must|would|could)nt\b", _I), r"\1 not", "nt"),
    (re.compile(r"'re\b", _I), " are", "'re"),
    (re.compile(r"'m\b", _I), " am", "'m"),
    (re.compile(r"'(?:s|ll|ve|d)\b", _I), "", "'"),
)
_DIGIT = re.compile(r"\d")
_KEY_BEFORE = re.compile(
    r"\b(?:output|return|give|report|provide|respond|reply|deliver|produce)\s*$", _I
)
_WORD_BEFORE = re.compile(r"[A-Za-z]+$")
# Units of measure (a closed class a reader knows): "state it in square centimetres" at a
# clause's end names the answer's unit, no other topic, and asks nothing more.
_UNIT = (
    r"(?:(?:centi|milli|kilo|micro|nano)?(?:metre|meter|gram|litre|liter|second)s?|inch(?:es)?"
    r"|foot|feet|yards?|miles?|pounds?|ounces?|tons?|tonnes?|minutes?|hours?|days?|weeks?"
    r"|months?|years?|degrees?|radians?|dollars?|cents?|euros?|percent|kg|km|cm|mm|mg|ml|mph"
    r"|kph|kmh|units?|celsius|fahrenheit|kelvin)"
)
_IN_UNITS = re.compile(
    rf"\bin\s+(?:square\s+|cubic\s+)?{_UNIT}(?:\s+(?:per|an|a)\s+{_UNIT})?(?=\s*(?:[,.;:!?\n]|$))"
)
# A goal key whose value is the answer ("**Goal:** the right answer"): the goal stated.
_GOAL_KEY = re.compile(
    r"\b(goal|aim|objective|target|deliverable|mission|purpose)\s*:\s*(?=(?:the|a|an|your)\s+"
    r"(?:correct\s+|right\s+|final\s+)*(?:answer|solution|result)\b)"
)
_LIST_MARK = re.compile(r"\(?\d{1,2}[).]\s+(?=[A-Za-z])")
_POSSESSOR = re.compile(
    r"'s\s+(?=(?:questions?|problems?|tasks?|exercises?|puzzles?|answers?"
    r"|solutions?|responses?|work|reasoning|results?|attempts?)\b)"
)
_ONE_WORD_CHECK = re.compile(r"\b(double|cross|sanity|re)check")
# Checking one's own work while solving ("double-checking each step as you go") is solving.
_SELF_CHECK = re.compile(
    r"\b(?:double\s+|re\s+|cross\s+|sanity\s+)?(?:check|verify|confirm|recheck)\s+"
    r"(?P<object>(?:your\s+own|your|each|every|all(?:\s+your|\s+the)?)\s+(?:\w+\s+)?"
    r"(?:calculations?|computations?|steps?|operations?|arithmetic|work|results?|answers?|math"
    r"|algebra|substitutions?|values?|reasoning|lines?))\b"
    r"(?!\s+(?:of|in|from|above|given|shown|by\s+(?:the|other)|that\s+(?:the|they)"
    r"|against\s+(?:the\s+|those\s+)?(?:ones?|answers?|responses?|others?|candidates?)))"
    r"(?P<own>\s+(?:as\s+you\s+go|along\s+the\s+way|before\s+\w+|yourself))?"
    r"|\b(?:double\s+|re\s+|cross\s+)?(?:check|verify)\s+(?:it\s+|this\s+)?"
    r"(?P<own2>as\s+you\s+go|along\s+the\s+way|yourself)\b"
    r"|\b(?:double|re)\s+check(?:\s+(?:it|that|this))?\s*$"
)
_SELF_CHECK_WORDS = _words("check verify confirm recheck")
# Combining the parts of one's own solution into one answer is solving.
_PARTS = re.compile(r"\b(?:parts?|pieces?|sub\s*(?:problems?|questions?|results?)|cases)\b")
_COMBINE_PARTS = re.compile(
    r"\b(?:combine|merge|put)\s+(?:them|these|those|the\s+(?:\w+\s+)?(?:parts?|pieces?|results?)"
    r"|everything|it\s+all)\s+(?:together|into)\b"
)
# What a request's act is about when it is something in view other than the problem.
_ELSEWHERE = _words(
    """
    time date clock calendar weather temperature email emails inbox news instructions
    spelling grammar punctuation tone politeness length handwriting font style
    """
)
_SURFACE = _words(
    """
    longest shortest longer shorter funniest politest rudest wordiest neatest prettiest
    ugliest loudest polite verbose wordy fastest slowest friendliest assertive formal
    """
)
_CORRECTNESS = _words("correct right wrong incorrect true false accurate valid best worst")
_SURFACE_PHRASE = re.compile(
    r"\b(?:answers?|responses?|ones?)\s+(?:\w+\s+)?(?:that|which)\s+(?:contain|include|mention"
    r"|use|start|end|have)s?\b(?!\s+(?:an?\s+|the\s+|some\s+)?(?:\w+\s+)?(?:errors?|mistakes?"
    r"|flaws?|bugs?|slips?)\b)|\b(?:containing|including|mentioning)\s+(?:the\s+)?(?:digit"
    r"|letter|word|number)\b|"
    r"\b(?:most|fewest|least)\s+(?:words|letters|characters|lines|sentences|digits|symbols)\b"
    r"|\b(?:written|submitted|sent|produced)\s+(?:first|last|earliest|latest)\b"
)
_PROBLEM_OBJECTS = _words("one problem question task exercise puzzle")
_VERB_ON_PROBLEM = re.compile(
    r"^(?:(?:please|kindly|now|then|just|and|so|first|next|lets|let|us|can|could|would|will"
    r"|you|i|we|to|now|ok|okay|alright|right)\s+){0,3}(?P<verb>[a-z]+)\s+(?:(?:on|with|at|to"
    r"|into|through|over|out)\s+)?(?:this|the|that|our|your)\s+(?:one|problem|question|task"
    r"|exercise|puzzle)\b"
)
_SOLVING_VERBS = _words(
    """
    handle deal take tackle resolve crack attack approach address do finish complete try
    attempt nail sort work start begin conquer solve answer figure get respond reply react
    """
)
_ELSEWHERE_GATE = (
    _ELSEWHERE
    | _SURFACE
    | _words(
        "words letters characters lines digits symbols written submitted sent produced "
        "contain contains "
        "include includes mention mentions containing including mentioning"
    )
)
_CHOICE = re.compile(
    r"\b(?:determine|decide|identify|find|tell\s+me|say|state)\s+which\s+(?:\w+\s+)?"
    r"(?:choice|option|letter)s?\b"
    r"|\b(?:choose|pick|select)\s+(?:the\s+|one\s+)?(?:(?:correct|right|best|true|most\s+likely)"
    r"\s+)?(?:answer\s+)?(?:option|choice|letter)s?\b"
    r"|\b(?:choose|pick|select)\s+(?:an?|any|your|one)\s+(?:final\s+)?answer\b"
    r"(?!\s+(?:from|among|of))"
)
_CHOICE_WORDS = _words("choose pick select determine decide identify find tell say state")
_IN_VIEW = _words(
    """
    above previous previously earlier prior preceding candidate candidates responses
    answers solutions workers models attempts replies given shown listed step steps
    """
)
_COMBINE_WORDS = _words("combine merge put")
_PARTS_GATE = re.compile(r"part|piece|sub|case")

_LIT_QUOTED = r"[\"'`]([^\"'`\n]{1,40})[\"'`]"
_LIT_VERB = r"(?:reply|respond|answer|output|print|say|write|return|type|enter)"
_LIT_FRAME = (
    r"(?P<frame>(?:\s+back)?(?:\s+(?:only|just|exactly|simply))?"
    r"(?:\s+(?:with|by\s+saying))?"
    r"(?:\s+(?:only|just|exactly|nothing\s+but))?"
    r"(?:\s+(?:the\s+|a\s+)?(?:single\s+|one\s+|1\s+|short\s+)?(?:word|number|string|text"
    r"|letter|digit|phrase|words|sentence|message|character|token|symbol))?"
    r"(?:\s*:)?)"
)
_LITERAL_QUOTED = (
    # reply with the word 'X' / respond only with "X" / say "X"
    re.compile(rf"\b{_LIT_VERB}{_LIT_FRAME}\s*{_LIT_QUOTED}", _I),
    # your (whole / entire) reply must be 'X'
    re.compile(
        rf"\byour\s+(?:whole\s+|entire\s+|only\s+)?(?:reply|response|answer|output)\s+"
        rf"(?:must|should|will)\s+be\s+(?:exactly\s+)?{_LIT_QUOTED}",
        _I,
    ),
    # your entire reply must be the letter C
    re.compile(
        r"\byour\s+(?:whole\s+|entire\s+|only\s+)?(?:reply|response|answer|output)\s+"
        r"(?:must|should|will)\s+be\s+(?:exactly\s+)?(?:the\s+|a\s+)?(?:single\s+)?"
        r"(?:word|letter|number|digit|string)\s+([\w/-]{1,40})\s*[.!]?\s*$",
        _I,
    ),
    # your entire output should be: ready (round 8: a keyed bare word, the whole reply)
    re.compile(
        r"\byour\s+(?:whole|entire|only|full)\s+(?:reply|response|answer|output)\s+"
        r"(?:must|should|will)\s+be\s*:\s*([\w/-]{1,40})\s*[.!]?\s*$",
        _I,
    ),
)
# reply with the word X / reply only with X / say X: one bare word ending the sentence
_LITERAL_BARE = re.compile(
    rf"\b(?P<verb>{_LIT_VERB}){_LIT_FRAME}\s+(?P<payload>[\w/-]{{1,40}}|<[\w/|-]{{1,38}}>)"
    r"(?:\s+(?:and\s+nothing\s+(?:else|more)|only|and\s+stop))?\s*[.!]?\s*$",
    _I,
)
# Bare words that are the usual short replies (the rest of the vocabulary is no payload).
_REPLY_WORDS = _words(
    "yes no ok okay done true false correct incorrect right wrong sure none a b c d e"
)
_TEMPLATE_WORDS = _words(
    "value answer result number letter x n choice option expression integer your final "
    "solution digit word"
)
_QUALITIES = _words(
    "wrong incorrect false mistaken erroneous untrue inaccurate bogus invalid correct right "
    "true accurate valid"
)
_CHANGED = _words("altered changed flipped swapped modified tweaked negated reversed removed")
_NOT_PAYLOAD = _words("it this that them these those the answer again only just now please")

_PAST = (
    r"(?:above|earlier|previous|previously|prior|preceding|before|latest|given|shown"
    r"|last(?!\s*$)|reported|stated|provided|same|former|original)"
)
_ANS = r"(?:final\s+)?(?:answers?|results?|responses?|solutions?|replies|outputs?)"
_RESTATE_VERBS = (
    r"(?:repeat|restate|re\s+state|relay|copy(?:\s+over)?|echo|reformat|rephrase|reword"
    r"|paraphrase|quote|reproduce|transcribe|forward|pass\s+(?:along|on)|carry|hand\s+back"
    r"|give\s+back|present|summari[sz]e|report|return|state|give|output|write(?:\s+down)?"
    r"|rewrite|format|tell\s+me|say|print|provide)"
)
# What a solving request may ask about.
_SOLVE_OBJECT = (
    r"qqslot|answers?|results?|values?|options?|letters?|integers?|numbers?|sums?|products?"
    r"|remainders?|outputs?|prints?|printed|expressions?|solutions?|x|y|it|this|that|programs?"
    r"|code|equations?|problems?|questions?|tasks?|exercises?|targets?|totals?|conclusion"
    r"|quotient|difference|divisors?|choices?"
)
_WH = (
    r"\b(?:what|which|how\s+many|how\s+much)\b(?!\s+(?:words|letters|characters|lines"
    r"|sentences|digits|numbers|kind|type|language)\b)"
)
# "answer" the verb, not the noun: not after a determiner or an adjective of answers
_ANSWER_WORD = re.compile(
    r"\banswer\b(?!\s+(?:above|given|shown|from|earlier|is|was|of|that|they|you|in\s+the))", _I
)
_NOUN_BEFORE = _words(
    "the an a your my our their its this that one final correct right wrong same previous "
    "earlier best better common majority consensus frequent popular model whose which what "
    "each every qqnum given last proposed claimed numeric single any no whichever his her "
    "true false incorrect worst plausible different other another new"
)


class _AnswerVerb:
    """``search(text)``: the first "answer" used as a verb in a sentence of lower-case words
    joined by single spaces."""

    def search(self, text: str) -> re.Match[str] | None:
        for m in _ANSWER_WORD.finditer(text):
            before = text[: m.start()].rsplit(None, 1)
            if not before or before[-1] not in _NOUN_BEFORE:
                return m
        return None


class _Searcher(Protocol):
    def search(self, text: str) -> re.Match[str] | None: ...


_ACTS: tuple[tuple[Act, _Searcher], ...] = (
    ("solve", _AnswerVerb()),
    (
        "solve",
        re.compile(
            rf"{_WH}(?:\s+\w+){{0,8}}?\s+(?:{_SOLVE_OBJECT}"
            r"|is|are|does|do|will)\s+(?:\w+\s+){0,8}?(?:" + _SOLVE_OBJECT + r")\b"
            rf"|{_WH}\s+(?:\w+\s+){{0,3}}?(?:{_SOLVE_OBJECT})\b",
            _I,
        ),
    ),
    (
        "vote",
        re.compile(
            r"\b(?:majority|consensus|plurality|modal|votes|voting|tally)\b"
            # "return the mode" of the answers (their most frequent value)
            r"|\b(?:return|give|output|report|take|find|pick|compute|use|state)\s+(?:the|their)\s+"
            r"mode\b(?!\s+of\s+(?!the\s+(?:answers|responses|results|solutions)))"
            r"|\bvote\b(?!\s+for\s+(?!the\s+(?:\w+\s+)?(?:answer|response|solution)))"
            r"|\bmost\s+(?:common|frequent|frequently|popular|often|times|support|votes)\b"
            r"|\bmost\s+of\s+(?:them|the|these|those)\b"
            r"|\bmost\s+(?:models|responses|answers|solutions|workers|candidates|agents)\b"
            r"|\bagreed?\s+(?:on|upon)\b"
            r"|\b(?:most|all|both|they|models|responses|answers|majority|them|which|qqnum"
            r"|solutions|workers|candidates)\s+(?:\w+\s+)?(?:agree|agrees)\b"
            r"|\bcount\s+(?:how|the\s+votes|the\s+answers|each)\b"
            r"|\bgiven\s+(?:the\s+)?most\b|\bmost\s+(?:voted|given|agreed)\b"
            r"|\b(?:broadest|widest)\s+agreement\b|\bpoll\b",
            _I,
        ),
    ),
    (
        "check",
        re.compile(
            r"\b(?:check|verify|validate|confirm|review|critique|recheck|proofread|audit"
            r"|revise|fix|examine|inspect|assess|scrutini[sz]e|grade|judge|reconcile"
            r"|aggregate|synthesi[sz]e)\b"
            r"|\b(?:combine|merge|weigh)\s+(?:the\s+|these\s+|those\s+|all\s+|both\s+)?"
            r"(?:\w+\s+)?(?:answers|responses|solutions|candidates|results|them|these|those"
            r"|both|all)\b"
            r"|\b(?:choose|pick|select|decide\s+on|compare)\s+(?:out\s+)?"
            r"(?:the|one|between|among|amongst|from|which|whichever|it|them|these|those|either"
            r"|both|all|each|an?\s+(?:\w+\s+)?(?:answer|response|solution|option|candidate)"
            r"|answers|responses|solutions|candidates|results)\b"
            r"|\b(?:double|re|cross)\s+check\b"
            # to challenge or test an answer is to check it ("stress-test the result above")
            r"|\b(?:challenge|dispute|contest|interrogate|question|probe|test|stress\s+test"
            r"|attack|pressure\s+test)\s+(?:the|that|this|these|those|each|every|its|their|both"
            r"|all|any)\s+(?:\w+\s+){0,2}?(?:answers?|solutions?|responses?|results?|reasoning"
            r"|work|claims?|conclusions?|arguments?|derivations?|proofs?)\b"
            r"|\b(?:go|look)\s+(?:over|through)\b(?!\s+(?:the\s+|this\s+)?(?:problem|question"
            r"|task|exercise|puzzle)s?\b)|\blook\s+for\b"
            r"|\b(?:answers?|results?|solutions?|responses?|it|that|this|they|qqnum|qqbox)"
            rf"(?:\s+{_PAST})?\s+(?:is|are|was|were)\s+(?:\w+\s+){{0,2}}?(?:right|correct|wrong"
            r"|incorrect|valid"
            r"|accurate)\b"
            r"|\b(?:test|evaluate)\s+(?:the|each|all|both|every|these|those|them|it|that|this)"
            r"\s+(?:\w+\s+){0,2}?(?:answers?|responses?|solutions?|results?|candidates?|"
            r"them|it|that|this|work|reasoning|calculations?|steps|proof|derivation|attempts?)\b"
            r"|(?<!the\s)(?<!a\s)(?<!your\s)\bcorrect\s+(?:it|them|this|that|any|errors?|mistakes?"
            r"|the|if|where|as|whatever)\b"
            r"|\b(?:find|identify|spot|flag|catch)\s+(?:and\s+\w+\s+)?(?:the|any|all|each)?\s*"
            r"(?:\w+\s+)?(?:errors?|mistakes?|flaws?|slips?|bugs?|issues?|typos?)\b"
            r"|\b(?:decide|determine|identify|tell\s+me|say|state|judge)\s+(?:on\s+)?"
            r"(?:whether|which|if|between)\b"
            r"|\bwhich\s+(?:\w+\s+){0,3}?(?:answers?|responses?|solutions?|one|candidates?"
            r"|results?|qqnum)\b|\bwhich\s+(?:is|are|was|of)\b"
            r"|\b(?:reconsider|rethink|revisit|reexamine|reevaluate|vet|adjudicate)\b"
            r"|\bpoke\s+holes\b|\b(?:holds?|stands?)\s+up\b|\blook\s+closely\b|\bcritic\s+of\b"
            r"|\b(?:is|are|was|were)\s+(?:\w+\s+){0,3}?(?:answers?|results?|solutions?"
            r"|responses?|claims?|it|that|this|they|qqnum|qqbox|work|reasoning|calculation)"
            r"\s+(?:\w+\s+){0,3}?(?:right|correct|wrong|incorrect|valid|accurate|true|false"
            r"|consistent|sound|reasonable|plausible|off)\b"
            r"|\bwhether\b(?:\s+\w+){0,8}?\s+(?:right|correct|wrong|incorrect|valid|accurate"
            r"|fits?|holds?|works?|stands?|survives?|matches)\b"
            r"|\b(?:the\s+)?(?:best|better|right|correct|most\s+accurate)\s+(?:one|of(?!\s+luck))\b"
            r"|\bwhichever\b"
            r"|\b(?:the|a)\s+(?:correct|right|best|better|true|most\s+accurate)\s+(?:final\s+)?"
            r"(?:answers?|ones?|responses?|solutions?)\s+(?:\w+\s+){0,2}?(?:from|among|amongst"
            r"|between|of\s+the|of\s+these|of\s+those)\b",
            _I,
        ),
    ),
    (
        "restate",
        re.compile(
            # "repeat after the last model": say what it said
            r"\brepeat\s+after\s+(?:the\s+|that\s+)?(?:\w+\s+)?(?:model|worker|step|solver|agent"
            r"|responder)\b"
            rf"|\b{_RESTATE_VERBS}\b(?:\s+\w+){{0,3}}?\s+{_PAST}\s+(?:\w+\s+){{0,2}}?{_ANS}\b"
            rf"|\b{_RESTATE_VERBS}\b(?:\s+\w+){{0,4}}?\s+{_ANS}\b(?!\s+to\b)"
            rf"(?:\s+(?:of|from|in|at|by|shown|given|reported|stated|provided|that|you|they|see|saw"
            rf"|the|a|an|step|model|models|response|responses|worker)){{0,5}}\s+(?:{_PAST}"
            rf"|again|step|model|response|before)\b"
            rf"|\b(?:repeat|restate|re\s+state|relay|echo|quote|reproduce|transcribe|forward"
            rf"|carry|pass\s+(?:along|on)|give\s+back|hand\s+back)\s+(?:it|that|them)\b(?!\s+out\b)"
            rf"|\b(?:say|write|give|state|repeat|output|print|return|provide)\b(?:\s+\w+){{0,4}}"
            rf"\s+(?:again|once\s+more)\b"
            rf"|\b(?:repeat|restate|relay|echo|copy|return|paste|forward|reiterate|parrot)\s+"
            rf"(?:exactly\s+|just\s+|back\s+)?what\b"
            rf"|\b(?:{_RESTATE_VERBS[3:-1]}|paste|deliver|hand\s+over|pass)\b(?:\s+\w+){{0,4}}?\s+{_ANS}"
            rf"\s+(?:\w+\s+){{0,3}}?(?:unchanged|verbatim|as\s+is)\b"
            rf"|\b(?:paste|hand\s+over|deliver)\b(?:\s+\w+){{0,3}}?\s+{_PAST}\s+(?:\w+\s+){{0,2}}?{_ANS}\b"
            rf"|\b(?:paste|hand\s+over|deliver)\s+(?:the\s+)?{_ANS}\s+(?:from|of)\s+(?:\w+\s+)?{_PAST}\b"
            rf"|\b(?:the\s+)?same\s+{_ANS}\s+as\s+(?:\w+\s+)?{_PAST}\b",
            _I,
        ),
    ),
    (
        "describe",
        re.compile(
            r"\b(?:explain|describe|summari[sz]e|restate|re\s+state|rephrase|reword"
            r"|paraphrase|translate|copy|list|identify|classify|outline|repeat|quote"
            r"|reproduce|transcribe|count|rewrite|name|read)\b(?:\s+\w+){0,3}?\s+"
            r"(?:problems?|questions?|tasks?|statements?|exercises?|numbers|words|prompt"
            r"|instructions?|puzzle|it|letters|characters|digits|lines|sentences|options)\b"
            r"|\bhow\s+(?:many|long)\s+(?:words|letters|characters|numbers|lines|sentences"
            r"|options|digits)\b"
            r"|\bwhat\s+(?:the|this)\s+(?:problem|question|task)\s+(?:asks|is|means|wants)\b",
            _I,
        ),
    ),
    (
        "solve",
        re.compile(
            r"\b(?:solve|compute|calculate|evaluate|determine|derive|tackle|attempt"
            r"|trace|simulate|execute|crunch|redo|recompute|recalculate|rework)\b"
            r"|\b(?:work|figure|carry|puzzle|sort|hash)\s+(?:\w+\s+){0,2}?out\b"
            r"|\bwork\s+(?:through|on|it|the|this)\b"
            r"|\bfind\b(?!\s+(?:a|some|another|any|me)\s+(?:\w+\s+)?(?:numbers?|integers?"
            r"|values?|digits?|words?|letters?|ones?)\b)"
            rf"|\b(?:get|reach|arrive\s+at|obtain|try\s+to\s+(?:get|reach|find))\s+(?:\w+\s+){{0,2}}?"
            rf"(?:{_SOLVE_OBJECT})\b"
            r"|\btry\s+(?:it|this|again|the\s+problem|the\s+question)\b"
            r"|\brun\s+(?:through|the|it)\b"
            r"|\bshow\s+(?:\w+\s+){0,4}?(?:work|working|workings|steps|reasoning|calculations?"
            r"|values?|variables?|derivation)\b"
            rf"|\bhelp\b(?:\s+me)?\s+(?:with|on|to|solve|answer|figure|work)\b"
            rf"|\b(?:think|reason)\s+(?:it|this|about\s+(?:it|this|the\s+(?:problem|question"
            rf"|task)))\b"
            r"|\b(?:give|provide|state|report|tell|write|output|return|present|show|put|say"
            r"|produce|deliver|share|commit\s+to|reply\s+with|respond\s+with|let\s+me\s+know"
            r"|hand\s+in|nail\s+down|settle\s+on)"
            r"\b(?:\s+\w+){0,6}?\s+(?:answers?|results?|solutions?|letter|option"
            r"|work|steps|reasoning|calculation)\b"
            r"|\b(?:give|provide|state|report|tell|write|output|return)\b(?:\s+me)?\s+"
            r"(?:the|your|its|the\s+final|a\s+final|one\s+final)\s+(?:\w+\s+)?(?:value|number"
            r"|integer|expression|sum|product|total|difference|quotient|remainder)\b"
            r"|^\s*(?:just|only)?\s*(?:the|your)?\s*(?:final\s+)?(?:answer|result)\b"
            r"|\b(?:give|reply\s+with|respond\s+with|output|state|return|report|provide)\s+"
            r"(?:it|that|that\s+one|this|one)\s*$"
            r"|\b(?:deduce|infer|come\s+up\s+with|finish\s+with|end\s+with|conclude\s+with"
            r"|arrive\s+at|land\s+on|settle\s+on|dig\s+into|walk\s+through|working\s+"
            r"(?:\w+\s+)?out)\b"
            r"|\bidentify\s+the\s+(?:correct|right|best)\s+(?:option|choice|letter|answer)"
            r"|\bwhat\s+(?:(?:do|did|would|will)\s+)?you\s+(?:get|got|come\s+up\s+with"
            r"|end\s+up\s+with)\b"
            r"|\b(?:reply|respond)\s+with\s+(?:that|this|the|your|it)\b",
            _I,
        ),
    ),
    (
        # v3.1's further ways to ask a vote, a check, a restate and a solve: entries of
        # their own, each a small search behind a narrow gate
        "vote",
        re.compile(
            r"\b(?:highest|greatest|largest|biggest|top)\s+(?:count|frequency|tally"
            r"|number\s+of\s+(?:times|votes|occurrences|supporters|mentions))\b"
            r"|\b(?:came|comes|come|shows?|showed|turns?|turned|crops?|cropped)\s+up\s+(?:the\s+)?"
            r"most\b|\bmost\s+(?:repeated|mentioned|cited|recurring|supported|chosen|picked)\b"
            r"|\b(?:appears?|appeared|occurs?|occurred|recurs?)\s+(?:the\s+)?most\b"
            r"|\b(?:answer|response|one|result)\s+(?:\w+\s+)?wins\b"
            r"|\bpopular\s+(?:answer|choice|one|result|response)\b"
            r"|\bmost\s+(?:agreement|support|backing|consensus)\b"
            r"|\bmode\s+of\s+(?:the\s+)?(?:\w+\s+)?(?:answers|responses|results|candidates|votes)\b"
            r"|\b(?:the|statistical)\s+(?:statistical\s+)?mode\s+of\b|\blet\s+(?:\w+\s+){1,3}?vote\b"
            r"|\b(?:report|give|return|output|state|announce|declare|name|tell\s+me|pick|take"
            r"|choose|select|go\s+with)\s+(?:me\s+)?(?:the\s+|whichever\s+)(?:winner|winning"
            r"|wins|won|top\s+(?:one|answer|result))\b",
            _I,
        ),
    ),
    (
        "check",
        re.compile(
            r"\b(?:take|have)\s+(?:a\s+)?(?:second|another|closer|hard|careful|fresh)\s+look\b"
            r"|\b(?:is|are)\s+there\s+(?:any\s+)?(?:\w+\s+)?(?:errors?|mistakes?|flaws?|bugs?|slips?"
            r"|problems?|issues?)\b"
            r"|\b(?:answers?|results?|solutions?|responses?|it|that|this|they|reasoning|work)\s+"
            r"(?:\w+\s+){0,2}?(?:makes?\s+sense|adds?\s+up|checks?\s+out|holds?\s+water)\b"
            r"|\bput\s+(?:\w+\s+){0,4}?to\s+the\s+test\b|\bpoke\s+at\b"
            r"|\bmake\s+sure\s+(?:that\s+)?(?:\w+\s+){0,3}?(?:holds?|stands?)\b"
            r"|\b(?:agree|disagree|concur)\s+with\s+(?:the\s+|this\s+|that\s+)?(?:\w+\s+){0,2}?"
            r"(?:answers?|responses?|results?|solutions?|it|that|this|them|workers?|models?)\b"
            r"|\b(?:resolve|settle)\s+(?:the\s+|this\s+|which\s+|any\s+)?(?:\w+\s+)?"
            r"(?:disagreement|conflict|discrepanc|dispute|tie|answers?|responses?|of)\w*",
            _I,
        ),
    ),
    (
        "restate",
        re.compile(
            rf"\bbring\b(?:\s+\w+){{0,4}}?\s+(?:forward|over|along)\b"
            rf"|\b(?:submit|finali[sz]e|keep|present|adopt|accept)\b(?:\s+\w+){{0,3}}?\s+"
            rf"{_ANS}\s+(?:\w+\s+){{0,4}}?(?:as\s+(?:the\s+|your\s+|our\s+)?final|as\s+is"
            rf"|unchanged)\b"
            rf"|\b(?:submit|finali[sz]e|adopt|accept|keep)\s+(?:the\s+|that\s+)?"
            rf"(?:{_PAST}\s+(?:\w+\s+)?{_ANS}|{_ANS}\s+(?:from|of|in|at)\s+(?:\w+\s+){{0,2}}?"
            rf"(?:{_PAST}|step))\b"
            rf"|\bkeep\s+(?:it|that|this)\s+(?:as\s+is|unchanged)\b"
            rf"|\b(?:repeat|restate|reiterate|echo|parrot|duplicate|copy)\s+(?:the\s+|that\s+)?"
            rf"(?:final\s+)?{_ANS}\b"
            rf"|\b(?:reiterate|re\s+send|resend|parrot|duplicate|reprint|re\s+print|re\s+output)"
            rf"\b(?:\s+\w+){{0,5}}?\s+(?:{_ANS}|{_PAST})\b"
            rf"|\b(?:deliver|hand\s+over|paste)\b(?:\s+\w+){{0,3}}?\s+{_ANS}\s+{_PAST}\b",
            _I,
        ),
    ),
    (
        # v3.1's further ways to ask a solve (an entry of its own: a smaller search behind
        # a narrower gate than the solve entry above)
        "solve",
        re.compile(
            r"\b(?:have|take|give\s+(?:it|this|that|the)(?:\s+(?:one|problem|question|task))?|make)"
            r"\s+(?:a|an|another)\s+(?:go|stab|shot|crack|try|whirl|swing|attempt)\b"
            r"|\b(?:need|want|would\s+like)\s+(?:\w+\s+){0,2}?(?:answers?"
            r"|results?|solutions?|final\s+(?:number|value))\b"
            r"|\bapproach\s+(?:the|this|it|each)\b"
            r"|\b(?:multiply|add|subtract|divide|simplify|factor|expand|square|round)\s+"
            r"(?:\w+\s+){0,2}?(?:qqnum|qqslot|it|them|the\s+(?:numbers?|expression|equation"
            r"|terms?|values?|fraction))\b"
            r"|\b(?:give|provide|state|report|tell|write|output|return)\b(?:\s+me)?\s+"
            r"(?:the|your|its)\s+(?:correct|right|own|best|final)\s+(?:response|reply)\b"
            r"|\btry\s+your\s+hand\b"
            r"|\bcrack\s+on\b|\b(?:crack|nail|tackle|handle)\s+(?:it|this|that)\b"
            r"|\bknock\s+(?:\w+\s+){0,2}?out\b|^(?:\w+\s+)?go\s+ahead\b"
            r"|\bput\s+your\s+mind\s+to\b|\bwork\s+towards?\b",
            _I,
        ),
    ),
    (
        # the same, in common words: a small search
        "solve",
        re.compile(
            r"^(?:\w+\s+){0,3}?do\s+(?:this|it|the\s+(?:problem|question|task|exercise|calculation"
            r"|math|sum))\b(?!\s+(?:one\s+)?(?:for|about|in|as|with|to)\b)"
            r"|\bhave\s+at\s+it\b|\bgive\s+it\s+(?:your\s+)?(?:best|all)\b|\bdo\s+your\s+best\b"
            r"|\blet\s+(?:(?:me|us|s)\s+)?see\s+(?:your|the)\s+(?:answer|solution|result|work)",
            _I,
        ),
    ),
    (
        "restate",
        re.compile(
            rf"\b(?:use|take)\b(?:\s+\w+){{0,3}}?\s+{_ANS}\s+(?:\w+\s+){{0,4}}?as\s+"
            r"(?:the\s+|your\s+|our\s+)?final\b",
            _I,
        ),
    ),
)
# v3.1f's rules, by structure rather than by phrase: an answer in view handed on is a
# restate (a transfer verb whose object is an earlier answer, or what an earlier step
# concluded); a share of the answers is a vote (most / more of them agree, share, gave);
# a question whether an answer in view is right is a check.
_VIEW = (
    r"(?:above|earlier|previous|previously|prior|preceding|before|latest|given|shown"
    r"|last(?=\s+(?:steps?|models?|responses?|answers?|workers?|one|agents?|results?|solutions?"
    r"|outputs?|repl(?:y|ies)|qqnum))"
    r"|former|step\s+qqnum|model\s+qqnum|worker\s+qqnum|response\s+qqnum)"
)
_HELD = (
    r"(?:final\s+)?(?:answers?|results?|responses?|solutions?|conclusions?|verdicts?"
    r"|outputs?|replies|reply|decision|value)"
)
_XFER = (
    r"(?:pass|carry|forward|deliver|hand|relay|echo|mirror|repeat|restate|copy|transcribe"
    r"|reproduce|parrot|reiterate|report|state|give|output|return|present|extract|submit"
    r"|keep|tell|say|write|print|provide|send|take|pull|grab|find|locate|bring|announce|reply"
    r"|respond|put|adopt|answer\s+with)"
)
_QUALITY = (
    r"(?:correct|right|best|better|wrong|incorrect|worst|most|least|true|false|accurate"
    r"|majority|common|popular|minority|format|style|form|way|manner|box|example|own|new"
    r"|problems?|questions?|tasks?|expressions?|exercises?|puzzles?|equations?|qqslot|scratch"
    r"|lines?|pages?|carefully|to|holes?|gaps?|errors?|mistakes?|flaws?|issues?|bugs?|problems?"
    r"|weakness(?:es)?|faults?|slips?)"
)
_PAST_ACT = (
    r"(?:concluded|answered|said|gave|got|found|reached|decided|arrived|came|wrote|output"
    r"|returned|reported|settled|chose|picked|proposed|suggested|determined|computed|stated"
    r"|claimed|conclude|answer|say|give|get|find|decide|arrive|come|report|settle)"
)
_SPEAKER = (
    r"(?:model|worker|step|agent|assistant|solver|they|others?|response|qqnum|one|ones|last"
    r"|previous|earlier|everyone|person)"
)
_RELAY = re.compile(
    rf"\b{_XFER}\b(?:\s+(?!{_QUALITY}\b)\w+){{0,4}}?\s+{_HELD}\b"
    rf"(?:\s+(?!{_QUALITY}\b)\w+){{0,4}}?\s+{_VIEW}\b(?!\s+(?:line|lines|page|sentence|paragraph))"
    rf"|\b{_XFER}\b(?:\s+(?!{_QUALITY}\b)\w+){{0,3}}?\s+{_VIEW}\s+(?:\w+\s+){{0,2}}?{_HELD}\b"
    rf"|\b(?:{_XFER}|along|on|through|back)\s+(?:me\s+|back\s+|exactly\s+|just\s+)?what\s+"
    rf"(?:\w+\s+){{0,3}}?{_SPEAKER}\w*\s+(?:\w+\s+)?{_PAST_ACT}\b"
    rf"|^(?:\w+\s+)?(?:what|which)\s+(?:was|were|is)\s+(?:the\s+)?{_HELD}\s+(?:\w+\s+){{0,3}}?"
    rf"{_VIEW}\b"
    rf"|^(?:\w+\s+)?(?:what|which)\s+(?:was|were|is)\s+(?:the\s+)?{_VIEW}\s+(?:\w+\s+){{0,2}}?"
    rf"{_HELD}\b"
    rf"|^(?:\w+\s+)?what\s+(?:did|does|had)\s+(?:\w+\s+){{0,3}}?(?:{_VIEW}|{_SPEAKER})\w*\s+"
    rf"(?:\w+\s+)?{_PAST_ACT}\b"
    rf"|\bwhat\s+{_HELD}\s+(?:\w+\s+){{0,3}}?{_SPEAKER}\w*\s+(?:\w+\s+)?{_PAST_ACT}\b"
    rf"|\bwhatever\s+(?:\w+\s+){{0,3}}?{_SPEAKER}\w*\s+(?:\w+\s+)?{_PAST_ACT}\b"
    rf"|\blet\s+(?:the\s+)?{_VIEW}\s+(?:\w+\s+)?{_HELD}\s+(?:stand|remain)\b"
    rf"|\b(?:reply|response|answer|output)\s+(?:should|must|will|shall)\s+(?:\w+\s+)?be\s+"
    rf"(?:the\s+)?(?:{_VIEW}\s+(?:\w+\s+){{0,2}}?{_HELD}|{_HELD}\s+(?:\w+\s+){{0,3}}?{_VIEW})\b"
)
_SHARE_VERBS = (
    r"(?:share|shared|shares|agree|agreed|agrees|support|supported|supports|back|backed"
    r"|chose|choose|picked|pick|gave|give|say|said|went|go|converge|converged|arrived|arrive"
    r"|reached|reach|favou?r|favou?red|prefer|preferred|hold|held|endorse|endorsed|received"
    r"|receive|got|get|land|landed|settled|name|named)"
)
_VOTE_SHARE = re.compile(
    rf"\b(?:most|more|mostly|largely)\s+(?:of\s+)?(?:\w+\s+){{0,3}}?{_SHARE_VERBS}\b"
    r"|\b(?:largest|greatest|biggest|highest)\s+(?:number|share|count|portion|group|bloc"
    r"|fraction|proportion|part)\b"
    # "the answer repeated most (often)", not "given most carefully"
    r"|\b(?:repeated|given|stated|chosen|picked|named|cited|reported|produced|returned|occurs?"
    r"|occurring|appears?|appearing|recurs?|recurring|comes\s+up|shows\s+up)\s+(?:the\s+)?most\b"
    r"(?!\s+(?!often|frequently|commonly)\w+ly\b)"
    r"|\b(?:broadest|widest|greatest|most|strongest|largest)\s+(?:support|agreement|backing"
    r"|consensus|following)\b|\b(?:more\s+than|over|at\s+least)\s+half\b|\bhalf\s+or\s+more\b"
    r"|\b(?:majority|most)\s+(?:\w+\s+)?(?:supports?|backs?|favou?rs?|holds?|says?)\b"
    # "the answer at least two of them share": a share of more than one
    rf"|\bat\s+least\s+(?:two|three|qqnum)\s+(?:of\s+(?:the\s+)?\w+\s+)?(?:\w+\s+)?"
    rf"{_SHARE_VERBS}\b"
    r"|\bmost\s+(?:commonly|often|frequently|widely|repeatedly)\s+(?:\w+\s+)?(?:given|stated"
    rf"|reached|proposed|chosen|named|cited|reported|produced|returned|{_SHARE_VERBS})\b"
    r"|\b(?:most|more)\s+(?:supporters|backers|votes|endorsements|adherents|proponents"
    r"|followers)\b"
)
_ASKS_RIGHT = re.compile(
    r"^(?:(?:so|and|but|hmm|ok|okay|well|now|also|quick|honestly|then|where|how|when|why|if"
    r"|anywhere|at|all)\s+){0,4}"
    r"(?:is|are|was|were|does|do|did|has|have|can|could|would|will)\s+(?!not\b)"
    r"(?:\w+\s+){0,8}?(?:right|correct|wrong|incorrect|sound|valid|accurate|true|false"
    r"|mistakes?|errors?|flaws?|ok|okay|good|hold|holds|check|survive|stand|correctly"
    r"|incorrectly|properly)\b"
    r"|\b(?:find|spot|identify|point\s+out|look\s+for|search\s+for|poke|flag|catch|locate"
    r"|highlight|list|hunt\s+for|scan\s+for|dig\s+for|comb\s+for)\s+(?:\w+\s+){0,2}?"
    r"(?:holes?|gaps?|weakness(?:es)?|faults?|problems?|issues?|errors?|mistakes?|flaws?|bugs?"
    r"|slips?)\s+(?:in|with|of)\b"
    r"|\b(?:see|decide|determine|judge|say|find\s+out|work\s+out|tell\s+(?:me\s+)?|check)\s+"
    r"(?:if|whether)\s+(?:\w+\s+){0,6}?(?:right|correct|wrong|incorrect|sound|valid|true"
    r"|false|holds?|survives?|stands?|works?|checks\s+out|satisf(?:y|ies)|fits?|match(?:es)?"
    r"|meets?)\b"
    r"|\b(?:plug|substitute|put)\s+(?:\w+\s+){0,3}?(?:answers?|results?|solutions?|values?)\s+"
    r"(?:\w+\s+){0,2}?(?:back\s+)?into\b"
    r"|\b(?:find|spot|identify|say|tell\s+(?:me\s+)?|explain|show|see|point\s+out)\s+what\s+"
    r"(?:is\s+|s\s+|was\s+|went\s+|might\s+be\s+|may\s+be\s+)?(?:\w+\s+)?wrong\s+(?:with|in)\b"
    r"|\bsecond\s+guess\b|\b(?:second|fresh|another|extra|new)\s+(?:pair|set)\s+of\s+eyes\b"
    r"|\b(?:another|a\s+second|a\s+fresh|a\s+hard|a\s+critical)\s+look\s+at\b"
    r"|\bagree\s+or\s+disagree\b|\bdisagree\b|\b(?:deserves?|earns?|merits?)\s+"
    r"(?:\w+\s+)?(?:marks?|credit|points?)\b"
)
# "is it right" about the problem itself asks no check ("is the question well posed")
_ABOUT_PROBLEM = re.compile(r"\b(?:problem|question|task|exercise|puzzle|qqslot)\b")


_VOTE_PATTERNS = tuple(pattern for act, pattern in _ACTS if act == "vote")

_TRIGGERS: tuple[frozenset[str], ...] = tuple(
    _words(words)
    for words in (
        "answer",
        "what which how",
        "majority consensus plurality modal mode votes voting tally vote most agreed agree agrees "
        "count "
        "given broadest widest poll",
        "check verify validate confirm review critique recheck proofread audit revise fix "
        "examine inspect assess scrutinize scrutinise grade judge reconcile aggregate "
        "synthesize synthesise combine merge weigh choose pick select decide compare double "
        "re cross go look is are was were test evaluate correct find identify spot flag "
        "catch determine tell say state which reconsider rethink revisit reexamine "
        "reevaluate whether best better right most whichever vet poke adjudicate hold stand "
        "look critic challenge dispute contest interrogate question probe attack pressure",
        "repeat restate re relay copy echo reformat rephrase reword paraphrase quote "
        "reproduce transcribe forward pass carry hand give present summarize summarise "
        "report return state output write rewrite format tell say print provide paste deliver "
        "hand same pass",
        "explain describe summarize summarise restate re rephrase reword paraphrase "
        "translate copy list identify classify outline repeat quote reproduce transcribe "
        "count rewrite name read how what",
        "solve compute calculate evaluate determine derive tackle attempt trace simulate "
        "execute crunch redo recompute recalculate rework work figure find get reach arrive "
        "obtain try run show help think reason give provide state report tell write output "
        "return present put say answer result reply respond deduce infer come finish end "
        "produce deliver share commit let hand nail settle get "
        "conclude arrive land settle dig walk working identify carry puzzle sort hash",
        "highest greatest largest biggest top wins popular mode vote winner winning won up "
        "repeated mentioned cited recurring supported chosen picked agreement support backing "
        "consensus appears appear appeared occurs occur occurred recur recurs",
        "look there sense adds add checks holds water test poke stands agree disagree concur "
        "resolve settle",
        "bring submit finalize finalise keep present adopt accept repeat restate reiterate echo "
        "parrot duplicate copy re resend reprint deliver hand paste",
        "go stab shot crack try whirl swing attempt need want approach multiply add subtract "
        "divide simplify factor expand square round response reply hand nail tackle handle "
        "knock ahead mind towards toward",
        "do have best see",
        "use take",
    )
)
"""Per entry of :data:`_ACTS`, words one of which every match contains: a sentence with
none of them is not searched (a speed gate; it never changes a reading)."""
_NEGATION_WORDS = _words(
    "not never no without instead rather avoid refrain refuse decline nor opposite reverse"
)
_REFUSAL_WORDS = _words("nothing not never no without")
_OTHER_WORDS = _words(
    "someone somebody about something other another different new unrelated next words word "
    "letters letter characters character sentences sentence lines line vowels vowel spelling "
    "wording choose pick select compare rank name weigh vote which what typo typos grammar "
    "grammatical formatting punctuation paragraph essay email passage story poem resume article "
    "document tweet speech"
)
_ONLY_WORDS = _words("only just merely simply")
_IGNORE_WORDS = _words("ignore disregard forget")
_LITERAL_GATE_WORDS = "reply|respond|answer|output|print|say|write|return|type|enter|response"
_LITERAL_GATE = re.compile(rf"\b(?:{_LITERAL_GATE_WORDS})\b", _I)
_NEGATION = re.compile(
    r"\b(?:not|never|no\s+need\s+to|without|instead\s+of|rather\s+than|avoid|refrain\s+from"
    r"|(?:the\s+)?(?:opposite|reverse)\s+of"
    r"|refuse\s+to|decline\s+to|nor)\s+((?:(?!but\b|just\b|only\b|and\b|then\b|instead\b)\w+\s+)"
    r"{0,3}?)(?P<verb>\w+(?:\s+\w+)?)",
    _I,
)
_WRONG_OBJECT = re.compile(
    r"(?:give|answer|output|write|provide|state|return|report|reply|respond|produce|submit"
    r"|make)\w*(?:\s+\w+){0,3}?\s+(?:wrong|incorrect|false|inaccurate|erroneous|bogus)\b"
)
_INABILITY = re.compile(r"\b(?:i|we)\s+(?:can|could|do|did|am|was|have|really)\s+$")
_ACT_VERBS: tuple[tuple[Act, re.Pattern[str]], ...] = (
    ("solve", re.compile(
        r"(?:solv|comput|calculat|evaluat|answer|work\s+out|figur|determin|deriv|tackl"
        r"|giv|provid|stat|writ|reach|find|get|attempt)\w*", _I)),
    ("check", re.compile(
        r"(?:check|verif|validat|confirm|review|critiqu|proofread|audit|revis|fix|correct"
        r"|examin|inspect|assess|compar|choos|pick|select|judg|grad|test)\w*", _I)),
    ("vote", re.compile(r"(?:vot|majorit|tall|tak\w*\s+a\s+vote|take\s+the\s+majority)\w*", _I)),
    ("restate", re.compile(
        r"(?:repeat|restat|relay|cop|echo|quot|reproduc|just\s+copy)\w*", _I)),
)  # fmt: skip
_REFUSAL = re.compile(
    r"\b(?:do|say|write|output|answer|print|return|reply|respond|give|solve|check|compute)"
    r"\s+(?:absolutely\s+)?nothing\b"
    r"|\b(?:not|never)\s+(?:do|say|write|output|answer|print|return|reply|respond|give|react"
    r"|speak|work|continue)\s+(?:anything|a\s+thing|at\s+all)\b"
    r"|\b(?:not|never)\s+(?:reply|respond|react|speak|continue)\b(?!\s+(?:with|in)\b)"
    r"|\b(?:give|write|output|provide|state|print|return)\s+no\s+(?:final\s+)?answer"
    r"|\bwithout\s+(?:giv(?:e|ing)|provid(?:e|ing)|stat(?:e|ing)|offer(?:ing)?|report(?:ing)?"
    r"|commit(?:ting)?\s+to)\s+"
    r"(?:a|an|the|any|your)?\s*(?:final\s+)?answer",
    _I,
)
# A request about something other than the problem and its answers, in problem words.
_OTHER_OBJECT = re.compile(
    r"\b(?:someone|somebody)\s+else\b|\babout\s+(?:anything|everything)\s+else\b"
    r"|(?<!to\s)(?<!agree\son\s)(?<!agreed\son\s)(?<!agrees\son\s)\bsomething\b"
    r"(?!\s+(?:is\s+|seems\s+|looks\s+|feels\s+|might\s+be\s+|may\s+be\s+)?(?:off|wrong|amiss"
    r"|fishy|incorrect|mistaken)\b|\s+(?:that|which)\s+(?:\w+\s+){0,4}?(?:answers?|correct|right|wrong|incorrect|true"
    r"|false)\b|\s+(?:other\s+than|but|except|different\s+from|else\s+than)\s+(?:the|that"
    r"|this|your)\s+(?:\w+\s+)?(?:answers?|responses?|results?|ones?)\b)"
    r"|\b(?:other|another|different|new|unrelated|next)\s+(?:problem|question|task|topic"
    r"|subject|thing|exercise|puzzle)s?\b"
    r"|\b(?:words?|letters?|characters?|sentences?|lines?|vowels?|spelling|wording|typos?"
    r"|grammar|formatting|punctuation|tone|length)\b"
    r"(?:\s+\w+){0,3}\s+(?:of|in)\s+(?:the|this|that|your|each|every)\s+(?:question|problem"
    r"|task|answer|response|statement|reply|solution)s?\b"
    r"|\b(?:words?|letters?|characters?|sentences?|lines?|vowels?|syllables?)\s+(?:\w+\s+){0,2}?"
    r"(?:the|this|that|your|each)\s+(?:question|problem|task|answer|response|statement|reply"
    r"|solution)s?\s+(?:above\s+|here\s+|given\s+|shown\s+)?(?:has|have|contains?|includes?|uses?)\b"
    r"|\b(?:this|my|our|his|her)\s+(?:paragraph|essay|email|letter|passage|story|poem|resume"
    r"|article|document|tweet|speech)s?\b"
    r"|\b(?:question|problem|task|statement|prompt)s?\s+(?:has|have|contains?|includes?)\s+"
    r"(?:any\s+|some\s+)?(?:typos?|spelling|grammar|grammatical|formatting|punctuation)"
    r"|\b(?:choose|pick|select|compare|rank|name|weigh)\s+(?:\w+\s+){0,2}?(?:models?|workers?"
    r"|agents?|assistants?)\s*$"
    r"|\bvote\s+for\s+(?!the\s+(?:\w+\s+)?(?:answer|response|solution))"
    r"|\b(?:which|what)\s+(?:model|worker|agent|assistant)s?\s+(?:do\s+)?you\s+(?:like|prefer"
    r"|love|enjoy|trust\s+most)\b"
    r"|\b(?:which|what)\s+(?:model|worker|agent|assistant)s?\s+(?:above\s+|here\s+)?"
    r"(?:gave|wrote|said|produced"
    r"|answered|made|did)\b",
    _I,
)
# "Only restate the problem": a request about the problem that excludes answering it.
_ONLY_DESCRIBE = re.compile(
    r"\b(?:only|just|merely|simply)\s+(?:explain|describe|summari[sz]e|restate|re\s+state"
    r"|rephrase|reword|paraphrase|translate|copy|list|identify|classify|outline|repeat|quote"
    r"|reproduce|transcribe|count|rewrite|name|read)\b(?:\s+\w+){0,3}?\s+(?:problems?"
    r"|questions?|tasks?|statements?|exercises?|puzzles?)\b",
    _I,
)
_IGNORE = re.compile(
    r"\b(?:ignore|disregard|forget)\s+(?P<object>\w+(?:\s+\w+){0,4})",
    _I,
)
_IGNORED_ANSWERS = re.compile(
    r"^(?:the\s+|all\s+|any\s+|those\s+|these\s+)?(?:\w+\s+){0,2}?(?:answers?|responses?"
    r"|solutions?|attempts?|models?|candidates?|replies|results?|steps?|others|workers?"
    r"|consensus|majority|votes?|tally)\b"
    r"|^what\s+(?:the\s+)?(?:others?|they|everyone|other\s+\w+|workers?|models?|\w+\s+workers?)"
    r"\s+(?:said|say|wrote|answered|think|thought|gave|got)\b",
    _I,
)
# "Put the final answer in a box": a constraint on the reply, not a request.
_FORMAT = re.compile(
    r"^(?:put|place|write|box|format|present|end|finish|conclude|wrap)\b.*\b(?:answers?|results?"
    r"|qqbox|reply|response|it)\b",
    _I,
)
_PLACEHOLDERS = frozenset({_SLOT, _NUM, _BOX})


def _lower_case(pattern: re.Pattern[str]) -> re.Pattern[str]:
    """``pattern`` without IGNORECASE (its source has no upper-case letter to fold)."""
    return re.compile(pattern.pattern, pattern.flags & ~re.IGNORECASE)


# These read only the normalised sentence (lower-case ASCII: text with another script is
# off-task before), where IGNORECASE matches nothing more and costs a tenth of the reading.
_ANSWER_WORD, _FORMAT, _IGNORE, _IGNORED_ANSWERS = map(
    _lower_case, (_ANSWER_WORD, _FORMAT, _IGNORE, _IGNORED_ANSWERS)
)
_NEGATION, _ONLY_DESCRIBE, _OTHER_OBJECT, _REFUSAL = map(
    _lower_case, (_NEGATION, _ONLY_DESCRIBE, _OTHER_OBJECT, _REFUSAL)
)
_ACTS = tuple((a, _lower_case(p) if isinstance(p, re.Pattern) else p) for a, p in _ACTS)
_ACT_VERBS = tuple((a, _lower_case(p)) for a, p in _ACT_VERBS)
_VOTE_PATTERNS = tuple(pattern for act, pattern in _ACTS if act == "vote")
_PARAGRAPHS = re.compile(r"\n[ \t]*\n")
_DEFINE = _words("explain describe define tell")
_DEFINITION = re.compile(
    r"^(?:explain|describe|define|tell\s+me)\s+what\s+(?:a|an)\s+(?:\w+\s+){1,3}?(?:is|are|means)\b"
)
_OURS = ANCHORS | _words("we us our given")
_QUESTION_OPENERS = _words("what who whom whose where when which why how is are do does")
_TIME = re.compile(r"\b(?:take|taking)\s+(?:your|all\s+the|the|some)\s+time\b", _I)
_STRENGTH: tuple[Literal["vote", "check", "restate", "solve"], ...] = (
    "vote",
    "check",
    "restate",
    "solve",
)


def _normalise(text: str) -> str:
    # each substitution runs only where its gate substring occurs (the text is ~1 KB and
    # most of it blanked problems: a scan per pattern was most of the reading's time)
    text = _BLANK.sub(f" {_SLOT} ", text)
    if ":" in text:
        text = _join_verb_keys(text)  # "Output: its solution" asks it
    text = _LIST_MARK.sub(_list_mark, text)  # "1) think 2) answer": one step a sentence
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"')
    low = text.lower()
    if "time" in low:
        text = _TIME.sub(" ", text)
    if "\\" in text:
        text = _BOXED.sub(f" {_BOX} ", text)
    if "'s " in text:
        # whose question or answer it is does not change what is asked of it
        text = _drop_unknown_possessors(text)
    for pattern, replacement, gate in _CONTRACTIONS:
        if gate in low:
            text = pattern.sub(replacement, text)
    if _DIGIT.search(text):
        text = _NUMBER.sub(f" {_NUM} ", text)
    text = text.lower()
    if _SLANG_GATE.search(text):
        text = _SLANG.sub(lambda m: _CHAT_WORDS[m.group(0)], text)
    if "re-" in text:
        text = _RE_PREFIX.sub("", text)  # "re-emit the answer": the act again, as "re-check"
    if "character" in text:
        text = _IN_CHARACTER.sub("stay in role", text)  # a persona kept, no topic
    if "plain text" in text:
        text = text.replace("plain text", "plaintext")  # a format, not a text to write
    if "check" in text:
        text = _ONE_WORD_CHECK.sub(r"\1 check", text)
    if " in " in text:
        text = _IN_UNITS.sub(" ", text)
    if ":" in text:
        text = _GOAL_KEY.sub(r"the \1 is ", text)  # "goal: the right answer"
    if " or " in text:
        text = _EITHER_HEADER.sub(r"\1judge as \2 or \3: ", text)
    return _WHATS.sub("what is", text) if "whats" in text else text


# Round 8: chat shorthand, a closed class a reader knows ("can u dbl check", "most ppl",
# "lol"); each is read as the word it stands for (an interjection as nothing).
_CHAT_WORDS: dict[str, str] = {
    "u": "you", "ur": "your", "im": "i am", "dbl": "double", "rite": "right",
    "ppl": "people", "pls": "please", "plz": "please", "thx": "thanks", "lol": " ",
    "lmao": " ", "haha": " ", "hehe": " ", "ans": "answer", "prev": "previous",
    "cand": "candidate", "cands": "candidates", "wat": "what", "wats": "what is", "abt": "about",
    "bc": "because", "tho": "though", "pic": "pick", "gimme": "give me", "gonna": "going to",
    "wanna": "want to", "dunno": "do not know", "idk": "i do not know", "rn": "now",
    "ya": "you", "yr": "your", "msg": "message", "sol": "solution", "soln": "solution",
}  # fmt: skip
_SLANG = re.compile(r"\b(?:" + "|".join(sorted(_CHAT_WORDS, key=len, reverse=True)) + r")\b")
_SLANG_GATE = _SLANG


def _join_verb_keys(text: str) -> str:
    """Header keys that are transfer verbs, at a line's or a sentence's start, joined to
    their values ("Output: its solution"); other colons are kept."""
    out: list[str] = []
    last = 0
    at = text.find(":")
    while at >= 0:
        head = text[max(0, at - 12) : at]
        key = _KEY_BEFORE.search(head)
        if key is not None:
            start = at - len(head) + key.start()
            before = text[max(0, start - 2) : start]
            if (start == 0 or before.endswith("\n") or before in (". ", "; ")) and text[
                at + 1 : at + 3
            ].strip():
                out.append(text[last:at])
                out.append(" ")
                last = at + 1
        at = text.find(":", at + 1)
    return "".join(out) + text[last:] if out else text


def _list_mark(m: re.Match[str]) -> str:
    """A list mark ("1.", "(2)", "3)") at a line's or sentence's start (or "N)" after a
    space) as a sentence break; a number ending a sentence is kept ("The answer is 17.")."""
    start = m.start()
    before = m.string[max(0, start - 2) : start]
    if start == 0 or before.endswith("\n") or before in (". ", "; ", "! ", "? "):
        return "; "
    if m.group(0).rstrip().endswith(")") and before.endswith((" ", "\t")):
        return "; "
    return m.group(0)


def _drop_unknown_possessors(text: str) -> str:
    """``text`` with unknown possessors of the question or answer dropped ("the user's
    question": "the question"); a known one ("the majority's answer") is kept."""
    out: list[str] = []
    last = 0
    for m in _POSSESSOR.finditer(text):
        who = _WORD_BEFORE.search(text, max(0, m.start() - 30), m.start())
        if who is not None and who.group(0).lower() not in KNOWN:
            out.append(text[last : who.start()])
            last = m.end()
    return "".join(out) + text[last:] if out else text


def _literal(sentence: str) -> tuple[str, str] | None:
    """``(text to reply with, the words that ask for it)``, or ``None``."""
    for pattern in _LITERAL_QUOTED:
        m = pattern.search(sentence)
        if m is not None:
            return m.group(m.lastindex or 1), m.group(0)
    m = _LITERAL_BARE.search(sentence)
    if m is None:
        return None
    payload = m.group("payload")
    word = payload.lower()
    keyed = m.group("frame").rstrip().endswith(":")
    if keyed and (
        word in _TEMPLATE_WORDS or (word in _QUALITIES and m.group("verb").lower() in _KEYS)
    ):
        # "Final answer: <value>": the form of the answer, not a reply; "answer: incorrect"
        # (a key and its value): the quality the answer is to have
        return None
    frame = m.group("frame").lower()
    if word in _CHANGED and frame.strip() and not re.search(r"word|string|text", frame):
        return None  # "restate it with a digit altered": how the answer is changed, no reply
    if word in _NOT_PAYLOAD or _BLANK.search(sentence, m.end("payload")):
        # a word followed by a blanked problem is the problem's own ("answer: Compute ___.")
        return None
    framed = bool(m.group("frame").strip())
    if framed or (
        m.group("verb").lower() in ("say", "print", "output")
        and (word in _REPLY_WORDS or word not in VOCABULARY)
    ):
        return payload, m.group(0)
    return None


@lru_cache(maxsize=1 << 12)
def _tokens(sentence: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A normalised sentence's tokens (its words in canonical spelling, and commas) and
    its words; cached as :func:`_act_cues`."""
    raw = _WORDS.findall(sentence)
    tokens = [w if w == "," else canonical(w, KNOWN) for w in raw]
    for i in range(1, len(tokens)) if tokens != raw else ():
        # after a determiner a word is a noun: "an exam" ("a logic exam") is no misspelt
        # "examine"
        if (
            tokens[i] in _VERB_ONLY
            and raw[i] != tokens[i]
            and (
                raw[i - 1] in _DETERMINERS
                or (i >= 2 and raw[i - 2] in _DETERMINERS and raw[i - 1] == tokens[i - 1] != ",")
            )
        ):
            tokens[i] = raw[i]
    for i in range(1, len(tokens)):
        # "the correct one" reaches here as "the correct 1"
        if tokens[i] == _NUM and (
            tokens[i - 1] in _ONE_BEFORE or tokens[i + 1 : i + 2] in _RELATIVE
        ):
            tokens[i] = "one"
    return tuple(tokens), tuple(w for w in tokens if w != ",")


_LITERAL_GATE_LOWER = re.compile(rf"(?:{_LITERAL_GATE_WORDS})\b")
# sentence ends before a space or the end, or a line break: "[.!?;\n]+(?=\s|$)|\n", written
# to start with one character class (the scan then jumps to the candidates)
_LITERAL_PIECE = re.compile(r"[.!?;\n](?:[.!?;\n]*(?=\s|$)|(?<=\n))")


def _literal_candidates(text: str) -> Iterator[str]:
    """The pieces of ``text`` (split at sentence ends and line breaks) holding a word that
    may ask for a literal reply, in order; the gate is searched once over the whole text (a
    gate word never spans a break, whose characters are no word's)."""
    if text.isascii():
        # the gate's words without IGNORECASE and its leading \b (that lets the scan jump
        # to the words' first letters), the \b checked on each hit: the same positions
        low = text.lower()
        hits = [
            m.start()
            for m in _LITERAL_GATE_LOWER.finditer(low)
            if not m.start() or not (low[m.start() - 1].isalnum() or low[m.start() - 1] == "_")
        ]
    else:
        hits = [m.start() for m in _LITERAL_GATE.finditer(text)]
    start = at = 0
    breaks = [(m.start(), m.end()) for m in _LITERAL_PIECE.finditer(text)] if hits else []
    for end, after in (*breaks, (len(text), len(text))) if hits else ():
        while at < len(hits) and hits[at] < start:
            at += 1
        if at == len(hits):
            return
        if hits[at] < end:
            yield text[start:end]
        start = after


_TRIGGER_WORDS = frozenset().union(*_TRIGGERS)


@lru_cache(maxsize=1 << 12)
def _matches(pattern: re.Pattern[str], sentence: str) -> bool:
    """Whether ``pattern`` matches in ``sentence``, cached for the long patterns read on
    every normalised sentence (see :func:`_act_cues`)."""
    return pattern.search(sentence) is not None


@lru_cache(maxsize=1 << 12)
def _act_cues(sentence: str, triggers: frozenset[str]) -> frozenset[Act]:
    """The acts of :data:`_ACTS` whose pattern matches ``sentence`` (a normalised sentence
    whose words include ``triggers``, its words of :data:`_TRIGGERS`). Cached: the fixed
    sentences of a task source's questions ("Answer with the letter of the correct option")
    and of a plan's subtasks recur in every worker call that shows them."""
    return frozenset(
        act
        for (act, pattern), gate in zip(_ACTS, _TRIGGERS, strict=True)
        if triggers & gate and pattern.search(sentence)
    )


_THANKS = _words("thanks thank cheers thx ty")
_SOCIAL_GATE = _words(
    "good lovely fine nice great day morning afternoon evening night salutations greetings "
    "regards wishes sincerely hope job grateful obliged whenever ready excellent awesome "
    "amazing fantastic wonderful"
)
_SOCIAL = re.compile(
    r"^(?:(?:hey|hi|hello|oh|and|so|well)\s+(?:,\s+)?)?(?:"
    r"(?:good|lovely|fine|nice|great)\s+(?:day|morning|afternoon|evening|night)|salutations"
    r"|greetings|(?:best|kind|kindest|warm|warmest|warmly|many|all\s+the\s+best)\s+"
    r"(?:regards|wishes)|regards|(?:yours\s+)?sincerely"
    r"|(?:i\s+)?hope\s+(?:you|all|everything|things|this|it|your\s+\w+)\s+(?:are|is|am|were"
    r"|have|has|had|find|finds|going|doing|went|well|good|fine|great)\b"
    r"|(?:great|good|nice|excellent|awesome|amazing|fantastic|wonderful|brilliant)\s+"
    r"(?:job|work|going|stuff|effort)\b"
    r"|(?:i\s+am\s+|i\s+m\s+)?(?:so\s+|very\s+|really\s+|truly\s+)?(?:grateful|obliged)"
    r"|much\s+obliged|whenever\s+you|ready\s+when\s+you"
    r"|have\s+(?:a\s+)?(?:nice|good|great|lovely)\s+(?:day|one|evening|weekend))"
)
"""A sentence that opens with a greeting, a sign-off, a wish or praise: politeness."""
_TASK_WORDS = (ANCHORS - {"x", "code", "program", "outputs", _NUM, _SLOT, _BOX}) | _words(
    "model models worker workers number numbers assistant agent agents"
)
"""Words of a statement that make it context about the task, its answers or the pool."""
_STATEMENT_OPENERS = (_DETERMINERS | _TASK_WORDS) - _words("my our answer work") | _words(
    "it they we you there some another two three each every all both other earlier previous qqnum"
)
"""First words of a statement (a subject), not of a request."""
_THIRD_PARTY_GATE = _words("another other the next a later two three qqnum")
_THIRD_PARTY_SECOND = (["other"], ["next"], ["later"])
_THIRD_PARTY = re.compile(
    r"^(?:another|other|the\s+(?:next|other|following)|a\s+(?:later|second|different)|later"
    r"|two|three|qqnum|the)\s+(?:\w+\s+)?(?:models?|workers?|agents?|solvers?|steps?|checkers?"
    r"|reviewers?|assistants?)\s+(?:will|would|may|might|is\s+going\s+to|are\s+going\s+to"
    r"|is\s+about\s+to|shall)\b"
)
"""A clause of what another worker will do: context, not a request to the reader."""
_MUSE_GATE = _words("think reason mull ponder let lets you")
_MUSE_ONLY = re.compile(
    r"(?:let\s+(?:us\s+)?|lets\s+)?(?:(?:think|reason|mull|ponder)\s+(?:about\s+)?"
    r"(?:it|this|that|things|everything)(?:\s+(?:over|through|out))?|do\s+(?:it|this))"
    r"(?:\s+(?:carefully|together|thoroughly|properly|slowly|calmly|aloud|loud|first|well"
    r"|deeply|hard|again|a\s+bit|for\s+a\s+moment))*$"
    r"|you\s+(?:can|could|will)\s+do\s+(?:it|this)$"
)
_CAUTION_OBJECTS = _words("for it this that them at all now here by into out")
_CAUTION_OPENERS = _words("make ensure see be")
_ATTENTION_VERBS = _words("watch mind heed beware pay look")
_ATTENTION = re.compile(
    r"^(?:watch(?:\s+out\s+for)?|mind|heed|beware(?:\s+of)?|look\s+out\s+for"
    r"|pay\s+(?:close\s+|careful\s+)?attention\s+to)\s+(?:the\s+|your\s+|all\s+|any\s+)?\w+"
)
"""Attention to a part of the work ("watch the details"), all its words known: a manner."""
_CAUTION = re.compile(
    r"^(?:make\s+sure|ensure|see\s+to\s+it|be\s+sure)\s+(?:that\s+)?(?:you|we|it|nothing"
    r"|there)\s+(?:do|does|will|can|is|are)?\s*(?:not|never|no)\b"
    r"|^make\s+no\s+(?:\w+\s+)?(?:errors?|mistakes?|slips?|blunders?)$"
)
"""A caution ("make sure you don't slip up"): how to work, no request."""
_THANKS_PAIRS = (["many", "thanks"], ["much", "appreciated"], ["i", "appreciate"])


_CLAUSE_END = re.compile(r",|\b(?:but|and|then|instead|just|only)\b")


def _negated(sentence: str) -> set[Act]:
    out: set[Act] = set()
    for m in _NEGATION.finditer(sentence):
        end = _CLAUSE_END.search(sentence, m.end("verb"))
        scope = sentence[m.start("verb") : end.start() if end else len(sentence)]
        doubt = m.group("verb").split()[0] in ("sure", "certain", "convinced", "confident")
        scoped = set(scope.split())
        for (act, pattern), gate in zip(_ACTS[2:4], _TRIGGERS[2:4], strict=True):
            # "not" reaches a vote or check cue in its clause (not the asker's doubt)
            if doubt or not scoped & gate or act in out:
                continue
            if not _WRONG_OBJECT.match(sentence, m.start("verb")) and pattern.search(scope):
                out.add(act)
        verb = m.group("verb")
        if _WRONG_OBJECT.match(sentence, m.start("verb")):
            continue  # "do not give a wrong answer": the faithful act, not none
        if _INABILITY.search(sentence, 0, m.start()):
            continue  # "i can not figure this out": the asker's, not a request
        for act, pattern in _ACT_VERBS:
            if pattern.fullmatch(verb) or pattern.fullmatch(verb.split()[0]):
                out.add(act)
                break
    return out


# Round 8: marks a reader looks past, read by their class. Pictographs and other symbols
# (emoji, check marks, arrows) are decoration, not language; chat-template tokens
# ("<|im_start|>system") and a paired tag around a request ("<task>...</task>") are markup.
_SYMBOL_CATEGORIES = frozenset({"So", "Sk", "Cf", "Cs", "Co", "Me"})
_TEMPLATE_TOKEN = re.compile(r"<\|[A-Za-z_]+\|>(?:[ \t]*(?:system|user|assistant)\b)?")
_PAIRED_TAG = re.compile(r"<([a-z_]+)>(.*?)</\1>", re.S)


_ASSIGNED_PRIOR = re.compile(
    r"\b(?:final|answer|result|out|output|ans)\s*=\s*(?:prev|previous|last|prior|earlier)"
    r"(?:[._]\w+)?\b",
    re.I,
)  # "final=prev.final": the earlier answer assigned to this one, handed on


def _untag(m: re.Match[str]) -> str:
    """A paired tag's content; a tag named by an act verb ("<echo>...</echo>") asks it."""
    name = m.group(1)
    return f" {name} {m.group(2)} " if name in _TERSE_ACTS else f" {m.group(2)} "


def _without_decoration(text: str) -> str:
    """``text`` without symbols outside ASCII and chat-template markup (round 8); arrows
    ("Ties → pick the first") are symbols too (round 9)."""
    if _FOREIGN.search(text):
        text = "".join(
            " " if ord(c) > 0x7F and (unicodedata.category(c) in _SYMBOL_CATEGORIES
            or 0xFE00 <= ord(c) <= 0xFE0F or 0x2190 <= ord(c) <= 0x21FF) else c
            for c in text
        )  # fmt: skip
    if "`" in text:
        text = _CODE_SPAN.sub("   ", text)  # code in backticks is the problem's own
    if "<" in text:
        text = _TEMPLATE_TOKEN.sub(" ", text)
        text = _PAIRED_TAG.sub(_untag, text)
    if "=" in text:
        text = _ASSIGNED_PRIOR.sub(" repeat the previous answer ", text)
    return text


def _is_foreign_filler(text: str) -> bool:
    if len(text) > 60:
        return False
    pieces = re.split(r"[.!?\u3002\uff01\uff1f,\uff0c;\uff1b\n]+", text.lower())
    pieces = [re.sub(r"[^\w' ]+", "", p).strip() for p in pieces]
    return any(pieces) and all(not p or p in _FOREIGN_FILLER for p in pieces)


@lru_cache(maxsize=1 << 14)
def recognise(text: str) -> Recognition:
    """The request ``text`` makes (module docstring); ``text`` is a subtask with its
    problem statements blanked (:func:`prepare`)."""
    if not isinstance(text, str):
        raise TypeError(f"recognise: text must be a str, got {type(text).__name__}")
    text = _without_decoration(text)
    stripped = _BLANK.sub(" ", _BOXED.sub(" ", text))
    if _is_foreign_filler(stripped):
        return Recognition("none", "filler")
    if _FOREIGN.search(stripped):
        return _foreign(stripped)
    if _FOREIGN_HINT.search(stripped):
        read = foreign_request(" ".join(stripped.split()))
        if read is not None and (read.act != "none" or len(set(stripped.lower().split())) > 1):
            return _foreign(stripped)  # "Repite la respuesta anterior sin cambios." (ASCII)
    text = flatten_markup(text)
    literal: str | None = None
    for raw in _literal_candidates(text):
        reply = _literal(raw.lstrip())
        if reply is not None:
            # the payload is exempt from the vocabulary: read the rest without it
            literal, asked = reply
            text = text.replace(asked, " ", 1)
            break
    acts: set[Act] = set()
    excluded: set[Act] = set()
    ignores_answers = False
    bare_imperative = False
    stray = noise = has_problem = faithful = preparatory = stated = shaped = False
    other_topic: dict[int, tuple[str, ...]] = {}
    stated_acts: set[Act] = set()  # acts a statement about the answers names (round 9)
    asked_in: dict[int, set[Act]] = {}
    family: Family | None = None
    normalised = _normalise(text)
    in_view = _InView(normalised)
    parts = _PARTS_GATE.search(normalised) is not None and _PARTS.search(normalised) is not None
    sentences = [
        (paragraph, sentence)
        for paragraph, block in enumerate(_PARAGRAPHS.split(normalised))
        for whole in _SENTENCES.split(block)
        for sentence in (_persona_apart(whole) if "," in whole and "as " in whole else (whole,))
    ]
    for paragraph, sentence in sentences:
        cached_tokens, cached_words = _tokens(sentence)
        tokens, words = list(cached_tokens), list(cached_words)
        if not words or all(w in _PLACEHOLDERS for w in words):
            has_problem = has_problem or bool(words)
            continue
        has_problem = has_problem or _SLOT in words or _NUM in words
        override = False
        if words[0] in _OVERRIDE_GATE:
            # round 9: "Instead of that, write a limerick", "Actually, never mind the maths,
            # what's the capital of Australia?": a later request that replaces ours
            marker = _OVERRIDE.match(" ".join(tokens))
            if (
                marker is not None
                and not _OVERRIDE_WORDS.isdisjoint(marker.group(0).split())
                and len(marker.group(0).split()) < len(tokens)
            ):
                tokens = tokens[len(marker.group(0).split()) :]
                words = [w for w in tokens if w != ","]
                override = bool(words)
                if not words:
                    continue
        if words[0] in _THIRD_PARTY_GATE or words[1:2] in _THIRD_PARTY_SECOND:
            others = _THIRD_PARTY.match(" ".join(tokens))
            if others is not None:
                # what another worker will do ("Another model will review it later") is
                # context, not asked of the reader; a clause after it still asks
                after = tokens[len(others.group(0).split()) :]
                if "," not in after:
                    continue
                tokens = after[after.index(",") + 1 :]
                words = [w for w in tokens if w != ","]
                if not words:
                    continue
        if len(words) <= 4 and words[0] in _TERSE_ACTS and set(words[1:]) <= _TERSE_OBJECTS:
            # a terse request ("restate", "verify prior", "task: vote")
            acts.add(_TERSE_ACTS[words[0]])
            continue
        if (len(words) == 1 and words[0] in _KEYS) or (
            len(words) <= 3
            and _TERSE_ACTS.keys().isdisjoint(words)
            and not is_noise(words, KNOWN)  # "zxcv bnm: What is 6 * 14?" is mash, no key
            and re.search(r"\b" + r"\W+".join(words) + r"\s*:", normalised) is not None
        ):
            continue  # a key ("Plan: solver, then checker"): its value is read on its own
        if ("will" in words or "shall" in words) and _others_will(words):
            continue  # "Answers will be graded automatically.": what others will do, context
        if words[0] in _REMARK_KEYS and len(words) > 2:
            # "FYI the result will be pooled": the remark after a key with no colon
            tokens = tokens[1:]
            words = words[1:]
        if is_noise(words, KNOWN):
            noise = True
            continue
        if (
            len(words) <= 6
            and not _MANNER_VERBS.isdisjoint(words)
            # "keep your answer tidy": the answer as the object kept in a manner
            and (ANCHORS | _INVERSION_WORDS).isdisjoint(
                w for k, w in enumerate(words) if k < 2 or words[k - 1] != "your"
            )
            and _MANNER_ONLY.match(" ".join(words))
        ):
            continue  # a manner only ("Stay sharp.", "Keep things concise."): asks nothing
        if len(words) > 2 and is_foreign(words):
            return _foreign(stripped)
        joined = " ".join(tokens)
        present = set(words)
        if "even" in present and _CONCESSION.search(joined):
            # "even if you think the answer above is wrong, repeat it": the clause concedes
            # a view of the reader's; it asks nothing
            joined = _conceded(joined)
            present = set(joined.split()) - {","}
        said = joined  # the words as written, before acts are read into them
        goal = _inverted_goal(joined) if present & _GOAL_GATE else None
        for m in _IGNORE.finditer(joined) if present & _IGNORE_WORDS else ():
            if _IGNORED_ANSWERS.match(m.group("object")):
                ignores_answers = True
            elif _IGNORED_PART.match(m.group("object")):
                pass  # round 9: "ignore that sentence, solve the actual question": read past
            elif _IGNORED_WORK.search(m.group("object")) or not _SMALL_TALK.search(
                m.group("object")
            ):
                return Recognition("offtask", "ignores-problem")
            # round 8: "forget the small talk about the weather": the chat set aside, no topic
            tokens = [t for t in tokens if t not in set(m.group("object").split())]
            words = [w for w in tokens if w != ","]
        if words[0] == "how" and _ABOUT_SOLVING.match(joined):
            # round 9: "How long would a 12-year-old take to solve this?": a question about
            # solving it (its time, its difficulty), not for its answer
            return Recognition("offtask", "other-topic")
        if words[0] in _DEFINE and _DEFINITION.match(joined):
            return Recognition("offtask", "other-topic")  # "explain what a prime number is"
        if present & _OTHER_WORDS and goal is None and _matches(_OTHER_OBJECT, joined):
            return Recognition("offtask", "other-object")
        # phrases that ask to solve in words of another act become "solve"
        if present & _SELF_CHECK_WORDS:
            joined = _without_self_check(joined, "solve" in acts, in_view)
        if parts and present & _COMBINE_WORDS:
            joined = _COMBINE_PARTS.sub("solve", joined)
        if present & _CHOICE_WORDS and not present & _IN_VIEW:
            # "select the correct option" with no answers in view: answering the question
            joined = _CHOICE.sub("solve", joined)
        if "solve" in joined:
            present.add("solve")
        # a comma between a verb and its object ("produce a complete, careful solution")
        # is no clause boundary for the act patterns
        plain = " ".join(t for t in joined.split(" ") if t != ",") if "," in tokens else joined
        found = set(_act_cues(plain, frozenset(present & _TRIGGER_WORDS)))
        found |= _structural_acts(plain, present, in_view)
        unchanged = (
            not present.isdisjoint(_UNCHANGED_GATE)
            and not present.isdisjoint(_HAND_ON_WORDS)
            and _UNCHANGED.search(joined) is not None
            and (not present.isdisjoint(_EARLIER_WORDS) or in_view())
            and goal is None
            and found <= {"restate", "solve", "describe"}
            and "solve" not in present  # "solve it and give the answer unchanged by rounding"
        )
        if unchanged:
            # round 9: an earlier answer handed on unchanged, in any verb ("Copy it as the
            # final answer without changing it", "state the final answer it arrived at, word
            # for word", "Read back the final answer given above, exactly as it was stated")
            found = {"restate"}
        statement = (
            bool(found - {"solve", "describe"})
            and goal is None
            and _states_only(words, present, joined)
        )
        if statement:
            # round 9: "Two workers have answered so far, and they disagree.", "There was a
            # vote earlier, but it was a tie.": a statement about the answers asks no act
            # on them (an answer stated, "The answer is 7.", still reads as before)
            if present & _STATED_ANSWERS and present & _EARLIER_WORDS:
                stated_acts |= found - {"solve", "describe"}  # of the answers in view
            found = found & {"solve", "describe"}
        if "vote" in found and present & _WHETHER_WORDS and _WHETHER_AGREE.search(plain):
            # "check whether the answers above agree": a check, unless a share is asked too
            # ("if the answers disagree, go with the majority")
            rest = _WHETHER_AGREE.sub(" ", plain)
            if not (any(p.search(rest) for p in _VOTE_PATTERNS) or _VOTE_SHARE.search(rest)):
                found = (found - {"vote"}) | {"check"}
        if (
            "check" in found
            and present & _OPTION_WORDS
            and not present & _IN_VIEW
            and not in_view()
        ):
            # weighing the question's own options with no answer in view is solving it
            found = (found - {"check"}) | {"solve"}
        if found and present & (_OWNERS | _OPTION_WORDS):
            owned = _OWNED.search(joined)
            what = owned.group("what") or owned.group("what2") if owned is not None else ""
            if what and what not in KNOWN and is_content(what, KNOWN):
                # "solve my plumbing problems", "the options for dinner": another topic
                return Recognition("offtask", "other-topic", unknown=(what,))
        verb = (
            _unknown_verb_on_answer(tokens)
            if present & _ANSWER_NOUNS and not present <= KNOWN
            else ""
        )
        judged = _QUALITY_ASKED.match(plain) if words[0] in _COPULAS else None
        if judged is None and words[0] in _DOES and len(words) <= 4 and words[1:2] in _PRONOUN:
            judged = _PRONOUN_ASKED.match(plain)  # "does it survive?" beside an answer in view
            judged = judged if judged is not None and in_view() else None
        pred = judged.group("pred") if judged is not None else ""
        if (
            judged is not None
            and (
                judged.group("this") or judged.group("view") or not present.isdisjoint(_VIEW_WORDS)
            )
            and not {pred, pred + "est", pred + "st"} & _SURFACE  # "is it long": its surface
        ):
            # "is the reasoning above airtight?": a question of an answer in view's quality
            found.add("check")
            verb = verb or pred
        if verb and found <= {"solve"}:
            # a verb the reader does not know with the answer as its object ("lock in your
            # final answer", "circle the result"): the answer is asked (an earlier one: handed
            # on, though the answer noun alone reads as solving: "emit the prior answer")
            rest = joined[joined.index(verb) + len(verb) :]
            if _VIEW_REF.search(" ".join(rest.split()[:8])):
                found = {"restate"}
            elif not found:
                found = {"solve"}
        if found == {"solve"} and words[0] in _MUSE_GATE and _MUSE_ONLY.match(plain):
            # "think it over carefully", "let's reason this out together", "you can do it":
            # thinking or encouragement with no answer asked, a manner (as "think step by
            # step"); beside a request for the answer it is that request's manner
            found = set()
        if not found and present & _PROBLEM_OBJECTS:
            on_problem = _VERB_ON_PROBLEM.match(joined)
            if on_problem is not None and on_problem.group("verb") in _SOLVING_VERBS:
                found = {"solve"}  # "handle this problem", "deal with the question"
        # a surface property named by its adverb ("written most politely") is the same
        elsewhere = None
        if found - {"describe"}:
            stems = present | {w[:-2] for w in present if w.endswith("ly") and len(w) > 5}
            if "longer" in stems and " no longer " in f" {joined} ":
                stems = stems - {"longer"}  # round 9: "so it no longer matches": no length
            if stems & _ELSEWHERE_GATE and not (stated and _ASKED_OF_STATED.match(joined)):
                elsewhere = _about_elsewhere(words, stems)  # "give the time" of a stated problem
        if elsewhere is not None:
            return Recognition("offtask", elsewhere)
        negated = _negated(joined) if present & _NEGATION_WORDS else set()
        if (present & _REFUSAL_WORDS and _REFUSAL.search(joined)) or (
            present & _ONLY_WORDS and _ONLY_DESCRIBE.search(joined)
        ):
            negated |= {"solve", "check", "vote", "restate"}
        if goal is not None:
            # the negation's object is correctness, not the act ("do not give the right
            # answer"): the act is asked, inverted
            negated = set()
            found = found - {"describe"} or {
                "vote" if goal == "vote" else "restate" if goal == "restate" else "solve"
            }
        if unchanged:
            negated.discard("restate")  # "without changing it" qualifies the hand-on
        excluded |= negated
        acts |= found
        if _SLOT not in present:
            # asked by the request, not read off the problem's own words
            asked_in.setdefault(paragraph, set()).update(found)
        inverted_cue = faithful_too = False
        if not statement and (
            goal is not None
            or present & _INVERSION_WORDS
            or (present & _FLAW_WORDS and present & _HAVING_WORDS)
            or ("only" in present and "one" in present)  # "the answer only one model gave"
        ):
            cue, faithful_too = inversion(said)
            if goal is not None:
                cue, faithful_too = cue or goal, False
            inverted_cue = cue is not None
            family = family or cue
            faithful = faithful or faithful_too
            if cue is not None and not found:
                found = {"vote" if cue == "vote" else "restate" if cue == "restate" else "solve"}
                acts |= found
                if _SLOT not in present:
                    # the act asked beside a scene ("Write a distractor: an answer that
                    # looks right but is not.")
                    asked_in.setdefault(paragraph, set()).update(found)
        # thanks ("Thanks a bunch in advance!"), a greeting, a sign-off, a wish or praise
        # ("Best regards", "hope all is well", "Great job so far!") is politeness, whatever
        # its words
        persona = (
            PERSONA_OPENERS.match(joined) is not None
            or (words[0] == "be" and words[1:2] in _ROLE_DETERMINERS and "and" not in present)
        ) or (
            not found
            and (
                words[0] in _THANKS
                or words[:2] in _THANKS_PAIRS
                or (not present.isdisjoint(_SOCIAL_GATE) and _SOCIAL.match(joined) is not None)
            )
        )
        if persona and not found and "and" in present:
            # round 9: "Pretend you are Shakespeare and write a sonnet about coffee": the role
            # comes with a request of its own, read as one
            persona = not any(
                m.group("verb") in NO_ACT_IMPERATIVES or m.group("verb") in REQUEST_OPENERS
                for m in _THEN_VERB.finditer(joined)
            )
        content = [w for w in words if w not in KNOWN and w != verb and is_content(w, KNOWN)]
        if unchanged and content:
            kept = _UNCHANGED.search(joined)  # "without editing it": how it is handed on
            content = [w for w in content if kept is None or w not in kept.group(0).split()]
        if present & _OWNERS and present & _OWNABLE:
            # the asker's own exam, course or school ("grade my school assignment", "wish
            # me luck for my exam") is the asker's matter, a topic, not the task's background
            content += [
                w for k, w in enumerate(words) if w in _OWNABLE and _OWNERS & set(words[k - 2 : k])
            ]
        if (
            content
            and inverted_cue
            and not faithful_too
            and found - {"describe"}
            and (not present.isdisjoint(ANCHORS) or goal is not None or "one" in present)
            and (family != "vote" or not present.isdisjoint(_ANSWER_NOUNS))
        ):
            # a request for a wrong answer: its other words say whose, why or how it is to
            # look ("a believable but wrong answer", "for a robustness benchmark", "play a
            # careless student and answer wrongly"), no topic
            content = []
        if content and found - {"describe"} and present & _ASIDE_GATE:
            # how to answer ("as if explaining to a student") or what to beware of ("avoid
            # traps") qualifies the request; its words are no topic
            aside = {w for m in _ASIDE.finditer(joined) for w in m.group(0).split()}
            content = [w for w in content if w not in aside]
        if content and present & _MANNER_NOUNS:
            # "in a warm, upbeat tone": the words of a manner phrase qualify the manner
            manner = {w for m in _MANNER_PHRASE.finditer(joined) for w in m.group(0).split()}
            content = [w for w in content if w not in manner]
        if stated and found <= {"solve"} and _ASKED_OF_STATED.match(joined) is not None:
            content, found = [], {"solve"}  # "give the distance" after a stated problem
        if (
            content
            and not found
            and not persona
            and (_NUM in present or (stated and words[0] in _QUESTION_OPENERS))
            and (
                words[0] in _QUESTION_OPENERS
                or (words[0] not in REQUEST_OPENERS and words[0] not in NO_ACT_IMPERATIVES)
            )
            and not _asks_deliverable(joined)
            and _stated_problem(normalised)
        ):
            # a problem stated in the subtask's own words ("A train leaves at 3 pm going
            # 60 km/h. How far has it gone by 5 pm?"): the problem, not another topic
            stated = has_problem = True
            continue
        if content and found <= {"solve"} and present & _ASKED_FOR_GATE:
            # "write the function the question asks for": the problem's own deliverable
            asked_for = {w for m in _ASKED_FOR.finditer(joined) for w in m.group(0).split()}
            if asked_for:
                content = [w for w in content if w not in asked_for]
                found = found or {"solve"}
        if (
            content
            and found == {"solve"}
            and words[-1] in ("help", "me", "out")
            and words[0] not in REQUEST_OPENERS
            and words[0] not in NO_ACT_IMPERATIVES
            and _REMARK_HELP.search(joined) is not None
        ):
            content = []  # "no idea how to start this, help?": the asker's plight, then help
        if found and not acts & found:
            acts |= found
            if _SLOT not in present:
                asked_in.setdefault(paragraph, set()).update(found)
        if (
            content
            and not found
            and words[0] in _ATTENTION_VERBS
            and _ATTENTION.match(joined) is not None
            and set(content) <= _ATTENTION_VERBS
        ):
            content = []  # "Watch the details", "Heed the units": where to look, a manner
        if (
            content
            and not found
            and (words[:2] == ["do", "not"] or words[0] == "never")
            and len(words) > 2
            and content == [words[1 if words[0] == "never" else 2]]
            and set(words[2 if words[0] == "never" else 3 :]) <= _CAUTION_OBJECTS
        ):
            content = []  # "don't fall for it", "never panic": a caution, asks nothing
        if content and not persona:
            if found - {"describe"}:
                if not _about_the_problem(words, content):
                    return Recognition("offtask", "other-topic", unknown=_first(content))
            elif found:
                return Recognition("offtask", "other-topic", unknown=_first(content))
            elif words[0] in _COPULAS and words[1:2] in _PRONOUN and in_view():
                # "is it in a plausible range?" of an answer in view: a check of it
                acts.add("check")
                asked_in.setdefault(paragraph, set()).add("check")
                continue
            elif words[0] in _QUESTION_OPENERS and not present & _OURS:
                # a question of its own about something else (not "what do we know?")
                return Recognition("offtask", "other-topic", unknown=_first(content))
            elif words[0] in _CONSTRAINT_VERBS and not _request_shaped(words, joined):
                continue  # "Suppose every rate stays constant.": a constraint, asks nothing
            elif (
                words[0] in REQUEST_OPENERS
                or words[0] in NO_ACT_IMPERATIVES
                or words[0] in _QUESTION_OPENERS
            ):
                # a sentence that asks no act of ours is scene or context beside a request
                # on the problem ("Imagine you are on a quiz show. Lock in your answer."):
                # off-task only when no sentence asks an on-task act, or when it replaces ours
                if override:
                    return Recognition("offtask", "other-topic", unknown=_first(content))
                other_topic.setdefault(paragraph, _first(content))
                continue
            elif len(words) <= 4 and len(content) == len(words):
                noise = True  # "blip blop", "wibble wobble": gibberish, not a remark
                continue
            elif (
                not negated
                and (words[0] in _STATEMENT_OPENERS or tokens[1:2] == [","])
                and not present.isdisjoint(_TASK_WORDS)
                and not _OWNERS & present
            ):
                # a statement about the task, its answers or the pool ("The question comes
                # from a textbook", "another model will also answer"): context, asks nothing
                continue
            else:
                stray = True
                shaped = shaped or _request_shaped(words, joined)
                if override and _request_shaped(words, joined):
                    return Recognition("offtask", "other-topic", unknown=_first(content))
                continue
        elif present & FAITHFUL_WORDS and not inverted_cue and (found or not _told(words)):
            # a statement of what others did ("the workers gave correct answers") asks nothing
            faithful = faithful or asks_faithful(joined)
        constraint = (
            words[0] in ("never", "no", "not")
            or (words[0] in _CAUTION_OPENERS and _CAUTION.match(joined) is not None)
            or words[1:2] == ["not"]
            or words[:2] == ["remember", "to"]
            or _FORMAT.search(joined) is not None
            or (words[0] in _KEYS and len(words) > 1 and words[1] in _KEYS)
        )
        if (
            not found
            and not negated
            and not constraint
            and not persona
            and words[0] in NO_ACT_IMPERATIVES
            # round 8: "Remember, precision counts." (a note), "Write in a friendly tone." (a
            # manner with no object), "Assume all quantities are positive." (a constraint)
            and tokens[1:2] != [","]
            and (words[1:2] not in _MANNER_PREPOSITIONS or present.isdisjoint(_MANNER_NOUNS))
            and words[0] not in _CONSTRAINT_VERBS
        ):
            if words[0] in _PREPARATORY and present & _PREPARATORY_OBJECTS:
                # "1. Read the answers above. 2. Count them." before the step's act
                preparatory = True
            else:
                bare_imperative = True
    if stated_acts and acts:
        # beside a request the statement says what it is about ("At least one answer above
        # is wrong. Find it and give the right value.": a check); alone it asks nothing
        acts |= stated_acts
    for paragraph, unknown in other_topic.items():
        # context only beside an on-task request of its own paragraph (not the question's)
        if not (asked_in.get(paragraph, set()) - excluded) & set(_STRENGTH):
            return Recognition("offtask", "other-topic", unknown=unknown)
    if literal is not None:
        return Recognition("literal", "literal", literal=literal)
    if bare_imperative and not acts - excluded - {"describe"}:
        # beside an on-task act a competent model does both ("Solve it. Explain briefly.")
        return Recognition("offtask", "unrecognised-request")
    if preparatory and not acts:
        return Recognition("offtask", "unrecognised-request")
    if {"check", "solve"} <= acts - excluded and not (in_view()):
        # "work it out, double-check intermediate results": with no answer in view, a
        # check beside solving is of one's own work
        excluded.add("check")
    if " or " in normalised and _EITHER_WAY.search(normalised):
        family, faithful = family or "act", True  # "correct or not, your choice"
    left = frozenset(acts - excluded)
    frozen_excluded = frozenset(excluded)
    kind: RecognisedKind | None = next((act for act in _STRENGTH if act in left), None)
    inverted = False
    hedge = noise
    if family is not None and (kind is not None or not left):
        # "do not repeat it; give a different one": the act excluded is the one inverted
        if faithful:
            hedge = True  # a wrong and a right answer asked for: unsure which
        else:
            inverted = True
            kind = family if family in ("vote", "restate") else kind or "solve"
    if kind is not None:
        return Recognition(
            kind, "request", acts=left, excluded=frozen_excluded,
            ignores_answers=ignores_answers, inverted=inverted, hedge=hedge,
        )  # fmt: skip
    if acts or excluded:
        return Recognition("offtask", "no-answer-asked", acts=left, excluded=frozen_excluded)
    if shaped:
        return Recognition("offtask", "other-topic")  # "Type a poem about the sea."
    if stray or noise:
        if has_problem:
            # noise or a stray remark beside the problem: a competent model answers it,
            # unsure what else was meant
            return Recognition("none", "meaningless" if noise else "filler", hedge=True)
        if noise and not stray:
            return Recognition("offtask", "meaningless")
        # a statement that asks nothing (a remark, narration, a scene) is no evidence of
        # another topic (round 8): read past, unsure what was meant
        return Recognition("none", "filler", hedge=True)
    return Recognition("none", "filler", ignores_answers=ignores_answers)


_RELAY_GATE = _words(
    "above earlier previous previously prior preceding before last latest given shown former "
    "step model worker response what"
)
_SHARE_GATE = _words(
    "most more mostly largely largest greatest biggest highest majority broadest widest "
    "strongest half least"
)
_RIGHT_GATE = _words(
    "holes hole gaps gap weakness weaknesses faults fault problems issues "
    "right correct wrong incorrect sound valid accurate true false mistake mistakes error "
    "errors flaw flaws ok okay good hold holds check survive stand disagree deserve deserves "
    "earn earns merit merits correctly incorrectly properly works work survives holds "
    "stands guess eyes look satisfy satisfies fit fits match matches meet meets plug substitute"
)
_IN_VIEW_WORDS = _words(
    "above earlier previous prior preceding last given shown that this it these those they "
    "them answer answers response responses solution solutions reasoning work result results "
    "model models worker workers said claim claims draft proposed candidate candidates"
)


def _surface(word: str) -> bool:
    """Whether ``word`` names a surface property ("long", "politest")."""
    return not {word, word + "est", word + "st", word + "er"}.isdisjoint(_SURFACE)


class _InView:
    """Whether a normalised text names an answer in view (:data:`_VIEW_REF`), searched once
    and only when a rule asks."""

    def __init__(self, text: str) -> None:
        self._text = text
        self._found: bool | None = None

    def __call__(self) -> bool:
        if self._found is None:
            text = self._text
            if "you" in text or "as " in text:
                text = _SELF_NAMED.sub(" ", text)  # "you are model 1": the reader itself
            self._found = _VIEW_REF.search(text) is not None
        return self._found


_SELF_NAMED = re.compile(
    r"\b(?:you\s+are|you\s+re|as)\s+(?:the\s+|an?\s+)?(?:\w+\s+)?(?:model|worker|agent|solver)"
    r"(?:\s+qqnum)?\b"
)


def _structural_acts(sentence: str, present: set[str], in_view: _InView) -> set[Act]:
    """Acts read from a sentence's structure (v3.1f): an answer in view handed on
    (restate), a share of the answers (vote), a question whether an answer in view is right
    (check); ``in_view()``: whether the text names an answer in view."""
    out: set[Act] = set()
    if present.isdisjoint(_STRUCTURAL_GATE):
        return out
    if not present.isdisjoint(_JUDGE_AS_GATE) and _JUDGE_AS.search(sentence):
        out.add("check")  # "mark the previous answer as correct or incorrect"
    if (
        not present.isdisjoint(_COPULA_WORDS)
        and _YES_NO_ON_VIEW.search(sentence)
        and not _surface(sentence.rsplit(None, 1)[-1])
    ):
        out.add("check")  # "does the answer above match what the question asks?"
    if not present.isdisjoint(_MERIT_GATE) and _MERIT.search(sentence):
        out.add("check")  # "evaluate the correctness of each answer above"
    if not present.isdisjoint(_AMENDED) and _AMENDED_ANSWER.search(sentence) and in_view():
        out.add("check")  # "return a corrected answer": what is corrected was checked
    if (
        not present.isdisjoint(_OPINION_GATE)
        and _OPINION.search(sentence)
        and (not present.isdisjoint(_VIEW_WORDS) or in_view())
    ):
        out.add("check")  # "your verdict on the answer above"
    if "you" in present and _OWN_END.search(sentence):
        out.add("solve")  # "tell me where you end up"
    if not present.isdisjoint(_HELP_GATE) and _HELP.search(sentence):
        out.add("solve")  # "give me a hand with this", "I'd like the final answer", "help?"
    if not present.isdisjoint(_AGREE_GATE) and _AGREE.search(sentence) and in_view():
        out.add("check")  # "(another model's answer is above.) Do you agree?"
    if not present.isdisjoint(_AMISS_GATE) and _AMISS.search(sentence) and in_view():
        out.add("check")  # "is anything off?", "something seems wrong with it" (answer in view)
    relay = (
        not present.isdisjoint(_RELAY_GATE)
        and not present.isdisjoint(_XFER_GATE)
        and _matches(_RELAY, sentence)
    ) or (not present.isdisjoint(_PARTICLE_GATE) and _HAND_ON.search(sentence) is not None)
    if not relay and not present.isdisjoint(_POSSESSIVES) and not present.isdisjoint(_XFER_GATE):
        # "the previous model solved this ... present its final answer"
        relay = _THEIR_ANSWER.search(sentence) is not None and in_view()
    if relay:
        if not _NOT_RELAY.search(sentence):
            out.add("restate")
    elif "with" in present and _WITH_ANSWER.search(sentence):
        out.add("solve")  # "come back with the answer", "finish with your final answer"
    if not present.isdisjoint(_SHARE_GATE) and _VOTE_SHARE.search(sentence):
        out.add("vote")
    if not present.isdisjoint(_SAME_GATE) and _SAME_AS_VIEW.search(sentence):
        out.add("restate")  # "your answer should be the same as the one above"
    if not present.isdisjoint(_LOOK_GATE) and _LOOK_OVER.search(sentence) and in_view():
        out.add("check")  # "look over the answer above", "sign off on it", "critic mode"
    if not present.isdisjoint(_CROWD_GATE) and _CROWD.search(sentence):
        out.add("vote")  # "go with the crowd", "the answer with the most ballots"
    if not present.isdisjoint(_WENT_WRONG_GATE) and _WENT_WRONG.search(sentence) and in_view():
        out.add("check")  # "figure out where they went wrong", "find the wrong step in it"
    if "once" in present and _ONCE_OVER.search(sentence) and in_view():
        out.add("check")  # "give the earlier solution a careful once-over"
    if (
        not present.isdisjoint(_RIGHT_GATE)
        and not present.isdisjoint(_IN_VIEW_WORDS)
        and _matches(_ASKS_RIGHT, sentence)
        and not (_ABOUT_PROBLEM.search(sentence) and present.isdisjoint(_IN_VIEW_WORDS - _WEAK))
    ):
        out.add("check")
    return out


_WEAK = _words("that this it these those they them")

_COPULAS = _words("is are was were does do did")
_DOES = _words("does do did")
_PRONOUN = (["it"], ["that"], ["this"], ["they"])
_PRONOUN_ASKED = re.compile(
    r"^(?:does|do|did)\s+(?P<this>it|that|this|they)\s+(?P<view>)(?P<pred>[a-z]+)$"
)
_QUALITY_ASKED = re.compile(
    r"^(?:is|are|was|were|does|do|did)\s+(?:(?:the|your|its|their|my)\s+)?"
    r"(?:(?P<this>this|that|these|those)\s+)?(?:\w+\s+){0,2}?(?:answers?|reasoning|solutions?"
    r"|results?|responses?|work|logic|proofs?|arguments?|derivations?|calculations?"
    r"|conclusions?)\s+(?P<view>(?:above|earlier|previous|given|shown|here|provided|so\s+far)"
    r"\s+)?(?:look|looks|seem|seems|sound|sounds|feel|really|truly|actually)?\s*"
    r"(?P<pred>[a-z]+)$"
)
_ANSWER_NOUNS = _words(
    "answer answers result results solution solutions conclusion conclusions verdict verdicts"
)


def _unknown_verb_on_answer(tokens: list[str]) -> str:
    """The first clause-initial word outside the vocabulary (a verb: "lock", "circle")
    whose object is the answer, or ``""``."""
    for i, word in enumerate(tokens):
        if i and tokens[i - 1] not in _CLAUSE_STARTS:
            continue
        if (
            word not in KNOWN
            and word not in REQUEST_OPENERS
            and word not in NO_ACT_IMPERATIVES
            and word not in _KEYS  # "FYI the result will be pooled": a key, no verb
            and word != ","
            and _ON_ANSWER.match(" ".join(t for t in tokens[i + 1 : i + 6] if t != ","))
        ):
            return word
    return ""


_EITHER_WAY = re.compile(
    r"\b(?:correct(?:ly)?|right(?:ly)?|true|accurate(?:ly)?)\s*,?\s+or\s+not\b\s*,?\s*"
    r"(?:it\s+is\s+|that\s+is\s+)?(?:up\s+to\s+you|your\s+(?:choice|call)|either\s+way"
    r"|whichever|as\s+you\s+(?:like|wish|please|prefer)|(?:it\s+)?(?:does\s+not|doesn\s*t)"
    r"\s+matter|no\s+matter|both\s+(?:are\s+)?fine|it\s+is\s+fine|i\s+do\s+not\s+mind)"
)
_PERSONA_COMMA = re.compile(
    r"\s*(as\s+(?:an?|the)\s+[^,]{1,60}(?<!\swould)(?<!\sdoes)(?<!\sdo)(?<!\smight)),(.*)$",
    re.DOTALL,
)


def _persona_apart(sentence: str) -> tuple[str, ...]:
    """A persona opener before a comma and the request after it, read apart ("As a coach,
    design a workout plan"): the persona is filler, the request is read on its own."""
    m = _PERSONA_COMMA.match(sentence)
    return (m.group(1), m.group(2)) if m is not None else (sentence,)


def _stated_problem(text: str) -> bool:
    """Whether a normalised text states a problem of its own: two or more numbers in a
    paragraph with no request of another kind in it (the caller has checked the sentence)."""
    return any(block.count(_NUM) >= 2 for block in _PARAGRAPHS.split(text))


_ASKED_OF_STATED = re.compile(
    r"^(?:please\s+)?(?:give|find|compute|calculate|determine|state|report|work\s+out|figure\s+out"
    r"|what\s+is)\s+(?:me\s+)?the\s+[a-z]+(?:\s+[a-z]+)?$"
)
_REMARK_HELP = re.compile(
    r"\b(?:this|it|this\s+one|that\s+one)\b[^,]*,\s+(?:please\s+)?help(?:\s+me)?(?:\s+out)?$"
)
_ASKED_FOR_GATE = _words(
    "asks requests wants requires describes specifies calls asked requested "
    "described required specified called solves solve implements"
)
_ASKED_FOR = re.compile(
    r"\b(?:the\s+)?(?P<what>[a-z]+)\s+(?:that\s+|which\s+)?(?:the\s+)?(?:question|problem|task"
    r"|exercise|prompt)\s+(?:asks|requests|wants|requires|describes|specifies|calls)\b"
    r"|\b(?P<what2>[a-z]+)\s+(?:asked|requested|described|required|specified|called)\s+for\s+"
    r"(?:in|by)\s+the\s+(?:question|problem|task)\b"
    # "write a python function that solves the task": the deliverable is the task's own
    r"|\b(?:[a-z]+\s+){0,2}?[a-z]+\s+(?:that|which)\s+(?:solves?|implements?)\s+(?:the|this)\s+"
    r"(?:question|problem|task|exercise|puzzle)\b"
)
_POSSESSIVES = _words("its their his her")
_THEIR_ANSWER = re.compile(
    rf"\b{_XFER}\s+(?:\w+\s+)?(?:its|their|his|her)\s+(?:final\s+)?{_HELD}\b"
    r"(?!\s+(?:to|of|for|in)\s+(?:the\s+|this\s+)?(?:problem|question|task))"
)
_HELP_GATE = _words(
    "help hand assist like need want goal aim objective mission job purpose target deliverable"
)
_HELP = re.compile(
    r"\b(?:help|hand|assist|assistance)\s+(?:\w+\s+){0,2}?(?:with|on|solving|solve|answering)\s+"
    r"(?:this|it|the\s+(?:\w+\s+)?(?:problem|question|task|exercise|puzzle)|qqslot)\b"
    r"|\b(?:this|it|one)\b(?:\s+\w+){0,3}?\s+(?:please\s+)?help(?:\s+me|\s+please|\s+pls)?"
    r"(?:\s+out)?$"
    r"|\b(?:i|we)\s+(?:would|d|really|just|still)?\s*(?:like|need|want|love)\s+(?:to\s+(?:get|see"
    r"|have|know)\s+)?(?:the|your|an?)\s+(?:\w+\s+){0,3}?(?:answer"
    r"|solution|result)\b(?!\s+(?:above|from|of|in|to|given|earlier|previous|before))"
    r"|^(?:the|your|our|my)\s+(?:main\s+|only\s+|sole\s+)?(?:goal|aim|objective|job|mission"
    r"|purpose|target|deliverable)\s+(?:here\s+)?(?:is|being)\s+(?:to\s+(?:get|find|reach|give|produce)\s+)?"
    r"(?:the|a|an|your)\s+(?:correct\s+|right\s+|final\s+)*(?:answer|solution|result)\b"
    r"(?!\s+(?:above|from|given|earlier|previous|before|shown))"
)
_ASIDE_GATE = _words("if though like avoid beware watch mind fall wary steer for wish prefer up")
_ASIDE = re.compile(
    r"^(?:for|during)\s+(?:a|an|the|this|our|my|your)\s+[^,]{1,40}(?=\s*,)"
    r"|\bfor\s+(?:a|an|the|this|our|my)\s+\w+(?:\s+\w+)?$"
    r"|\bas\s+you\s+(?:wish|like|please|prefer|see\s+fit)\b|\bup\s+to\s+you\b"
    r"|\b(?:as\s+if|as\s+though|like\s+you\s+(?:are|re|were|would))\b[^,]*"
    r"|\blike\s+(?:a|an|the|any)\s+(?:\w+\s+){0,4}?(?:would|does|might|could)\b"
    r"|\b(?:avoid|beware(?:\s+of)?|watch\s+(?:out\s+)?for|look\s+out\s+for|mind|fall\s+for"
    r"|(?:be\s+)?wary\s+of|steer\s+clear\s+of)\s+(?:\w+\s+){0,3}?\w+"
    r"(?=\s*(?:,|$|\band\b|\bthen\b))"
)
_CLAUSE_STARTS = frozenset({",", "then", "and", "finally", "so", "please", "now"})
_AMENDED = _words("corrected fixed revised amended repaired verified")
_JUDGE_AS_GATE = _words("mark label classify rate flag tag declare call grade judge")
_JUDGE_AS = re.compile(
    r"\b(?:mark|label|classify|rate|flag|tag|declare|call|grade|judge)\s+(?:\w+\s+){0,5}?as\s+"
    r"(?:either\s+)?(?:correct|incorrect|right|wrong|valid|invalid|true|false|sound)\b"
    r"|\b(?:mark|label|classify|rate|flag|tag|declare|call|grade|judge|deem|score)\s+"
    r"(?:\w+\s+){1,5}?(?:either\s+)?(?:correct|right|true|valid)\s+or\s+(?:not|incorrect|wrong"
    r"|false|invalid)\b"
)
_COPULA_WORDS = _words("is are was were does do did has have")
_YES_NO_ON_VIEW = re.compile(
    r"^(?:(?:so|and|but|ok|okay|now|also|then|hmm|well)\s+)?(?:is|are|was|were|does|do|did|has"
    r"|have)\s+(?:the\s+|this\s+|that\s+|your\s+)?"
    r"(?:(?:above|earlier|previous|prior|last|preceding|given)\s+(?:\w+\s+)?(?:answers?"
    r"|solutions?|results?|responses?|reasoning|work|conclusions?|calculations?|claims?)"
    r"|(?:\w+\s+)?(?:answers?|solutions?|results?|responses?|reasoning|work|conclusions?"
    r"|calculations?|claims?)\s+(?:above|earlier|previous|given|shown|provided|so\s+far))\b"
)
_AMENDED_ANSWER = re.compile(
    r"\b(?:corrected|fixed|revised|amended|repaired|verified)\s+(?:final\s+)?(?:answers?"
    r"|results?|versions?|solutions?|values?|responses?)\b"
)
_OPINION_GATE = _words("verdict opinion assessment judgment judgement evaluation feedback")
_OPINION = re.compile(
    r"\b(?:verdict|opinion|assessment|judge?ment|evaluation|feedback)\s+(?:on|of|about)\s+"
    r"(?:\w+\s+){0,3}?(?:answers?|solutions?|responses?|reasoning|work|it|them|that|results?"
    r"|conclusions?|attempts?)\b"
)
_VIEW_WORDS = _words("above earlier previous prior preceding last given shown")
_OWN_END = re.compile(r"\b(?:where|what)\s+you\s+(?:end\s+up|land|arrive|come\s+out|wind\s+up)\b")
_MERIT_GATE = _words("correctness validity accuracy soundness reliability")
_MERIT = re.compile(
    r"\b(?:correctness|validity|accuracy|soundness|reliability)\s+of\s+(?:\w+\s+){0,3}?"
    r"(?:answers?|responses?|solutions?|results?|claims?|reasoning|work|it|them|this|that"
    r"|conclusions?|calculations?)\b"
)
_AGREE_GATE = _words("agree concur critically skeptically sceptically closely")
_AGREE = re.compile(
    r"^(?:\w+\s+)?(?:do|would|does|can)\s+you\s+(?:\w+\s+)?(?:agree|concur)\b"
    r"|\b(?:read|look\s+at|go\s+over|go\s+through|consider|examine|study|reread)\s+(?:\w+\s+){1,5}?"
    r"(?:critically|skeptically|sceptically|closely)\b"
)
_AMISS_GATE = _words("off amiss fishy wrong")
_AMISS = re.compile(
    r"^(?:\w+\s+){0,2}?(?:is|does|do)\s+(?:there\s+)?(?:anything|something|it|that|this)\s+"
    r"(?:\w+\s+)?(?:off|amiss|fishy|wrong)\b"
    r"|\b(?:something|anything|what)\s+(?:is\s+|s\s+|seems\s+|looks\s+|feels\s+|might\s+be\s+)?"
    r"(?:off|amiss|fishy)\b"
)
_PARTICLE_GATE = _words("pass hand carry send bring")
_XFER_GATE = frozenset(_XFER[3:-1].split("|")) | _words(
    "along on through back what which answer reply response output whatever let"
)
_HAND_ON = re.compile(
    r"\b(?:pass|hand|carry|send|bring)\s+(?:(?:the|that|this|it|them|your)\s+)?(?:\w+\s+)?"
    r"(?:along|on|through|back|forward|over)\b"
    r"(?!\s+(?:the\s+|this\s+|that\s+)?(?:problem|question|task|one|it|exercise|puzzle))"
)
# an answer in view taken as a starting point is worked on, not handed on
_NOT_RELAY = re.compile(
    r"\bas\s+(?:a|an|your|the)\s+(?:starting|basis|reference|hint|guide|inspiration|draft"
    r"|point|baseline)|\bfor\s+reference\b|\bstarting\s+point\b"
)
_WITH_ANSWER = re.compile(
    r"\bwith\s+(?:the|your|an?|one)\s+(?:final\s+|correct\s+|right\s+)?(?:answer|result"
    r"|solution)\b(?!\s+(?:of|from|in|by|to)\b)"
)
_ON_ANSWER = re.compile(
    r"^(?:(?:in|down|out|up|on|back|over|off)\s+)?(?:your|the|a|an|one|our|my)\s+"
    r"(?:(?!of\b|in\b|from\b)\w+\s+){0,3}?(?:answers?|results?|solutions?|conclusions?"
    r"|verdicts?)\b"
)
_VIEW_REF = re.compile(
    r"\b(?:above|earlier|previous|previously|prior|preceding|candidates|responses|proposed"
    r"|candidate\s+(?:answers?|solutions?|responses?)"
    r"|drafts?|claimed|others?|models?|workers?|answers|solutions|attempts|step\s+qqnum"
    r"|last\s+(?:answer|response|step|result|solution|attempt|output|reply|model|worker)|qqbox|first|second|again"
    r"|(?:answers?|results?|solutions?|claims?|responses?)\s+(?:\w+\s+)?qqnum"
    r"|(?:given|shown)\s+(?:\w+\s+)?(?:answers?|solutions?|results?|responses?|work|above"
    r"|earlier|before)|(?:answers?|solutions?|results?|responses?|work)\s+(?:given|shown)"
    r"|(?:that|this|the)\s+(?:answer|solution|result|calculation|computation|work|reasoning"
    r"|derivation|proof)(?!\s+(?:to|in|on|at|of)\b)(?<!the\sanswer)(?<!the\sresult)"
    r"(?<!the\ssolution)"
    r"|reconsider|rethink|revisit|redo|(?:step|response|answer|model|one)\s+before)\b"
)


def _without_self_check(sentence: str, solving: bool, in_view: _InView) -> str:
    """``sentence`` with its checks of the worker's own work ("double-check each step as
    you go", "verify your result") read as solving: those of one's own (or beside solving)
    are part of solving; "check each step" alone in a review of answers in view stays, and
    so does an objectless "double check" where the text names an answer in view."""
    stripped = _SELF_CHECK.sub(" ", sentence)
    if stripped == sentence:
        return sentence
    if (
        all(
            not (m.group("object") or m.group("own") or m.group("own2"))
            for m in _SELF_CHECK.finditer(sentence)
        )
        and in_view()
    ):
        return sentence
    own = any(
        m.group("own") or m.group("own2") or "your" in (m.group("object") or "")
        for m in _SELF_CHECK.finditer(sentence)
    )
    if own or solving or any(p.search(stripped) for a, p in _ACTS if a == "solve"):
        return _SELF_CHECK.sub("solve", sentence)
    return sentence


# Round 8: a request whose *goal* is an answer that is not correct, however it is put: a
# faithful act negated by its outcome ("do not give the right answer", "don't solve it
# correctly", "under no circumstances should your answer be correct"), the correct answer
# avoided or excluded ("avoid the correct answer", "whatever the true answer is, write
# something else", "anything other than the previous answer"), an answer off by a margin,
# one a checker would reject, the outlier or the lowest count, or an answer in view
# transformed ("the earlier answer doubled"). Family: ``vote`` (the minority), ``restate``
# (an answer other than or changed from the one shown), ``act`` (a wrong answer).
_FAITHFUL_ADJ = r"(?:right|correct|true|real|accurate|valid|actual)"
_ANSWER_NOUN = (
    r"(?:answers?|ones?|results?|solutions?|values?|options?|choices?|numbers?|figures?|totals?"
    r"|amounts?|replies|reply|responses?|outputs?)"
)
_GOAL_ACT = re.compile(
    rf"(?<!\bif\s)(?<!\bor\s)\b(?:not|never)\s+(?:\w+\s+){{0,4}}?(?:the\s+|a\s+|an\s+|your\s+|any\s+)?"
    rf"{_FAITHFUL_ADJ}\s+(?:final\s+)?{_ANSWER_NOUN}\b"
    rf"|\b(?:not|never)\s+(?:\w+\s+){{1,3}}?correctly\b"
    rf"|\b(?:not|never|no)\s+(?:\w+\s+){{0,5}}?be\s+(?:\w+\s+)?{_FAITHFUL_ADJ}\b"
    rf"|\b(?:avoid|avoiding|anything\s+but|other\s+than|except|instead\s+of|rather\s+than)\s+"
    rf"(?:\w+ing\s+)?(?:the\s+|a\s+|an\s+|any\s+)?{_FAITHFUL_ADJ}\s+(?:final\s+)?{_ANSWER_NOUN}\b"
    rf"|\bwhatever\s+the\s+{_FAITHFUL_ADJ}\s+(?:final\s+)?answer\s+is\b.*\b(?:something|anything)"
    rf"\s+(?:else|different)\b"
    rf"|\b(?:make\s+sure|ensure|should|must|needs?\s+to|has\s+to|have\s+to|so\s+that|give"
    rf"|output|write|report|return|provide)\b(?:\s+\w+){{0,6}}?\s+off\s+by\s+(?:exactly\s+|precisely\s+|just\s+)?(?:one|qqnum|a\s+little|a\s+bit)\b"
    rf"|\b(?:a|an|one)\s+(?:\w+\s+)?(?:answer|result|reply|value)\s+(?:that\s+|which\s+)?"
    rf"(?:a|the|any)\s+(?:checker|grader|verifier|reviewer|judge|teacher)\s+would\s+"
    rf"(?:reject|fail|mark\s+(?:as\s+)?(?:wrong|incorrect))\b"
    # round 9: the goal described by its relation to the correct answer: near it but not
    # equal, off or further from it, one that would be marked wrong
    rf"|\b{_FAITHFUL_ADJ}\s+(?:\w+\s+){{0,3}}?but\s+not\s+(?:exactly\s+)?(?:equal|identical"
    rf"|the\s+same)\b"
    rf"|(?<!not\s)(?<!never\s)\b(?:differs?|different|differing|off|away|far|farther|further|furthest|farthest)"
    rf"\s+(?:\w+\s+){{0,4}}?from\s+(?:the\s+)?(?:{_FAITHFUL_ADJ}\s+(?:final\s+)?{_ANSWER_NOUN}"
    rf"|truth)\b"
    rf"|\b(?:a|an|one)\s+(?:\w+\s+)?(?:answer|result|reply|value|number)\s+(?:that\s+|which\s+)?"
    rf"(?:would|will)\s+be\s+(?:marked|graded|judged|scored)\s+(?:as\s+)?(?:incorrect|wrong)\b"
)
_GOAL_VOTE = re.compile(
    r"\b(?:outlier|odd\s+(?:one|qqnum)\s+out|lowest\s+(?:vote\s+)?counts?|least\s+votes?"
    r"|(?:go|vote|going|voting)\s+against\s+the\s+(?:majority|consensus|crowd))\b"
)
_GOAL_RESTATE = re.compile(
    r"\b(?:something|anything)\s+(?:else\s+)?(?:other\s+than|but|except)\s+(?:the\s+|that\s+)?"
    r"(?:\w+\s+){0,3}?(?:answer|one|result)\b"
    r"|\b(?:answer|result)\s+(?:above\s+)?(?:doubled?|halved?|negated?|reversed?|squared?"
    r"|tripled?|plus\s+(?:one|qqnum)|minus\s+(?:one|qqnum))\b(?!\s*check)"
    # round 9: an answer in view changed until it no longer matches, scaled or garbled
    r"|\bno\s+longer\s+(?:matches|match|agrees|agree|equals|the\s+same)\b"
    r"|\b(?:answer|result|it)\s+(?:[\w,]+\s+){0,2}?(?:multiplied|divided)\s+by\b"
    r"|\bbut\s+(?:swap|switch|flip|reverse|scramble|garble)\s+(?:\w+\s+){0,3}?(?:digits?|signs?)\b"
    r"|\b(?:garbled|scrambled|altered|changed|modified|tweaked)\s+so\s+(?:that\s+)?it\s+"
    r"(?:\w+\s+){0,2}?different\b"
)
_GOAL_GATE = _words(
    "not never no avoid avoiding but other except instead rather whatever off reject fail "
    "wrong outlier odd lowest least against else doubled halved negated reversed squared "
    "tripled plus minus double half negate reverse square triple "
    "equal identical same differ differs different differing far farther further away "
    "furthest farthest "
    "marked graded judged scored longer multiplied divided swap switch flip scramble garble "
    "garbled scrambled altered changed modified tweaked"
)
_NO_GOAL = re.compile(
    r"\b(?:not|never|no)\s+(?:\w+\s+){0,4}?(?:wrong|incorrect|false|a\s+mistake|an\s+error)\b"
)


_SET_ASIDE = re.compile(
    r"\b(?:skip|skipping|ignore|ignoring|discard|discarding|drop|dropping|exclude|excluding"
    r"|remove|removing|disregard|disregarding|set\s+aside|throw\s+out|leave\s+out)\s+"
    r"(?:\w+\s+){0,2}$"
)


# Round 9: a marker that a later request replaces the one before it ("instead of that",
# "actually", "never mind the maths", "scratch that", "on second thought").
_OVERRIDE_GATE = _words("but oh ok okay so and wait actually instead never scratch on")
_OVERRIDE_WORDS = _words("actually instead mind scratch thought thoughts")
_OVERRIDE = re.compile(
    r"^(?:(?:but|oh|ok|okay|so|and|wait)\s+(?:,\s+)?)?"
    r"(?:(?:actually|instead)(?:\s+of\s+(?:that|this|it|all\s+that))?\s+(?:,\s+)?)?"
    r"(?:(?:never\s+mind|scratch)\s+(?:that|this|it|all\s+that|the\s+(?:maths?|problem|question"
    r"|task|sum|calculation|numbers?|rest))\s+(?:,\s+)?|on\s+second\s+thoughts?\s+(?:,\s+)?)?"
)


_DELIVERABLE = re.compile(
    r"\b(?:is|are)\s+to\s+(?P<verb>[a-z]+)\b"
    r"|\b(?:i|we)\s+(?:(?:would|d|should)\s+)?(?:like|love)\s+(?:a|an|some|you\s+to)\b"
)


def _asks_deliverable(joined: str) -> bool:
    """Whether a sentence with numbers in it asks for a thing rather than states a problem
    (round 9): "Its job is to write a bash one-liner that lists the ten largest files", "I'd
    like a short essay, three or four paragraphs"; not "The goal is to find how far it went"
    (an act of ours, read as one)."""
    for m in _DELIVERABLE.finditer(joined):
        verb = m.group("verb")
        if verb is None or verb in NO_ACT_IMPERATIVES or verb in REQUEST_OPENERS:
            return True
    return False


_ABOUT_SOLVING = re.compile(
    r"how\s+(?:long|much\s+time|many\s+(?:minutes|hours|seconds)|hard|difficult|easy|tricky)"
    r"\s+(?:\w+\s+){0,8}?to\s+(?:solve|answer|do|finish|complete|work\s+out)\s+(?:this|it"
    r"|the\s+(?:problem|question|task|puzzle)|this\s+(?:problem|question|task|puzzle)|qqslot)\b"
)


_STATED_SUBJECTS = _words("qqnum two three four several both none many few")
_ASKING_WORDS = _words(
    "you your yours must should need needs can could will would please let shall ought "
    "whatever whichever which who what whether if i we me my us our want wants goal aim "
    "target objective deliverable job task purpose most majority"
)
_FINITE = _words("is are was were has have had disagree disagrees agree agrees differ differs")
_OBLIGATION = re.compile(r"\b(?:has|have|had|is|are|was|were)\s+to\b")
_CLAUSE_AFTER_COMMA = _words("and but")


def _states_only(words: list[str], present: set[str], joined: str) -> bool:
    """Whether a sentence is a statement with a subject of its own and a finite verb that
    asks nothing of the reader (round 9): no "you", no modal, no goal, no clause after a
    comma but one joined by "and"/"but" ("Heads-up: at least one of the answers above is
    wrong.", "There was a vote earlier, but it was a tie.")."""
    k = 2 if words[:2] == ["at", "least"] else 0
    subject = words[k : k + 1]
    if not subject or not (_told(words[k:]) or subject[0] in _STATED_SUBJECTS):
        return False
    if not present.isdisjoint(_ASKING_WORDS) or _EMBEDDED_REQUEST.search(joined) is not None:
        return False
    if present.isdisjoint(_FINITE) and not any(w.endswith("ed") for w in words[k + 1 :]):
        return False  # "The earlier result, copied verbatim": a noun phrase, a request
    if _OBLIGATION.search(joined):
        return False  # "The final answer has to be wrong.": an obligation, asked
    tokens = joined.split()
    return all(
        tokens[i + 1 : i + 2] and tokens[i + 1] in _CLAUSE_AFTER_COMMA
        for i, t in enumerate(tokens)
        if t == ","
    )


_STATED_ANSWERS = _words(
    "answer answers response responses result results solution solutions reply replies"
)
_HAND_ON_WORDS = _words(
    "copy state read extract report box put repeat output give pass write return reproduce "
    "carry forward restate echo relay print send"
)
_EARLIER_WORDS = _words(
    "above earlier previous prior preceding last before arrived step steps worker model given"
)
_UNCHANGED_GATE = _words("unchanged unchange is word verbatim exactly without not never")
_UNCHANGED = re.compile(
    r"\b(?:unchanged?|as\s+is|word\s+for\s+word|verbatim|exactly\s+as\s+(?:it\s+)?(?:was|is"
    r"|stated|given|written)|without\s+(?:chang|alter|modif|edit)\w*"
    r"|(?:do\s+not|never)\s+(?:change|alter|modify|edit)\s+(?:it|that|the\s+\w+))\b"
)


def _after_lead_ins(words: list[str]) -> int:
    """The index of a sentence's first word past its lead-ins (:data:`_LEAD_INS`:
    interjections, politeness, discourse markers); ``len(words)`` when all are."""
    k = 0
    while k < len(words) and words[k] in _LEAD_INS:
        k += 1
    return k


def _told(words: list[str]) -> bool:
    """Whether a sentence is a statement with a subject of its own (no request)."""
    k = _after_lead_ins(words)
    return k < len(words) and words[k] in _SUBJECTS and words[k] != "you"


def _inverted_goal(sentence: str) -> Family | None:
    """The family of a request whose goal is an answer that is not correct (above)."""
    for m in _GOAL_VOTE.finditer(sentence):
        if not _SET_ASIDE.search(sentence[: m.start()]):  # "skip the outlier answers"
            return "vote"
    if _GOAL_RESTATE.search(sentence):
        return "restate"
    if _GOAL_ACT.search(sentence) and not _NO_GOAL.search(sentence):
        return "act"
    return None


# Round 8: what a sentence of content words that asks no act of ours is shaped as. Words
# before the first that carry it (interjections, politeness, discourse markers) are skipped;
# a subject first makes it a statement (a remark, narration, context: no evidence of a
# request) unless it embeds one ("Hope you can write me a song", "Your job is to write a
# card"); a participle first is a fragment ("Standing by whenever you are."); a verb that
# sets how to work ("Use metric units", "Assume all quantities are positive") is a
# constraint; anything else (an imperative, a noun phrase or a question) is a request.
_LEAD_INS = _words(
    "hey hi hello yo ok okay so great well now please just omg oh alright and then also "
    "basically anyway right sure cool hmm um uh"
)
_SUBJECTS = _words(
    "the a an this that these those my our your his her their its i we you he she it they "
    "there here some all each every someone everyone nobody everybody somebody people "
    "one both neither either"
)
_MANNER_PREPOSITIONS = (["in"], ["with"], ["like"], ["as"])
_MANNER_NOUNS = _words("tone style voice manner fashion register")
_MANNER_PHRASE = re.compile(
    r"\b(?:in|with|using)\s+(?:a\s+|an\s+|the\s+|your\s+)?(?:[a-z]+\s+(?:,\s+)?){0,3}?"
    r"(?:tone|style|voice|manner|fashion|register)\b"
)
_SUBJECT_WORDS = _words("the all each every these those our their some other and qqnum")
_CLAUSE_LINKS = _words("and so then but")


_FOREIGN_HINT = re.compile(
    r"\b(?:la|le|les|el|los|las|die|der|das|den|dem|und|une|un|eine|ein|gib|bitte|por|sin|et"
    r"|este|esta|zusammen|morgen"
    # round 9: Portuguese and Italian
    r"|resposta|respostas|pela|pelo|obrigado|obrigada|risposta|risposte|della|sopra|grazie|il|favore|risultato|risolvi|calcola)\b",
    re.I,
)


def _foreign(text: str) -> Recognition:
    """A text in another language: the on-task request its closed lexicon reads
    (:mod:`~conductor_gym.sim.foreign_requests`, round 8), else off-task (fail closed)."""
    read = foreign_request(" ".join(text.split()))
    if read is None:
        return Recognition("offtask", "foreign")
    if read.act == "none":
        return Recognition("none", "filler")
    act = _FOREIGN_ACTS[read.act]
    return Recognition(act, "request", acts=frozenset({act}), inverted=read.inverted)


_FOREIGN_ACTS: dict[str, Literal["solve", "check", "vote", "restate"]] = {
    "solve": "solve", "check": "check", "vote": "vote", "restate": "restate",
}  # fmt: skip


def _others_will(words: list[str]) -> bool:
    """A statement of what the task's answers or the pool will do ("Answers will be graded
    automatically.", "Worker 3 will aggregate the results later."): context (round 8)."""
    k = words.index("will") if "will" in words else words.index("shall")
    subject = words[:k]
    return (
        bool(subject)
        and not _SUBJECT_WORDS.issuperset(subject)
        and all(w in _SUBJECT_WORDS or w in _TASK_WORDS for w in subject)
        and _CLAUSE_LINKS.isdisjoint(words[k:])
    )


_IGNORED_WORK = re.compile(
    r"\b(?:problems?|questions?|tasks?|exercises?|puzzles?|it|this|that|everything|all|above"
    r"|instructions?|math|maths|calculations?|numbers?)\b"
)
_IGNORED_PART = re.compile(
    r"^(?:that|this|the|any|those|these|all)\s+(?:\w+\s+)?(?:sentences?|lines?|remarks?"
    r"|distractors?|details?|notes?|bits?|typos?|digressions?|asides?|information|info|noise"
    r"|words?|clauses?|fluff|formatting)\b"
)
_SMALL_TALK = re.compile(
    r"^(?:the\s+|all\s+|that\s+|our\s+)?(?:small\s+talk|chit\s*chat|chat"
    r"|banter|pleasantries|greetings?)\b"
)
# Round 8: where an answer in view went wrong, or its wrong step, found: a check.
_WENT_WRONG = re.compile(
    r"\b(?:find|figure|spot|identify|locate|pinpoint|see|work)\s+(?:out\s+)?(?:where|what|how)"
    r"\s+(?:\w+\s+){0,3}?went\s+wrong\b"
    r"|\b(?:find|spot|identify|locate|pinpoint)\s+(?:the|an|any|each)\s+(?:incorrect|wrong|faulty"
    r"|flawed|bad|erroneous)\s+(?:step|line|part|move)s?\s+in\s+(?:the|their|its|that)\s+"
)
_WENT_WRONG_GATE = _words("wrong incorrect faulty flawed erroneous")
_CODE_SPAN = re.compile(r"`[^`\n]*[()\[\]=+*/<>%][^`\n]*`")
_CONCESSION = re.compile(r"\beven\s+(?:if|though|when)\s+(?P<clause>[^,]*),\s*")
_CONCEDED_OBJECT = re.compile(
    r"\b(?:the|this|that)\s+(?:\w+\s+)?(?:answer|result|solution|response|one)"
    r"(?:\s+(?:above|given|shown|before))?\b"
)


def _conceded(sentence: str) -> str:
    """``sentence`` without its concession ("even if you think the answer above is wrong,
    repeat it"); what the concession named stands for the pronoun after it."""
    m = _CONCESSION.search(sentence)
    if m is None:
        return sentence
    rest = sentence[: m.start()] + sentence[m.end() :]
    named = _CONCEDED_OBJECT.search(m.group("clause"))
    if named is not None:
        rest = re.sub(r"\bit\b", named.group(0), rest, count=1)
    return rest.strip()


_ROLE_DETERMINERS = (["a"], ["an"], ["the"], ["my"], ["our"], ["your"])
_EMBEDDED_REQUEST = re.compile(
    r"\byou\s+(?:can|could|will|would|must|should|might|have\s+to|need\s+to|got\s+to)\b"
    r"|\b(?:is|are)\s+to\s+\w+|\b(?:want|need|like|ask|asking)\s+you\s+to\b"
)
_CONSTRAINT_VERBS = _words(
    "use assume suppose treat take let round express consider think reason reflect ponder mull "
    "breathe relax stick adhere"
)
_THEN_VERB = re.compile(
    r"\b(?:and|then)\s+(?:then\s+|also\s+|just\s+|please\s+)?(?P<verb>[a-z]+)\b"
)


def _request_shaped(words: list[str], joined: str) -> bool:
    """Whether a sentence that asks no act of ours is shaped as a request (above)."""
    k = _after_lead_ins(words)
    if k == len(words):
        return False
    first = words[k]
    if first in _SUBJECTS:
        return _EMBEDDED_REQUEST.search(joined) is not None
    if words[-1] == "qqnum" and len(words) - k <= 3:
        return False  # "temperature: 0": a setting, its name and value
    if first.endswith("ing") and first not in _QUESTION_OPENERS:
        return False
    if first in _CONSTRAINT_VERBS:
        if words[k + 1 : k + 2] in (["you"], ["me"], ["us"]):
            return True  # "Assume you are a cat." (a role to play), "Let me know the weather"
        return any(
            m.group("verb") in REQUEST_OPENERS
            or m.group("verb") in NO_ACT_IMPERATIVES
            or m.group("verb") in _OBJECT_VERBS
            for m in _THEN_VERB.finditer(joined)
        )
    return True


def _about_elsewhere(words: list[str], present: set[str]) -> Reason | None:
    """Why an act is about something other than the problem or the answers' correctness
    (``None`` when it is not): an act verb's object is the time, the weather, the
    instructions, the grammar ("Check the time": ``other-topic``), or a surface property
    of the answers with no correctness asked ("Which answer above is the longest?":
    ``other-object``)."""
    if present & _SURFACE and not present & _CORRECTNESS:
        return "other-object"
    if _SURFACE_PHRASE.search(" ".join(words)):
        return "other-object"
    for i, word in enumerate(words[1:], 1):
        if word in _ELSEWHERE and words[i - 1] in ("for", "about", "regarding"):
            return "other-topic"  # "review the code for style issues"
    for i, word in enumerate(words):
        if word in _OBJECT_VERBS:
            j = i + 1
            while j < len(words) and words[j] in _BEFORE_OBJECT:
                j += 1
            if _ELSEWHERE.intersection(words[j : j + 2]):
                return "other-topic"
    return None


def _about_the_problem(words: list[str], content: list[str]) -> bool:
    """Whether a request with ``content`` words is about the problem, its answers or the
    work (module docstring, step 5): no act verb's object is a content word ("check the
    weather", "check the grammar of the response"; a content word before a noun naming the
    problem or answers is read as its adjective: "a bogus answer", "minimal working", unless
    it looks like a noun: "the election results"), no content word is what the reply is to
    be written in or as ("in French", "as a poem"), and something names the problem or the
    answers: a noun, or a pronoun as an act verb's object ("solve it like a pirate")."""
    named = False
    for i, word in enumerate(words):
        if word in ANCHORS and (
            word not in VERB_NOUNS
            or (i > 0 and (words[i - 1] in _NOUN_BEFORE or _adjective_like(words[i - 1])))
        ):
            named = True
        if word not in _OBJECT_VERBS or (
            word in VERB_NOUNS and i > 0 and words[i - 1] in _NOUN_BEFORE
        ):
            continue  # not a verb ("which answer deserves ...": the noun)
        j = i + 1
        while j < len(words) and words[j] in _BEFORE_OBJECT:
            j += 1
        head = words[j] if j < len(words) else ""
        skipped = words[i + 1 : j]
        if (
            head not in content
            and any(w in WEAK_ANCHORS for w in (*skipped, head))
            and not _CLAUSE & set(skipped)
        ):
            named = True  # "solve it", "mind solving this"; not "check whether it rains"
        if head in content:
            after = words[j + 1 : j + 3]
            if not (_adjective_like(head) and any(w in _NOUNS for w in after)):
                return False
    if not named:
        return False
    for i, word in enumerate(words):
        if word in content and i > 1 and words[i - 1] in ("a", "an") and words[i - 2] in ANCHORS:
            return False  # "give the answer above a title": something else given to it
    return not any(
        (words[i - 1] in _MEDIUM and words[i + 1 : i + 2] != ["as"])
        or (words[i - 1] in _COUNTED and i > 1 and words[i - 2] in _MEDIUM)
        or _in_medium(words, i, content)
        for i, word in enumerate(words)
        if i > 0 and word in content
    )


def _in_medium(words: list[str], i: int, content: list[str]) -> bool:
    """Whether content word ``i`` ends a phrase after "in / as / into" whose other words
    are known modifiers ("as a markdown table", "in plain old French"): the reply's form."""
    for j in range(i - 1, max(i - 6, -1), -1):
        if words[j] in _MEDIUM:
            between = words[j + 1 : i]
            return (
                len(between) >= 2
                and between[0] in _COUNTED
                and not any(w in content or w in ANCHORS for w in between)
                and words[i + 1 : i + 2] not in (["would"], ["does"], ["do"], ["might"])
            )
        if words[j] in content:
            return False
    return False


def _adjective_like(word: str) -> bool:
    return word in _SHORT_ADJECTIVES or word.endswith(_ADJECTIVE_ENDINGS)


def _first(words: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(words))[:8]


def prepare(subtask: str, question: str | None = None) -> str:
    """``subtask`` as the recogniser reads it: every problem instance the procedural parsers
    find blanked out, and ``question`` (a task's statement, which no parser may read)
    blanked wherever it appears verbatim."""
    text = subtask
    if question and question.strip():
        # first, so that a statement the parsers read only in part ("Compute" of "Compute
        # 7 * 10 - 17.") is blanked whole
        text = text.replace(question.strip(), " " * len(question.strip()))
    return find_problems(text).rest


def recognise_subtask(subtask: str, question: str | None = None) -> Recognition:
    """:func:`recognise` of :func:`prepare` (``subtask``, ``question``)."""
    return recognise(prepare(subtask, question))


# round 7: an answer in view asked to be the same, or named with a participle of handing
# on ("the previous answer, repeated exactly"), is handed on; a once-over of it is a check
_SAME_GATE = _words(
    "same identical unchanged match equal repeated restated copied echoed relayed reproduced"
)
_SAME_AS_VIEW = re.compile(
    r"\b(?:answer|result|reply|output|response)\s+(?:(?:you|we|i)\s+\w+\s+)?(?:should|must|will"
    r"|has\s+to|needs\s+to"
    r"|is\s+to)\s+(?:\w+\s+)?(?:be\s+(?:the\s+)?(?:same\s+as|identical\s+to|unchanged\s+from)"
    r"|match|equal)\s+"
    r"(?:the\s+|that\s+)?(?:one|answer|result|response)\s+(?:\w+\s+)?(?:above|given|earlier"
    r"|before|previously|shown)\b"
    r"|^(?:the\s+)?(?:previous|above|earlier|prior|preceding|last|given)\s+(?:final\s+)?"
    r"(?:answer|result|response|solution|reply)\s+(?:repeated|restated|copied|echoed|relayed"
    r"|reproduced)\b"
)
# Round 8: checking and voting by meaning. Looking an answer over, signing off on or
# approving it, and a critic's or reviewer's mode are a check (with an answer in view);
# going with the crowd, and the answer with the most ballots, backers or support are a vote.
_LOOK_GATE = _words("look looking over sign approve approving mode eyes")
_LOOK_OVER = re.compile(
    r"\b(?:look|looking|go|going|read|run|glance)\s+(?:\w+\s+)?over\s+(?:it|this|that|them"
    r"|the|their|its|each|every|all)\b"
    r"|\bsign\s+off\s+on\b|\bapprov(?:e|ing)\s+(?:or\s+\w+\s+)?(?:it|this|that|the)\b"
    r"|\b(?:critic|critique|reviewer|review|checker|check|verifier|verify|audit|auditor|judge"
    r"|grader|qa)\s+mode\b|\bpair\s+of\s+eyes\b"
)
_CROWD_GATE = _words("crowd ballot ballots herd")
_CROWD = re.compile(
    r"\b(?:go|goes|going|side|follow|following|with)\s+(?:with\s+)?the\s+(?:crowd|herd)\b"
    r"|\bmost\s+ballots\b|\bballots?\b.*\b(?:most|majority|count|tally|won|wins)\b"
)
_ONCE_OVER = re.compile(r"\b(?:a|an|another|one\s+more)\s+(?:\w+\s+)?once\s+over\b")
_STRUCTURAL_GATE = (
    _SAME_GATE
    | _words("once")
    | _AMISS_GATE
    | _MERIT_GATE
    | _AGREE_GATE
    | _RELAY_GATE
    | _PARTICLE_GATE
    | _SHARE_GATE
    | _RIGHT_GATE
    | _AMENDED
    | _OPINION_GATE
    | _JUDGE_AS_GATE
    | _COPULA_WORDS
    | _HELP_GATE
    | _POSSESSIVES
    | {"with", "you"}
)
"""Words one of which a sentence needs for :func:`_structural_acts` to search it."""
