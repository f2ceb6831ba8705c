"""Per-example working sets and their dual: the state of the n-slack method.

For a mean risk ``R(w) = (1/n) sum_i R_i(w)`` with cuts ``R_i(w) >= <a_ij, w> + b_ij`` and the
floor ``R_i >= r0``, the reduced problem keeps one model per example,

    min_w  lam/2 ||w||^2 + (1/n) sum_i max(r0, max_j <a_ij, w> + b_ij),

a lower model of ``F`` at every ``w`` (each term is a maximum of minorants of ``R_i``). Its dual
has one simplex per example (``alpha_i0`` on the floor):

    D(alpha) = (1/n) sum_i [alpha_i0 r0 + sum_j alpha_ij b_ij] - lam/2 ||w(alpha)||^2,
    w(alpha) = -(1/(lam n)) sum_i sum_j alpha_ij a_ij,

and by weak duality every feasible ``alpha`` gives ``D(alpha) <= min F``: a certified lower
bound, whatever the solver did to reach ``alpha``. :class:`ExampleWorkingSets` stores the cuts
and the duals and raises ``D`` by exact block-coordinate steps (:func:`sweep`: one block's QP at
a time, the others fixed, the Joachims-Finley-Yu n-slack dual solved like a dual coordinate
method); :meth:`ExampleWorkingSets.lower_bound` recomputes ``w(alpha)`` and ``D`` from the duals
afresh, so the round-off of the sweeps never enters the certificate.
"""

from __future__ import annotations

import mmap
import time

import numpy as np
import scipy.sparse as sp

from ..cuts import coordinate_dtype
from ..exceptions import InputError
from ..options import DEFAULT_MAX_IDLE, DEFAULT_PLANES
from . import _kernels

__all__ = ["ExampleWorkingSets", "DEFAULT_PLANES", "DEFAULT_MAX_IDLE"]

#: The pool is compacted (in place) when the rows no slot holds are over this fraction of its
#: used entries and it has no room for a batch.
COMPACT_DEAD = 0.2
#: A pool that must grow grows to its live entries and the batch times this.
POOL_SLACK = 1.25
#: The type of the values of the integer rows (a structured task's cuts are differences of
#: feature counts), kept beside their coordinates; the other rows' values are float64.
VALUE_DTYPE = np.int8
_VALUE_MIN, _VALUE_MAX = np.iinfo(VALUE_DTYPE).min, np.iinfo(VALUE_DTYPE).max
#: The value types a batch of cuts is read in as it is (the kernels are compiled for each);
#: another is converted to float64.
_BATCH_VALUE_DTYPES = tuple(np.dtype(t) for t in (np.int8, np.int16, np.int32, np.float32, np.float64))


