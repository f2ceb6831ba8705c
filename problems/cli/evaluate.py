"""``cutplane evaluate``: score a trained model on a labelled file (the task's own metric).

Every score is in percent, on standard output and in the ``--report`` JSON alike (which says so:
``"score_unit": "percent"``, beside ``task`` and ``test_file``):

- ``binary``, ``multiclass``: ``accuracy``, with ``n_correct`` and ``n_samples`` (the
  labels predicted by the task's ``predict`` against the file's own);
- ``sequence``: chunk ``precision``, ``recall``, ``f1`` (conlleval's semantics), token
  ``accuracy``, ``n_sentences``, ``n_tokens``, and ``per_type``: per chunk type ``precision``,
  ``recall``, ``f1``, ``n_gold``, ``n_pred``, ``n_correct`` (one more line per type on stdout);
- ``segment``: ``precision``, ``recall``, ``f1``, ``r_iv`` and ``r_oov`` (with
  ``--train-words``) and the word counts;
- ``parse``: ``uas`` (without punctuation), ``uas_punct``, ``complete``, ``complete_nopunct``
  and the counts.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cutplane.exceptions import InputError
from problems.cli.input_check import check_input_format, refuse_feature_dict_model
from problems.cli.tasks import TASKS
from problems.command_options import Command, add_encoding_option, check_encoding_option, format_scores

__all__ = ["add_arguments", "run", "accuracy_scores", "COMMAND"]


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
    p.add_argument("--report", type=Path, help="write the scores here as JSON (the keys printed, scores in percent)")
    add_encoding_option(p)


def accuracy_scores(task, model_path, test_path, args=None) -> dict:
    """``accuracy`` (percent), ``n_correct`` and ``n_samples`` of a task whose ``predict``
    returns the labels and the file's own labels (the linear tasks).

    Raises
    ------
    InputError
        The file has no labels, or none at all.
    """
    labels, truth, info = task.predict(model_path, test_path, args)
    if truth is None or len(truth) != len(labels):
        raise InputError("the test file carries no labels to score against", path=test_path)
    if not labels:
        raise InputError("no examples", path=test_path)
    hits = sum(a == b for a, b in zip(labels, truth))
    scores = {"accuracy": 100.0 * hits / len(labels), "n_correct": int(hits), "n_samples": len(labels)}
    # what reading the file found (``unseen_features``): in the JSON report, not among the scores printed
    scores.update({k: v for k, v in info.items() if isinstance(v, dict)})
    return scores


def run(args):
    """Print the scores of the model's task (and write them as JSON with ``--report``)."""
    from problems.cli.output_paths import check_not_input, check_output_file
    from problems.model_io import load_model

    check_output_file(args.report, "--report")
    check_not_input(args.report, (args.model, args.test), "--report")
    meta = load_model(args.model).meta
    refuse_feature_dict_model(meta, args.model)
    task = meta.get("task")
    evaluable = sorted(name for name, t in TASKS.items() if t.evaluate is not None or t.predict is not None)
    if task not in evaluable:
        raise InputError(f"evaluate supports {evaluable} models, this one is {task!r}", path=args.model, field="task")
    t = TASKS[task]
    check_encoding_option(args, task, t)
    check_input_format(task, meta, args.model, args.test, getattr(args, "encoding", "utf-8"))
    if t.evaluate is not None:
        scores = t.evaluate(args.model, args.test, args)
    else:
        scores = accuracy_scores(t, args.model, args.test, args)
    sys.stdout.write(format_scores(scores))
    if args.report is not None:
        record = {"task": task, "test_file": str(args.test), "score_unit": "percent", **scores}
        args.report.write_text(json.dumps(record, indent=2) + "\n")
    return 0


#: The ``evaluate`` subcommand.
COMMAND = Command("score a trained model on a labelled file (scores in percent)", add_arguments, run)
