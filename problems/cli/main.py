"""The ``cutplane`` command: train, predict and a self-contained demo.

Usage::

    cutplane train --task binary|multiclass --train FILE.svm --C 1 [--eps 1e-3] \\
        [--method bmrm] [--regularizer l2|l1] [--max-iter N] --model OUT.npz \\
        [--report OUT.json] [--verbose] [--checkpoint PATH [--checkpoint-every K] [--resume]] \\
        [--memory-limit BYTES] [--executor serial|threads|processes|dask --workers N \\
        [--scheduler ADDRESS]]
    cutplane predict --model M.npz --input FILE.svm [--output OUT.txt]
    cutplane demo [--seed 0] [--out-dir DIR]

Objective, bounds and ``eps`` are on the scale ``F(w) = Omega(w) + C * mean loss`` (see
:mod:`problems.linear.svm`). Bad input prints ``cutplane: error: <file:line: message>``
on stderr and exits with status 2, without a traceback.

``--checkpoint PATH`` saves the engine's state every ``--checkpoint-every`` iterations and on
Ctrl-C / SIGTERM (the run then ends with status ``interrupted`` and the best model so far);
the same command with ``--resume`` continues from it (a checkpoint of other data or
hyper-parameters, or a damaged one, is refused with exit status 2). ``--memory-limit`` bounds
the working set (``512K``, ``64M``, ``2G``: powers of 1024). ``--executor`` maps the
structured oracles over sentences (:data:`cutplane.parallel.EXECUTORS`).

Extending: a subcommand is a :class:`Command` in :data:`COMMANDS` (see
:func:`register_command`); a training task (``--task``) is a :class:`Task` in :data:`TASKS`
(see :func:`register_task`). ``predict`` dispatches on the task stored in the model file.
"""
from __future__ import annotations

import argparse
import json
import logging
import sys
import warnings
from pathlib import Path
from typing import Callable, NamedTuple

from cutplane.exceptions import CutplaneError, InputError, SolverError
from problems.sequence.template_sets import TEMPLATE_SETS

__all__ = ["main", "build_parser", "Command", "Task", "COMMANDS", "TASKS", "register_command",
           "register_task", "format_label", "svm_report", "byte_size", "engine_options"]

PROG = "cutplane"


class Command(NamedTuple):
    """A subcommand: ``add_arguments(parser)`` declares its options, ``run(args) -> int``."""

    help: str
    add_arguments: Callable
    run: Callable


class Task(NamedTuple):
    """A training task for ``cutplane train --task NAME``.

    Attributes
    ----------
    help : str
    train : callable
        ``train(args) -> (estimator, report: dict)``; the estimator has ``save(path,
        extra_meta=...)``.
    predict : callable
        ``predict(model_path, input_path) -> (labels: list of str, true: list of str or None)``.
    predict_to : callable, optional
        ``predict_to(model_path, input_path, output_path or None) -> int``: for tasks that
        write their own format back (sequences, segmented text); used instead of ``predict``.
    default_regularizer : str
        ``--regularizer`` when not given.
    default_eps : float
        ``--eps`` when not given.
    """

    help: str
    train: Callable
    predict: Callable
    predict_to: Callable | None = None
    default_regularizer: str = "l2"
    default_eps: float = 1e-3


COMMANDS: dict[str, Command] = {}
TASKS: dict[str, Task] = {}


def register_command(name, command: Command):
    """Add a subcommand (later registrations replace earlier ones of the same name)."""
    COMMANDS[name] = command


def register_task(name, task: Task):
    """Add a training task selectable by ``cutplane train --task name``."""
    TASKS[name] = task


def format_label(value) -> str:
    """A label as written in SVMlight files: ``1`` and ``-1`` for integral floats."""
    if isinstance(value, float) or hasattr(value, "is_integer"):
        v = float(value)
        return str(int(v)) if v.is_integer() else repr(v)
    return str(value)


