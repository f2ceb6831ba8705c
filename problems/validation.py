"""Input checks shared by the estimators, readers and the CLI.

Every check raises one :class:`cutplane.exceptions.InputError` naming the argument (``field``)
and saying what was expected and what was found. Nothing is silently coerced: an array is
converted to float64 only when that loses nothing (numbers, booleans), never from strings.

Predict-time policy for what training never saw (shared by the estimators and the CLI):

- *features* unseen in training are ignored (their weight is zero), as in CRF++; see
  :meth:`problems.sequence.feature_index.FeatureIndex.transform`;
- a *label* unseen in training that appears in gold labels used for evaluation is scored as
  wrong (no model can predict it) and never raises: :func:`warn_unseen_labels` emits one
  :class:`UnseenLabelWarning` listing them (with counts), and
  :meth:`problems.sequence.feature_index.LabelAlphabet.encode_unseen` encodes them as ``-1``;
- a label outside a fixed label set in *training* data is an error
  (:meth:`problems.sequence.feature_index.LabelAlphabet.encode`);
- gold labels of which at least half of the distinct values were never seen in training are
  data of another task, refused by the CLI (:func:`check_label_overlap`); the SVMlight
  feature indices beyond the model's are ignored and counted, with an
  :class:`UnseenFeatureWarning` (:mod:`problems.linear.command`).
"""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from cutplane.exceptions import InputError, InputTypeError

__all__ = [
    "validate_features",
    "check_target",
    "UnseenLabelWarning",
    "UnseenFeatureWarning",
    "warn_unseen_labels",
    "check_label_overlap",
    "check_consistent_length",
    "check_sequences",
    "check_fraction",
    "check_features",
    "check_X_y",
    "check_positive",
    "check_int",
    "check_choice",
    "check_bool",
    "check_classification_targets",
]


def check_features(X, *, name="X", accept_sparse=True, min_samples=1):
    """A 2-d float64 feature matrix: dense C-ordered ndarray or CSR, finite, non-empty.

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n_samples, n_features)
    name : str
        Argument name used in error messages.
    accept_sparse : bool
        When False a sparse ``X`` is an error.
    min_samples : int
        Minimum number of rows.

    Returns
    -------
    ndarray of shape (n_samples, n_features) or scipy.sparse.csr_matrix
    """
    if sp.issparse(X):
        if not accept_sparse:
            raise InputError("sparse input is not supported here; pass a dense array", field=name)
        if X.ndim != 2:
            raise InputError(f"expected a 2-d matrix, got {X.ndim} dimension(s)", field=name)
        if X.dtype.kind not in "biuf":
            raise InputError(f"expected numbers, got dtype {X.dtype}", field=name)
        X = sp.csr_matrix(X, dtype=np.float64)
        data = X.data
    else:
        arr = np.asarray(X)
        if arr.dtype.kind not in "biuf":
            raise InputError(f"expected numbers, got dtype {arr.dtype}", field=name)
        if arr.ndim != 2:
            raise InputError(
                f"expected a 2-d array of shape (n_samples, n_features), got shape {arr.shape}", field=name
            )
        X = np.ascontiguousarray(arr, dtype=np.float64)
        data = X
    if X.shape[0] < min_samples:
        raise InputError(f"need at least {min_samples} sample(s), got {X.shape[0]}", field=name)
    if X.shape[1] < 1:
        raise InputError("need at least one feature, got 0", field=name)
    _check_finite_rows(X, data, name)
    return X


def _check_finite_rows(X, data, name):
    """Raise naming the first row of ``X`` (ndarray or CSR; ``data`` its values) holding NaN or inf."""
    bad = ~np.isfinite(data)
    if bad.any():
        if sp.issparse(X):
            row = int(np.searchsorted(X.indptr, np.flatnonzero(bad)[0], side="right") - 1)
        else:
            row = int(np.argwhere(bad)[0][0])
        raise InputError(f"contains NaN or infinite values ({int(bad.sum())} entries; first in row {row})", field=name)


