r"""Grader ``"math"``: the response's final answer is mathematically equal to the reference.

Used for MATH500 and AIME-style tasks. Equivalence is decided by
`math-verify <https://github.com/huggingface/Math-Verify>`_ (``pip install math-verify``,
which brings ``sympy`` and ``latex2sympy2_extended``). It is imported lazily, inside the
functions that need it, so ``import conductor_gym`` loads neither ``math_verify`` nor
``sympy``; a missing install raises :class:`~conductor_gym.graders.base.GraderError`.

Contract: ``reference`` is a MATH500-style LaTeX answer (``\frac{1}{2}``, ``\sqrt{3}``,
``(3, \frac{\pi}{2})``, ``10\%``, ``x \in [1, 2]``, ``\text{Evelyn}``) or an AIME
integer. It is parsed first, as ``\boxed{reference}``, because ``math_verify.verify`` is
not symmetric (``verify(gold, answer)``). A reference math-verify cannot read as a finite
value (``12:00`` reads as a division by zero) is compared as text instead, after the
hendrycks MATH normalisation (:func:`normalize_latex`): never an error, never a guess.

The response's answer is read from the text after any R1-style ``</think>`` (the
reasoning is not the answer) by the first rule that applies (the ``reason`` starts with
the rule's name); this follows Math-Verify's extraction, with lm-eval's Minerva cut:

1. ``boxed``: the balanced ``\boxed{...}`` boxes (:func:`~conductor_gym.graders.extract.boxes`,
   linear in the response), parsed as ``\boxed{content}``. A box is the committed answer:
   an empty box is wrong. Several boxes with different contents are read as one set,
   as Math-Verify merges them (``\boxed{-2}`` and ``\boxed{1}`` equal ``1, -2``; two
   different values boxed against one value is wrong: the response commits to both),
   unless every box on its own equals the reference (``\frac12`` and ``0.5``).
   A strong final-answer phrase written *after* the last box (``Final answer: 4``, a line
   ``Answer: 4``) supersedes it and is read by rule 2 instead.
2. ``anchored``: the value after the last anchored phrase ("The final answer is X",
   "Answer: X"; :func:`~conductor_gym.graders.extract.last_anchored`), cut where prose
   follows it (lm-eval's Minerva format ``Final Answer: The final answer is 12. I hope
   it is correct.`` reads ``12``; ``Answer: x = 5, since ...`` reads ``x = 5``). A value
   that still holds math delimiters (``$``, ``\(``, ``\[``) is handed to math-verify's own
   extraction; otherwise it is parsed as ``\boxed{value}``.
3. ``math-verify``: math-verify's own extraction (LaTeX environments, then plain
   expressions and numbers, by its priorities) over the end of the response.

A bare answer that is one number grouped by spaces (``1 000``, ``1\,000``) is read as
that number (math-verify alone reads ``1 000`` as the product ``1*000``).

Input bounds: rules 1 and 2 run on the whole response (our extractors are linear); an
extracted answer longer than :data:`MAX_ANSWER_CHARS` is graded wrong unparsed (no
MATH500 or AIME answer comes near it). Rule 3 hands math-verify only the last
:data:`MAX_RESPONSE_CHARS` characters, since a final answer is at the end and its regular
expressions are not linear.

Timeouts and threads. math-verify bounds its work with ``signal.alarm`` (SIGALRM), which
Python allows only in the main thread. So:

* in the main thread math-verify runs in-process with its own timeouts
  (:data:`PARSE_TIMEOUT_S` per parse, :data:`VERIFY_TIMEOUT_S` per comparison);
* in any other thread (the environment may grade from a helper thread) the same check
  runs in a worker process: a lazily created, module-level
  :class:`concurrent.futures.ProcessPoolExecutor` (``spawn`` context, one worker), where
  the check runs in that process's main thread with the same SIGALRM timeouts, plus a
  wall-clock limit of :data:`WORKER_TIMEOUT_S` enforced by the parent, which kills the
  worker if it is exceeded (a SIGALRM handler cannot interrupt a long C-level
  computation, a wall clock in another process can). One check runs at a time (a lock),
  so the wall limit measures the check itself, never time spent queueing.

We chose the worker process over "timeouts disabled and input bounded" because bounding
the input does not bound sympy's time: ``\boxed{9^{9^{9}}}`` is 16 characters and never
finishes. The cost is a one-off worker start (about a second, mostly importing sympy)
and under a millisecond of inter-process traffic per check. The worker is started with
the caller's ``__main__`` hidden from it, so ``spawn`` neither re-runs an unguarded
script nor loads a training script's heavy imports into it. :func:`shutdown_worker` stops
the worker early (it is otherwise stopped at interpreter exit).

ANTLR runtimes. math-verify parses LaTeX with ``latex2sympy2_extended``, whose ANTLR
parser is generated once per ANTLR runtime and picked by the installed
``antlr4-python3-runtime`` version. Only the 4.13.2 parser (:data:`ANTLR_RUNTIME`) is
built from its current grammar; the 4.9.3 and 4.11 ones are older, and under them some
answers silently read differently (``\boxed{10\%}`` is then no longer ``10``). verl's
config stack (Hydra, OmegaConf) needs 4.9, so a verl node has it. Verdicts must not
depend on the install, so on any runtime but :data:`ANTLR_RUNTIME`:

* when the environment variable :data:`ANTLR_PATH_ENV` names a folder holding
  antlr4-python3-runtime 4.13.2 (``pip install --no-deps --target DIR
  antlr4-python3-runtime==4.13.2``), every check runs in the worker process, with that
  folder first on its path (the worker verifies it loaded that runtime); verdicts are
  then those of a 4.13.2 install;
* otherwise the first check raises :class:`~conductor_gym.graders.base.GraderSetupError`
  naming the installed and needed versions and the fix, never a different verdict.

:func:`check_antlr_runtime` runs that decision on its own (a trainer can call it at
start-up). The variable is read at each check; the worker keeps the folder it started
with.

A math-verify timeout or crash, a dead worker, or a missing install is a
:class:`~conductor_gym.graders.base.GraderError`, never a wrong answer. (math-verify is
called with ``raise_on_error=True``; a comparison between answers of different kinds,
such as an interval and a number, returns ``False`` there rather than raising.)
"""

