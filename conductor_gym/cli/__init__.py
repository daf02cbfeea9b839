"""The ``conductor-gym`` command line: :func:`conductor_gym.cli.main.main` and one module
per command group (``evaluate``, ``pools``, ``tasks``, ``train``).

The CLI is the only layer of the library that may load ``agents`` and ``trainers``, and
it does so by name through the registries.
"""
