"""What the ``cutplane`` command's pieces share: the command and task records, argument types,
the solver options and the training report of the structured estimators.

The command-line interface is layered: each task subpackage holds its own CLI piece
(:mod:`problems.linear.command`, :mod:`problems.sequence.command`,
:mod:`problems.parsing.command`: the task's train / predict / evaluate functions and its
:class:`Task` records), and :mod:`problems.cli` imports them into its explicit tables
(:data:`problems.cli.tasks.TASKS`, :data:`problems.cli.commands.COMMANDS`). This module sits
below both: the tasks import it, never the ``problems.cli`` package.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import NamedTuple

from cutplane.exceptions import InputError

__all__ = [
    "Command",
    "Task",
    "positive_float",
    "positive_int",
    "byte_size",
    "format_label",
    "executor_names",
    "LazyChoices",
    "lazy_choices",
    "resolve_executor",
    "usable_cores",
    "add_solver_options",
    "add_progress_options",
    "show_progress",
    "engine_methods",
    "make_solver",
    "check_solver_options",
    "solver_report",
    "write_plots",
    "c_value",
    "fraction",
    "resolve_C",
    "validation_kwargs",
    "chooses_C",
    "cv_estimator_kwargs",
    "cv_fit_kwargs",
    "check_holdout",
    "selection_report",
    "format_scores",
    "percent",
    "SOLVER_CHOICES",
    "STRUCTURED_REGULARIZERS",
    "encoding_value",
    "add_encoding_option",
    "check_encoding_option",
]

#: ``--solver`` values: the engine or the online baseline (:mod:`problems.solvers`).
SOLVER_CHOICES = ("cutting-plane", "spom")
#: ``--regularizer`` values of the structured tasks.
STRUCTURED_REGULARIZERS = ("mtl", "ssvm", "pmtl")


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
    predict : callable, optional
        ``predict(model_path, input_path, args) -> (labels: list of str, true: list of str or
        None, report: dict)``; ``report`` holds more entries of ``predict --report``.
    predict_to : callable, optional
        ``predict_to(model_path, input_path, output_path or None) -> int``: for tasks that
        write their own format back (sequences, segmented text, CoNLL-U); used instead of
        ``predict``.
    evaluate : callable, optional
        ``evaluate(model_path, test_path, args) -> dict`` of scores (``cutplane evaluate``).
    default_regularizer : str
        ``--regularizer`` when not given.
    default_eps : float
        ``--eps`` when not given.
    structured : bool
        The estimator takes ``--solver cutting-plane|spom`` (:func:`add_solver_options`).
    add_arguments : callable, optional
        ``add_arguments(parser)``: the task's own ``train`` options (an argument group).
    encodings : bool
        The task reads its text files in the encoding of ``--encoding``
        (:func:`add_encoding_option`): ``train(args)`` and ``evaluate(..., args)`` read
        ``args.encoding``, and ``predict_to`` takes an ``encoding`` keyword. Other tasks refuse
        an ``--encoding`` other than UTF-8 (:func:`check_encoding_option`).
    """

    help: str
    train: Callable
    predict: Callable | None = None
    predict_to: Callable | None = None
    evaluate: Callable | None = None
    default_regularizer: str = "l2"
    default_eps: float = 1e-3
    structured: bool = False
    add_arguments: Callable | None = None
    encodings: bool = False


# ---------------------------------------------------------------------- argument types
def positive_float(text):
    """An argparse type: a finite number > 0."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be finite and > 0, got {text}")
    return v


def positive_int(text):
    """An argparse type: an integer >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {text}")
    return v


def nonnegative_int(text):
    """An argparse type: an integer >= 0."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return v


def min_count_value(text):
    """An argparse type of ``--min-count``: an integer >= 1, or ``auto`` (by regulariser)."""
    if text == "auto":
        return text
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (or 'auto')") from None


def c_value(text):
    """An argparse type of ``--C``: a finite number > 0, or ``auto`` (the default grid)."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0 or 'auto', got {text!r}") from None
    if not v > 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be finite and > 0, got {text}")
    return v


