"""First-order Viterbi kernels (numba, ``nogil=True``), plain and Hamming-loss augmented.

Scores of a label sequence ``y`` of length ``T`` with ``K`` labels:

    score(y) = sum_t unary[t, y_t] + sum_{t>=1} transition[y_{t-1}, y_t]

The loss-augmented problem adds ``1`` to ``unary[t, k]`` for every ``k != y_true[t]``
(Hamming loss), i.e. maximises ``score(y) + Delta(y_true, y)``.

Sums are formed left to right, ``((s + transition) + unary)``, with the loss added to the
unary score first, so a brute-force enumeration that sums in the same order obtains
bit-identical path scores.

Tie rule
--------
Among all maximisers, the kernels return the sequence that is *lexicographically smallest
when read from the last position to the first*: the last label is the lowest index with the
maximal final score, and each backtracking step keeps the lowest previous label among the
maximisers (``>`` comparisons, scanning labels upwards). ``oracles.brute_force`` uses the
same rule.

Both kernels are inlined by numba into the compiled loops that call them (``inline="always"``:
one function fewer to compile in a new process, the same arithmetic); called from Python they
compile and are cached as usual.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cutplane.exceptions import InputError
from cutplane.points import checked_point

__all__ = ["viterbi", "viterbi_kernel", "sentence_unary", "split_chain_weights", "as_scores"]


@njit(nogil=True, cache=True, inline="always")
def viterbi_kernel(unary, trans_t, y_true, augment, score, back, out):
    """Viterbi on one sentence; writes the best labels into ``out`` and returns the best score.

    Parameters
    ----------
    unary : ndarray of shape (>= T, K), float64
        Unary scores; only the first ``T = out.shape[0]`` rows are used.
    trans_t : ndarray of shape (K, K), float64
        The *transposed* transition matrix: ``trans_t[b, a] = transition[a, b]``.
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
            row = trans_t[b]
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


@njit(nogil=True, cache=True, inline="always")
def sentence_unary(W, indptr, indices, t0, t1, unary, values=None):
    """``unary[t - t0, k] = sum_{p in feats(t)} v_p W[indices[p], k]`` for tokens ``t0 <= t < t1``.

    ``values`` (float64, aligned with ``indices``) gives ``v_p``, a value per feature occurrence
    (real-valued features, :mod:`oracles.sequence_values`; a CSR matrix's data); None: ``v_p = 1``
    (indicator features). numba compiles the None case on its own and drops the branch that reads
    ``values``, so the indicators' loop is the plain sum of weights.
    """
    K = W.shape[1]
    for t in range(t0, t1):
        r = t - t0
        for k in range(K):
            unary[r, k] = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            f = indices[p]
            if values is None:
                for k in range(K):
                    unary[r, k] += W[f, k]
            else:
                v = values[p]
                for k in range(K):
                    unary[r, k] += v * W[f, k]


def as_scores(a, name, ndim):
    """``a`` as a C-contiguous float64 array of ``ndim`` dimensions, real and finite, else an
    :class:`~cutplane.exceptions.InputError` naming ``name``."""
    arr = np.asarray(a)
    if arr.ndim != ndim or not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise InputError(
            f"expected a real array with {ndim} dimensions, got shape {arr.shape} dtype {arr.dtype}", field=name
        )
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise InputError("scores must be finite (no NaN or inf)", field=name)
    return arr


def viterbi(unary, transition, y_true=None) -> np.ndarray:
    """Best label sequence of a first-order chain, optionally Hamming-loss augmented.

    Parameters
    ----------
    unary : array-like of shape (T, K)
        ``unary[t, k]``: score of label ``k`` at position ``t``.
    transition : array-like of shape (K, K) or (T, K, K)
        ``transition[a, b]``: score of label ``a`` followed by label ``b``; with three
        dimensions, one matrix per position: ``transition[t, a, b]`` scores ``a`` at ``t - 1``
        followed by ``b`` at ``t`` (``transition[0]`` is not read; input-conditioned bigrams,
        :mod:`oracles.viterbi_positional`).
    y_true : array-like of int of shape (T,), optional
        When given, maximise ``score(y) + sum_t [y_t != y_true[t]]``.

    Returns
    -------
    labels : ndarray of shape (T,), int32
        The maximiser; ties go to the sequence that is lexicographically smallest read
        from the last position backwards (see the module docstring).

    Raises
    ------
    InputError
        Wrong shapes, non-finite scores, or labels outside ``[0, K)``.
    """
    unary = as_scores(unary, "unary", 2)
    positional = np.ndim(transition) == 3
    transition = as_scores(transition, "transition", 3 if positional else 2)
    T, K = unary.shape
    if K < 1:
        raise InputError("unary must have at least one label column", field="unary")
    want = (T, K, K) if positional else (K, K)
    if transition.shape != want:
        raise InputError(f"transition must have shape {want}, got {transition.shape}", field="transition")
    augment = y_true is not None
    if augment:
        yt = np.asarray(y_true)
        if yt.shape != (T,) or (T and not np.issubdtype(yt.dtype, np.integer)):
            raise InputError(
                f"y_true must be an int array of shape ({T},), got shape {yt.shape} dtype {yt.dtype}", field="y_true"
            )
        if T and (yt.min() < 0 or yt.max() >= K):
            raise InputError(f"y_true labels must be in [0, {K})", field="y_true")
        yt = np.ascontiguousarray(yt, dtype=np.int32)
    else:
        yt = np.zeros(T, dtype=np.int32)
    out = np.zeros(T, dtype=np.int32)
    score = np.empty((T, K), dtype=np.float64)
    back = np.zeros((T, K), dtype=np.int32)
    if positional:
        from .viterbi_positional import viterbi_positional_kernel

        trans_t = np.ascontiguousarray(transition.transpose(0, 2, 1))
        viterbi_positional_kernel(unary, trans_t, yt, augment, score, back, out)
        return out
    viterbi_kernel(unary, np.ascontiguousarray(transition.T), yt, augment, score, back, out)
    return out


def split_chain_weights(w, n_features, n_labels, transitions=True):
    """Views ``(W, T)`` of a chain model's weights ``w`` of shape (n_features * n_labels + n_labels**2,)
    (or without the ``n_labels**2`` block when ``transitions`` is False).

    Returns ``W`` of shape (n_features, n_labels) and ``T`` of shape (n_labels, n_labels)
    (zeros without transitions). Raises :class:`~cutplane.exceptions.InputError` when ``w`` has
    the wrong shape or is not finite.
    """
    K, F = int(n_labels), int(n_features)
    dim = F * K + (K * K if transitions else 0)
    w = checked_point(w, dim)
    nW = F * K
    W = w[:nW].reshape(F, K)
    T = w[nW:].reshape(K, K) if transitions else np.zeros((K, K))
    return W, T
