"""Checked inputs of the linear risks: features as float64 dense or CSR, vectors, sample weights."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cutplane.exceptions import InputError

__all__ = ["as_features", "as_vector", "as_sample_weight"]


def as_features(X, *, contiguous=True):
    """Float64 dense array or CSR matrix, checked for shape and finiteness.

    Parameters
    ----------
    X : array-like or scipy sparse matrix of shape (n_samples, n_features)
    contiguous : bool, default=True
        A dense ``X`` C-ordered (copied when it is not); False: in the layout given.

    Returns
    -------
    ndarray or scipy.sparse.csr_matrix of shape (n_samples, n_features)
    """
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        data = X.data
    else:
        X = np.ascontiguousarray(X, dtype=np.float64) if contiguous else np.asarray(X, dtype=np.float64)
        data = X
    if X.ndim != 2:
        raise InputError(f"expected a 2-d array, got {X.ndim} dimension(s)", field="X")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise InputError(f"X is empty (shape {X.shape})", field="X")
    if not np.all(np.isfinite(data)):
        raise InputError("X contains NaN or infinite values", field="X")
    return X


def as_vector(w, dim, name="w"):
    """``w`` as float64 of shape (dim,), else an :class:`InputError` naming ``name``."""
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (dim,):
        raise InputError(f"expected shape ({dim},), got {w.shape}", field=name)
    return w


def as_sample_weight(sample_weight, n_samples, name="sample_weight"):
    """Non-negative finite weights of shape (n_samples,), not all zero; None stays None.

    Returns
    -------
    ndarray of float64, shape (n_samples,), or None
    """
    if sample_weight is None:
        return None
    s = np.asarray(sample_weight, dtype=np.float64)
    if s.ndim == 0:
        s = np.full(n_samples, float(s))
    if s.shape != (n_samples,):
        raise InputError(f"has shape {s.shape}, expected ({n_samples},)", field=name)
    if not np.all(np.isfinite(s)) or np.any(s < 0):
        raise InputError("weights must be finite and non-negative", field=name)
    if not np.any(s > 0):
        raise InputError("all weights are zero", field=name)
    return s
