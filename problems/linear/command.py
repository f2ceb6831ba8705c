"""CLI tasks of the linear SVM: ``--task binary`` and ``--task multiclass`` on SVMlight files.

::

    cutplane train --task binary|multiclass --train FILE.svm [--C 1 | --C 0.1 1 10 --dev FILE.svm |
        --C 0.1 1 10 --dev-fraction 0.2] [--eps 1e-3] [--time-limit S] \\
        [--method bmrm] [--regularizer l2|l1] [--max-iter N] --model OUT.npz [--report OUT.json]
    cutplane predict --model M.npz --input FILE.svm [--output OUT.txt]

The :class:`~problems.command_options.Task` records :data:`BINARY` and :data:`MULTICLASS` are
listed in the CLI's task table (:data:`problems.cli.tasks.TASKS`).
"""

from __future__ import annotations

from cutplane.exceptions import InputError
from problems.command_options import (
    Task,
    check_holdout,
    format_label,
    make_solver,
    percent,
    selection_report,
    validation_kwargs,
)

__all__ = ["train_linear", "predict_linear", "svm_report", "BINARY", "MULTICLASS"]


def svm_report(est) -> dict:
    """The JSON training report of a fitted :class:`~problems.linear.svm.LinearSVM`
    (bounds on the scale of ``F``; history arrays included)."""
    res, C = est.result_, float(est.C_)
    hist = res.history
    options = est.solver_options_
    return {
        "objective": est.objective_,
        "lower_bound": est.lower_bound_,
        "gap": est.gap_,
        "eps": float(options.eps),
        "C": C,
        "iterations": est.n_iter_,
        "status": res.status,
        "converged": res.status == "converged",
        "time_s": float(res.time_s),
        "oracle_time_s": float(res.oracle_time_s),
        "solver_time_s": float(res.solver_time_s),
        "backend": res.backend,
        "exact": bool(res.exact),
        "fallbacks": [list(map(str, f)) for f in (res.fallbacks or [])],
        "method": options.method,
        "regularizer": est.regularizer,
        "peak_working_set_bytes": int(res.peak_working_set_bytes),
        "n_features": int(est.n_features_in_),
        "n_classes": int(len(est.classes_)),
        "history": {
            "upper": (C * hist.upper).tolist(),
            "best_upper": (C * hist.best_upper).tolist(),
            "lower": (C * hist.lower).tolist(),
            "gap": (C * hist.gap).tolist(),
            "oracle_time": hist.oracle_time.tolist(),
            "solver_time": hist.solver_time.tolist(),
            "n_cuts": hist.n_cuts.tolist(),
            "wall_time": hist.wall_time.tolist(),
            "cpu_time": hist.cpu_time.tolist(),
        },
    }


def train_linear(args, *, binary):
    """``--task binary`` / ``--task multiclass``: a :class:`~problems.linear.svm.LinearSVM` on an
    SVMlight file; returns the fitted estimator and its report."""
    from problems.io.svmlight import read_svmlight
    from problems.linear.svm import LinearSVM

    X, y = read_svmlight(args.train)
    n_classes = len(set(y.tolist()))
    if binary and n_classes != 2:
        raise InputError(
            f"--task binary needs exactly 2 distinct labels, found {n_classes}", path=args.train, field="label"
        )
    if args.executor not in (None, "serial") or args.scheduler is not None:
        raise InputError(
            "the linear tasks' oracle is one sparse matrix product in this process; --executor "
            "and --scheduler apply to the structured tasks (sequence, segment, parse)",
            field="--executor",
        )
    args.executor, args.workers = None, None  # serial: the estimator's default
    check_holdout(args, int(X.shape[0]), "samples")
    est = LinearSVM(C=args.C, regularizer=args.regularizer, solver=make_solver(args, method=args.method))

    def read_dev(path):
        return read_svmlight(path, n_features=X.shape[1])

    est.fit(X, y, **validation_kwargs(args, read_dev))
    report = svm_report(est)
    report.update(selection_report(est, source_file=args.dev))
    if args.dev is not None:  # scored after training, as the structured tasks do
        X_dev, y_dev = read_dev(args.dev)
        report["dev"] = {"accuracy": percent(est.score(X_dev, y_dev)), "n_samples": int(X_dev.shape[0])}
    report.update(n_samples=int(X.shape[0]), train_accuracy=percent(est.score(X, y)))  # percent, as every CLI score
    return est, report


def predict_linear(model_path, input_path):
    """Labels of an SVMlight file by a saved LinearSVM, and the file's own labels."""
    from problems.io.svmlight import read_svmlight
    from problems.linear.svm import LinearSVM

    est = LinearSVM.load(model_path)
    X, y = read_svmlight(input_path, n_features=est.n_features_in_)
    return [format_label(v) for v in est.predict(X)], [format_label(v) for v in y]


#: ``--task binary``.
BINARY = Task("linear SVM, two classes (hinge loss)", lambda a: train_linear(a, binary=True), predict_linear)
#: ``--task multiclass``.
MULTICLASS = Task(
    "linear SVM, Crammer-Singer multiclass hinge loss", lambda a: train_linear(a, binary=False), predict_linear
)