from __future__ import annotations

import contextlib
import importlib.util
import multiprocessing
import os
import re
import signal
import sys
import threading
import types
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal, NamedTuple

from conductor_gym.graders.base import Grade, GraderError, GraderSetupError, register_grader
from conductor_gym.graders.extract import (
    boxes,
    clean_answer,
    last_anchored,
    last_boxed,
    strip_reasoning,
    superseding_anchor,
)

__all__ = [
    "ANTLR_PATH_ENV",
    "ANTLR_RUNTIME",
    "MAX_ANSWER_CHARS",
    "MAX_RESPONSE_CHARS",
    "PARSE_TIMEOUT_S",
    "VERIFY_TIMEOUT_S",
    "WORKER_TIMEOUT_S",
    "MathCheck",
    "Mode",
    "ReferenceParseError",
    "check_antlr_runtime",
    "grade_math",
    "math_equal",
    "normalize_latex",
    "shutdown_worker",
    "verify_answer",
]

MAX_RESPONSE_CHARS = 20_000
"""How much of the end of a response math-verify's own extraction (rule 3) may see."""

MAX_ANSWER_CHARS = 2_000
"""Longest extracted answer handed to math-verify; a longer one is graded wrong."""

PARSE_TIMEOUT_S = 5
"""math-verify's timeout for parsing one text (whole seconds: it uses ``signal.alarm``)."""

VERIFY_TIMEOUT_S = 5
"""math-verify's timeout for one gold/answer comparison (whole seconds)."""

WORKER_TIMEOUT_S = 30.0
"""Wall-clock limit, in the parent, on one check run in the worker process."""

