"""Task sources and their registry.

A task source is a finite, indexable, deterministic collection of
:class:`~conductor_gym.tasks.base.Task` (see :class:`TaskSource`). Sources are built by
name with :func:`make_task_source`; :func:`register_task_source` adds a name.

Built-in sources (offline, stdlib only, generated on demand):

=============================  ======  =====================================================
name                           size    families (seed 0)
=============================  ======  =====================================================
``"offline"``                  2000    arithmetic, multiple_choice, countdown, program_trace
``"offline-ood"``              1500    modular, multiple_choice_hard, program_trace_hard
``"offline/<family>"``         1000    one family
=============================  ======  =====================================================

Keyword arguments to :func:`make_task_source` override ``size``, ``seed`` and ``name``
(``make_task_source("offline", size=200, seed=3)``).

The procedural families stand in for the Conductor paper's benchmarks by *difficulty
profile for the simulated workers*: each task's ``metadata["profile"]`` names the paper
benchmark whose single-model accuracies the simulated pool uses on it. They are not
those benchmarks and say nothing about real-model accuracy on them; they exist so the
environment runs, trains and tests offline until real dataset loaders are added.

==========================  =================================  =========================
family                      stands in for (profile)            grader
==========================  =================================  =========================
``arithmetic``              MATH500 (``math500``)              ``numeric``
``multiple_choice``         MMLU (``mmlu``)                    ``choice``
``countdown``               RLPR (``rlpr``)                    ``countdown``
``program_trace``           LiveCodeBench (``livecodebench``)  ``numeric``
``modular``                 AIME25 (``aime25``), unseen        ``numeric``
``multiple_choice_hard``    GPQA-Diamond (``gpqa-diamond``),   ``choice``
                            unseen
``program_trace_hard``      BigCodeBench (``bigcodebench``),   ``numeric``
                            unseen
==========================  =================================  =========================
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from conductor_gym.tasks.base import Task, TaskSource, fingerprint_tasks
from conductor_gym.tasks.procedural import (
    FAMILIES,
    IN_DOMAIN_FAMILIES,
    OOD_FAMILIES,
    ProceduralTasks,
    TaskFamily,
)

__all__ = [
    "FAMILIES",
    "IN_DOMAIN_FAMILIES",
    "OOD_FAMILIES",
    "ProceduralTasks",
    "Task",
    "TaskFamily",
    "TaskSource",
    "TaskSourceFactory",
    "fingerprint_tasks",
    "make_task_source",
    "register_task_source",
    "task_source_names",
]

TaskSourceFactory = Callable[..., TaskSource]
"""Builds a task source from keyword arguments."""

_SOURCES: dict[str, TaskSourceFactory] = {}


def register_task_source(name: str, factory: TaskSourceFactory) -> None:
    """Register ``factory`` under ``name``; a name already taken raises ``ValueError``."""
    if name in _SOURCES and _SOURCES[name] is not factory:
        raise ValueError(f"task source {name!r} is already registered")
    _SOURCES[name] = factory


def make_task_source(name: str, **kwargs: Any) -> TaskSource:
    """Build the task source registered as ``name``, passing ``kwargs`` to its factory.

    An unknown name raises ``ValueError`` listing the registered names.
    """
    try:
        factory = _SOURCES[name]
    except KeyError:
        raise ValueError(
            f"unknown task source {name!r}; registered: {task_source_names()}"
        ) from None
    return factory(**kwargs)


def task_source_names() -> list[str]:
    """Every registered task source name, sorted."""
    return sorted(_SOURCES)


register_task_source(
    "offline", partial(ProceduralTasks, IN_DOMAIN_FAMILIES, size=2000, seed=0, name="offline")
)
register_task_source(
    "offline-ood", partial(ProceduralTasks, OOD_FAMILIES, size=1500, seed=0, name="offline-ood")
)
for _family in FAMILIES:
    register_task_source(
        f"offline/{_family}",
        partial(ProceduralTasks, (_family,), size=1000, seed=0, name=f"offline/{_family}"),
    )
del _family
