"""``cutplane train``: fit the estimator of a task (:data:`problems.cli.tasks.TASKS`) and save it.

::

    cutplane train --task binary|multiclass|sequence|segment|parse --train FILE \\
        [--C auto | --C C1 [C2 ...]] [--dev FILE | --dev-fraction F [--dev-seed S]] \\
        [--extend K | --no-extend] [--allow-uncertified] \\
        [--time-limit SECONDS] [--eps E] [--method bmrm] [--regularizer l2|l1|mtl|ssvm|pmtl] \\
        [--encoding CODEC] \
        [--max-iter N] --model OUT.npz [--report OUT.json] [--plot DIR] [--progress | --verbose | --quiet] \\
        [--checkpoint PATH [--checkpoint-every K] [--resume]] \\
        [--memory-limit BYTES] [--executor serial|threads|processes|dask --workers N \\
        [--scheduler ADDRESS] [--chunks-per-worker K]] [--solver cutting-plane|spom ...] [task options]

``--C`` takes one value (one run), several (a certified path over them, the model chosen on
held-out data: ``--dev FILE`` or ``--dev-fraction F`` of the training examples, seeded by
``--dev-seed``) or ``auto``, the default of the structured tasks: the regulariser's grid
(:data:`problems.template_learning.DEFAULT_C_GRIDS`) on ``--dev`` or, without it, on 10% of
the training sentences / trees held out. The linear tasks default to ``--C 1``.
When the best validation score is at the largest C of the grid (or the smallest), the path
goes on past that edge by the grid's ratio there, warm and certified, while the score rises, for
at most ``--extend K`` points (default 2; ``--no-extend``: stop at the edge given); the report's
``extended`` says ``"above"`` / ``"below"`` (null when it did not), ``path["extension"]`` marks
the points added, and the chosen C may be one of them
(:class:`problems.model_selection.GridExtension`). ``--time-limit`` bounds the whole run (every
point of a path and the refit on all the training examples); with a refit to follow, the path
keeps the refit's expected time (:class:`problems.model_selection.RefitBudget`): it stops a
point, and starts no new one, when the time left would not pay for the refit. The report holds
the path table (``path``), the chosen C and the chosen point's certificate (``objective``,
``lower_bound``, ``gap``, ``status``); ``--plot DIR`` adds ``path.png``, the validation score
and the certified gap along C.

Exit status: 0 when the saved model reached its certified gap (or its solver certifies nothing:
SPOM); :data:`EXIT_UNCERTIFIED` (3) when it did not (status ``max_iter``, ``time_limit``, ...),
after the model and the report are written as usual, with one line on stderr naming the status,
the certified gap and ``eps`` (``--allow-uncertified``: status 0, the line kept); 130 when
interrupted; 2 on bad input; 1 when every reduced-problem backend failed
(:func:`problems.cli.main.main`). ``--eps`` without a value is 0.1 on ``F`` for one C of the
structured tasks (1e-3 for the linear ones); on a grid it is ``0.01 * C`` (``1e-3 * C``) at
each point, unless given.

Objective, bounds and ``eps`` are on the scale ``F(w) = Omega(w) + C * mean loss``. The
estimators are built with a solver object (:func:`problems.command_options.make_solver`).
``--checkpoint PATH`` saves the engine's state every ``--checkpoint-every`` iterations and on
Ctrl-C / SIGTERM; the same command with ``--resume`` continues from it. An interrupted training
(Ctrl-C, SIGTERM) exits with status 130 and saves its best model so far beside ``--model``
(``keep.npz`` -> ``keep.interrupted.npz``, :func:`interrupted_model_path`), never over it: an
earlier finished model stays, and ``train && evaluate`` stops. ``--memory-limit``
bounds the working set (``512K``, ``64M``, ``2G``: powers of 1024). ``--executor`` maps the
structured oracles over sentences (:data:`cutplane.executors.EXECUTORS`); left out, the
structured tasks use threads on every usable core when there is more than one
(:func:`problems.command_options.resolve_executor`), ``--executor serial`` one core.
``--chunks-per-worker K`` splits the structured oracle's examples into ``K`` chunks per worker
(:func:`cutplane.executors.default_n_chunks`; default: for ``dask`` one per thread of a worker,
2 for the sequence tasks and 4 for parsing on the other executors). A Dask worker lost mid-run
ends the training with one error line (status 1) that says to resume: the checkpoint of the last
boundary is kept, and ``--resume`` continues from it on any executor.
``--min-count`` is the feature cutoff (``auto`` for the sequence tasks:
:data:`problems.template_learning.DEFAULT_MIN_COUNTS`).

Progress (:func:`problems.command_options.show_progress`): a counter on stderr when it is a
terminal, not in a pipe, unless ``--progress`` / ``--verbose`` (``--quiet``: never); it counts
iterations and time without a total (a run stops at its gap, not at ``--max-iter``) and shows
the bounds, the gap and ``eps`` on ``F``. ``--dev FILE`` is scored after training and printed
on stdout (percent), as ``evaluate`` prints it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from cutplane.exceptions import InputError
from problems.cli.output_paths import check_not_input, check_output_dir, check_output_file
from problems.cli.tasks import TASKS
from problems.command_options import (
    Command,
    add_encoding_option,
    add_engine_options,
    add_progress_options,
    add_solver_options,
    c_value,
    check_encoding_option,
    check_solver_options,
    executor_names,
    format_scores,
    fraction,
    lazy_choices,
    min_count_value,
    nonnegative_int,
    positive_float,
    positive_int,
    resolve_C,
    resolve_executor,
)
from problems.sequence.template_sets import TEMPLATE_SETS

__all__ = ["add_arguments", "run", "COMMAND", "EXIT_UNCERTIFIED"]

#: The exit status of a training whose saved model did not reach its certificate (status other
#: than converged), unless ``--allow-uncertified``; the model and the report are written first.
EXIT_UNCERTIFIED = 3

_REGULARIZERS = ["l2", "l1", "mtl", "ssvm", "pmtl"]
#: The one-slack methods of the structured tasks (the last is their default:
#: :data:`problems.template_learning.DEFAULT_METHOD`).
STRUCTURED_METHODS = ("bmrm", "in-out")
#: The structured tasks whose oracle gives one cut per example (``--method n-slack``).
NSLACK_TASKS = ("sequence", "segment")


def _structured():
    return {name for name, task in TASKS.items() if task.structured}


def add_arguments(p):
    """``train``'s options: the common ones, the structured solver's, then each task's own."""
    p.add_argument("--task", required=True, choices=sorted(TASKS), help="what to train")
    p.add_argument(
        "--train",
        required=True,
        type=Path,
        help="training data: SVMlight (binary, multiclass), CoNLL/CRF++ columns (sequence), "
        "segmented text (segment); may be .gz",
    )
    p.add_argument(
        "--C",
        type=c_value,
        nargs="+",
        default=None,
        metavar="C",
        help="weight of the mean loss, F = Omega + C * mean loss: one value, several (a path over them, "
        "the best on --dev / --dev-fraction kept) or 'auto' (default for sequence, segment, parse: "
        "10 100 1000 for ssvm, 100 1000 10000 for mtl/pmtl); default 1 for binary, multiclass",
    )
    p.add_argument(
        "--regularizer",
        choices=_REGULARIZERS,
        default=None,
        help="l2 | l1 (linear tasks, default l2); mtl | ssvm | pmtl (structured, default mtl)",
    )
    p.add_argument("--p", type=positive_float, default=1.5, help="p of the p-block norm for pmtl (default 1.5)")
    p.add_argument("--templates", help="CRF++ template file, or a set name: " + ", ".join(TEMPLATE_SETS))
    add_encoding_option(p)
    p.add_argument(
        "--dev",
        type=Path,
        help="labelled development file (same format as --train): chooses C on a grid of C, and is "
        "scored after training (report 'dev')",
    )
    p.add_argument(
        "--dev-fraction",
        type=fraction,
        default=None,
        dest="dev_fraction",
        metavar="F",
        help="hold out this share of the training sentences / trees / samples to choose C "
        "(default 0.1 with --C auto and no --dev)",
    )
    p.add_argument(
        "--dev-seed",
        type=int,
        default=0,
        dest="dev_seed",
        metavar="S",
        help="seed of the held-out examples of --dev-fraction (default 0)",
    )
    p.add_argument(
        "--extend",
        type=nonnegative_int,
        default=None,
        metavar="K",
        help="sequence, segment, parse with a grid of C: when the best validation score is at the largest C of "
        "the grid (or the smallest), go on past that edge by the grid's ratio there (10 for 100 1000 10000), "
        "each point warm-started and certified, while the score rises, for at most K points (default 2); "
        "0 stops at the edge given",
    )
    p.add_argument("--no-extend", action="store_const", const=0, dest="extend", help="same as --extend 0")
    p.add_argument(
        "--allow-uncertified",
        action="store_true",
        dest="allow_uncertified",
        help=f"exit with status 0 when the saved model did not reach its certified gap (status max_iter, "
        f"time_limit, ...); without it such a run writes the model and the report, then exits with status "
        f"{EXIT_UNCERTIFIED}",
    )
    p.add_argument(
        "--min-count",
        type=min_count_value,
        default=None,
        dest="min_count",
        help="drop features seen fewer times: an integer or 'auto' (sequence tasks: auto, which is 2 for mtl "
        "and pmtl, 1 for ssvm; parse and linear tasks: 1)",
    )
    executor = p.add_argument(
        "--executor",
        metavar="NAME",
        default=None,
        help="map of the structured oracle over sentences (default: threads on every usable core when there are "
        "more than one, else serial; --executor serial uses one core)",
    )
    lazy_choices(executor, executor_names)  # cutplane.executors imported when --executor is given or printed
    p.add_argument("--workers", type=positive_int, default=None, help="workers of the executor")
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="Dask scheduler address (with --executor dask; default: a local cluster of --workers workers)",
    )
    p.add_argument(
        "--chunks-per-worker",
        type=positive_int,
        default=None,
        dest="chunks_per_worker",
        metavar="K",
        help="structured tasks: split the oracle's examples into K chunks per worker of the executor (default: dask "
        "one per worker thread; sequence tasks 2, parse 4 on threads and processes; one chunk when serial)",
    )
    p.add_argument(
        "--plot",
        type=Path,
        metavar="DIR",
        help="write the bounds per iteration (bounds.png; the cutting-plane solver), the template weights "
        "(template_weights.png; sequence, segment, parse) as PNG files here, and with a grid of C the "
        "validation score and certified gap along C (path.png) (needs matplotlib)",
    )
    p.add_argument("--model", required=True, type=Path, help="output model file (.npz)")
    p.add_argument("--report", type=Path, help="output JSON report")
    add_progress_options(p)
    add_engine_options(p, skip=("verbose", "seed"))  # --verbose: a progress option; --seed: shared with SPOM
    add_solver_options(p, _structured())
    for task in TASKS.values():
        if task.add_arguments is not None:
            task.add_arguments(p)


