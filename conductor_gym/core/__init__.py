"""The env core: :class:`~conductor_gym.core.env.ConductorEnv` and its vector form, the
episode state, plan execution, prompts, rewards, budgets, spaces and rendering.

Modules here import the parts below them (``plan``, ``workers``, ``pool``, ``tasks``,
``graders``, ``sandbox``) and never the evaluation harness, the CLI, ``agents`` or
``trainers``. Import from :mod:`conductor_gym` for the public API.
"""