WORKER_START_TIMEOUT_S = 120.0
"""Wall-clock limit on starting the worker process and importing math-verify in it."""

ANTLR_RUNTIME = "4.13.2"
"""The ``antlr4-python3-runtime`` version math-verify's verdicts are defined with (the one
whose generated LaTeX parser ``latex2sympy2_extended`` keeps up to date)."""

ANTLR_PATH_ENV = "CONDUCTOR_GYM_MATH_ANTLR"
"""Environment variable: a folder holding antlr4-python3-runtime :data:`ANTLR_RUNTIME`,
used by the worker process when this interpreter has another runtime (a verl node)."""

_GROUPED_NUMBER = re.compile(r"[+-]?\d{1,3}(?:(?:\s|\\,|\\ |~|\\;)+\d{3})+(?:\.\d+)?")
_GROUP_SEPARATOR = re.compile(r"\s|\\,|\\ |~|\\;")
_TEXT_COMMAND = re.compile(r"\\(?:text|textbf|mathrm|mbox)\s*\{([^{}]*)\}")
_LATEX_SPACING = re.compile(r"\\left|\\right|\\[!,;: ]|\$|\s+")
_INSTALL_HINT = "math-verify is not installed; install it with `pip install math-verify`"
_DELIMITERS = ("$", "\\(", "\\[")

Mode = Literal["answer", "text"]
"""``"answer"``: a bare answer, parsed as ``\\boxed{answer}``; ``"text"``: prose, from
which math-verify extracts the answer itself."""


@dataclass(frozen=True)
class MathCheck:
    """The outcome of one equivalence check.

    Attributes:
        equivalent: Whether math-verify judged the candidate equal to the reference.
        extracted: The candidate as math-verify read it (its normalised LaTeX string, or the
            parsed expression), or ``None`` when it found nothing to read.
    """

    equivalent: bool
    extracted: str | None


class ReferenceParseError(GraderError):
    """math-verify cannot read the reference at all (a broken task for ``"math"``; the
    ``"freeform"`` grader takes it to mean the reference is not mathematics)."""


class _Outcome(NamedTuple):
    """What :func:`_check` reports; plain data, so it crosses the process boundary."""

    status: Literal["ok", "no-gold", "timeout", "error", "missing"]
    equivalent: bool
    extracted: str | None
    detail: str


# -- the check itself (runs in the main thread of this process or of the worker) ----------


def _math_verify() -> Any:
    """The ``math_verify`` package, imported on first use (it imports sympy)."""
    import math_verify  # type: ignore[import-untyped]
    import math_verify.errors  # type: ignore[import-untyped]

    return math_verify


@lru_cache(maxsize=4096)
def _parse_gold(reference: str, parse_timeout: int) -> tuple[Any, ...]:
    """The reference parsed by math-verify (cached: a reference is graded many times)."""
    mv = _math_verify()
    parsed = mv.parse(
        "\\boxed{" + reference + "}",
        extraction_config=[mv.LatexExtractionConfig()],
        parsing_timeout=parse_timeout,
        raise_on_error=True,
    )
    return tuple(parsed)


def _finite(parsed: tuple[Any, ...]) -> bool:
    """Whether no parsed value is undefined (``zoo``, ``nan``): ``12:00`` parses as 12/0."""
    import sympy  # type: ignore[import-untyped]

    return not any(
        isinstance(item, sympy.Basic) and item.has(sympy.zoo, sympy.nan) for item in parsed
    )


def _parse_candidate(candidate: str, mode: Mode, parse_timeout: int) -> list[Any]:
    mv = _math_verify()
    if mode == "answer":
        text = "\\boxed{" + candidate + "}"
        configs: list[Any] = [mv.LatexExtractionConfig()]
    else:
        text = candidate[-MAX_RESPONSE_CHARS:]
        configs = [mv.LatexExtractionConfig(), mv.ExprExtractionConfig()]
    parsed: list[Any] = mv.parse(
        text, extraction_config=configs, parsing_timeout=parse_timeout, raise_on_error=True
    )
    return parsed


