"""Plug-in trainers, shipped as ``conductor_gym.trainers``: OpenRLHF (distributed GRPO
on Ray) and TRL (one node). Both score completions through
:mod:`conductor_gym.training.scoring`, so the env, rewards and GRPO grouping are the same."""
