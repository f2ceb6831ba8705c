"""The 1-slack structured oracle of arc-factored dependency parsing.

For sentences ``x_i`` with gold trees ``y_i``, arc features ``f(x_i, h, m)`` (binary, sparse)
and the joint map ``Phi(x, y) = sum_m f(x, y_m, m)``, the risk at ``w`` is (MTL^struct eq. 5,
with ``dPhi_i(y) = Phi(x_i, y_i) - Phi(x_i, y)``)::

    R(w) = (1/n) sum_i max_y [ Delta(y_i, y) - <w, dPhi_i(y)> ]  =  <a, w> + b,
    a = -(1/n) sum_i dPhi_i(y^_i),   b = (1/n) sum_i Delta(y_i, y^_i),

``y^_i`` the loss-augmented argmax: Chu-Liu-Edmonds over all trees (default) or Eisner over
projective trees (``projective=True``), optionally with one child of the root. ``Delta`` is the
number of words with a wrong head; with ``normalize_loss=True`` it is divided by the sentence
length (each sentence then weighs the same whatever its length, and ``R`` is a mean per-word
rate). ``R(w) >= 0`` whenever each gold tree is in the search space (it is the candidate
``y = y_i``); a non-projective gold tree with ``projective=True`` can make its term negative.

The map over sentences runs in chunks through a :mod:`cutplane.executors` executor (the kernels
release the GIL, so threads scale): each chunk is a :class:`ParseChunk` task bound to the executor
once (worker processes and Dask workers receive only their own sentences, once), a call then sends
``w`` and gets the chunk's partial sums back; they are added in order, so the result does not
depend on the executor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from cutplane.cuts import Cut, OracleResult, slope_dot
from cutplane.exceptions import InputError
from cutplane.executors import BoundTasks, bind_tasks, chunk_bounds, default_n_chunks, get_executor

from ._parsing_kernels import arc_scores_kernel, decode_chunk_kernel, feature_diff_kernel
from .parsing import check_heads

__all__ = ["ArcFeatures", "ExampleCut", "ParseChunk", "ParseOracle", "decode"]


@dataclass(frozen=True)
class ArcFeatures:
    """Binary features of every candidate arc of every sentence, CSR over arcs.

    Sentence ``i`` has ``N_i = lengths[i] + 1`` nodes and ``N_i**2`` arc rows starting at
    ``arc_ptr[i]``: arc ``h -> m`` is row ``arc_ptr[i] + h * N_i + m`` (rows of arcs into the
    root and of self-loops are empty). Row ``r`` holds ``indices[indptr[r]:indptr[r + 1]]``.

    Attributes
    ----------
    lengths : ndarray of shape (n_sentences,), int64
    arc_ptr : ndarray of shape (n_sentences + 1,), int64
    indptr : ndarray of shape (n_arcs + 1,), int64
    indices : ndarray of shape (nnz,), int32
        Feature ids in ``0..dim-1``.
    dim : int
    """

    lengths: np.ndarray
    arc_ptr: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    dim: int

    def __post_init__(self):
        lengths = np.ascontiguousarray(self.lengths, dtype=np.int64)
        arc_ptr = np.ascontiguousarray(self.arc_ptr, dtype=np.int64)
        indptr = np.ascontiguousarray(self.indptr, dtype=np.int64)
        indices = np.ascontiguousarray(self.indices, dtype=np.int32)
        if lengths.ndim != 1 or np.any(lengths < 0):
            raise InputError("lengths must be a 1-d array of non-negative word counts", field="lengths")
        expect = np.concatenate(([0], np.cumsum((lengths + 1) ** 2)))
        if arc_ptr.shape != expect.shape or np.any(arc_ptr != expect):
            raise InputError("arc_ptr must be the cumulative sum of (lengths + 1)**2", field="arc_ptr")
        if (
            indptr.shape != (int(expect[-1]) + 1,)
            or indptr[0] != 0
            or np.any(np.diff(indptr) < 0)
            or indptr[-1] != indices.shape[0]
        ):
            raise InputError("indptr must be non-decreasing from 0 to nnz with one entry per arc + 1", field="indptr")
        if indices.size and (indices.min() < 0 or indices.max() >= int(self.dim)):
            raise InputError(f"feature ids must lie in 0..{int(self.dim) - 1}", field="indices")
        for name, value in (
            ("lengths", lengths),
            ("arc_ptr", arc_ptr),
            ("indptr", indptr),
            ("indices", indices),
            ("dim", int(self.dim)),
        ):
            object.__setattr__(self, name, value)

    @property
    def n_sentences(self) -> int:
        return int(self.lengths.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.lengths.nbytes + self.arc_ptr.nbytes + self.indptr.nbytes + self.indices.nbytes)

    def arc(self, i: int, h: int, m: int) -> np.ndarray:
        """Feature ids of arc ``h -> m`` of sentence ``i``."""
        N = int(self.lengths[i]) + 1
        r = int(self.arc_ptr[i]) + h * N + m
        return self.indices[self.indptr[r] : self.indptr[r + 1]]

    def scores(self, i: int, w) -> np.ndarray:
        """Arc scores of sentence ``i``: ndarray of shape (n_i + 1, n_i + 1)."""
        w = _check_w(w, self.dim)
        return arc_scores_kernel(self.indptr, self.indices, int(self.arc_ptr[i]), int(self.lengths[i]) + 1, w)

    def phi(self, i: int, heads) -> sp.csr_matrix:
        """Joint feature vector ``Phi(x_i, heads)``: sparse of shape (1, dim)."""
        N = int(self.lengths[i]) + 1
        h = check_heads(heads, N)
        ids = np.concatenate([self.arc(i, int(h[m]), m) for m in range(1, N)] or [np.empty(0, np.int32)])
        return _sparse_row(ids.astype(np.int64), np.ones(ids.shape[0]), self.dim)

    def subset(self, idx) -> ArcFeatures:
        """The sentences ``idx`` (array of indices) as a new ArcFeatures."""
        idx = np.asarray(idx, dtype=np.int64)
        lengths = self.lengths[idx]
        rows = _ranges(self.arc_ptr[idx], self.arc_ptr[idx + 1])
        starts = self.indptr[rows]
        counts = self.indptr[rows + 1] - starts
        take = _ranges(starts, starts + counts)
        return ArcFeatures(
            lengths,
            np.concatenate(([0], np.cumsum((lengths + 1) ** 2))),
            np.concatenate(([0], np.cumsum(counts))),
            self.indices[take],
            self.dim,
        )


class ExampleCut(NamedTuple):
    """Loss-augmented decoding of one sentence.

    Attributes
    ----------
    heads : ndarray of shape (n+1,)
        The most violated tree ``y^``.
    loss : float
        ``Delta(y, y^)`` (weighted as the oracle's loss).
    value : float
        The example's structured hinge ``loss - <w, dphi>`` (>= 0 when the gold tree is in
        the search space).
    dphi : scipy.sparse.csr_matrix of shape (1, dim)
        ``Phi(x, y) - Phi(x, y^)``; a subgradient of the example's hinge is ``-dphi``.
    """

    heads: np.ndarray
    loss: float
    value: float
    dphi: sp.csr_matrix


def _ranges(starts, stops) -> np.ndarray:
    """Concatenation of ``arange(starts[k], stops[k])`` over k, vectorised (int64)."""
    starts = np.asarray(starts, dtype=np.int64)
    lens = np.asarray(stops, dtype=np.int64) - starts
    total = int(lens.sum())
    if total == 0:
        return np.empty(0, np.int64)
    offsets = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
    return offsets + np.arange(total, dtype=np.int64)


def _check_w(w, dim):
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (dim,):
        raise InputError(f"expected weights of shape ({dim},), got {w.shape}", field="w")
    if not np.all(np.isfinite(w)):
        raise InputError("weights contain NaN or infinite values", field="w")
    return np.ascontiguousarray(w)


def _sparse_row(ids, vals, dim) -> sp.csr_matrix:
    """Sum duplicates and drop zeros: a (1, dim) CSR row."""
    if ids.size == 0:
        return sp.csr_matrix((1, dim), dtype=np.float64)
    uniq, inv = np.unique(ids, return_inverse=True)
    sums = np.bincount(inv, weights=vals, minlength=uniq.shape[0])
    keep = sums != 0
    uniq, sums = uniq[keep], sums[keep]
    return sp.csr_matrix((sums, uniq, np.array([0, uniq.shape[0]])), shape=(1, dim))


def _as_trees(heads, lengths):
    if len(heads) != lengths.shape[0]:
        raise InputError(f"{len(heads)} gold trees for {lengths.shape[0]} sentences", field="heads")
    out = []
    for i, (h, n) in enumerate(zip(heads, lengths)):
        a = np.asarray(h)
        if a.ndim == 1 and a.shape[0] == n:  # file convention (0 = root)
            a = np.concatenate(([-1], a))
        try:
            out.append(check_heads(a, int(n) + 1))
        except InputError as exc:
            raise InputError(f"sentence {i}: {exc.message}", field="heads") from None
    return out


class _Chunk(NamedTuple):
    pred: np.ndarray
    loss: np.ndarray
    margin: np.ndarray
    ids: np.ndarray
    vals: np.ndarray


class ParseChunk:
    """A :class:`cutplane.executors.ChunkTask`: sentences ``start..stop-1`` of a parsing dataset.

    In this process it shares the dataset's arrays; pickled (for worker processes) it carries
    only its own sentences, rebased to start at 0. ``chunk(w, augment, with_diff)`` returns the
    predicted heads, per-sentence losses and margins and, with ``with_diff``, the chunk's summed
    ``Phi(pred) - Phi(gold)`` as sorted unique ids and values.
    """

    def __init__(self, features, gold, head_ptr, loss_weight, start, stop, projective, single_root):
        f = features
        self.indptr, self.indices, self.arc_ptr, self.lengths = f.indptr, f.indices, f.arc_ptr, f.lengths
        self.gold, self.head_ptr, self.loss_weight = gold, head_ptr, loss_weight
        self.start, self.stop = int(start), int(stop)
        self.projective, self.single_root = bool(projective), bool(single_root)

    def __getstate__(self):
        a, b = self.start, self.stop
        r0, r1 = int(self.arc_ptr[a]), int(self.arc_ptr[b])
        p0, p1 = int(self.indptr[r0]), int(self.indptr[r1])
        h0, h1 = int(self.head_ptr[a]), int(self.head_ptr[b])
        state = dict(self.__dict__)
        state.update(
            indptr=self.indptr[r0 : r1 + 1] - p0,
            indices=self.indices[p0:p1],
            arc_ptr=self.arc_ptr[a : b + 1] - r0,
            lengths=self.lengths[a:b],
            gold=self.gold[h0:h1],
            head_ptr=self.head_ptr[a : b + 1] - h0,
            loss_weight=self.loss_weight[a:b],
            start=0,
            stop=b - a,
        )
        return state

    def __call__(self, w, augment=True, with_diff=True) -> _Chunk:
        start, stop, hp = self.start, self.stop, self.head_ptr
        pred = np.empty(hp[stop] - hp[start], dtype=np.int64)
        loss = np.empty(stop - start)
        margin = np.empty(stop - start)
        decode_chunk_kernel(
            self.indptr,
            self.indices,
            self.arc_ptr,
            self.lengths,
            self.gold,
            hp,
            w,
            start,
            stop,
            augment,
            self.loss_weight,
            self.projective,
            self.single_root,
            pred,
            loss,
            margin,
        )
        if with_diff:
            ids, vals = feature_diff_kernel(
                self.indptr, self.indices, self.arc_ptr, self.lengths, self.gold, hp, pred, start, stop
            )
            if ids.size:  # partial sum of this chunk
                ids, inv = np.unique(ids, return_inverse=True)
                vals = np.bincount(inv, weights=vals, minlength=ids.shape[0])
        else:
            ids, vals = np.empty(0, np.int64), np.empty(0)
        return _Chunk(pred, loss, margin, ids, vals)


class ParseOracle:
    """1-slack risk and cut of a dependency-parsing training set (see module docstring).

    Parameters
    ----------
    features : ArcFeatures
        Arc features of the training sentences.
    heads : sequence of array-like
        Gold trees, each of shape (n_i + 1,) with a leading -1 (or (n_i,), 0 = root).
    projective : bool, default False
        Eisner (projective trees) instead of Chu-Liu-Edmonds.
    single_root : bool, default False
        Restrict to trees where the root has one child (UD treebanks).
    normalize_loss : bool, default False
        Divide each sentence's loss by its number of words.
    executor : None, str or executor, optional
        The map over sentence chunks (:func:`cutplane.executors.get_executor`).
    n_chunks : int, optional
        Number of chunks (default: the executor's ``chunks_per_worker`` per worker when it has
        that attribute, else 4 per worker, 1 for the serial executor;
        :func:`cutplane.executors.default_n_chunks`).

    Attributes
    ----------
    dim : int
    n_samples : int
    risk_lower_bound : float
        0: the gold tree is among the trees maximised over, so the risk is ``>= 0`` (the
        engine adds the cut ``R(w) >= 0``).
    """

    risk_lower_bound = 0.0

    def __init__(
        self,
        features: ArcFeatures,
        heads,
        *,
        projective: bool = False,
        single_root: bool = False,
        normalize_loss: bool = False,
        executor=None,
        n_chunks: int | None = None,
    ):
        if not isinstance(features, ArcFeatures):
            raise InputError(f"features must be ArcFeatures, got {type(features).__name__}", field="features")
        if features.n_sentences == 0:
            raise InputError("no sentences", field="features")
        self.features = features
        self.dim = features.dim
        self.n_samples = features.n_sentences
        self.projective = bool(projective)
        self.single_root = bool(single_root)
        self.normalize_loss = bool(normalize_loss)
        trees = _as_trees(heads, features.lengths)
        self._gold = np.concatenate(trees)
        self._head_ptr = np.concatenate(([0], np.cumsum(features.lengths + 1)))
        n = np.maximum(features.lengths, 1).astype(np.float64)
        self._loss_weight = 1.0 / n if self.normalize_loss else np.ones(self.n_samples)
        self.executor = get_executor(executor)
        k = n_chunks if n_chunks is not None else default_n_chunks(self.executor, per_worker=4)
        if int(k) < 1:
            raise InputError(f"n_chunks must be >= 1, got {n_chunks}", field="n_chunks")
        self._chunks = chunk_bounds(self.n_samples, int(k))
        self._bound: BoundTasks | None = None

    # -- kernels -----------------------------------------------------------------------
    def _task(self, start, stop) -> ParseChunk:
        return ParseChunk(
            self.features, self._gold, self._head_ptr, self._loss_weight, start, stop, self.projective, self.single_root
        )

    def _map(self, w, augment, with_diff):
        """The chunk tasks at ``w`` through the executor (bound, i.e. shipped, at the first call)."""
        if self._bound is None:
            self._bound = bind_tasks(self.executor, [self._task(a, b) for a, b in self._chunks])
        return self._bound.map(w, augment, with_diff)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_bound"] = None
        return state

    def _split(self, pred):
        hp = self._head_ptr
        return [pred[hp[i] : hp[i + 1]].copy() for i in range(self.n_samples)]

    # -- public ------------------------------------------------------------------------
    def __call__(self, w) -> OracleResult:
        """Risk and cut at ``w``; ``argmax`` holds the most violated trees (list of arrays)."""
        w = _check_w(w, self.dim)
        parts = self._map(w, True, True)
        n = self.n_samples
        slope = (
            _sparse_row(np.concatenate([p.ids for p in parts]), np.concatenate([p.vals for p in parts]), self.dim) / n
        )
        offset = float(sum(p.loss.sum() for p in parts)) / n
        value = slope_dot(slope, w) + offset
        pred = np.concatenate([p.pred for p in parts])
        return OracleResult(value, Cut(slope, offset), True, self._split(pred))

    def loss_augmented(self, i: int, w) -> ExampleCut:
        """Loss-augmented decoding of sentence ``i`` alone (for online learners)."""
        w = _check_w(w, self.dim)
        if not 0 <= int(i) < self.n_samples:
            raise InputError(f"sentence index {i} out of range 0..{self.n_samples - 1}", field="i")
        part = self._task(int(i), int(i) + 1)(w, True, True)
        dphi = _sparse_row(part.ids, -part.vals, self.dim)
        loss = float(part.loss[0])
        return ExampleCut(part.pred, loss, loss + float(part.margin[0]), dphi)

    def example_loss_augmented_argmax(self, i: int, w) -> np.ndarray:
        """The most violated tree of sentence ``i`` (the heads of :meth:`loss_augmented`), under the
        name and argument order every structured oracle takes
        (:class:`oracles.structured.StructuredOracle`): ndarray of shape (n+1,)."""
        return self.loss_augmented(i, w).heads

    def predict(self, w, features: ArcFeatures | None = None) -> list:
        """Best trees under ``w`` (no loss) for ``features`` (default: the training sentences)."""
        if features is None or features is self.features:
            w = _check_w(w, self.dim)
            parts = self._map(w, False, False)
            return self._split(np.concatenate([p.pred for p in parts]))
        return decode(features, w, projective=self.projective, single_root=self.single_root, executor=self.executor)


def decode(
    features: ArcFeatures,
    w,
    *,
    projective: bool = False,
    single_root: bool = False,
    executor=None,
    n_chunks: int | None = None,
) -> list:
    """Best tree of every sentence under weights ``w``.

    Parameters
    ----------
    features : ArcFeatures
    w : ndarray of shape (dim,)
    projective, single_root : bool
        As in :class:`ParseOracle`.
    executor, n_chunks : optional
        Parallel map over chunks of sentences.

    Returns
    -------
    heads : list of ndarray of shape (n_i + 1,)
        ``heads[i][0] = -1``.
    """
    dummy = [np.concatenate(([-1], np.zeros(n, dtype=np.int64))) for n in features.lengths]
    oracle = ParseOracle(
        features, dummy, projective=projective, single_root=single_root, executor=executor, n_chunks=n_chunks
    )
    return oracle.predict(w)
