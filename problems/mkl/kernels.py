"""Kernels for multiple kernel learning: Gram matrices, explicit feature maps, PSD check.

The base kernels of the MKL experiments (Franc et al. 2012, sec. 1.3; Martins et al. 2011, sec. 4.1, Table 1):
linear, polynomial (the quadratic kernel ``(x.y + 1)^2``), Gaussian and the generalised
B1-spline ``K(x, x') = max(0, 1 - ||x - x'|| / h)``, whose bandwidth ``h`` is chosen for a
target fraction of zeros (:func:`b1spline_bandwidth`). Each kernel is a callable
``k(X, Y=None) -> Gram`` with optional unit-diagonal normalisation
``K(x, y) / sqrt(K(x, x) K(y, y))``. The linear and polynomial kernels (degree 1 and 2) also
give their explicit feature map ``Phi`` with ``Phi(X) Phi(Y)^T == k(X, Y)``, so the same
kernels can become MTL^struct feature groups.

Inputs are dense arrays or scipy sparse matrices of shape (n_samples, n_features).

:func:`check_psd`, :class:`PSDReport` and :class:`NotPSDWarning` live in :mod:`problems.mkl.psd`
and are re-exported here. The array helpers at the end of this module (input checks, dot
products and squared distances of dense or sparse rows, the explicit degree-2 feature map) are
private to it.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from cutplane.exceptions import InputError
from problems.mkl.psd import NotPSDWarning, PSDReport, check_psd

__all__ = [
    "Kernel",
    "LinearKernel",
    "PolynomialKernel",
    "GaussianKernel",
    "B1SplineKernel",
    "b1spline_bandwidth",
    "gram_matrices",
    "check_psd",
    "PSDReport",
    "NotPSDWarning",
]


class Kernel:
    """Base class: ``k(X, Y=None)`` returns the Gram matrix of shape (n_x, n_y).

    Subclasses implement ``_gram(X, Y, same)`` and ``_diag(X)`` (``K(x, x)`` per row);
    the base class validates input and applies the unit-diagonal normalisation.

    Parameters
    ----------
    normalize : bool, default=False
        Return ``K(x, y) / sqrt(K(x, x) K(y, y))`` (unit diagonal). A sample with
        ``K(x, x) = 0`` cannot be normalised and raises :class:`InputError`.
    """

    def __init__(self, normalize=False):
        self.normalize = bool(normalize)

    @property
    def has_feature_map(self) -> bool:
        """Whether :meth:`feature_map` gives finite explicit features (a subclass says so)."""
        return False

    def _gram(self, X, Y, same):
        """The Gram matrix of the checked ``X`` and ``Y`` (``same``: ``Y`` is ``X``); by subclasses."""
        raise NotImplementedError

    def _diag(self, X):
        """``K(x, x)`` for each row of the checked ``X``; by subclasses."""
        raise NotImplementedError

    def __call__(self, X, Y=None):
        X, Y, same = _check_pair(X, Y)
        K = self._gram(X, Y, same)
        if self.normalize:
            dx = self._inv_sqrt_diag(X, "X")
            dy = dx if same else self._inv_sqrt_diag(Y, "Y")
            if sp.issparse(K):
                K = (sp.diags(dx) @ K @ sp.diags(dy)).tocsr()
            else:
                K *= dx[:, None]
                K *= dy[None, :]
            if same and sp.issparse(K):
                K.setdiag(1.0)
            elif same:
                np.fill_diagonal(K, 1.0)
        return K

    def diag(self, X):
        """``K(x, x)`` for each row of X, ndarray of shape (n_samples,) (1 if normalised)."""
        X = _check_X(X)
        return np.ones(X.shape[0]) if self.normalize else self._diag(X)

    def _inv_sqrt_diag(self, X, name):
        d = self._diag(X)
        bad = np.flatnonzero(~(d > 0))
        if bad.size:
            raise InputError(
                f"sample {bad[0]} has K(x, x) = {d[bad[0]]}: cannot normalise {type(self).__name__} to unit diagonal",
                field=name,
            )
        return 1.0 / np.sqrt(d)

    def feature_map(self, X):
        """Explicit features ``Phi(X)`` with ``Phi(X) Phi(Y)^T == k(X, Y)``."""
        raise InputError(
            f"{type(self).__name__} has no finite explicit feature map; use its Gram matrix", field="kernel"
        )

    def _scale_rows(self, Phi, X):
        """Apply the normalisation to a feature map: rows divided by sqrt(K(x, x))."""
        if not self.normalize:
            return Phi
        s = self._inv_sqrt_diag(X, "X")
        return (sp.diags(s) @ Phi).tocsr() if sp.issparse(Phi) else Phi * s[:, None]

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        """Equal when of the same class with equal :meth:`params` (a kernel and its copy made by
        ``sklearn.base.clone`` of an estimator are equal)."""
        return type(other) is type(self) and other.params() == self.params()

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(self.params().items()))))

    def params(self):
        """The constructor parameters, a dict (how a model file saves the kernel)."""
        return {"normalize": self.normalize}


class LinearKernel(Kernel):
    """``K(x, y) = <x, y>``; feature map: the identity (sparse input stays sparse)."""

    has_feature_map = True

    def _gram(self, X, Y, same):
        return _dot(X, Y)

    def _diag(self, X):
        return _sqnorms(X)

    def feature_map(self, X):
        X = _check_X(X)
        return self._scale_rows(X.copy(), X)


class PolynomialKernel(Kernel):
    """``K(x, y) = (gamma <x, y> + coef0) ** degree``.

    Parameters
    ----------
    degree : int, default=2
        ``>= 1``; the default with ``coef0 = 1`` is the quadratic kernel of SPOM Table 1.
    coef0 : float, default=1.0
        ``>= 0`` (then the kernel is PSD and, for degree <= 2, has a real feature map).
    gamma : float, default=1.0
        ``> 0``.
    normalize : bool, default=False
        Unit-diagonal normalisation.
    """

    def __init__(self, degree=2, coef0=1.0, gamma=1.0, normalize=False):
        super().__init__(normalize)
        if int(degree) != degree or degree < 1:
            raise InputError(f"must be an integer >= 1, got {degree}", field="degree")
        if not (math.isfinite(coef0) and coef0 >= 0):
            raise InputError(f"must be finite and >= 0, got {coef0}", field="coef0")
        if not (math.isfinite(gamma) and gamma > 0):
            raise InputError(f"must be finite and > 0, got {gamma}", field="gamma")
        self.degree, self.coef0, self.gamma = int(degree), float(coef0), float(gamma)

    @property
    def has_feature_map(self):
        return self.degree <= 2

    def params(self):
        return {"degree": self.degree, "coef0": self.coef0, "gamma": self.gamma, "normalize": self.normalize}

    def _gram(self, X, Y, same):
        K = _dot(X, Y)
        K *= self.gamma
        K += self.coef0
        return K**self.degree if self.degree > 1 else K

    def _diag(self, X):
        return (self.gamma * _sqnorms(X) + self.coef0) ** self.degree

    def feature_map(self, X, *, sparse=None, binary=False, max_bytes=2 * 2**30):
        """The explicit feature map of degree 1 or 2.

        Degree 2, ``(g <x, y> + c)^2``, maps ``x`` to the monomials
        ``[g x_j^2 (j), sqrt(2) g x_j x_k (j < k), sqrt(2 g c) x_j (j), c]``: dimension
        ``d (d + 1) / 2 + d + 1``. For binary inputs (``x_j^2 = x_j``) the squares merge
        into the linear block, ``sqrt(g^2 + 2 g c) x_j``: dimension ``d (d - 1) / 2 + d + 1``.

        Parameters
        ----------
        X : ndarray or sparse matrix of shape (n_samples, n_features)
        sparse : bool, optional
            CSR output with only the products of nonzeros (default: when X is sparse).
        binary : bool, default=False
            Use the binary layout; the input must then be in {0, 1} (InputError otherwise).
            Not detected automatically: the maps of training and test data must share a layout.
        max_bytes : int, default=2 GiB
            Refuse (InputError) when the output would be larger: subsample, or use the Gram.

        Returns
        -------
        Phi : ndarray or csr_matrix of shape (n_samples, n_out)
        """
        if not self.has_feature_map:
            return super().feature_map(X)
        X = _check_X(X)
        sparse = sp.issparse(X) if sparse is None else bool(sparse)
        g, c = self.gamma, self.coef0
        if self.degree == 1:
            Z = sp.csr_matrix(X) * math.sqrt(g) if sparse else np.sqrt(g) * _dense(X)
            const = np.full((X.shape[0], 1), math.sqrt(c))
            Phi = sp.hstack([Z, sp.csr_matrix(const)], format="csr") if sparse else np.hstack([Z, const])
            return self._scale_rows(Phi, X)
        vals = X.data if sp.issparse(X) else X
        if binary and not np.isin(vals, (0.0, 1.0)).all():
            raise InputError("binary=True needs inputs in {0, 1}", field="X")
        return self._scale_rows(_quadratic_map(X, g, c, sparse=sparse, binary=binary, max_bytes=max_bytes), X)


class GaussianKernel(Kernel):
    """``K(x, y) = exp(-gamma ||x - y||^2)`` (unit diagonal already; no finite feature map).

    SPOM Table 1's ``sigma^2 = 5`` is ``gamma = 1 / (2 sigma^2) = 0.1``.
    """

    def __init__(self, gamma=1.0, normalize=False):
        super().__init__(normalize)
        if not (math.isfinite(gamma) and gamma > 0):
            raise InputError(f"must be finite and > 0, got {gamma}", field="gamma")
        self.gamma = float(gamma)

    def params(self):
        return {"gamma": self.gamma, "normalize": self.normalize}

    def _gram(self, X, Y, same):
        D = _sqdist(X, Y, same)
        D *= -self.gamma
        return np.exp(D, out=D)

    def _diag(self, X):
        return np.ones(X.shape[0])


class B1SplineKernel(Kernel):
    """Generalised B1-spline ``K(x, y) = max(0, 1 - ||x - y|| / h)`` (SPOM sec. 4.1).

    Compactly supported, so its Gram matrix is mostly zeros for a small ``h``; choose ``h``
    with :meth:`for_sparsity`. Unit diagonal already.

    Beware: ``(1 - r)_+`` of the Euclidean distance is positive definite only in one
    dimension (Askey's condition for ``(1 - r)_+^nu`` in R^d is ``nu >= (d + 1) / 2``), so
    Gram matrices of this kernel can have negative eigenvalues; run :func:`check_psd` before
    handing one to an SVM solver (it does happen on 2-D data and on the OCR letters at 95%
    zeros).

    Parameters
    ----------
    h : float
        Bandwidth, ``> 0``: pairs at distance ``>= h`` give 0.
    sparse : bool, default=False
        Return the Gram matrix as a scipy CSR matrix, built by blocks of rows so the dense
        matrix never exists.
    normalize : bool, default=False
        Accepted for a uniform interface (a no-op: the diagonal is 1).
    """

    def __init__(self, h, sparse=False, normalize=False):
        super().__init__(normalize)
        if not (math.isfinite(h) and h > 0):
            raise InputError(f"must be finite and > 0, got {h}", field="h")
        self.h, self.sparse = float(h), bool(sparse)

    @classmethod
    def for_sparsity(cls, X, sparsity=0.95, *, n_pairs=200_000, seed=None, sparse=False):
        """The kernel with ``h`` from :func:`b1spline_bandwidth` on ``X``."""
        return cls(b1spline_bandwidth(X, sparsity, n_pairs=n_pairs, seed=seed), sparse=sparse)

    def params(self):
        return {"h": self.h, "sparse": self.sparse, "normalize": self.normalize}

    def _block(self, X, Y, same, xx, yy):
        D = _sqdist(X, Y, same, xx, yy)
        np.sqrt(D, out=D)
        D *= -1.0 / self.h
        D += 1.0
        return np.maximum(D, 0.0, out=D)

    def _gram(self, X, Y, same):
        xx, yy = _sqnorms(X), _sqnorms(Y)
        if not self.sparse:
            return self._block(X, Y, same, xx, yy)
        step = max(1, _BLOCK_BYTES // (8 * max(Y.shape[0], 1)))
        blocks = []
        for r in range(0, X.shape[0], step):
            K = self._block(X[r : r + step], Y, False, xx[r : r + step], yy)
            if same:
                idx = np.arange(r, min(r + step, X.shape[0]))
                K[idx - r, idx] = 1.0
            blocks.append(sp.csr_matrix(K))
        return sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, Y.shape[0]))

    def _diag(self, X):
        return np.ones(X.shape[0])


def b1spline_bandwidth(X, sparsity=0.95, *, n_pairs=200_000, seed=None):
    """``h`` such that a fraction ``sparsity`` of the B1-spline Gram matrix of X is zero.

    The entry for (x_i, x_j) is zero iff ``||x_i - x_j|| >= h``, so ``h`` is the distance
    quantile at ``1 - sparsity`` over all ordered pairs (the diagonal included). With at most
    ``n_pairs`` pairs all are used, else ``n_pairs`` pairs drawn uniformly. Distances with
    ties (binary data) make only some fractions reachable: the reachable one nearest the
    target is taken.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
    sparsity : float, default=0.95
        Target fraction of zeros, in (0, 1).
    n_pairs : int, default=200000
        Sample size of pairwise distances.
    seed : int or numpy Generator, optional
        Randomness of the sample.

    Returns
    -------
    h : float
    """
    X = _check_X(X)
    if not (0.0 < sparsity < 1.0):
        raise InputError(f"must be in (0, 1), got {sparsity}", field="sparsity")
    n = X.shape[0]
    if n < 2:
        raise InputError("needs at least 2 samples", field="X")
    if n * n <= n_pairs:
        d = np.sqrt(_sqdist(X, X, True)).ravel()
    else:
        rng = np.random.default_rng(seed)
        i, j = rng.integers(0, n, size=(2, int(n_pairs)))
        diff = X[i] - X[j]
        d = np.sqrt(
            np.asarray(diff.multiply(diff).sum(axis=1)).ravel()
            if sp.issparse(diff)
            else np.einsum("ij,ij->i", diff, diff)
        )
    values, counts = np.unique(d, return_counts=True)
    below = np.concatenate([[0], np.cumsum(counts)[:-1]])  # pairs strictly closer than value
    zeros = 1.0 - below / d.size
    ok = values > 0
    if not ok.any():
        raise InputError("all samples coincide: no bandwidth can give zeros", field="X")
    best = np.argmin(np.where(ok, np.abs(zeros - sparsity), np.inf))
    return float(values[best])


def gram_matrices(kernels, X, Y=None):
    """``[k(X, Y) for k in kernels]``: one Gram matrix (n_x, n_y) per kernel (dense or CSR)."""
    if callable(kernels):
        raise InputError("expected a list of kernels, got a single callable", field="kernels")
    out = []
    for i, k in enumerate(kernels):
        if not callable(k):
            raise InputError(f"kernel {i} is not callable ({type(k).__name__})", field="kernels")
        out.append(k(X, Y))
    return out


# ------------------------------------------------------------------------ array helpers
_BLOCK_BYTES = 64 * 2**20  # temporaries of the blocked computations
_MAP_BLOCK_ENTRIES = 2**21  # output entries per block of the sparse quadratic map


def _check_X(X, name="X"):
    """A finite 2-D float64 array or CSR matrix; InputError otherwise (complex numbers too:
    scikit-learn refuses them, and a cast would drop their imaginary part)."""
    if np.iscomplexobj(X) if not sp.issparse(X) else X.dtype.kind == "c":
        raise InputError("Complex data not supported", field=name)
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
        raise InputError(f"expected a 2-D array (n_samples, n_features), got shape {X.shape}", field=name)
    if X.shape[1] == 0:
        raise InputError("has no features (shape (n, 0))", field=name)
    if not np.isfinite(data).all():
        bad = np.argwhere(~np.isfinite(X.toarray() if sp.issparse(X) else X))[0]
        raise InputError(f"contains NaN or inf (first at row {bad[0]}, column {bad[1]})", field=name)
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
    off_cross = 0 if binary else d  # [squares | cross | linear | constant]
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
        raise InputError(
            f"the degree-2 feature map of {n} x {d} inputs needs {need / 2**30:.2f} "
            f"GiB (> max_bytes = {max_bytes / 2**30:.2f} GiB): subsample, use "
            f"sparse=True, or use the Gram matrix",
            field="X",
        )
    if not sparse:
        X = _dense(X)
        iu, ju = np.triu_indices(d, k=1)
        Phi = np.empty((n, n_out))
        step = max(1, _BLOCK_BYTES // (8 * n_out))
        for r in range(0, n, step):
            B = X[r : r + step]
            if not binary:
                Phi[r : r + step, :d] = g * B * B
            np.multiply(B[:, iu], B[:, ju], out=Phi[r : r + step, off_cross:off_lin])
            Phi[r : r + step, off_cross:off_lin] *= math.sqrt(2.0) * g
            Phi[r : r + step, off_lin : off_lin + d] = lin * B
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
        _quadratic_rows(X[r : r + step], binary, coefs, indices[a:b], data[a:b])
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
    within = e - X.indptr[row]  # rank of a nonzero in its row
    cnt = p[row] - within - 1  # later nonzeros of the same row
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