def _describe(parsed: list[Any]) -> str | None:
    """The string math-verify matched (its fallback entry), else the first parsed value."""
    for item in reversed(parsed):
        if isinstance(item, str) and item.strip():
            return item.strip()
    return str(parsed[0]) if parsed else None


def _check(
    reference: str, candidate: str, mode: Mode, parse_timeout: int, verify_timeout: int
) -> _Outcome:
    """Parse and compare with math-verify; every failure is reported, never raised.

    Must run in the main thread of its process (math-verify's timeouts use SIGALRM).
    """
    try:
        mv = _math_verify()
    except ImportError:
        return _Outcome("missing", False, None, _INSTALL_HINT)
    timeout_exc: type[BaseException] = mv.errors.TimeoutException
    try:
        gold = _parse_gold(reference, parse_timeout)
        if not gold or not _finite(gold):
            return _Outcome("no-gold", False, None, f"math-verify cannot read {reference!r}")
        parsed = _parse_candidate(candidate, mode, parse_timeout)
        extracted = _describe(parsed)
        if not parsed:
            return _Outcome("ok", False, None, "math-verify found no answer")
        equivalent = bool(
            mv.verify(list(gold), parsed, timeout_seconds=verify_timeout, raise_on_error=True)
        )
        return _Outcome("ok", equivalent, extracted, "")
    except timeout_exc as exc:
        return _Outcome("timeout", False, None, f"math-verify timed out: {exc}")
    except Exception as exc:
        return _Outcome("error", False, None, f"math-verify failed: {type(exc).__name__}: {exc}")


# -- the ANTLR runtime --------------------------------------------------------------------