def svm_report(est) -> dict:
    """The JSON training report of a fitted :class:`~problems.linear.svm.LinearSVM`
    (bounds on the scale of ``F``; history arrays included)."""
    res, C = est.result_, float(est.C)
    hist = res.history
    return {
        "objective": est.objective_, "lower_bound": est.lower_bound_, "gap": est.gap_,
        "eps": float(est.eps), "C": C, "iterations": est.n_iter_, "status": res.status,
        "converged": res.status == "converged", "time_s": float(res.time_s),
        "oracle_time_s": float(res.oracle_time_s), "solver_time_s": float(res.solver_time_s),
        "backend": res.backend, "exact": bool(res.exact),
        "fallbacks": [list(map(str, f)) for f in (res.fallbacks or [])],
        "method": est.method, "regularizer": est.regularizer,
        "peak_working_set_bytes": int(res.peak_working_set_bytes),
        "n_features": int(est.n_features_in_), "n_classes": int(len(est.classes_)),
        "history": {
            "upper": (C * hist.upper).tolist(), "best_upper": (C * hist.best_upper).tolist(),
            "lower": (C * hist.lower).tolist(), "gap": (C * hist.gap).tolist(),
            "oracle_time": hist.oracle_time.tolist(), "solver_time": hist.solver_time.tolist(),
            "n_cuts": hist.n_cuts.tolist(),
        },
    }


# ---------------------------------------------------------------------- linear tasks
def _train_linear(args, *, binary):
    from problems.linear.svm import LinearSVM
    from problems.io.svmlight import read_svmlight

    X, y = read_svmlight(args.train)
    n_classes = len(set(y.tolist()))
    if binary and n_classes != 2:
        raise InputError(f"--task binary needs exactly 2 distinct labels, found {n_classes}",
                         path=args.train, field="label")
    if args.executor not in (None, "serial") or args.scheduler is not None:
        raise InputError("the linear tasks' oracle is one sparse matrix product in this process; --executor "
                         "and --scheduler apply to the structured tasks (sequence, segment, parse)",
                         field="--executor")
    est = LinearSVM(C=args.C, eps=args.eps, method=args.method, regularizer=args.regularizer,
                    max_iter=args.max_iter, verbose=args.verbose, **engine_options(args))
    est.fit(X, y)
    report = svm_report(est)
    report.update(n_samples=int(X.shape[0]), train_accuracy=float(est.score(X, y)))
    return est, report


def _predict_linear(model_path, input_path):
    from problems.linear.svm import LinearSVM
    from problems.io.svmlight import read_svmlight

    est = LinearSVM.load(model_path)
    X, y = read_svmlight(input_path, n_features=est.n_features_in_)
    return [format_label(v) for v in est.predict(X)], [format_label(v) for v in y]


register_task("binary", Task("linear SVM, two classes (hinge loss)",
                             lambda a: _train_linear(a, binary=True), _predict_linear))
register_task("multiclass", Task("linear SVM, Crammer-Singer multiclass hinge loss",
                                 lambda a: _train_linear(a, binary=False), _predict_linear))


# ------------------------------------------------------------------------ commands
def _positive_float(text):
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be finite and > 0, got {text}")
    return v


def _positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return v


