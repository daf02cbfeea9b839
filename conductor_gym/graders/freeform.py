r"""Grader ``"freeform"``: a cascade of rules for short free-form answers (RLPR-style).

Contract: ``reference`` is a short answer of any kind (a word or phrase, a number, a LaTeX
expression, an option letter). The response's answer is the last ``\boxed{...}``, else
the value after the last anchored phrase ("Answer: X", "The final answer is X"), else the
last non-empty line (:func:`extract_answer`), cleaned of ``$``, ``**``, ``\text{}`` and
trailing punctuation. No answer at all is wrong with ``extracted=None``.

The rules, in order; the first that *decides* gives the verdict, and the ``reason``
starts with its name:

1. ``choice``: when ``metadata["choices"]`` (the option texts) is given or the reference
   is a single upper-case letter. The reference names an option by letter, or by its
   text when ``choices`` is given. The response's letter is found by
   :func:`~conductor_gym.graders.choice.extract_choice`, else by its answer being the
   text of an option. This rule always decides: no option found is wrong. A letter
   outside ``choices`` raises :class:`~conductor_gym.graders.base.GraderError`.
2. ``math-verify``: when the reference looks mathematical (it holds a digit, or no word
   of two or more letters outside LaTeX commands, so ``"no"`` is not read as the product
   ``n*o``), the answer is checked with
   :func:`conductor_gym.graders.math.verify_answer` (same thread and timeout rules as
   the ``"math"`` grader; its timeouts and crashes are ``GraderError``). It decides only
   when it finds the two equal.
3. ``numeric``: when both parse as numbers (:func:`parse_numeric`: what
   :func:`~conductor_gym.graders.numeric.parse_number` reads, plus scientific notation
   such as ``1.5e3`` and ``1.5 \times 10^{3}``), they are equal when
   ``|a - b| <= rel_tol * max(|a|, |b|)`` (exact rational arithmetic;
   ``metadata["rel_tol"]``, default ``1e-4``). This rule always decides.
4. ``string``: the normalised strings are equal (:func:`normalize_text`: Unicode NFKC,
   accents dropped, case folded, the articles "a", "an", "the" dropped, whitespace
   collapsed, and punctuation dropped unless the text holds a digit, so ``-3`` never
   equals ``3`` nor ``(1, 2)`` equal ``12``).

When no rule finds a match the answer is wrong and the ``reason`` lists what was tried.

An LLM judge, ``"freeform-judge"``, is available behind the same interface but is off by
default: it is registered only by :func:`register_llm_judge`, which calls a model through
`LiteLLM <https://docs.litellm.ai>`_ (imported lazily, not a dependency of this package).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from conductor_gym.graders.base import Grade, GraderError, GraderFn, register_grader
from conductor_gym.graders.choice import extract_choice, option_letters
from conductor_gym.graders.extract import clean_answer, graded_answer
from conductor_gym.graders.math import (
    MAX_ANSWER_CHARS,
    Mode,
    ReferenceParseError,
    verify_answer,
)
from conductor_gym.graders.numeric import parse_number

__all__ = [
    "DEFAULT_REL_TOL",
    "JUDGE_GRADER",
    "JudgeConfig",
    "extract_answer",
    "grade_freeform",
    "grade_with_judge",
    "looks_mathematical",
    "normalize_text",
    "parse_judge_reply",
    "parse_numeric",
    "register_llm_judge",
]

DEFAULT_REL_TOL = 1e-4
"""Relative tolerance of the ``numeric`` rule when ``metadata["rel_tol"]`` is not given."""

JUDGE_GRADER = "freeform-judge"
"""The name :func:`register_llm_judge` registers the LLM judge under."""

_LETTER = re.compile(r"[(\[]?([A-Z])[)\]]?")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_WORD = re.compile(r"[^\W\d_]{2,}")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_SPACES = re.compile(r"\s+")
_DELIMITERS = ("$", "\\(", "\\[")
_SCIENTIFIC = re.compile(r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))[eE]([+-]?\d+)")
_TIMES_TEN = re.compile(
    r"([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*(?:\\times|\\cdot|\u00d7|\*)\s*10\s*\^\s*\{?\s*([+-]?\d+)\s*\}?"
)


def extract_answer(response: str) -> tuple[str, str] | None:
    r"""``(answer, rule)``: the last ``\boxed{}`` (``"boxed"``), else the last anchored
    phrase (``"anchored"``), else the last non-empty line (``"last line"``), each cleaned
    by :func:`~conductor_gym.graders.extract.clean_answer`; ``None`` for a blank response."""
    found = graded_answer(response)
    if found is not None:
        return found
    for line in reversed(response.splitlines()):
        cleaned = clean_answer(line)
        if cleaned:
            return cleaned, "last line"
    return None


def normalize_text(text: str) -> str:
    """The form the ``string`` rule compares (see the module docstring)."""
    text = unicodedata.normalize("NFKD", clean_answer(text))
    text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = unicodedata.normalize("NFKC", text).casefold()
    if not any(ch.isdigit() for ch in text):
        text = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text)
    text = _ARTICLES.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def looks_mathematical(text: str) -> bool:
    """Whether ``text`` holds a digit or no word of two or more letters outside LaTeX
    commands (``"x \\in [1, 2]"`` and ``"\\frac{\\pi}{2}"`` do; ``"Paris"`` does not)."""
    if any(ch.isdigit() for ch in text):
        return True
    return _WORD.search(_LATEX_COMMAND.sub(" ", text)) is None


# -- the rules ----------------------------------------------------------------------------


def _reference_letter(reference: str, choices: list[str] | None) -> str | None:
    """The option letter the reference names, or ``None`` when it names none."""
    letter = _LETTER.fullmatch(clean_answer(reference))
    if letter is not None:
        return letter[1]
    if choices:
        wanted = normalize_text(reference)
        for index, choice in enumerate(choices):
            if normalize_text(choice) == wanted:
                return option_letters(index + 1)[-1]
    return None


def _by_choice(
    response: str, answer: str | None, expected: str, choices: list[str] | None
) -> Grade:
    num_choices = len(choices) if choices else 26
    valid = option_letters(num_choices)
    if expected not in valid:
        raise GraderError(f"freeform: the reference option {expected!r} is not one of {valid}")
    found = extract_choice(response, num_choices)
    if found is not None:
        letter, rule = found
        if letter == expected:
            return Grade(True, letter, f"choice ({rule}): option {letter} is the reference")
        return Grade(
            False, letter, f"choice ({rule}): option {letter}, but the reference is {expected}"
        )
    if choices and answer is not None:
        said = normalize_text(answer)
        for index, choice in enumerate(choices):
            if normalize_text(choice) == said:
                letter = valid[index]
                verdict = "is" if letter == expected else f"is not (it is {expected})"
                return Grade(
                    letter == expected,
                    answer,
                    f"choice (option text): {answer!r} is option {letter}, "
                    f"which {verdict} the reference",
                )
    return Grade(False, answer, f"choice: no option letter ({valid[0]}-{valid[-1]}) found")


def parse_numeric(text: str) -> Fraction | None:
    r"""The exact value of ``text`` if it is one number: anything
    :func:`~conductor_gym.graders.numeric.parse_number` reads, plus scientific notation
    (``1.5e3``, ``1.5 \times 10^{3}``, ``1.5 * 10^-3``); else ``None``."""
    value = parse_number(text)
    if value is not None:
        return value
    compact = clean_answer(text).replace("{,}", "").replace(",", "")
    if len(compact) > 100:
        return None
    match = _SCIENTIFIC.fullmatch(compact) or _TIMES_TEN.fullmatch(compact)
    if match is None or abs(int(match[2])) > 400:
        return None
    return Fraction(match[1]) * Fraction(10) ** int(match[2])


def _within(a: Fraction, b: Fraction, rel_tol: Fraction) -> bool:
    return abs(a - b) <= rel_tol * max(abs(a), abs(b))


def _rel_tol(metadata: Mapping[str, Any]) -> Fraction:
    raw = metadata.get("rel_tol", DEFAULT_REL_TOL)
    try:
        tol = Fraction(str(raw))
    except (TypeError, ValueError) as exc:
        raise GraderError(f"freeform: rel_tol must be a number, got {raw!r}") from exc
    if tol < 0:
        raise GraderError(f"freeform: rel_tol must be >= 0, got {raw!r}")
    return tol


@register_grader("freeform")
def grade_freeform(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    """Grade ``response`` against a free-form ``reference`` by the cascade in the module
    docstring (``choice``, ``math-verify``, ``numeric``, ``string``)."""
    reference = reference.strip()
    if not reference:
        raise GraderError("freeform: the reference is empty")
    raw_choices = metadata.get("choices")
    choices = [str(choice) for choice in raw_choices] if raw_choices else None
    found = extract_answer(response)
    answer = found[0] if found is not None else None

    expected_letter = _reference_letter(reference, choices)
    if expected_letter is not None:
        return _by_choice(response, answer, expected_letter, choices)
    if found is None or not answer:
        return Grade(False, None, "no answer found in the response")
    rule = found[1]
    tried: list[str] = []

    if looks_mathematical(reference) and len(answer) <= MAX_ANSWER_CHARS:
        mode: Mode = "text" if any(d in answer for d in _DELIMITERS) else "answer"
        try:
            check = verify_answer(reference, answer, mode=mode)
        except ReferenceParseError:
            tried.append("math-verify cannot read the reference")
        else:
            if check.equivalent:
                return Grade(True, answer, f"math-verify ({rule}): {answer!r} equals {reference!r}")
            tried.append("math-verify: not equivalent")

    expected_number, given_number = parse_numeric(reference), parse_numeric(answer)
    if expected_number is not None and given_number is not None:
        tol = _rel_tol(metadata)
        close = _within(given_number, expected_number, tol)
        relation = "is within" if close else "is not within"
        return Grade(
            close,
            answer,
            f"numeric ({rule}): {answer!r} {relation} rel_tol {float(tol):g} of {reference!r}",
        )
    tried.append("not both numbers")

    expected_text, given_text = normalize_text(reference), normalize_text(answer)
    if expected_text and expected_text == given_text:
        return Grade(True, answer, f"string ({rule}): {answer!r} matches {reference!r}")
    tried.append(f"normalised strings differ ({given_text!r} vs {expected_text!r})")
    return Grade(False, answer, f"no rule matched ({rule}: {answer!r}): " + "; ".join(tried))


# -- the optional LLM judge ---------------------------------------------------------------

_JUDGE_SYSTEM = (
    "You grade answers. Given a question (when known), a reference answer and a "
    "candidate's final answer, decide whether the candidate's answer means the same as "
    "the reference. Ignore formatting, wording and units written differently; do not "
    "solve the question yourself. Reply with exactly one word: CORRECT or INCORRECT."
)
_JUDGE_REPLY = re.compile(r"\b(INCORRECT|CORRECT)\b", re.IGNORECASE)
_JUDGE_NEGATED = re.compile(r"\bnot\s+correct\b", re.IGNORECASE)
_JUDGE_TAIL_CHARS = 2_000


@dataclass(frozen=True)
class JudgeConfig:
    """How ``"freeform-judge"`` calls its model (set by :func:`register_llm_judge`).

    Attributes:
        model: A LiteLLM model name (``"openai/gpt-4o-mini"``, ``"hosted_vllm/..."``).
        api_base: The server's base URL, or ``None`` for the provider's default.
        api_key: An API key, or ``None`` to let LiteLLM read the provider's variable.
        temperature: Sampling temperature (0 for a repeatable verdict).
        max_tokens: Longest reply.
        timeout_s: Request timeout.
        rules_first: Run the ``"freeform"`` cascade first and return its verdict when it
            finds the answer correct (the judge is asked only otherwise).
        completion_kwargs: Further keyword arguments for ``litellm.completion``.
    """

    model: str
    api_base: str | None = None
    api_key: str | None = None
    temperature: float = 0.0
    max_tokens: int = 8
    timeout_s: float = 60.0
    rules_first: bool = True
    completion_kwargs: Mapping[str, Any] = field(default_factory=dict)


_judge_config: JudgeConfig | None = None


def parse_judge_reply(text: str) -> bool | None:
    """``True`` for a ``CORRECT`` verdict, ``False`` for ``INCORRECT`` (or "not correct"),
    ``None`` when the reply gives no verdict or both."""
    if _JUDGE_NEGATED.search(text):
        return False
    verdicts = {match[1].upper() for match in _JUDGE_REPLY.finditer(text)}
    if len(verdicts) != 1:
        return None
    return verdicts.pop() == "CORRECT"


def _judge_messages(answer: str, reference: str, question: str | None) -> list[dict[str, str]]:
    parts = [f"Question:\n{question}\n"] if question else []
    parts += [f"Reference answer:\n{reference}\n", f"Candidate's final answer:\n{answer}\n"]
    parts.append("Is the candidate's answer correct? Reply CORRECT or INCORRECT.")
    return [
        {"role": "system", "content": _JUDGE_SYSTEM},
        {"role": "user", "content": "\n".join(parts)},
    ]


def grade_with_judge(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    """The ``"freeform-judge"`` grader: an LLM decides whether the final answer matches.

    The judge sees the extracted final answer (else the last characters of the
    response), the reference and ``metadata["question"]`` when given. A missing
    ``litellm``, a failed request or a reply with no verdict is a
    :class:`~conductor_gym.graders.base.GraderError`.
    """
    config = _judge_config
    if config is None:
        raise GraderError("freeform-judge: call register_llm_judge(model, api_base) first")
    if config.rules_first:
        verdict = grade_freeform(response, reference, metadata)
        if verdict.correct:
            return verdict
    found = extract_answer(response)
    if found is None:
        return Grade(False, None, "no answer found in the response")
    answer = found[0] if found[1] != "last line" else response.strip()[-_JUDGE_TAIL_CHARS:]
    try:
        import litellm  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise GraderError(
            "freeform-judge needs litellm, which is not installed: pip install litellm"
        ) from exc
    question = metadata.get("question")
    try:
        reply: Any = litellm.completion(
            model=config.model,
            messages=_judge_messages(answer, reference, str(question) if question else None),
            api_base=config.api_base,
            api_key=config.api_key,
            temperature=config.temperature,
            max_tokens=config.max_tokens,
            timeout=config.timeout_s,
            **dict(config.completion_kwargs),
        )
        text = str(reply.choices[0].message.content or "")
    except Exception as exc:
        raise GraderError(
            f"freeform-judge: the call to {config.model!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    correct = parse_judge_reply(text)
    if correct is None:
        raise GraderError(f"freeform-judge: {config.model!r} gave no verdict: {text[:200]!r}")
    verdict_word = "correct" if correct else "incorrect"
    return Grade(correct, found[0], f"llm-judge ({config.model}): {verdict_word}")


def register_llm_judge(
    model: str,
    api_base: str | None = None,
    *,
    api_key: str | None = None,
    temperature: float = 0.0,
    max_tokens: int = 8,
    timeout_s: float = 60.0,
    rules_first: bool = True,
    **completion_kwargs: Any,
) -> GraderFn:
    """Register (or reconfigure) the ``"freeform-judge"`` grader and return it.

    Nothing is imported or called here: ``litellm`` is imported on the first grade. Calling
    again replaces the configuration. See :class:`JudgeConfig` for the arguments.
    """
    global _judge_config
    _judge_config = JudgeConfig(
        model=model,
        api_base=api_base,
        api_key=api_key,
        temperature=temperature,
        max_tokens=max_tokens,
        timeout_s=timeout_s,
        rules_first=rules_first,
        completion_kwargs=dict(completion_kwargs),
    )
    return register_grader(JUDGE_GRADER)(grade_with_judge)