def fraction(text):
    """An argparse type: a number strictly between 0 and 1 (``--dev-fraction``)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0.0 < v < 1.0:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1, got {text}")
    return v


def byte_size(text):
    """``--memory-limit``: a number of bytes, optionally with a K, M or G suffix (powers of 1024;
    :func:`cutplane.options.parse_bytes`, as an argparse type)."""
    from cutplane.options import parse_bytes

    try:
        return parse_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def format_label(value) -> str:
    """A label as written in SVMlight files: ``1`` and ``-1`` for integral floats."""
    if isinstance(value, float) or hasattr(value, "is_integer"):
        v = float(value)
        return str(int(v)) if v.is_integer() else repr(v)
    return str(value)


class LazyChoices(Sequence):
    """The ``choices`` of an option, listed by ``load()`` when argparse first needs them (to check a
    value given, or to print the help): declaring the option imports nothing, so ``cutplane
    train --model adir`` fails before the executors and the engine are loaded."""

    def __init__(self, load: Callable[[], list]):
        self._load = load
        self._items: list | None = None

    def _list(self) -> list:
        if self._items is None:
            self._items = list(self._load())
        return self._items

    def __getitem__(self, i):
        return self._list()[i]

    def __len__(self) -> int:
        return len(self._list())

    def __repr__(self) -> str:
        return repr(self._list())


class _ChoicesMetavar:
    """A metavar printed as argparse prints choices, ``{a,b,c}``, formatted when the help is."""

    def __init__(self, choices: LazyChoices):
        self._choices = choices

    def __str__(self) -> str:
        return "{" + ",".join(str(c) for c in self._choices) + "}"


def lazy_choices(action, load: Callable[[], list]):
    """Give the declared option ``action`` the choices listed by ``load()``, loaded when a value
    is checked or the help printed (:class:`LazyChoices`); the usage shows them as
    ``{a,b,c}`` as for ordinary choices. Returns ``action``."""
    choices = LazyChoices(load)
    action.choices = choices
    action.metavar = _ChoicesMetavar(choices)  # set after add_argument, which formats the metavar once
    return action


def executor_names() -> list:
    """The names of :data:`cutplane.executors.EXECUTORS` (``--executor`` choices)."""
    from cutplane.executors import EXECUTORS

    return list(EXECUTORS)


def engine_methods() -> list:
    """The engine methods of ``--method``: those of :func:`cutplane.engine.method_names` that take
    a norm regulariser (not Kelley's indicator-set method)."""
    from cutplane.engine import method_names

    return list(method_names(indicator=False))


def add_progress_options(p):
    """Declare ``--progress``, ``--verbose`` and ``--quiet`` on ``p`` (one of them at most).

    Without any of them the progress counter is shown when standard error is a terminal and
    not in a pipe or a file (:func:`show_progress`).
    """
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--progress",
        action="store_true",
        help="show the progress counter (iterations, time so far, bounds, gap and eps on F) even when standard "
        "error is not a terminal (default: shown on a terminal only)",
    )
    g.add_argument(
        "--verbose", action="store_true", help="the progress counter and one log line per iteration (on stderr)"
    )
    g.add_argument("--quiet", action="store_true", help="no progress counter, even on a terminal")


