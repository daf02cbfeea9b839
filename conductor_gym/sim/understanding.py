r"""The open-vocabulary parts of request reading (used by :mod:`conductor_gym.sim.requests`).

A competent model reads a subtask however it is phrased; these helpers bring the phrasing
to the forms the act patterns know, and read what the act patterns cannot:

* :func:`flatten_markup`: JSON-style subtasks (``{"task": "verify", "target": "previous
  answers"}``) become ``key: value`` sentences; markdown headings, emphasis, quotes, code
  ticks and underscores in keys become plain words.
* :func:`canonical`: one word as the act patterns know it: a misspelt cue word corrected
  (Damerau-Levenshtein distance 1 to a cue word of :data:`CUES`, or one missing letter
  for a three-letter word: "chek", "answr", "giv", "reveiw"; round 7: a typo of a
  frequent function or framing word by edit distance, "teh", "mostt", "thnks", "rong"),
  the ``-ing`` form of an act verb turned to the verb ("working this out").
* :data:`MANNER_FIELDS`: words about how to answer (length, pace, quality, format, tone,
  resources, encouragement, thought, wishes, background), no topic (round 7).
* :func:`is_content`: whether an unknown word is *content* (a topic word: "weather",
  "poem", "puppy") rather than manner, persona, politeness or filler ("methodically",
  "coach", "hey"). The recogniser reads a request as off-task when its object is content
  and nothing in it is the problem or its answers (:data:`ANCHORS`).
* :func:`inversion`: whether a sentence asks for the *opposite* of its act: a wrong,
  incorrect, false, worst or least likely answer as the thing to give (not to find, fix or
  avoid), an error made on purpose, the minority answer, an answer other than the one
  shown; and whether a faithful output is asked beside it (then the reader is unsure).
* :func:`is_noise`: a sentence of keyboard mash or stray letters ("x y z k n").
* :func:`is_foreign`: a sentence in another language written without accents.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

__all__ = [
    "ANCHORS",
    "CUES",
    "EXTRA_VOCABULARY",
    "FAITHFUL_WORDS",
    "MANNER_FIELDS",
    "PERSONA_OPENERS",
    "REQUEST_OPENERS",
    "VERB_NOUNS",
    "WEAK_ANCHORS",
    "asks_faithful",
    "canonical",
    "flatten_markup",
    "inversion",
    "is_content",
    "is_foreign",
    "is_noise",
]


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


CUES: frozenset[str] = _words(
    """
    solve compute calculate check verify validate review answer answers final give problem
    question previous above repeat restate relay majority vote votes consensus correct result
    results solution solutions please determine evaluate examine figure double step reasoning
    earlier choose select compare common report copy echo return output provide state tell
    find work think reason option options letter value number wrong incorrect worst error
    mistake mistakes errors candidate candidates response responses carefully explain again
    what which frequent
    """
)
"""Words a misspelling is corrected to (act verbs, answer and problem nouns)."""

_ACT_VERBS = _words(
    """
    solve compute calculate check verify validate review repeat restate relay copy echo
    evaluate examine determine figure work pick choose select compare tally vote count
    report give provide state find derive tackle attempt answer think reason confirm
    critique audit inspect assess judge grade double verify reconsider rethink revisit
    return output write tell show let deduce reproduce transcribe forward pass quote
    """
)
_LEXICON_NOUNS = _words(
    """
    critique majority consensus conclusion solution candidate response question problem
    previous earlier answer result responses answers
    """
)
"""Act-lexicon nouns a misspelling may also be corrected to (beside :data:`CUES`)."""
_ING: dict[str, str] = {}
for _verb in _ACT_VERBS:
    _ING[_verb + "ing"] = _verb
    if _verb.endswith("e"):
        _ING[_verb[:-1] + "ing"] = _verb
_ING.update({"letting": "let", "getting": "get", "putting": "put", "tallying": "tally"})
_ING.pop("reasoning", None)  # the noun: "check the reasoning"
_ING.pop("working", None)  # "show your working"; "working ... out" is read by the pattern

EXTRA_VOCABULARY: frozenset[str] = _words(
    """
    hi hello hey hiya howdy greetings morning afternoon evening dear mate buddy friend
    folks team thx ty pls plz kindly thanks cheers appreciate appreciated much lot
    coach tutor professor teacher mentor genius wizard savant detective sherlock holmes
    olympiad competition contest veteran seasoned expert experienced world class patient
    brilliant gifted talented renowned famous skeptical sceptical strict harsh picky
    critical grumpy friendly pirate captain trickster devil advocate auditor critic judge
    referee arbiter aggregator chair committee messenger courier tie breaker tiebreaker
    vet vetted stress crack dig stab shot go have having crunch nail tease hammer
    methodical methodically systematic systematically logical logically analytical
    analytically structured organised organized step stepwise thorough sanity chain
    thought thoughts tooth comb fine breath calm relax relaxed cool focus focused clear
    clearly loud aloud paper pencil scratchpad scratch head first principles principle
    headings heading bold italic bullet bullets markdown latex format formatting boxed
    instruction instructions output_format role goal objective context style mode inputs
    input target source action constraints note notes type kind sections section line
    json key keys field fields schema tag tags
    walk walkthrough through dive come up land landed settle settled hold holds holding
    stuck unsure sure really truly honestly basically literally actually
    solver solvers verifier verifiers reviewer reviewers grader graders critique critic
    responder answerer voter voters tallier counter
    guy guys person persons people dude dudes fellow fellows individual individuals
    send sends sent paste pasting pasted become becomes became becoming quantities
    crowd herd ballot ballots announce announces announced proclaim amount amounts
    unit units dimension dimensions distinct
    convincing plausible plausibly confident confidently trust trusted trustworthy
    strongest strong weak weakest worst best better least fewest minority deliberate
    deliberately intentional intentionally purpose purposely knowingly
    looking plausible-looking misleading mislead false falsely wrongly incorrectly
    alter altered modify modified tweak tweaked change changed
    carefully rigorously concisely briefly tersely terse succinct succinctly short
    time unknown unknowns multiple poke holes vet probe bogus guess closely harsh
    winner winners winning wins won broadest widest know mode modal tallied tallies
    stab whirl swing crunch methodically need needed statistical top
    claude gpt chatgpt gemini qwen llama mistral deepseek grok copilot bot ai llm
    love know wonder curious mind rush hurry brevity plain language okey dokey
    simplest lowest reduced decimal decimals fraction fractions percentage percent
    requested asked quantity correctness accuracy validity soundness disagreement rarest
    rare resolve settle fails failing fixed amended repaired ahead knock sentence sentences
    paragraph paragraphs matters matter counts partner intermediate sense
    submit submitted finalize finalise adopt bring stand stands stood
    opposite conclusion conclusions verdict verdicts decision
    off amiss fishy pressure believe
    erroneous mistaken untrue flawed faulty
    two three four five six seven eight nine ten
    """
)
"""On-task, manner, persona, politeness and markup words the v3 vocabulary lacked."""

MANNER_FIELDS: dict[str, frozenset[str]] = {
    field: _words(words)
    for field, words in {
        "length": "tidy sweet lengthy verbose wordy compact tight crisp snappy fluff padding "
        "rambling ramble minimal minimum maximum",
        "pace": "speed fast faster pace haste hasty deadline urgent urgency rushed leisure",
        "quality": "quality polish polished sloppy perfection excellence standard standards",
        "format": "markdown prose plaintext headers numbered spacing "
        "whitespace caps uppercase lowercase indentation ascii unicode notation trailing leading "
        "zero zeros",
        "tone": "tone formal informal casual polite neutral chatty playful serious warm humble",
        "resources": "tokens token plenty room space unlimited allowance generous limit limits",
        "encouragement": "going champ champion ace star superstar legend pal chief boss ready "
        "rooting cheering faith proud",
        "thought": "mull ponder contemplate reflect",
        "wishes": "hope hoping wish wishes welcome glad happy pleasure lovely day week weekend",
        "setting": "prompt user users conversation chat thread turn turns transcript "
        "orchestrator orchestrating coordinator coordinating conductor pool team teammates "
        "colleague colleagues round rounds stage stages phase today tonight now",
        "background": "practice drill drills training warmup background reminder exam exams "
        "quiz competition school high "
        "textbook chapter lesson lecture course assignment worksheet benchmark dataset "
        "evaluation eval larger pipeline ensemble later batch",
    }.items()
}
"""Words about *how* to answer, by field (round 7): length, pace, quality, format, tone,
the resources at hand, encouragement, thought, wishes and the task's background. A sentence of
them with no other request asks nothing ("Short and sweet.", "Quality over speed.",
"Reminder: you have plenty of tokens.", "Over to you, champ."); beside a content word
("a short poem", "the quiz show host") the content word is still a topic."""
EXTRA_VOCABULARY = EXTRA_VOCABULARY | frozenset().union(*MANNER_FIELDS.values())

ANCHORS: frozenset[str] = _words(
    """
    problem problems question questions task exercise puzzle answer answers solution
    solutions response responses result results option options choice choices candidate
    candidates work working workings reasoning calculation calculations math maths
    arithmetic value expression equation sum product quotient difference remainder
    letter step steps qqslot qqnum qqbox attempts replies derivation proof computation
    outputs code program x conclusion conclusions verdict verdicts decision
    """
)
"""Words that make a request's object the problem, the answers or the work ("answer" and
"work" only as nouns: after a determiner)."""
WEAK_ANCHORS: frozenset[str] = _words("it this them these those one ones")
"""Pronouns that name the problem or answers only in a sentence with no content word."""
VERB_NOUNS: frozenset[str] = _words("answer work")
"""Anchors that are verbs unless a determiner or adjective precedes them."""

PERSONA_OPENERS = re.compile(
    r"^(?:you\s+are|you\s+re|you\s+will\s+be|act\s+as|acting\s+as|as\s+an?|as\s+the"
    r"|imagine\s+(?:you|that\s+you)|pretend\s+(?:you|to\s+be)|your\s+role|role|persona"
    r"|assume\s+the\s+role|think\s+of\s+yourself|play(?:ing)?\s+(?:the\s+)?(?:role|part)"
    r"|(?:take|taking)\s+on\s+the\s+(?:role|part)|step\s+into\s+the\s+(?:role|shoes)"
    r"|in\s+the\s+(?:role|shoes)\s+of"
    r"|i\s+am\s+your|this\s+is|here\s+is|here\s+are|note|context|background)\b"
)
"""A sentence that sets a persona or the scene: filler, whatever its words."""

REQUEST_OPENERS: frozenset[str] = _words(
    """
    please can could would will i we let lets help make create tell write plan sing draw
    design book suggest recommend generate draft compose give list describe explain
    translate summarize summarise find how what who where when which why is are do does
    name recite invent imagine build order sort rank rate read play buy sell send call
    pretend suppose assume stop follow wait share
    """
)
"""First words that make a sentence a request: with content words and no act, off-task."""

_VOWEL = re.compile(r"[aeiouy]")
_PARTICIPLE = ("ed", "en")
_PRO_ENDINGS = ("where", "how", "way", "ways", "time", "place")
_PREFIXES = frozenset({"sub", "pre", "multi", "non", "self", "semi", "co", "inter", "over"})


def is_content(word: str, known: frozenset[str]) -> bool:
    """Whether an unknown ``word`` (not in ``known``) is a content word, not manner."""
    if len(word) <= 2:
        return False
    if word.endswith("ly") and len(word) > 4:
        return False
    if word.startswith(("any", "some", "no", "every")) and word.endswith(_PRO_ENDINGS):
        return False  # "anywhere", "somehow": pronoun adverbs
    if word in _PREFIXES:
        return False  # "sub-steps", "multi-step", "re-check": a prefix of the next word
    if word.endswith(_PARTICIPLE) and len(word) > 5:
        # a participle ("received", "broken", "untouched") describes; a topic is a noun
        return False
    for suffix in ("s", "es", "ed", "ing", "er", "ers", "al", "ally"):
        stem = word[: -len(suffix)]
        if word.endswith(suffix) and len(stem) >= 4 and stem in known:
            return False
    if word.endswith("ness") and len(word) > 7:
        # the quality of a known word ("neatness", "carefulness", "clearness"): a manner
        stem = word[:-4]
        if stem in known or (stem.endswith("i") and stem[:-1] + "y" in known):
            return False
    return canonical(word, known) == word


def is_noise(words: list[str], known: frozenset[str]) -> bool:
    """A sentence of keyboard mash or stray letters ("x y z k n", "asdf qwer")."""
    if known.issuperset(words) and not all(len(w) == 1 for w in words):
        return False
    real = [w for w in words if w != ","]
    if len(real) >= 3 and all(len(w) == 1 for w in real):
        return True
    if len(real) >= 2 and len(set(real)) == 1 and real[0] not in known:
        return True  # "la la la", "blah blah"
    unknown_short = [w for w in real if w not in known and len(w) <= 2]
    if len(real) >= 2 and len(unknown_short) == len(real):
        return True  # "xx yy zz"
    unknown = [w for w in real if w not in known]
    if not real or len(unknown) < len(real):
        return False
    return all(
        not _VOWEL.search(w) or w in _NOISE or re.search(r"(.)\1\1", w) is not None for w in unknown
    ) or (len(unknown) >= 3 and all(w in _NOISE for w in unknown[:1]))


_FOREIGN_WORDS = _words(
    """
    bitte das der und ist nicht mit eine einen für auf dem des ich sie wir wie von zu oder
    aber les est une pour avec dans sur que qui pas vous nous sont cette ce los las por para
    con del como favor una gli della sono questo questa não uma voce você het een niet
    el en la le de il al lo du au zum zur im
    """
)
_ENGLISH_WORDS = _words(
    "the and of to is a it this that with for on are be you your what which how please"
)


def is_foreign(words: list[str]) -> bool:
    """A sentence in another language written in ASCII ("Beschreibe bitte das Wetter"):
    at least two of its function words are foreign and they outnumber the English ones."""
    foreign = _FOREIGN_WORDS.intersection(words)
    if len(foreign) < 2:
        return False
    return sum(w in foreign for w in words) > sum(w in _ENGLISH_WORDS for w in words)


_NOISE = _words(
    """
    asdf qwer qwerty uiop zxcv bnm hjkl foo bar baz qux quux lorem ipsum dolor sit amet
    blorp fizzle wug snark blah bleh meh zzz xyz abc
    """
)


def _within_one(a: str, b: str) -> bool:
    """Damerau-Levenshtein distance of ``a`` and ``b`` is at most one."""
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) <= 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if la < lb else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :]


_ABBREVIATIONS: dict[str, str] = {
    "thru": "through", "u": "you", "ur": "your", "pls": "please",
    "prev": "previous", "ans": "answer", "answ": "answer", "maj": "majority",
    "soln": "solution", "sol": "solution", "slv": "solve", "chk": "check", "vrfy": "verify",
    "rpt": "repeat", "resp": "response",
    "calc": "calculate", "plz": "please", "thx": "thanks", "abv": "above",
}  # fmt: skip
"""Chat abbreviations, read as the words they stand for."""

_ELONGATED = re.compile(r"([a-z])\1\1+")
_STEMMED_VERBS = _ACT_VERBS | _words("need want deserve like")


def _by_first_letter(words: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """``words`` indexed by their first letter, each group in sorted order (the typo
    readers compare a word only with those that start as it does)."""
    index: dict[str, tuple[str, ...]] = {}
    for word in sorted(words):
        index[word[0]] = (*index.get(word[0], ()), word)
    return index


_CUES_BY_LETTER = _by_first_letter(CUES | _ACT_VERBS | _LEXICON_NOUNS)


@lru_cache(maxsize=1 << 14)
def canonical(word: str, known: frozenset[str]) -> str:
    """``word`` as the act patterns know it (module docstring); itself when known or no
    single correction applies."""
    if word in _ING:
        return _ING[word]
    if word in _ABBREVIATIONS:
        return _ABBREVIATIONS[word]
    if word in known or len(word) < 3:
        return word
    if _ELONGATED.search(word) is not None:
        # a letter held for emphasis ("pleeease", "sooo"): the word it stretches, when known
        short = _ELONGATED.sub(r"\1", word)
        if short in known and len(short) >= 2:
            return short
    if word.startswith("re") and word[2:] in _ACT_VERBS:
        return word[2:]  # "reassess", "reexamine": the act again
    if word.endswith("s") and word[:-1] in _STEMMED_VERBS:
        return word[:-1]  # "needs", "deserves": the verb
    if word.endswith("ing") and len(word) > 5:
        stem = word[:-3]
        for verb in (stem, stem + "e", stem[:-1]):  # "settling", "running"
            if verb in known and len(verb) >= 3:
                return verb
    if len(word) <= 5 and not word.endswith("s"):
        longer = [cue for cue in _CUES_BY_LETTER.get(word[0], ()) if cue.startswith(word)]
        if len(longer) == 1 and len(longer[0]) >= len(word) + 2:
            return longer[0]  # an abbreviation ("prob", "chk" is in the table)
    elif len(word) <= 5 and word[:-1] and not word[:-2].endswith("s"):
        longer = [c for c in _CUES_BY_LETTER.get(word[0], ()) if c.startswith(word[:-1])]
        plural = [c for c in longer if c.endswith("s")]
        if len(plural) == 1 and len(plural[0]) >= len(word) + 1:
            return plural[0]  # "errs": errors
    near = [
        cue
        for cue in _CUES_BY_LETTER.get(word[0], ())
        if (len(word) >= 5 or len(cue) == len(word) + 1) and _within_one(word, cue)
    ]
    if len(near) == 1:
        return near[0]
    return _typo_of_frequent(word) if not near else word


_TYPO_TARGETS = _words(
    """
    the and you your that this with what which from most have please thanks purpose
    wrong right about because there their again each only
    """
)
"""Frequent words a misspelling is also corrected to (round 7): the function and framing
words between the cues ("teh", "mostt", "thnks", "purpse", "rong"). Real words one edit
from a larger target set ("world", "taxes", "botch"; "Morse" from "more") are why it stays
small."""
_TARGETS_BY_LETTER = _by_first_letter(_TYPO_TARGETS)
_TARGET_TAILS = {t[1:]: t for t in _TYPO_TARGETS | CUES if len(t) >= 5}


def _typo_of_frequent(word: str) -> str:
    """A typo of a frequent word (round 7), read by edit distance rather than a list of
    misspellings: two letters swapped ("teh"), the first letter dropped ("rong"), a letter
    more or less in a word of four letters or more ("mostt", "thnks", "purpse"), a letter
    changed in one of six or more; only when exactly one target is that close, else the
    word itself."""
    if word in _TARGET_TAILS:
        return _TARGET_TAILS[word]
    near = [
        t
        for t in _TARGETS_BY_LETTER.get(word[0], ())
        # a changed letter only in a long word ("host", "wring" are words of their own)
        if (len(word) >= 6 or len(t) != len(word) or sorted(t) == sorted(word))
        and (len(word) >= 4 or len(t) == 3)
        and _within_one(word, t)
    ]
    return near[0] if len(near) == 1 else word


_JSON_KEY = re.compile(r"\"([A-Za-z_ ]{1,30})\"\s*:\s*")
# Bullets ("- ", "1.") need nothing: words are read as runs of letters.
_MARKUP_GATE = re.compile(r"[{}\[\]`#>|_<]|\*\*")
_MARKUP = re.compile(r"[{}\[\]`*#>|_<]+")


def flatten_markup(text: str) -> str:
    """JSON objects as ``key: value.`` sentences, markdown marks as spaces."""
    stripped = text.strip()
    if stripped.startswith("{") and stripped.endswith("}"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        if isinstance(data, dict):
            return "\n".join(f"{k}: {v}." for k, v in data.items()).replace("_", " ")
    if _MARKUP_GATE.search(text) is None:
        return text
    if "{" in text:
        text = _JSON_KEY.sub(lambda m: m.group(1) + ". ", text)
    return _MARKUP.sub(_mark, text)


def _mark(m: re.Match[str]) -> str:
    """A markup run as a space between two words, as nothing beside a space (never a run
    of blanks, which stands for a blanked problem)."""
    text, start, end = m.string, m.start(), m.end()
    spaced = (start > 0 and text[start - 1].isspace()) or (end < len(text) and text[end].isspace())
    return "" if spaced or m.group(0).strip() == "" else " "


# -- inversion --------------------------------------------------------------------------------

Family = Literal["vote", "restate", "act"]

_ANSWER_NOUN = (
    r"(?:answers?|options?|ones?|responses?|solutions?|candidates?|choices?|letters?|results?)"
)
_INVERTED = re.compile(
    r"\b(?P<vote>least\s+(?:common|frequent|frequently|popular|often|supported|repeated)|fewest"
    r"|minority|rarest|(?:majority|most\s+\w+)\s+(?:did|do|does|would|has|have)\s+not\s+"
    r"(?:\w+\s+)?(?:choose|chose|chosen|pick|picked|give|gave|given|select|selected|support"
    r"|supported|back|backed|favou?r|favou?red)"
    r"|(?:majority|most\s+\w+)\s+(?:\w+\s+){0,3}?(?:rejected|dismissed|passed\s+over|voted\s+against"
    r"|ruled\s+out|turned\s+down|disagreed?\s+with|disputed?|oppose[sd]?)"
    # "the answer only one of the models chose": a share of one is the minority
    r"|only\s+(?:one|a\s+single)\s+(?:of\s+(?:the|them|those)\s+)?(?:\w+\s+)?(?:chose|gave|picked"
    r"|selected|proposed|suggested|reached|backed|supports?|supported|got|found|arrived\s+at))\b"
    r"|\b(?P<restate>different\s+(?:answer\s+)?(?:from|than|to)|other\s+than\s+the\s+one"
    r"|(?:except|but|other\s+than)\s+the\s+(?:previous|above|last|given|earlier|shown|same)"
    r"|(?:anything|something)\s+(?:but|except|other\s+than)\s+the\b"
    r"(?!\s+(?:correct|right|true|accurate|valid|best)\b)|differs?\s+from"
    # "any answer except the one given above"
    r"|(?:answer|one|option|result|value)\s+(?:except|besides|apart\s+from|other\s+than)\s+"
    r"(?:for\s+)?the\s+(?:one|answer|result|value)\s+(?:\w+\s+)?(?:above|given|shown|before"
    r"|earlier|previously)"
    r"|differing\s+from|opposite\s+(?:of|to)|reverse\s+of"
    r"|(?:contradicts?|contradicting|conflicts?\s+with|disagrees?\s+with|inconsistent\s+with)\s+"
    r"(?:(?:the\s+|that\s+)?(?:previous|above|last|earlier|given|shown|prior|preceding)|it\b|that\b"
    r"|them\b)"
    # "copy the answer above, negated", "the negation of the right answer"
    r"|negated|negation\s+of|negate\s+(?:it|that|them|the\s+(?:\w+\s+)?(?:answer|result|value))"
    r"|(?:digits?|numbers?|letters?|signs?|values?)\s+(?:altered|changed|flipped|swapped|modified"
    r"|tweaked)"
    r"|(?:give|output|provide|pick|choose|return|write)\s+(?:me\s+)?(?:a|an|some|another)\s+"
    r"(?:different|other|new)\s+(?:one|answer|result|value)"
    r"|(?:give|output|provide|pick|choose|return|write)\s+(?:me\s+)?another\s+(?:one|answer)"
    r"|(?:give|output|provide|pick|choose|return|write)\s+(?:me\s+)?(?:any|some)\s+other"
    r"(?:\s+(?:one|answer|result|value))?\s*$"
    r"|(?:change|switch|alter)\s+(?:it|the\s+(?:\w+\s+){0,2}?(?:answer|result|value))\s+"
    r"(?:\w+\s+){0,2}?to\s+(?:something|anything)\s+else"
    r"|alter|change\s+(?:it|the\s+(?:\w+\s+)?(?:answer|number|value|result))"
    r"|(?:answer|result|value|it)\s+(?:\w+\s+)?(?:,\s+)?(?:plus|minus|times)\s+(?:one|qqnum)"
    r"|(?:its|the)\s+sign\s+(?:flipped|changed|reversed|swapped)"
    r"|(?:flip|negate|reverse|change)\s+(?:its|the)\s+sign"
    r"|(?:add|subtract)\s+(?:one|qqnum)\s+(?:to|from)\s+(?:it|the\s+(?:\w+\s+)?(?:answer|result))"
    r"|(?:change|alter|modify|tweak|swap|flip)\s+(?:one|a|an|any|some|the|qqnum|its|their)\s+"
    r"(?:\w+\s+)?(?:digits?|numbers?|letters?|values?|signs?|words?|characters?)"
    r"|(?:make|change)\s+it\s+(?:so\s+it\s+is\s+)?wrong|so\s+(?:that\s+)?it\s+is\s+wrong)\b"
    r"|\b(?P<act>wrong(?:ly)?|incorrect(?:ly)?|false(?:ly)?|worst|weakest|mistaken|erroneous"
    r"|untrue|inaccurate|bogus|flawed|faulty|least\s+(?:likely|plausible|convincing|probable"
    r"|accurate|correct|right|true|valid|sound)|lowest[\s-]+(?:scor\w*|rat\w*|rank\w*|grad\w*)|bottom[\s-]+ranked|badly"
    r"|bad\s+(?:answers?|ones?|options?|results?|solutions?|guess(?:es)?)"
    # an error as the thing to make ("make a plausible mistake", "answer with a slip")
    r"|(?:make|making|include|including|introduce|introducing|insert|inserting|commit"
    r"|committing|plant|planting|slip\s+in|sneak\s+in|build\s+in)\s+(?!no\b|any\b)"
    r"(?:(?:a|an|one|some|in)\s+)?(?:\w+\s+)?(?:errors?|mistakes?|slips?|blunders?)"
    r"|(?:answer|respond|reply)\s+with\s+(?:a|an|one|some)\s+(?:\w+\s+)?(?:errors?|mistakes?"
    r"|blunders?)"
    # spoiling the answer or question ("sabotage the final step", "bomb this question")
    r"|(?:sabotag|botch|bomb|flub|fumbl|flunk|bungl|muff)\w*\s+(?:it|this|that|the\s+\w+"
    r"|the\s+\w+\s+\w+|this\s+\w+|your\s+(?:\w+\s+)?(?:answer|result|solution|work|reasoning))"
    r"|off\s+by\s+(?:one|qqnum|a\s+(?:bit|little|few))"
    # round 7: an answer described as seeming right and not being so ("looks right but is
    # not"), an error let in ("let one plausible slip creep in")
    r"|(?:looks?|seems?|appears?|sounds?)\s+(?:\w+\s+)?(?:right|correct|true|valid|plausible"
    r"|reasonable|convincing)\s+but\s+(?:is|are|was|isn\s*t)\s+(?:not|wrong|incorrect|false)?"
    r"|let\s+(?:\w+\s+){0,2}?(?:errors?|mistakes?|slips?|blunders?)\s+(?:creep|slip|sneak|get"
    r"|come)\s+in"
    r"|(?:second|next|third)[\s-]+(?:best|most\s+likely)|runner[\s-]+up"
    r"|not\s+(?:be\s+|equal\s+|match\s+)?(?:the\s+|a\s+|an\s+)?(?:correct|right|true|accurate"
    r"|valid)"
    r"|(?:trust|believe|like|favou?r|prefer)\s+(?:\w+\s+)?(?:the\s+)?least"
    r"|least\s+(?:trusted|trustworthy|reliable|credible|believable|sound)"
    r"|(?:except|other\s+than|but)\s+the\s+"
    r"(?:correct|right)|deliberate(?:ly)?|intentional(?:ly)?|on\s+purpose|purposely"
    r"|(?:give|return|output|pick|choose|select|report|state|submit)\s+(?:me\s+)?(?:the|an?|any)"
    r"\s+(?:\w+\s+)?(?:one|answer|response|solution|candidate|option|result)s?\s+(?:\w+\s+)?"
    r"(?:that\s+fails?|which\s+fails?|failing)"
    # "select one that fails", "answer so that you fail the test": failing as the goal
    r"|(?:give|return|output|pick|choose|select|report|state|submit)\s+(?:me\s+)?(?:an?\s+|any\s+)?"
    r"one\s+(?:that|which)\s+fails?"
    r"|\bso\s+(?:that\s+)?(?:you|it|the\s+answer|your\s+answer)\s+(?:will\s+)?fails?"
    r"|(?:give|return|output|pick|choose|select|report"
    r"|state|submit)\s+(?:me\s+)?(?:the|an?|any)"
    r"\s+(?:\w+\s+)?(?:one|answer|response|solution|candidate|option|result)s?\s+(?:\w+\s+)?"
    r"(?:with|that\s+(?:has|have|contains?|makes?)|containing|having)\s+(?:an?\s+|the\s+"
    r"|some\s+)?(?:\w+\s+)?(?:errors?|mistakes?|flaws?|bugs?))\b"
)
# "locate the answer above with an error and report it": asked only when handed on
_HELD_FLAW = re.compile(
    rf"\b{_ANSWER_NOUN}\s+(?:\w+\s+)?(?:with|that\s+(?:has|have|contains?)|containing|having)\s+"
    r"(?:an?\s+|the\s+|some\s+)?(?:\w+\s+)?(?:errors?|mistakes?|flaws?|bugs?)\b"
)
# the answer an inversion is taken of ("the opposite of the correct answer") is not asked
_OF_FAITHFUL = re.compile(
    r"\s+(?:the\s+|a\s+|an\s+)?(?:correct|right|true|accurate|valid|best)\s+(?:final\s+)?"
    r"(?:answer|one|option|result|solution|value|letter|candidate)s?\b"
)
_TAKEN_OF = re.compile(r"\b(?:of|to|than|from|but|except)$")
# A cue in these contexts describes what to find, fix or avoid: no inversion.
_NOT_ASKED = re.compile(
    r"\b(?:find|finding|identify\s+(?:any|all|each|every)|spot|flag|catch|fix|correct|eliminate"
    r"|locate|locating|detect|detecting|pinpoint|pinpointing|look\s+for|hunt\s+for|search\s+for"
    r"|skip|skipping|set\s+aside|leave\s+out|throw\s+out|pass\s+over|disregard|disregarding"
    r"|discard|reject|remove|avoid|ignore|drop|rule\s+out|if|whether|not|no|never"
    r"|without|instead|rather|replace|explain|why|trust|even|might|may|(?:could|can)(?!\s+you\b)"
    r"|steer\s+clear\s+of|stay\s+away\s+from|keep\s+(?:clear|away)\s+(?:of|from)|guard\s+against"
    r"|(?:not|never)\s+(?:\w+\s+)?(?:end|wind)\s+up\s+(?:with|at)|fall\s+for"
    r"|possibly"
    r"|perhaps|seem|seems|looks?|suspect|whichever|sure|unless|nor|easy|got|gave|had|has"
    r"|have|been|said)\b(?:\s+\w+){0,3}\s*$|\bor\s*$|\b(?:best|better|most\s+\w+)\s+to\s*$"
    r"|\b(?:go|goes|went|gone|going)\s+$"
    r"|\b(?:eliminate|eliminating|discard|discarding|rule\s+out|ruling\s+out|cross\s+out"
    r"|strike\s+out|exclude|excluding|reject|rejecting|remove|removing|drop|dropping)\b"
    r"(?:\s+\w+){0,7}\s*$"
)
_HANDED_ON = re.compile(
    r"(?:\s+\w+){0,5}?\s+(?:and|then)\s+(?:\w+\s+)?(?:present|give|output|report|return"
    r"|state|submit|offer|write|use|defend)\s+(?:it|that|this|them)\b"
)
_COPULA = re.compile(r"\b(?:is|are|was|were|be|being)\s+(?:\w+\s+)?$")
_ASKS_WHICH = re.compile(
    rf"\bwhich\s+(?:\w+\s+){{0,2}}?(?:{_ANSWER_NOUN}|results?|of)\b|\bwhich\s+(?:is|are)\b"
    rf"|\b{_ANSWER_NOUN}\s+(?:\w+\s+)?(?:that|which)\b"
)
_RELATIVE_WHICH = re.compile(
    r"(?:,|\b(?:here|there|it|that|this|one))\s+which\s+(?:is|are|was|were)\s+$"
)
# "among the answers above, which is ...": a question's scope before its comma, no clause
_SCOPE_FIRST = re.compile(r"(?:among|amongst|of|from|between|out\s+of|in|looking\s+at|given)\b")
_EITHER = re.compile(
    r"\b(?:correct|correctly|right|rightly|accurately|true|best)\s+(?:\w+\s+)?or\s+(?:an?\s+|the\s+)?$"
)
_GIVE_WHICHEVER = re.compile(
    r"\b(?:give|output|report|return|pick|choose|select|state|submit|present|provide)\s+(?:me\s+)?"
    r"whichever\s+(?:\w+\s+){0,2}?(?:is|are|seems?|looks?)\s+(?:\w+\s+)?$"
)
_WHICHEVER = re.compile(r"\bwhichever\b(?:\s+\w+){0,3}\s*$")
_JUDGED_EITHER = re.compile(
    r"\b(?:as|whether|if|is|are|was|were|be)\s+(?:either\s+)?(?:correct|right|true|valid)\s+or\s+"
    r"(?:an?\s+|the\s+)?$"
    r"|\b(?:mark|label|grade|judge|rate|call|declare|deem|classify|score)\s+(?:\w+\s+){0,5}?"
    r"(?:either\s+)?(?:correct|right|true|valid)\s+or\s+$"
)
_GIVEN_ONE = re.compile(
    r"\b(?:give|report|output|pick|choose|return|state|provide|select|present|submit|offer"
    r"|write|(?:answer|respond|reply)\s+with|hand\s+in|turn\s+in|put\s+forward|produce|supply"
    r"|deliver|come\s+up\s+with)\s+(?:me\s+)?(?:\w+\s+){0,3}?"
    rf"(?:{_ANSWER_NOUN}|something|anything)\s+(?:\w+\s+){{0,5}}?"
    r"(?:to\s+be|is|are|be)\s+(?:\w+\s+)?$"
    r"|\b(?:give|report|output|pick|choose|return|state|provide|select|present|submit|offer"
    r"|write)\s+(?:me\s+)?(?:\w+\s+){0,3}?"
    rf"{_ANSWER_NOUN}\s+(?:\w+\s+){{0,3}}?(?:you|i|we)\s+(?:\w+\s+)?(?:find|consider|think"
    r"|judge|deem|rate|believe|regard|see)\s+(?:\w+\s+)?(?:to\s+be\s+|as\s+)?$"
)
_WHAT_IS_ONE = re.compile(
    r"(?:what|whats)\s+(?:is|would\s+be|could\s+be|might\s+be|s)\s+(?:an?|one|some)\s+(?:\w+\s+)?$"
)
_ON_PURPOSE = re.compile(r"deliberate(?:ly)?|intentional(?:ly)?|on\s+purpose|purposely")
_ERROR_SENSE = re.compile(
    r"\b(?:wrong|incorrect|false|mistakes?|mistaken|errors?|erroneous|fail\w*|miss\w*|slips?"
    r"|blunders?|botch\w*|sabotag\w*|mess\s+up|bad|badly|worst|untrue|inaccurate|flaws?|bogus"
    r"|bomb\w*|flub\w*|fumbl\w*|flunk\w*|bungl\w*"
    r"|lose|off|trip\s+up|screw\w*)\b"
)
# a wrong answer as the subject of a statement of its value ("a common wrong answer here
# is 12", "the usual incorrect choice is b")
_BAIT_SUBJECT = re.compile(r"(?:a|an|the|one)\s+(?:\w+\s+)?$")
_BAIT_STATED = re.compile(
    rf"\s+{_ANSWER_NOUN}\s+(?:\w+\s+)?(?:is|are|was|were|would\s+be)\s+"
    r"(?:often\s+|usually\s+|commonly\s+|typically\s+)?(?:qqnum|qqbox|[a-h])\b"
)
_CONDITION = re.compile(r"\b(?:if|whether|unless|when|not|no|never|without|nor)\b")
_MAKE_IT = re.compile(
    r"\b(?:make\s+sure|ensure|see\s+to\s+it)\b(?:\s+that)?(?:\s+\w+){0,4}?\s+(?:is|are|be)\s*$"
    # "make sure it's wrong" reaches here as "make sure it wrong"
    r"|\b(?:make\s+sure|ensure)\s+(?:that\s+)?(?:it|they|yours|the\s+answer)\s*$"
    r"|(?:^|\b(?:but|and|please|just|must|should|has\s+to|needs\s+to|will)\s+)be\s*$"
    # "relay it, altered to be incorrect": changed into what it is to be
    r"|\b(?:altered|changed|modified|tweaked|edited|rewritten|made)\s+(?:so\s+as\s+)?to\s+be\s*$"
)
_SHARE_OF_ONE = re.compile(
    rf"\b(?:{_ANSWER_NOUN})\s+(?:that|which)\s+(?:got|gets|received|receives|has|had|drew"
    r"|earned|won)\s+(?:the\s+)?$"
)
_YES_NO = re.compile(
    r"(?:is|are|was|were|does|do|did|has|have)\b"
    r"(?!\s+(?:it|this|the\s+(?:problem|question|task|calculation|math|sum|exercise))\b)"
)
_FAITHFUL = re.compile(
    r"\b(?:correct|right|best|true|accurate|valid|strongest|most\s+(?:likely|plausible"
    r"|convincing|common|frequent))\s+(?:final\s+)?(?:answer|one|option|result|solution"
    r"|value|letter|candidate)s?\b"
    r"|\b(?:correct|fix)\s+(?:it|them|this|that|any|the\s+(?:errors?|mistakes?|answer))\b"
    r"|\bone\s+(?:that|which)\s+is\s+(?:correct|right)\b"
)


def inversion(sentence: str) -> tuple[Family | None, bool]:
    """``(family, faithful)`` for a normalised sentence (lower-case words, single spaces):
    the family of the first inverted cue asked for (``vote``: the minority; ``restate``: an
    answer other than the one shown; ``act``: a wrong answer or candidate), or ``None``;
    and whether a faithful output (the correct / best answer) is asked in it too."""
    family: Family | None = None
    kept = sentence
    for m in () if _YES_NO.match(sentence) else _INVERTED.finditer(sentence):
        if _ON_PURPOSE.fullmatch(m.group(0)) and not _ERROR_SENSE.search(sentence):
            continue  # "be careful and deliberate": a manner, no error made on purpose
        if _PLACE_AFTER.match(sentence, m.end()):
            continue  # "the flawed step in the solution above": a place in the work (round 8)
        before = sentence[: m.start()]
        made = _MAKE_IT.search(before) is not None  # "make sure your answer is wrong"
        # "find a wrong answer and present it": what is found is then handed on
        made = made or _HANDED_ON.match(sentence, m.end()) is not None
        made = made or bool(m.group("vote") and " not " in m.group(0))  # "did not choose"
        # "what would be a wrong answer here?": the wrong answer is what is asked
        made = made or _WHAT_IS_ONE.match(before) is not None
        # "whichever answer the fewest share": the minority is what is asked
        made = made or bool(m.group("vote") and _WHICHEVER.search(before))
        # "the one that got the fewest votes": the share qualifies the answer to give
        made = made or bool(m.group("vote") and _SHARE_OF_ONE.search(before))
        made = made or _GIVE_WHICHEVER.search(before) is not None  # "output whichever is wrong"
        if _EITHER.search(before) and not _JUDGED_EITHER.search(before):
            # "answer correctly or incorrectly": both asked, a hedge
            family = family or ("vote" if m.group("vote") else "act")
            return family, True
        # "give an answer you know to be wrong", "the answer above you find least convincing":
        # the cue qualifies the answer to give (a condition on it is no such qualifier)
        made = made or (
            _GIVEN_ONE.search(before) is not None
            and _CONDITION.search(" ".join(before.split()[-7:])) is None
        )
        if _NOT_ASKED.search(before) and not made:
            continue
        if _BAIT_SUBJECT.match(before) and _BAIT_STATED.match(sentence, m.end()):
            continue  # "a common wrong answer here is 12": a trap named, not asked
        if (
            _COPULA.search(before)
            and not made
            and (
                not _ASKS_WHICH.search(before)
                or (_RELATIVE_WHICH.search(before) and not _SCOPE_FIRST.match(before))
            )
        ):
            continue  # "X is wrong", "20, which is wrong": said of it, not asked
        if family is None:
            family = "vote" if m.group("vote") else "restate" if m.group("restate") else "act"
        taken = _OF_FAITHFUL.match(sentence, m.end()) if _TAKEN_OF.search(m.group(0)) else None
        kept = kept.replace(m.group(0) + (taken.group(0) if taken else ""), " ", 1)
    if family is None and not _YES_NO.match(sentence):
        held = _HELD_FLAW.search(sentence)
        if (
            held is not None
            and _HANDED_ON.match(sentence, held.end()) is not None
            and _MENDED.search(sentence, held.end()) is None
        ):
            family = "act"
    return family, asks_faithful(kept if family else sentence)


# Round 8: the flawed answer found and then given *mended* is a check, not a flaw handed on
# ("identify the flawed step above and give the fixed answer").
_PLACE_AFTER = re.compile(r"\s+(?:steps?|lines?|moves?|spots?)\s+(?:in|of)\b")
_MENDED = re.compile(r"\b(?:fixed|corrected|repaired|amended|mended|right|correct|true)\b")

FAITHFUL_WORDS: frozenset[str] = _words(
    "correct right best true accurate valid strongest most fix one"
)
"""Words one of which every faithful-output cue contains (a speed gate)."""


def asks_faithful(sentence: str) -> bool:
    """Whether a normalised sentence asks for the correct / best answer (not under a
    negation: "the second-best answer, not the best one")."""
    return any(
        _NEGATED_BEFORE.search(sentence, 0, m.start()) is None for m in _FAITHFUL.finditer(sentence)
    )


_NEGATED_BEFORE = re.compile(r"\bnot\s+(?:the\s+|a\s+|an\s+|your\s+)?$")