def run(args):
    """Check the options, train, save the model (with the report's summary) and print one line."""
    check_outputs(args)
    task = TASKS[args.task]
    check_solver_options(args, args.task, _structured())
    check_encoding_option(args, args.task, task)
    if args.resume and args.checkpoint is None:
        raise InputError("--resume needs --checkpoint PATH (the file to resume from)", field="--resume")
    if args.method is not None and task.structured:
        if args.method not in STRUCTURED_METHODS and not (args.method == "n-slack" and args.task in NSLACK_TASKS):
            raise InputError(
                f"--method {args.method} does not apply to --task {args.task}: the structured tasks run "
                f"{' or '.join(STRUCTURED_METHODS)} (default {STRUCTURED_METHODS[-1]}), and n-slack for "
                f"{' and '.join(NSLACK_TASKS)} too; ls-bmrm's line search needs a linear task's risk",
                field="--method",
            )
        chosen = args.regularizer or task.default_regularizer
        if args.method == "n-slack" and chosen != "ssvm":
            raise InputError(
                f"--method n-slack trains the structural SVM: it needs --regularizer ssvm, got {chosen}",
                field="--method",
            )
    if args.scheduler is not None and args.executor != "dask":
        raise InputError("--scheduler needs --executor dask", field="--scheduler")
    if args.extend is not None and not task.structured:
        raise InputError(
            f"--extend / --no-extend apply to the structured tasks (sequence, segment, parse), whose grid of C "
            f"can go on past its edge; --task {args.task} stops at the grid given",
            field="--extend",
        )
    if args.chunks_per_worker is not None and not task.structured:
        raise InputError(
            f"--chunks-per-worker applies to the structured tasks (sequence, segment, parse), whose oracle is "
            f"mapped over chunks of examples; --task {args.task} runs in this process",
            field="--chunks-per-worker",
        )
    if args.regularizer is None:
        args.regularizer = task.default_regularizer
    resolve_C(args, task)
    resolve_executor(args, task)
    if args.eps is None and not args.C_grid:  # a grid scales its default tolerance with C
        args.eps = task.default_eps
    t0 = time.perf_counter()
    est, report = task.train(args)
    report["total_time_s"] = time.perf_counter() - t0
    report = {
        "task": args.task,
        "train_file": str(args.train),
        "model_file": str(args.model),
        "checkpoint": None if args.checkpoint is None else str(args.checkpoint),
        "resumed": bool(args.resume),
        "memory_limit": args.memory_limit,
        "executor": args.executor,
        "workers": args.workers,
        "chunks_per_worker": args.chunks_per_worker,
        "score_unit": "percent",  # dev, train and validation scores (the estimators' API keeps fractions)
        **report,
    }
    interrupted = report.get("status") == "interrupted"
    if interrupted:  # the model file is written by a finished training only
        report["model_file"] = str(interrupted_model_path(args.model))
    summary = {k: v for k, v in report.items() if k != "history"}
    est.save(report["model_file"], extra_meta={"task": args.task, "report": summary})
    report["removed"] = _remove_spent_files(args, report)
    if args.report is not None:
        args.report.write_text(json.dumps(report, indent=2, allow_nan=True) + "\n")
    if report.get("gap") is None:  # an online solver: no certificate, iterations are epochs
        solver = getattr(args, "solver", "online")
        sys.stdout.write(
            f"{args.task}: objective {report['objective']:.6g} ({solver}, no certificate), "
            f"{report['iterations']} epochs, status {report['status']}, {report['time_s']:.2f} s\n"
        )
    else:
        sys.stdout.write(
            f"{args.task}: objective {report['objective']:.6g}, certified gap "
            f"{report['gap']:.3g}, {report['iterations']} iterations"
            + (f" (resumed from {args.checkpoint})" if args.resume else "")
            + f", status {report['status']}, {report['time_s']:.2f} s\n"
        )
    if interrupted:
        how = (
            "resume with the same command and --resume"
            if args.checkpoint is not None
            else "train with --checkpoint PATH to be able to resume"
        )
        sys.stderr.write(
            f"cutplane: interrupted: the best model so far is in {report['model_file']}; "
            f"{args.model} was not written; {how}\n"
        )
        return 130
    if len(report.get("C_grid") or ()) > 1:
        val = report.get("validation") or {}
        past = report.get("extended")
        sys.stdout.write(
            f"{args.task}: C = {report['C']:g} chosen among {', '.join(f'{c:g}' for c in report['C_grid'])}"
            + (f" (the path went on {past} the grid given: the best score was at its edge)" if past else "")
            + " by "
            f"{val.get('metric', 'validation score')} {val.get('score', float('nan')):.4f} (percent) on "
            f"{val.get('n_examples', '?')} held-out examples ({val.get('source', '?')}); "
            + (f"refitted at that C on all {val['n_examples_refit']} training examples; " if val.get("refit") else "")
            + f"{report['total_time_s']:.2f} s in all\n"
        )
    if report.get("dev"):  # the dev file's scores (percent), as evaluate prints them
        sys.stdout.write(format_scores(report["dev"], prefix=f"dev {args.dev}: "))
    return _certificate_status(report, args)


