"""The chunk task of the sequence oracle with input-conditioned bigram features.

CRF++'s bigram templates with macros (``B01:%x[0,1]``) pair a label pair with an observation:
at token ``t >= 1`` the bigram feature ids ``beta(x, t)`` fire, each with its own (K, K) block of
``W_B``, so the transition score depends on the position,

    T_t[a, b] = T[a, b] + sum_{g in beta(x, t)} W_B[g, a, b],

and the joint feature map gains ``sum_{t>=1} beta(x, t) (x) e_{y_{t-1}} (x) e_{y_t}``. The weights
are laid out as ``w = concat(W.ravel(), T.ravel(), W_B.ravel())`` (``T`` only with
``transitions``; ``W_B`` of shape (n_bigram_features, K, K), row-major: coordinate
``offset + g * K * K + a * K + b``).

:class:`BigramSequenceChunk` is :class:`oracles.sequence_chunk.SequenceChunk` with these
transitions: the same loss-augmented decoding, cache of outputs and exact integer cut, through
kernels of its own (:mod:`oracles.viterbi_positional` for the Viterbi), so the plain chain's
kernels and their compiled specialisations are left as they are; these compile only when
input-conditioned bigrams are used.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import sequence_chunk
from .sequence_chunk import ChunkPartial, SequenceChunk, merge_sorted_sums
from .viterbi import sentence_unary
from .viterbi_positional import position_transitions, viterbi_positional_kernel

__all__ = ["BigramSequenceChunk", "bigram_weights"]


def bigram_weights(w, n_features, n_labels, transitions, n_bigram_features):
    """Read-only views ``(W, T, WB)`` of ``w`` (shapes (n_features, K), (K, K), (n_bigram_features, K, K));
    ``T`` is zeros without ``transitions``. ``w`` must have the right length (checked by the oracle)."""
    K, nf = int(n_labels), int(n_features)
    nW = nf * K
    nT = K * K if transitions else 0
    W = w[:nW].reshape(nf, K)
    T = w[nW : nW + nT].reshape(K, K) if transitions else np.zeros((K, K))
    WB = w[nW + nT :].reshape(int(n_bigram_features), K, K)
    for a in (W, T, WB):
        a.flags.writeable = False
    return W, T, WB


@njit(nogil=True, cache=True)
def _number_marked(slot, n_marked):
    """Give the entries marked 0 in ``slot`` the numbers ``0 .. n_marked - 1`` in index order;
    returns the marked indices, int64 array of shape (n_marked,)."""
    marked = np.empty(n_marked, dtype=np.int64)
    j = 0
    for f in range(slot.shape[0]):
        if slot[f] == 0:
            slot[f] = j
            marked[j] = f
            j += 1
    return marked


@njit(nogil=True, cache=True)
def _sentence_scores(W, T, WB, indptr, indices, bindptr, bindices, t0, t1, unary, trans, trans_t):
    """Unary scores and position transitions of tokens ``t0..t1`` (one sentence)."""
    sentence_unary(W, indptr, indices, t0, t1, unary)
    position_transitions(T, WB, bindptr, bindices, t0, t1, trans, trans_t)


@njit(nogil=True, cache=True)
def decode_bigram_chunk(W, T, WB, indptr, indices, bindptr, bindices, sent_ptr, y, s0, s1, augment, yhat):
    """Viterbi with position transitions on sentences ``s0..s1``; writes ``yhat`` (chunk-local:
    token ``t`` at ``t - sent_ptr[s0]``); returns (sum of losses, sum of R_i)."""
    K = T.shape[0]
    base = sent_ptr[s0]
    max_len = 1
    for i in range(s0, s1):
        max_len = max(max_len, sent_ptr[i + 1] - sent_ptr[i])
    unary = np.empty((max_len, K))
    score = np.empty((max_len, K))
    back = np.zeros((max_len, K), dtype=np.int32)
    trans = np.empty((max_len, K, K))
    trans_t = np.empty((max_len, K, K))
    loss_sum = 0.0
    value_sum = 0.0
    for i in range(s0, s1):
        t0 = sent_ptr[i]
        t1 = sent_ptr[i + 1]
        if t1 == t0:
            continue
        _sentence_scores(W, T, WB, indptr, indices, bindptr, bindices, t0, t1, unary, trans, trans_t)
        viterbi_positional_kernel(unary, trans_t, y[t0:t1], augment, score, back, yhat[t0 - base : t1 - base])
        if augment:
            # R_i = Delta(y, y^) + score(y^) - score(y), recomputed along both paths
            diff = 0.0
            loss = 0
            for t in range(t1 - t0):
                a = yhat[t0 - base + t]
                b = y[t0 + t]
                if a != b:
                    loss += 1
                    diff += unary[t, a] - unary[t, b]
                if t > 0:
                    diff += trans[t, yhat[t0 - base + t - 1], a] - trans[t, y[t0 + t - 1], b]
            loss_sum += loss
            value_sum += loss + diff
    return loss_sum, value_sum


@njit(nogil=True, cache=True)
def cached_decode_bigram_chunk(
    W, T, WB, indptr, indices, bindptr, bindices, sent_ptr, y, s0, s1, cache, n_cached, yhat
):
    """Per sentence of ``s0..s1`` the output of largest ``Delta + score(y') - score(y)`` among the
    gold labels (value 0) and the first ``n_cached`` rows of ``cache`` (chunk-local labels); writes
    it to ``yhat``; returns (sum of losses, sum of the values). Only tokens where an output differs
    from the gold labels (or follows one that does) are read."""
    base = sent_ptr[s0]
    loss_sum = 0.0
    value_sum = 0.0
    for i in range(s0, s1):
        t0 = sent_ptr[i]
        t1 = sent_ptr[i + 1]
        best = 0.0
        best_c = -1
        best_loss = 0
        for c in range(n_cached):
            loss = 0
            diff = 0.0
            for t in range(t0, t1):
                a = cache[c, t - base]
                b = y[t]
                if a != b:
                    loss += 1
                    for p in range(indptr[t], indptr[t + 1]):
                        f = indices[p]
                        diff += W[f, a] - W[f, b]
                if t > t0:
                    pa = cache[c, t - 1 - base]
                    pb = y[t - 1]
                    if pa != pb or a != b:
                        diff += T[pa, a] - T[pb, b]
                        for p in range(bindptr[t], bindptr[t + 1]):
                            g = bindices[p]
                            diff += WB[g, pa, a] - WB[g, pb, b]
            v = loss + diff
            if v > best:
                best = v
                best_c = c
                best_loss = loss
        for t in range(t0, t1):
            yhat[t - base] = y[t] if best_c < 0 else cache[best_c, t - base]
        loss_sum += best_loss
        value_sum += best
    return loss_sum, value_sum


@njit(nogil=True, cache=True)
def cut_bigram_chunk(
    indptr, indices, bindptr, bindices, sent_ptr, y, y_base, yhat, s0, s1, n_features, n_bigram, K, with_trans
):
    """Sparse sum over sentences s0..s1 of Phi(x_i, y^_i) - Phi(x_i, y_i) with bigram features
    (``yhat`` chunk-local, ``y`` read at ``t - y_base``, as in
    :meth:`oracles.sequence_chunk.SequenceChunk._cut`). Only tokens where the two labellings (or
    their label pairs) differ are read.

    Returns sorted int64 coordinates and float64 values (zeros removed).
    """
    t_lo = sent_ptr[s0]
    slot = np.full(n_features, -1, dtype=np.int64)
    bslot = np.full(n_bigram, -1, dtype=np.int64)
    n_touched = 0
    n_btouched = 0
    for i in range(s0, s1):
        for t in range(sent_ptr[i], sent_ptr[i + 1]):
            a = yhat[t - t_lo]
            b = y[t - y_base]
            if a != b:
                for p in range(indptr[t], indptr[t + 1]):
                    f = indices[p]
                    if slot[f] < 0:
                        slot[f] = 0
                        n_touched += 1
            if t > sent_ptr[i] and (a != b or yhat[t - 1 - t_lo] != y[t - 1 - y_base]):
                for p in range(bindptr[t], bindptr[t + 1]):
                    g = bindices[p]
                    if bslot[g] < 0:
                        bslot[g] = 0
                        n_btouched += 1
    touched = _number_marked(slot, n_touched)
    btouched = _number_marked(bslot, n_btouched)
    KK = K * K
    acc = np.zeros((n_touched, K), dtype=np.int32)  # integer counts: exact
    tacc = np.zeros((K, K), dtype=np.int32)
    bacc = np.zeros((n_btouched, KK), dtype=np.int32)
    for i in range(s0, s1):
        for t in range(sent_ptr[i], sent_ptr[i + 1]):
            a = yhat[t - t_lo]
            b = y[t - y_base]
            if a != b:
                for p in range(indptr[t], indptr[t + 1]):
                    s = slot[indices[p]]
                    acc[s, a] += 1
                    acc[s, b] -= 1
            if t > sent_ptr[i]:
                pa = yhat[t - 1 - t_lo]
                pb = y[t - 1 - y_base]
                if pa != pb or a != b:
                    if with_trans:
                        tacc[pa, a] += 1
                        tacc[pb, b] -= 1
                    for p in range(bindptr[t], bindptr[t + 1]):
                        s = bslot[bindices[p]]
                        bacc[s, pa * K + a] += 1
                        bacc[s, pb * K + b] -= 1
    nnz = 0
    for s in range(n_touched):
        for k in range(K):
            if acc[s, k] != 0:
                nnz += 1
    for a in range(K):
        for b in range(K):
            if tacc[a, b] != 0:
                nnz += 1
    for s in range(n_btouched):
        for q in range(KK):
            if bacc[s, q] != 0:
                nnz += 1
    idx = np.empty(nnz, dtype=np.int64)
    val = np.empty(nnz)
    r = 0
    for s in range(n_touched):
        off = touched[s] * K
        for k in range(K):
            if acc[s, k] != 0:
                idx[r] = off + k
                val[r] = acc[s, k]
                r += 1
    off = n_features * K
    for a in range(K):
        for b in range(K):
            if tacc[a, b] != 0:
                idx[r] = off + a * K + b
                val[r] = tacc[a, b]
                r += 1
    off = n_features * K + (KK if with_trans else 0)
    for s in range(n_btouched):
        goff = off + btouched[s] * KK
        for q in range(KK):
            if bacc[s, q] != 0:
                idx[r] = goff + q
                val[r] = bacc[s, q]
                r += 1
    return idx, val


class BigramSequenceChunk(SequenceChunk):
    """A :class:`~oracles.sequence_chunk.SequenceChunk` whose transitions depend on the position
    through input-conditioned bigram features (see the module docstring).

    Parameters
    ----------
    indptr, indices : ndarrays
        Unigram feature ids per token (CSR), as for :class:`SequenceChunk`.
    bindptr, bindices : ndarrays of int64 and int32
        Bigram feature ids per token (CSR; the first token of a sentence has none that count).
    sentence_ptr, labels, s0, s1, n_features, n_labels, transitions
        As for :class:`SequenceChunk`.
    n_bigram_features : int
        Number of bigram features (rows of ``W_B``).
    """

    def coordinates(self) -> None:
        """None: the input-conditioned transitions read blocks this chunk does not list (every
        coordinate of ``w`` is sent)."""
        return None

    def __init__(
        self,
        indptr,
        indices,
        bindptr,
        bindices,
        sentence_ptr,
        labels,
        s0,
        s1,
        n_features,
        n_bigram_features,
        n_labels,
        transitions,
    ):
        super().__init__(indptr, indices, sentence_ptr, labels, s0, s1, n_features, n_labels, transitions)
        self.bindptr, self.bindices = bindptr, bindices
        self.n_bigram_features = int(n_bigram_features)

    def __getstate__(self):
        state = super().__getstate__()
        t0, t1 = int(self.sentence_ptr[self.s0]), int(self.sentence_ptr[self.s1])
        q0, q1 = int(self.bindptr[t0]), int(self.bindptr[t1])
        state.update(bindptr=self.bindptr[t0 : t1 + 1] - q0, bindices=self.bindices[q0:q1])
        return state

    def example_cuts(self, w):
        """Not compiled for bigram chunks: :meth:`oracles.sequence.SequenceHingeOracle.example_cuts`
        builds their rows per sentence instead."""
        raise NotImplementedError("per-sentence cuts of bigram chunks are built by SequenceHingeOracle.example_cuts")

    def __call__(self, w, augment=True, with_cut=True, cached=False, per_example=False):
        if per_example:
            return self.example_cuts(w)
        W, T, WB = bigram_weights(w, self.n_features, self.n_labels, self.transitions, self.n_bigram_features)
        args = (W, T, WB, self.indptr, self.indices, self.bindptr, self.bindices, self.sentence_ptr, self.labels)
        yhat = np.empty(self.n_tokens, dtype=np.int32)
        if cached:
            cache = self._cache if self._cache is not None else np.empty((0, self.n_tokens), dtype=np.int32)
            loss, value = cached_decode_bigram_chunk(*args, self.s0, self.s1, cache, self._n_cached, yhat)
        else:
            loss, value = decode_bigram_chunk(*args, self.s0, self.s1, augment, yhat)
            if augment and with_cut:
                self._remember(yhat)
        if with_cut:
            idx, val = self._cut(yhat)
        else:
            idx, val = np.empty(0, np.int64), np.empty(0)
        return ChunkPartial(idx, val, float(loss), float(value), yhat)

    def _cut_kernel(self, y, y_base, yhat):
        return cut_bigram_chunk(
            self.indptr,
            self.indices,
            self.bindptr,
            self.bindices,
            self.sentence_ptr,
            y,
            y_base,
            yhat,
            self.s0,
            self.s1,
            self.n_features,
            self.n_bigram_features,
            self.n_labels,
            self.transitions,
        )

    def _cut(self, yhat):
        """The chunk's ``sum_i Phi(x_i, y^_i) - Phi(x_i, y_i)`` as sorted (coordinates, counts),
        updated from the last cut when fewer tokens changed than differ from the gold labels (as
        :meth:`SequenceChunk._cut`)."""
        t_lo = int(self.sentence_ptr[self.s0])
        last = self._last_cut if yhat.shape[0] >= sequence_chunk.INCREMENTAL_MIN_TOKENS else None
        if last is not None:
            last_yhat, last_idx, last_val = last
            n_changed = int(np.count_nonzero(yhat != last_yhat))
            n_wrong = int(np.count_nonzero(yhat != self.labels[t_lo : t_lo + yhat.shape[0]]))
            if n_changed < n_wrong:
                d_idx, d_val = self._cut_kernel(last_yhat, t_lo, yhat)
                idx, val = merge_sorted_sums(last_idx, last_val, d_idx, d_val)
                self._last_cut = (yhat, idx, val)
                return idx, val
        idx, val = self._cut_kernel(self.labels, 0, yhat)
        self._last_cut = (yhat, idx, val)
        return idx, val
