"""One chunk of sentences of the sequence-labelling oracle: its decoding and its share of the cut.

:class:`SequenceChunk` is the :class:`cutplane.executors.ChunkTask` that
:class:`oracles.sequence.SequenceHingeOracle` maps over its executor. It runs the
(loss-augmented) Viterbi on its sentences in numba (the kernels release the GIL) and sums
``Phi(x_i, y^_i) - Phi(x_i, y_i)`` over them as exact integer counts, returned as a
:class:`ChunkPartial`. The weight layout is that of :mod:`oracles.sequence`, which re-exports
both classes.

The kernels also serve real-valued features (:class:`oracles.sequence_values.ValuedSequenceChunk`):
their ``values`` argument is a float64 value per feature occurrence (aligned with ``indices``),
which multiplies the weight where an indicator adds it, or None for indicator features. numba
compiles a specialisation of each kernel for ``values=None`` and drops the branches that read
``values`` from it, so the indicators' kernels are the integer ones (int32 counts for the cut).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from cutplane.cuts import coordinate_dtype
from cutplane.executors.mirror import PackedRow

from .viterbi import sentence_unary, viterbi_kernel

__all__ = ["SequenceChunk", "ChunkPartial", "ChunkExampleCuts", "merge_sorted_sums"]


@njit(nogil=True, cache=True)
def _decode_chunk(W, trans, trans_t, indptr, indices, values, sent_ptr, y, s0, s1, augment, yhat, unary, score, back):
    """Viterbi on sentences ``s0..s1``; writes ``yhat`` (chunk-local: token ``t`` at
    ``t - sent_ptr[s0]``); returns (sum of losses, sum of R_i). ``values``: a value per feature
    occurrence, or None for indicator features (see the module docstring).

    ``trans_t`` is ``trans`` transposed (C-contiguous); ``unary``, ``score`` (float64) and
    ``back`` (int32), each of shape (>= longest sentence, K), are scratch space. The caller
    allocates them: numba compiles each numpy function a kernel calls in every new process
    (the cache keeps only the kernels), so a kernel without them compiles faster on a first fit.
    """
    base = sent_ptr[s0]
    loss_sum = 0.0
    value_sum = 0.0
    for i in range(s0, s1):
        t0 = sent_ptr[i]
        t1 = sent_ptr[i + 1]
        if t1 == t0:
            continue
        sentence_unary(W, indptr, indices, t0, t1, unary, values)
        viterbi_kernel(unary, trans_t, y[t0:t1], augment, score, back, yhat[t0 - base : t1 - base])
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
                    diff += trans[yhat[t0 - base + t - 1], a] - trans[y[t0 + t - 1], b]
            loss_sum += loss
            value_sum += loss + diff
    return loss_sum, value_sum


@njit(nogil=True, cache=True)
def _cached_decode_chunk(W, trans, indptr, indices, values, sent_ptr, y, s0, s1, cache, n_cached, yhat):
    """For each sentence of ``s0..s1`` the output of largest ``Delta + score(y') - score(y)``
    among the gold labels (value 0) and the first ``n_cached`` rows of ``cache`` (chunk-local
    labels, shape (k, n_chunk_tokens)); writes it to ``yhat``; returns (sum of losses, sum of
    the values). Only tokens where an output differs from the gold labels are read. ``values``:
    a value per feature occurrence, or None for indicator features."""
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
                        if values is None:
                            diff += W[f, a] - W[f, b]
                        else:
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
def _mark_changed_features(indptr, indices, sent_ptr, y, y_base, yhat, s0, s1, slot):
    """``slot[f] = 0`` for every feature ``f`` of a token of sentences ``s0..s1`` where ``yhat``
    (chunk-local) and ``y`` (read at ``t - y_base``) differ (``slot`` is -1 elsewhere on entry);
    returns how many features were marked."""
    n_touched = 0
    t_lo = sent_ptr[s0]
    t_hi = sent_ptr[s1]
    for t in range(t_lo, t_hi):
        if yhat[t - t_lo] != y[t - y_base]:
            for p in range(indptr[t], indptr[t + 1]):
                f = indices[p]
                if slot[f] < 0:
                    slot[f] = 0
                    n_touched += 1
    return n_touched


@njit(nogil=True, cache=True)
def _cut_chunk(indptr, indices, values, sent_ptr, y, y_base, yhat, s0, s1, with_trans, slot, touched, acc, tacc):
    """Integer counts of ``sum_i Phi(x_i, y^_i) - Phi(x_i, y_i)`` over sentences ``s0..s1``
    (arguments as in :func:`_mark_changed_features`, after it): numbers the marked features in
    increasing order (``slot[f]``, ``touched`` of shape (n_touched,)), adds the label counts of
    each into ``acc`` (shape (n_touched, K), zero on entry) and the transition counts into
    ``tacc`` (shape (K, K), zero on entry; with ``with_trans`` only); returns the number of
    nonzero counts. Only tokens where the two labellings differ are read. With ``values`` (a
    value per feature occurrence; ``acc`` and ``tacc`` float64) the label sums add the values
    instead of 1."""
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
            b = y[t - y_base]
            if a != b:
                for p in range(indptr[t], indptr[t + 1]):
                    s = slot[indices[p]]
                    if values is None:
                        acc[s, a] += 1
                        acc[s, b] -= 1
                    else:
                        acc[s, a] += values[p]
                        acc[s, b] -= values[p]
            if with_trans and t > sent_ptr[i]:
                pa = yhat[t - 1 - t_lo]
                pb = y[t - 1 - y_base]
                if pa != pb or a != b:
                    tacc[pa, a] += 1
                    tacc[pb, b] -= 1
    nnz = 0
    for s in range(acc.shape[0]):
        for k in range(K):
            if acc[s, k] != 0:
                nnz += 1
    for a in range(K):
        for b in range(K):
            if tacc[a, b] != 0:
                nnz += 1
    return nnz


@njit(nogil=True, cache=True)
def _counts_to_sparse(touched, acc, tacc, n_features, idx, val):
    """The nonzero counts of :func:`_cut_chunk` as sorted coordinates ``idx`` (int64) and values
    ``val`` (float64), both of shape (nnz,): label weight ``touched[s] * K + k``, then the
    transition block from ``n_features * K``."""
    K = acc.shape[1]
    q = 0
    for s in range(acc.shape[0]):
        base = touched[s] * K
        for k in range(K):
            if acc[s, k] != 0:
                idx[q] = base + k
                val[q] = acc[s, k]
                q += 1
    base = n_features * K
    for a in range(K):
        for b in range(K):
            if tacc[a, b] != 0:
                idx[q] = base + a * K + b
                val[q] = tacc[a, b]
                q += 1


def _sparse_cut(indptr, indices, values, sent_ptr, y, y_base, yhat, s0, s1, n_features, K, with_trans):
    """Sparse sum over sentences s0..s1 of Phi(x_i, y^_i) - Phi(x_i, y_i) (``yhat`` chunk-local,
    ``y`` read at ``t - y_base``: the gold labels with ``y_base = 0``, or an earlier chunk-local
    output with ``y_base = sent_ptr[s0]``, which gives the change between two cuts). Only tokens
    where the two labellings differ are read. ``values``: a value per feature occurrence (float64
    sums), or None (indicator features: int32 counts).

    Returns sorted int64 coordinates and float64 values (zeros removed). The arrays are
    allocated here, between the compiled passes: numba compiles each numpy function a kernel
    calls in every new process (its cache keeps only the kernels), so kernels without them
    compile faster on a first fit.
    """
    slot = np.full(n_features, -1, dtype=np.int64)
    n_touched = _mark_changed_features(indptr, indices, sent_ptr, y, y_base, yhat, s0, s1, slot)
    touched = np.empty(n_touched, dtype=np.int64)
    # integer counts: half the memory of float64, exact; real values: float64 sums
    acc_dtype = np.int32 if values is None else np.float64
    acc = np.zeros((n_touched, K), dtype=acc_dtype)
    tacc = np.zeros((K, K), dtype=acc_dtype)
    nnz = _cut_chunk(indptr, indices, values, sent_ptr, y, y_base, yhat, s0, s1, with_trans, slot, touched, acc, tacc)
    idx = np.empty(nnz, dtype=np.int64)
    val = np.empty(nnz)
    _counts_to_sparse(touched, acc, tacc, n_features, idx, val)
    return idx, val


@njit(nogil=True, cache=True)
def _example_row_bounds(indptr, sent_ptr, y, yhat, s0, s1, with_trans, bound):
    """``bound[i - s0]``: at most how many entries sentence ``i``'s ``Phi(x_i, y^_i) - Phi(x_i, y_i)``
    has before duplicates merge (two per feature of a wrong token, two per changed transition)."""
    t_lo = sent_ptr[s0]
    for i in range(s0, s1):
        c = 0
        for t in range(sent_ptr[i], sent_ptr[i + 1]):
            a = yhat[t - t_lo]
            b = y[t]
            if a != b:
                c += 2 * (indptr[t + 1] - indptr[t])
            if with_trans and t > sent_ptr[i] and (a != b or yhat[t - 1 - t_lo] != y[t - 1]):
                c += 2
        bound[i - s0] = c


@njit(nogil=True, cache=True)
def _example_rows(
    indptr, indices, values, sent_ptr, y, yhat, s0, s1, n_features, K, with_trans, w, start, cols, vals, out_ptr, dots
):
    """Each sentence's ``Phi(x_i, y^_i) - Phi(x_i, y_i)`` as a sorted sparse row (zeros dropped),
    compacted in place: sentence ``i``'s entries are first written at ``start[i - s0]`` (room
    from :func:`_example_row_bounds`), sorted, merged, and moved down to ``out_ptr[i - s0]``;
    ``dots[i - s0]`` is the row's product with ``w``. Returns the number of entries. With
    ``values`` (a value per feature occurrence) a feature's entries are its values, merged in a
    stable order (float sums)."""
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
                    v = 1.0 if values is None else values[r]
                    cols[p] = f * K + a
                    vals[p] = v
                    cols[p + 1] = f * K + b
                    vals[p + 1] = -v
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
        if values is None:
            order = np.argsort(cols[lo:p])
        else:
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


@njit(nogil=True, cache=True)
def merge_sorted_sums(ia, va, ib, vb):
    """Sum of two sparse vectors given as sorted unique int64 coordinates and float64 values:
    ``(indices, values)`` with the zeros dropped, in one merge pass (O(nnz))."""
    n_a, n_b = ia.shape[0], ib.shape[0]
    idx = np.empty(n_a + n_b, dtype=np.int64)
    val = np.empty(n_a + n_b)
    p = q = r = 0
    while p < n_a and q < n_b:
        if ia[p] < ib[q]:
            idx[r] = ia[p]
            val[r] = va[p]
            p += 1
            r += 1
        elif ib[q] < ia[p]:
            idx[r] = ib[q]
            val[r] = vb[q]
            q += 1
            r += 1
        else:
            v = va[p] + vb[q]
            if v != 0:
                idx[r] = ia[p]
                val[r] = v
                r += 1
            p += 1
            q += 1
    while p < n_a:
        idx[r] = ia[p]
        val[r] = va[p]
        p += 1
        r += 1
    while q < n_b:
        idx[r] = ib[q]
        val[r] = vb[q]
        q += 1
        r += 1
    return idx[:r], val[:r]


class ChunkPartial(NamedTuple):
    """One chunk's share of the 1-slack cut (unnormalised sums over its sentences).

    Attributes
    ----------
    indices : ndarray of shape (nnz,), int64
        Sorted coordinates of ``sum_i Phi(x_i, y^_i) - Phi(x_i, y_i)``.
    values : ndarray of shape (nnz,), float64
        Its nonzero entries (integer counts).
    loss : float
        ``sum_i Delta(y_i, y^_i)``.
    value : float
        ``sum_i R_i`` (the hinge terms).
    yhat : ndarray of shape (n_chunk_tokens,), int32
        The chunk's decoded labels.
    """

    indices: np.ndarray
    values: np.ndarray
    loss: float
    value: float
    yhat: np.ndarray

    def __reduce__(self):
        """Pickled compactly (it travels back from worker processes at every call): sorted
        indices as their gaps and integer counts in the narrowest exact types
        (:class:`cutplane.executors.mirror.PackedRow`), labels as int8 up to 127 labels; read
        back as int64 / float64 / int32, the same values."""
        counts = _narrow(self.values, np.int32)
        return _partial_from_compact, (
            PackedRow(np.asarray(self.indices), counts, 1.0),
            self.loss,
            self.value,
            _narrow(self.yhat, np.int8),
        )


class ChunkExampleCuts(NamedTuple):
    """One chunk's cuts, one per sentence (the n-slack method, :meth:`SequenceHingeOracle.example_cuts`).

    Attributes
    ----------
    indptr : ndarray of shape (n_chunk_sentences + 1,), int64
        Sentence ``i``'s row is ``indices/values[indptr[i]:indptr[i + 1]]``.
    indices : ndarray of shape (nnz,), int32 (int64 when ``dim`` exceeds int32)
        Sorted coordinates of ``Phi(x_i, y^_i) - Phi(x_i, y_i)`` per sentence.
    values : ndarray of shape (nnz,), int8, int16 or float64
        Their values, in the narrowest of these types that holds them exactly.
    losses : ndarray of shape (n_chunk_sentences,), float64
        ``Delta(y_i, y^_i)``.
    risks : ndarray of shape (n_chunk_sentences,), float64
        ``R_i(w) = Delta(y_i, y^_i) + <w, Phi(x_i, y^_i) - Phi(x_i, y_i)>``.
    yhat : ndarray of shape (n_chunk_tokens,), int32
    """

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    losses: np.ndarray
    risks: np.ndarray
    yhat: np.ndarray


def _trimmed(a, n):
    """``a[:n]``, copied (letting go of the scratch past ``n``) unless that is at most a tenth."""
    return a[:n] if 10 * n >= 9 * a.shape[0] else a[:n].copy()


def _exact_values(vals):
    """The rows' values in the narrowest type holding them exactly: int8 or int16 (a
    structured cut's counts, mostly +-1), else float64 (a copy either way). No values: int8,
    so that an empty chunk does not widen the others' when they are stacked."""
    if vals.size == 0:
        return np.empty(0, dtype=np.int8)
    for dtype in (np.int8, np.int16):
        out = _narrow(vals, dtype)
        if out.dtype == dtype:
            return out
    return np.array(vals, dtype=np.float64)


