"""Graders: decide whether a response's final answer matches a task's reference.

A grader is a function ``grader(response, reference, metadata) -> Grade`` registered
under a name with :func:`register_grader`; a :class:`~conductor_gym.tasks.Task` names
its grader in ``task.grader``. A wrong, missing or malformed answer is a ``Grade`` with
``correct=False`` and a ``reason``; only a failure of the grader itself (a malformed
reference, missing metadata, a bug) is an error, and :func:`grade` reports any such
exception as :class:`GraderError`, so an infrastructure fault never reads as a wrong
answer.

Importing this package registers the built-in graders (stdlib only):

* ``"numeric"`` (:mod:`~conductor_gym.graders.numeric`): exact rational comparison of the
  final number;
* ``"choice"`` (:mod:`~conductor_gym.graders.choice`): the chosen option letter;
* ``"countdown"`` (:mod:`~conductor_gym.graders.countdown`): an arithmetic expression over
  given numbers that must reach a target.

Answer extraction shared by them lives in :mod:`~conductor_gym.graders.extract`.
"""

from __future__ import annotations

from conductor_gym.graders import choice, countdown, numeric
from conductor_gym.graders.base import (
    Grade,
    GraderError,
    GraderFn,
    get_grader,
    grade,
    register_grader,
    registered_graders,
)

__all__ = [
    "Grade",
    "GraderError",
    "GraderFn",
    "choice",
    "countdown",
    "get_grader",
    "grade",
    "numeric",
    "register_grader",
    "registered_graders",
]
