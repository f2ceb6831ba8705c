"""The ROC-area hinge of SVM^perf (Joachims 2005): positives ranked above negatives, in O(n log n).

``R(w) = (1 / (n_+ n_-)) sum_{p: y_p = +1} sum_{n: y_n = -1} max(0, 1 - <w, x_p - x_n>)``,
the convex upper bound of ``1 - AUC`` (the share of swapped positive-negative pairs) that
Joachims 2005 (sec. 4.2) minimises. It is the pairwise ranking hinge with one query and two
relevance levels, so its value and subgradient come from one sort of the scores and the same
counting sweeps (:func:`oracles.ranking.violation_counts`), never from the ``n_+ n_-`` pairs.
"""

from __future__ import annotations

import numpy as np

from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError
from oracles.linear_inputs import as_features, as_vector
from oracles.ranking import check_queries, pairwise_line_function, violation_counts

__all__ = ["ROCAreaHinge"]


class ROCAreaHinge:
    """Mean hinge over the positive-negative pairs: the ROC-area risk of SVM^perf.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Labels in {-1, +1}, both present.

    Attributes
    ----------
    dim : int
    n_samples : int
    n_pairs : int
        ``n_+ n_-``.

    Examples
    --------
    >>> import numpy as np
    >>> oracle = ROCAreaHinge(np.array([[1.0], [0.0], [-1.0]]), np.array([1, -1, -1]))
    >>> round(oracle(np.array([1.0])).value, 6)
    0.0
    """

    supports_line_search = False  # one piece per pair: not worth form (16)
    piecewise_linear = True  # LS-BMRM's exact search from values and slopes (line_function)
    risk_lower_bound = 0.0

    def __init__(self, X, y):
        self.X = as_features(X)
        self.n_samples, self.dim = self.X.shape
        y = np.asarray(y)
        if y.ndim != 1 or y.shape[0] != self.n_samples:
            raise InputError(f"y has shape {y.shape}, expected ({self.n_samples},)", field="y")
        if not np.all(np.isin(y, (-1, 1))):
            raise InputError("binary labels must be -1 or +1", field="y")
        if np.all(y == y[0]):
            raise InputError("the ROC area needs both positive and negative examples", field="y")
        self.y = y.astype(np.float64)
        grouped = check_queries(self.y, None, self.n_samples)
        self._order, self._starts, self._levels, self._n_levels, self.n_pairs = grouped

    def __call__(self, w) -> OracleResult:
        """Risk value and the cut at ``w`` (ndarray of shape (dim,))."""
        w = as_vector(w, self.dim)
        scores = np.asarray(self.X @ w, dtype=np.float64).ravel()
        a_g, b_g = violation_counts(scores[self._order], self._levels, self._starts, self._n_levels)
        coef = np.empty(self.n_samples)
        coef[self._order] = (b_g - a_g).astype(np.float64)
        n_violated = float(a_g.sum())
        value = max((n_violated + float(coef @ scores)) / self.n_pairs, 0.0)
        slope = np.asarray(self.X.T @ coef, dtype=np.float64).ravel() / self.n_pairs
        return OracleResult(value, Cut(slope, value - float(slope @ w)), True, int(n_violated))

    def line_function(self, w, d):
        """``phi(k) -> (R(w + k d), d/dk R(w + k d))`` for ``k >= 0``, one counting pass per call
        (as :meth:`oracles.ranking.PairwiseRankingHinge.line_function`)."""
        w = as_vector(w, self.dim)
        d = as_vector(d, self.dim, "d")
        s = np.asarray(self.X @ w, dtype=np.float64).ravel()[self._order]
        ds = np.asarray(self.X @ d, dtype=np.float64).ravel()[self._order]
        return pairwise_line_function(s, ds, self._levels, self._starts, self._n_levels, self.n_pairs)