def _narrow(a, dtype):
    """``a`` as ``dtype`` when every value survives the round trip exactly, else ``a`` itself."""
    a = np.ascontiguousarray(a)
    if a.size == 0:
        return a
    info = np.iinfo(dtype)
    if not (info.min <= a.min() and a.max() <= info.max):
        return a
    b = a.astype(dtype)
    if a.dtype.kind in "iu":
        return b
    back = b.astype(a.dtype)  # bit for bit (a -0.0 or a fraction keeps the float array)
    return b if np.array_equal(back.view(np.uint8), a.view(np.uint8)) else a


def _partial_from_compact(row, loss, value, yhat):
    indices, values, _ = row.unpack()
    return ChunkPartial(
        np.asarray(indices, dtype=np.int64),
        np.asarray(values, dtype=np.float64),
        loss,
        value,
        np.asarray(yhat, dtype=np.int32),
    )


#: Loss-augmented outputs kept per chunk for cached cuts (the most recent distinct ones).
CACHE_SIZE = 5

#: Chunks of at least this many tokens build a cut from their last one (:meth:`SequenceChunk._cut`);
#: smaller ones always afresh: both take microseconds there, and a small first fit then does not
#: compile the merge (a cold start's cost, ``docs/results/cold_start.md``).
INCREMENTAL_MIN_TOKENS = 20_000