def byte_size(text):
    """``--memory-limit``: a number of bytes, optionally with a K, M or G suffix (powers of 1024)."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30}.get(t[-1:], 1)
    try:
        v = float(t[:-1] if scale > 1 else t) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected bytes such as 500000, 512K, 64M or 2G, got {text!r}") from None
    if not 1 <= v < float("inf"):
        raise argparse.ArgumentTypeError(f"must be at least 1 byte, got {text!r}")
    return int(v)


def engine_options(args) -> dict:
    """The estimators' checkpoint and memory keywords from ``train``'s options."""
    return dict(checkpoint=None if args.checkpoint is None else str(args.checkpoint),
                checkpoint_every=args.checkpoint_every, resume=args.resume, memory_limit=args.memory_limit)


def _executor_names():
    from cutplane.parallel import EXECUTORS

    return list(EXECUTORS)


_REGULARIZERS = ["l2", "l1", "mtl", "ssvm", "pmtl"]


def _add_train(p):
    p.add_argument("--task", required=True, choices=sorted(TASKS), help="what to train")
    p.add_argument("--train", required=True, type=Path,
                   help="training data: SVMlight (binary, multiclass), CoNLL/CRF++ columns (sequence), "
                        "segmented text (segment); may be .gz")
    p.add_argument("--C", type=_positive_float, default=1.0,
                   help="weight of the mean loss, F = Omega + C * mean loss (default 1)")
    p.add_argument("--eps", type=_positive_float, default=None,
                   help="certified tolerance on F (default 1e-3 for linear tasks, 0.1 for structured ones)")
    p.add_argument("--method", default="bmrm", help="engine method (default bmrm)")
    p.add_argument("--regularizer", choices=_REGULARIZERS, default=None,
                   help="l2 | l1 (linear tasks, default l2); mtl | ssvm | pmtl (structured, default mtl)")
    p.add_argument("--p", type=_positive_float, default=1.5, help="p of the p-block norm for pmtl (default 1.5)")
    p.add_argument("--templates", help="CRF++ template file, or a set name: " + ", ".join(TEMPLATE_SETS))
    p.add_argument("--dev", type=Path, help="labelled development file, scored after training")
    p.add_argument("--min-count", type=_positive_int, default=1, dest="min_count",
                   help="drop features seen fewer times (default 1)")
    p.add_argument("--executor", choices=_executor_names(), default=None,
                   help="map of the structured oracle over sentences (default serial)")
    p.add_argument("--workers", type=_positive_int, default=None, help="workers of the executor")
    p.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address (with --executor dask; "
                   "default: a local cluster of --workers workers)")
    p.add_argument("--checkpoint", type=Path, metavar="PATH",
                   help="save the solver's state here every --checkpoint-every iterations and on Ctrl-C / SIGTERM")
    p.add_argument("--checkpoint-every", type=_positive_int, default=10, dest="checkpoint_every", metavar="K",
                   help="iterations between checkpoints (default 10)")
    p.add_argument("--resume", action="store_true",
                   help="continue from --checkpoint PATH if it exists (same data and options)")
    p.add_argument("--memory-limit", type=byte_size, default=None, dest="memory_limit", metavar="BYTES",
                   help="bytes for the solver's working set, e.g. 512M (oldest cuts aggregated to fit)")
    p.add_argument("--max-iter", type=_positive_int, default=1000, dest="max_iter")
    p.add_argument("--plot", type=Path, metavar="DIR",
                   help="structured tasks: write template weights and the bounds per iteration as PNG "
                        "files here (needs matplotlib)")
    p.add_argument("--model", required=True, type=Path, help="output model file (.npz)")
    p.add_argument("--report", type=Path, help="output JSON report")
    p.add_argument("--verbose", action="store_true", help="progress bar and per-iteration log")


def _run_train(args):
    task = TASKS[args.task]
    if args.resume and args.checkpoint is None:
        raise InputError("--resume needs --checkpoint PATH (the file to resume from)", field="--resume")
    if args.scheduler is not None and args.executor != "dask":
        raise InputError("--scheduler needs --executor dask", field="--scheduler")
    if args.regularizer is None:
        args.regularizer = task.default_regularizer
    if args.eps is None:
        args.eps = task.default_eps
    est, report = task.train(args)
    report = {"task": args.task, "train_file": str(args.train), "model_file": str(args.model),
              "checkpoint": None if args.checkpoint is None else str(args.checkpoint), "resumed": bool(args.resume),
              "memory_limit": args.memory_limit, **report}
    summary = {k: v for k, v in report.items() if k != "history"}
    est.save(args.model, extra_meta={"task": args.task, "report": summary})
    if args.report is not None:
        args.report.write_text(json.dumps(report, indent=2, allow_nan=True) + "\n")
    if report.get("gap") is None:  # an online solver: no certificate, iterations are epochs
        solver = getattr(args, "solver", "online")
        sys.stdout.write(f"{args.task}: objective {report['objective']:.6g} ({solver}, no certificate), "
                         f"{report['iterations']} epochs, status {report['status']}, {report['time_s']:.2f} s\n")
    else:
        sys.stdout.write(f"{args.task}: objective {report['objective']:.6g}, certified gap "
                         f"{report['gap']:.3g}, {report['iterations']} iterations, "
                         f"status {report['status']}, {report['time_s']:.2f} s\n")
    return 0


def _add_predict(p):
    p.add_argument("--model", required=True, type=Path, help="model file written by train")
    p.add_argument("--input", required=True, type=Path, help="data to label, in the task's format")
    p.add_argument("--output", type=Path,
                   help="where to write the predictions (default stdout): one label per line for linear "
                        "tasks, the input columns plus the predicted one for sequences, segmented text")


def _run_predict(args):
    from problems.model_io import load_model

    meta = load_model(args.model).meta
    task_name = meta.get("task", "multiclass")
    if task_name not in TASKS:
        raise InputError(f"the model was trained for task {task_name!r}, which this version "
                         f"does not know", path=args.model, field="task")
    task = TASKS[task_name]
    if task.predict_to is not None:
        return task.predict_to(args.model, args.input, args.output)
    labels, truth = task.predict(args.model, args.input)
    text = "".join(label + "\n" for label in labels)
    if args.output is None:
        sys.stdout.write(text)
    else:
        args.output.write_text(text)
    if truth is not None and len(truth) == len(labels):
        hits = sum(a == b for a, b in zip(labels, truth))
        sys.stderr.write(f"accuracy {hits / max(len(labels), 1):.4f} ({hits}/{len(labels)})\n")
    return 0


def _add_demo(p):
    p.add_argument("--seed", type=int, default=0, help="seed of the generated data")
    p.add_argument("--out-dir", type=Path, dest="out_dir",
                   help="folder for the report, plots and generated data (default ./cutplane-demo)")


def _run_demo(args):
    from problems.cli.demo import run_demo

    return run_demo(seed=args.seed, out_dir=args.out_dir, out=sys.stdout)


register_command("train", Command("train a model on an SVMlight file", _add_train, _run_train))
register_command("predict", Command("label an SVMlight file with a trained model", _add_predict,
                                    _run_predict))
register_command("demo", Command("MTL^struct vs SPOM vs SSVM on a generated tagging task: certified results "
                                 "and plots",
                                 _add_demo, _run_demo))


from problems.sequence import command as _sequence_command  # noqa: E402,F401  (registers the sequence / segment tasks and evaluate)
from problems.cli import compare as _compare_command  # noqa: E402,F401  (registers compare: batch MTL^struct vs online SPOM)
from problems.parsing import command as _parse_command  # noqa: E402,F401  (registers the parse task and its evaluator)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with one subparser per registered command."""
    parser = argparse.ArgumentParser(prog=PROG, description="Cutting-plane and bundle solvers "
                                     "with certified duality gaps.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, cmd in COMMANDS.items():
        cmd.add_arguments(sub.add_parser(name, help=cmd.help, description=cmd.help))
    return parser


def _error(message, code):
    sys.stderr.write(f"{PROG}: error: {message}\n")
    return code


def main(argv=None) -> int:
    """Entry point of the console script; returns the exit status.

    0 on success, 2 on bad input (including bad options), 1 when every reduced-problem
    backend failed, 130 on Ctrl-C outside the engine (inside it, the engine returns its
    best-so-far result instead).
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed "cutplane: error: ..." or help
        return int(exc.code or 0)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command line, for reports
    if getattr(args, "verbose", False):
        logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code = COMMANDS[args.command].run(args)
        for w in caught:
            if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning)):
                sys.stderr.write(f"{PROG}: warning: {w.message}\n")
        return code
    except InputError as exc:
        return _error(exc, 2)
    except SolverError as exc:
        return _error(f"solver failure: {exc}", 1)
    except CutplaneError as exc:
        return _error(exc, 1)
    except OSError as exc:
        return _error(f"{exc.filename or ''}: {exc.strerror or exc}".lstrip(": "), 2)
    except KeyboardInterrupt:
        return _error("interrupted", 130)


if __name__ == "__main__":
    # under ``python -m problems.cli.main`` this file runs as __main__, a module apart from the
    # problems.cli.main that the task modules register into: run that one
    from problems.cli.main import main as _registered_main

    sys.exit(_registered_main())
