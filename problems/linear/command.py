"""CLI tasks of the linear SVM: ``--task binary`` and ``--task multiclass`` on SVMlight files.

::

    cutplane train --task binary|multiclass --train FILE.svm [--C 1 | --C 0.1 1 10 --dev FILE.svm |
        --C 0.1 1 10 --dev-fraction 0.2] [--eps 1e-3] [--time-limit S] \\
        [--method bmrm] [--regularizer l2|l1] [--max-iter N] [--zero-based auto|yes|no] \\
        [--bias B] --model OUT.npz [--report OUT.json]
    cutplane predict --model M.npz --input FILE.svm [--zero-based auto|yes|no] [--output OUT.txt] \\
        [--report OUT.json]

The :class:`~problems.command_options.Task` records :data:`BINARY` and :data:`MULTICLASS` are
listed in the CLI's task table (:data:`problems.cli.tasks.TASKS`).

SVMlight files as others write them (:func:`read_for_model`):

- *Index base.* ``--zero-based auto`` (the default) reads the training file as scikit-learn's
  ``load_svmlight_file(zero_based="auto")`` does: 0-based when some index is 0 (files written by
  ``dump_svmlight_file`` with its defaults), else 1-based (SVMlight). The base used is recorded
  in the model (the training report's ``zero_based``). A file read with that model (``predict``,
  ``--dev``) is read in the model's base: a file without any index 0 cannot tell its base and
  takes the model's; a file with an index 0 given to a 1-based model is refused (its columns
  would be shifted by one against the model's), naming both; ``--zero-based yes|no`` forces the
  file's base. Models without the record (earlier versions, or saved from the API) are 1-based.
- *Unseen features.* Indices beyond the model's last feature are ignored, as SVMlight and
  liblinear do, and counted: an :class:`~problems.validation.UnseenFeatureWarning` and the
  report's ``unseen_features`` (``distinct_indices``, ``nonzeros_dropped``, ``examples``).
- *Data of another task or shape* is refused with one :class:`~cutplane.exceptions.InputError`
  naming the model and the file: labels of which at least half of the distinct values are not
  classes of the model (:func:`~problems.validation.check_label_overlap`; fewer are scored as
  wrong with a warning, and a file whose examples all carry one label that is not a class is
  taken as unlabelled: no accuracy); and a file whose examples all stop before the last feature
  of every training example (:func:`check_width`: the training report's ``min_last_feature``),
  when that many examples make it improbable below ``1e-6`` under the training data.
"""

from __future__ import annotations

import argparse
import math
import warnings

import numpy as np

from cutplane.exceptions import InputError, ModelFormatError
from problems.command_options import (
    Task,
    check_holdout,
    format_label,
    make_solver,
    percent,
    positive_float,
    selection_report,
    validation_kwargs,
    write_plots,
)

__all__ = [
    "train_linear",
    "predict_linear",
    "svm_report",
    "read_for_model",
    "check_width",
    "min_last_feature",
    "add_arguments",
    "bias_value",
    "ZERO_BASED",
    "BINARY",
    "MULTICLASS",
]

#: ``--zero-based`` values -> the readers' ``zero_based``.
ZERO_BASED = {"auto": "auto", "yes": True, "no": False}
#: :func:`check_width` refuses a narrower file when its probability under the training data is below this.
NARROW_FILE_PROBABILITY = 1e-6


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