def validate_features(estimator, X, *, reset, accept_sparse=True, name="X"):
    """The samples of a scikit-learn estimator, converted and checked the way scikit-learn does.

    scikit-learn's own :func:`sklearn.utils.validation.validate_data` converts ``X`` (lists,
    pandas frames, numeric object arrays, every sparse format to CSR) and records or checks
    ``n_features_in_`` (and ``feature_names_in_``); its messages are those scikit-learn's
    estimator checks look for. What this adds: the package's error types
    (:class:`~cutplane.exceptions.InputError`, :class:`~cutplane.exceptions.InputTypeError`
    where scikit-learn raises a TypeError), strings refused rather than parsed as numbers
    (module docstring), and the package's messages for the wrong number of dimensions and
    for NaN / infinite entries (naming the first row).

    Parameters
    ----------
    estimator : BaseEstimator
        The estimator being fitted or applied.
    X : array-like or scipy sparse matrix of shape (n_samples, n_features)
    reset : bool
        True in ``fit`` (records ``n_features_in_``), False after it (checks ``X`` against
        it; the error says both numbers).
    accept_sparse : bool, default=True
        False: a sparse ``X`` is refused with a message saying so.
    name : str, default="X"
        Argument name in error messages.

    Returns
    -------
    ndarray of float64 of shape (n_samples, n_features), C-ordered, or scipy.sparse.csr_matrix

    Raises
    ------
    InputError
        Not a 2-d array of numbers (the message of a 1-d array says how to reshape it), complex
        numbers, no samples or no features, NaN or infinite entries, or another number of
        features than in ``fit``.
    InputTypeError
        An entry that is not a number (e.g. a dict in an object array), or sparse input with
        ``accept_sparse=False``.
    """
    from sklearn.utils.validation import validate_data

    if not sp.issparse(X):
        _refuse_non_numbers(X, name)
    try:
        X = validate_data(
            estimator,
            X,
            reset=reset,
            accept_sparse="csr" if accept_sparse else False,
            dtype=np.float64,
            order="C",
            ensure_all_finite=False,
        )
    except TypeError as exc:
        raise InputTypeError(str(exc), field=name) from None
    except ValueError as exc:
        raise InputError(str(exc), field=name) from None
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        data = X.data
    else:
        data = X
    _check_finite_rows(X, data, name)
    return X


def _refuse_non_numbers(X, name):
    """The package's messages for dense input that is not a 2-d array of numbers (strings
    are refused, not parsed); what numpy cannot shape is left to scikit-learn's message."""
    try:
        arr = X if isinstance(X, np.ndarray) else np.asarray(X)
    except (TypeError, ValueError):  # ragged nesting, objects numpy cannot hold: scikit-learn says
        return
    if arr.ndim != 2:
        hint = ""
        if arr.ndim == 1:
            hint = (
                ". Reshape your data: X.reshape(-1, 1) if it has a single feature, "
                "X.reshape(1, -1) if it is a single sample"
            )
        raise InputError(
            f"expected a 2-d array of shape (n_samples, n_features), got shape {arr.shape}{hint}", field=name
        )
    if arr.dtype.kind in "USV":
        raise InputError(f"expected numbers, got dtype {arr.dtype}", field=name)
    if arr.dtype.kind == "O":
        text = next((v for v in arr.flat if isinstance(v, (str, bytes))), None)
        if text is not None:
            raise InputError(f"expected numbers, got the string {_short(text)} in an object array", field=name)


