"""The per-sentence view of the chain oracle that SPOM reads (:class:`SequenceExampleOracle`).

:class:`~oracles.sequence.SequenceHingeOracle` answers for the whole training set (one cut per
call); SPOM (:func:`cutplane.online.spom`) takes one sentence per round and needs, for sentence
``i`` at the current ``w``, the structured hinge
``L_i(w) = max_y [Delta(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>]`` and the subgradient
``Phi(x_i, y^_i) - Phi(x_i, y_i)`` (the protocol :class:`cutplane.protocols.ExampleOracle`).
Here both come from loss-augmented Viterbi (the batch oracle's kernel,
:func:`oracles.viterbi.viterbi_kernel`) on the weights of the sentence's own features only, so a
round costs O(tokens x labels^2), never O(dim).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cutplane.cuts import ExampleSubgradient
from cutplane.exceptions import InputError

from .viterbi import viterbi_kernel

__all__ = ["SequenceExampleOracle", "chain_example"]


@njit(cache=True)
def chain_example(w_sup, uf, inv, indptr, t0, t1, labels, K, nW, with_trans, values=None):
    """Loss-augmented Viterbi on one sentence from the weights of its support, and the subgradient.

    Parameters
    ----------
    w_sup : ndarray of float64
        ``W[uf[l], k]`` at ``l * K + k``, then the (K, K) transitions (when ``with_trans``).
    uf : ndarray of int64
        The sentence's distinct feature ids, sorted.
    inv : ndarray of int32
        ``inv[p]``: the local id (index into ``uf``) of the feature at position ``p`` of the
        oracle's ``indices``.
    indptr : ndarray of int64
        Token rows of the oracle's CSR features.
    t0, t1 : int
        The sentence's token range.
    labels : ndarray of int32
        Gold label codes of all tokens.
    K : int
        Number of labels.
    nW : int
        ``n_features * K``: where the transition block starts in the global ``w``.
    with_trans : bool
    values : ndarray of float64 or None, default=None
        Real-valued features: ``values[p]`` (aligned with the oracle's ``indices``) multiplies
        the feature at position ``p`` in the unary scores and in the subgradient. None: every
        feature counts 1 (numba compiles this case on its own, without the branches that read
        ``values``).

    Returns
    -------
    value : float
        The sentence's structured hinge.
    idx, val : ndarray
        Sorted global coordinates and values of ``Phi(x, y^) - Phi(x, y)``.
    """
    n = t1 - t0
    nf = uf.size
    unary = np.zeros((n, K))
    for t in range(n):
        for p in range(indptr[t0 + t], indptr[t0 + t + 1]):
            f = inv[p]
            if values is None:
                for k in range(K):
                    unary[t, k] += w_sup[f * K + k]
            else:
                for k in range(K):
                    unary[t, k] += values[p] * w_sup[f * K + k]
    trans_t = np.zeros((K, K))
    if with_trans:
        for a in range(K):
            for b in range(K):
                trans_t[b, a] = w_sup[nf * K + a * K + b]
    y = labels[t0:t1]
    yhat = np.empty(n, dtype=np.int32)
    viterbi_kernel(unary, trans_t, y, True, np.empty((n, K)), np.zeros((n, K), dtype=np.int32), yhat)
    acc = np.zeros(nf * K + K * K)
    value = 0.0
    for t in range(n):
        a, b = yhat[t], y[t]
        if a != b:
            value += 1.0 + unary[t, a] - unary[t, b]
            for p in range(indptr[t0 + t], indptr[t0 + t + 1]):
                v = 1.0 if values is None else values[p]
                acc[inv[p] * K + a] += v
                acc[inv[p] * K + b] -= v
        if with_trans and t > 0:
            pa, pb = yhat[t - 1], y[t - 1]
            value += trans_t[a, pa] - trans_t[b, pb]
            acc[nf * K + pa * K + a] += 1.0
            acc[nf * K + pb * K + b] -= 1.0
    nnz = 0
    for q in range(acc.size):
        if acc[q] != 0.0:
            nnz += 1
    idx = np.empty(nnz, dtype=np.int64)
    val = np.empty(nnz)
    j = 0
    for q in range(acc.size):
        if acc[q] != 0.0:
            idx[j] = uf[q // K] * K + q % K if q < nf * K else nW + (q - nf * K)
            val[j] = acc[q]
            j += 1
    return value, idx, val


class SequenceExampleOracle:
    """SPOM's per-sentence view of a :class:`~oracles.sequence.SequenceHingeOracle`.

    ``example_support(i)``: the coordinates sentence ``i`` reads (its distinct features times all
    labels, then the transition block); ``example_subgradient(i, w_support)``: loss-augmented
    Viterbi on those weights only (:func:`chain_example`), the hinge value and the sparse
    subgradient ``Phi(x_i, y^_i) - Phi(x_i, y_i)``. The distinct features of every sentence are
    found once here (one ``np.unique`` per sentence).

    Parameters
    ----------
    oracle : oracles.sequence.SequenceHingeOracle
        The batch oracle of the training set (its arrays are shared, not copied).
    """

    def __init__(self, oracle):
        if getattr(oracle, "conditioned", False):
            raise InputError(
                "SPOM's per-sentence oracle does not support input-conditioned bigram templates (a 'B' template "
                "with %x macros, or several 'B' lines); train them with the cutting-plane solver",
                field="templates",
            )
        self.oracle = oracle
        self.n_samples, self.dim = oracle.n_samples, oracle.dim
        self.K = oracle.n_labels
        self._nW = oracle.n_features * self.K
        self._trans = bool(oracle.transitions)
        self._labels = np.arange(self.K, dtype=np.int64)
        self._tcoords = self._nW + np.arange(self.K * self.K, dtype=np.int64)
        ufs, invs = [], []
        ip, sp_ = oracle.indptr, oracle.sentence_ptr
        for i in range(self.n_samples):
            uf, inv = np.unique(oracle.indices[ip[sp_[i]] : ip[sp_[i + 1]]], return_inverse=True)
            ufs.append(uf.astype(np.int64))
            invs.append(inv.astype(np.int32))
        self._uf_ptr = np.concatenate(([0], np.cumsum([u.size for u in ufs]))).astype(np.int64)
        self._uf = np.concatenate(ufs) if ufs else np.zeros(0, np.int64)
        self._inv = np.concatenate(invs) if invs else np.zeros(0, np.int32)  # aligned with oracle.indices

    def example_support(self, i):
        """Sorted coordinates of ``w`` that sentence ``i`` reads."""
        uf = self._uf[self._uf_ptr[i] : self._uf_ptr[i + 1]]
        coords = (uf[:, None] * self.K + self._labels).ravel()
        return np.concatenate([coords, self._tcoords]) if self._trans else coords

    def example_subgradient(self, i, w_support) -> ExampleSubgradient:
        """The hinge of sentence ``i`` and its subgradient, from ``w`` on :meth:`example_support`."""
        o = self.oracle
        value, idx, val = chain_example(
            np.ascontiguousarray(w_support, dtype=np.float64),
            self._uf[self._uf_ptr[i] : self._uf_ptr[i + 1]],
            self._inv,
            o.indptr,
            int(o.sentence_ptr[i]),
            int(o.sentence_ptr[i + 1]),
            o.labels,
            self.K,
            self._nW,
            self._trans,
            getattr(o, "values", None),  # real-valued features, or None
        )
        return ExampleSubgradient(float(value), idx, val)

    def __repr__(self):
        return f"{type(self).__name__}(n_samples={self.n_samples}, dim={self.dim}, n_labels={self.K})"
