"""The TRL recipes, one module each, in CleanRL's shape: an ``Args`` dataclass (every
setting declared once, with its default and help; the flags are generated from it) and a
``run(args)`` that reads top to bottom.

* :mod:`.paper`: the Conductor paper's GRPO recipe (app. A) on GPUs;
* :mod:`.paper_adapt`: ``paper`` on the paper's randomised pool (adaptive selection: k of
  the ``sim-paper`` workers per question, shuffled ids, named in the conductor prompt);
* :mod:`.cpu_demo`: one-step routing among three workers on two CPU cores;
* :mod:`.cpu_orchestrate`: multi-step workflows on two CPU cores (plan-prior search,
  warm start, GRPO), ``docs/training-cpu.md``;
* :mod:`.cpu_adapt`: the paper's randomised pool (k of 7, shuffled ids, named in the
  chat), a format-only warm start and GRPO doing the learning;
* :mod:`.common`: the settings they share, the run's result and the stages of a run.

``python -m conductor_gym.trainers.trl.train --recipe NAME`` picks one
(:data:`conductor_gym.trainers.trl.train.RECIPES`). Importing a recipe imports neither
torch, transformers nor TRL.
"""
