"""Array helpers of :mod:`problems.mkl.kernels` (moved here from that module): input
validation, dot products and squared distances of dense or sparse rows, and the explicit
degree-2 feature map of :meth:`problems.mkl.kernels.PolynomialKernel.feature_map`.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from cutplane.exceptions import InputError

_BLOCK_BYTES = 64 * 2 ** 20          # temporaries of the blocked computations
_MAP_BLOCK_ENTRIES = 2 ** 21         # output entries per block of the sparse quadratic map


def _check_X(X, name="X"):
    """A finite 2-D float64 array or CSR matrix; InputError otherwise."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        X.sum_duplicates()
        data = X.data
    else:
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InputError(f"not a numeric array ({exc})", field=name) from None
        data = X
    if X.ndim != 2:
        raise InputError(f"expected a 2-D array (n_samples, n_features), got shape {X.shape}",
                         field=name)
    if X.shape[1] == 0:
        raise InputError("has no features (shape (n, 0))", field=name)
    if not np.isfinite(data).all():
        bad = np.argwhere(~np.isfinite(X.toarray() if sp.issparse(X) else X))[0]
        raise InputError(f"contains NaN or inf (first at row {bad[0]}, column {bad[1]})",
                         field=name)
    return X


def _check_pair(X, Y):
    X = _check_X(X, "X")
    if Y is None:
        return X, X, True
    Y = _check_X(Y, "Y")
    if Y.shape[1] != X.shape[1]:
        raise InputError(f"Y has {Y.shape[1]} features, X has {X.shape[1]}", field="Y")
    return X, Y, False


def _dot(X, Y):
    """X @ Y.T as a dense ndarray of shape (n_x, n_y)."""
    out = X @ Y.T
    return out.toarray() if sp.issparse(out) else np.asarray(out)


def _sqnorms(X):
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


def _sqdist(X, Y, same, xx=None, yy=None):
    """Squared Euclidean distances, dense (n_x, n_y), clipped at 0, exact 0 on the diagonal."""
    xx = _sqnorms(X) if xx is None else xx
    yy = (xx if same else _sqnorms(Y)) if yy is None else yy
    D = _dot(X, Y)
    D *= -2.0
    D += xx[:, None]
    D += yy[None, :]
    np.maximum(D, 0.0, out=D)
    if same:
        np.fill_diagonal(D, 0.0)
    return D


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


def _quadratic_map(X, g, c, *, sparse, binary, max_bytes):
    """Monomials of degree <= 2 of ``(g <x, y> + c)^2`` (layout in PolynomialKernel.feature_map)."""
    n, d = X.shape
    n_cross = d * (d - 1) // 2
    off_cross = 0 if binary else d            # [squares | cross | linear | constant]
    off_lin = off_cross + n_cross
    n_out = off_lin + d + 1
    lin = math.sqrt(g * g + 2 * g * c) if binary else math.sqrt(2 * g * c)
    if sparse:
        X = sp.csr_matrix(X)
        X.sort_indices()
        p = np.diff(X.indptr).astype(np.int64)
        need = int(((0 if binary else p) + p * (p - 1) // 2 + p + 1).sum()) * 12 + 8 * (n + 1)
    else:
        need = 8 * n * n_out
    if need > max_bytes:
        raise InputError(f"the degree-2 feature map of {n} x {d} inputs needs {need / 2**30:.2f} "
                         f"GiB (> max_bytes = {max_bytes / 2**30:.2f} GiB): subsample, use "
                         f"sparse=True, or use the Gram matrix", field="X")
    if not sparse:
        X = _dense(X)
        iu, ju = np.triu_indices(d, k=1)
        Phi = np.empty((n, n_out))
        step = max(1, _BLOCK_BYTES // (8 * n_out))
        for r in range(0, n, step):
            B = X[r:r + step]
            if not binary:
                Phi[r:r + step, :d] = g * B * B
            np.multiply(B[:, iu], B[:, ju], out=Phi[r:r + step, off_cross:off_lin])
            Phi[r:r + step, off_cross:off_lin] *= math.sqrt(2.0) * g
            Phi[r:r + step, off_lin:off_lin + d] = lin * B
        Phi[:, -1] = c
        return Phi
    # sparse: written straight into CSR order, per row [squares | cross (j < k) | linear | 1]
    n_sq = np.zeros_like(p) if binary else p
    indptr = np.concatenate([[0], np.cumsum(n_sq + p * (p - 1) // 2 + p + 1)])
    indices = np.empty(indptr[-1], dtype=np.int64)
    data = np.empty(indptr[-1])
    step = max(1, int(_MAP_BLOCK_ENTRIES * n // max(indptr[-1], 1)))
    coefs = (g, c, lin, off_cross, off_lin, n_out, d)
    for r in range(0, n, step):
        a, b = indptr[r], indptr[min(r + step, n)]
        _quadratic_rows(X[r:r + step], binary, coefs, indices[a:b], data[a:b])
    Phi = sp.csr_matrix((data, indices, indptr), shape=(n, n_out))
    Phi.has_sorted_indices = True
    return Phi


def _quadratic_rows(X, binary, coefs, indices, data):
    """Fill one block of rows of the sparse quadratic map (all pairs e < f of a row's nonzeros)."""
    g, c, lin, off_cross, off_lin, n_out, d = coefs
    p = np.diff(X.indptr).astype(np.int64)
    ind, val = X.indices.astype(np.int64), X.data
    row = np.repeat(np.arange(X.shape[0]), p)
    e = np.arange(ind.size)
    within = e - X.indptr[row]                          # rank of a nonzero in its row
    cnt = p[row] - within - 1                           # later nonzeros of the same row
    first = np.repeat(e, cnt)
    second = first + 1 + (np.arange(first.size) - np.repeat(np.cumsum(cnt) - cnt, cnt))
    n_sq = np.zeros_like(p) if binary else p
    n_cr = p * (p - 1) // 2
    indptr = np.concatenate([[0], np.cumsum(n_sq + n_cr + p + 1)])
    if not binary:
        pos = indptr[row] + within
        indices[pos], data[pos] = ind, g * val * val
    r1, j, k = row[first], ind[first], ind[second]
    pos = indptr[r1] + n_sq[r1] + (np.arange(first.size) - (np.cumsum(n_cr) - n_cr)[r1])
    indices[pos] = off_cross + j * (d - 1) - j * (j - 1) // 2 + (k - j - 1)
    data[pos] = math.sqrt(2.0) * g * val[first] * val[second]
    pos = indptr[row] + n_sq[row] + n_cr[row] + within
    indices[pos], data[pos] = off_lin + ind, lin * val
    indices[indptr[1:] - 1], data[indptr[1:] - 1] = n_out - 1, c