def show_progress(args, stream=None) -> bool:
    """Whether to show the progress counter: ``--progress`` or ``--verbose``; not with
    ``--quiet``; else when ``stream`` (default ``sys.stderr``) is a terminal."""
    import sys

    if getattr(args, "quiet", False):
        return False
    if getattr(args, "progress", False) or getattr(args, "verbose", False):
        return True
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed or detached stream
        return False


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the platform has one)."""
    import os

    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def resolve_executor(args, task) -> None:
    """``--executor`` left out: ``threads`` on as many workers as usable cores for the
    structured tasks when there is more than one core (the oracle's compiled kernels release
    the GIL), else ``serial``; ``--executor serial`` says one core. Sets ``args.executor``
    (and ``args.workers`` when it was left out)."""
    if args.executor is not None:
        return
    cores = usable_cores()
    if task.structured and cores > 1:
        args.executor = "threads"
        if args.workers is None:
            args.workers = cores
    else:
        args.executor = "serial"


# ---------------------------------------------------------------------------- the engine's options
#: What the command line says beyond an option's declaration (its scale or scope on the command line).
_ENGINE_NOTES = {
    "method": "; the structured tasks run in-out (default) or bmrm, the sequence tasks also n-slack with "
    "--regularizer ssvm",
    "eps": " on F (default 1e-3 for linear tasks, 0.1 for structured ones; on a grid of C: 1e-3 * C resp. "
    "0.01 * C at each point)",
    "max_iter": " at each C of a grid",
    "time_limit": ": the whole training (every point of a grid of C)",
    "rtol": " (on a grid of C, at each point)",
    "cache_steps": " (structured tasks; default: problems.solvers.DEFAULT_CACHE_STEPS for the sequence tasks)",
}
#: Metavariables of the flags that have one other than the option's name.
_ENGINE_METAVARS = {
    "time_limit": "SECONDS",
    "max_iter": "N",
    "memory_limit": "BYTES",
    "checkpoint": "PATH",
    "checkpoint_every": "K",
    "cache_steps": "K",
}
#: Defaults of the command line where they are not the solver object's None.
_ENGINE_CLI_DEFAULTS = {"max_iter": 1000, "checkpoint_every": 10}


def _option_type(opt):
    """The argparse type of an engine option: its text parsed (``opt.parse``, or the type of its
    default) and checked by its declaration, so a bad value is an error before training starts."""
    parse = opt.parse
    if parse is None:
        parse = int if isinstance(opt.default, int) and not isinstance(opt.default, bool) else float

    def convert(text):
        try:
            value = parse(text)
        except ValueError as exc:
            what = str(exc) if opt.parse is not None else f"expected a number, got {text!r}"
            raise argparse.ArgumentTypeError(what) from None
        try:
            return opt.checked(value)
        except InputError as exc:
            raise argparse.ArgumentTypeError(exc.message) from None

    convert.__name__ = opt.public_name
    return convert


def add_engine_options(p, *, skip=()) -> None:
    """Declare a flag per engine option (:data:`cutplane.options.OPTIONS`: ``--max-iter`` for
    ``max_iter``, ``--backend`` for the reduced-problem ``solver``), except those in ``skip``
    (declared elsewhere on ``p``: ``--verbose`` among the progress options, ``--seed`` shared
    with SPOM). Unset flags leave the solver object's default."""
    from cutplane.options import OPTIONS

    g = p.add_argument_group("cutting-plane engine (one flag per option of cutplane.options)")
    for opt in OPTIONS:
        if opt.name in skip:
            continue
        where = "" if opt.methods is None else f" [{', '.join(opt.methods)}]"
        kw: dict = dict(dest=opt.public_name, help=opt.doc + _ENGINE_NOTES.get(opt.name, "") + where)
        if isinstance(opt.default, bool):
            kw.update(action="store_true", default=False)
        else:
            metavar = _ENGINE_METAVARS.get(opt.name, opt.public_name.upper())
            kw.update(type=_option_type(opt), default=_ENGINE_CLI_DEFAULTS.get(opt.name), metavar=metavar)
            if opt.name == "method":
                kw.update(metavar="METHOD", type=str)
        action = g.add_argument(opt.flag, **kw)
        if opt.name == "method":  # the engine's registry, imported when --method is given or printed
            lazy_choices(action, engine_methods)


def engine_option_values(args) -> dict:
    """The engine options given on the command line (:func:`add_engine_options`), by the solver
    object's names; those left unset are not listed."""
    from cutplane.options import OPTIONS

    values = {}
    for opt in OPTIONS:
        value = getattr(args, opt.public_name, None)
        if value is not None and value is not False:
            values[opt.public_name] = str(value) if opt.name == "checkpoint" else value
    return values


