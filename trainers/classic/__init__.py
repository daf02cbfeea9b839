"""Classic RL baselines on the compact plan action (:class:`~conductor_gym.CompactPlanAction`).

* :mod:`.ppo_compact`: a CleanRL-style single-file PPO (``python -m
  conductor_gym.trainers.classic.ppo_compact --help``);
* :mod:`.compact_setup`: what the baselines share: the env and its train / fresh episodes,
  the observation a planner may see, the best fixed compact plan found on training
  episodes, and the paired evaluation on fresh tasks beside ``best-single``.

Importing this package imports no torch; :mod:`.ppo_compact` loads it when it runs.
"""
