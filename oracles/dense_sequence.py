r"""The 1-slack structural hinge of a first-order chain on dense real-valued token features.

Tokens carry a real feature vector ``x_t`` (a row of ``X``, dense or CSR, of shape
(n_tokens, n_features)); the joint feature map and the weight layout are those of
:class:`oracles.sequence.SequenceHingeOracle` with real instead of 0/1 features:

    Phi(x, y) = sum_t x_t (x) e_{y_t}  +  sum_{t>=1} e_{y_{t-1}} (x) e_{y_t},
    w = concat(W.ravel(), T.ravel()),  W of shape (n_features, n_labels), T of shape (n_labels, n_labels),

so the unary scores of a sentence are ``X_i W`` (one BLAS product) and the decoding is the
package's loss-augmented Viterbi kernel (:func:`oracles.viterbi.viterbi_kernel`, Hamming loss).
The oracle returns the 1-slack cut of MTL eq. 5,

    a = (1/n) sum_i [Phi(x_i, y^_i) - Phi(x_i, y_i)],   b = (1/n) sum_i Delta(y_i, y^_i),

(a dense slope of dim ``n_features * n_labels + n_labels ** 2``) and the per-example interface
SPOM and PEGASOS use (:class:`cutplane.protocols.ExampleOracle`).

Feature *blocks* (e.g. the linear, quadratic and Gaussian maps of one character, Martins et al. 2011,
sec. 4.1) become coordinate groups: ``feature_groups[f]`` is the block of column ``f`` and the
coordinates ``W[f, :]`` belong to it; the transition block is the last group. ``groups`` is
the array :class:`cutplane.regularizers.MixedNorm` and SPOM's group prox take.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numba import njit

from cutplane.cuts import Cut, ExampleSubgradient, OracleResult
from cutplane.exceptions import InputError
from cutplane.executors import default_n_chunks, get_executor

from .viterbi import sentence_unary, split_chain_weights, viterbi_kernel

__all__ = ["DenseSequenceOracle"]


@njit(nogil=True, cache=True)
def _viterbi_sentences(unary, trans, sent_ptr, y, s0, s1, augment, yhat):
    """Viterbi on sentences ``s0..s1``; ``unary`` holds the rows of tokens ``sent_ptr[s0]:sent_ptr[s1]``."""
    K = unary.shape[1]
    base = sent_ptr[s0]
    max_len = 0
    for i in range(s0, s1):
        max_len = max(max_len, sent_ptr[i + 1] - sent_ptr[i])
    score = np.empty((max_len, K))
    back = np.zeros((max_len, K), dtype=np.int32)
    trans_t = np.ascontiguousarray(trans.T)
    for i in range(s0, s1):
        t0 = sent_ptr[i]
        t1 = sent_ptr[i + 1]
        if t1 > t0:
            viterbi_kernel(unary[t0 - base : t1 - base], trans_t, y[t0:t1], augment, score, back, yhat[t0:t1])


class DenseSequenceOracle:
    """Structured hinge (Hamming loss) of a first-order chain with dense token features.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix of shape (n_tokens, n_features)
        Token features, all sentences concatenated (real values).
    labels : array-like of int of shape (n_tokens,)
        Gold labels in ``[0, n_labels)``.
    sentence_ptr : array-like of int of shape (n_samples + 1,)
        Sentence ``i`` is tokens ``sentence_ptr[i]:sentence_ptr[i + 1]``.
    n_labels : int
    feature_groups : array-like of int of shape (n_features,), optional
        Block id (``0..m-1``) of every feature column; default one block.
    transitions : bool, default=True
        Include the (n_labels, n_labels) transition block (the last group).
    executor : None, str or executor, default=None
        Map of the 1-slack cut over chunks of sentences (:func:`cutplane.executors.get_executor`).
    n_chunks : int, optional
        Default ``executor.chunks_per_worker * n_workers`` when the executor has that attribute,
        else ``2 * executor.n_workers``, 1 when serial (:func:`cutplane.executors.default_n_chunks`).

    Attributes
    ----------
    dim : int
        ``n_features * n_labels`` (+ ``n_labels ** 2``).
    n_samples : int
    groups : ndarray of shape (dim,), intp
        Group id of every coordinate of ``w``.
    n_groups : int
        ``m`` (+ 1 for the transition block).
    risk_lower_bound : float
        0 (the hinge is non-negative).
    """

    risk_lower_bound = 0.0

    def __init__(
        self, X, labels, sentence_ptr, n_labels, *, feature_groups=None, transitions=True, executor=None, n_chunks=None
    ):
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=np.float64)
            data = X.data
        else:
            X = np.asarray(X)
            if X.ndim != 2 or not np.issubdtype(X.dtype, np.number) or np.iscomplexobj(X):
                raise InputError(f"X must be a real 2-D array, got shape {X.shape} dtype {X.dtype}", field="X")
            X = np.ascontiguousarray(X, dtype=np.float64)
            data = X
        if not np.all(np.isfinite(data)):
            raise InputError("X must be finite (no NaN or inf)", field="X")
        self.X = X
        n_tokens, D = X.shape
        self.labels = np.ascontiguousarray(_int_array(labels, "labels"), dtype=np.int32)
        self.sentence_ptr = np.ascontiguousarray(_int_array(sentence_ptr, "sentence_ptr"), dtype=np.int64)
        self.n_labels = K = int(n_labels)
        self.n_features = D
        self.transitions = bool(transitions)
        if K < 1:
            raise InputError(f"n_labels must be >= 1, got {n_labels}", field="n_labels")
        if len(self.labels) != n_tokens:
            raise InputError(f"labels has {len(self.labels)} entries, X has {n_tokens} rows", field="labels")
        if n_tokens and (self.labels.min() < 0 or self.labels.max() >= K):
            raise InputError(f"labels must be in [0, {K})", field="labels")
        sp_ = self.sentence_ptr
        if len(sp_) < 2 or sp_[0] != 0 or sp_[-1] != n_tokens or np.any(np.diff(sp_) < 0):
            raise InputError(
                f"sentence_ptr must start at 0, be non-decreasing and end at n_tokens={n_tokens} "
                "(at least one sentence)",
                field="sentence_ptr",
            )
        self.n_samples = len(sp_) - 1
        if feature_groups is None:
            fg = np.zeros(D, dtype=np.intp)
        else:
            fg = _int_array(feature_groups, "feature_groups").astype(np.intp)
            if fg.shape != (D,) or (D and fg.min() < 0):
                raise InputError(f"feature_groups must hold {D} ids >= 0", field="feature_groups")
        self.feature_groups = fg
        m = int(fg.max()) + 1 if D else 0
        self.dim = D * K + (K * K if self.transitions else 0)
        parts = [np.repeat(fg, K)]
        if self.transitions:
            parts.append(np.full(K * K, m, dtype=np.intp))
        self.groups = np.concatenate(parts)
        self.n_groups = m + (1 if self.transitions else 0)
        self.executor = get_executor(executor)
        if n_chunks is None:
            n_chunks = default_n_chunks(self.executor)
        if int(n_chunks) < 1:
            raise InputError(f"n_chunks must be >= 1, got {n_chunks}", field="n_chunks")
        edges = np.unique(np.searchsorted(sp_, np.linspace(0, n_tokens, int(n_chunks) + 1)[1:-1]))
        edges = np.unique(np.concatenate([[0], edges, [self.n_samples]]))
        self.chunks = [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]

    # -- weights -------------------------------------------------------------------------------
    def split_weights(self, w):
        """Views ``(W, T)``: shapes (n_features, n_labels) and (n_labels, n_labels) (zeros without transitions)."""
        return split_chain_weights(w, self.n_features, self.n_labels, self.transitions)

    def _span(self, i):
        i = int(i)
        if not 0 <= i < self.n_samples:
            raise InputError(f"example index {i} out of range [0, {self.n_samples})", field="i")
        return int(self.sentence_ptr[i]), int(self.sentence_ptr[i + 1])

    # -- shared pieces -------------------------------------------------------------------------
    def _decode_range(self, W, T, s0, s1, augment):
        """Unary scores, y^ and the per-token hinge pieces of sentences s0..s1."""
        t0, t1 = int(self.sentence_ptr[s0]), int(self.sentence_ptr[s1])
        U = np.ascontiguousarray(self.X[t0:t1] @ W)
        yhat = np.zeros(len(self.labels), dtype=np.int32)
        _viterbi_sentences(U, T, self.sentence_ptr, self.labels, s0, s1, augment, yhat)
        return U, yhat[t0:t1], t0, t1

    def _hinge_pieces(self, U, T, yhat, y, starts):
        """(loss, value) with value = Delta + score(y^) - score(y); ``starts``: True at sentence starts."""
        r = np.arange(len(y))
        loss = int(np.count_nonzero(yhat != y))
        diff = float(np.sum(U[r, yhat] - U[r, y]))
        if self.transitions and len(y) > 1:
            keep = ~starts[1:]
            diff += float(np.sum((T[yhat[:-1], yhat[1:]] - T[y[:-1], y[1:]])[keep]))
        return loss, loss + diff

    def _feature_diff(self, t0, t1, yhat, y, starts):
        """``Phi(y^) - Phi(y)`` of tokens t0..t1 as (dense (D, K) block, dense (K, K) transitions)."""
        K = self.n_labels
        mis = np.flatnonzero(yhat != y)
        G = np.zeros((self.n_features, K))
        if mis.size:
            M = np.zeros((mis.size, K))
            M[np.arange(mis.size), yhat[mis]] += 1.0
            M[np.arange(mis.size), y[mis]] -= 1.0
            Xm = self.X[t0 + mis]
            G = np.asarray(Xm.T @ M)
        Tg = np.zeros((K, K))
        if self.transitions and len(y) > 1:
            keep = ~starts[1:]
            np.add.at(Tg, (yhat[:-1][keep], yhat[1:][keep]), 1.0)
            np.add.at(Tg, (y[:-1][keep], y[1:][keep]), -1.0)
        return G, Tg

    def _starts(self, s0, s1):
        t0, t1 = int(self.sentence_ptr[s0]), int(self.sentence_ptr[s1])
        starts = np.zeros(t1 - t0, dtype=bool)
        starts[self.sentence_ptr[s0:s1] - t0] = True
        return starts

    # -- the 1-slack cut -------------------------------------------------------------------------
    def __call__(self, w) -> OracleResult:
        """Risk value and dense cut at ``w``; ``argmax`` is y^ of all tokens, int32 of shape (n_tokens,)."""
        W, T = self.split_weights(w)

        def run(chunk):
            s0, s1 = chunk
            U, yh, t0, t1 = self._decode_range(W, T, s0, s1, True)
            y = self.labels[t0:t1]
            starts = self._starts(s0, s1)
            loss, value = self._hinge_pieces(U, T, yh, y, starts)
            G, Tg = self._feature_diff(t0, t1, yh, y, starts)
            return loss, value, G, Tg, yh

        parts = self.executor.map(run, self.chunks)
        n = self.n_samples
        G = sum(p[2] for p in parts)
        slope = G.ravel() / n
        if self.transitions:
            slope = np.concatenate([slope, sum(p[3] for p in parts).ravel() / n])
        offset = sum(p[0] for p in parts) / n
        value = sum(p[1] for p in parts) / n
        yhat = np.concatenate([p[4] for p in parts])
        return OracleResult(value=float(value), cut=Cut(slope, float(offset)), exact=True, argmax=yhat)

    # -- per example ---------------------------------------------------------------------------
    def loss_augmented_argmax(self, w, i) -> np.ndarray:
        """y^_i of MTL eq. 9 for example ``i``: int32 array of shape (T_i,)."""
        W, T = self.split_weights(w)
        self._span(i)
        return self._decode_range(W, T, int(i), int(i) + 1, True)[1].copy()

    def decode(self, w, i=None) -> np.ndarray:
        """Plain Viterbi prediction of example ``i`` (shape (T_i,)), or of all tokens when ``i`` is None."""
        W, T = self.split_weights(w)
        if i is None:
            return self._decode_range(W, T, 0, self.n_samples, False)[1].copy()
        self._span(i)
        return self._decode_range(W, T, int(i), int(i) + 1, False)[1].copy()

    def loss(self, i, y) -> int:
        """Hamming loss ``Delta(y_i, y)``."""
        t0, t1 = self._span(i)
        y = np.asarray(y)
        if y.shape != (t1 - t0,):
            raise InputError(f"output must have shape ({t1 - t0},), got {y.shape}", field="y")
        return int(np.count_nonzero(self.labels[t0:t1] != y))

    def joint_feature(self, i, y) -> np.ndarray:
        """``Phi(x_i, y)``: dense ndarray of shape (dim,)."""
        t0, t1 = self._span(i)
        y = np.asarray(y)
        if y.shape != (t1 - t0,) or (
            y.size and (not np.issubdtype(y.dtype, np.integer) or y.min() < 0 or y.max() >= self.n_labels)
        ):
            raise InputError(f"output must be int labels in [0, {self.n_labels}) of shape ({t1 - t0},)", field="y")
        K = self.n_labels
        E = np.zeros((t1 - t0, K))
        E[np.arange(t1 - t0), y] = 1.0
        out = [np.asarray(self.X[t0:t1].T @ E).ravel()]
        if self.transitions:
            Tm = np.zeros((K, K))
            np.add.at(Tm, (y[:-1], y[1:]), 1.0)
            out.append(Tm.ravel())
        return np.concatenate(out)

    def delta_phi(self, i, y) -> np.ndarray:
        """``dPhi_i(y) = Phi(x_i, y_i) - Phi(x_i, y)``: dense ndarray of shape (dim,)."""
        t0, t1 = self._span(i)
        return self.joint_feature(i, self.labels[t0:t1]) - self.joint_feature(i, y)

    def _example(self, w, i):
        W, T = self.split_weights(w)
        self._span(i)
        U, yh, t0, t1 = self._decode_range(W, T, int(i), int(i) + 1, True)
        y = self.labels[t0:t1]
        starts = self._starts(int(i), int(i) + 1)
        _, value = self._hinge_pieces(U, T, yh, y, starts)
        G, Tg = self._feature_diff(t0, t1, yh, y, starts)
        return value, yh, G, Tg

    def example_support(self, i):
        """None: the unary scores of dense features read all of ``W``."""
        return None

    def example_subgradient(self, i, w) -> ExampleSubgradient:
        """``L_i(w)`` and the subgradient ``Phi(x_i, y^_i) - Phi(x_i, y_i)`` as sparse coordinates.

        Only the labels and (for CSR ``X``) the feature columns that the mistaken tokens touch
        are formed: O(nnz of those tokens x labels involved), not O(dim).
        """
        W, T = self.split_weights(w)
        t0, t1 = self._span(i)
        K = self.n_labels
        y = self.labels[t0:t1]
        X = self.X
        if sp.issparse(X):
            U = np.empty((t1 - t0, K))
            sentence_unary(W, X.indptr, X.indices, t0, t1, U, X.data)  # U[t - t0] = X[t] @ W
        else:
            U = X[t0:t1] @ W
        yh = np.zeros(t1 - t0, dtype=np.int32)
        ptr = np.array([0, t1 - t0], dtype=np.int64)
        _viterbi_sentences(U, T, ptr, y, 0, 1, True, yh)
        starts = np.zeros(t1 - t0, dtype=bool)
        starts[:1] = True
        _, value = self._hinge_pieces(U, T, yh, y, starts)
        mis = np.flatnonzero(yh != y)
        idx = np.zeros(0, np.int64)
        val = np.zeros(0)
        if mis.size:
            cols = np.unique(np.concatenate([yh[mis], y[mis]]))
            M = np.zeros((mis.size, cols.size))
            r = np.arange(mis.size)
            M[r, np.searchsorted(cols, yh[mis])] += 1.0
            M[r, np.searchsorted(cols, y[mis])] -= 1.0
            if sp.issparse(X):  # the mistaken rows restricted to their columns, densely
                lo, hi = X.indptr[t0 + mis], X.indptr[t0 + mis + 1]
                take = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)])
                feat = X.indices[take]
                mark = np.zeros(self.n_features, dtype=np.int64)
                mark[feat] = 1
                rows = np.flatnonzero(mark)
                mark[rows] = np.arange(rows.size)
                Xd = np.zeros((mis.size, rows.size))
                Xd[np.repeat(r, hi - lo), mark[feat]] = X.data[take]
                G = Xd.T @ M
            else:
                rows = np.arange(self.n_features)
                G = X[t0 + mis].T @ M
            idx = (rows[:, None].astype(np.int64) * K + cols[None, :]).ravel()
            val = G.ravel()
            nz = val != 0
            idx, val = idx[nz], val[nz]
        if self.transitions and t1 - t0 > 1:
            Tg = np.zeros((K, K))
            np.add.at(Tg, (yh[:-1], yh[1:]), 1.0)
            np.add.at(Tg, (y[:-1], y[1:]), -1.0)
            tz = np.flatnonzero(Tg.ravel())
            idx = np.concatenate([idx, self.n_features * K + tz])
            val = np.concatenate([val, Tg.ravel()[tz]])
        return ExampleSubgradient(float(value), idx.astype(np.int64), val.astype(np.float64))

    # -- the per-example contract shared by the structured oracles (example index first) -------
    def example_loss_augmented_argmax(self, i, w) -> np.ndarray:
        """:meth:`loss_augmented_argmax` with the arguments in the order every structured oracle
        takes (:class:`oracles.structured.StructuredOracle`): ``y^_i``, int32 of shape (T_i,)."""
        return self.loss_augmented_argmax(w, i)

    def example_argmax(self, i, w) -> np.ndarray:
        """The prediction of example ``i`` (:meth:`decode`), int32 of shape (T_i,)."""
        return self.decode(w, i)

    def example_joint_feature(self, i, y) -> np.ndarray:
        """``Phi(x_i, y)`` (:meth:`joint_feature`): dense ndarray of shape (dim,)."""
        return self.joint_feature(i, y)

    def example_loss(self, i, y) -> int:
        """``Delta(y_i, y)`` (:meth:`loss`)."""
        return self.loss(i, y)

    def example_oracle(self, w, i) -> OracleResult:
        """The structured hinge of example ``i`` alone: value and the dense slope ``-dPhi_i(y^_i)``."""
        value, yh, G, Tg = self._example(w, i)
        slope = np.concatenate([G.ravel(), Tg.ravel()]) if self.transitions else G.ravel()
        offset = float(np.count_nonzero(yh != self.labels[self._span(i)[0] : self._span(i)[1]]))
        return OracleResult(value=float(value), cut=Cut(slope, offset), exact=True, argmax=yh)


def _int_array(a, name):
    arr = np.asarray(a)
    if arr.ndim != 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise InputError(f"expected a 1-D integer array, got shape {arr.shape} dtype {arr.dtype}", field=name)
    return arr
