"""The ``cutplane`` command: an explicit table of subcommands, one module per command.

- :mod:`problems.cli.main`: the entry point (:func:`~problems.cli.main.main`), the parser and
  the exit statuses;
- :mod:`problems.cli.commands`: :data:`~problems.cli.commands.COMMANDS`, the table of
  subcommands (``train``, ``predict``, ``evaluate``, ``demo``, ``compare``, ``dump``), each in its own
  module;
- :mod:`problems.cli.tasks`: :data:`~problems.cli.tasks.TASKS`, the table of training tasks,
  each defined in its task subpackage (``problems.linear.command``,
  ``problems.sequence.command``, ``problems.parsing.command``).

Nothing registers itself on import; the shared pieces (argument types, solver options,
reports) are in :mod:`problems.command_options`, which the tasks import.
"""