# ---------------------------------------------------------------------------- solvers
def add_solver_options(p, tasks):
    """Declare ``--solver``, ``--epochs``, ``--eta0``, ``--last-iterate`` and ``--seed`` on ``p``
    (one argument group naming the structured ``tasks``)."""
    g = p.add_argument_group("structured solver (--task " + "|".join(sorted(tasks)) + ")")
    g.add_argument(
        "--solver",
        choices=SOLVER_CHOICES,
        default="cutting-plane",
        help="cutting-plane (certified gap, default) or spom (online proximal baseline, no certificate)",
    )
    g.add_argument("--epochs", type=positive_int, default=20, help="SPOM: passes over the data (default 20)")
    g.add_argument(
        "--eta0",
        type=positive_float,
        default=None,
        help="SPOM: step size eta_t = eta0 / sqrt(t) (default: tuned on a subsample)",
    )
    g.add_argument(
        "--last-iterate",
        action="store_true",
        dest="last_iterate",
        help="SPOM: return the last iterate instead of the averaged model",
    )
    g.add_argument("--seed", type=int, default=0, help="SPOM: seed of the epoch orders (default 0)")


_SPOM_REFUSED = (
    ("--checkpoint", "checkpoint", None),
    ("--resume", "resume", False),
    ("--memory-limit", "memory_limit", None),
)


def check_solver_options(args, task_name, structured_tasks):
    """Refuse ``--solver spom`` for a task that does not take it, and the engine's options
    (``--checkpoint``, ``--resume``, ``--memory-limit``) with ``--solver spom``."""
    if task_name not in structured_tasks:
        if args.solver != "cutting-plane":
            raise InputError(
                f"--solver {args.solver} is for the tasks {sorted(structured_tasks)}, not {task_name!r}",
                field="--solver",
            )
        return
    if args.solver != "spom":
        return
    given = [opt for opt, attr, default in _SPOM_REFUSED if getattr(args, attr) != default]
    if given:
        raise InputError(
            f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to --solver cutting-plane "
            "only (SPOM keeps no working set and writes no checkpoint)",
            field=given[0],
        )


def make_solver(args, *, method=None):
    """The solver object of ``train``'s options: a :class:`~problems.solvers.CuttingPlane`
    (``--eps``, ``--max-iter``, the checkpoint, memory and executor options) or, with
    ``--solver spom``, a :class:`~problems.solvers.SPOM` (``--epochs``, ``--eta0``,
    ``--last-iterate``, ``--seed`` and the executor of its objective evaluations).

    ``method`` (``--method``) is passed to the engine when given (the linear tasks);
    ``--chunks-per-worker`` goes to the solver's ``chunks_per_worker`` (both solvers).
    """
    from problems.solvers import SPOM, CuttingPlane

    mapping = dict(
        executor=getattr(args, "executor", None),
        n_workers=getattr(args, "workers", None),
        scheduler=getattr(args, "scheduler", None),
        chunks_per_worker=getattr(args, "chunks_per_worker", None),
        time_limit=getattr(args, "time_limit", None),
        verbose=show_progress(args),
    )
    if getattr(args, "solver", "cutting-plane") == "spom":
        return SPOM(epochs=args.epochs, eta0=args.eta0, averaged=not args.last_iterate, seed=args.seed, **mapping)
    options = engine_option_values(args)
    for name in mapping:  # verbose: the progress options decide (show_progress); time_limit: mapped above
        options.pop(name, None)
    if method is not None:
        options["method"] = method
    return CuttingPlane(**options, **mapping)


# ---------------------------------------------------------------------------- reports
def solver_report(est) -> dict:
    """The training figures of a fitted structured estimator (scale ``F``), for either solver.

    Both: ``objective``, ``lower_bound`` and ``gap`` (null for SPOM, which certifies nothing),
    ``eps`` (null for SPOM), ``iterations`` (engine iterations or SPOM epochs), ``status``,
    ``converged``, ``time_s``, ``solver``, the regulariser and the template weights. The
    cutting-plane solver adds its oracle / reduced-solver times, backend, exactness, peak
    working-set bytes and the bounds per iteration; SPOM its step size, averaging, seed and
    the objective per evaluation (passes, seconds).
    """
    res, C = est.result_, float(est.C_)
    # the solver's own fields (eps, rtol, its name, its times and history): its report
    fields = est.solver_options_.report(res, C=C, eps=est.path_["eps"][est.best_index_])
    out = {
        "objective": est.objective_,
        "lower_bound": est.lower_bound_,
        "gap": est.gap_,
        "eps": fields.pop("eps"),
        "rtol": fields.pop("rtol"),
        "C": C,
        "iterations": est.n_iter_,
        "status": res.status,
        "converged": res.status == "converged",
        "time_s": float(res.time_s),
        "solver": fields.pop("solver"),
        "regularizer": est.regularizer,
        "p": float(est.p),
        "n_templates": len(est.template_weights_),
        "n_active_templates": est.n_active_templates_,
        "active_templates": est.active_templates_,
        "template_weights": est.template_weights_,
    }
    out.update(fields)
    return out


