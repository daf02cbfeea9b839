r"""What a subtask asks, read fail-closed: simulator v3's request recogniser, frozen.

Kept as it was when v3 was the default so that results recorded on v3 re-play on v3
(:mod:`conductor_gym.sim.v3`); simulator v3.1 reads with :mod:`conductor_gym.sim.requests`.
Its corpus and report live with the current recogniser.

A worker acts on its subtask only when the subtask makes a request this module
*recognises* and that request is about the problem or the answers in view; anything else
is off-task and gets a reply with no final answer. Only a subtask that asks nothing (empty,
punctuation, politeness, filler, "think step by step", a persona) falls back to solving.
The simulator may pay less than a real pool for a plan, never more, so where this reader
cannot tell what a subtask asks, it says ``offtask``.

Input: the worker's own subtask as it sees it, with the problem statements blanked out
(:func:`prepare`: the procedural parsers' ``rest``, and the task's question blanked where it
appears verbatim). A run of three or more blanks inside a line is read as the blanked
problem, a thing a request may be about ("Compute ___.").

How a text is read (:func:`recognise`; cached, a few regular expressions per sentence):

1. **Language.** Letters outside ASCII make the text foreign: a short list of
   foreign politeness words (merci, danke, gracias, 谢谢...) is filler; any other foreign text
   is off-task (``reason="foreign"``). English is recognised; other languages fail closed.
2. **Literal replies** ("Reply with the word X", "Respond only with 'yes'", "Say \"done\"")
   are found on the raw sentence; the text to reply with is exempt from step 4.
3. Numbers, ``\boxed{}`` answers and blanked problems become placeholder words; the text is
   split into sentences. In each sentence the **acts** asked for are found by what is asked
   of which object: ``solve`` (solve / compute / work out / answer it / give the answer /
   what is ...), ``check`` (check, verify, review, correct it, find the error, compare,
   choose, pick the best, which of the answers, is it right), ``vote`` (majority, most
   common, consensus, agree on, tally), ``restate`` (repeat, restate, relay, copy, report
   ... the answer above / previous / given) and ``describe`` (explain, restate, translate,
   summarise, list ... *the problem*: a request about the problem that asks no answer).
4. **Closed vocabulary.** Every word must belong to the vocabulary of requests about a
   problem and its answers (:data:`VOCABULARY`: the act verbs, problem and answer nouns,
   function words, filler). One word outside it ("weather", "Paris", "sunset", "hunger")
   makes the request about something else: ``offtask`` (``reason="unknown-words"``),
   whatever verbs surround it. So is a request in problem words about something else
   ("the words of the question", "another problem", "something else": ``other-object``),
   and a sentence with no act that starts with a request verb
   (:data:`NO_ACT_IMPERATIVES`: "Count the numbers", "Explain the answer above").
5. **Negations and exclusions.** An act after *not / never / without / instead of / rather
   than / no need to / refuse to / decline to / avoid* (within three words, same clause) is
   excluded, wherever else it is asked (the question's own "Compute" included); "do nothing",
   "give no answer" and "only restate / explain / list ... the problem" exclude every act.
   "Ignore the problem / the question / everything above / the instructions" is off-task;
   "ignore the earlier answers" only sets :attr:`Recognition.ignores_answers`.
6. **The kind**, the first that applies: ``offtask`` (steps 1, 4, 5); ``literal``;
   ``vote``, ``check``, ``restate``, ``solve`` (the strongest act left after exclusions);
   ``offtask`` when acts were asked but none is left, or only ``describe``
   (``reason="no-answer-asked"``: "only restate the problem", "explain it without solving
   it"); ``none`` (nothing asked: the worker solves the problem in view).

Known limits: a question about the answers in view built only from its vocabulary ("What
is the first answer above?") is read as a request; "say hello" is a literal reply (no final
answer either way); the kind says what is asked, not whether an answer is in view (a check
with nothing to check falls back to solving in the worker).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, Protocol

from conductor_gym.sim.perception import find_problems

__all__ = [
    "ACTS_ON_PROBLEM",
    "KINDS",
    "NO_ACT_IMPERATIVES",
    "ON_TASK",
    "VOCABULARY",
    "Reason",
    "Recognition",
    "V3Kind",
    "prepare",
    "recognise",
    "recognise_subtask",
]

V3Kind = Literal["solve", "check", "vote", "restate", "literal", "offtask", "none"]
KINDS: tuple[V3Kind, ...] = ("solve", "check", "vote", "restate", "literal", "offtask", "none")
"""Every request kind, on-task kinds first."""
ON_TASK: frozenset[V3Kind] = frozenset({"solve", "check", "vote", "restate"})
"""Kinds that are requests about the problem or the answers in view."""
ACTS_ON_PROBLEM: frozenset[V3Kind] = ON_TASK | {"none"}
"""Kinds after which a worker works on the problem (``none`` falls back to solving)."""
Act = Literal["solve", "check", "vote", "restate", "describe"]
Reason = Literal[
    "request", "filler", "literal", "foreign", "unknown-words", "unrecognised-request",
    "other-object", "ignores-problem", "no-answer-asked",
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
    """

    kind: V3Kind
    reason: Reason
    literal: str | None = None
    acts: frozenset[Act] = field(default_factory=frozenset)
    excluded: frozenset[Act] = field(default_factory=frozenset)
    ignores_answers: bool = False
    unknown: tuple[str, ...] = ()

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
"""The closed vocabulary of requests about a problem and its answers (module docstring)."""