def check_target(y, *, n_samples=None, owner="the estimator"):
    """Labels ``y`` of a classifier as scikit-learn converts them: 1-d, a column vector raveled.

    Parameters
    ----------
    y : array-like of shape (n_samples,) or (n_samples, 1)
        A column vector is raveled with scikit-learn's
        :class:`~sklearn.exceptions.DataConversionWarning`.
    n_samples : int, optional
        The number of samples of ``X``; another length is an error.
    owner : str
        The estimator's name, for the message when ``y`` is None.

    Returns
    -------
    ndarray of shape (n_samples,)

    Raises
    ------
    InputError
        ``y`` None, sparse, complex, not 1-d (after raveling a column), of another length, or
        with NaN / infinite / None labels.
    """
    if y is None:
        raise InputError(f"{owner} requires y to be passed, but the target y is None", field="y")
    if sp.issparse(y):
        raise InputError("expected a 1-d array of labels, got a sparse matrix", field="y")
    y = np.asarray(y)
    if y.dtype.kind == "c":
        raise InputError("Complex data not supported as labels", field="y")
    if y.ndim == 2 and y.shape[1] == 1:
        from sklearn.utils.validation import column_or_1d

        y = column_or_1d(y, warn=True)  # scikit-learn's DataConversionWarning
    if y.ndim != 1:
        raise InputError(f"y must be 1-d, got shape {y.shape}", field="y")
    if n_samples is not None and y.shape[0] != n_samples:
        raise InputError(f"X has {n_samples} samples but y has {y.shape[0]}", field="y")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise InputError("contains NaN or infinite values", field="y")
    if y.dtype.kind == "O" and any(v is None or (isinstance(v, float) and not np.isfinite(v)) for v in y):
        raise InputError("contains missing (None/NaN) labels", field="y")
    return y


def check_X_y(X, y, *, accept_sparse=True):
    """Features and 1-d targets with matching numbers of rows.

    Returns
    -------
    X : ndarray or csr_matrix of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
    """
    X = check_features(X, accept_sparse=accept_sparse)
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        raise InputError(f"y must be 1-d, got shape {y.shape}; use y.ravel()", field="y")
    if y.ndim != 1:
        raise InputError(f"y must be 1-d, got shape {y.shape}", field="y")
    if y.shape[0] != X.shape[0]:
        raise InputError(f"X has {X.shape[0]} samples but y has {y.shape[0]}", field="y")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise InputError("contains NaN or infinite values", field="y")
    if y.dtype.kind == "O" and any(v is None or (isinstance(v, float) and not np.isfinite(v)) for v in y):
        raise InputError("contains missing (None/NaN) labels", field="y")
    return X, y


def check_classification_targets(y, *, min_classes=2):
    """Class labels and the encoding of ``y`` as indices into them.

    Returns
    -------
    classes : ndarray of shape (n_classes,)
        Sorted unique labels.
    y_index : ndarray of int64 of shape (n_samples,)
    """
    if y.dtype.kind == "f" and np.any(y != np.round(y)):
        raise InputError("continuous targets are not class labels", field="y")
    try:
        classes, y_index = np.unique(y, return_inverse=True)
    except TypeError:
        raise InputError("labels of mixed types cannot be ordered", field="y") from None
    if classes.shape[0] < min_classes:
        k = classes.shape[0]
        raise InputError(
            f"need at least {min_classes} classes, got {k} class{'' if k == 1 else 'es'} ({classes.tolist()[:5]})",
            field="y",
        )
    return classes, y_index.astype(np.int64).ravel()


def check_positive(value, name, *, allow_zero=False, max_value=None):
    """A finite real number > 0 (>= 0 with ``allow_zero``; <= ``max_value`` if given), as float.

    Strings, booleans and None are refused (no ``float("1e3")`` coercion).
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"must be a real number, got {_short(value)}", field=name)
    value = float(value)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise InputError(f"must be finite and {bound}, got {value!r}", field=name)
    if max_value is not None and value > max_value:
        raise InputError(f"must be <= {max_value}, got {value!r}", field=name)
    return value


def check_fraction(value, name, *, allow_zero=False, allow_one=True):
    """A real number in (0, 1] (bounds adjustable), returned as float."""
    value = check_positive(value, name, allow_zero=allow_zero, max_value=1.0)
    if value == 1.0 and not allow_one:
        raise InputError("must be < 1, got 1.0", field=name)
    return value


def check_int(value, name, *, min_value=1, max_value=None, allow_none=False):
    """An integer in [``min_value``, ``max_value``] (or None with ``allow_none``).

    Floats (even ``3.0``), strings and booleans are refused; numpy integers are accepted.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"must be an integer, got {_short(value)}", field=name)
    if value < min_value:
        raise InputError(f"must be >= {min_value}, got {value}", field=name)
    if max_value is not None and value > max_value:
        raise InputError(f"must be <= {max_value}, got {value}", field=name)
    return int(value)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


