"""The subcommands of ``cutplane``: one explicit table, one module per command."""

from __future__ import annotations

from problems.cli import compare, demo, dump, evaluate, predict, train

__all__ = ["COMMANDS"]

#: Subcommand name -> :class:`~problems.command_options.Command` (in the order of ``--help``).
COMMANDS = {
    "train": train.COMMAND,
    "predict": predict.COMMAND,
    "demo": demo.COMMAND,
    "evaluate": evaluate.COMMAND,
    "compare": compare.COMMAND,
    "dump": dump.COMMAND,
}