def _remove_spent_files(args, report) -> list:
    """After a certified run whose model is saved (status converged), the files it no longer
    needs: the checkpoint of ``--checkpoint`` (nothing is left to resume) and, after a resume,
    the best model so far of the interrupted run (``*.interrupted.npz``, superseded by the model
    just saved). A run that is not certified keeps its checkpoint, to resume with more
    iterations or time. Returns the paths removed (the report's ``removed``)."""
    if args.checkpoint is None or report.get("status") != "converged":
        return []
    removed = []
    spent = [Path(args.checkpoint)]
    if args.resume:
        spent.append(interrupted_model_path(args.model))
    for path in spent:
        if path.is_file() and path.resolve() != Path(args.model).resolve():
            path.unlink()
            removed.append(str(path))
    return removed


def check_outputs(args) -> None:
    """Refuse, before any data is read, an output path that cannot be written: ``--model``,
    ``--report``, ``--checkpoint`` (a file) and ``--plot`` (a folder), and an output that is one
    of the input files (:mod:`problems.cli.output_paths`)."""
    inputs = (args.train, getattr(args, "dev", None), getattr(args, "templates", None))
    for flag, path in (("--model", args.model), ("--report", args.report), ("--checkpoint", args.checkpoint)):
        check_output_file(path, flag)
        check_not_input(path, inputs, flag)
    check_output_dir(getattr(args, "plot", None), "--plot")
    if getattr(args, "plot", None) is not None:
        from problems.plots import matplotlib_available

        if not matplotlib_available():
            raise InputError(
                "--plot needs matplotlib, which this environment lacks: pip install matplotlib", field="--plot"
            )