class ExampleWorkingSets:
    """The cuts of every example, their Gram blocks and the duals of the n-slack reduced problem.

    The cuts are stored compactly: coordinates as int32 while ``dim`` allows, the values of an
    integer row (a structured task's cut is a difference of feature counts) in
    :data:`VALUE_DTYPE` beside them, those of any other row (a fraction, an integer out of that
    type's range, every merged row) in ``float_dtype`` (``fval``). In float64 either reads back
    exactly. In float32 (half the memory of the merged rows, which hold most entries late in a
    run at large ``C``) each float row keeps a bound ``rerr`` on its distance from the exact
    cut it stands for, and :meth:`lower_bound` subtracts what those roundings can have added to
    ``D``, so the bound stays certified (a relative change of about ``2**-24``, for loose
    tolerances: :data:`cutplane.nslack.loop.FLOAT32_POINTS_RTOL`). The pools
    lie on maps whose pages take memory only once written, grow in place and are compacted in
    place (:meth:`_make_room`).

    Parameters
    ----------
    n_samples : int
        ``n``.
    dim : int
        Length of ``w``.
    lam : float
        Regularisation constant of ``lam/2 ||w||^2``.
    floor : float
        ``R_i >= floor`` for every example (every block's first cut, dual 1 at the start).
    planes : int, default=DEFAULT_PLANES
        Cuts kept per example (>= 2).
    max_idle : int, default=DEFAULT_MAX_IDLE
        A cut whose dual stayed zero at this many :meth:`retire_idle` calls in a row is dropped
        (0: kept until its block needs the slot). The first cuts of a structured task, taken at
        a poor ``w``, are the largest (every token wrong) and soon idle: dropping them bounds the
        memory.
    threads : int, default=1
        Threads of the insertion, the compaction and (by default) the passes: each runs a range
        of examples or rows (the kernels release the GIL).
    float_dtype : {numpy.float64, numpy.float32}, default=numpy.float64
        The type of the float rows' values (above).

    Attributes
    ----------
    w : ndarray of shape (dim,)
        ``w(alpha)``: exact after :meth:`lower_bound`, updated in place by the sweeps.
    alpha : ndarray of shape (n_samples, planes + 1)
        Column 0 the floor's dual, then the slots'.
    n_added, n_merged : int
        Cuts added, pairs of cuts merged, since the start.
    add_seconds : dict
        Seconds of the last :meth:`add`'s phases: ``check``, ``room`` (compaction or growth),
        ``place`` (the serial placement, and the merges written in threads), ``copy_gram``.
    """

    def __init__(
        self, n_samples, dim, lam, floor, *, planes=DEFAULT_PLANES, max_idle=None, threads=1, float_dtype=np.float64
    ):
        if int(planes) < 2:
            raise InputError(f"must be >= 2, got {planes}", field="planes")
        self.float_dtype = np.dtype(float_dtype)
        if self.float_dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise InputError(f"must be float32 or float64, got {self.float_dtype}", field="float_dtype")
        # float32 rows: each stored value's rounding and the float64 merge's own are accounted for
        self._ulp = 2.0**-52 if self.float_dtype == np.float32 else 0.0
        self.n, self.dim, self.lam, self.floor = int(n_samples), int(dim), float(lam), float(floor)
        self.kappa = 1.0 / (self.lam * self.n)
        self.max_idle = DEFAULT_MAX_IDLE if max_idle is None else int(max_idle)
        self.threads = max(1, int(threads))
        m = int(planes)
        self.slot = np.full((self.n, m), -1, dtype=np.int64)
        self.alpha = np.zeros((self.n, m + 1))
        self.alpha[:, 0] = 1.0
        self.gram = np.zeros((self.n, m, m))
        self.idle = np.zeros((self.n, m), dtype=np.int64)
        self._rows(1024)
        # coordinates as int32 while dim allows (a quarter less memory for the pool than int64)
        self.index_dtype = coordinate_dtype(self.dim)
        self.pidx = _mapped(self.index_dtype, 1 << 16)
        self.pval = _mapped(VALUE_DTYPE, 1 << 16)  # the integer rows' values, beside their coordinates
        self.fval = _mapped(self.float_dtype, 1 << 12)  # the other rows' values
        self._limit, self._f_limit = self.pidx.shape[0], self.fval.shape[0]  # used entries before a compaction
        self.state = np.zeros(5, dtype=np.int64)  # n_rows, used, added, merged, fval used
        self.live_nnz = 0
        self.w = np.zeros(self.dim)
        self.add_seconds: dict = {}

    def _rows(self, cap):
        self.rstart = np.zeros(cap, dtype=np.int64)
        self.rlen = np.zeros(cap, dtype=np.int64)
        self.rb = np.zeros(cap)
        self.rfo = np.full(cap, -1, dtype=np.int64)
        self.rerr = np.zeros(cap)

    @property
    def planes(self) -> int:
        return self.slot.shape[1]

    @property
    def n_cuts(self) -> int:
        """Cuts stored in the blocks (the floors not counted)."""
        return int(np.count_nonzero(self.slot >= 0))

    @property
    def n_added(self) -> int:
        return int(self.state[2])

    @property
    def n_merged(self) -> int:
        return int(self.state[3])

    @property
    def nbytes(self) -> int:
        """Bytes held by the pool (its capacity), the row table, the slots, the duals and the Gram
        blocks."""
        arrays = [self.pidx, self.pval, self.fval, self.rstart, self.rlen, self.rb, self.rfo, self.rerr]
        arrays += [self.slot, self.alpha, self.gram, self.idle]
        return int(sum(a.nbytes for a in arrays))

    def add(self, values, offsets, slopes, rtol=1e-12, at=None) -> int:
        """Add each example's cut, taken at the query point ``at``, where it is violated there.

        Parameters
        ----------
        values : ndarray of shape (n_samples,)
            ``R_i(at)``.
        offsets : ndarray of shape (n_samples,)
        slopes : scipy.sparse.csr_matrix of shape (n_samples, dim)
        rtol : float
            A cut enters when ``R_i(at)`` exceeds the block's model at ``at`` by more than
            ``rtol * (1 + |R_i(at)|)``.
        at : ndarray of shape (dim,), optional
            The point where the oracle gave the cuts; None: :attr:`w`.

        Returns
        -------
        int
            Cuts added.
        """
        slopes = sp.csr_matrix(slopes)
        values, offsets = np.asarray(values), np.asarray(offsets)
        if slopes.shape != (self.n, self.dim) or values.shape != (self.n,) or offsets.shape != (self.n,):
            raise InputError(
                f"expected slopes of shape ({self.n}, {self.dim}) and values, offsets of shape ({self.n},), got "
                f"{slopes.shape}, {values.shape}, {offsets.shape}",
                field="slopes",
            )
        if not slopes.has_sorted_indices:
            slopes = slopes.sorted_indices()
        ptr = slopes.indptr.astype(np.int64, copy=False)
        idx = slopes.indices.astype(self.index_dtype, copy=False)
        val = slopes.data  # read in its own type by the kernels: an int8 batch stays int8
        if val.dtype not in _BATCH_VALUE_DTYPES:
            val = val.astype(np.float64)
        off = np.ascontiguousarray(offsets, dtype=np.float64)
        risk = np.ascontiguousarray(values, dtype=np.float64)
        before = self.n_added
        want = np.zeros(self.n, dtype=np.bool_)
        rtol = float(rtol)
        at = self.w if at is None else np.ascontiguousarray(at, dtype=np.float64)
        if at.shape != (self.dim,):
            raise InputError(f"expected a query point of shape ({self.dim},), got {at.shape}", field="at")
        t0 = time.perf_counter()
        self._in_ranges(
            lambda lo, hi: _kernels.violated(
                lo, hi, ptr, idx, val, off, risk, at, self.slot, self.alpha, self.rstart, self.rlen, self.rb,
                self.rfo, self.pidx, self.pval, self.fval, self.floor, rtol, want,
            )
        )  # fmt: skip
        t1 = time.perf_counter()
        lengths = np.diff(ptr)
        if val.dtype == VALUE_DTYPE:
            narrow = np.ones(self.n, dtype=np.bool_)
        else:
            narrow = np.empty(self.n, dtype=np.bool_)
            _kernels.integer_rows(ptr, val, float(_VALUE_MIN), float(_VALUE_MAX), narrow)
        incoming = int(lengths[want].sum())
        f_incoming = int(lengths[want & ~narrow].sum())
        if (
            int(self.state[1]) + incoming > min(self._limit, self.pidx.shape[0])
            or int(self.state[4]) + f_incoming > min(self._f_limit, self.fval.shape[0])
            or int(self.state[0]) + 2 * self.n + 2 > self.rstart.shape[0]
        ):
            self._make_room(incoming, f_incoming)
        t2 = time.perf_counter()
        new_slot = np.full(self.n, -1, dtype=np.int64)
        merge_row = np.full(self.n, -1, dtype=np.int64)
        merge_src = np.zeros((self.n, 2), dtype=np.int64)
        merge_coef = np.zeros((self.n, 2))
        lo = 0
        while True:
            stop = _kernels.place(
                lo, want, ptr, off, narrow, self.slot, self.alpha, self.gram, self.idle, self.rstart, self.rlen,
                self.rb, self.rfo, self.rerr, self.state, self.pidx, self.fval, new_slot, merge_row, merge_src,
                merge_coef,
            )  # fmt: skip
            # the merges of the examples placed so far, before a compaction could move their sources
            self._in_ranges(
                lambda a, b: _kernels.merge_rows(
                    lo + a,
                    lo + b,
                    merge_row,
                    merge_src,
                    merge_coef,
                    self.rerr,
                    self._ulp,
                    *self._row_store,
                ),  # fmt: skip
                stop - lo,
            )
            if stop >= self.n:
                break
            lo = stop
            longest = 2 * int(self.rlen[: int(self.state[0])].max(initial=0))
            self._make_room(incoming + longest, f_incoming + longest)
        t3 = time.perf_counter()
        self._in_ranges(
            lambda lo, hi: _kernels.copy_rows(
                lo,
                hi,
                new_slot,
                self.slot,
                ptr,
                idx,
                val,
                self.rstart,
                self.rfo,
                self.rerr,
                self.pidx,
                self.pval,
                self.fval,
            )  # fmt: skip
        )
        self._in_ranges(
            lambda lo, hi: _kernels.gram_rows(
                lo,
                hi,
                new_slot,
                self.slot,
                self.gram,
                *self._row_store,
            )  # fmt: skip
        )
        t4 = time.perf_counter()
        self.add_seconds = dict(check=t1 - t0, room=t2 - t1, place=t3 - t2, copy_gram=t4 - t3)
        return self.n_added - before

    @property
    def _row_store(self) -> tuple:
        """The row store as the kernels take it: ``(rstart, rlen, rfo, pidx, pval, fval)`` (read at
        each call: growing the pools replaces the arrays)."""
        return (self.rstart, self.rlen, self.rfo, self.pidx, self.pval, self.fval)

    def _in_ranges(self, run, n=None, threads=None) -> list:
        """``[run(lo, hi), ...]`` over ``range(n)`` (default :attr:`n`) cut into ``threads``
        (default :attr:`threads`) ranges, at once in as many threads (the kernels release the GIL)."""
        n = self.n if n is None else int(n)
        threads = max(1, min(self.threads if threads is None else int(threads), n))
        if threads == 1:
            return [run(0, n)]
        from concurrent.futures import ThreadPoolExecutor

        edges = np.linspace(0, n, threads + 1).astype(np.int64)
        with ThreadPoolExecutor(max_workers=threads) as pool:
            return list(pool.map(run, edges[:-1], edges[1:]))

    def _make_room(self, extra, f_extra=0):
        """Room for ``extra`` more pool entries, ``f_extra`` more float values and ``2 n`` more
        rows: first by dropping the rows no slot holds any more, in place (when they are over
        :data:`COMPACT_DEAD` of the used entries of the pool or of ``fval``, or over half of the
        row table), then by growing the arrays to the need and :data:`POOL_SLACK` more. The
        pools' pages are touched only as far as they are used, and they grow without a copy
        where the system allows (:func:`_regrown`): their memory is the live entries, the dead
        ones since the last compaction and the incoming batch."""
        used, f_used, rows = int(self.state[1]), int(self.state[4]), int(self.state[0])
        live, f_live = self._live_nnz(), self._live_float()
        if used - live > COMPACT_DEAD * used or f_used - f_live > COMPACT_DEAD * f_used or rows > 2 * self.n_cuts:
            self._compact()
            for name, keep in (("pidx", self.state[1]), ("pval", self.state[1]), ("fval", self.state[4])):
                _release_tail(getattr(self, name), int(keep))
        self._grow(extra, f_extra)
        # the next compaction comes once the used entries pass the live ones and the batch by the slack
        self._limit = max(int(POOL_SLACK * (live + int(extra))), int(self.state[1]) + int(extra))
        self._f_limit = max(int(POOL_SLACK * (f_live + int(f_extra))), int(self.state[4]) + int(f_extra))

    def _grow(self, extra, f_extra=0):
        used = int(self.state[1])
        need = used + int(extra)
        if need > self.pidx.shape[0]:
            cap = max(need, int(POOL_SLACK * (self._live_nnz() + int(extra))))
            self.pidx = _regrown(self, "pidx", cap, used)
            self.pval = _regrown(self, "pval", cap, used)
        f_used = int(self.state[4])
        if f_used + int(f_extra) > self.fval.shape[0]:
            cap = max(f_used + int(f_extra), int(POOL_SLACK * (self._live_float() + int(f_extra))))
            self.fval = _regrown(self, "fval", cap, f_used)
        rows = int(self.state[0])
        if rows + 2 * self.n + 2 > self.rstart.shape[0]:
            cap = max(rows + 2 * self.n + 2, 2 * self.rstart.shape[0])
            self.rstart = _grown(self.rstart, cap, rows)
            self.rlen = _grown(self.rlen, cap, rows)
            self.rb = _grown(self.rb, cap, rows)
            self.rfo = _grown(self.rfo, cap, rows)
            self.rerr = _grown(self.rerr, cap, rows)

    def _compact(self):
        """Move the rows the slots hold to the front of the pool (and their float values to the
        front of ``fval``), in place, in the order they lie in it (:func:`_kernels.compact_down`:
        no second pool), and renumber them in that order."""
        filled = self.slot >= 0
        rows = self.slot[filled]  # row-major: slot order
        order = np.argsort(self.rstart[rows], kind="stable")
        by_start = rows[order]
        lengths = self.rlen[by_start]
        starts = np.zeros(by_start.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        floats = self.rfo[by_start] >= 0
        f_starts = np.zeros(by_start.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.where(floats, lengths, 0), out=f_starts[1:])
        new_fo = np.where(floats, f_starts[:-1], -1)
        _kernels.compact_down(by_start, starts, new_fo, *self._row_store)
        k = by_start.shape[0]
        cap = max(k + 2 * self.n + 2, 1024)
        new_b = np.zeros(cap)
        new_b[:k] = self.rb[by_start]
        new_err = np.zeros(cap)
        new_err[:k] = self.rerr[by_start]
        self.rstart = np.zeros(cap, dtype=np.int64)
        self.rlen = np.zeros(cap, dtype=np.int64)
        self.rfo = np.full(cap, -1, dtype=np.int64)
        self.rstart[:k] = starts[:-1]
        self.rlen[:k] = lengths
        self.rfo[:k] = new_fo
        self.rb = new_b
        self.rerr = new_err
        renumbered = np.empty(k, dtype=np.int64)
        renumbered[order] = np.arange(k)
        self.slot[filled] = renumbered
        self.state[0], self.state[1], self.state[4] = k, int(starts[-1]), int(f_starts[-1])

    def _live_float(self) -> int:
        rows = self.slot[self.slot >= 0]
        return int(self.rlen[rows][self.rfo[rows] >= 0].sum())

    def row(self, r) -> tuple[np.ndarray, np.ndarray]:
        """Row ``r`` of the pool: its coordinates and its values as float64 (copies)."""
        s0, length, fo = int(self.rstart[r]), int(self.rlen[r]), int(self.rfo[r])
        idx = self.pidx[s0 : s0 + length].copy()
        if fo < 0:
            return idx, self.pval[s0 : s0 + length].astype(np.float64)
        return idx, self.fval[fo : fo + length].astype(np.float64)

    def _live_nnz(self) -> int:
        rows = self.slot[self.slot >= 0]
        return int(self.rlen[rows].sum())

    def sweep(self, order, tol=1e-12, max_steps=50, threads=None):
        """One pass of block-coordinate ascent over the examples in ``order`` (:func:`_kernels.sweep`).

        ``threads`` (default :attr:`threads`): with more than one, the order is cut into that
        many parts, swept at once by as many threads (the kernel releases the GIL). Each block's
        duals are moved by one thread only,
        so they stay on their simplex; the threads share ``w``, and an update of a coordinate
        two blocks share can be lost in a race, which only makes a later step less exact:
        :meth:`lower_bound` recomputes ``w`` and ``D`` from the duals, so the certificate never
        depends on it. One thread: the same pass, reproducible to the bit.

        Returns
        -------
        increase : float
            The dual's increase over the pass (exact line values of the steps, on the scale of
            ``F``; with threads, as the threads saw it).
        block_gap : float
            ``(1/n) sum_i max_j s_ij - sum_j alpha_ij s_ij`` at each block's visit.
        """
        order = np.ascontiguousarray(order, dtype=np.int64)
        m1 = self.planes + 1

        def run(lo, hi):
            s, g, a = np.empty((3, m1))  # per-thread scratch of the block's QP
            return _kernels.sweep(
                order[lo:hi],
                self.slot,
                self.alpha,
                self.gram,
                self.rstart,
                self.rlen,
                self.rb,
                self.rfo,
                self.pidx,
                self.pval,
                self.fval,
                self.w,
                self.kappa,
                self.floor,
                float(tol),
                int(max_steps),
                s,
                g,
                a,
            )

        results = self._in_ranges(run, order.shape[0], threads)
        inc, gap = sum(r[0] for r in results), sum(r[1] for r in results)
        return inc / self.n, gap / self.n

    def retire_idle(self) -> int:
        """End of an iteration: count the slots' iterations with a zero dual and drop the cuts
        idle :attr:`max_idle` iterations in a row; return how many were dropped."""
        return int(_kernels.retire(self.slot, self.alpha, self.idle, self.max_idle))

    def scale_step(self, d) -> float:
        """The dual's exact line search along ``alpha_cuts -> s alpha_cuts`` (the floors take the
        rest), from the exact :attr:`w` and value ``d = D(alpha)`` of :meth:`lower_bound`;
        applies it and returns ``D`` at the new duals.

        ``D(s) = r0 + s L - lam/2 s^2 ||w||^2`` with ``L = (1/n) sum_ij alpha_ij (b_ij - r0)``
        (``d = D(1)``) is a concave parabola, maximal at ``s* = L / (lam ||w||^2)``, clipped to
        the feasible ``0 <= s <= 1 / max_i sum_j alpha_ij``. At the reduced problem's optimum
        ``s* = 1``; far from it (the first iterations at large C, where ``w`` must grow) one
        step moves every block at once, where a pass of block steps moves one at a time. The
        new ``w`` is the old one times ``s``, and its ``D`` the linear term from the duals minus
        ``lam/2 ||w||^2`` (less the rounding slack of float32 rows, as in :meth:`lower_bound`):
        as exact as :meth:`lower_bound` (one rounding per coordinate), without its pass.
        """
        filled = self.slot >= 0
        b = np.where(filled, self.rb[np.where(filled, self.slot, 0)], 0.0)
        cuts = self.alpha[:, 1:]
        slope = float(np.sum(cuts * (b - self.floor))) / self.n
        sq = float(self.w @ self.w)
        top = float(cuts.sum(axis=1).max())
        if top <= 0.0 or slope == 0.0:
            return d
        s = min(slope / (self.lam * sq) if sq > 0.0 else np.inf, 1.0 / top)  # sq = 0: D is linear in s
        s = max(s, 0.0)
        if s == 1.0:
            return d
        cuts *= s
        self.alpha[:, 0] = np.maximum(1.0 - cuts.sum(axis=1), 0.0)
        self.w *= s
        linear = float(np.sum(self.alpha[:, 0]) * self.floor + np.sum(cuts * b)) / self.n
        sq = float(self.w @ self.w)
        return linear - 0.5 * self.lam * sq - self._rounding_slack(self._error_mass(), sq)

    def lower_bound(self) -> float:
        """``D(alpha)`` with ``w(alpha)`` recomputed from the duals (into :attr:`w`): certified
        ``<= min F`` (module docstring). The recomputation runs in :attr:`threads` threads over
        ranges of coordinates and gives the same ``w``, bit for bit, with any number of them."""
        total, live, mass = _kernels.normalize(self.slot, self.alpha, self.rlen, self.rb, self.rerr, self.floor)
        self.recompute_w()
        self.live_nnz = int(live)
        sq = float(self.w @ self.w)
        return total / self.n - 0.5 * self.lam * sq - self._rounding_slack(mass, sq)

    def _rounding_slack(self, mass, sq) -> float:
        """What the rounding of the stored rows can have raised ``D``: 0 with float64 rows.

        The stored rows ``a~_ij`` are within ``rerr`` (Euclidean) of exact cuts ``a_ij`` (convex
        combinations of the oracle's), so ``w(alpha)`` of the exact cuts is within
        ``delta = kappa sum_ij alpha_ij rerr_ij`` (``mass`` the sum) of the stored rows' ``w``,
        and the exact dual ``L - lam/2 ||w_exact||^2`` is at least the stored one minus
        ``lam (||w|| delta + delta^2 / 2)`` (``sq = ||w||^2``): subtracted, the bound stays a
        certified lower bound of ``min F``."""
        if mass <= 0.0:
            return 0.0
        delta = self.kappa * float(mass)
        return self.lam * (np.sqrt(sq) * delta + 0.5 * delta * delta)

    def _error_mass(self) -> float:
        filled = self.slot >= 0
        errs = np.where(filled, self.rerr[np.where(filled, self.slot, 0)], 0.0)
        return float(np.sum(self.alpha[:, 1:] * errs))

    def recompute_w(self) -> None:
        """:attr:`w` ``= w(alpha)`` afresh from the duals (the pass of :meth:`lower_bound`, the
        same bits with any number of threads), in place."""
        self._in_ranges(
            lambda lo, hi: _kernels.scatter(
                lo,
                hi,
                self.slot,
                self.alpha,
                self.rstart,
                self.rlen,
                self.rfo,
                self.pidx,
                self.pval,
                self.fval,
                self.kappa,
                self.w,
            ),
            self.dim,
        )


def _mapped(dtype, length) -> np.ndarray:
    """An uninitialised array of ``length`` entries on a private anonymous map (pages take
    memory only once written; :func:`_regrown` can grow it in place), or a plain
    :func:`numpy.empty` where the system has no such maps."""
    dtype = np.dtype(dtype)
    private, anonymous = getattr(mmap, "MAP_PRIVATE", None), getattr(mmap, "MAP_ANONYMOUS", None)
    if private is None or anonymous is None or length <= 0:
        return np.empty(length, dtype=dtype)
    try:
        return np.frombuffer(mmap.mmap(-1, int(length) * dtype.itemsize, flags=private | anonymous), dtype=dtype)
    except (OSError, ValueError, TypeError):
        return np.empty(length, dtype=dtype)


def _regrown(owner, name, cap, keep) -> np.ndarray:
    """``owner.name`` grown to ``cap`` entries keeping its first ``keep``: in place by
    ``mremap`` when it is the whole of a map of :func:`_mapped` that nothing else views (no
    copy, no second array in memory), else copied to a new array of :func:`_mapped`."""
    a = getattr(owner, name)
    dtype = a.dtype
    view = a.base  # np.frombuffer's memoryview of the map
    m = view.obj if isinstance(view, memoryview) else None
    if isinstance(m, mmap.mmap) and a.ndim == 1 and a.nbytes == len(m):
        setattr(owner, name, None)
        del a, view  # the map's last export goes with them (unless viewed elsewhere)
        try:
            m.resize(int(cap) * dtype.itemsize)
            return np.frombuffer(m, dtype=dtype)
        except (BufferError, OSError, ValueError, SystemError):
            a = np.frombuffer(m, dtype=dtype)  # viewed elsewhere, or no mremap: copy
    out = _mapped(dtype, cap)
    out[:keep] = a[:keep]
    return out


def _release_tail(a, keep) -> None:
    """Give the pages of ``a`` past its first ``keep`` entries back to the system (they read as
    zeros when next touched) when ``a`` is a map of :func:`_mapped`; else nothing."""
    view = a.base
    m = view.obj if isinstance(view, memoryview) else None
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if not isinstance(m, mmap.mmap) or advice is None or not hasattr(m, "madvise"):
        return
    page = mmap.PAGESIZE
    start = -(-int(keep) * a.itemsize // page) * page
    if start < len(m):
        try:
            m.madvise(advice, start, len(m) - start)
        except (OSError, ValueError):
            pass


def _grown(a, cap, keep):
    out = np.empty(cap, dtype=a.dtype)
    out[:keep] = a[:keep]
    return out
