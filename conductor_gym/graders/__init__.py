"""Graders: decide whether a response's final answer matches a task's reference.

A grader is a function ``grader(response, reference, metadata) -> Grade`` registered
under a name with :func:`register_grader`; a :class:`~conductor_gym.tasks.Task` names
its grader in ``task.grader``. A wrong, missing or malformed answer is a ``Grade`` with
``correct=False`` and a ``reason``; only a failure of the grader itself (a malformed
reference, missing metadata, a bug) is an error, and :func:`grade` reports any such
exception as :class:`GraderError`, so an infrastructure fault never reads as a wrong
answer. The one exception raised as it is, :class:`GraderSetupError`, says that the
install itself cannot grade as defined (math-verify on an ANTLR runtime whose LaTeX
parser differs from the one it is verified with).

The built-in graders, each in its own module (this package imports none of them: the
registry imports every module here the first time a grader is looked up, and each
module registers its own, so a new grader module needs no line here):

* ``"numeric"`` (:mod:`~conductor_gym.graders.numeric`): exact rational comparison of the
  final number;
* ``"choice"`` (:mod:`~conductor_gym.graders.choice`): the chosen option letter;
* ``"countdown"`` (:mod:`~conductor_gym.graders.countdown`): an arithmetic expression over
  given numbers that must reach a target;
* ``"math"`` (:mod:`~conductor_gym.graders.math`): mathematical equivalence by math-verify
  (``pip install math-verify``; imported on first use, not by this package);
* ``"freeform"`` (:mod:`~conductor_gym.graders.freeform`): option letter, math-verify,
  numeric tolerance, then normalised string match, for short free-form answers
  (``"freeform-judge"``, an LLM judge, is registered only on request);
* ``"code"`` (:mod:`~conductor_gym.graders.code`): the response's program passes the
  task's tests (stdin/stdout, function calls or ``unittest``) in
  :mod:`conductor_gym.sandbox` (imported when a program is graded).

Answer extraction shared by them lives in :mod:`~conductor_gym.graders.extract`.
"""

from __future__ import annotations

from conductor_gym.graders.base import (
    Grade,
    GraderError,
    GraderFn,
    GraderSetupError,
    get_grader,
    grade,
    grader_blocks,
    register_grader,
    registered_graders,
)

__all__ = [
    "Grade",
    "GraderError",
    "GraderFn",
    "GraderSetupError",
    "get_grader",
    "grade",
    "grader_blocks",
    "register_grader",
    "registered_graders",
]
