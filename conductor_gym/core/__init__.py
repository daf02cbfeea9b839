"""The env core: :class:`~conductor_gym.core.env.ConductorEnv` and its vector form, the
one configuration (:mod:`.config`, :class:`~conductor_gym.core.config.EnvConfig`), the
episode state, plan execution, prompts, rewards, spaces and rendering.

Modules here import the parts below them (``sim``, ``pool``, ``workers``, ``plan``,
``tasks``, ``graders``, ``sandbox``) and never the evaluation harness, the CLI, ``agents`` or
``trainers``. Import from :mod:`conductor_gym` for the public API.
"""