def bias_value(text):
    """An argparse type of ``--bias``: a finite number > 0 (liblinear's ``-B``; its default
    ``-B -1``, no bias, is leaving the option out)."""
    try:
        return positive_float(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (without --bias no bias term is fitted)") from None


def add_arguments(p):
    """The linear tasks' own ``train`` options: ``--zero-based`` and ``--bias``."""
    g = p.add_argument_group("linear SVM (--task binary|multiclass)")
    g.add_argument(
        "--zero-based",
        choices=tuple(ZERO_BASED),
        default="auto",
        dest="zero_based",
        help="SVMlight index base of --train and --dev: auto (default; 0-based when some index is 0, as "
        "scikit-learn's load_svmlight_file), yes (0-based) or no (1-based, SVMlight); recorded in the model",
    )
    g.add_argument(
        "--bias",
        type=bias_value,
        default=None,
        metavar="B",
        help="append a constant feature B to every example, its weight regularised like the others "
        "(liblinear's -B B; intercept = B * its weight); default: no bias",
    )


def min_last_feature(X) -> int:
    """The smallest, over the rows of ``X``, of the row's last column holding a nonzero value
    (``-1`` when some row has none): a training file's narrowest example, for :func:`check_width`."""
    import scipy.sparse as sp

    X = sp.csr_matrix(X, copy=True)
    X.eliminate_zeros()
    X.sort_indices()
    if X.shape[0] == 0 or np.any(np.diff(X.indptr) == 0):
        return -1
    return int(X.indices[X.indptr[1:] - 1].min())


def _unseen(X, n_features, zero_based, path):
    """``X`` cut (or widened) to ``n_features`` columns, and the count of what was cut."""
    import scipy.sparse as sp

    X = sp.csr_matrix(X)
    info = {"distinct_indices": 0, "nonzeros_dropped": 0, "examples": 0}
    if X.shape[1] > n_features:
        extra = X[:, n_features:].tocoo()
        keep = extra.data != 0
        cols, rows = np.unique(extra.col[keep]), np.unique(extra.row[keep])
        info = {"distinct_indices": int(cols.size), "nonzeros_dropped": int(keep.sum()), "examples": int(rows.size)}
        X = X[:, :n_features]
        if cols.size:
            shift = n_features + (0 if zero_based else 1)
            first = ", ".join(str(int(c) + shift) for c in cols[:5]) + (", ..." if cols.size > 5 else "")
            lo, hi = (0, n_features - 1) if zero_based else (1, n_features)
            warnings.warn(
                f"{path}: {cols.size} feature ind{'ex' if cols.size == 1 else 'ices'} unseen in training ({first}; "
                f"the model knows {lo}..{hi}) ignored: {info['nonzeros_dropped']} nonzero value(s) dropped in "
                f"{info['examples']} example(s)",
                _unseen_warning(),
                stacklevel=3,
            )
    elif X.shape[1] < n_features:
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    return X, info


def _unseen_warning():
    from problems.validation import UnseenFeatureWarning

    return UnseenFeatureWarning


def read_for_model(path, n_features, *, model_zero_based, zero_based=None, model="the model"):
    """Read an SVMlight file for a trained model: in the model's index base, with the features
    the model never saw ignored and counted.

    Parameters
    ----------
    path : str or os.PathLike
    n_features : int
        The model's number of features (columns of the returned ``X``).
    model_zero_based : bool
        The base the model was trained in.
    zero_based : bool, optional
        Force the file's base (``--zero-based yes|no``); None: the model's, unless the file
        has an index 0 and the model is 1-based, which is refused.
    model : str, default="the model"
        What the model is, for messages.

    Returns
    -------
    X : scipy.sparse.csr_matrix of shape (n_samples, n_features)
    y : ndarray of float64 of shape (n_samples,)
    info : dict
        ``zero_based`` (the base used), ``largest_column`` (the file's last column holding a
        nonzero value before the cut, -1 for none) and ``unseen_features`` (``distinct_indices``,
        ``nonzeros_dropped``, ``examples``).

    Raises
    ------
    InputError
        A malformed file (naming the line), or an index 0 in a file read for a 1-based model
        without ``zero_based=True``.
    """
    from problems.io.svmlight import MAX_INDEX, read_svmlight_file

    widest = MAX_INDEX + 1  # every index fits: a file of examples without features is read too
    if zero_based is None:
        X, y, _ = read_svmlight_file(path, widest, zero_based=True)  # column j = index j as written
        if not model_zero_based:
            if X.nnz and X.indices.min() == 0:
                line = None
                try:
                    read_svmlight_file(path, zero_based=False)
                except InputError as exc:  # names the line of the first index 0
                    line = exc.line
                raise InputError(
                    f"feature index 0: the file is 0-based (as scikit-learn's dump_svmlight_file writes), but "
                    f"{model} was trained on 1-based indices, so its columns would be shifted by one against "
                    "the model's; if the training file was 0-based too, train again with --zero-based yes; if "
                    "only this file is, pass --zero-based yes here",
                    path=path,
                    line=line,
                    field="--zero-based",
                )
            X = X[:, 1:]
        base = bool(model_zero_based)
    else:
        X, y, base = read_svmlight_file(path, widest, zero_based=zero_based)
    nonzero = X.data != 0
    largest = int(X.indices[nonzero].max()) if np.any(nonzero) else -1
    X, unseen = _unseen(X, n_features, base, path)
    return X, y, {"zero_based": base, "largest_column": largest, "unseen_features": unseen}


def train_linear(args, *, binary):
    """``--task binary`` / ``--task multiclass``: a :class:`~problems.linear.svm.LinearSVM` on an
    SVMlight file (``--zero-based``, ``--bias``); returns the fitted estimator and its report
    (which records the index base used, the bias and :func:`min_last_feature`)."""
    from problems.io.svmlight import read_svmlight_file
    from problems.linear.svm import LinearSVM

    zero_based = ZERO_BASED[getattr(args, "zero_based", "auto")]
    X, y, base = read_svmlight_file(args.train, zero_based=zero_based)
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
    bias = getattr(args, "bias", None)
    est = LinearSVM(C=args.C, regularizer=args.regularizer, bias=bias, solver=make_solver(args, method=args.method))
    forced = None if zero_based == "auto" else zero_based
    dev_info: dict = {}

    def read_dev(path):
        X_dev, y_dev, info = read_for_model(
            path, X.shape[1], model_zero_based=base, zero_based=forced, model=f"the training file {args.train}"
        )
        dev_info.update(info)
        return X_dev, y_dev

    est.fit(X, y, **validation_kwargs(args, read_dev))
    report = svm_report(est)
    report.update(selection_report(est, source_file=args.dev))
    if args.dev is not None:  # scored after training, as the structured tasks do
        with warnings.catch_warnings():
            if dev_info:  # read for the grid of C already: warned once
                warnings.simplefilter("ignore", _unseen_warning())
            X_dev, y_dev = read_dev(args.dev)
        report["dev"] = {
            "accuracy": percent(est.score(X_dev, y_dev)),
            "n_samples": int(X_dev.shape[0]),
            "unseen_features": dev_info["unseen_features"],
        }
    report.update(
        n_samples=int(X.shape[0]),
        train_accuracy=percent(est.score(X, y)),  # percent, as every CLI score
        zero_based=bool(base),
        bias=bias,
        min_last_feature=min_last_feature(X),
    )
    write_plots(est, args, report)  # --plot DIR: the bounds per iteration, and the path along a grid of C
    return est, report


def _model_zero_based(meta, model_path) -> bool:
    """The index base recorded in a linear model's training report (1-based when absent)."""
    report = meta.get("report")
    value = report.get("zero_based", False) if isinstance(report, dict) else False
    if not isinstance(value, bool):
        raise ModelFormatError(
            f"the training report's zero_based is {type(value).__name__}, expected a boolean",
            path=model_path,
            field="zero_based",
        )
    return value


def check_width(info, n_examples, meta, *, path, model) -> None:
    """Refuse a file narrower than every training example (data of another shape).

    The training report records ``min_last_feature``, the smallest last nonzero column of a
    training example, and ``n_samples``. When every one of the file's ``n_examples`` examples
    stops before it, the chance of that under the training data, at most
    ``(1 / (n_samples + 2)) ** n_examples`` (Laplace's estimate of the share of training
    examples that narrow, none being seen), is below :data:`NARROW_FILE_PROBABILITY`: the file
    has another shape (e.g. 30 dense features given to a 64-feature model). Few examples, or a
    training file with an example as narrow, never refuse: sparse files routinely miss the
    last features.

    Raises
    ------
    InputError
        Naming the file's last index and the model's.
    """
    report = meta.get("report") if isinstance(meta.get("report"), dict) else {}
    narrowest, n_train = report.get("min_last_feature"), report.get("n_samples")
    if (
        not isinstance(narrowest, int)
        or not isinstance(n_train, int)
        or isinstance(narrowest, bool)
        or isinstance(n_train, bool)
        or narrowest < 0
    ):
        return
    largest = info["largest_column"]
    if largest >= narrowest or n_examples * math.log(n_train + 2) < -math.log(NARROW_FILE_PROBABILITY):
        return
    shift = 0 if info["zero_based"] else 1
    file_last = "no feature" if largest < 0 else f"features up to index {largest + shift}"
    raise InputError(
        f"the file's {n_examples} examples have {file_last}, while each of the {n_train} training examples of "
        f"{model} has a feature at index {narrowest + shift} or beyond: the file has another shape than the "
        "model's data",
        path=path,
        field="features",
    )


def predict_linear(model_path, input_path, args=None):
    """Labels of an SVMlight file by a saved LinearSVM, the file's own labels (None when they
    cannot be scored: one label for all examples that is not a class, an unlabelled file), and
    the report's entries (``zero_based``, ``unseen_features``, ``n_samples``)."""
    from problems.linear.svm import LinearSVM
    from problems.model_io import describe_model, load_model
    from problems.validation import UnseenLabelWarning, check_label_overlap, warn_unseen_labels

    meta = load_model(model_path).meta
    est = LinearSVM.load(model_path)
    model = describe_model(model_path, meta)
    option = getattr(args, "zero_based", None)
    forced = None if option in (None, "auto") else ZERO_BASED[option]
    X, y, info = read_for_model(
        input_path,
        est.n_features_in_,
        model_zero_based=_model_zero_based(meta, model_path),
        zero_based=forced,
        model=model,
    )
    truth = [format_label(v) for v in y]
    classes = [format_label(c) for c in est.classes_]
    distinct = set(truth)
    if len(distinct) == 1 and not distinct <= set(classes):
        warnings.warn(
            f"{input_path}: every example has the label {truth[0]}, which is not a class of {model} "
            f"({', '.join(classes)}): taken as an unlabelled file, no accuracy",
            UnseenLabelWarning,
            stacklevel=2,
        )
        truth_out = None
    else:
        check_label_overlap(truth, classes, path=input_path, model=model)
        warn_unseen_labels(truth, classes, path=input_path, stacklevel=2)
        truth_out = truth
    check_width(info, int(X.shape[0]), meta, path=input_path, model=model)
    labels = [format_label(v) for v in est.predict(X)]
    report = {
        "n_samples": int(X.shape[0]),
        "zero_based": info["zero_based"],
        "unseen_features": info["unseen_features"],
    }
    return labels, truth_out, report


#: ``--task binary`` (declares the linear tasks' ``train`` options once, for both).
BINARY = Task(
    "linear SVM, two classes (hinge loss)",
    lambda a: train_linear(a, binary=True),
    predict_linear,
    add_arguments=add_arguments,
)
#: ``--task multiclass``.
MULTICLASS = Task(
    "linear SVM, Crammer-Singer multiclass hinge loss", lambda a: train_linear(a, binary=False), predict_linear
)
