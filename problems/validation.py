"""Input checks shared by the estimators, readers and the CLI.

Every check raises one :class:`cutplane.exceptions.InputError` naming the argument (``field``)
and saying what was expected and what was found. Nothing is silently coerced: an array is
converted to float64 only when that loses nothing (numbers, booleans), never from strings.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp

from cutplane.exceptions import InputError

__all__ = [
    "check_features",
    "check_X_y",
    "check_n_features",
    "check_positive",
    "check_int",
    "check_choice",
    "check_bool",
    "check_classification_targets",
    "check_finite_vector",
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
            raise InputError(f"expected a 2-d array of shape (n_samples, n_features), got "
                             f"shape {arr.shape}", field=name)
        X = np.ascontiguousarray(arr, dtype=np.float64)
        data = X
    if X.shape[0] < min_samples:
        raise InputError(f"need at least {min_samples} sample(s), got {X.shape[0]}", field=name)
    if X.shape[1] < 1:
        raise InputError("need at least one feature, got 0", field=name)
    bad = ~np.isfinite(data)
    if bad.any():
        if sp.issparse(X):
            row = int(np.searchsorted(X.indptr, np.flatnonzero(bad)[0], side="right") - 1)
        else:
            row = int(np.argwhere(bad)[0][0])
        raise InputError(f"contains NaN or infinite values ({int(bad.sum())} entries; first in "
                         f"row {row})", field=name)
    return X


def check_finite_vector(v, *, name, length=None):
    """A finite float64 vector of shape (length,)."""
    arr = np.asarray(v)
    if arr.dtype.kind not in "biuf":
        raise InputError(f"expected numbers, got dtype {arr.dtype}", field=name)
    arr = arr.astype(np.float64)
    if arr.ndim != 1 or (length is not None and arr.shape[0] != length):
        want = f"({length},)" if length is not None else "a 1-d array"
        raise InputError(f"expected shape {want}, got {arr.shape}", field=name)
    if not np.all(np.isfinite(arr)):
        raise InputError("contains NaN or infinite values", field=name)
    return arr


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
    if y.dtype.kind == "O" and any(v is None or (isinstance(v, float) and not np.isfinite(v))
                                  for v in y):
        raise InputError("contains missing (None/NaN) labels", field="y")
    return X, y


def check_n_features(X, n_features, *, name="X"):
    """Raise when ``X`` does not have the ``n_features`` columns seen during fit."""
    if X.shape[1] != n_features:
        raise InputError(f"X has {X.shape[1]} features, but the model was fitted with "
                         f"{n_features} features", field=name)
    return X


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
        raise InputError(f"need at least {min_classes} classes, got {classes.shape[0]} "
                         f"({classes.tolist()[:5]})", field="y")
    return classes, y_index.astype(np.int64).ravel()


def check_positive(value, name, *, allow_zero=False):
    """A finite real number > 0 (>= 0 with ``allow_zero``), returned as float."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"must be a real number, got {value!r}", field=name)
    value = float(value)
    if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise InputError(f"must be finite and {bound}, got {value!r}", field=name)
    return value


def check_int(value, name, *, min_value=1, allow_none=False):
    """An integer >= ``min_value`` (or None with ``allow_none``)."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"must be an integer, got {value!r}", field=name)
    if value < min_value:
        raise InputError(f"must be >= {min_value}, got {value}", field=name)
    return int(value)


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
