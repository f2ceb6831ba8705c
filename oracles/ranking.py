"""The pairwise ranking hinge (SVM^rank, Joachims 2006), in O(n log n) per query and call.

For queries ``q`` with items ``x_i`` of relevance ``y_i``, the risk is the mean over the
preference pairs ``P = {(i, j) : q_i = q_j, y_i > y_j}``, pooled across queries, of the hinge::

    R(w) = (1/|P|) sum_{(i, j) in P} max(0, 1 - <w, x_i - x_j>).

Nothing is enumerated pair by pair. With the scores ``s = X w``, a pair is violated when
``s_j > s_i - 1``; the value and one subgradient only need, for each item, how many violated
pairs it is the preferred item of (``a_i``) and the other item of (``b_i``)::

    R(w) = (1/|P|) (sum_i a_i + sum_i (b_i - a_i) s_i),    slope = X^T (b - a) / |P|.

Joachims 2006 (Alg. 3) reads these counts off one sort of the scores: the thresholds
``s_i - 1`` come in the same order as the scores, so one sweep down the sorted scores, with
the items above the moving threshold counted per relevance level (a Fenwick tree over the
levels of the query), gives every ``a_i``, and one sweep up gives every ``b_i``:
``O(n_q log n_q)`` per query of ``n_q`` items, against ``O(n_q^2)`` pairs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cutplane.cuts import Cut, OracleResult
from cutplane.exceptions import InputError
from oracles.linear_inputs import as_features, as_vector

__all__ = ["PairwiseRankingHinge", "violation_counts", "check_queries", "pairwise_line_function"]


@njit(nogil=True, cache=True)
def _fenwick_add(tree, pos, value):
    pos += 1
    while pos < tree.shape[0]:
        tree[pos] += value
        pos += pos & (-pos)


@njit(nogil=True, cache=True)
def _fenwick_prefix(tree, pos):
    """Sum of the entries ``0 .. pos - 1``."""
    total = 0
    while pos > 0:
        total += tree[pos]
        pos -= pos & (-pos)
    return total


@njit(nogil=True, cache=True)
def _violation_counts(scores, levels, starts, n_levels, margin, orders, presorted):
    """``(a, b)``: per item, the violated pairs it is the preferred / the other item of.

    Items are grouped by query (query ``q`` is ``starts[q]:starts[q + 1]``), ``levels`` are the
    relevance levels ``0 .. n_levels[q] - 1`` within the query. Where ``presorted[q]``,
    ``orders[starts[q]:starts[q + 1]]`` is the ascending order of the query's scores, sorted by
    the caller (numpy's sort, two to three times faster than the compiled one); the other queries
    are sorted here. The scores and levels are gathered in sorted order first, so that both
    sweeps read memory in sequence (on a large query the random reads through the order cost
    about as much as the sort).
    """
    n = scores.shape[0]
    a = np.zeros(n, dtype=np.int64)
    b = np.zeros(n, dtype=np.int64)
    for q in range(starts.shape[0] - 1):
        lo, hi = starts[q], starts[q + 1]
        m = hi - lo
        if m < 2 or n_levels[q] < 2:
            continue
        if presorted[q]:
            order = orders[lo:hi]
        else:
            order = np.argsort(scores[lo:hi])  # ascending; ties in any order: only values count
        s = np.empty(m)
        lev = np.empty(m, dtype=np.int64)
        for t in range(m):
            s[t] = scores[lo + order[t]]
            lev[t] = levels[lo + order[t]]
        a_s = np.empty(m, dtype=np.int64)
        b_s = np.empty(m, dtype=np.int64)
        tree = np.zeros(n_levels[q] + 1, dtype=np.int64)
        # down: a_i = #{j : lev_j < lev_i, s_j > s_i - 1}
        p = m - 1
        for t in range(m - 1, -1, -1):
            threshold = s[t] - margin
            while p >= 0 and s[p] > threshold:
                _fenwick_add(tree, lev[p], 1)
                p -= 1
            a_s[t] = _fenwick_prefix(tree, lev[t])
        tree[:] = 0
        # up: b_j = #{i : lev_i > lev_j, s_i - 1 < s_j}, the same float comparison as the down
        # sweep's (s_j + 1 > s_i is not: a pair at the margin to rounding would count on one side)
        p = 0
        for t in range(m):
            while p < m and s[p] - margin < s[t]:
                _fenwick_add(tree, lev[p], 1)
                p += 1
            b_s[t] = p - _fenwick_prefix(tree, lev[t] + 1)
        for t in range(m):
            a[lo + order[t]] = a_s[t]
            b[lo + order[t]] = b_s[t]
    return a, b


def check_queries(y, qid, n_samples, *, field_y="y", field_qid="qid"):
    """Group items by query: the order, the query starts, and dense relevance levels.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Relevance (any ordered numbers; only the order within a query matters).
    qid : array-like of shape (n_samples,) or None
        Query of each item; None: one query.
    n_samples : int

    Returns
    -------
    order : ndarray of int64, shape (n_samples,)
        A stable permutation putting the items of each query together.
    starts : ndarray of int64, shape (n_queries + 1,)
        Query ``q`` is ``order[starts[q]:starts[q + 1]]``.
    levels : ndarray of int64, shape (n_samples,)
        Relevance level of ``order[k]`` within its query, ``0 ..`` (dense ranks of ``y``).
    n_levels : ndarray of int64, shape (n_queries,)
    n_pairs : int
        ``|P|``: pairs of one query with different relevance.

    Raises
    ------
    InputError
        A shape mismatch or a non-finite relevance or query id.
    """
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise InputError(f"has shape {y.shape}, expected ({n_samples},)", field=field_y)
    if y.dtype.kind not in "biuf" or not np.all(np.isfinite(y)):
        raise InputError("Unknown label type: relevance must be finite numbers", field=field_y)
    y = y.astype(np.float64)
    if qid is None:
        q = np.zeros(n_samples, dtype=np.int64)
    else:
        qa = np.asarray(qid)
        if qa.ndim != 1 or qa.shape[0] != n_samples:
            raise InputError(f"has shape {qa.shape}, expected ({n_samples},)", field=field_qid)
        if qa.dtype.kind == "f" and not np.all(np.isfinite(qa)):
            raise InputError("query ids must be finite", field=field_qid)
        _, q = np.unique(qa, return_inverse=True)
        q = q.astype(np.int64).ravel()
    order = np.lexsort((y, q)).astype(np.int64)  # by query, then relevance (stable)
    qs, ys = q[order], y[order]
    new_query = np.r_[True, qs[1:] != qs[:-1]]
    starts = np.r_[np.flatnonzero(new_query), n_samples].astype(np.int64)
    new_level = new_query | np.r_[True, ys[1:] != ys[:-1]]
    level_id = np.cumsum(new_level) - 1  # global level ids, increasing along the order
    first_level = level_id[starts[:-1]]
    levels = (level_id - np.repeat(first_level, np.diff(starts))).astype(np.int64)
    n_levels = np.add.reduceat(new_level.astype(np.int64), starts[:-1])
    sizes = np.diff(starts)
    counts = np.bincount(level_id)  # items per (query, level)
    same = np.add.reduceat(counts**2, first_level) if counts.size else np.zeros(0, dtype=np.int64)
    n_pairs = int(((sizes.astype(np.int64) ** 2 - same) // 2).sum())
    return order, starts, levels, n_levels.astype(np.int64), n_pairs


#: Queries of at least this many items are sorted by numpy (one call each) before the compiled
#: sweeps; smaller ones by the compiled sort (a Python call per query would cost more).
_NUMPY_SORT_FROM = 256


def violation_counts(scores, levels, starts, n_levels, margin=1.0):
    """Per item (in the grouped order), violated pairs as preferred item ``a`` and as other item ``b``.

    A pair ``(i, j)`` (``y_i > y_j``) is violated when ``s_j > s_i - margin``; ``margin = 0``
    counts the strictly swapped pairs (a pairwise accuracy).

    Parameters
    ----------
    scores : ndarray of float64, shape (n_samples,)
        Scores in the grouped order of :func:`check_queries`.
    levels, starts, n_levels : ndarray of int64
        As returned by :func:`check_queries`.
    margin : float, default=1.0

    Returns
    -------
    a, b : ndarray of int64, shape (n_samples,)
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    sizes = np.diff(starts)
    orders = np.empty(scores.shape[0], dtype=np.int64)
    presorted = sizes >= _NUMPY_SORT_FROM
    for q in np.flatnonzero(presorted):  # at most n / _NUMPY_SORT_FROM queries
        lo, hi = starts[q], starts[q + 1]
        orders[lo:hi] = np.argsort(scores[lo:hi])
    return _violation_counts(scores, levels, starts, n_levels, float(margin), orders, presorted)


class PairwiseRankingHinge:
    """Mean pairwise hinge over the preference pairs of each query (Joachims 2006).

    ``R(w) = (1/|P|) sum_{(i, j) in P} max(0, 1 - <w, x_i - x_j>)`` with
    ``P = {(i, j) : qid_i = qid_j, y_i > y_j}``; value and subgradient in ``O(n_q log n_q)``
    per query (one sort and two sweeps), never ``O(|P|)``. Along a line the risk is piecewise
    linear with one breakpoint per pair: :meth:`line_function` gives its value and slope in the
    same counting pass, for LS-BMRM's exact search
    (:func:`cutplane.linesearch.piecewise_linear_search`).

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Relevance; only its order within a query matters.
    qid : array-like of shape (n_samples,), optional
        Query of each item; None: all items form one query.

    Attributes
    ----------
    dim : int
        ``n_features``.
    n_samples : int
    n_pairs : int
        ``|P|``.
    n_queries : int

    Raises
    ------
    InputError
        No pair of one query with different relevance, or bad input.

    Examples
    --------
    >>> import numpy as np
    >>> oracle = PairwiseRankingHinge(np.eye(3), np.array([2, 1, 0]))
    >>> oracle(np.zeros(3)).value
    1.0
    """

    supports_line_search = False  # one piece per pair: not worth form (16)
    piecewise_linear = True  # LS-BMRM's exact search from values and slopes (line_function)
    risk_lower_bound = 0.0

    def __init__(self, X, y, qid=None):
        self.X = as_features(X)
        self.n_samples, self.dim = self.X.shape
        order, starts, levels, n_levels, n_pairs = check_queries(y, qid, self.n_samples)
        if n_pairs == 0:
            n = self.n_samples
            samples = f"{n} sample{'' if n == 1 else 's'}"
            raise InputError(
                f"no two items of one query have different relevance ({samples}): no pair to rank",
                field="y",
            )
        self._order, self._starts, self._levels, self._n_levels = order, starts, levels, n_levels
        self.n_pairs = n_pairs
        self.n_queries = int(starts.shape[0] - 1)

    def counts(self, w):
        """``(a, b)`` of the module docstring at ``w``, each ndarray of int64 (n_samples,), in input order."""
        w = as_vector(w, self.dim)
        scores = np.asarray(self.X @ w, dtype=np.float64).ravel()
        a_g, b_g = violation_counts(scores[self._order], self._levels, self._starts, self._n_levels)
        a = np.empty_like(a_g)
        b = np.empty_like(b_g)
        a[self._order] = a_g
        b[self._order] = b_g
        return a, b, scores

    def __call__(self, w) -> OracleResult:
        """Risk value and the cut at ``w`` (ndarray of shape (dim,))."""
        w = as_vector(w, self.dim)
        a, b, scores = self.counts(w)
        coef = (b - a).astype(np.float64)
        value = (float(a.sum()) + float(coef @ scores)) / self.n_pairs
        value = max(value, 0.0)  # a sum of hinges: rounding never makes it negative
        slope = np.asarray(self.X.T @ coef, dtype=np.float64).ravel() / self.n_pairs
        return OracleResult(value, Cut(slope, value - float(slope @ w)), True, int(a.sum()))

    def line_function(self, w, d):
        """``phi(k) -> (R(w + k d), d/dk R(w + k d))`` for ``k >= 0``, one counting pass per call.

        The scores ``X w`` and ``X d`` are computed once. The slope is
        ``(1/|P|) sum_i (b_i - a_i) <x_i, d>`` with the counts of the violated pairs at ``k``:
        the derivative off the breakpoints (at a breakpoint, the slope of the pieces the strict
        count ``s_j > s_i - 1`` selects).
        """
        w = as_vector(w, self.dim)
        d = as_vector(d, self.dim, "d")
        s = np.asarray(self.X @ w, dtype=np.float64).ravel()[self._order]
        ds = np.asarray(self.X @ d, dtype=np.float64).ravel()[self._order]
        return pairwise_line_function(s, ds, self._levels, self._starts, self._n_levels, self.n_pairs)


def pairwise_line_function(s, ds, levels, starts, n_levels, n_pairs):
    """``phi(k) -> (value, slope)`` of the mean pairwise hinge at the scores ``s + k ds``.

    Parameters
    ----------
    s, ds : ndarray of float64, shape (n_samples,)
        Scores and their change along the line, in the grouped order of :func:`check_queries`.
    levels, starts, n_levels : ndarray of int64
        As returned by :func:`check_queries`.
    n_pairs : int
        ``|P|``.

    Returns
    -------
    callable
    """

    def phi(k):
        u = s + k * ds
        a, b = violation_counts(u, levels, starts, n_levels)
        coef = (b - a).astype(np.float64)
        value = max((float(a.sum()) + float(coef @ u)) / n_pairs, 0.0)
        return value, float(coef @ ds) / n_pairs

    return phi
