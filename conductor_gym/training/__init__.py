"""What every trainer adapter calls: scoring completions on the env
(:mod:`.scoring`: :class:`~conductor_gym.training.scoring.Scorer`,
:func:`~conductor_gym.training.scoring.score_completions`), the conductor prompt as chat
turns (:mod:`.chat_prompt`) and training-data preparation (:mod:`.prepare`).

The adapters themselves (TRL, OpenRLHF, verl, verifiers) live in the top-level
``trainers/`` folder (``conductor_gym.trainers``) and import only this package and the
public API.
"""
