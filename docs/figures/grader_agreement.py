"""The README's grader-agreement tables (block ``grader-agreement``): how often each grader
and each peer convention agrees with the verdicts of the corpus in
:mod:`conductor_gym.graders.peer_cases`, and how many MATH-style references the ``math``
grader reads in each common final-answer format.

``python -m conductor_gym.graders.agreement`` prints the same tables, with the code
layouts table and (``--cases``) every disagreeing case.
"""

from __future__ import annotations

from conductor_gym.graders.agreement import readme_block

COMMAND = "python -m conductor_gym.graders.agreement"


def agreement_block() -> str:
    """The block's exact text."""
    return readme_block()