def check_consistent_length(*arrays, names=None):
    """Raise unless all arguments have the same ``len`` (numbers of samples / sentences).

    Parameters
    ----------
    *arrays : sequences or arrays (sparse matrices count rows)
    names : sequence of str, optional
        Argument names for the error message.

    Returns
    -------
    int
        The common length.
    """
    names = list(names) if names is not None else [f"argument {i}" for i in range(len(arrays))]
    lengths = []
    for a, n in zip(arrays, names):
        try:
            lengths.append(a.shape[0] if hasattr(a, "shape") and len(a.shape) else len(a))
        except TypeError:
            raise InputError(f"expected a sequence, got {type(a).__name__}", field=n) from None
    if len(set(lengths)) > 1:
        detail = ", ".join(f"{n}: {k}" for n, k in zip(names, lengths))
        first_bad = next(i for i, k in enumerate(lengths) if k != lengths[0])
        raise InputError(f"inconsistent numbers of samples ({detail})", field=names[first_bad])
    return lengths[0] if lengths else 0


#: Characters a cell of a column file cannot hold: the column separators (CRF++'s: space and tab)
#: and line ends.
_CELL_BREAKS = " \t\n\r"


def check_sequences(X, y=None, *, name="X", min_sequences=1):
    """Sentences as lists of token rows (tuples of str) and, when given, matching label lists.

    Checks what the sequence estimators need: a non-empty list of non-empty sentences; each
    token a row of str with the same number of columns within a sentence (and no space, tab or
    line end inside a cell, which could not be written back to a column file; other whitespace,
    such as the U+3000 tokens of CRF++'s ``example/seg``, is a character like any other); labels
    str, one per token.

    Returns
    -------
    X : list of list of tuple of str
    y : list of list of str or None
    """
    if isinstance(X, (str, bytes)) or not hasattr(X, "__len__") or sp.issparse(X):
        raise InputError("expected a list of sentences (lists of token rows)", field=name)
    if len(X) < min_sequences:
        raise InputError(f"need at least {min_sequences} sentence(s), got {len(X)}", field=name)
    out = []
    for i, sent in enumerate(X):
        if isinstance(sent, (str, bytes)) or not hasattr(sent, "__len__"):
            raise InputError(f"sentence {i} is {type(sent).__name__}, expected a list of token rows", field=name)
        if len(sent) == 0:
            raise InputError(f"sentence {i} has no tokens (sequences of length 0 are not allowed)", field=name)
        rows = []
        width = None
        for t, row in enumerate(sent):
            cells = (row,) if isinstance(row, str) else row
            if not isinstance(cells, (tuple, list)) or not all(isinstance(c, str) for c in cells):
                raise InputError(f"sentence {i}, token {t}: expected a tuple of str, got {_short(row)}", field=name)
            if width is None:
                width = len(cells)
            elif len(cells) != width:
                raise InputError(
                    f"sentence {i}, token {t}: {len(cells)} columns, the sentence's first token has {width}", field=name
                )
            if width == 0 or any((not c) or any(ch in _CELL_BREAKS for ch in c) for c in cells):
                raise InputError(
                    f"sentence {i}, token {t}: empty cell, or whitespace that separates columns (space, tab, "
                    f"line end) inside a cell {_short(cells)}",
                    field=name,
                )
            rows.append(tuple(cells))
        out.append(rows)
    if y is None:
        return out, None
    check_consistent_length(out, y, names=(name, "y"))
    labels = []
    for i, (sent, lab) in enumerate(zip(out, y)):
        if isinstance(lab, (str, bytes)) or not hasattr(lab, "__len__"):
            raise InputError(f"labels of sentence {i} must be a list of str, got {_short(lab)}", field="y")
        if len(lab) != len(sent):
            raise InputError(f"sentence {i} has {len(sent)} tokens but {len(lab)} labels", field="y")
        if not all(isinstance(v, str) and v and not any(ch in _CELL_BREAKS for ch in v) for v in lab):
            raise InputError(
                f"labels of sentence {i} must be non-empty str without spaces, tabs or line ends", field="y"
            )
        labels.append(list(lab))
    return out, labels


