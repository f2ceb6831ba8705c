"""The 1-slack structural-SVM oracle of first-order sequence labelling (Hamming loss).

For examples ``(x_i, y_i)``, ``i = 1..n``, with joint feature map

    Phi(x, y) = sum_t psi(x, t) (x) e_{y_t}  +  sum_{t>=1} e_{y_{t-1}} (x) e_{y_t}

(``psi(x, t)``: 0/1 indicator of the features of token ``t``) and weights laid out as
``w = concat(W.ravel(), T.ravel())``, ``W`` of shape (n_features, n_labels) row-major and
``T`` of shape (n_labels, n_labels) with ``T[a, b]`` the score of ``a`` followed by ``b``,
the oracle computes for every example the most violated output (MTL eq. 9)

    y^_i = argmax_y  Delta(y_i, y) + <w, Phi(x_i, y)> - <w, Phi(x_i, y_i)>

with ``Delta`` the Hamming loss (number of wrong tokens), and returns the cut (MTL eq. 5)

    a = -(1/n) sum_i dPhi_i(y^_i),   dPhi_i(y) = Phi(x_i, y_i) - Phi(x_i, y),
    b =  (1/n) sum_i Delta(y_i, y^_i),
    R(w) = <a, w> + b = (1/n) sum_i max_y [Delta(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>].

The slope is a scipy CSR row of shape (1, dim), accumulated in numba only over the tokens
where ``y^`` differs from ``y``. The map over examples runs through an executor from
:mod:`cutplane.executors` over chunks of sentences (the kernels release the GIL): each chunk is a
:class:`SequenceChunk` task, bound to the executor once (for worker processes and Dask: shipped
once, only its own sentences), after which a call sends ``w`` and gets back the chunk's
:class:`ChunkPartial` (sorted integer counts, loss, labels); the counts are merged exactly.
Both classes and the chunk's numba kernels live in :mod:`oracles.sequence_chunk` (re-exported
here).

Input-conditioned bigrams (CRF++'s ``B01:%x[0,1]``): with ``bigram_features`` the transition
score depends on the position, ``T_t[a, b] = T[a, b] + sum_{g in beta(x, t)} W_B[g, a, b]``,
and ``Phi`` gains ``sum_{t>=1} beta(x, t) (x) e_{y_{t-1}} (x) e_{y_t}``; ``w`` ends with the
``W_B`` block of shape (n_bigram_features, n_labels, n_labels). Those chunks are
:class:`oracles.sequence_bigram.BigramSequenceChunk` with kernels of their own; without
``bigram_features`` nothing changes.

Real-valued features (CRFsuite's attribute values): with ``values``, a float per feature
occurrence aligned with ``indices``, ``psi(x, t)`` holds the values instead of 1, so the unary
score of label ``k`` at token ``t`` is ``sum_p values[p] * W[indices[p], k]`` and ``dPhi`` sums
the values. Those chunks are :class:`oracles.sequence_values.ValuedSequenceChunk` (the same
kernels given the values, float sums, every cut built afresh); without ``values`` (None) the
integer kernels run unchanged.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from cutplane.cuts import CachedCut, Cut, ExampleCuts, OracleResult, slope_dot
from cutplane.exceptions import InputError
from cutplane.executors import bind_tasks, default_n_chunks, get_executor
from cutplane.points import checked_point

from .sequence_chunk import ChunkPartial, SequenceChunk, merge_sorted_sums
from .viterbi import sentence_unary, split_chain_weights, viterbi

__all__ = ["viterbi", "SequenceHingeOracle", "SequenceChunk", "ChunkPartial", "viterbi_decode"]


def _check_int_array(a, name, ndim=1):
    arr = np.asarray(a)
    if arr.ndim != ndim or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise InputError(
            f"expected an integer array with {ndim} dimension(s), got shape {arr.shape} dtype {arr.dtype}", field=name
        )
    return arr


def _stacked_rows(parts, dim):
    """The chunks' rows (:class:`~oracles.sequence_chunk.ChunkExampleCuts`) as one CSR matrix of
    shape (n_samples, dim), in chunk order. Each chunk's arrays are copied into the matrix's
    and let go at once (``parts`` is emptied), so the rows are held about once, not twice."""
    n_rows = sum(len(p.indptr) - 1 for p in parts)
    nnz = sum(len(p.indices) for p in parts)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    indices = np.empty(nnz, dtype=np.result_type(*[p.indices.dtype for p in parts]))
    data = np.empty(nnz, dtype=np.result_type(*[p.values.dtype for p in parts]))
    row = pos = 0
    for k in range(len(parts)):
        p, parts[k] = parts[k], None
        m, q = len(p.indptr) - 1, len(p.indices)
        indptr[row + 1 : row + m + 1] = p.indptr[1:] + pos
        indices[pos : pos + q] = p.indices
        data[pos : pos + q] = p.values
        row, pos = row + m, pos + q
        del p
    return sp.csr_matrix((data, indices, indptr), shape=(n_rows, dim))


def _merge_counts(idx_parts, val_parts):
    """Sum sparse vectors given as (sorted unique coordinates, values) by a tree of pairwise merges."""
    parts = list(zip(idx_parts, val_parts))
    while len(parts) > 1:
        merged = [merge_sorted_sums(a[0], a[1], b[0], b[1]) for a, b in zip(parts[::2], parts[1::2])]
        parts = merged + ([parts[-1]] if len(parts) % 2 else [])
    return parts[0]


class SequenceHingeOracle:
    """1-slack structural hinge risk of first-order sequence labelling with Hamming loss.

    Parameters
    ----------
    indptr : array-like of int of shape (n_tokens + 1,)
        Token ``t``'s feature ids are ``indices[indptr[t]:indptr[t + 1]]`` (all sentences
        concatenated).
    indices : array-like of int of shape (nnz,)
        Feature ids in ``[0, n_features)``.
    sentence_ptr : array-like of int of shape (n_samples + 1,)
        Sentence ``i`` is tokens ``sentence_ptr[i]:sentence_ptr[i + 1]``.
    labels : array-like of int of shape (n_tokens,)
        Gold labels in ``[0, n_labels)``.
    n_features, n_labels : int
    transitions : bool, default=True
        Include the (n_labels, n_labels) transition block after ``W``.
    bigram_features : (indptr, indices, n_bigram_features), optional
        Input-conditioned bigram feature ids per token (CSR over the same tokens; ids at the
        first token of a sentence are not used): each id ``g`` adds the block ``W_B[g]`` of shape
        (n_labels, n_labels), stored at the end of ``w``, to the transition into that token.
    values : array-like of float of shape (nnz,), optional
        The value of each feature occurrence (aligned with ``indices``, finite): real-valued
        features. None (default): every occurrence counts 1, the integer kernels. Not with
        ``bigram_features``.
    executor : None, str or executor, default=None
        Map over chunks of sentences (:func:`cutplane.executors.get_executor`); serial by default.
    n_chunks : int, optional
        Number of chunks (balanced by tokens); default ``executor.chunks_per_worker * n_workers``
        when the executor has that attribute, else ``2 * executor.n_workers``, 1 when serial
        (:func:`cutplane.executors.default_n_chunks`).

    Attributes
    ----------
    dim : int
        ``n_features * n_labels`` (+ ``n_labels ** 2`` with transitions, + ``n_bigram_features *
        n_labels ** 2`` with bigram features).
    n_samples : int
        Number of sentences ``n`` (the risk is an average over them).
    risk_lower_bound : float
        0: the gold labelling is among those maximised over, so every term of the risk is
        ``>= 0``; the engine adds the cut ``R(w) >= 0`` (a lower bound from the first iteration).
    """

    risk_lower_bound = 0.0
    #: The value of each feature occurrence (float64, aligned with ``indices``), or None: indicators.
    values: np.ndarray | None = None
    #: Every example's hinge is ``>= 0`` (the gold labelling is among the outputs): the n-slack floor.
    example_lower_bound = 0.0

    def __init__(
        self,
        indptr,
        indices,
        sentence_ptr,
        labels,
        n_features,
        n_labels,
        *,
        transitions=True,
        bigram_features=None,
        values=None,
        executor=None,
        n_chunks=None,
    ):
        self.indptr = np.ascontiguousarray(_check_int_array(indptr, "indptr"), dtype=np.int64)
        self.indices = np.ascontiguousarray(_check_int_array(indices, "indices"), dtype=np.int32)
        self.sentence_ptr = np.ascontiguousarray(_check_int_array(sentence_ptr, "sentence_ptr"), dtype=np.int64)
        self.labels = np.ascontiguousarray(_check_int_array(labels, "labels"), dtype=np.int32)
        self.n_features = int(n_features)
        self.n_labels = int(n_labels)
        self.transitions = bool(transitions)
        n_tokens = len(self.indptr) - 1
        if self.n_labels < 1 or self.n_features < 0:
            raise InputError(f"need n_labels >= 1 and n_features >= 0, got {n_labels}, {n_features}")
        if (
            n_tokens < 0
            or self.indptr[0] != 0
            or self.indptr[-1] != len(self.indices)
            or np.any(np.diff(self.indptr) < 0)
        ):
            raise InputError("indptr must start at 0, be non-decreasing and end at len(indices)", field="indptr")
        if (
            len(self.sentence_ptr) < 1
            or self.sentence_ptr[0] != 0
            or self.sentence_ptr[-1] != n_tokens
            or np.any(np.diff(self.sentence_ptr) < 0)
        ):
            raise InputError(
                f"sentence_ptr must start at 0, be non-decreasing and end at n_tokens={n_tokens}", field="sentence_ptr"
            )
        if len(self.labels) != n_tokens:
            raise InputError(f"labels has {len(self.labels)} entries, expected n_tokens={n_tokens}", field="labels")
        if n_tokens and (self.labels.min() < 0 or self.labels.max() >= self.n_labels):
            raise InputError(f"labels must be in [0, {self.n_labels})", field="labels")
        if len(self.indices) and (self.indices.min() < 0 or self.indices.max() >= self.n_features):
            raise InputError(f"feature ids must be in [0, {self.n_features})", field="indices")
        self.n_samples = len(self.sentence_ptr) - 1
        if self.n_samples < 1:
            raise InputError("need at least one sentence", field="sentence_ptr")
        self._set_bigram_features(bigram_features, n_tokens)
        self._set_values(values)
        K = self.n_labels
        self.dim = self.n_features * K + (K * K if self.transitions else 0) + self.n_bigram_features * K * K
        self.executor = get_executor(executor)
        if n_chunks is None:
            n_chunks = default_n_chunks(self.executor)
        self.chunks = self._token_balanced_chunks(int(n_chunks))
        self.tasks = self._new_tasks()
        self._bound = None

    def _set_bigram_features(self, bigram_features, n_tokens):
        """Check and keep the input-conditioned bigram features (None: the plain chain)."""
        self.bigram_indptr = self.bigram_indices = None
        self.n_bigram_features = 0
        if bigram_features is None:
            return
        try:
            bindptr, bindices, nbf = bigram_features
        except (TypeError, ValueError):
            raise InputError(
                "bigram_features must be a triple (indptr, indices, n_bigram_features)", field="bigram_features"
            ) from None
        bindptr = np.ascontiguousarray(_check_int_array(bindptr, "bigram_features"), dtype=np.int64)
        bindices = np.ascontiguousarray(_check_int_array(bindices, "bigram_features"), dtype=np.int32)
        nbf = int(nbf)
        if nbf < 0:
            raise InputError(f"need n_bigram_features >= 0, got {nbf}", field="bigram_features")
        if (
            len(bindptr) != n_tokens + 1
            or bindptr[0] != 0
            or bindptr[-1] != len(bindices)
            or np.any(np.diff(bindptr) < 0)
        ):
            raise InputError(
                f"bigram indptr must have n_tokens + 1 = {n_tokens + 1} entries, start at 0, be non-decreasing and "
                "end at len(bigram indices)",
                field="bigram_features",
            )
        if len(bindices) and (bindices.min() < 0 or bindices.max() >= nbf):
            raise InputError(f"bigram feature ids must be in [0, {nbf})", field="bigram_features")
        self.bigram_indptr, self.bigram_indices, self.n_bigram_features = bindptr, bindices, nbf

    def _set_values(self, values):
        """Check and keep the feature values (None: indicator features, the integer kernels). None
        stays the class attribute, so an oracle without values has the attributes, and the
        checkpoint fingerprint (:func:`cutplane.fingerprint.fingerprint`), it had before values."""
        self.__dict__.pop("values", None)
        if values is None:
            return
        arr = np.asarray(values)
        if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.number)) or np.iscomplexobj(arr):
            raise InputError(
                f"values must be a 1-d real array, got shape {arr.shape} dtype {arr.dtype}", field="values"
            )
        arr = np.ascontiguousarray(arr, dtype=np.float64)
        if len(arr) != len(self.indices):
            raise InputError(
                f"values has {len(arr)} entries, expected one per feature id ({len(self.indices)})", field="values"
            )
        if not np.all(np.isfinite(arr)):
            raise InputError("feature values must be finite (no NaN or inf)", field="values")
        if self.bigram_indptr is not None:
            raise InputError(
                "real-valued features are not supported with input-conditioned bigram features", field="values"
            )
        self.values = arr

    @property
    def conditioned(self) -> bool:
        """True with input-conditioned bigram features (position-dependent transitions)."""
        return self.bigram_indptr is not None

    def _chunk(self, s0, s1):
        """The chunk task of sentences ``s0..s1``."""
        if self.conditioned:
            from .sequence_bigram import BigramSequenceChunk

            return BigramSequenceChunk(
                self.indptr,
                self.indices,
                self.bigram_indptr,
                self.bigram_indices,
                self.sentence_ptr,
                self.labels,
                s0,
                s1,
                self.n_features,
                self.n_bigram_features,
                self.n_labels,
                self.transitions,
            )
        rest = (self.sentence_ptr, self.labels, s0, s1, self.n_features, self.n_labels, self.transitions)
        if self.values is not None:
            from .sequence_values import ValuedSequenceChunk

            return ValuedSequenceChunk(self.indptr, self.indices, self.values, *rest)
        return SequenceChunk(self.indptr, self.indices, *rest)

    def _new_tasks(self):
        return [self._chunk(s0, s1) for s0, s1 in self.chunks]

    def clear_cache(self) -> None:
        """Forget the outputs cached by earlier calls (:meth:`cached_cut` then starts from the
        gold outputs alone): fresh chunk tasks, shipped again at the next call. For benchmarks
        that compare runs on one oracle."""
        if self._bound is not None:
            self._bound.close()
            self._bound = None
        self.tasks = self._new_tasks()

    def _map(self, w, *args):
        """The chunk tasks at ``w`` through the executor (bound, i.e. shipped, at the first call)."""
        if self._bound is None:
            self._bound = bind_tasks(self.executor, self.tasks)
        return self._bound.map(w, *args)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_bound"] = None
        return state

    def _token_balanced_chunks(self, n_chunks):
        if n_chunks < 1:
            raise InputError(f"n_chunks must be >= 1, got {n_chunks}", field="n_chunks")
        n_tok = self.sentence_ptr[-1]
        targets = np.linspace(0, n_tok, n_chunks + 1)[1:-1]
        cuts = np.searchsorted(self.sentence_ptr, targets)
        edges = np.unique(np.concatenate([[0], cuts, [self.n_samples]]))
        return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]

    # -- weights ------------------------------------------------------------------------------
    def split_weights(self, w):
        """Views ``(W, T)`` of ``w``: shapes (n_features, n_labels) and (n_labels, n_labels) (zeros when no B).

        With bigram features, validates ``w`` of length :attr:`dim` and returns its ``W`` and ``T``
        (:meth:`bigram_weights` gives ``W_B``)."""
        if not self.conditioned:
            return split_chain_weights(w, self.n_features, self.n_labels, self.transitions)
        w = self._checked_w(w)
        K, nW = self.n_labels, self.n_features * self.n_labels
        W = w[:nW].reshape(self.n_features, K)
        T = w[nW : nW + K * K].reshape(K, K) if self.transitions else np.zeros((K, K))
        return W, T

    def bigram_weights(self, w):
        """View ``W_B`` of ``w``: shape (n_bigram_features, n_labels, n_labels) (empty without bigram features)."""
        w = self._checked_w(w)
        K = self.n_labels
        return w[self.dim - self.n_bigram_features * K * K :].reshape(self.n_bigram_features, K, K)

    def _checked_w(self, w) -> np.ndarray:
        return checked_point(w, self.dim)

    # -- the 1-slack cut ----------------------------------------------------------------------
    def __call__(self, w) -> OracleResult:
        """Risk value and cut at ``w``; ``argmax`` is y^ for all tokens, int32 of shape (n_tokens,)."""
        self.split_weights(w)  # validates
        w = np.ascontiguousarray(w, dtype=np.float64)
        parts = self._map(w)
        slope, offset, value = self._cut_of(parts)
        yhat = np.concatenate([p.yhat for p in parts])
        return OracleResult(value=value, cut=Cut(slope, offset), exact=True, argmax=yhat)

    def _cut_of(self, parts):
        """Slope (CSR of shape (1, dim)), offset and value at the query point of the 1-slack cut
        from the chunks' partials. The value is the chunks' own sum along the outputs they chose
        (in parallel, no pass over the slope; ``<slope, w> + offset`` up to rounding, which the
        engine checks for exact cuts): ``R(w)`` for an exact call, a lower bound for a cached cut."""
        n = self.n_samples
        if len(parts) == 1:  # a copy: the chunk keeps its arrays to update its next cut from
            idx, cnt = parts[0].indices.copy(), parts[0].values
        else:  # integer counts summed across chunks (exact, so the order does not matter)
            idx, cnt = _merge_counts([p.indices for p in parts], [p.values for p in parts])
        slope = sp.csr_matrix((cnt * (1.0 / n), idx, np.array([0, len(idx)])), shape=(1, self.dim))
        return slope, sum(p.loss for p in parts) / n, sum(p.value for p in parts) / n

    def cached_cut(self, w) -> CachedCut:
        """The 1-slack cut over the outputs cached by earlier calls (:class:`SequenceChunk`):
        per sentence the cached output, or the gold one, of largest ``Delta + <w, dPhi>``. A
        valid minorant of ``R`` (a fixed output per sentence); its value at ``w`` is ``<= R(w)``
        (:class:`cutplane.cuts.CachedCut`, :class:`cutplane.protocols.CachingOracle`)."""
        self.split_weights(w)  # validates
        w = np.ascontiguousarray(w, dtype=np.float64)
        slope, offset, value = self._cut_of(self._map(w, True, True, True))
        return CachedCut(Cut(slope, offset), value)

    def example_cuts(self, w) -> ExampleCuts:
        """One cut per sentence at ``w`` (the n-slack method, :class:`cutplane.protocols.ExampleCutsOracle`):
        ``R_i(w) = max_y Delta(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>``, slope
        ``Phi(x_i, y^_i) - Phi(x_i, y_i)`` (an empty row when ``y^_i = y_i``), offset
        ``Delta(y_i, y^_i)``; ``argmax`` is y^ for all tokens. The rows are built in the chunks'
        compiled kernels, through the executor; with input-conditioned bigram features, from
        :meth:`delta_phi` per sentence."""
        self.split_weights(w)  # validates
        w = np.ascontiguousarray(w, dtype=np.float64)
        if self.conditioned:
            return self._example_cuts_by_sentence(w)
        parts = list(self._map(w, True, False, False, True))  # emptied by _stacked_rows
        losses = np.concatenate([p.losses for p in parts])
        risks = np.concatenate([p.risks for p in parts])
        yhat = np.concatenate([p.yhat for p in parts])
        return ExampleCuts(risks, losses, _stacked_rows(parts, self.dim), yhat)

    def _example_cuts_by_sentence(self, w) -> ExampleCuts:
        parts = self._map(w, True, False)
        yhat = np.concatenate([p.yhat for p in parts])
        rows, losses = [], np.zeros(self.n_samples)
        for i in range(self.n_samples):
            t0, t1 = self._span(i)
            rows.append(-self.delta_phi(i, yhat[t0:t1]))
            losses[i] = self.loss(i, yhat[t0:t1])
        slopes = sp.csr_matrix(sp.vstack(rows, format="csr"))
        slopes.sort_indices()
        return ExampleCuts(losses + slopes @ w, losses, slopes, yhat)

    # -- per example (online learners, prediction) --------------------------------------------
    def _span(self, i):
        if not 0 <= i < self.n_samples:
            raise InputError(f"example index {i} out of range [0, {self.n_samples})", field="i")
        return int(self.sentence_ptr[i]), int(self.sentence_ptr[i + 1])

    def unary_scores(self, w, i) -> np.ndarray:
        """Unary scores of example ``i``: ndarray of shape (T_i, n_labels)."""
        W, _ = self.split_weights(w)
        t0, t1 = self._span(i)
        out = np.empty((t1 - t0, self.n_labels))
        sentence_unary(W, self.indptr, self.indices, t0, t1, out, self.values)
        return out

    def position_transitions(self, w, i) -> np.ndarray:
        """Transition scores of example ``i`` by position: ndarray of shape (T_i, n_labels, n_labels),
        ``out[t, a, b]`` the score of ``a`` at ``t - 1`` followed by ``b`` at ``t`` (``out[0]`` is zero):
        ``T`` at every ``t >= 1``, plus the blocks of the bigram features of token ``t``."""
        _, T = self.split_weights(w)
        t0, t1 = self._span(i)
        out = np.zeros((t1 - t0, self.n_labels, self.n_labels))
        out[1:] = T
        ip, bi = self.bigram_indptr, self.bigram_indices
        if ip is not None and bi is not None:
            WB = self.bigram_weights(w)
            for t in range(t0 + 1, t1):
                for g in bi[ip[t] : ip[t + 1]]:
                    out[t - t0] += WB[g]
        return out

    def _decode_one(self, w, i, augment):
        self.split_weights(w)
        self._span(i)
        task = self._chunk(i, i + 1)
        return task(np.ascontiguousarray(w, dtype=np.float64), augment, False).yhat

    def loss_augmented_argmax(self, w, i) -> np.ndarray:
        """y^_i of MTL eq. 9 for example ``i``: int32 array of shape (T_i,)."""
        return self._decode_one(w, i, True)

    def decode(self, w, i=None) -> np.ndarray:
        """Plain Viterbi prediction of example ``i`` (shape (T_i,)), or of all tokens when ``i`` is None."""
        if i is not None:
            return self._decode_one(w, i, False)
        self.split_weights(w)
        parts = self._map(np.ascontiguousarray(w, dtype=np.float64), False, False)
        return np.concatenate([p.yhat for p in parts])

    def loss(self, i, y) -> int:
        """Hamming loss ``Delta(y_i, y)`` of an output of example ``i``."""
        t0, t1 = self._span(i)
        y = np.asarray(y)
        if y.shape != (t1 - t0,):
            raise InputError(f"output must have shape ({t1 - t0},), got {y.shape}", field="y")
        return int(np.count_nonzero(self.labels[t0:t1] != y))

    def joint_feature(self, i, y):
        """``Phi(x_i, y)`` as scipy CSR of shape (1, dim)."""
        t0, t1 = self._span(i)
        y = np.asarray(y, dtype=np.int64)
        if y.shape != (t1 - t0,) or (len(y) and (y.min() < 0 or y.max() >= self.n_labels)):
            raise InputError(f"output must be labels in [0, {self.n_labels}) of shape ({t1 - t0},)", field="y")
        K = self.n_labels
        counts = np.diff(self.indptr[t0 : t1 + 1])
        cols = [self.indices[self.indptr[t0] : self.indptr[t1]].astype(np.int64) * K + np.repeat(y, counts)]
        if self.transitions and len(y) > 1:
            cols.append(self.n_features * K + y[:-1] * K + y[1:])
        ip, bi = self.bigram_indptr, self.bigram_indices
        if ip is not None and bi is not None and len(y) > 1:
            # each bigram feature g of token t (t >= 1 in the sentence) with the pair (y[t-1], y[t])
            n_b = np.diff(ip[t0 + 1 : t1 + 1])
            g = bi[ip[t0 + 1] : ip[t1]].astype(np.int64)
            pairs = np.repeat(y[:-1] * K + y[1:], n_b)
            off = self.n_features * K + (K * K if self.transitions else 0)
            cols.append(off + g * K * K + pairs)
        col = np.concatenate(cols)
        data = np.ones(len(col))
        if self.values is not None:  # the feature occurrences come first in col
            nv = int(self.indptr[t1] - self.indptr[t0])
            data[:nv] = self.values[self.indptr[t0] : self.indptr[t1]]
        m = sp.csr_matrix((data, col, np.array([0, len(col)])), shape=(1, self.dim))
        m.sum_duplicates()
        return m

    def delta_phi(self, i, y):
        """``dPhi_i(y) = Phi(x_i, y_i) - Phi(x_i, y)``: scipy CSR of shape (1, dim)."""
        t0, t1 = self._span(i)
        d = self.joint_feature(i, self.labels[t0:t1]) - self.joint_feature(i, y)
        d.eliminate_zeros()
        return d

    # -- the per-example contract shared by the structured oracles (example index first) -------
    def example_loss_augmented_argmax(self, i, w) -> np.ndarray:
        """:meth:`loss_augmented_argmax` with the arguments in the order every structured oracle
        takes (:class:`oracles.structured.StructuredOracle`): ``y^_i``, int32 of shape (T_i,)."""
        return self.loss_augmented_argmax(w, i)

    def example_argmax(self, i, w) -> np.ndarray:
        """The prediction of example ``i`` (:meth:`decode`), int32 of shape (T_i,)."""
        return self.decode(w, i)

    def example_joint_feature(self, i, y):
        """``Phi(x_i, y)`` (:meth:`joint_feature`): scipy CSR of shape (1, dim)."""
        return self.joint_feature(i, y)

    def example_loss(self, i, y) -> int:
        """``Delta(y_i, y)`` (:meth:`loss`)."""
        return self.loss(i, y)

    def example_oracle(self, w, i) -> OracleResult:
        """The structured hinge of example ``i`` alone (SPOM's per-example subgradient).

        Value ``max_y Delta(y_i, y) + <w, Phi(x_i, y) - Phi(x_i, y_i)>`` and slope ``-dPhi_i(y^_i)``.
        """
        yhat = self.loss_augmented_argmax(w, i)
        slope = -self.delta_phi(i, yhat)
        offset = float(self.loss(i, yhat))
        value = slope_dot(slope, np.asarray(w, dtype=np.float64)) + offset
        return OracleResult(value=value, cut=Cut(slope, offset), exact=True, argmax=yhat)


def viterbi_decode(
    w, indptr, indices, sentence_ptr, n_features, n_labels, *, transitions=True, bigram_features=None, values=None
) -> np.ndarray:
    """Plain Viterbi prediction of unlabelled data: int32 labels of shape (n_tokens,).

    Same weight layout and arguments as :class:`SequenceHingeOracle` (without labels;
    ``values``: real-valued features).
    """
    n_tokens = len(indptr) - 1
    oracle = SequenceHingeOracle(
        indptr,
        indices,
        sentence_ptr,
        np.zeros(n_tokens, np.int32),
        n_features,
        n_labels,
        transitions=transitions,
        bigram_features=bigram_features,
        values=values,
    )
    return oracle.decode(w)
