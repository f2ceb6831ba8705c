"""``cutplane predict``: label a file with a trained model (the task stored in the model file)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cutplane.exceptions import InputError
from problems.cli.input_check import check_input_format, refuse_feature_dict_model
from problems.cli.tasks import TASKS
from problems.command_options import Command, add_encoding_option, check_encoding_option, positive_int

__all__ = ["add_arguments", "run", "COMMAND"]


def add_arguments(p):
    """``predict``'s options."""
    p.add_argument("--model", required=True, type=Path, help="model file written by train")
    p.add_argument("--input", required=True, type=Path, help="data to label, in the task's format")
    p.add_argument(
        "--output",
        type=Path,
        help="where to write the predictions (default stdout): one label per line for linear "
        "tasks, the input columns plus the predicted one for sequences, segmented text",
    )
    p.add_argument(
        "--zero-based",
        choices=("auto", "yes", "no"),
        default="auto",
        dest="zero_based",
        help="linear models: SVMlight index base of --input; auto (default) is the model's, a file with an "
        "index 0 given to a 1-based model is refused",
    )
    p.add_argument(
        "--report",
        type=Path,
        help="linear models: write the accuracy, the index base and the unseen features here as JSON",
    )
    p.add_argument(
        "-n",
        "--nbest",
        type=positive_int,
        default=None,
        metavar="N",
        help="sequence models: the N best labellings of each sentence, as CRF++'s -n prints them: '# RANK SCORE' "
        "(the chain's score, not a probability), then the tokens with the predicted column, then a blank line",
    )
    add_encoding_option(p)


def run(args):
    """Dispatch on the model's task: write the task's own format, or one label per line (and
    the accuracy on stderr when the input carries labels, ``--report`` as JSON). A file that looks
    like another task's input is refused first (:func:`problems.cli.input_check.check_input_format`)."""
    from problems.cli.output_paths import check_not_input, check_output_file
    from problems.model_io import load_model

    for flag, path in (("--output", args.output), ("--report", args.report)):
        check_output_file(path, flag)
        check_not_input(path, (args.model, args.input), flag)
    meta = load_model(args.model).meta
    refuse_feature_dict_model(meta, args.model)
    task_name = meta.get("task", "multiclass")
    if task_name not in TASKS:
        raise InputError(
            f"the model was trained for task {task_name!r}, which this version does not know",
            path=args.model,
            field="task",
        )
    task = TASKS[task_name]
    check_encoding_option(args, task_name, task)
    check_input_format(task_name, meta, args.model, args.input, getattr(args, "encoding", "utf-8"))
    if args.nbest is not None:
        if task_name != "sequence":
            raise InputError(
                f"--nbest applies to sequence models (CRF++'s -n); this is a {task_name} model",
                path=args.model,
                field="--nbest",
            )
        from problems.sequence.command import predict_nbest_to

        return predict_nbest_to(args.model, args.input, args.output, args.nbest, encoding=args.encoding)
    if task.predict_to is not None:
        if task.encodings:
            return task.predict_to(args.model, args.input, args.output, encoding=args.encoding)
        return task.predict_to(args.model, args.input, args.output)
    if task.predict is None:
        raise InputError(f"task {task_name!r} has no predict command", path=args.model, field="task")
    labels, truth, info = task.predict(args.model, args.input, args)
    text = "".join(label + "\n" for label in labels)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text)
    accuracy = None
    if truth is not None and len(truth) == len(labels):
        hits = sum(a == b for a, b in zip(labels, truth))
        accuracy = 100.0 * hits / max(len(labels), 1)  # percent, as every CLI score
        sys.stderr.write(f"accuracy {accuracy:.4f} ({hits}/{len(labels)})\n")
    if args.report is not None:
        report = {"task": task_name, "model_file": str(args.model), "input_file": str(args.input)}
        report.update(accuracy=accuracy, score_unit="percent", **info)
        args.report.write_text(json.dumps(report, indent=2) + "\n")
    return 0


#: The ``predict`` subcommand.
COMMAND = Command(
    "label a file with a trained model (the task stored in the model decides the format)", add_arguments, run
)
