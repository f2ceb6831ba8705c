"""``cutplane evaluate``: score a trained model on a labelled file (the task's own metric)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cutplane.exceptions import InputError
from problems.cli.tasks import TASKS
from problems.command_options import Command, add_encoding_option, check_encoding_option

__all__ = ["add_arguments", "run", "COMMAND"]


def add_arguments(p):
    """``evaluate``'s options."""
    p.add_argument("--model", required=True, type=Path, help="model file written by train")
    p.add_argument("--test", required=True, type=Path, help="labelled test file in the task's format")
    p.add_argument(
        "--train-words",
        type=Path,
        dest="train_words",
        help="segmentation: training word list, for the in-vocabulary recall R_iv",
    )
    p.add_argument("--report", type=Path, help="write the metric here as JSON")
    add_encoding_option(p)


def run(args):
    """Print the scores of the model's task on one line (and write them as JSON with ``--report``)."""
    from problems.model_io import load_model

    meta = load_model(args.model).meta
    task = meta.get("task")
    evaluable = sorted(name for name, t in TASKS.items() if t.evaluate is not None)
    if task not in evaluable:
        raise InputError(f"evaluate supports {evaluable} models, this one is {task!r}", path=args.model, field="task")
    check_encoding_option(args, task, TASKS[task])
    scores = TASKS[task].evaluate(args.model, args.test, args)
    sys.stdout.write(" ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in scores.items()) + "\n")
    if args.report is not None:
        args.report.write_text(json.dumps({"task": task, "test_file": str(args.test), **scores}, indent=2) + "\n")
    return 0


#: The ``evaluate`` subcommand.
COMMAND = Command("score a trained model on a labelled file", add_arguments, run)