class SequenceChunk:
    """A :class:`cutplane.executors.ChunkTask`: sentences ``s0..s1`` of a tagging dataset.

    In this process it shares the dataset's arrays; pickled (for worker processes) it carries
    only its own sentences, rebased to start at 0.

    ``chunk(w, augment=True, with_cut=True, cached=False, per_example=False)`` decodes its
    sentences at ``w`` (shape (dim,)) and returns a :class:`ChunkPartial` (empty ``indices`` when
    ``with_cut`` is False); with ``per_example`` it returns one cut per sentence instead
    (:meth:`example_cuts`). A loss-augmented call with the cut also keeps its outputs in the chunk's cache (the
    last :data:`CACHE_SIZE` distinct ones, kept where the chunk lives: in this process or on its
    worker). ``cached=True`` decodes from that cache instead of running Viterbi: per sentence,
    the cached output (or the gold one) of largest ``Delta + <w, dPhi>``; its cut is a valid
    minorant of the risk, its value a lower bound (:class:`cutplane.cuts.CachedCut`).
    """

    def __init__(self, indptr, indices, sentence_ptr, labels, s0, s1, n_features, n_labels, transitions):
        self.indptr, self.indices, self.sentence_ptr, self.labels = indptr, indices, sentence_ptr, labels
        self.s0, self.s1 = int(s0), int(s1)
        self.n_features, self.n_labels, self.transitions = int(n_features), int(n_labels), bool(transitions)
        # a float64 value per feature occurrence (aligned with indices), or None: indicator features
        # (set by oracles.sequence_values.ValuedSequenceChunk)
        self.values: np.ndarray | None = None
        self._cache = None  # (CACHE_SIZE, n_tokens) int32, filled on the first exact call
        self._last_cut = None  # (yhat, indices, values) of the last cut built: the next one is its update
        self._n_cached = 0
        self._next_slot = 0

    @property
    def n_cached(self) -> int:
        """Outputs in the cache (at most :data:`CACHE_SIZE`)."""
        return self._n_cached

    def _remember(self, yhat):
        """Keep ``yhat`` in the cache (ring of :data:`CACHE_SIZE` rows) unless it is there already."""
        if self._cache is None:
            self._cache = np.empty((CACHE_SIZE, yhat.shape[0]), dtype=np.int32)
        for c in range(self._n_cached):
            if np.array_equal(self._cache[c], yhat):
                return
        self._cache[self._next_slot] = yhat
        self._next_slot = (self._next_slot + 1) % CACHE_SIZE
        self._n_cached = min(self._n_cached + 1, CACHE_SIZE)

    def __getstate__(self):
        t0, t1 = int(self.sentence_ptr[self.s0]), int(self.sentence_ptr[self.s1])
        p0, p1 = int(self.indptr[t0]), int(self.indptr[t1])
        state = dict(self.__dict__)
        state.update(
            indptr=self.indptr[t0 : t1 + 1] - p0,
            indices=self.indices[p0:p1],
            sentence_ptr=self.sentence_ptr[self.s0 : self.s1 + 1] - t0,
            labels=self.labels[t0:t1],
            s0=0,
            s1=self.s1 - self.s0,
        )
        return state

    @property
    def n_tokens(self) -> int:
        return int(self.sentence_ptr[self.s1] - self.sentence_ptr[self.s0])

    def _max_sentence_length(self) -> int:
        """Tokens in the chunk's longest sentence (0 without sentences)."""
        if self.s1 <= self.s0:
            return 0
        return int(np.diff(self.sentence_ptr[self.s0 : self.s1 + 1]).max())

    def coordinates(self) -> np.ndarray | None:
        """The coordinates of ``w`` this chunk reads, sorted int64: the label weights of every
        feature its tokens have (``f * K .. f * K + K - 1``) and the transition block
        (:class:`cutplane.executors.ChunkTask`)."""
        K, nf = self.n_labels, self.n_features
        t0, t1 = int(self.sentence_ptr[self.s0]), int(self.sentence_ptr[self.s1])
        seen = np.zeros(nf, dtype=bool)  # a mask, not np.unique: one pass instead of a sort or a hash
        seen[self.indices[int(self.indptr[t0]) : int(self.indptr[t1])]] = True
        feats = np.flatnonzero(seen).astype(np.int64, copy=False)
        parts = [(feats[:, None] * K + np.arange(K, dtype=np.int64)).ravel()]
        if self.transitions:
            parts.append(np.arange(nf * K, nf * K + K * K, dtype=np.int64))
        return np.concatenate(parts)

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
        bound = np.zeros(ns, dtype=np.int64)
        args = (self.sentence_ptr, self.labels, yhat, self.s0, self.s1)
        _example_row_bounds(self.indptr, *args, self.transitions, bound)
        start = np.concatenate([[0], np.cumsum(bound)]).astype(np.int64)
        # the coordinates in the type the n-slack pool stores (no conversion there)
        dim = self.n_features * self.n_labels + (self.n_labels**2 if self.transitions else 0)
        cols = np.empty(int(start[-1]), dtype=coordinate_dtype(dim))
        # indicator features: a row's values are sums of at most bound[i] terms +-1, exact in
        # float32 while that is below 2**24 (half the scratch of float64)
        exact32 = self.values is None and int(bound.max(initial=0)) < 2**24
        vals = np.empty(int(start[-1]), dtype=np.float32 if exact32 else np.float64)
        ptr = np.empty(ns + 1, dtype=np.int64)
        dots = np.empty(ns)
        nnz = _example_rows(
            self.indptr,
            self.indices,
            self.values,
            *args,
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
        return ChunkExampleCuts(ptr, _trimmed(cols, nnz), _exact_values(vals[:nnz]), losses, losses + dots, yhat)

    def __call__(self, w, augment=True, with_cut=True, cached=False, per_example=False):
        if per_example:  # how the executor's map reaches example_cuts
            return self.example_cuts(w)
        K, nf = self.n_labels, self.n_features
        W = w[: nf * K].reshape(nf, K)
        T = w[nf * K :].reshape(K, K) if self.transitions else np.zeros((K, K))
        # read-only views: the kernels are compiled once, for the engine's frozen queries and
        # for a model's writable weights alike (each specialisation is one more compile in a new
        # process; the compile times of a first fit: docs/results/cold_start.md)
        W.flags.writeable = False
        T.flags.writeable = False
        yhat = np.empty(self.n_tokens, dtype=np.int32)
        if cached:
            cache = self._cache if self._cache is not None else np.empty((0, self.n_tokens), dtype=np.int32)
            loss, value = _cached_decode_chunk(
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
                self._n_cached,
                yhat,
            )
        else:
            n = self._max_sentence_length()
            loss, value = _decode_chunk(
                W,
                T,
                np.array(T.T, order="C"),  # a writable copy: one specialisation of the Viterbi kernel
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
        """The chunk's ``sum_i Phi(x_i, y^_i) - Phi(x_i, y_i)`` as sorted (coordinates, counts).

        Consecutive cuts (exact or cached) mostly pick the same outputs: when fewer tokens changed
        since the chunk's last cut than differ from the gold labels, the change
        ``sum_i Phi(x_i, y^_i) - Phi(x_i, y'_i)`` (``y'`` the last cut's outputs) is built from
        the changed tokens only and merged into the last cut's sums (integer counts: exact, the
        same cut either way; ``tests/oracles/test_sequence_oracle.py``). With real values the sums
        are floats, whose rounding would depend on the path: every cut is built afresh."""
        t_lo = int(self.sentence_ptr[self.s0])
        args = (self.s0, self.s1, self.n_features, self.n_labels, self.transitions)
        if self.values is not None:
            return _sparse_cut(self.indptr, self.indices, self.values, self.sentence_ptr, self.labels, 0, yhat, *args)
        last = self._last_cut if yhat.shape[0] >= INCREMENTAL_MIN_TOKENS else None
        if last is not None:
            last_yhat, last_idx, last_val = last
            n_changed = int(np.count_nonzero(yhat != last_yhat))
            n_wrong = int(np.count_nonzero(yhat != self.labels[t_lo : t_lo + yhat.shape[0]]))
            if n_changed < n_wrong:
                d_idx, d_val = _sparse_cut(
                    self.indptr, self.indices, None, self.sentence_ptr, last_yhat, t_lo, yhat, *args
                )
                idx, val = merge_sorted_sums(last_idx, last_val, d_idx, d_val)
                self._last_cut = (yhat, idx, val)
                return idx, val
        idx, val = _sparse_cut(self.indptr, self.indices, None, self.sentence_ptr, self.labels, 0, yhat, *args)
        self._last_cut = (yhat, idx, val)
        return idx, val
