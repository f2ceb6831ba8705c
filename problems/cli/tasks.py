"""The training tasks of ``cutplane train --task NAME``: one explicit table.

Each task's CLI piece lives in its task subpackage (a :class:`~problems.command_options.Task`
record with its train / predict / evaluate functions); this table lists them. ``predict`` and
``evaluate`` dispatch on the task stored in the model file. Adding a task: write its record
beside its estimator and add one line here.
"""

from __future__ import annotations

from problems.linear.command import BINARY, MULTICLASS
from problems.linear.rank_command import RANK
from problems.parsing.command import PARSE
from problems.sequence.command import SEGMENT, SEQUENCE

__all__ = ["TASKS"]

#: Task name -> :class:`~problems.command_options.Task`.
TASKS = {
    "binary": BINARY,
    "multiclass": MULTICLASS,
    "rank": RANK,
    "sequence": SEQUENCE,
    "segment": SEGMENT,
    "parse": PARSE,
}
