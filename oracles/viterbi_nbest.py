"""N-best Viterbi on a first-order chain (numba, ``nogil=True``): the ``n`` best label sequences,
best first, as CRF++'s ``-n`` prints them.

Scores are those of :mod:`oracles.viterbi`, summed in the same order, ``((s + transition) +
unary)``, so the first sequence's score is bit-identical to the 1-best kernel's and a brute-force
enumeration that sums in that order finds the same scores.

Each position ``t`` and label ``b`` keeps the ``n`` best partial scores ending in ``b`` with the
label and rank they extend; the ``n`` best over the last position's labels are backtracked. Ties
go to the lower previous label, then the lower rank (the same scan order as the 1-best kernel).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cutplane.exceptions import InputError

from .viterbi import as_scores

__all__ = ["viterbi_nbest", "viterbi_nbest_kernel"]


@njit(nogil=True, cache=True)
def _insert(scores, labels, ranks, count, n, value, label, rank):
    """Insert ``value`` into the sorted (descending) top-``n`` list of length ``count``; ties
    keep the earlier entry first. Returns the new count."""
    if count == n and not value > scores[n - 1]:
        return count
    pos = count if count < n else n - 1
    while pos > 0 and value > scores[pos - 1]:
        if pos < n:
            scores[pos] = scores[pos - 1]
            labels[pos] = labels[pos - 1]
            ranks[pos] = ranks[pos - 1]
        pos -= 1
    scores[pos] = value
    labels[pos] = label
    ranks[pos] = rank
    return count + 1 if count < n else count


@njit(nogil=True, cache=True)
def viterbi_nbest_kernel(unary, trans_t, n, out, out_scores):
    """The ``n`` best sequences of one sentence into ``out`` (n, T) and their scores into
    ``out_scores`` (n,), best first; returns how many there are (fewer than ``n`` when the chain
    has fewer sequences, ``K ** T``)."""
    T, K = unary.shape
    if T == 0:
        out_scores[0] = 0.0
        return 1
    score = np.full((T, K, n), -np.inf)
    blab = np.zeros((T, K, n), dtype=np.int32)
    brank = np.zeros((T, K, n), dtype=np.int32)
    count = np.zeros((T, K), dtype=np.int32)
    for k in range(K):
        score[0, k, 0] = unary[0, k]
        count[0, k] = 1
    for t in range(1, T):
        for b in range(K):
            row = trans_t[b]
            c = 0
            for a in range(K):
                for r in range(count[t - 1, a]):
                    v = score[t - 1, a, r] + row[a]
                    c = _insert(score[t, b], blab[t, b], brank[t, b], c, n, v, a, r)
            for r in range(c):
                score[t, b, r] = score[t, b, r] + unary[t, b]
            count[t, b] = c
    fs = np.full(n, -np.inf)
    fl = np.zeros(n, dtype=np.int32)
    fr = np.zeros(n, dtype=np.int32)
    c = 0
    for k in range(K):
        for r in range(count[T - 1, k]):
            c = _insert(fs, fl, fr, c, n, score[T - 1, k, r], k, r)
    for i in range(c):
        out_scores[i] = fs[i]
        lab, rank = fl[i], fr[i]
        out[i, T - 1] = lab
        for t in range(T - 1, 0, -1):
            prev, prank = blab[t, lab, rank], brank[t, lab, rank]
            lab, rank = prev, prank
            out[i, t - 1] = lab
    return c


def viterbi_nbest(unary, transition, n: int):
    """The ``n`` best label sequences of a first-order chain, best first.

    Parameters
    ----------
    unary : array-like of shape (T, K)
    transition : array-like of shape (K, K)
        ``transition[a, b]``: score of label ``a`` followed by ``b``.
    n : int
        How many sequences (at least 1); a chain with fewer (``K ** T``) gives them all.

    Returns
    -------
    labels : ndarray of shape (m, T), int32
        ``m = min(n, K ** T)`` distinct sequences, by decreasing score.
    scores : ndarray of shape (m,), float64
        Their scores ``sum_t unary[t, y_t] + sum_t transition[y_{t-1}, y_t]``.

    Raises
    ------
    InputError
        Wrong shapes, non-finite scores, ``n`` < 1.
    """
    unary = as_scores(unary, "unary", 2)
    transition = as_scores(transition, "transition", 2)
    T, K = unary.shape
    if K < 1:
        raise InputError("unary must have at least one label column", field="unary")
    if transition.shape != (K, K):
        raise InputError(f"transition must have shape {(K, K)}, got {transition.shape}", field="transition")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise InputError(f"n must be an integer >= 1, got {n!r}", field="n")
    n = int(n)
    out = np.zeros((n, T), dtype=np.int32)
    scores = np.zeros(n, dtype=np.float64)
    m = viterbi_nbest_kernel(unary, np.ascontiguousarray(transition.T), n, out, scores)
    return out[:m], scores[:m]
