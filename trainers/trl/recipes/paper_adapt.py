"""The ``paper-adapt`` recipe: the ``paper`` recipe on the paper's randomised pool, on GPUs.

::

    python -m conductor_gym.trainers.trl.train --recipe paper-adapt \\
        --model Qwen/Qwen2.5-7B-Instruct --use-vllm --output-dir runs/paper-adapt

The paper's "adaptive selection" fine-tuning (§3.2): every question is played by a
random ``k``-of-``n`` subset of the pool under shuffled ``Model`` ids, so the conductor
has to choose among whichever workers it is given. The paper gives no ``k``; this
recipe takes ``cpu-adapt``'s (:data:`~.cpu_adapt.K`, 4 of the seven ``sim-paper``
workers). The GRPO settings and the stages of a run are the ``paper`` recipe's,
unchanged (:func:`~.paper.paper_config`, :func:`~.paper.run`); only the env differs
(:func:`adaptive_env`):

* ``pool="sim-paper"`` (simulator v3), ``k=4``, ``shuffle_workers=True``;
* the env's own conductor prompt (:data:`TEMPLATES`, the default templates) with the drawn
  workers named, ``Model 2: gpt-5``. The paper's prompt lists ids alone; under shuffled
  ids a ``Model i`` list carries no information about who ``Model i`` is, so a conductor
  trained on it can learn only the shapes of plans that pay on average, never whom to
  ask. Naming the workers makes the choice learnable, as ``cpu-adapt``'s chat does.

Any env flag still overrides these defaults (``--pool paper-constrained``, ``--k 3``,
``--no-shuffle-workers``, ``--templates '{...}'``, which replaces the templates as a
whole). A checkpoint trained here expects the named worker list: play it with the same
templates.

Status: not run on a GPU. The session that wrote this recipe had none, so neither the
smoke check (``python -m conductor_gym.trainers.trl.gpu_smoke --recipe paper-adapt``)
nor a full run has been made (``docs/training-gpu.md``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from conductor_gym.core.config import EnvConfig
from conductor_gym.core.prompts import DEFAULT_TEMPLATES, PromptTemplates

from . import common, paper
from .common import TrainResult
from .cpu_adapt import K

__all__ = [
    "POOL",
    "TEMPLATES",
    "WORKER_LIST_ITEM",
    "Args",
    "adaptive_env",
    "grpo_config",
    "resolve",
    "run",
]

POOL = "sim-paper"
"""The recipe's default pool: the paper's seven workers on the current simulator (v3)."""

WORKER_LIST_ITEM = "Model {id}: {name}"
"""One line of the conductor prompt's worker list: the drawn worker's id and name."""

TEMPLATES: PromptTemplates = dataclasses.replace(
    DEFAULT_TEMPLATES, worker_list_item=WORKER_LIST_ITEM
)
"""The env's default conductor prompt templates with the drawn workers named (every other
template, the few-shot examples included, unchanged)."""


def adaptive_env() -> EnvConfig:
    """The recipe's env: :data:`POOL`, ``k`` (:data:`~.cpu_adapt.K`) of its workers per
    episode under shuffled ids, listed by id and name (:data:`TEMPLATES`)."""
    return EnvConfig(pool=POOL, k=K, shuffle_workers=True, templates=TEMPLATES)


@dataclass
class Args(paper.Args):
    """The ``paper-adapt`` recipe's settings: ``paper``'s with the randomised pool."""

    recipe: ClassVar[str] = "paper-adapt"

    env: EnvConfig = dataclasses.field(default_factory=adaptive_env)


def resolve(args: Args) -> Args:
    """The settings the run uses (as given, like :func:`~.paper.resolve`); raises
    ``ConfigurationError`` for a ``cpu-orchestrate`` stage."""
    common.refuse_stages(args)
    return args


def grpo_config(args: common.Args, *, bf16: bool | None = None) -> Any:
    """The run's ``GRPOConfig``: the ``paper`` recipe's (:func:`~.paper.grpo_config`)."""
    return paper.grpo_config(args, bf16=bf16)


def run(args: Args) -> TrainResult:
    """Train, and evaluate when asked: :func:`~.paper.run` on the randomised pool."""
    return paper.run(args)