NO_ACT_IMPERATIVES: frozenset[str] = _words(
    """
    count rate list name guess describe explain translate write tell say draw make create
    compose summarize summarise give print output return do repeat copy pick choose select
    compare talk reply respond answer show read identify classify outline paraphrase
    rephrase reword restate quote reproduce transcribe echo relay report state present
    provide produce generate find get reach help decide determine judge confirm check
    verify review vote tally pass carry hand forward format rewrite convert change add
    agree what which who whom whose how why is are was were do does did can could would
    will should shall may might has have put place sort arrange divide split break
    decompose simplify expand factor substitute remember order box
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
_CONTRACTIONS = (
    (re.compile(r"\b(can)'?t\b|\bcannot\b", _I), "can not"),
    (re.compile(r"\bwon'?t\b", _I), "will not"),
    (re.compile(r"n't\b", _I), " not"),
    (re.compile(r"\b(do|does|did|is|are|should|must|would|could)nt\b", _I), r"\1 not"),
    (re.compile(r"'(?:s|re|m|ll|ve|d)\b", _I), ""),
)

_LIT_QUOTED = r"[\"'`]([^\"'`\n]{1,40})[\"'`]"
_LIT_VERB = r"(?:reply|respond|answer|output|print|say|write|return)"
_LIT_FRAME = (
    r"(?P<frame>(?:\s+(?:only|just|exactly|simply))?"
    r"(?:\s+(?:with|by\s+saying))?"
    r"(?:\s+(?:only|just|exactly|nothing\s+but))?"
    r"(?:\s+(?:the\s+|a\s+)?(?:single\s+)?(?:word|number|string|text|letter|digit))?"
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
)
# reply with the word X / reply only with X / say X: one bare word ending the sentence
_LITERAL_BARE = re.compile(
    rf"\b(?P<verb>{_LIT_VERB}){_LIT_FRAME}\s+(?P<payload>[\w/-]{{1,40}})"
    r"(?:\s+(?:and\s+nothing\s+(?:else|more)|only|and\s+stop))?\s*[.!]?\s*$",
    _I,
)
# Bare words that are the usual short replies (the rest of the vocabulary is no payload).
_REPLY_WORDS = _words(
    "yes no ok okay done true false correct incorrect right wrong sure none a b c d e"
)
_NOT_PAYLOAD = _words("it this that them these those the answer again")

_PAST = (
    r"(?:above|earlier|previous|previously|prior|preceding|before|last|latest|given|shown"
    r"|reported|stated|provided|same|former|original)"
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
    "true"
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
            r"|\bvote\b(?!\s+for\s+(?!the\s+(?:\w+\s+)?(?:answer|response|solution)))"
            r"|\bmost\s+(?:common|frequent|frequently|popular|often|times|support|votes)\b"
            r"|\bmost\s+of\s+(?:them|the|these|those)\b"
            r"|\bmost\s+(?:models|responses|answers|solutions|workers|candidates|agents)\b"
            r"|\bagreed?\s+(?:on|upon)\b"
            r"|\b(?:most|all|both|they|models|responses|answers|majority|them|which|qqnum"
            r"|solutions|workers|candidates)\s+(?:\w+\s+)?(?:agree|agrees)\b"
            r"|\bcount\s+(?:how|the\s+votes|the\s+answers|each)\b",
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
            r"|\b(?:go|look)\s+(?:over|through)\b|\blook\s+for\b"
            r"|\b(?:answers?|results?|solutions?|responses?|it|that|this|they|qqnum|qqbox)"
            r"\s+(?:is|are|was|were)\s+(?:\w+\s+){0,2}?(?:right|correct|wrong|incorrect|valid"
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
            r"|\b(?:reconsider|rethink|revisit|reexamine|reevaluate)\b"
            r"|\b(?:is|are|was|were)\s+(?:\w+\s+){0,3}?(?:answers?|results?|solutions?"
            r"|responses?|claims?|it|that|this|they|qqnum|qqbox|work|reasoning|calculation)"
            r"\s+(?:\w+\s+){0,2}?(?:right|correct|wrong|incorrect|valid|accurate|true|false)\b"
            r"|\bwhether\b(?:\s+\w+){0,8}?\s+(?:right|correct|wrong|incorrect|valid|accurate)\b"
            r"|\b(?:the\s+)?(?:best|better|right|correct|most\s+accurate)\s+(?:one|of)\b"
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
            rf"\b{_RESTATE_VERBS}\b(?:\s+\w+){{0,3}}?\s+{_PAST}\s+(?:\w+\s+){{0,2}}?{_ANS}\b"
            rf"|\b{_RESTATE_VERBS}\b(?:\s+\w+){{0,4}}?\s+{_ANS}\b(?!\s+to\b)"
            rf"(?:\s+(?:of|from|in|at|by|shown|given|reported|stated|provided|that|you|they"
            rf"|the|a|an|step|model|models|response|responses|worker)){{0,5}}\s+(?:{_PAST}"
            rf"|again|step|model|response|before)\b"
            rf"|\b(?:repeat|restate|re\s+state|relay|echo|quote|reproduce|transcribe|forward"
            rf"|carry|pass\s+(?:along|on)|give\s+back|hand\s+back)\s+(?:it|that|them)\b"
            rf"|\b(?:say|write|give|state|repeat)\b(?:\s+\w+){{0,4}}\s+again\b",
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
            r"|\b(?:work|figure)\s+(?:\w+\s+)?out\b|\bwork\s+(?:through|on|it|the|this)\b"
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
            r"|\b(?:give|provide|state|report|tell|write|output|return|present|show|put|say)"
            r"\b(?:\s+\w+){0,6}?\s+(?:answers?|results?|solutions?|letter|option"
            r"|work|steps|reasoning|calculation)\b"
            r"|\b(?:give|provide|state|report|tell|write|output|return)\b(?:\s+me)?\s+"
            r"(?:the|your|its|the\s+final|a\s+final|one\s+final)\s+(?:\w+\s+)?(?:value|number"
            r"|integer|expression)\b"
            r"|^\s*(?:just|only)?\s*(?:the|your)?\s*(?:final\s+)?(?:answer|result)\b",
            _I,
        ),
    ),
)
_TRIGGERS: tuple[frozenset[str], ...] = tuple(
    _words(words)
    for words in (
        "answer",
        "what which how",
        "majority consensus plurality modal votes voting tally vote most agreed agree agrees count",
        "check verify validate confirm review critique recheck proofread audit revise fix "
        "examine inspect assess scrutinize scrutinise grade judge reconcile aggregate "
        "synthesize synthesise combine merge weigh choose pick select decide compare double "
        "re cross go look is are was were test evaluate correct find identify spot flag "
        "catch determine tell say state which reconsider rethink revisit reexamine "
        "reevaluate whether best better right most whichever",
        "repeat restate re relay copy echo reformat rephrase reword paraphrase quote "
        "reproduce transcribe forward pass carry hand give present summarize summarise "
        "report return state output write rewrite format tell say print provide",
        "explain describe summarize summarise restate re rephrase reword paraphrase "
        "translate copy list identify classify outline repeat quote reproduce transcribe "
        "count rewrite name read how what",
        "solve compute calculate evaluate determine derive tackle attempt trace simulate "
        "execute crunch redo recompute recalculate rework work figure find get reach arrive "
        "obtain try run show help think reason give provide state report tell write output "
        "return present put say answer result",
    )
)
"""Per entry of :data:`_ACTS`, words one of which every match contains: a sentence with
none of them is not searched (a speed gate; it never changes a reading)."""
_NEGATION_WORDS = _words("not never no without instead rather avoid refrain refuse decline nor")
_REFUSAL_WORDS = _words("nothing not never no")
_OTHER_WORDS = _words(
    "someone somebody about something other another different new unrelated next words word "
    "letters letter characters character sentences sentence lines line vowels vowel spelling "
    "wording choose pick select compare rank name weigh vote which what"
)
_ONLY_WORDS = _words("only just merely simply")
_IGNORE_WORDS = _words("ignore disregard forget")
_LITERAL_GATE = re.compile(r"\b(?:reply|respond|answer|output|print|say|write|return)\b", _I)
_NEGATION = re.compile(
    r"\b(?:not|never|no\s+need\s+to|without|instead\s+of|rather\s+than|avoid|refrain\s+from"
    r"|refuse\s+to|decline\s+to|nor)\s+((?:(?!but\b|just\b|only\b|and\b|then\b|instead\b)\w+\s+)"
    r"{0,3}?)(?P<verb>\w+(?:\s+\w+)?)",
    _I,
)
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
    r"|\b(?:give|write|output|provide|state|print|return)\s+no\s+(?:final\s+)?answer",
    _I,
)
# A request about something other than the problem and its answers, in problem words.
_OTHER_OBJECT = re.compile(
    r"\b(?:someone|somebody)\s+else\b|\babout\s+(?:anything|everything)\s+else\b|\bsomething\b"
    r"|\b(?:other|another|different|new|unrelated|next)\s+(?:problem|question|task|topic"
    r"|subject|thing|exercise|puzzle)s?\b"
    r"|\b(?:words?|letters?|characters?|sentences?|lines?|vowels?|spelling|wording)\b"
    r"(?:\s+\w+){0,3}\s+(?:of|in)\s+(?:the|this|that|your|each|every)\s+(?:question|problem"
    r"|task|answer|response|statement|reply|solution)s?\b"
    r"|\b(?:choose|pick|select|compare|rank|name|weigh)\s+(?:\w+\s+){0,2}?(?:models?|workers?"
    r"|agents?|assistants?)\s*$"
    r"|\bvote\s+for\s+(?!the\s+(?:\w+\s+)?(?:answer|response|solution))"
    r"|\b(?:which|what)\s+(?:model|worker|agent|assistant)s?\s+(?:gave|wrote|said|produced"
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
    r"\b(?:ignore|disregard|forget)\s+(?P<object>\w+(?:\s+\w+){0,3})",
    _I,
)
_IGNORED_ANSWERS = re.compile(
    r"^(?:the\s+|all\s+|any\s+|those\s+|these\s+)?(?:\w+\s+)?(?:answers?|responses?"
    r"|solutions?|attempts?|models?|candidates?|replies|results?|steps?)\b",
    _I,
)
# "Put the final answer in a box": a constraint on the reply, not a request.
_FORMAT = re.compile(
    r"^(?:put|place|write|box|format|present|end|finish|conclude|wrap)\b.*\b(?:answers?|results?"
    r"|qqbox|reply|response|it)\b",
    _I,
)
_PLACEHOLDERS = frozenset({_SLOT, _NUM, _BOX})
_TIME = re.compile(r"\b(?:take|taking)\s+(?:your|all\s+the|the|some)\s+time\b", _I)
_STRENGTH: tuple[Literal["vote", "check", "restate", "solve"], ...] = (
    "vote",
    "check",
    "restate",
    "solve",
)


def _normalise(text: str) -> str:
    text = _BLANK.sub(f" {_SLOT} ", text)
    text = _TIME.sub(" ", text)
    text = _BOXED.sub(f" {_BOX} ", text)
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"')
    text = text.replace("\u201d", '"')
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    text = _NUMBER.sub(f" {_NUM} ", text)
    return text.lower()


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


def _negated(sentence: str) -> set[Act]:
    out: set[Act] = set()
    for m in _NEGATION.finditer(sentence):
        verb = m.group("verb")
        for act, pattern in _ACT_VERBS:
            if pattern.fullmatch(verb) or pattern.fullmatch(verb.split()[0]):
                out.add(act)
                break
    return out


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
    stripped = _BLANK.sub(" ", _BOXED.sub(" ", text))
    if _is_foreign_filler(stripped):
        return Recognition("none", "filler")
    if _FOREIGN.search(stripped):
        return Recognition("offtask", "foreign")
    literal: str | None = None
    for raw in re.split(r"[.!?;\n]+(?=\s|$)|\n", text) if _LITERAL_GATE.search(text) else ():
        reply = _literal(raw.lstrip()) if _LITERAL_GATE.search(raw) else None
        if reply is not None:
            # the payload is exempt from the vocabulary: read the rest without it
            literal, asked = reply
            text = text.replace(asked, " ", 1)
            break
    acts: set[Act] = set()
    excluded: set[Act] = set()
    ignores_answers = False
    bare_imperative = False
    normalised = _normalise(text)
    for sentence in _SENTENCES.split(normalised):
        words = [w for w in _WORDS.findall(sentence) if w != ","]
        if not words or all(w in _PLACEHOLDERS for w in words):
            continue
        joined = " ".join(_WORDS.findall(sentence))
        present = set(words)
        for m in _IGNORE.finditer(joined) if present & _IGNORE_WORDS else ():
            if _IGNORED_ANSWERS.match(m.group("object")):
                ignores_answers = True
            else:
                return Recognition("offtask", "ignores-problem")
        if present & _OTHER_WORDS and _OTHER_OBJECT.search(joined):
            return Recognition("offtask", "other-object")
        found = {
            act
            for (act, pattern), gate in zip(_ACTS, _TRIGGERS, strict=True)
            if present & gate and pattern.search(joined)
        }
        negated = _negated(joined) if present & _NEGATION_WORDS else set()
        if (present & _REFUSAL_WORDS and _REFUSAL.search(joined)) or (
            present & _ONLY_WORDS and _ONLY_DESCRIBE.search(joined)
        ):
            negated |= {"solve", "check", "vote", "restate"}
        excluded |= negated
        acts |= found
        unknown = [w for w in words if w not in VOCABULARY]
        if unknown:
            return Recognition(
                "offtask", "unknown-words", unknown=tuple(dict.fromkeys(unknown))[:8]
            )
        constraint = (
            words[0] in ("never", "no", "not")
            or words[1:2] == ["not"]
            or words[:2] == ["remember", "to"]
            or _FORMAT.search(joined) is not None
        )
        if not found and not negated and not constraint and words[0] in NO_ACT_IMPERATIVES:
            bare_imperative = True
    if literal is not None:
        return Recognition("literal", "literal", literal=literal)
    if bare_imperative:
        return Recognition("offtask", "unrecognised-request")
    left = frozenset(acts - excluded)
    frozen_excluded = frozenset(excluded)
    for act in _STRENGTH:
        if act in left:
            return Recognition(
                act, "request", acts=left, excluded=frozen_excluded,
                ignores_answers=ignores_answers,
            )  # fmt: skip
    if acts or excluded:
        return Recognition("offtask", "no-answer-asked", acts=left, excluded=frozen_excluded)
    return Recognition("none", "filler", ignores_answers=ignores_answers)


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


# -- the corpus ------------------------------------------------------------------------------
