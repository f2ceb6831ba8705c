"""Real-valued features of the sequence-labelling oracle: a value per feature occurrence.

With a float value ``v_p`` beside each feature id ``f_p`` of a token (CRFsuite's attribute
values), the joint feature of :mod:`oracles.sequence` becomes

    Phi(x, y) = sum_t sum_{p in feats(t)} v_p e_{f_p} (x) e_{y_t}  +  sum_{t>=1} e_{y_{t-1}} (x) e_{y_t},

so the unary score of label ``k`` at token ``t`` is ``sum_p v_p W[f_p, k]`` and the cut sums
``v_p`` where the indicator features add 1. :class:`ValuedSequenceChunk` is the chunk task of
:class:`~oracles.sequence.SequenceHingeOracle` when it is given ``values``; without them the
oracle keeps :class:`~oracles.sequence_chunk.SequenceChunk` and its integer kernels unchanged.

The sums are floats, not integer counts, so a valued chunk builds every cut afresh from the
gold labels (the integer chunk's incremental update from its last cut is exact only for
integer counts), and its kernels accumulate in float64.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from cutplane.cuts import coordinate_dtype

from .sequence_chunk import ChunkExampleCuts, ChunkPartial, SequenceChunk
from .viterbi import viterbi_kernel

__all__ = ["ValuedSequenceChunk", "sentence_unary_values"]


@njit(nogil=True, cache=True, inline="always")
def sentence_unary_values(W, indptr, indices, values, t0, t1, unary):
    """``unary[t - t0, k] = sum_{p in feats(t)} values[p] * W[indices[p], k]`` for ``t0 <= t < t1``."""
    K = W.shape[1]
    for t in range(t0, t1):
        r = t - t0
        for k in range(K):
            unary[r, k] = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            f = indices[p]
            v = values[p]
            for k in range(K):
                unary[r, k] += v * W[f, k]


@njit(nogil=True, cache=True)
def _decode_chunk_values(
    W, trans, trans_t, indptr, indices, values, sent_ptr, y, s0, s1, augment, yhat, unary, score, back
):
    """Viterbi on sentences ``s0..s1`` with valued unary scores (as the integer chunk's
    ``_decode_chunk``); returns (sum of losses, sum of R_i)."""
    base = sent_ptr[s0]
    loss_sum = 0.0
    value_sum = 0.0
    for i in range(s0, s1):
        t0 = sent_ptr[i]
        t1 = sent_ptr[i + 1]
        if t1 == t0:
            continue
        sentence_unary_values(W, indptr, indices, values, t0, t1, unary)
        viterbi_kernel(unary, trans_t, y[t0:t1], augment, score, back, yhat[t0 - base : t1 - base])
        if augment:
            diff = 0.0
            loss = 0
            for t in range(t1 - t0):
                a = yhat[t0 - base + t]
                b = y[t0 + t]
                if a != b:
                    loss += 1
                    diff += unary[t, a] - unary[t, b]
                if t > 0:
                    diff += trans[yhat[t0 - base + t - 1], a] - trans[y[t0 + t - 1], b]
            loss_sum += loss
            value_sum += loss + diff
    return loss_sum, value_sum


@njit(nogil=True, cache=True)
def _cached_decode_chunk_values(W, trans, indptr, indices, values, sent_ptr, y, s0, s1, cache, n_cached, yhat):
    """The cached output (or the gold one) of largest ``Delta + score(y') - score(y)`` per sentence,
    with valued features; returns (sum of losses, sum of the values)."""
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
                        diff += values[p] * (W[f, a] - W[f, b])
                if t > t0:
                    pa = cache[c, t - 1 - base]
                    pb = y[t - 1]
                    if pa != pb or a != b:
                        diff += trans[pa, a] - trans[pb, b]
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
def _mark_features(indptr, indices, sent_ptr, y, yhat, s0, s1, slot):
    """``slot[f] = 0`` for every feature ``f`` of a token of sentences ``s0..s1`` where ``yhat``
    (chunk-local) and the gold ``y`` differ (``slot`` is -1 elsewhere on entry); returns how
    many features were marked."""
    n_touched = 0
    t_lo = sent_ptr[s0]
    for t in range(t_lo, sent_ptr[s1]):
        if yhat[t - t_lo] != y[t]:
            for p in range(indptr[t], indptr[t + 1]):
                f = indices[p]
                if slot[f] < 0:
                    slot[f] = 0
                    n_touched += 1
    return n_touched


@njit(nogil=True, cache=True)
def _cut_values(indptr, indices, values, sent_ptr, y, yhat, s0, s1, with_trans, slot, touched, acc, tacc):
    """``sum_i Phi(x_i, y^_i) - Phi(x_i, y_i)`` over sentences ``s0..s1`` with valued features
    (after :func:`_mark_features`): numbers the marked features in increasing order (``slot``,
    ``touched``), sums the values into ``acc`` (shape (n_touched, K), zero on entry) and the
    transition counts into ``tacc`` (shape (K, K), zero on entry); returns the number of
    nonzero entries."""
    K = acc.shape[1]
    j = 0
    for f in range(slot.shape[0]):
        if slot[f] == 0:
            slot[f] = j
            touched[j] = f
            j += 1
    t_lo = sent_ptr[s0]
    for i in range(s0, s1):
        for t in range(sent_ptr[i], sent_ptr[i + 1]):
            a = yhat[t - t_lo]
            b = y[t]
            if a != b:
                for p in range(indptr[t], indptr[t + 1]):
                    s = slot[indices[p]]
                    acc[s, a] += values[p]
                    acc[s, b] -= values[p]
            if with_trans and t > sent_ptr[i]:
                pa = yhat[t - 1 - t_lo]
                pb = y[t - 1]
                if pa != pb or a != b:
                    tacc[pa, a] += 1.0
                    tacc[pb, b] -= 1.0
    nnz = 0
    for s in range(acc.shape[0]):
        for k in range(K):
            if acc[s, k] != 0.0:
                nnz += 1
    for a in range(K):
        for b in range(K):
            if tacc[a, b] != 0.0:
                nnz += 1
    return nnz


@njit(nogil=True, cache=True)
def _to_sparse(touched, acc, tacc, n_features, idx, val):
    """The nonzero entries of :func:`_cut_values` as sorted coordinates ``idx`` and values ``val``:
    label weight ``touched[s] * K + k``, then the transition block from ``n_features * K``."""
    K = acc.shape[1]
    q = 0
    for s in range(acc.shape[0]):
        base = touched[s] * K
        for k in range(K):
            if acc[s, k] != 0.0:
                idx[q] = base + k
                val[q] = acc[s, k]
                q += 1
    base = n_features * K
    for a in range(K):
        for b in range(K):
            if tacc[a, b] != 0.0:
                idx[q] = base + a * K + b
                val[q] = tacc[a, b]
                q += 1


@njit(nogil=True, cache=True)
def _example_rows_values(
    indptr, indices, values, sent_ptr, y, yhat, s0, s1, n_features, K, with_trans, w, start, cols, vals, out_ptr, dots
):
    """Each sentence's ``Phi(x_i, y^_i) - Phi(x_i, y_i)`` with valued features as a sorted sparse
    row (zeros dropped), compacted in place as in the integer chunk; ``dots[i - s0]`` is the
    row's product with ``w``. Returns the number of entries."""
    t_lo = sent_ptr[s0]
    q = 0
    for i in range(s0, s1):
        p = start[i - s0]
        for t in range(sent_ptr[i], sent_ptr[i + 1]):
            a = yhat[t - t_lo]
            b = y[t]
            if a != b:
                for r in range(indptr[t], indptr[t + 1]):
                    f = indices[r]
                    cols[p] = f * K + a
                    vals[p] = values[r]
                    cols[p + 1] = f * K + b
                    vals[p + 1] = -values[r]
                    p += 2
            if with_trans and t > sent_ptr[i]:
                pa = yhat[t - 1 - t_lo]
                pb = y[t - 1]
                if a != b or pa != pb:
                    cols[p] = n_features * K + pa * K + a
                    vals[p] = 1.0
                    cols[p + 1] = n_features * K + pb * K + b
                    vals[p + 1] = -1.0
                    p += 2
        lo = start[i - s0]
        out_ptr[i - s0] = q
        order = np.argsort(cols[lo:p], kind="mergesort")
        sorted_cols = cols[lo:p][order]
        sorted_vals = vals[lo:p][order]
        dot = 0.0
        k = 0
        while k < sorted_cols.shape[0]:
            c = sorted_cols[k]
            v = 0.0
            while k < sorted_cols.shape[0] and sorted_cols[k] == c:
                v += sorted_vals[k]
                k += 1
            if v != 0.0:
                cols[q] = c
                vals[q] = v
                dot += v * w[c]
                q += 1
        dots[i - s0] = dot
    out_ptr[s1 - s0] = q
    return q


class ValuedSequenceChunk(SequenceChunk):
    """:class:`~oracles.sequence_chunk.SequenceChunk` with a float value per feature occurrence
    (``values``, aligned with ``indices``): the same calls, caches and answers, with the unary
    scores and the cuts weighted by the values. Every cut is built afresh (float sums)."""

    def __init__(self, indptr, indices, values, sentence_ptr, labels, s0, s1, n_features, n_labels, transitions):
        super().__init__(indptr, indices, sentence_ptr, labels, s0, s1, n_features, n_labels, transitions)
        self.values = values

    def __getstate__(self):
        state = super().__getstate__()
        t0, t1 = int(self.sentence_ptr[self.s0]), int(self.sentence_ptr[self.s1])
        state["values"] = self.values[int(self.indptr[t0]) : int(self.indptr[t1])]
        return state

    def example_cuts(self, w) -> ChunkExampleCuts:
        """Loss-augmented Viterbi at ``w`` and one cut per sentence (:class:`ChunkExampleCuts`)."""
        part = self(w, True, False)
        yhat = part.yhat
        ns = self.s1 - self.s0
        t_lo = int(self.sentence_ptr[self.s0])
        gold = self.labels[t_lo : t_lo + yhat.shape[0]]
        sent = self.sentence_ptr[self.s0 : self.s1 + 1] - t_lo
        wrong = np.concatenate([[0], np.cumsum(yhat != gold)])
        losses = (wrong[sent[1:]] - wrong[sent[:-1]]).astype(np.float64)
        # room per sentence: two entries per feature of a wrong token, two per token for the transitions
        wrong_tok = (yhat != gold).astype(np.int64)
        n_feat = np.diff(self.indptr[t_lo : t_lo + yhat.shape[0] + 1])
        per_tok = 2 * wrong_tok * n_feat + (2 if self.transitions else 0)
        cum = np.concatenate([[0], np.cumsum(per_tok)])
        bound = cum[sent[1:]] - cum[sent[:-1]]
        start = np.concatenate([[0], np.cumsum(bound)]).astype(np.int64)
        dim = self.n_features * self.n_labels + (self.n_labels**2 if self.transitions else 0)
        cols = np.empty(int(start[-1]), dtype=coordinate_dtype(dim))
        vals = np.empty(int(start[-1]))
        ptr = np.empty(ns + 1, dtype=np.int64)
        dots = np.empty(ns)
        nnz = _example_rows_values(
            self.indptr,
            self.indices,
            self.values,
            self.sentence_ptr,
            self.labels,
            yhat,
            self.s0,
            self.s1,
            self.n_features,
            self.n_labels,
            self.transitions,
            w,
            start,
            cols,
            vals,
            ptr,
            dots,
        )
        return ChunkExampleCuts(ptr, cols[:nnz].copy(), vals[:nnz].copy(), losses, losses + dots, yhat)

    def __call__(self, w, augment=True, with_cut=True, cached=False, per_example=False):
        if per_example:
            return self.example_cuts(w)
        K, nf = self.n_labels, self.n_features
        W = w[: nf * K].reshape(nf, K)
        T = w[nf * K :].reshape(K, K) if self.transitions else np.zeros((K, K))
        W.flags.writeable = False
        T.flags.writeable = False
        yhat = np.empty(self.n_tokens, dtype=np.int32)
        if cached:
            cache = self._cache if self._cache is not None else np.empty((0, self.n_tokens), dtype=np.int32)
            loss, value = _cached_decode_chunk_values(
                W,
                T,
                self.indptr,
                self.indices,
                self.values,
                self.sentence_ptr,
                self.labels,
                self.s0,
                self.s1,
                cache,
                self.n_cached,
                yhat,
            )
        else:
            n = self._max_sentence_length()
            loss, value = _decode_chunk_values(
                W,
                T,
                np.array(T.T, order="C"),
                self.indptr,
                self.indices,
                self.values,
                self.sentence_ptr,
                self.labels,
                self.s0,
                self.s1,
                augment,
                yhat,
                np.empty((n, K)),
                np.empty((n, K)),
                np.zeros((n, K), dtype=np.int32),
            )
            if augment and with_cut:
                self._remember(yhat)
        if with_cut:
            idx, val = self._cut(yhat)
        else:
            idx, val = np.empty(0, np.int64), np.empty(0)
        return ChunkPartial(idx, val, float(loss), float(value), yhat)

    def _cut(self, yhat):
        """The chunk's ``sum_i Phi(x_i, y^_i) - Phi(x_i, y_i)`` as sorted (coordinates, values),
        always from the gold labels (no incremental update: the sums are floats)."""
        K, nf = self.n_labels, self.n_features
        slot = np.full(nf, -1, dtype=np.int64)
        args = (self.sentence_ptr, self.labels, yhat, self.s0, self.s1)
        n_touched = _mark_features(self.indptr, self.indices, *args, slot)
        touched = np.empty(n_touched, dtype=np.int64)
        acc = np.zeros((n_touched, K))
        tacc = np.zeros((K, K))
        nnz = _cut_values(self.indptr, self.indices, self.values, *args, self.transitions, slot, touched, acc, tacc)
        idx = np.empty(nnz, dtype=np.int64)
        val = np.empty(nnz)
        _to_sparse(touched, acc, tacc, nf, idx, val)
        return idx, val
