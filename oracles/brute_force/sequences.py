"""Exhaustive argmax over all label sequences of a first-order chain (tiny T and K only).

Used by the tests as the ground truth for :func:`oracles.sequence.viterbi`, with one transition
matrix for all positions (shape (K, K)) or one per position (shape (T, K, K): input-conditioned
bigrams, :mod:`oracles.viterbi_positional`). Path scores
are summed in the same order as the Viterbi kernels (left to right, ``(s + transition) +
unary``, loss added to the unary score first), so ties are seen identically, and the same
tie rule is applied: among all maximisers, the sequence lexicographically smallest when
read from the last position to the first.
"""

from __future__ import annotations

import itertools

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["sequence_score", "sequence_argmax", "all_sequences"]

_MAX_SEQUENCES = 2_000_000


def all_sequences(T: int, K: int):
    """Iterate over all ``K ** T`` label sequences as tuples (refuses more than 2e6)."""
    if K**T > _MAX_SEQUENCES:
        raise InputError(f"{K}**{T} sequences is too many for brute force (limit {_MAX_SEQUENCES})")
    return itertools.product(range(K), repeat=T)


def sequence_score(unary, transition, y, y_true=None) -> float:
    """``sum_t unary[t, y_t] + sum_{t>=1} transition[y_{t-1}, y_t]`` (+ Hamming loss against ``y_true``).

    Parameters
    ----------
    unary : ndarray of shape (T, K)
    transition : ndarray of shape (K, K), or (T, K, K) for position-dependent transitions
        (``transition[t, y_{t-1}, y_t]``; ``transition[0]`` is not read)
    y : sequence of int of length T
    y_true : sequence of int of length T, optional
    """
    unary = np.asarray(unary, dtype=np.float64)
    transition = np.asarray(transition, dtype=np.float64)
    positional = transition.ndim == 3
    s = 0.0
    for t, k in enumerate(y):
        u = float(unary[t, k])
        if y_true is not None and k != y_true[t]:
            u += 1.0
        if t == 0:
            s = u
        else:
            tr = transition[t, y[t - 1], k] if positional else transition[y[t - 1], k]
            s = (s + float(tr)) + u
    return s


def sequence_argmax(unary, transition, y_true=None) -> np.ndarray:
    """The maximiser of :func:`sequence_score` over all sequences, with Viterbi's tie rule.

    Returns
    -------
    labels : ndarray of shape (T,), int32
    """
    unary = np.asarray(unary, dtype=np.float64)
    T, K = unary.shape
    best_key, best_score = None, -np.inf
    for y in all_sequences(T, K):
        s = sequence_score(unary, transition, y, y_true)
        key = y[::-1]
        if s > best_score or (s == best_score and key < best_key):
            best_score, best_key = s, key
    return np.array(best_key[::-1] if best_key is not None else (), dtype=np.int32)
