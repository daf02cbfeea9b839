"""The corpus that measures the request recogniser (:mod:`conductor_gym.sim.requests`).

Splits (``conductor_gym/sim/data/requests-<split>.jsonl``, one JSON object a line: ``text``,
``label`` (a kind of :data:`~conductor_gym.sim.requests.KINDS`), ``lang``, ``note``, and
optionally ``inverted`` / ``hedge``, true when the faithful reading is the label's act
inverted, or the label with a hedge):

* ``dev``: the split the recogniser is tuned on (v3's, extended for v3.1);
* ``heldout``: v3's held-out split, written before the v3 recogniser; its labels keep their
  meaning under v3.1 (it holds no inverted request);
* ``heldout-v31``: written before the v3.1 recogniser and never used to tune it: subtasks
  in the styles of frontier planners (GPT-, Claude-, Gemini-, Qwen-style), terse RL
  policies and people, with typos, markdown, JSON, role-play, long instructions, inverted,
  off-task and meaningless requests;
* ``heldout-v31b``: a second v3.1 held-out split, written after heldout-v31 had been read
  (so slightly contaminated) and before the recogniser was tuned further; never tuned on,
  but its errors were read after its one measurement (contaminated since);
* ``heldout-v31c``, ``heldout-v31d``, ``heldout-v31e``: more, each written after the one
  before it was measured and before the recogniser changed again; never tuned on (each
  measured once after the changes that followed it; the errors of all but the last were
  read since, so only the last is clean);
* ``heldout-v31f``: written before the round of changes that read cues by rule (a
  weighted, stemmed, typo-tolerant act lexicon; off-task needs positive evidence of another
  topic); measured once before those changes (its "before" table) and once after, its
  errors read in between (contaminated since);
* ``heldout-v31g``: written after those changes, committed before its one measurement and
  never tuned on (the clean held-out figure of that round); its errors were seen at that
  measurement, so a later round's figures on it are not clean;
* ``heldout-v31h``: written after a second round of rule changes (tuned on new dev items,
  not on heldout-v31g), committed before its one measurement and never tuned on (its
  errors were read after that measurement: contaminated since);
* ``heldout-v31i``: 276 subtasks (own text, none repeating another split's), written after
  heldout-v31h's measurement and before the third round of rule changes, committed before
  any of them and measured once, after them (its errors were seen then); never tuned on;
* ``heldout-v31j``: 214 subtasks (own text, none repeating another split's), written after
  heldout-v31i's measurement and before a fourth round of rule changes, committed before
  any of them and measured once, after them; never tuned on (its errors were read after
  that measurement: contaminated since);
* ``heldout-v31k``: 256 subtasks (own text, none repeating another split's), written after
  heldout-v31j's measurement and before a fifth round of rule changes, committed before
  any of them and measured once, after them (recall 92.3 to 100 % per reading); never
  tuned on (its errors were read at that measurement: contaminated since);
* ``heldout-v31l``: 337 subtasks (own text, none repeating another split's), written after
  heldout-v31k's measurement and before a sixth round of rule changes, committed before
  any of them and measured once, after them; never tuned on. It gives ``none`` (74) and
  ``inverted`` (72) large samples, with near-misses that keep their faithful reading
  ("find which answer above is incorrect and then give the correct one"). Its one
  measurement (English items; reading: items, precision, recall)::

      solve     42   84.6 %   88.1 %      literal   13  100.0 %   84.6 %
      check     33   93.9 %   93.9 %      offtask   37   64.9 %  100.0 %
      vote      30   96.6 %   93.3 %      none      74   98.2 %   82.4 %
      restate   30   90.0 %   90.0 %      inverted  72   96.9 %   86.1 %

  no leak of 41 off-task items; 2 on-task requests in French failed closed. The round's
  dev probes were written by the author of this split after it was committed, so it is
  unread (its errors were seen only at this measurement) but not independent of the
  tuner. Its errors were then read and the seventh round of rule changes was tuned on
  them (with new dev items and counter-examples in other words), so it is contaminated
  since; after the seventh round::

      solve     42   98.0 %   97.6 %      literal   13  100.0 %  100.0 %
      check     33  100.0 %  100.0 %      offtask   37  100.0 %  100.0 %
      vote      30  100.0 %  100.0 %      none      74  100.0 %  100.0 %
      restate   30  100.0 %  100.0 %      inverted  72  100.0 %  100.0 %

  (no leak; the one English miss is a hedge, "Whether it's correct or not is up to you.
  Give an answer.", read as solving without the hedge), a tuned figure, not a held-out
  one.
* ``heldout-v31m``: 329 subtasks written **blind**: by a writer who read only this
  docstring and the dev split (no recogniser code, no rule, no other held-out split) and
  never ran the recogniser, after heldout-v31l's measurement and before the seventh round
  was merged; measured once, after the seventh round (recall and precision fall far below
  every earlier held-out split's: splits written by the tuner share the tuner's phrasing)::

      solve     44   73.2 %   68.2 %      literal    9  100.0 %   66.7 %
      check     38   82.4 %   73.7 %      offtask   50   46.5 %   92.0 %
      vote      27   91.3 %   77.8 %      none      54   85.4 %   64.8 %
      restate   27   95.8 %   85.2 %      inverted  52   97.0 %   61.5 %

  4 leaks of 50 English off-task items; 18 on-task requests in French, German, Spanish or
  Chinese failed closed. Most misses are on-task subtasks read as off-task (the reader
  fails closed on words it cannot place: emoji, chat slang, chat-template tokens, persona
  and pool narration, context notes). Its errors were read at that measurement, and the
  eighth round was tuned on them (and on v31l's; with new dev items and counter-examples
  in other words), so it is contaminated since; after the eighth round::

      solve     44   88.4 %   86.4 %      literal    9  100.0 %  100.0 %
      check     38   97.2 %   92.1 %      offtask   50   88.9 %   96.0 %
      vote      27   96.4 %  100.0 %      none      54   96.2 %   94.4 %
      restate   27  100.0 %  100.0 %      inverted  52   98.0 %   96.2 %

  (2 leaks of 50; its 18 foreign on-task requests, which failed closed, are read since by
  the closed French, German, Spanish and Chinese lexicon, none misread, and no foreign
  off-task item leaks), a tuned figure, not a held-out one.

* ``heldout-v31n``: 334 subtasks written **blind**, as heldout-v31m was, by another
  writer, after heldout-v31m's measurement and before the eighth round was merged;
  measured once, after the eighth round (the round tuned on heldout-v31m's errors)::

      solve     48   75.5 %   77.1 %      literal   10  100.0 %   80.0 %
      check     39   79.5 %   79.5 %      offtask   48   62.7 %   87.5 %
      vote      26   88.5 %   88.5 %      none      52   89.1 %   84.6 %
      restate   25   81.0 %   68.0 %      inverted  44   90.6 %   65.9 %

  6 leaks of 48 English off-task items; of 27 on-task requests in other languages, 4 were
  read and 23 failed closed (Japanese and Portuguese have no lexicon). Its errors were
  read at that measurement, and the ninth round was tuned on them (with fresh dev items
  and counter-examples in the round's own words); after it::

      solve     48   87.5 %   81.2 %      literal   10  100.0 %   80.0 %
      check     39   86.1 %   79.5 %      offtask   48   73.8 %  100.0 %
      vote      26   92.3 %   92.3 %      none      52   93.6 %   90.4 %
      restate   25   95.5 %   84.0 %      inverted  44   92.5 %   84.1 %

  (0 leaks of 48; of its 27 foreign on-task requests 26 are read since by the closed
  lexicons, Portuguese, Italian and Japanese added, and one, a Portuguese restate asked
  to be altered until wrong, fails closed), a tuned figure, not a held-out one.
* ``heldout-v31o``: 318 subtasks written **blind** by a third writer (orchestration-framework
  role/goal/backstory steps, system prompts, teacher, support and legal registers, quoted
  answers, steps named by number; 35 items in nine other languages), after heldout-v31n's
  measurement and before the ninth round was merged; measured once, after the ninth round
  (the round tuned on heldout-v31n's errors)::

      solve     46   71.7 %   71.7 %      literal   10   62.5 %   50.0 %
      check     40   86.2 %   62.5 %      offtask   45   50.6 %   95.6 %
      vote      26  100.0 %   88.5 %      none      46   78.9 %   65.2 %
      restate   25   90.5 %   76.0 %      inverted  45   81.8 %   60.0 %

  1 leak of 45 English off-task items; of 24 on-task requests in other languages, 9 were
  read and 15 failed closed. Its errors were read at that measurement.

Scores are per *reading*: an item's expected reading is ``inverted`` when it is flagged so
(a hit is any inverted act: each makes the worker answer wrong on purpose), otherwise its
label (a hit needs the kind, not inverted; an item flagged ``hedge`` needs the hedge, and
there ``none`` and ``solve`` are one reading, as ``none`` falls back to solving).
``python -m conductor_gym.sim.request_corpus [split ...] [--errors]`` prints the tables.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources

from conductor_gym.errors import ConfigurationError
from conductor_gym.sim.requests import (
    ACTS_ON_PROBLEM,
    KINDS,
    ON_TASK,
    RecognisedKind,
    Recognition,
    recognise_subtask,
)

__all__ = [
    "READINGS",
    "SPLITS",
    "CorpusItem",
    "CorpusReport",
    "ReadingScore",
    "corpus_report",
    "load_corpus",
    "main",
    "reading",
]

SPLITS = (
    "dev",
    "heldout",
    "heldout-v31",
    "heldout-v31b",
    "heldout-v31c",
    "heldout-v31d",
    "heldout-v31e",
    "heldout-v31f",
    "heldout-v31g",
    "heldout-v31h",
    "heldout-v31i",
    "heldout-v31j",
    "heldout-v31k",
    "heldout-v31l",
    "heldout-v31m",
    "heldout-v31n",
    "heldout-v31o",
)
READINGS: tuple[str, ...] = (*KINDS, "inverted")
"""What a reader can make of a subtask: a kind, or an inverted act."""


@dataclass(frozen=True)
class CorpusItem:
    """One corpus row: a subtask, the kind a faithful reader finds, its language, a note,
    and whether that reading is the kind inverted or hedged."""

    text: str
    label: RecognisedKind
    lang: str
    note: str
    inverted: bool = False
    hedge: bool = False

    @property
    def expected(self) -> str:
        """The reading a faithful reader makes (:data:`READINGS`)."""
        return "inverted" if self.inverted else self.label


def reading(recognition: Recognition) -> str:
    """The :data:`READINGS` entry of a recognition."""
    return "inverted" if recognition.inverted else recognition.kind


def _hit(item: CorpusItem, got: Recognition) -> bool:
    if item.inverted:
        return got.inverted and got.kind in ON_TASK
    if item.hedge:
        # hedged beside a problem: solving it or falling back to solving are one reading
        same = got.kind == item.label or {got.kind, item.label} <= {"none", "solve"}
        return same and got.hedge and not got.inverted
    return reading(got) == item.label


def load_corpus(split: str) -> list[CorpusItem]:
    """One split (module docstring)."""
    if split not in SPLITS:
        raise ConfigurationError(f"split: unknown corpus split {split!r}; valid: {list(SPLITS)}")
    path = resources.files("conductor_gym.sim") / "data" / f"requests-{split}.jsonl"
    items = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        row = json.loads(line)
        where = f"requests-{split}.jsonl line {number}"
        if row.get("label") not in KINDS:
            raise ConfigurationError(
                f"{where}: label {row.get('label')!r} is not one of {list(KINDS)}"
            )
        inverted = bool(row.get("inverted", False))
        if inverted and row["label"] not in ON_TASK:
            raise ConfigurationError(f"{where}: only an on-task act can be inverted")
        items.append(
            CorpusItem(
                row["text"],
                row["label"],
                row["lang"],
                row["note"],
                inverted=inverted,
                hedge=bool(row.get("hedge", False)),
            )
        )
    return items


@dataclass(frozen=True)
class ReadingScore:
    """Precision and recall of one reading on English items (``None``: nothing to divide);
    ``hits``: items with the reading read right, ``right``: items read so that are right."""

    reading: str
    items: int
    predicted: int
    hits: int
    right: int

    @property
    def recall(self) -> float | None:
        """Share of the items with this reading read so."""
        return self.hits / self.items if self.items else None

    @property
    def precision(self) -> float | None:
        """Share of the items read so that are read right."""
        return self.right / self.predicted if self.predicted else None


@dataclass(frozen=True)
class CorpusReport:
    """How :func:`~conductor_gym.sim.requests.recognise_subtask` reads one split.

    Attributes:
        split: A split of :data:`SPLITS`.
        size: Items in the split; ``labels`` their count per expected reading.
        scores: Per reading (:data:`READINGS`), over English items.
        leaks: Off-task items (any language) read as acting on the problem faithfully.
        foreign_on_task: ``(recognised, failed closed, other)`` counts of on-task requests
            in other languages (they may be recognised or fail closed).
        errors: ``(text, expected, got)`` readings of every misread item.
    """

    split: str
    size: int
    labels: dict[str, int]
    scores: tuple[ReadingScore, ...]
    leaks: tuple[tuple[str, str], ...]
    foreign_on_task: tuple[int, int, int]
    errors: tuple[tuple[str, str, str], ...]

    def score(self, name: str) -> ReadingScore:
        """The :class:`ReadingScore` of reading ``name``."""
        return next(s for s in self.scores if s.reading == name)

    def format(self) -> str:
        """A plain-text table."""

        def pct(x: float | None) -> str:
            return "   -  " if x is None else f"{100 * x:5.1f}%"

        lines = [f"split {self.split}: {self.size} items {dict(sorted(self.labels.items()))}",
                 "reading   English items  predicted  precision  recall"]  # fmt: skip
        for s in self.scores:
            lines.append(
                f"{s.reading:<9} {s.items:>13}  {s.predicted:>9}  {pct(s.precision):>9}  "
                f"{pct(s.recall):>6}"
            )
        ok, closed, other = self.foreign_on_task
        lines.append(
            f"off-task read as acting on the problem (leaks): {len(self.leaks)}; "
            f"on-task in other languages: {ok} recognised, {closed} failed closed, "
            f"{other} other"
        )
        return "\n".join(lines)


def corpus_report(split: str) -> CorpusReport:
    """Precision and recall of :func:`~conductor_gym.sim.requests.recognise_subtask` on a
    corpus split."""
    items = load_corpus(split)
    got = [recognise_subtask(item.text) for item in items]
    pairs = list(zip(items, got, strict=True))
    english = [(i, g) for i, g in pairs if i.lang == "en"]
    scores = tuple(
        ReadingScore(
            name,
            items=sum(i.expected == name for i, _ in english),
            predicted=sum(reading(g) == name for _, g in english),
            hits=sum(i.expected == name and _hit(i, g) for i, g in english),
            right=sum(reading(g) == name and _hit(i, g) for i, g in english),
        )
        for name in READINGS
    )
    foreign = [(i, g) for i, g in pairs if i.lang != "en" and i.label in ON_TASK]
    return CorpusReport(
        split=split,
        size=len(items),
        labels=dict(Counter(i.expected for i in items)),
        scores=scores,
        leaks=tuple(
            (i.text, reading(g))
            for i, g in pairs
            if i.label == "offtask" and g.kind in ACTS_ON_PROBLEM and not g.inverted
        ),
        foreign_on_task=(
            sum(_hit(i, g) for i, g in foreign),
            sum(g.kind == "offtask" for _, g in foreign),
            sum(not _hit(i, g) and g.kind != "offtask" for i, g in foreign),
        ),
        errors=tuple((i.text, i.expected, reading(g)) for i, g in pairs if not _hit(i, g)),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m conductor_gym.sim.request_corpus [split ...] [--errors]``: print each
    split's table (every split by default), and with ``--errors`` every misread item."""
    args = list(sys.argv[1:] if argv is None else argv)
    show_errors = "--errors" in args
    splits = [a for a in args if a != "--errors"] or list(SPLITS)
    for split in splits:
        if split not in SPLITS:
            print(f"error: split: unknown corpus split {split!r}; valid: {list(SPLITS)}",
                  file=sys.stderr)  # fmt: skip
            return 2
        report = corpus_report(split)
        print(report.format())
        if show_errors:
            for text, expected, got in report.errors:
                print(f"  {expected:>8} -> {got:<8} {text!r}")
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
