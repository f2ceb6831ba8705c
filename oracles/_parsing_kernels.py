"""Numba kernels of the parsing oracles: Chu-Liu-Edmonds, Eisner, arc scores.

Conventions shared by every kernel: a sentence of ``n`` words has ``N = n + 1`` nodes,
node 0 the artificial root; ``scores[h, m]`` is the score of the arc head ``h`` ->
modifier ``m``; a tree is a head array of shape (N,) with ``heads[0] = -1``. Arcs into the
root and self-loops are never used, whatever their score. Validation is done by the
callers in :mod:`oracles.parsing`; these kernels trust their input.

The tree decoders ``cle_kernel`` and ``eisner_kernel`` (and their tie-breaking rule) live in
:mod:`oracles._tree_kernels` and are re-exported here; this module holds the kernels over
arc features (scores, decoding a chunk of sentences, feature differences).

All kernels are compiled with ``nogil=True`` so a thread pool can run them in parallel.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._tree_kernels import cle_kernel, eisner_kernel

__all__ = ["cle_kernel", "eisner_kernel", "arc_scores_kernel", "decode_chunk_kernel", "feature_diff_kernel"]


@njit(cache=True, nogil=True)
def arc_scores_kernel(indptr, indices, arc_start, N, w):
    """Dense arc scores of one sentence from its CSR arc features.

    Parameters
    ----------
    indptr : ndarray of shape (n_arcs_total + 1,), int64
        Feature pointers over all arcs of a dataset; arc ``h * N + m`` of the sentence is
        row ``arc_start + h * N + m``.
    indices : ndarray of shape (nnz,), int32
        Feature ids (binary features).
    arc_start : int
        First arc row of the sentence.
    N : int
        Number of nodes (words + root).
    w : ndarray of shape (dim,), float64
        Weights.

    Returns
    -------
    scores : ndarray of shape (N, N), float64
    """
    S = np.zeros((N, N), dtype=np.float64)
    for h in range(N):
        for m in range(N):
            a = arc_start + h * N + m
            acc = 0.0
            for k in range(indptr[a], indptr[a + 1]):
                acc += w[indices[k]]
            S[h, m] = acc
    return S


@njit(cache=True, nogil=True)
def decode_chunk_kernel(
    indptr,
    indices,
    arc_ptr,
    lengths,
    gold,
    head_ptr,
    w,
    start,
    stop,
    augment,
    loss_weight,
    projective,
    single_root,
    pred_out,
    loss_out,
    margin_out,
):
    """Decode sentences ``start..stop-1`` (plain or loss-augmented) in one nogil call.

    Parameters
    ----------
    indptr, indices : CSR arc features of the whole dataset (see ``arc_scores_kernel``).
    arc_ptr : ndarray of shape (n_sentences + 1,), int64
        First arc row of each sentence.
    lengths : ndarray of shape (n_sentences,), int64
        Words per sentence.
    gold : ndarray of shape (sum(lengths + 1),), int64
        Concatenated gold head arrays (each with its leading -1); unused when not augmenting.
    head_ptr : ndarray of shape (n_sentences + 1,), int64
        Offsets of each sentence's head array in ``gold``.
    w : ndarray of shape (dim,), float64
    start, stop : int
        The chunk of sentences.
    augment : bool
        Add ``loss_weight[i]`` to every non-gold arc of sentence ``i``.
    loss_weight : ndarray of shape (n_sentences,), float64
        Loss of one wrong head per sentence.
    projective, single_root : bool
        Eisner instead of Chu-Liu-Edmonds; one child of the root.
    pred_out : ndarray of shape (head_ptr[stop] - head_ptr[start],), int64
        Receives the predicted heads (chunk-local offsets).
    loss_out, margin_out : ndarray of shape (stop - start,), float64
        Receive the weighted loss and ``score(pred) - score(gold)`` (unaugmented scores;
        the margin is 0 when not augmenting).
    """
    base = head_ptr[start]
    for i in range(start, stop):
        N = lengths[i] + 1
        g0 = head_ptr[i]
        S = arc_scores_kernel(indptr, indices, arc_ptr[i], N, w)
        A = S
        if augment:
            A = S + loss_weight[i]
            for m in range(1, N):
                A[gold[g0 + m], m] = S[gold[g0 + m], m]
        if projective:
            heads = eisner_kernel(A, single_root)
        else:
            P = np.zeros((N, N), dtype=np.int64)
            if single_root:
                for m in range(N):
                    P[0, m] = -1
            heads = cle_kernel(A, P)
        o = g0 - base
        for m in range(N):
            pred_out[o + m] = heads[m]
        if augment:
            wrong = 0
            margin = 0.0
            for m in range(1, N):
                if heads[m] != gold[g0 + m]:
                    wrong += 1
                    margin += S[heads[m], m] - S[gold[g0 + m], m]
            loss_out[i - start] = wrong * loss_weight[i]
            margin_out[i - start] = margin
        else:
            loss_out[i - start] = 0.0
            margin_out[i - start] = 0.0


@njit(cache=True, nogil=True)
def feature_diff_kernel(indptr, indices, arc_ptr, lengths, gold, head_ptr, pred, start, stop):
    """Feature ids and signs of ``Phi(pred) - Phi(gold)`` over sentences ``start..stop-1``.

    Only words whose head differs contribute (equal arcs cancel). ``pred`` holds the chunk's
    predicted heads at chunk-local offsets (as written by ``decode_chunk_kernel``).

    Returns
    -------
    ids : ndarray of shape (k,), int64
    signs : ndarray of shape (k,), float64
        ``+1`` for features of predicted arcs, ``-1`` for gold arcs (ids may repeat).
    """
    base = head_ptr[start]
    count = 0
    for i in range(start, stop):
        N = lengths[i] + 1
        g0 = head_ptr[i]
        for m in range(1, N):
            hp = pred[g0 - base + m]
            hg = gold[g0 + m]
            if hp != hg:
                a = arc_ptr[i] + hp * N + m
                b = arc_ptr[i] + hg * N + m
                count += indptr[a + 1] - indptr[a] + indptr[b + 1] - indptr[b]
    ids = np.empty(count, dtype=np.int64)
    signs = np.empty(count, dtype=np.float64)
    k = 0
    for i in range(start, stop):
        N = lengths[i] + 1
        g0 = head_ptr[i]
        for m in range(1, N):
            hp = pred[g0 - base + m]
            hg = gold[g0 + m]
            if hp != hg:
                a = arc_ptr[i] + hp * N + m
                for j in range(indptr[a], indptr[a + 1]):
                    ids[k] = indices[j]
                    signs[k] = 1.0
                    k += 1
                b = arc_ptr[i] + hg * N + m
                for j in range(indptr[b], indptr[b + 1]):
                    ids[k] = indices[j]
                    signs[k] = -1.0
                    k += 1
    return ids, signs
