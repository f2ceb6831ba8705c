"""First-order Viterbi with position-dependent transitions (numba, ``nogil=True``).

The kernels of input-conditioned bigram templates (CRF++'s ``B01:%x[0,0]``): the score of a
label sequence ``y`` of length ``T`` with ``K`` labels is

    score(y) = sum_t unary[t, y_t] + sum_{t>=1} transition[t, y_{t-1}, y_t]

with one (K, K) transition matrix per position ``t >= 1`` (``transition[0]`` is not read). The
plain chain (one transition matrix for all positions) keeps its own kernels in
:mod:`oracles.viterbi`; these compile only when position-dependent transitions are used.

Sums are formed as in :mod:`oracles.viterbi` (left to right, ``((s + transition) + unary)``,
the Hamming loss added to the unary score first) and the tie rule is the same: among all
maximisers, the sequence lexicographically smallest read from the last position to the first.
:func:`oracles.brute_force.sequence_argmax` with a (T, K, K) transition array follows both.
"""

from __future__ import annotations

from numba import njit

__all__ = ["viterbi_positional_kernel", "position_transitions"]


@njit(nogil=True, cache=True)
def viterbi_positional_kernel(unary, trans_t, y_true, augment, score, back, out):
    """Viterbi on one sentence with one transition matrix per position; writes the best labels
    into ``out`` and returns the best score.

    Parameters
    ----------
    unary : ndarray of shape (>= T, K), float64
        Unary scores; only the first ``T = out.shape[0]`` rows are used.
    trans_t : ndarray of shape (>= T, K, K), float64
        The *transposed* transitions: ``trans_t[t, b, a] = transition[t, a, b]`` for ``t >= 1``.
    y_true : ndarray of shape (T,), int32
        Reference labels (read only when ``augment``).
    augment : bool
        Add the Hamming loss against ``y_true``.
    score, back : ndarrays of shape (>= T, K), float64 and int32
        Scratch space.
    out : ndarray of shape (T,), int32
        Receives the argmax.
    """
    T = out.shape[0]
    K = unary.shape[1]
    if T == 0:
        return 0.0
    for k in range(K):
        u = unary[0, k]
        if augment and k != y_true[0]:
            u += 1.0
        score[0, k] = u
    for t in range(1, T):
        for b in range(K):
            row = trans_t[t, b]
            best = score[t - 1, 0] + row[0]
            arg = 0
            for a in range(1, K):
                v = score[t - 1, a] + row[a]
                if v > best:
                    best = v
                    arg = a
            u = unary[t, b]
            if augment and b != y_true[t]:
                u += 1.0
            score[t, b] = best + u
            back[t, b] = arg
    best = score[T - 1, 0]
    arg = 0
    for k in range(1, K):
        if score[T - 1, k] > best:
            best = score[T - 1, k]
            arg = k
    out[T - 1] = arg
    for t in range(T - 1, 0, -1):
        out[t - 1] = back[t, out[t]]
    return best


@njit(nogil=True, cache=True)
def position_transitions(T, WB, bindptr, bindices, t0, t1, trans, trans_t):
    """Transitions of tokens ``t0 <= t < t1`` (one sentence):
    ``trans[r, a, b] = T[a, b] + sum_{g in bigram features of t0 + r} WB[g, a, b]`` for ``r >= 1``,
    and its transpose ``trans_t[r, b, a]``; row ``r = 0`` (no previous token) is zero.

    Parameters
    ----------
    T : ndarray of shape (K, K), float64
        Transitions shared by all positions (zeros without a bare ``B`` block).
    WB : ndarray of shape (n_bigram_features, K, K), float64
        The blocks of the input-conditioned bigram features.
    bindptr, bindices : ndarrays of int64 and int32
        Token ``t``'s bigram feature ids are ``bindices[bindptr[t]:bindptr[t + 1]]``.
    t0, t1 : int
        The sentence's tokens.
    trans, trans_t : ndarrays of shape (>= t1 - t0, K, K), float64
        Receive the transitions and their transpose.
    """
    K = T.shape[0]
    for a in range(K):
        for b in range(K):
            trans[0, a, b] = 0.0
            trans_t[0, b, a] = 0.0
    for t in range(t0 + 1, t1):
        r = t - t0
        for a in range(K):
            for b in range(K):
                trans[r, a, b] = T[a, b]
        for p in range(bindptr[t], bindptr[t + 1]):
            g = bindices[p]
            for a in range(K):
                for b in range(K):
                    trans[r, a, b] += WB[g, a, b]
        for a in range(K):
            for b in range(K):
                trans_t[r, b, a] = trans[r, a, b]
