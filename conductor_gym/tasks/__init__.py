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
environment runs, trains and tests offline.

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

Benchmark loaders (the paper's datasets; need ``pip install datasets``, read from the
Hugging Face Hub, its local cache or a local ``data_dir``). They are registered as lazy
factories: building one imports its module (stdlib only) and validates the options; the
data is read on first use (``len()``, indexing, iteration, ``fingerprint()``,
``load()``), and ``datasets`` is imported only then. Each task's ``domain`` and
``metadata["profile"]`` are the source name.

==================  ===================================  ========  ===================  =====
name                dataset                              grader    default split        size
==================  ===================================  ========  ===================  =====
``math500``         HuggingFaceH4/MATH-500               math      hash-split test      100
``mmlu``            cais/mmlu (all)                      choice    test                 14042
``gpqa-diamond``    Idavidrein/gpqa (gated, HF_TOKEN)    choice    gpqa_diamond         198
``aime25``          opencompass/AIME2025 (I and II)      math      test                 30
``rlpr``            openbmb/RLPR-Train-Dataset           freeform  hash-split test      15540
``livecodebench``   livecodebench/code_generation_lite   code      v6 (train:           175
                                                                   release_v1)
``bigcodebench``    bigcode/bigcodebench-hard            code      v0.1.4 (complete)    148
``paper-train``     the four in-domain training pools    mixed     240 per domain       960
``jsonl:<path>``    a local JSON Lines file              per line  file order           -
==================  ===================================  ========  ===================  =====

Options (keyword arguments of :func:`make_task_source`): ``split``/``subset``/
``version``/``part`` per loader, ``seed``, ``shuffle``, ``cache_dir``, ``data_dir``,
``data_files``, ``revision``, ``token``. Failures to get the data raise
:class:`TaskSourceError` with the fix.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial
from typing import Any

from conductor_gym.errors import ConfigurationError
from conductor_gym.registry import Registry
from conductor_gym.tasks.base import Task, TaskSource, fingerprint_tasks
from conductor_gym.tasks.errors import TaskSourceError
from conductor_gym.tasks.jsonl import JSONL_PREFIX, JsonlTasks
from conductor_gym.tasks.procedural import (
    FAMILIES,
    IN_DOMAIN_FAMILIES,
    OOD_FAMILIES,
    ProceduralTasks,
    TaskFamily,
)

__all__ = [
    "BENCHMARK_SOURCES",
    "DEFAULT_TASKS",
    "FAMILIES",
    "IN_DOMAIN_FAMILIES",
    "OOD_FAMILIES",
    "TASK_SOURCES",
    "JsonlTasks",
    "ProceduralTasks",
    "Task",
    "TaskFamily",
    "TaskSource",
    "TaskSourceError",
    "TaskSourceFactory",
    "fingerprint_tasks",
    "make_task_source",
    "register_task_source",
    "task_source_names",
]

DEFAULT_TASKS = "offline"
"""The task source every entry point uses when none is given (procedural, offline)."""

TaskSourceFactory = Callable[..., TaskSource]
"""Builds a task source from keyword arguments."""

TASK_SOURCES: Registry[TaskSourceFactory] = Registry(
    "task source", field="tasks", group="conductor_gym.tasks"
)
"""Task sources: name -> factory taking the source's options (or its import path)."""


def register_task_source(name: str, factory: str | TaskSourceFactory) -> None:
    """Register ``factory`` (or its ``"module:attr"`` path) under ``name``; a name taken by
    another factory raises :class:`~conductor_gym.errors.ConfigurationError`."""
    TASK_SOURCES.register(name, factory)


def make_task_source(name: str, **kwargs: Any) -> TaskSource:
    """Build the task source registered as ``name``, passing ``kwargs`` to its factory.

    ``"jsonl:<path>"`` builds a :class:`JsonlTasks` over ``<path>`` (``kwargs``: ``name``,
    ``seed``, ``shuffle``). Any other unknown name raises ``ValueError`` listing the
    registered names.
    """
    if name not in TASK_SOURCES and name.startswith(JSONL_PREFIX):
        path = name[len(JSONL_PREFIX) :]
        if not path:
            raise ConfigurationError(
                f"task source {name!r}: give a file after {JSONL_PREFIX!r}", field="tasks"
            )
        _check_options(name, JsonlTasks, kwargs)
        return JsonlTasks(path, **kwargs)
    if not isinstance(name, str) or name not in TASK_SOURCES:
        raise TASK_SOURCES.unknown(name, hint=f"(or {JSONL_PREFIX}<path to a .jsonl file>)")
    factory = TASK_SOURCES.get(name)
    _check_options(name, factory, kwargs)
    return factory(**kwargs)


def _check_options(name: str, factory: Callable[..., Any], options: dict[str, Any]) -> None:
    """Raise :class:`ConfigurationError` (field ``task_options``) naming an option the
    source's factory does not take, and the ones it does."""
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a callable without a signature: its own errors stand
        return
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return
    taken = [
        p.name for p in parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]
    if unknown := sorted(set(options) - set(taken)):
        raise ConfigurationError(
            f"task source {name!r} takes no option {unknown[0]!r}; its options: "
            f"{', '.join(taken) or 'none'}",
            field="task_options",
        )


def task_source_names() -> list[str]:
    """Every registered task source name, sorted."""
    return TASK_SOURCES.names()


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


BENCHMARK_SOURCES: dict[str, str] = {
    "math500": "conductor_gym.tasks.math500:Math500Tasks",
    "mmlu": "conductor_gym.tasks.mmlu:MmluTasks",
    "gpqa-diamond": "conductor_gym.tasks.gpqa:GpqaTasks",
    "aime25": "conductor_gym.tasks.aime:Aime25Tasks",
    "rlpr": "conductor_gym.tasks.rlpr:RlprTasks",
    "livecodebench": "conductor_gym.tasks.livecodebench:LiveCodeBenchTasks",
    "bigcodebench": "conductor_gym.tasks.bigcodebench:BigCodeBenchTasks",
    "paper-train": "conductor_gym.tasks.mix:paper_train_mix",
}
"""Registry name -> import path of the benchmark loaders, imported on first use."""

for _name, _path in BENCHMARK_SOURCES.items():
    register_task_source(_name, _path)
del _name, _path
