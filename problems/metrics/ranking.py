"""Ranking scores per query: NDCG@k (Jarvelin and Kekalainen 2002) and the pairwise accuracy."""

from __future__ import annotations

import numpy as np

from cutplane.exceptions import InputError
from oracles.ranking import check_queries, violation_counts

__all__ = ["ndcg_at_k", "pairwise_accuracy"]


def _scores(scores, n):
    s = np.asarray(scores, dtype=np.float64)
    if s.shape != (n,) or not np.all(np.isfinite(s)):
        raise InputError(f"scores must be {n} finite numbers", field="scores")
    return s


def ndcg_at_k(y, scores, qid=None, k=10):
    """Mean over queries of the normalised discounted cumulative gain of the top ``k``.

    ``DCG@k = sum_{r=1}^{k} (2^{y_(r)} - 1) / log2(r + 1)`` over the items sorted by decreasing
    score (ties kept in input order), divided by the same sum of the ideal order. Queries whose
    ideal DCG is zero (no relevant item) are left out of the mean.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
        Graded relevance (>= 0).
    scores : array-like of shape (n_samples,)
    qid : array-like of shape (n_samples,), optional
        Query of each item; None: one query.
    k : int, default=10

    Returns
    -------
    float
        In [0, 1]; NaN when no query has a relevant item.
    """
    y = np.asarray(y, dtype=np.float64)
    s = _scores(scores, y.shape[0])
    order, starts, _, _, _ = check_queries(y, qid, y.shape[0])
    values = []
    for q in range(starts.shape[0] - 1):
        items = np.sort(order[starts[q] : starts[q + 1]])  # input order, for the ties
        rel = y[items]
        gains_ideal = np.sort(2.0**rel - 1.0)[::-1][:k]
        discount = 1.0 / np.log2(np.arange(2, gains_ideal.shape[0] + 2))
        ideal = float(gains_ideal @ discount)
        if ideal <= 0.0:
            continue
        ranked = rel[np.argsort(-s[items], kind="stable")][:k]
        values.append(float((2.0**ranked - 1.0) @ discount[: ranked.shape[0]]) / ideal)
    return float(np.mean(values)) if values else float("nan")


def pairwise_accuracy(y, scores, qid=None):
    """Share of the preference pairs (one query, ``y_i > y_j``) ranked ``s_i > s_j`` (ties count 1/2).

    Counted in O(n log n) per query (:func:`oracles.ranking.violation_counts` at margin 0).

    Returns
    -------
    float
        In [0, 1]; NaN when there is no pair.
    """
    y = np.asarray(y, dtype=np.float64)
    s = _scores(scores, y.shape[0])
    order, starts, levels, n_levels, n_pairs = check_queries(y, qid, y.shape[0])
    if n_pairs == 0:
        return float("nan")
    swapped = int(violation_counts(s[order], levels, starts, n_levels, margin=0.0)[0].sum())
    right = int(violation_counts(-s[order], levels, starts, n_levels, margin=0.0)[1].sum())
    ties = n_pairs - swapped - right
    return (right + 0.5 * ties) / n_pairs