class UnseenLabelWarning(UserWarning):
    """Gold labels used for evaluation include labels never seen in training (scored as wrong)."""


def warn_unseen_labels(gold, known, *, path=None, stacklevel=2):
    """Warn once about gold labels outside ``known``; they will be scored as wrong.

    Parameters
    ----------
    gold : sequence of sequences of str
        Gold labels per sentence (or a flat sequence of labels).
    known : collection of str
        Labels of the training data (e.g. ``LabelAlphabet.labels``).
    path : str, optional
        File the gold labels came from, named in the message.

    Returns
    -------
    dict of str to int
        Unseen label -> number of tokens carrying it (empty when all are known).
    """
    known = set(known)
    counts: dict = {}
    for seq in gold:
        for lab in [seq] if isinstance(seq, str) else seq:
            if lab not in known:
                counts[lab] = counts.get(lab, 0) + 1
    if counts:
        import warnings

        listed = ", ".join(f"{lab!r} ({n})" for lab, n in sorted(counts.items(), key=lambda kv: str(kv[0])))
        where = f"{path}: " if path is not None else ""
        warnings.warn(
            f"{where}{sum(counts.values())} gold token(s) carry labels unseen in training, scored as wrong: {listed}",
            UnseenLabelWarning,
            stacklevel=stacklevel,
        )
    return counts


class UnseenFeatureWarning(UserWarning):
    """Input to a trained model holds features never seen in training (ignored, and counted)."""


def _listed(values, limit=8) -> str:
    shown = [repr(v) if isinstance(v, str) else str(v) for v in values[:limit]]
    return ", ".join(shown) + (f", ... ({len(values)} in all)" if len(values) > limit else "")


def check_label_overlap(gold, known, *, path=None, model=None) -> None:
    """Refuse gold labels of another task: at least half of their distinct values unseen.

    A few labels unseen in training are scored as wrong (:func:`warn_unseen_labels`); when at
    least half of the distinct gold labels are unknown to the model, the file holds data of
    another task (a binary model's ``-1 / +1`` against ``0 / 1`` labels, a chunker against
    named-entity tags, ...) and no score of it would mean anything.

    Parameters
    ----------
    gold : sequence of sequences of labels, or a flat sequence of labels
    known : collection
        The model's labels.
    path : str or os.PathLike, optional
        The file of ``gold``, named in the message.
    model : str, optional
        What the model is (e.g. ``"the model m.npz (task 'sequence')"``), named in the message.

    Raises
    ------
    InputError
        Naming the file's labels unseen in training and the model's labels.
    """
    known_set = set(known)
    seen: dict = {}
    for seq in gold:
        for lab in [seq] if isinstance(seq, (str, numbers.Number)) else seq:
            seen[lab] = None
    labels = list(seen)
    unseen = [lab for lab in labels if lab not in known_set]
    if labels and 2 * len(unseen) >= len(labels):
        who = model or "the model"
        raise InputError(
            f"{len(unseen)} of the {len(labels)} distinct labels of this file were never seen in training "
            f"({_listed(sorted(unseen, key=str))}); {who} knows the labels {_listed(sorted(known_set, key=str))}: "
            "the file holds data of another task",
            path=path,
            field="labels",
        )


def check_choice(value, name, choices):
    """``value`` when it is one of ``choices``; the error lists them."""
    if not isinstance(value, str) or value not in choices:
        raise InputError(f"must be one of {sorted(choices)}, got {value!r}", field=name)
    return value


def check_bool(value, name):
    """A Python or numpy boolean, returned as bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"must be True or False, got {value!r}", field=name)
    return bool(value)
