"""Hinge-loss risks of linear classifiers: binary and multiclass (Crammer-Singer).

Both oracles evaluate the empirical risk and one subgradient with one matrix product
each over the data (no Python loop over examples), on dense ``ndarray`` or
``scipy.sparse`` features (stored as CSR). The slope of a linear model's risk is a dense
vector, so the cuts carry dense slopes.

Both also expose the risk in the form (16) of Franc et al. 2012,
``R(w) = sum_i max_j (u_ij + <v_ij, w>)``, restricted to a line ``w + k d``: see
:meth:`BinaryHinge.line_search_pieces`. An exact line search (OCAS / LS-BMRM) consumes it.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from cutplane.cuts import Cut, ExampleCuts, OracleResult
from cutplane.exceptions import InputError
from oracles.linear_inputs import as_features, as_sample_weight, as_vector

__all__ = ["BinaryHinge", "MulticlassHinge", "LinePieces"]


class LinePieces(NamedTuple):
    """The risk on a line: ``R(w + k d) = sum_i max_j (offsets[i, j] + k * slopes[i, j])``.

    Attributes
    ----------
    offsets : ndarray of shape (n_samples, n_pieces)
        Value of each affine piece at ``k = 0`` (the ``1/n`` factor included).
    slopes : ndarray of shape (n_samples, n_pieces)
        Derivative of each piece with respect to ``k`` (the ``1/n`` factor included).
    """

    offsets: np.ndarray
    slopes: np.ndarray


#: Below this fraction of active rows, a sparse ``X^T c`` reads only the active rows.
_ACTIVE_ROWS_SLICE = 0.5


def _rows_transposed_product(X, coef, active):
    """``X^T coef`` (ndarray of shape (n_features,)) where ``coef`` is zero outside ``active``.

    For a CSR ``X`` with few active rows (hinge losses near the optimum are nonzero on a small
    part of the examples, as on the sparse set of ``benchmarks/linear_svm.py``) only those rows
    are read, in the same order, so each output is the same sum with the zero terms left out.
    """
    if sp.issparse(X) and np.count_nonzero(active) < _ACTIVE_ROWS_SLICE * X.shape[0]:
        return np.asarray(X[active].T @ coef[active], dtype=np.float64).ravel()
    return np.asarray(X.T @ coef, dtype=np.float64).ravel()


#: Units of rounding by which a point may differ from ``w0 + kappa d`` and still be read on the line.
_ON_LINE_ULPS = 8.0
#: Lines in a row whose base product may come from the previous line before one is computed afresh.
_FRESH_BASE_EVERY = 32


class _ProductsOnLine:
    """The data products of the points of the last searched line ``w0 + kappa d``, reused.

    An LS-BMRM iteration evaluates the pieces along ``w0 + k d`` (``X w0`` and ``X d``), then the
    risk at the query ``w0 + kappa d``, then the pieces of the next line from the candidate
    ``w0 + k d`` (:class:`cutplane.steps.LineSearchStep` writes both on the line). Products are
    linear, ``X (w0 + kappa d) = X w0 + kappa X d``, so only ``X d`` needs a pass over the data:
    one product per iteration instead of three.

    A point ``v`` is read on the line when ``kappa = (v_j - w0_j) / d_j`` at the largest
    ``|d_j|`` reproduces every coordinate within a few units of rounding,
    ``|v_i - w0_i - kappa d_i| <= 8 eps (|w0_i| + |kappa d_i| + |w0_j| |d_i| / |d_j|)``; the
    reused product then differs from a direct one by the order of a direct product's own
    rounding. Any other point gets a direct product. A line's base product is itself read from the
    previous line, so rounding could add up over a chain of lines: every ``_FRESH_BASE_EVERY``
    (32) lines the base product is computed directly (one more pass over the data).

    Parameters
    ----------
    product : callable
        ``v -> X v`` (or the oracle's product of the same kind), ndarray of shape (dim,) in.
    """

    def __init__(self, product):
        self._product = product
        self._line = None  # (w0, d, X w0, X d, j, |w0_j| / |d_j|)
        self._chained = 0  # lines in a row whose base product was read from the previous line

    def __getstate__(self):
        return {"_product": self._product, "_line": None, "_chained": 0}  # a pickle ships no cached products

    def at(self, v):
        """The product of ``v`` (ndarray of shape (dim,)): from the line when ``v`` is on it."""
        product = self._on_line(v)
        return self._product(v) if product is None else product

    def _on_line(self, v):
        """``X w0 + kappa X d`` when ``v`` is on the last line, else None."""
        line = self._line
        if line is not None:
            w0, d, p0, pd, j, ratio = line
            with np.errstate(all="ignore"):
                kappa = (v[j] - w0[j]) / d[j]
                if np.isfinite(kappa):
                    step = kappa * d
                    err = np.abs(v - w0 - step)
                    tol = _ON_LINE_ULPS * np.finfo(np.float64).eps * (np.abs(w0) + np.abs(step) + ratio * np.abs(d))
                    if np.all(err <= tol):
                        return p0 + kappa * pd
        return None

    def set_line(self, w0, d):
        """Products ``(X w0, X d)`` of a new line, which later :meth:`at` calls may reuse."""
        p0 = self._on_line(w0) if self._chained < _FRESH_BASE_EVERY else None
        if p0 is None:
            p0 = self._product(w0)
            self._chained = 0
        else:
            self._chained += 1
        pd = self._product(d)
        j = int(np.argmax(np.abs(d)))
        if d[j] != 0.0:
            self._line = (w0.copy(), d.copy(), p0, pd, j, abs(float(w0[j])) / abs(float(d[j])))
        else:
            self._line = None
        return p0, pd


class BinaryHinge:
    """Mean hinge loss of a linear classifier without bias (Franc et al. 2012, Example 1.1).

    ``R(w) = (1/n) sum_i max(0, 1 - y_i <x_i, w>)``.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
        Features; sparse input is converted to CSR once.
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights ``s_i`` of the losses: ``R(w) = (1/n) sum_i s_i max(0, 1 - y_i <x_i, w>)``
        (liblinear's per-example cost ``C_i``); None: ones.

    Attributes
    ----------
    dim : int
        ``n_features``, the length of ``w``.
    n_samples : int

    Examples
    --------
    >>> import numpy as np
    >>> oracle = BinaryHinge(np.array([[1.0, 0.0], [0.0, 2.0]]), np.array([1, -1]))
    >>> res = oracle(np.zeros(2))
    >>> res.value, res.cut.slope
    (1.0, array([-0.5,  1. ]))
    """

    supports_line_search = True
    risk_lower_bound = 0.0  # hinge losses are non-negative (the engine's L1 needs a floor)

    def __init__(self, X, y, sample_weight=None):
        self.X = as_features(X, contiguous=False)
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != self.X.shape[0]:
            raise InputError(f"y has shape {y.shape}, expected ({self.X.shape[0]},)", field="y")
        if not np.all(np.isin(y, (-1, 1))):
            raise InputError("binary labels must be -1 or +1", field="y")
        self.y = y.astype(np.float64)
        self.n_samples, self.dim = self.X.shape
        self.sample_weight = as_sample_weight(sample_weight, self.n_samples)
        self._products = _ProductsOnLine(self._product)

    def _product(self, v):
        return np.asarray(self.X @ v, dtype=np.float64).ravel()

    def margins(self, w):
        """``y_i <x_i, w>``, ndarray of shape (n_samples,)."""
        return self.y * (self.X @ as_vector(w, self.dim, "w"))

    def __call__(self, w) -> OracleResult:
        """Risk value and the cut at ``w`` (an ndarray of shape (dim,))."""
        w = as_vector(w, self.dim, "w")
        margins = self.y * self._products.at(w)
        losses = 1.0 - margins
        active = losses > 0.0
        s = self.sample_weight
        if s is None:
            value = float(losses[active].sum()) / self.n_samples
            coef = np.where(active, -self.y / self.n_samples, 0.0)
        else:
            value = float(s[active] @ losses[active]) / self.n_samples
            coef = np.where(active, -self.y * s / self.n_samples, 0.0)
        slope = _rows_transposed_product(self.X, coef, active)
        return OracleResult(value, Cut(slope, value - float(slope @ w)), True, active)

    example_lower_bound = 0.0  # every hinge term is >= 0 (the n-slack floor)

    def example_cuts(self, w) -> ExampleCuts:
        """Each example's hinge ``max(0, 1 - y_i <x_i, w>)`` and its cut at ``w``: slope
        ``-y_i x_i`` (an empty row when the hinge is inactive), offset 1 (0 when inactive)."""
        w = as_vector(w, self.dim, "w")
        losses = 1.0 - self.y * self._products.at(w)
        active = losses > 0.0
        s = np.ones(self.n_samples) if self.sample_weight is None else self.sample_weight
        coef = np.where(active, -self.y * s, 0.0)
        slopes = sp.csr_matrix(sp.diags(coef) @ self.X)
        slopes.eliminate_zeros()
        return ExampleCuts(s * np.maximum(losses, 0.0), s * active, slopes, active)

    def line_search_pieces(self, w, d) -> LinePieces:
        """Form (16) of ``k -> R(w + k d)`` with 2 pieces per example, ``{0, 1 - y<x, w + k d>}``.

        Parameters
        ----------
        w, d : ndarray of shape (dim,)
            Base point and direction.

        Returns
        -------
        LinePieces
            ``offsets`` and ``slopes``, each ndarray of shape (n_samples, 2).
        """
        w = as_vector(w, self.dim, "w")
        d = as_vector(d, self.dim, "d")
        n = self.n_samples
        offsets = np.zeros((n, 2))
        slopes = np.zeros((n, 2))
        xw, xd = self._products.set_line(w, d)
        offsets[:, 1] = (1.0 - self.y * xw) / n
        slopes[:, 1] = -self.y * xd / n
        if self.sample_weight is not None:
            offsets[:, 1] *= self.sample_weight
            slopes[:, 1] *= self.sample_weight
        return LinePieces(offsets, slopes)


class MulticlassHinge:
    """Crammer-Singer multiclass hinge risk with the 0/1 label loss.

    ``R(w) = (1/n) sum_i max_y [Delta(y_i, y) + <w_y - w_{y_i}, x_i>]`` where ``w`` of
    length ``n_classes * n_features`` is read as the (n_classes, n_features) matrix of
    class weight vectors, row-major, and ``Delta(a, b) = [a != b]``.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
    y : array-like of int of shape (n_samples,)
        Class indices in ``0 .. n_classes - 1``.
    n_classes : int, optional
        Number of classes; defaults to ``max(y) + 1``.
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative weights ``s_i`` of the examples' losses (the mean becomes
        ``(1/n) sum_i s_i ...``); None: ones.

    Attributes
    ----------
    dim : int
        ``n_classes * n_features``.
    n_samples, n_features, n_classes : int
    """

    supports_line_search = True
    risk_lower_bound = 0.0

    def __init__(self, X, y, n_classes=None, sample_weight=None):
        self.X = as_features(X, contiguous=False)
        self.n_samples, self.n_features = self.X.shape
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != self.n_samples:
            raise InputError(f"y has shape {y.shape}, expected ({self.n_samples},)", field="y")
        if y.dtype.kind not in "iub":
            if y.dtype.kind != "f" or not np.all(np.isfinite(y)) or np.any(y != np.round(y)):
                raise InputError("class labels must be integer indices 0 .. n_classes - 1", field="y")
        y = y.astype(np.int64)
        if np.any(y < 0):
            raise InputError("class labels must be non-negative indices", field="y")
        k = int(y.max()) + 1 if n_classes is None else int(n_classes)
        if k < 2 or np.any(y >= k):
            raise InputError(f"need n_classes >= 2 and labels < n_classes, got n_classes={k}", field="n_classes")
        self.y = y
        self.sample_weight = as_sample_weight(sample_weight, self.n_samples)
        self.n_classes = k
        self.dim = k * self.n_features
        self._rows = np.arange(self.n_samples)
        self._products = _ProductsOnLine(self._class_scores)

    def _class_scores(self, v):
        return np.asarray(self.X @ v.reshape(self.n_classes, self.n_features).T)

    def _augmented_scores(self, S):
        """``Delta(y_i, y) + <w_y - w_{y_i}, x_i>`` from the class scores ``S = X W^T``, (n_samples, n_classes)."""
        S = S - S[self._rows, self.y][:, None] + 1.0
        S[self._rows, self.y] = 0.0
        return S

    def scores(self, w):
        """Class scores ``<w_y, x_i>``, ndarray of shape (n_samples, n_classes)."""
        W = as_vector(w, self.dim, "w").reshape(self.n_classes, self.n_features)
        return np.asarray(self.X @ W.T)

    def __call__(self, w) -> OracleResult:
        """Risk value and the cut at ``w`` (an ndarray of shape (n_classes * n_features,))."""
        w = as_vector(w, self.dim, "w")
        S = self._augmented_scores(self._products.at(w))
        yhat = np.argmax(S, axis=1)
        n = self.n_samples
        s = self.sample_weight
        if s is None:
            value = float(S[self._rows, yhat].sum()) / n
            r = np.full(n, 1.0 / n)
        else:
            value = float(s @ S[self._rows, yhat]) / n
            r = s / n
        # E = onehot(yhat) - onehot(y), zero rows where yhat == y; slope = X^T E / n.
        E = np.zeros((n, self.n_classes))
        E[self._rows, yhat] = r
        E[self._rows, self.y] -= r
        G = np.asarray(self.X.T @ E)  # (n_features, n_classes)
        slope = np.ascontiguousarray(G.T).ravel()
        return OracleResult(value, Cut(slope, value - float(slope @ w)), True, yhat)

    example_lower_bound = 0.0  # each term is >= 0: the true class is among those maximised over

    def example_cuts(self, w) -> ExampleCuts:
        """Each example's ``max_y Delta(y_i, y) + <w_y - w_{y_i}, x_i>`` and its cut at ``w``:
        slope ``e_{y^} (x) x_i - e_{y_i} (x) x_i`` (empty when ``y^ = y_i``), offset ``Delta``."""
        w = as_vector(w, self.dim, "w")
        S = self._augmented_scores(self._products.at(w))
        yhat = np.argmax(S, axis=1)
        wrong = yhat != self.y
        X = sp.csr_matrix(self.X)
        nf = self.n_features
        counts = np.diff(X.indptr)
        r = np.repeat(np.arange(self.n_samples), counts)  # the example of each stored entry of X
        keep = wrong[r]
        rows, cols, vals = [], [], []
        s = np.ones(self.n_samples) if self.sample_weight is None else self.sample_weight
        for cls, sign in ((yhat, 1.0), (self.y, -1.0)):
            rows.append(r[keep])
            cols.append(np.repeat(cls, counts)[keep] * nf + X.indices[keep])
            vals.append(sign * X.data[keep] * s[r[keep]])
        slopes = sp.csr_matrix(
            (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(self.n_samples, self.dim)
        )
        slopes.sum_duplicates()
        slopes.eliminate_zeros()
        return ExampleCuts(s * S[self._rows, yhat], s * wrong, slopes, yhat)

    def line_search_pieces(self, w, d) -> LinePieces:
        """Form (16) of ``k -> R(w + k d)`` with one piece per class.

        Parameters
        ----------
        w, d : ndarray of shape (n_classes * n_features,)

        Returns
        -------
        LinePieces
            ``offsets`` and ``slopes``, each ndarray of shape (n_samples, n_classes).
        """
        n = self.n_samples
        S, T = self._products.set_line(as_vector(w, self.dim, "w"), as_vector(d, self.dim, "d"))
        offsets = self._augmented_scores(S) / n
        slopes = (T - T[self._rows, self.y][:, None]) / n
        if self.sample_weight is not None:
            offsets *= self.sample_weight[:, None]
            slopes *= self.sample_weight[:, None]
        return LinePieces(offsets, slopes)