def _antlr_version() -> str | None:
    """The installed ``antlr4-python3-runtime`` version, found as ``latex2sympy2_extended``
    finds it to pick its parser (package metadata, first match on ``sys.path``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("antlr4-python3-runtime")
    except PackageNotFoundError:
        return None


@lru_cache(maxsize=1)
def _interpreter_runtime() -> tuple[bool, str | None]:
    """Whether math-verify is installed here, and this interpreter's ANTLR runtime version
    (looked up once: an install does not change under a running process)."""
    return importlib.util.find_spec("math_verify") is not None, _antlr_version()


def _setup_error(problem: str) -> GraderSetupError:
    return GraderSetupError(
        f"math: {problem}; math-verify reads LaTeX as defined only with "
        f"antlr4-python3-runtime {ANTLR_RUNTIME} (latex2sympy2_extended's parsers for other "
        "runtimes are built from an older grammar: verdicts such as '\\boxed{10\\%}' "
        f"equals '10' change silently). Fix: install antlr4-python3-runtime=={ANTLR_RUNTIME}; "
        "or, where another package needs this runtime (verl's Hydra and OmegaConf need 4.9), "
        f"run `pip install --no-deps --target DIR antlr4-python3-runtime=={ANTLR_RUNTIME}` and "
        f"set {ANTLR_PATH_ENV}=DIR, so that math-verify runs in a worker process on that runtime"
    )


def check_antlr_runtime() -> str | None:
    """Decide where math-verify may run so that its verdicts are those of a
    :data:`ANTLR_RUNTIME` install (see the module docstring).

    Returns ``None`` when it runs in this interpreter (its runtime is
    :data:`ANTLR_RUNTIME`, or math-verify is not installed, which the first check reports),
    or the absolute folder named by :data:`ANTLR_PATH_ENV` that the worker process puts
    first on its path. Raises :class:`~conductor_gym.graders.base.GraderSetupError` when the
    runtime is another and the variable is unset or names no folder.
    """
    has_math_verify, installed = _interpreter_runtime()
    if not has_math_verify or installed == ANTLR_RUNTIME:
        return None
    shown = "not installed" if installed is None else installed
    folder = os.environ.get(ANTLR_PATH_ENV, "").strip()
    if not folder:
        raise _setup_error(
            f"the installed antlr4-python3-runtime is {shown} and {ANTLR_PATH_ENV} is unset"
        )
    if not os.path.isdir(folder):
        raise _setup_error(
            f"the installed antlr4-python3-runtime is {shown} and {ANTLR_PATH_ENV}={folder!r} "
            "is not a folder"
        )
    return os.path.abspath(folder)


# -- the worker process (off the main thread, or on a side ANTLR runtime) -----------------

_pool_lock = threading.Lock()
_pool: ProcessPoolExecutor | None = None
_pool_pid: int | None = None


def _worker_init(antlr_folder: str | None) -> None:
    """Run first in the new worker: put the side ANTLR runtime first on its path."""
    if antlr_folder is not None:
        sys.path.insert(0, antlr_folder)


def _worker_start() -> tuple[int, str | None, str | None]:
    """Run in the new worker: import math-verify once; return the worker's pid (``-1``
    when math-verify is missing), its ANTLR runtime version and the folder it came from."""
    runtime = _antlr_version()
    try:
        _math_verify()
    except ImportError:
        return -1, runtime, None
    antlr4 = sys.modules.get("antlr4")
    origin = getattr(antlr4, "__file__", None)
    where = os.path.dirname(os.path.dirname(origin)) if origin else None
    return os.getpid(), runtime, where


def _discard_pool(kill: bool) -> None:
    """Forget the worker (killing its process first when ``kill``); caller holds the lock."""
    global _pool, _pool_pid
    pool, pid = _pool, _pool_pid
    _pool, _pool_pid = None, None
    if kill and pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


@contextlib.contextmanager
def _main_module_hidden() -> Iterator[None]:
    """Spawn children without re-running the caller's ``__main__`` in them.

    A ``spawn`` child normally re-imports the parent's main script (as ``__mp_main__``):
    an unguarded script would run again, and a training script would load its heavy
    imports into the grader's worker. The worker needs nothing from ``__main__``, so while
    it is started ``sys.modules["__main__"]`` is briefly a bare module with no file,
    which :mod:`multiprocessing` then does not ask the child to import.
    """
    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        if main is not None:
            sys.modules["__main__"] = main
        else:
            del sys.modules["__main__"]


def _ensure_pool(antlr_folder: str | None) -> ProcessPoolExecutor:
    """The worker pool, started on first use (with ``antlr_folder`` first on the worker's
    path when given, see :func:`check_antlr_runtime`); caller holds the lock."""
    global _pool, _pool_pid
    if _pool is not None:
        return _pool
    pool = ProcessPoolExecutor(
        max_workers=1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_worker_init,
        initargs=(antlr_folder,),
    )
    try:
        with _main_module_hidden():  # the worker process is spawned inside ``submit``
            started = pool.submit(_worker_start)
        pid, runtime, where = started.result(timeout=WORKER_START_TIMEOUT_S)
    except Exception as exc:
        pool.shutdown(wait=False, cancel_futures=True)
        raise GraderError(f"math: could not start the math-verify worker: {exc!r}") from exc
    if antlr_folder is not None and (
        runtime != ANTLR_RUNTIME or (pid >= 0 and where != antlr_folder)
    ):
        pool.shutdown(wait=False, cancel_futures=True)
        found = f"antlr4-python3-runtime {runtime or 'none'}"
        if runtime == ANTLR_RUNTIME:
            found += f" loaded from {where!r} instead"
        raise _setup_error(f"{ANTLR_PATH_ENV}={antlr_folder!r} gave the worker {found}")
    if pid < 0:
        pool.shutdown(wait=False, cancel_futures=True)
        raise GraderError(f"math: {_INSTALL_HINT}")
    _pool, _pool_pid = pool, pid
    return pool


def _check_in_worker(
    antlr_folder: str | None,
    reference: str,
    candidate: str,
    mode: Mode,
    parse_timeout: int,
    verify_timeout: int,
) -> _Outcome:
    with _pool_lock:
        pool = _ensure_pool(antlr_folder)
        future: Future[_Outcome] = pool.submit(
            _check, reference, candidate, mode, parse_timeout, verify_timeout
        )
        try:
            return future.result(timeout=WORKER_TIMEOUT_S)
        except TimeoutError:
            _discard_pool(kill=True)
            raise GraderError(
                f"math: math-verify did not finish within {WORKER_TIMEOUT_S:g} s "
                "(worker process killed)"
            ) from None
        except BrokenProcessPool as exc:
            _discard_pool(kill=True)
            raise GraderError(f"math: the math-verify worker process died: {exc}") from exc


def shutdown_worker() -> None:
    """Stop the math-verify worker process, if one is running (a later check restarts it)."""
    with _pool_lock:
        _discard_pool(kill=False)


# -- public helpers -----------------------------------------------------------------------


def _run_check(reference: str, candidate: str, mode: Mode) -> _Outcome:
    args = (reference, candidate, mode, PARSE_TIMEOUT_S, VERIFY_TIMEOUT_S)
    antlr_folder = check_antlr_runtime()
    if antlr_folder is None and threading.current_thread() is threading.main_thread():
        outcome = _check(*args)
    else:
        outcome = _check_in_worker(antlr_folder, *args)
    if outcome.status == "ok":
        return outcome
    if outcome.status == "no-gold":
        raise ReferenceParseError(f"math: math-verify cannot parse the reference {reference!r}")
    raise GraderError(f"math: {outcome.detail}")


def verify_answer(reference: str, candidate: str, *, mode: Mode = "answer") -> MathCheck:
    r"""Whether ``candidate`` is mathematically equal to ``reference``, by math-verify.

    ``reference`` is a bare LaTeX answer. With ``mode="answer"`` (the default)
    ``candidate`` is a bare answer too (the content of a box: ``\frac{1}{2}``, ``0.5``);
    with ``mode="text"`` it is prose, and math-verify extracts the answer itself (from the
    last :data:`MAX_RESPONSE_CHARS` characters). An empty candidate, or a bare answer
    longer than :data:`MAX_ANSWER_CHARS`, is not equivalent (math-verify is not called).

    Safe to call from any thread (see the module docstring). Raises
    :class:`~conductor_gym.graders.base.GraderError` when math-verify is missing, times
    out or crashes, its subclass :class:`ReferenceParseError` when it cannot read the
    reference, and :class:`~conductor_gym.graders.base.GraderSetupError` when its ANTLR
    runtime would change verdicts (:func:`check_antlr_runtime`).
    """
    if not candidate.strip() or (mode == "answer" and len(candidate) > MAX_ANSWER_CHARS):
        return MathCheck(False, None)
    outcome = _run_check(reference, candidate, mode)
    return MathCheck(outcome.equivalent, outcome.extracted)


def math_equal(reference: str, answer: str) -> bool:
    """Whether the bare ``answer`` is mathematically equal to ``reference`` (see
    :func:`verify_answer`)."""
    return verify_answer(reference, answer).equivalent


# -- the grader ---------------------------------------------------------------------------


def _verdict(rule: str, shown: str, check: MathCheck, reference: str) -> Grade:
    if check.equivalent:
        return Grade(True, shown, f"{rule}: {shown!r} is equivalent to the reference {reference!r}")
    if check.extracted is None:
        return Grade(False, shown, f"{rule}: math-verify could not read {shown!r} as an answer")
    return Grade(
        False, shown, f"{rule}: {shown!r} is not equivalent to the reference {reference!r}"
    )


def normalize_latex(answer: str) -> str:
    r"""The text form two answers are compared in when math-verify cannot read the
        reference (hendrycks MATH's normalisation): decoration (:func:`clean_answer`),
        ``	ext{}``-style wrappers, ``\left``/``
    ight``, LaTeX spacing, ``$`` and whitespace
        removed, ``\dfrac``/``	frac`` read as ``rac``, degrees dropped."""
    text = clean_answer(answer)
    text = _TEXT_COMMAND.sub(r"\1", text)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    text = text.replace("^\\circ", "").replace("^{\\circ}", "")
    return _LATEX_SPACING.sub("", text)


def _ungroup(answer: str) -> str:
    """``1 000`` -> ``1000``: a bare number grouped by spaces is one number."""
    if _GROUPED_NUMBER.fullmatch(answer.strip()):
        return _GROUP_SEPARATOR.sub("", answer.strip())
    return answer


def _by_text(rule: str, shown: str, reference: str) -> Grade:
    """The verdict when math-verify cannot read the reference: normalised text equality."""
    same = normalize_latex(shown) == normalize_latex(reference)
    relation = "matches" if same else "does not match"
    return Grade(
        same,
        shown,
        f"{rule}: {shown!r} {relation} the reference {reference!r} as text "
        "(math-verify cannot read the reference)",
    )


def _outer_boxes(response: str) -> list[tuple[int, str]]:
    """``(end, content)`` of each box not inside another; a box holding boxes reads as its
    last inner one."""
    found: list[tuple[int, str]] = []
    reach = -1
    for _, end, content in boxes(response):
        if end <= reach:
            continue
        reach = end
        inner = last_boxed(content)
        found.append((end, (inner if inner is not None else content).strip()))
    return found


def _grade_boxes(contents: list[str], reference: str) -> Grade:
    distinct = list(dict.fromkeys(contents))
    if len(distinct) == 1:
        return _grade_answer("boxed", distinct[0], reference)
    merged = ", ".join(distinct)
    verdict = _grade_answer("boxed", merged, reference)
    if verdict.correct or any(not content for content in distinct):
        return verdict
    if all(_grade_answer("boxed", content, reference).correct for content in distinct):
        return Grade(True, merged, f"boxed: every box equals the reference {reference!r}")
    return verdict


def _grade_answer(rule: str, shown: str, reference: str) -> Grade:
    """Grade one bare answer (a box's content, an anchored value)."""
    if not shown:
        return Grade(False, "", f"{rule}: the answer is empty")
    if len(shown) > MAX_ANSWER_CHARS:
        return Grade(False, shown[:80] + "...", f"{rule}: answer over {MAX_ANSWER_CHARS} chars")
    mode: Mode = "answer"
    unescaped = shown.replace("\\$", "")
    if rule == "anchored" and any(delimiter in unescaped for delimiter in _DELIMITERS):
        mode = "text"
    try:
        check = verify_answer(_ungroup(reference), _ungroup(shown), mode=mode)
    except ReferenceParseError:
        return _by_text(rule, shown, reference)
    if mode == "text":
        shown = check.extracted or shown
    return _verdict(rule, shown, check, reference)


@register_grader("math")
def grade_math(response: str, reference: str, metadata: Mapping[str, Any]) -> Grade:
    """Grade ``response`` as correct when its final answer equals ``reference`` by math-verify.

    The answer is found by the rules in the module docstring (``boxed``, ``anchored``,
    ``math-verify``); ``metadata`` is not used.
    """
    reference = reference.strip()
    if not reference:
        raise GraderError("math: the reference is empty")
    response = strip_reasoning(response)
    outer = _outer_boxes(response)
    if outer:
        later = superseding_anchor(response, outer[-1][0])
        if later is None:
            if not outer[-1][1]:
                return Grade(False, "", "boxed: the box is empty")
            return _grade_boxes([content for _, content in outer], reference)
        return _grade_answer("anchored", later, reference)
    anchored = last_anchored(response)
    if anchored is not None:
        return _grade_answer("anchored", anchored, reference)
    try:
        check = verify_answer(reference, response, mode="text")
    except ReferenceParseError:
        return Grade(False, None, "math-verify: cannot read the reference, and no answer found")
    if check.extracted is None:
        return Grade(False, None, "math-verify: no answer found in the response")
    return _verdict("math-verify", check.extracted, check, reference)
