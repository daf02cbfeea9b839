"""The TRL recipes, one module each, in CleanRL's shape: an ``Args`` dataclass declaring
every setting the recipe takes (its default and help; the flags are generated from it)
and a ``run(args)`` that reads top to bottom. No recipe imports another; what they share
is in :mod:`.common`.

* :mod:`.paper`: the Conductor paper's GRPO recipe (app. A) on GPUs;
* :mod:`.paper_adapt`: ``paper`` on the paper's randomised pool (adaptive selection: k of
  the ``sim-paper`` workers per question, shuffled ids, named in the conductor prompt);
* :mod:`.cpu_demo`: one-step routing among three workers on two CPU cores;
* :mod:`.cpu_orchestrate`: multi-step workflows on two CPU cores (plan-prior search,
  warm start, GRPO), ``docs/training-cpu.md``;
* :mod:`.cpu_adapt`: the paper's randomised pool (k of 7, shuffled ids, named in the
  chat), a format-only warm start and GRPO doing the learning;
* :mod:`.common`: the settings they share, the run's result and the stages of a run.

:data:`RECIPES` finds them: every module of this package but :mod:`.common` is a recipe,
named by its module name with ``-`` for ``_`` (``cpu_orchestrate``: ``--recipe
cpu-orchestrate``), its ``Args`` imported when it is first asked for. A new recipe is a
new module; nothing else lists it. ``python -m conductor_gym.trainers.trl.train --recipe
NAME`` picks one. Importing a recipe imports neither torch, transformers nor TRL.
"""

from __future__ import annotations

import pkgutil
from typing import TYPE_CHECKING

from conductor_gym.registry import Registry

if TYPE_CHECKING:
    from .common import Args

__all__ = ["RECIPES", "SHARED", "recipe_name"]

SHARED = frozenset({"common"})
"""The modules of this package that are not recipes: the parts the recipes share."""


def recipe_name(module: str) -> str:
    """The ``--recipe`` name of the recipe module ``module`` (``cpu_adapt``: ``cpu-adapt``)."""
    return module.replace("_", "-")


def _register_recipe_modules() -> None:
    for module in pkgutil.iter_modules(__path__):
        if module.name not in SHARED and not module.name.startswith("_"):
            RECIPES.register(recipe_name(module.name), f"{__name__}.{module.name}:Args")


RECIPES: Registry[type[Args]] = Registry("recipe", discover=_register_recipe_modules)
"""The recipes by name (``--recipe``): each one's ``Args`` class, in its module, found in
this package (module docstring)."""
