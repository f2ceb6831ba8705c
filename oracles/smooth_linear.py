"""Squared-hinge and logistic risks of linear classifiers, binary and multiclass; the cut is the gradient.

Binary, labels ``y_i`` in {-1, +1} and margins ``m_i = y_i <x_i, w>`` (Teo et al. 2010, Table 5)::

    squared_hinge   loss_i = max(0, 1 - m_i)^2          (liblinear's L2-loss SVM)
    logistic        loss_i = log(1 + exp(-m_i))

Multiclass, ``w`` the row-major (n_classes, n_features) matrix of class weights and class scores
``S_iy = <w_y, x_i>``::

    squared_hinge   loss_i = (max_y [y != y_i] + S_iy - S_iy_i)^2   (the squared Crammer-Singer loss)
    logistic        loss_i = log sum_y exp(S_iy) - S_iy_i            (multinomial logistic, softmax)

``R(w) = (1/n) sum_i s_i loss_i`` with sample weights ``s_i`` (ones by default). Each loss is
convex and non-negative; all but the multiclass squared hinge are differentiable, and its
subgradient at a tie of the max uses the first maximiser, so every cut ``R(w) >= R(v) +
<g, w - v>`` is exact at ``v``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logsumexp

from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError
from oracles.linear_inputs import as_features, as_sample_weight, as_vector

__all__ = ["BinarySmoothLoss", "MulticlassSmoothLoss", "SMOOTH_LOSSES"]

SMOOTH_LOSSES = ("squared_hinge", "logistic")


def _check_loss(loss):
    if loss not in SMOOTH_LOSSES:
        raise InputError(f"must be one of {', '.join(SMOOTH_LOSSES)}, got {loss!r}", field="loss")
    return loss


class BinarySmoothLoss:
    """Mean squared hinge or logistic loss of a linear classifier without bias (module docstring).

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}.
    loss : {"squared_hinge", "logistic"}
    sample_weight : array-like of shape (n_samples,), optional
        Non-negative ``s_i``; None: ones.

    Attributes
    ----------
    dim : int
        ``n_features``.
    n_samples : int

    Examples
    --------
    >>> import numpy as np
    >>> oracle = BinarySmoothLoss(np.eye(2), np.array([1, -1]), "squared_hinge")
    >>> oracle(np.zeros(2)).value
    1.0
    """

    supports_line_search = False
    risk_lower_bound = 0.0

    def __init__(self, X, y, loss, sample_weight=None):
        self.X = as_features(X)
        self.n_samples, self.dim = self.X.shape
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != self.n_samples:
            raise InputError(f"y has shape {y.shape}, expected ({self.n_samples},)", field="y")
        if not np.all(np.isin(y, (-1, 1))):
            raise InputError("binary labels must be -1 or +1", field="y")
        self.y = y.astype(np.float64)
        self.loss = _check_loss(loss)
        s = as_sample_weight(sample_weight, self.n_samples)
        self.sample_weight = np.ones(self.n_samples) if s is None else s

    def __call__(self, w) -> OracleResult:
        """Risk value and the gradient cut at ``w`` (ndarray of shape (dim,))."""
        w = as_vector(w, self.dim)
        m = self.y * np.asarray(self.X @ w, dtype=np.float64).ravel()
        if self.loss == "squared_hinge":
            h = np.maximum(0.0, 1.0 - m)
            losses, dloss = h * h, -2.0 * h
        else:
            losses, dloss = np.logaddexp(0.0, -m), -expit(-m)
        s = self.sample_weight / self.n_samples
        value = float(s @ losses)
        slope = np.asarray(self.X.T @ (s * dloss * self.y), dtype=np.float64).ravel()
        return OracleResult(value, Cut(slope, value - float(slope @ w)), True, None)


class MulticlassSmoothLoss:
    """Mean squared Crammer-Singer or multinomial logistic loss (module docstring).

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
    y : array-like of int of shape (n_samples,)
        Class indices ``0 .. n_classes - 1``.
    n_classes : int
        At least 2.
    loss : {"squared_hinge", "logistic"}
    sample_weight : array-like of shape (n_samples,), optional

    Attributes
    ----------
    dim : int
        ``n_classes * n_features``.
    n_samples, n_features, n_classes : int

    Examples
    --------
    >>> import numpy as np
    >>> oracle = MulticlassSmoothLoss(np.eye(3), np.array([0, 1, 2]), 3, "logistic")
    >>> round(oracle(np.zeros(9)).value, 6) == round(float(np.log(3)), 6)
    True
    """

    supports_line_search = False
    risk_lower_bound = 0.0

    def __init__(self, X, y, n_classes, loss, sample_weight=None):
        self.X = as_features(X)
        self.n_samples, self.n_features = self.X.shape
        y = np.asarray(y)
        if y.shape != (self.n_samples,) or y.dtype.kind not in "iu":
            raise InputError(f"class indices must be {self.n_samples} integers", field="y")
        k = int(n_classes)
        if k < 2 or np.any(y < 0) or np.any(y >= k):
            raise InputError(f"need n_classes >= 2 and labels in 0 .. {k - 1}", field="y")
        self.y = y.astype(np.int64)
        self.n_classes = k
        self.dim = k * self.n_features
        self.loss = _check_loss(loss)
        s = as_sample_weight(sample_weight, self.n_samples)
        self.sample_weight = np.ones(self.n_samples) if s is None else s
        self._rows = np.arange(self.n_samples)

    def __call__(self, w) -> OracleResult:
        """Risk value and the (sub)gradient cut at ``w`` (ndarray of shape (n_classes * n_features,))."""
        w = as_vector(w, self.dim)
        W = w.reshape(self.n_classes, self.n_features)
        S = np.asarray(self.X @ W.T, dtype=np.float64)
        rows, y = self._rows, self.y
        G = np.zeros_like(S)  # d loss_i / d S_iy
        if self.loss == "logistic":
            lse = logsumexp(S, axis=1)
            losses = lse - S[rows, y]
            G[:] = np.exp(S - lse[:, None])
            G[rows, y] -= 1.0
        else:
            A = S - S[rows, y][:, None] + 1.0
            A[rows, y] = 0.0
            yhat = np.argmax(A, axis=1)
            h = A[rows, yhat]  # >= 0: the true class gives 0
            losses = h * h
            G[rows, yhat] += 2.0 * h
            G[rows, y] -= 2.0 * h
        s = self.sample_weight / self.n_samples
        value = float(s @ losses)
        slope = np.ascontiguousarray(np.asarray(self.X.T @ (s[:, None] * G), dtype=np.float64).T).ravel()
        return OracleResult(value, Cut(slope, value - float(slope @ w)), True, None)