_NO_MATPLOTLIB = "--plot needs matplotlib, a dependency of cutplane that this environment lacks: pip install matplotlib"


def write_plots(est, args, report):
    """``--plot DIR``: template weights (sorted, log scale; the estimators with templates) and, for
    the cutting-plane solver, the bounds per iteration; the files are listed under
    ``report["plots"]``."""
    if getattr(args, "plot", None) is None:
        return
    from problems.plots import matplotlib_available, plot_bounds, plot_template_weights

    if not matplotlib_available():
        raise InputError(_NO_MATPLOTLIB, field="--plot")
    args.plot.mkdir(parents=True, exist_ok=True)
    report["plots"] = []
    if hasattr(est, "template_norms_"):  # a linear SVM has no templates: its bounds (and path) only
        report["plots"].append(
            str(
                plot_template_weights(
                    est.template_norms_, args.plot / "template_weights.png", title=f"{est.regularizer} ||w_j||"
                )
            )
        )
    if est.lower_bound_ is not None:  # SPOM has no bounds to draw
        report["plots"].append(
            str(
                plot_bounds(
                    est.result_.history,
                    args.plot / "bounds.png",
                    scale=float(est.C_),
                    title=f"{est.regularizer}, C={est.C_:g}",
                )
            )
        )
    write_path_plot(est, args, report)


def write_path_plot(est, args, report):
    """``--plot DIR`` with a grid of C: ``path.png``, the validation score (in percent, as the
    report's ``path``) and the certified gap along C (:func:`problems.plots.plot_path`), listed
    under ``report["plots"]``."""
    path = getattr(est, "path_", None)
    if getattr(args, "plot", None) is None or path is None or len(path["C"]) < 2:
        return
    from problems.plots import matplotlib_available, plot_path

    if not matplotlib_available():
        raise InputError(_NO_MATPLOTLIB, field="--plot")
    args.plot.mkdir(parents=True, exist_ok=True)
    metric = (getattr(est, "validation_", None) or {}).get("metric", "score")
    path = dict(path, validation_score=[percent(v) for v in path["validation_score"]])
    out = plot_path(path, args.plot / "path.png", unit="percent", metric=metric, chosen=float(est.C_))
    report.setdefault("plots", []).append(str(out))


def percent(fraction):
    """A score in [0, 1] as a percentage (None stays None): the CLI reports every score in
    percent, as conlleval does."""
    return None if fraction is None else 100.0 * float(fraction)


