"""The sparse slopes of a working set: storage and the three products the engine needs.

:class:`~cutplane.working_set.WorkingSet` keeps sparse cuts here, one row per cut (sorted
int32 indices, values as exact int16 counts and a scale when they are, int32 counts when a count
is beyond int16, float64 otherwise), and asks for

- per-group inner products of a new slope with every stored row (a row of the Gram blocks),
- ``A alpha`` (the dual point) and ``A^T w``.

At the structured tasks' sizes (10^7 coordinates, 10^5-10^6 nonzeros per cut, hundreds of
cuts) these stream every stored nonzero, so how they touch memory decides the engine's speed:

- up to ``_SCRATCH_MAX_DIM`` coordinates the new slope is scattered once into a dense buffer
  that stays in cache and every row gathers from it;
- beyond, when the groups are runs of coordinates (templates number their features template
  by template; one group is one run), the work goes one cache-sized block (``_BLOCK``
  coordinates, within one run) at a time, all rows per block; otherwise rows are merge-joined;
- above ``_PARALLEL_NNZ`` stored nonzeros, rows or blocks are split over a small thread pool
  (the compiled loops of ``cutplane.working_set._ws_kernels`` release the GIL); ``A alpha`` splits the
  coordinates, so each sum is taken in the same order whatever the thread count.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import scipy.sparse as sp

from ..groups import group_runs
from . import _ws_kernels as K

__all__ = ["SparseRows", "quantize"]

_PARALLEL_NNZ = 2_000_000  # stored nonzeros above which the products run on threads
_SCRATCH_MAX_DIM = 2**21  # up to this dim (16 MB of doubles, within a server L3) a new slope is scattered densely
_BLOCK = 2**18  # coordinates per cache block (2 MB of doubles) beyond _SCRATCH_MAX_DIM
_INT16_MAX = 32767
_INT32_MAX = 2**31 - 1
_MAX_RUNS_PER_GROUP = 16  # groups made of at most this many coordinate runs each are handled run by run
_CPUS = min(4, os.cpu_count() or 1)
_OUTPUTS_KEPT = 3  # combine outputs kept for reuse: the engine holds about two (query, best point)
_ONLY_HERE = 3  # sys.getrefcount of an array only self._outputs refers to (list, loop name, argument)
_POOL = None


def _n_threads() -> int:
    return _CPUS


def _pool():
    """A small process-wide thread pool for the row loops (created on first use)."""
    global _POOL
    if _POOL is None:
        from concurrent.futures import ThreadPoolExecutor

        _POOL = ThreadPoolExecutor(max_workers=_n_threads(), thread_name_prefix="cutplane-gram")
    return _POOL


def quantize(data):
    """``(q, s)`` with ``q * s == data`` bit for bit and ``q`` integer, when the values are integer
    multiples of their smallest magnitude; else ``(data, 1.0)``.

    ``q`` is int16 when every multiple is at most 32767, int32 up to ``2**31 - 1``. The
    structured oracles' cuts are feature counts times a factor (``C / n``): stored as int16
    counts they take 6 bytes per nonzero instead of 12 (with the int32 index). A few frequent
    features of a large corpus can count beyond int16 (as on CoNLL-2000's first cuts at
    ``w = 0``, for a few entries); such a row takes 8 bytes per nonzero as int32 counts. Exactness is
    checked, never assumed, so the stored cut is the oracle's cut.
    """
    if data.size == 0:  # an empty row (a floor cut R >= b) as empty counts: no float64 specialisation
        return np.zeros(0, dtype=np.int16), 1.0  # of the compiled loops just for it
    scale = float(np.abs(data).min())
    if not scale > 0.0:
        return data, 1.0
    q = np.empty(data.shape[0], dtype=np.int32)
    ok, top = K.integer_multiples(data, scale, float(_INT32_MAX), q)
    if not ok:
        return data, 1.0
    return (q.astype(np.int16) if top <= _INT16_MAX else q), scale


class SparseRows:
    """Sparse rows of length ``dim`` in age order, with per-group products.

    Parameters
    ----------
    dim : int
    groups : ndarray of int of shape (dim,) or None
        Group id of each coordinate (None: one group).
    n_groups : int
    """

    def __init__(self, dim, groups, n_groups):
        self.dim = int(dim)
        self.n_groups = int(n_groups)
        self._groups = groups
        # the compiled loops take an empty id array for "one group"
        self._kgroups = groups if groups is not None else np.zeros(0, dtype=np.int32)
        self._runs = group_runs(groups, self.n_groups, _MAX_RUNS_PER_GROUP)
        self.rows = []  # (indices, data): data float64, or int16 / int32 counts (see quantize)
        self.nnz = []  # len(indices) of each row
        self.scale = []  # the row is data * scale
        self.slope_bytes = 0  # bytes of the stored rows
        self._scratch = None  # dense (dim,) zeros: a new slope's scatter (up to _SCRATCH_MAX_DIM)
        self._blocks_cache = None
        self._csr = None
        self._outputs = []  # arrays combine() returned, reused once nothing else refers to them
        self.n_threads = None  # threads for the products (None: up to _CPUS); see WorkingSet.n_threads

    def __len__(self):
        return len(self.rows)

    def share_groups(self, groups) -> None:
        """Use ``groups`` (the same ids as this store's, another array) in place of its own."""
        self._groups = groups
        self._kgroups = groups

    def _threads(self) -> int:
        return _n_threads() if self.n_threads is None else max(1, min(int(self.n_threads), _n_threads()))

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_outputs"] = []  # buffers, not state: never pickled
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__dict__.setdefault("_outputs", [])
        self.__dict__.setdefault("n_threads", None)

    # ------------------------------------------------------------------ storage
    def append(self, idx, data) -> None:
        """Store a row (``idx`` strictly increasing, ``data`` finite float64, both owned)."""
        q, scale = quantize(data)
        self.rows.append((idx, q))
        self.nnz.append(len(idx))
        self.scale.append(scale)
        self.slope_bytes += idx.nbytes + q.nbytes
        self._csr = None

    def set_rows(self, rows, scales) -> None:
        """Hold exactly ``rows`` (in that order), given in stored form: ``(indices, values)`` pairs
        as :meth:`append` keeps them (sorted indices; :func:`quantize`'s values) with their
        ``scales``. The arrays are kept, not copied. A copy of another :class:`SparseRows`' rows
        gives bit for bit the same products (an executor's workers rebuild ``w`` this way)."""
        rows = [(idx, values) for idx, values in rows]
        scales = [float(s) for s in scales]
        if len(scales) != len(rows):
            raise ValueError(f"got {len(rows)} rows and {len(scales)} scales")
        self.rows = rows
        self.nnz = [len(idx) for idx, _ in rows]
        self.scale = scales
        self._recount()

    def scale_rows(self, factor: float) -> None:
        """Multiply every row by ``factor`` (their scales: the stored values stay as they are)."""
        self.scale = [s * factor for s in self.scale]
        self._csr = None

    def keep(self, sel) -> None:
        """Keep the rows of the index array ``sel`` (in that order)."""
        self.rows = [self.rows[i] for i in sel]
        self.nnz = [self.nnz[i] for i in sel]
        self.scale = [self.scale[i] for i in sel]
        self._recount()

    def merge_oldest(self, k, idx, data) -> None:
        """Replace the ``k`` oldest rows by the row ``(idx, data)``, placed first."""
        q, scale = quantize(data)
        self.rows = [(idx, q)] + self.rows[k:]
        self.nnz = [len(idx)] + self.nnz[k:]
        self.scale = [scale] + self.scale[k:]
        self._recount()

    def _recount(self):
        self.slope_bytes = sum(i.nbytes + d.nbytes for i, d in self.rows)
        self._csr = None

    def matrix(self):
        """The rows as a float64 CSR matrix of shape (n_rows, dim) (cached)."""
        if self._csr is None:
            n = len(self.rows)
            indptr = np.zeros(n + 1, dtype=np.int64)
            indptr[1:] = np.cumsum(self.nnz)
            ind = np.concatenate([i for i, _ in self.rows]) if n else np.zeros(0, np.int64)
            dat = np.concatenate([d * s for (_, d), s in zip(self.rows, self.scale)]) if n else np.zeros(0)
            self._csr = sp.csr_matrix((dat, ind, indptr), shape=(n, self.dim))
        return self._csr

    @property
    def nbytes(self) -> int:
        """Bytes of the rows, of the scatter buffer and of the outputs kept for reuse that nothing
        else refers to (see :meth:`output`)."""
        kept = sum(a.nbytes for a in self._outputs if sys.getrefcount(a) <= _ONLY_HERE)
        return int(self.slope_bytes + (0 if self._scratch is None else self._scratch.nbytes) + kept)

    def output(self) -> np.ndarray:
        """A (dim,) float64 array for :meth:`combine` (or a step's query point) to fill (its content is arbitrary).

        A fresh array of millions of coordinates costs more to map (the kernel zeroes every page
        at the first write) than to fill, and the engine asks for one at every reduced solve
        (the engine's share of an iteration: ``benchmarks/engine_overhead.py``). So the last
        :data:`_OUTPUTS_KEPT` outputs are kept, and one is reused once nothing but this list
        refers to it any more (CPython's reference count: the engine let it go; a caller that
        kept it, or a view of it, keeps it from being reused). The one reused is the only idle
        output kept: the others nothing refers to are let go, so that idle buffers never hold
        more than one vector of memory beyond the ones in use.
        """
        idle = [a for a in self._outputs if sys.getrefcount(a) <= _ONLY_HERE]
        if idle:
            out = idle[0]
            self._outputs = [a for a in self._outputs if a is out or not any(a is b for b in idle)]
            out.flags.writeable = True  # the engine freezes the points it queries; it owns out
            return out
        out = np.empty(self.dim)
        self._outputs = [out, *self._outputs[: _OUTPUTS_KEPT - 1]]
        return out

    def scratch_bytes_after_add(self) -> int:
        """Bytes the scatter buffer will add at the next Gram row (0 once it exists)."""
        if self.rows and self._scratch is None and self.dim <= _SCRATCH_MAX_DIM:
            return 8 * self.dim
        return 0

    # ------------------------------------------------------------------ products
    def self_gram(self, idx, data) -> np.ndarray:
        """Per-group squared norms of a slope, shape (n_groups,)."""
        out = np.zeros(self.n_groups)
        K.group_sq_sums(idx, data, self._kgroups, out)
        return out

    def cross(self, idx, data) -> np.ndarray:
        """Per-group inner products of a slope with every stored row, shape (n_rows, n_groups)."""
        n = len(self.rows)
        out = np.zeros((n, self.n_groups))
        if n == 0:
            return out
        rows, groups = self.rows, self._kgroups
        scratch = self._scratch_buffer()
        if scratch is not None:
            scratch[idx] = data
            try:
                if self._runs is not None:
                    run_lo, run_group = self._runs

                    def run(lo, hi):
                        for r in range(lo, hi):
                            ir, dr = rows[r]
                            K.group_dot_gather_runs(ir, dr, scratch, run_lo, run_group, out[r])
                else:

                    def run(lo, hi):
                        for r in range(lo, hi):
                            ir, dr = rows[r]
                            K.group_dot_gather(ir, dr, scratch, groups, out[r])

                self._on_threads(run, np.asarray(self.nnz, dtype=np.int64))
            finally:
                scratch[idx] = 0.0
        elif self._runs is not None:
            self._cross_blocked(idx, data, out)
        else:

            def run(lo, hi):
                for r in range(lo, hi):
                    ir, dr = rows[r]
                    K.group_dot_sorted(idx, data, ir, dr, groups, out[r])

            self._on_threads(run, np.asarray(self.nnz, dtype=np.int64) + len(idx))
        out *= np.asarray(self.scale)[:, None]  # stored rows are data * scale
        return out

    def _scratch_buffer(self):
        """The dense scatter buffer (allocated on first use), or None above ``_SCRATCH_MAX_DIM``."""
        if self.dim > _SCRATCH_MAX_DIM:
            return None
        if self._scratch is None:
            self._scratch = np.zeros(self.dim)
        return self._scratch

    def _blocks(self):
        """Coordinate blocks of at most ``_BLOCK`` within one group run: ``(edges, group)``,
        int64 arrays of shape (n_blocks + 1,) and (n_blocks,) (computed once)."""
        if self._blocks_cache is None:
            run_lo, run_group = self._runs
            edges = np.union1d(np.arange(0, self.dim, _BLOCK, dtype=np.int64), run_lo)
            group = run_group[np.searchsorted(run_lo, edges, side="right") - 1]
            self._blocks_cache = (np.append(edges, self.dim), group)
        return self._blocks_cache

    def _cross_blocked(self, idx, data, out):
        """Gram rows one cache-sized block of coordinates at a time: the new slope's entries of
        the block are scattered into a small dense buffer that stays in cache while every row
        gathers its entries of the block (faster than the merge join when the coordinates do
        not fit in cache; see docs/results/engine_overhead.md). Blocks are split between threads by the new slope's
        nonzeros, each thread with its own buffer and output, summed at the end."""
        edges, group = self._blocks()
        pos = np.searchsorted(idx, edges)
        busy = np.flatnonzero(pos[1:] > pos[:-1])  # blocks the new slope touches (others give 0)
        n = len(self.rows)
        kinds = self._row_kinds(range(n))

        def run(blocks):
            part = np.zeros((n, self.n_groups))
            buf = np.zeros(_BLOCK)
            for positions, idx_at, val_at, lengths, idx_proto, val_proto in kinds:
                K.gram_blocks(
                    blocks,
                    edges,
                    group,
                    pos,
                    idx,
                    data,
                    idx_at,
                    val_at,
                    lengths,
                    idx_proto,
                    val_proto,
                    positions,
                    part,
                    buf,
                )
            return part

        workers = self._threads()
        if workers > 1 and len(busy) >= 2 and sum(self.nnz) >= _PARALLEL_NNZ:
            weight = np.cumsum(pos[busy + 1] - pos[busy])
            cut = np.searchsorted(weight, weight[-1] * np.arange(1, workers) / workers)
            chunks = [c for c in np.split(busy, np.minimum(cut + 1, len(busy))) if len(c)]
            for part in _pool().map(run, chunks):
                out += part
        else:
            out += run(busy)

    def _on_threads(self, run, sizes):
        """``run(lo, hi)`` over the rows: on the thread pool in chunks of equal ``sizes`` when
        their total reaches ``_PARALLEL_NNZ``, else in this thread."""
        n = len(sizes)
        workers = self._threads()
        total = int(sizes.sum()) if n else 0
        if workers > 1 and n >= 2 and total >= _PARALLEL_NNZ:
            cuts = np.searchsorted(np.cumsum(sizes), total * np.arange(1, workers) / workers)
            bounds = np.unique(np.concatenate(([0], np.minimum(cuts + 1, n), [n])))
            futures = [_pool().submit(run, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:])]
            for f in futures:
                f.result()
        else:
            run(0, n)

    def combine(self, alpha) -> np.ndarray:
        """``sum_r alpha_r a_r``, ndarray of shape (dim,).

        Above ``_PARALLEL_NNZ`` nonzeros the coordinates are split into disjoint ranges, one per
        thread (each coordinate is still summed in one order by one thread: storage type, then
        row; the result does not depend on the thread count). Beyond ``_SCRATCH_MAX_DIM``
        coordinates the rows are added one ``_BLOCK`` of coordinates at a time, so that the block
        of the output being written stays in cache instead of sweeping the whole output once per
        row; same sums, same order.
        """
        sel = [r for r, a in enumerate(alpha) if a != 0.0]
        coef = np.array([float(alpha[r]) * self.scale[r] for r in sel], dtype=np.float64)[:, None]
        return self._scatter_rows(sel, coef, np.zeros(0, dtype=self._kgroups.dtype))  # one group

    def combine_by_group(self, beta) -> np.ndarray:
        """``w_c = sum_r beta[g(c), r] a_rc``: each group's own combination of the rows, shape (dim,).

        ``beta`` is an ndarray of shape (n_groups or more, n_rows); the rows are walked as in
        :meth:`combine` (same blocks, threads and summation order).
        """
        beta = np.asarray(beta, dtype=np.float64)
        sel = [r for r in range(len(self.rows)) if np.any(beta[:, r] != 0.0)]
        coef = np.ascontiguousarray(beta[:, sel].T) * np.asarray(self.scale)[sel][:, None]
        return self._scatter_rows(sel, coef, self._kgroups)

    def _row_kinds(self, sel):
        """The rows ``sel`` for the compiled loops, one tuple per storage type (index and value
        dtypes) in order of first appearance: ``(positions in sel, index addresses, value
        addresses, lengths, index dtype prototype, value dtype prototype)``
        (:func:`cutplane.working_set._ws_kernels.row_addresses`; the rows stay in ``self.rows``,
        alive and unchanged, while the loops read them)."""
        kinds: dict[tuple, list] = {}
        for j, r in enumerate(sel):
            ir, dr = self.rows[r]
            kinds.setdefault((ir.dtype.str, dr.dtype.str), []).append((j, r))
        out = []
        for members in kinds.values():
            ir0, dr0 = self.rows[members[0][1]]
            idx_addr, lengths = K.row_addresses([self.rows[r][0] for _, r in members])
            val_addr, _ = K.row_addresses([self.rows[r][1] for _, r in members])
            positions = np.array([j for j, _ in members], dtype=np.int64)
            out.append((positions, idx_addr, val_addr, lengths, np.empty(0, ir0.dtype), np.empty(0, dr0.dtype)))
        return out

    def _scatter_rows(self, sel, coef, groups):
        """``out_c = sum_j coef[j, groups[c]] a_{sel_j, c}`` of shape (dim,): ``coef`` of shape
        (len(sel), n_groups or more), one coefficient per row and group; ``groups`` empty: one
        group, ``coef`` of shape (len(sel), 1).

        Coordinate ranges go to threads above ``_PARALLEL_NNZ`` nonzeros plus coordinates (each
        thread zeroes its range), one compiled call per thread and storage type; within a range
        the rows are added one block of ``_BLOCK`` coordinates at a time beyond
        ``_SCRATCH_MAX_DIM`` (see :meth:`combine`). Each coordinate is summed in the same order
        (storage type, then row) whatever the thread count.
        """
        out = self.output()
        if not sel:
            out.fill(0.0)
            return out
        total = sum(self.nnz[r] for r in sel) + self.dim  # the output is zeroed too: a pass over dim
        workers = self._threads() if total >= _PARALLEL_NNZ else 1
        step = _BLOCK if self.dim > _SCRATCH_MAX_DIM else max(self.dim, 1)
        edges = np.linspace(0, self.dim, max(workers, 1) + 1).astype(np.int64)
        kinds = self._row_kinds(sel)

        def run(c0, c1):
            out[c0:c1] = 0.0  # each thread zeroes its own range (a memset; numpy lets the GIL go)
            for positions, idx_at, val_at, lengths, idx_proto, val_proto in kinds:
                c = np.ascontiguousarray(coef[positions])
                cursor = np.empty(len(positions), dtype=np.int64)
                K.scatter_rows_grouped_range(
                    out, idx_at, val_at, lengths, idx_proto, val_proto, c, groups, c0, c1, step, cursor
                )

        if workers < 2:
            run(0, self.dim)
            return out
        futures = [_pool().submit(run, int(c0), int(c1)) for c0, c1 in zip(edges[:-1], edges[1:])]
        for f in futures:
            f.result()
        return out

    def dot(self, w, rows=None) -> np.ndarray:
        """``<a_r, w>`` for every row, shape (n_rows,) (``w`` contiguous float64); with ``rows``
        (indices), for those rows only, in that order."""
        if rows is not None:
            scale = np.asarray(self.scale)
            picked = np.empty(len(rows))
            for j, r in enumerate(rows):
                ir, dr = self.rows[r]
                picked[j] = K.sparse_dot(ir, dr, w) * scale[r]
            return picked
        out = np.empty(len(self.rows))
        rows = self.rows

        def run(lo, hi):
            for r in range(lo, hi):
                ir, dr = rows[r]
                out[r] = K.sparse_dot(ir, dr, w)

        self._on_threads(run, np.asarray(self.nnz, dtype=np.int64))
        return out * np.asarray(self.scale)