def _certificate_status(report, args) -> int:
    """0, or :data:`EXIT_UNCERTIFIED` with one line on stderr when the saved model's run has a
    certificate (a gap: not SPOM) that it did not reach (status other than converged) and
    ``--allow-uncertified`` was not given."""
    if report.get("gap") is None or report.get("status") == "converged":
        return 0
    C = report.get("C")
    at = f" at C = {C:g}" if isinstance(C, (int, float)) else ""
    eps = report.get("eps")
    eps_text = f"{eps:.4g}" if isinstance(eps, (int, float)) else str(eps)
    msg = (
        f"cutplane: the model{at} is not certified: status {report['status']}, certified gap "
        f"{report['gap']:.4g} against eps {eps_text}"
    )
    if args.allow_uncertified:
        sys.stderr.write(f"{msg} (--allow-uncertified: exit status 0)\n")
        return 0
    sys.stderr.write(
        f"{msg}; it was saved in {report['model_file']}"
        + (f" (report {args.report})" if args.report is not None else "")
        + f"; give more --time-limit / --max-iter, or --allow-uncertified to accept it (exit status "
        f"{EXIT_UNCERTIFIED})\n"
    )
    return EXIT_UNCERTIFIED


def interrupted_model_path(model) -> Path:
    """Where an interrupted training saves its best model so far: beside ``model``, never over
    it (``keep.npz`` -> ``keep.interrupted.npz``), so that an earlier finished model is kept."""
    p = Path(model)
    return p.with_name(f"{p.stem}.interrupted{p.suffix}")


#: The ``train`` subcommand.
COMMAND = Command(
    "train a model: linear SVM (SVMlight), sequence tagger (CoNLL / CRF++ columns), word segmenter or "
    "dependency parser (CoNLL-U); --task chooses",
    add_arguments,
    run,
)
