r"""Offline procedural task families: checkable questions generated from a seed.

Contract. A *family* is a frozen dataclass config (a :class:`TaskFamily`) with
``validate()``, which raises ``ValueError`` naming the offending field (it also runs on
construction), and ``generate(index, seed) -> Task``, a pure function of the config,
``seed`` and ``index``: the item is drawn from ``random.Random(f"{seed}:{family}:{index}")``
(string seeds hash the same in every process and Python version). Every task has

* ``id`` ``f"{family}-{index}"``, ``domain`` the family name, ``grader`` the family's grader;
* ``metadata["profile"]``: the paper benchmark whose difficulty profile the simulated
  workers use for it (the family stands in for that profile; it is *not* the benchmark);
* ``metadata["solution"]``: a correct final answer as a worker would box it (``"42"``,
  ``"B"``, ``"(25 - 5) * 4"``);
* ``metadata["distractors"]``: 3 to 5 distinct plausible wrong final answers (typical
  slips), each of which the task's grader marks wrong;
* grader inputs (``num_choices`` for choice questions, ``numbers`` for countdown) and
  ``kind``, the template the item came from.

Answers are computed by the generator itself, never by evaluating generated text.

==========================  =================  ===========  ===============================
family                      profile            grader       what it asks
==========================  =================  ===========  ===============================
``arithmetic``              ``math500``        numeric      multi-step integer expression
``multiple_choice``         ``mmlu``           choice       4-option computed facts
``countdown``               ``rlpr``           countdown    reach a target from 4 numbers
``program_trace``           ``livecodebench``  numeric      what a short program prints
``modular``                 ``aime25``         numeric      modular arithmetic, 0..999
``multiple_choice_hard``    ``gpqa-diamond``   choice       harder number-theory facts
``program_trace_hard``      ``bigcodebench``   numeric      nested loops and functions
==========================  =================  ===========  ===============================

:class:`ProceduralTasks` interleaves families into one finite, deterministic
:class:`~conductor_gym.tasks.base.TaskSource` and caches what it generates.

Layout: :mod:`.base` holds :class:`TaskFamily` and the helpers every family shares;
:mod:`.arithmetic` (``arithmetic``, ``modular``), :mod:`.choice` (``multiple_choice``,
``multiple_choice_hard``), :mod:`.countdown` and :mod:`.trace` (``program_trace``,
``program_trace_hard``) hold the families, over the helpers in :mod:`.expressions` and
:mod:`.number_theory`; :mod:`.source` holds :data:`FAMILIES` and
:class:`ProceduralTasks`. Every public name is re-exported here.
"""

from __future__ import annotations

from conductor_gym.tasks.procedural.arithmetic import ArithmeticConfig, ModularConfig
from conductor_gym.tasks.procedural.base import TaskFamily
from conductor_gym.tasks.procedural.choice import MultipleChoiceConfig, MultipleChoiceHardConfig
from conductor_gym.tasks.procedural.countdown import CountdownConfig
from conductor_gym.tasks.procedural.source import (
    FAMILIES,
    IN_DOMAIN_FAMILIES,
    OOD_FAMILIES,
    ProceduralTasks,
)
from conductor_gym.tasks.procedural.trace import ProgramTraceConfig, ProgramTraceHardConfig

__all__ = [
    "FAMILIES",
    "IN_DOMAIN_FAMILIES",
    "OOD_FAMILIES",
    "ArithmeticConfig",
    "CountdownConfig",
    "ModularConfig",
    "MultipleChoiceConfig",
    "MultipleChoiceHardConfig",
    "ProceduralTasks",
    "ProgramTraceConfig",
    "ProgramTraceHardConfig",
    "TaskFamily",
]