def format_scores(scores: dict, prefix: str = "") -> str:
    """The lines ``evaluate`` (and ``train --dev``) print for a dict of scores.

    The first line is ``key value`` pairs (floats to 4 decimals; the scores are in percent,
    counts are integers); a ``per_type`` entry (chunk types) adds one line per type,
    ``type NAME precision .. recall .. f1 .. n_gold .. n_pred .. n_correct ..``. Every line
    starts with ``prefix``.
    """

    def pairs(d):
        return " ".join(f"{k} {v:.4f}" if isinstance(v, float) else f"{k} {v}" for k, v in d.items())

    flat = {k: v for k, v in scores.items() if not isinstance(v, dict)}
    lines = [prefix + pairs(flat)]
    for name, typed in (scores.get("per_type") or {}).items():
        lines.append(f"{prefix}type {name or '-'} {pairs(typed)}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------- C and validation
def resolve_C(args, task) -> None:
    """Normalise ``args.C`` (the values of ``--C``): None -> ``"auto"`` for the structured tasks,
    ``1.0`` for the others; ``auto`` alone; a grid refuses ``--checkpoint`` / ``--resume``. Sets
    ``args.C_grid`` (True for ``auto`` or several values).

    Raises
    ------
    InputError
        ``auto`` with other values or for a task without a default grid, duplicate values,
        ``--dev`` with ``--dev-fraction``, a checkpoint with a grid.
    """
    values = args.C
    if values is None:
        values = ["auto"] if task.structured else [1.0]
    if "auto" in values:
        if len(values) > 1:
            raise InputError("--C auto stands alone (it is the default grid)", field="--C")
        if not task.structured:
            raise InputError(
                f"--C auto (a default grid) is for the structured tasks; for --task {args.task} give one or more "
                "values, e.g. --C 0.1 1 10",
                field="--C",
            )
        args.C = "auto"
    else:
        if len(set(values)) != len(values):
            raise InputError(
                f"--C has duplicate values {sorted({v for v in values if values.count(v) > 1})}", field="--C"
            )
        args.C = values[0] if len(values) == 1 else list(values)
    args.C_grid = args.C == "auto" or isinstance(args.C, list)
    if getattr(args, "dev", None) is not None and getattr(args, "dev_fraction", None) is not None:
        raise InputError("give --dev FILE or --dev-fraction F, not both", field="--dev-fraction")
    if args.C_grid and (getattr(args, "checkpoint", None) is not None or getattr(args, "resume", False)):
        raise InputError(
            "--checkpoint / --resume apply to one value of C; a grid of C (--C auto is the default for "
            f"--task {args.task}) runs a path: give one --C value to checkpoint",
            field="--checkpoint",
        )
    if (
        args.C_grid
        and args.C != "auto"
        and getattr(args, "dev", None) is None
        and getattr(args, "dev_fraction", None) is None
    ):
        raise InputError(
            "several values of --C need held-out data to choose among them: --dev FILE or --dev-fraction F",
            field="--C",
        )


def check_holdout(args, n_examples: int, unit: str) -> None:
    """Refuse a training file too small to hold anything out when ``--dev-fraction`` (or
    ``--C auto`` without ``--dev``) asks for it.

    Raises
    ------
    InputError
        Fewer than two examples (``path`` the training file, ``field="--dev-fraction"``).
    """
    holdout = getattr(args, "dev_fraction", None) is not None or (
        args.C == "auto" and getattr(args, "dev", None) is None
    )
    if holdout and n_examples < 2:
        fraction_given = getattr(args, "dev_fraction", None) is not None
        why = "--dev-fraction" if fraction_given else "--C auto (the default) without --dev"
        one = unit[:-1] if n_examples == 1 else unit
        raise InputError(
            f"the training file has {n_examples} {one}: nothing to hold out for validation ({why} holds out "
            f"a share of the training {unit} to choose C); give --dev FILE, or one value of --C",
            path=args.train,
            field="--dev-fraction" if fraction_given else "--C",
        )


def chooses_C(args) -> bool:
    """Whether the structured task builds its ``...CV`` estimator (C chosen on held-out data):
    for a grid of ``--C`` (``auto``, the default, or several values) and for ``--dev-fraction``
    (one C scored on the held-out share, as before); one ``--C`` value alone builds the plain
    estimator, whose model is that C's on all the training examples."""
    return bool(args.C_grid) or getattr(args, "dev_fraction", None) is not None


def cv_estimator_kwargs(args) -> dict:
    """The keywords of the ``...CV`` estimator's constructor: ``Cs`` (``--C``),
    ``validation_fraction`` (``--dev-fraction``, None: the estimator's default share without
    ``--dev``), ``validation_seed`` (``--dev-seed``) and ``extend`` (``--extend`` /
    ``--no-extend``; left out: the estimator's default)."""
    out = {
        "Cs": args.C,
        "validation_fraction": getattr(args, "dev_fraction", None),
        "validation_seed": getattr(args, "dev_seed", 0),
    }
    if getattr(args, "extend", None) is not None:
        out["extend"] = args.extend
    return out


def cv_fit_kwargs(args, read_dev) -> dict:
    """The validation keywords of the ``...CV`` estimator's ``fit``:
    ``validation_data=read_dev(args.dev)`` for ``--dev`` with a grid of C; none otherwise (with
    one C the dev file is only scored after training, as before)."""
    if getattr(args, "dev", None) is not None and args.C_grid and getattr(args, "dev_fraction", None) is None:
        return {"validation_data": read_dev(args.dev)}
    return {}


def validation_kwargs(args, read_dev) -> dict:
    """The validation keywords of a linear estimator's ``fit`` (it takes a grid of C itself):
    ``validation_fraction`` and ``validation_seed`` for ``--dev-fraction``;
    ``validation_data=read_dev(args.dev)`` for ``--dev`` with a grid of C (with one C the dev
    file is only scored after training)."""
    if getattr(args, "dev_fraction", None) is not None:
        return {"validation_fraction": args.dev_fraction, "validation_seed": args.dev_seed}
    if getattr(args, "dev", None) is not None and args.C_grid:
        return {"validation_data": read_dev(args.dev), "validation_seed": args.dev_seed}
    return {"validation_seed": getattr(args, "dev_seed", 0)}


def selection_report(est, *, source_file=None) -> dict:
    """The report's record of how C was chosen: ``C`` (chosen), ``C_grid`` (every C of the
    path, the points added past the grid's edge last), ``extended`` (``"above"`` /
    ``"below"`` when the path went on past the largest / smallest C of the grid, the points
    added marked by ``path["extension"]``; null otherwise), ``path`` (the ``path_`` table),
    ``validation`` (where the validation data came from, the metric, the chosen point's score)
    and ``path_time_s`` (the whole path; None for one C).

    The validation scores (``validation["score"]``, ``path["validation_score"]``) are in
    percent, as every score the CLI reports; the estimators' ``path_`` holds fractions
    (scikit-learn's ``score``)."""
    from problems.model_selection import extended_direction

    path = {k: list(v) for k, v in est.path_.items()}
    path["validation_score"] = [percent(v) for v in path["validation_score"]]
    validation = dict(est.validation_) if est.validation_ is not None else None
    if validation is not None:
        validation["score"] = path["validation_score"][est.best_index_]
        if source_file is not None and validation["source"] == "data":
            validation["file"] = str(source_file)
    path_result = getattr(est, "path_result_", None)
    return {
        "C": float(est.C_),
        "C_grid": list(path["C"]),
        "extended": extended_direction(path),
        "path": path,
        "validation": validation,
        "path_time_s": None if path_result is None else float(path_result.seconds),
    }


# ---------------------------------------------------------------------- --encoding
def encoding_value(text):
    """An argparse type of ``--encoding``: a codec name Python knows that is ASCII-compatible
    (:func:`problems.io._open.check_encoding`: ``utf-8``, ``latin-1``, ``euc-jp``, ...)."""
    from problems.io._open import check_encoding

    try:
        return check_encoding(text)
    except InputError as exc:
        raise argparse.ArgumentTypeError(exc.message) from None


def add_encoding_option(p) -> None:
    """``--encoding`` of the commands that read text files (default UTF-8)."""
    p.add_argument(
        "--encoding",
        type=encoding_value,
        default="utf-8",
        metavar="CODEC",
        help="text encoding of the input files (data and template files) of the sequence and segment tasks, "
        "e.g. latin-1 (CoNLL-2002's original files) or euc-jp (CRF++'s JapaneseNE example); predictions "
        "written with --output use it too (default utf-8)",
    )


def check_encoding_option(args, task_name: str, task: Task) -> None:
    """Refuse an ``--encoding`` other than UTF-8 for a task that does not read it (its files are
    UTF-8 or binary by their format), instead of ignoring it."""
    encoding = getattr(args, "encoding", "utf-8")
    if encoding != "utf-8" and not task.encodings:
        raise InputError(
            f"--encoding {encoding} applies to the tasks that read text columns (sequence, segment); "
            f"the {task_name} task reads UTF-8 / ASCII files only",
            field="--encoding",
        )
