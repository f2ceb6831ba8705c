"""The multivariate hinge of SVM^perf (Joachims 2005) for F1 and precision@k, with its exact argmax.

For labels ``y_i`` in {-1, +1}, scores ``s_i = <w, x_i>`` and a loss ``Delta(y, y')`` of a whole
labelling ``y'`` (``1 - F1`` or ``1 - precision@k``, both in [0, 1]), the risk is::

    R(w) = max_{y' in Y} [Delta(y, y') + (1/(2n)) sum_i (y'_i - y_i) <w, x_i>]
         = max_{y' in Y} [Delta(y, y') - (1/n) sum_{i: y'_i != y_i} y_i <w, x_i>],

Joachims 2005's ``max_{y'} [Delta(y, y') + <w, Psi(x, y') - Psi(x, y)>]`` with
``Psi(x, y') = (1/(2n)) sum_i y'_i x_i``. The scale matches :class:`oracles.roc_area.ROCAreaHinge`:
there a swapped pair costs its margin over the number of pairs, here a flipped label costs its
margin over the number of examples; and ``R(0) = 1`` for both. ``Y`` is every labelling for F1
(``F1 = 2 tp / (2 tp + fp + fn)``, 0 when ``tp = 0``), and the labellings with exactly ``k``
positives for precision@k (``tp / k``), as in Joachims 2005 (sec. 4.1).

**Exact argmax** (Joachims 2005, Alg. 2). ``Delta`` depends on ``y'`` only through the numbers of
true and false positives ``(a, b)``; for fixed ``(a, b)`` the linear term is largest when the
``a`` positives labelled positive are the ``a`` best-scored positives and the ``b`` negatives
labelled positive are the ``b`` best-scored negatives. After sorting both classes by score, each
``(a, b)`` is scored from prefix sums: ``O(n_+ n_-)`` pairs for F1, ``O(k)`` for precision@k (on
top of the ``O(n log n)`` sort). The cut is exact: ``R(w) = <slope, w> + offset`` at ``w``.

**Lower bound.** For F1, ``y' = y`` gives 0, so ``R >= 0``. For precision@k, ``y`` itself is in
``Y`` only when it has exactly ``k`` positives; otherwise ``R`` is not bounded below (scores
shifted by a constant feature lower every term of the max), so ``risk_lower_bound`` is None: an
``||w||_1`` regulariser may leave the objective unbounded, ``1/2 ||w||^2`` never does.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError
from oracles.linear_inputs import as_features, as_vector

__all__ = ["MultivariateHinge", "MULTIVARIATE_MEASURES"]

MULTIVARIATE_MEASURES = ("f1", "precision_at_k")


@njit(nogil=True, cache=True)
def _best_f1(cum_pos, cum_neg, n_pos, n):
    """``(value, a, b)`` maximising ``1 - F1(a, b) + (cum_neg[b] - (cum_pos[P] - cum_pos[a])) / n``."""
    n_neg = cum_neg.shape[0] - 1
    total = cum_pos[n_pos]
    best, best_a, best_b = -np.inf, 0, 0
    for a in range(n_pos + 1):
        dropped = total - cum_pos[a]
        for b in range(n_neg + 1):
            f1 = 0.0 if a == 0 else 2.0 * a / (a + b + n_pos)
            value = 1.0 - f1 + (cum_neg[b] - dropped) / n
            if value > best:
                best, best_a, best_b = value, a, b
    return best, best_a, best_b


class MultivariateHinge:
    """Joachims 2005's multivariate hinge for F1 or precision@k (module docstring).

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}, at least one positive.
    measure : {"f1", "precision_at_k"}
    k : int, optional
        The ``k`` of precision@k, ``1 <= k <= n_samples``; must be None for F1.

    Attributes
    ----------
    dim : int
        ``n_features``.
    n_samples : int
    risk_lower_bound : float or None
        0 for F1 and for precision@k when ``y`` has exactly ``k`` positives; else None.

    Raises
    ------
    InputError
        Bad labels, no positive, an unknown measure or a bad ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> oracle = MultivariateHinge(np.array([[1.0], [-1.0]]), np.array([1, -1]), "f1")
    >>> oracle(np.zeros(1)).value
    1.0
    """

    supports_line_search = False  # a maximum over labellings: too many pieces for form (16)
    piecewise_linear = True  # LS-BMRM's exact search from values and slopes (line_function)

    def __init__(self, X, y, measure, k=None):
        self.X = as_features(X)
        self.n_samples, self.dim = self.X.shape
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != self.n_samples:
            raise InputError(f"y has shape {y.shape}, expected ({self.n_samples},)", field="y")
        if not np.all(np.isin(y, (-1, 1))):
            raise InputError("binary labels must be -1 or +1", field="y")
        if not np.any(y == 1):
            raise InputError(f"{measure} needs at least one positive example", field="y")
        if measure not in MULTIVARIATE_MEASURES:
            raise InputError(f"must be one of {', '.join(MULTIVARIATE_MEASURES)}, got {measure!r}", field="measure")
        if measure == "f1":
            if k is not None:
                raise InputError("k applies to precision_at_k, not to f1", field="k")
        elif isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= self.n_samples:
            raise InputError(f"must be an integer in [1, {self.n_samples}], got {k!r}", field="k")
        self.measure = measure
        self.k = None if k is None else int(k)
        self.y = y.astype(np.float64)
        self._pos = np.flatnonzero(y == 1)
        self._neg = np.flatnonzero(y == -1)
        exact = measure == "f1" or self._pos.shape[0] == self.k
        self.risk_lower_bound = 0.0 if exact else None

    def argmax(self, w):
        """The most violating labelling ``y'`` at ``w``: ndarray of float64 (n_samples,) in {-1, +1}."""
        w = as_vector(w, self.dim)
        scores = np.asarray(self.X @ w, dtype=np.float64).ravel()
        return self._argmax(scores)[0]

    def _argmax(self, scores):
        n = self.n_samples
        pos = self._pos[np.argsort(-scores[self._pos], kind="mergesort")]
        neg = self._neg[np.argsort(-scores[self._neg], kind="mergesort")]
        cum_pos = np.r_[0.0, np.cumsum(scores[pos])]
        cum_neg = np.r_[0.0, np.cumsum(scores[neg])]
        n_pos, n_neg = pos.shape[0], neg.shape[0]
        if self.measure == "f1":
            _, a, b = _best_f1(cum_pos, cum_neg, n_pos, float(n))
            delta = 1.0 if a == 0 else 1.0 - 2.0 * a / (a + b + n_pos)
        else:
            k = int(self.k or 0)  # set for precision_at_k (checked at construction)
            a_all = np.arange(max(0, k - n_neg), min(k, n_pos) + 1)
            values = 1.0 - a_all / k + (cum_neg[k - a_all] - (cum_pos[n_pos] - cum_pos[a_all])) / n
            a = int(a_all[int(np.argmax(values))])
            b = k - a
            delta = 1.0 - a / k
        labels = -np.ones(n)
        labels[pos[:a]] = 1.0
        labels[neg[:b]] = 1.0
        return labels, delta

    def __call__(self, w) -> OracleResult:
        """Risk value and the cut at ``w`` (ndarray of shape (dim,)); ``argmax`` is the labelling."""
        w = as_vector(w, self.dim)
        scores = np.asarray(self.X @ w, dtype=np.float64).ravel()
        labels, delta = self._argmax(scores)
        coef = (labels - self.y) / (2.0 * self.n_samples)
        value = delta + float(coef @ scores)
        if self.risk_lower_bound is not None:
            value = max(value, 0.0)  # y' = y gives 0: rounding never goes below
        slope = np.asarray(self.X.T @ coef, dtype=np.float64).ravel()
        return OracleResult(value, Cut(slope, value - float(slope @ w)), True, labels)

    def line_function(self, w, d):
        """``phi(k) -> (R(w + k d), d/dk R(w + k d))`` for ``k >= 0``: one argmax per call.

        ``R`` is a maximum of functions linear in ``w`` (one per labelling), so it is piecewise
        linear along the line; the slope is that of the maximising labelling at ``k``
        (``sum_i (y'_i - y_i) <x_i, d> / (2n)``), the derivative off the breakpoints.
        """
        w = as_vector(w, self.dim)
        d = as_vector(d, self.dim, "d")
        s = np.asarray(self.X @ w, dtype=np.float64).ravel()
        ds = np.asarray(self.X @ d, dtype=np.float64).ravel()

        def phi(k):
            u = s + k * ds
            labels, delta = self._argmax(u)
            coef = (labels - self.y) / (2.0 * self.n_samples)
            value = delta + float(coef @ u)
            if self.risk_lower_bound is not None:
                value = max(value, 0.0)
            return value, float(coef @ ds)

        return phi
