"""GRPO training of a conductor with TRL (``pip install "conductor-gym[trl]"``).

* :mod:`.reward`: ``ConductorReward``, an async TRL reward function that plays one
  single-turn episode per completion through :class:`conductor_gym.training.scoring.Scorer`;
* :mod:`.rollout`: ``ConductorRollout``, a TRL ``rollout_func`` for multi-turn
  (recursive) episodes, environment tokens masked out of the loss;
* :mod:`.recipes`: one module per recipe (``paper`` and ``paper_adapt`` on GPUs;
  ``cpu_orchestrate``: multi-step workflows on two CPU cores; the shorter ``cpu_demo``;
  ``cpu_adapt``), each a complete ``Args`` dataclass and a ``run(args)`` that reads on
  its own (no recipe imports another; ``recipes.common`` holds what they share), found
  by ``recipes.RECIPES``;
* :mod:`.settings`: a recipe's flags and checks, generated from its ``Args`` fields
  (by :func:`conductor_gym.core.flags.add_flag`, which makes ``EnvConfig``'s too);
* :mod:`.plan_prior`: a prior over plan structures and its cross-entropy search on the
  training episodes' rewards (``cpu-orchestrate``'s exploration stage);
* :mod:`.warm_start`: a supervised warm start on plans drawn from that prior;
* :mod:`.precision`: bf16 autocast or float32 for the CPU recipe, chosen by measuring;
* :mod:`.train`: ``main(argv)`` / ``train(args)``, the entry point that dispatches on
  ``--recipe`` (``python -m conductor_gym.trainers.trl.train``);
* :mod:`.policy`, :mod:`.data`, :mod:`.evaluate`: loading a trainable policy, the
  prompt dataset, greedy before/after evaluation beside baseline agents;
* :mod:`.report`: the training curves (PNG), the per-family plan table and a run's
  summary;
* :mod:`.gpu_smoke`: a minutes-long check of the paper recipe on a GPU with vLLM;
* :mod:`.confirm`: a trained ``cpu-orchestrate`` checkpoint on fresh offline tasks;
* :mod:`.ideal_learner`: GRPO on a tabular policy that reads family and worker names, a
  yardstick of how many episodes a recipe's learning problem takes.

Importing this package imports neither torch, transformers nor TRL; its modules load
them when a trainer is built.
"""
