"""The ``conductor-gym`` command line: :func:`conductor_gym.cli.main.main` and one module
per command, each a :class:`~conductor_gym.cli.command.Command` (``name``, ``help``,
``register``, ``run``) listed once in :data:`conductor_gym.cli.commands.COMMANDS`.

The CLI is the only layer of the library that may load ``agents`` and ``trainers``, and
it does so by name through the registries.
"""
