"""The working set (bundle) of cuts, with its Gram matrix kept incrementally.

The cutting-plane model is ``R_t(w) = max_r <a_r, w> + b_r``. The reduced solvers need
``A^T A`` (per coordinate group for mixed norms), ``A alpha`` and ``A^T w``; this class
gives them without ever recomputing the Gram matrix from scratch: adding a cut costs one
row of inner products against the stored cuts. Cuts are kept in age order (index 0 is the
oldest); pruning drops cuts idle for k iterations and aggregation merges the oldest cuts
into one convex combination (limited-memory BMRM, Franc et al. 2012, sec. 1.2.3). A convex
combination of minorants is a minorant, and merging with the reduced problem's duals as
weights keeps the reduced optimum unchanged, so neither operation breaks a bound. Those
operations (``record_duals``, ``prune``, ``aggregate``, ``set_duals``) are inherited from
:class:`cutplane.working_set.limited_memory.LimitedMemoryMixin`.

Single precision: once the engine names a region that holds the optimum (:meth:`WorkingSet.set_ball`)
and the dense block of one group reaches :data:`SINGLE_MIN_BYTES`, the slopes are rounded to
float32 with their offsets lowered so that every cut stays a minorant on that region
(:mod:`cutplane.rounded_cuts`), and the block is stored as float32: the Gram row of a new cut and
``A alpha``, accumulated in float64, then read half the bytes. The exact offsets and a bound on
each slope's rounding error are kept, so the cuts can be made valid again for another problem
(:meth:`WorkingSet.forget_ball`).
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import scipy.sparse as sp

from ..cuts import Cut, coordinate_dtype
from ..exceptions import InputError
from ..groups import as_group_ids
from ..rounded_cuts import Ball, round_cut, stale_offset
from .limited_memory import LimitedMemoryMixin
from .sparse_rows import SparseRows

__all__ = ["WorkingSet", "SINGLE_MIN_BYTES", "SINGLE_CONVERT_BUDGET"]

#: Size of the dense block (as float64, bytes) from which the working set stores its slopes as
#: float32, rounded on the engine's ball (:meth:`WorkingSet.set_ball`). Below it the block is
#: read from the processor's caches and halving its bytes buys little; set it to ``float("inf")``
#: to keep float64 throughout.
SINGLE_MIN_BYTES = 16 * 2**20

#: The switch to float32 recomputes the Gram matrix of the rounded slopes, ``n^2 dim``
#: multiply-adds for ``n`` cuts: it is made only while that count is at most this budget (about
#: half a second on one core); a working set that is already larger stays float64.
SINGLE_CONVERT_BUDGET = 2**31


#: Row ids of every working set of the process (see :attr:`WorkingSet.row_ids`): an identifier, not
#: a random draw, so the start comes from the OS and no generator's state is touched.
_ROW_IDS = itertools.count(int.from_bytes(os.urandom(4), "little") << 24)


class WorkingSet(LimitedMemoryMixin):
    """Cuts ``(a_r, b_r)`` with per-group Gram blocks maintained incrementally.

    Parameters
    ----------
    dim : int
        Length of the slopes.
    groups : ndarray of shape (dim,) of int, optional
        Group id in ``0..n_groups-1`` of each coordinate; None means one group.
    zero_tol : float, default=1e-7
        A dual ``alpha_r <= zero_tol * sum(alpha)`` counts as zero for pruning.

    Attributes
    ----------
    n_cuts : int
        Number of stored cuts.
    offsets : ndarray of shape (n_cuts,)
        The ``b_r``.
    duals : ndarray of shape (n_cuts,)
        Last recorded dual of each cut (0 for cuts added since), usable as a warm start.
    sparse : bool or None
        Storage mode, fixed by the first cut: CSR rows for sparse slopes, a dense block otherwise.
    """

    def __init__(self, dim, *, groups=None, zero_tol=1e-7):
        self.dim = int(dim)
        if self.dim < 1:
            raise InputError(f"dim must be >= 1, got {dim}", field="dim")
        if groups is None:
            self._groups = None
            self.n_groups = 1
        else:
            self._groups = as_group_ids(groups, self.dim, compact=True)  # the regulariser's own, not a copy
            self.n_groups = int(self._groups.max()) + 1 if self.dim else 1
        self._store = SparseRows(self.dim, self._groups, self.n_groups)  # the slopes when sparse
        self._index_dtype = coordinate_dtype(self.dim)
        self.zero_tol = float(zero_tol)
        self.sparse = None
        self.n_cuts = 0
        self._cap = 0
        self._dense = None  # (cap, dim) when dense
        self._b = np.zeros(0)
        self._b_exact = np.zeros(0)  # the oracle's offsets (differ from _b for rounded cuts)
        self._e = np.zeros(0)  # bounds on ||a - stored slope|| (0: the cut is stored exactly)
        self._ball: Ball | None = None  # the engine's region holding the optimum
        self._stale = False  # rounded cuts whose offsets belong to another problem
        self._G = np.zeros((self.n_groups, 0, 0))
        self._idle = np.zeros(0, dtype=np.int64)
        self._duals = np.zeros(0)
        self._ids = np.zeros(0, dtype=np.int64)
        self._masks = {}

    # ------------------------------------------------------------------ storage
    @property
    def n_threads(self) -> int | None:
        """Threads for the products over sparse slopes (Gram rows, ``A alpha``, ``A^T w``) above
        a few million stored nonzeros; None: up to 4 (the machine's cores). The engine sets it to
        its oracle's executor's workers, so that a serial run uses one core."""
        return self._store.n_threads

    @n_threads.setter
    def n_threads(self, value) -> None:
        self._store.n_threads = value

    @property
    def group_ids(self) -> np.ndarray | None:
        """The group of every coordinate, ndarray of shape (dim,), read-only int32 (int64 for
        ids of ``2**31`` or more); None for one group. A compact array given at construction
        (a :class:`~cutplane.regularizers.MixedNorm`'s ``groups``) is this array, not a copy."""
        return self._groups

    @property
    def offsets(self) -> np.ndarray:
        return self._b[: self.n_cuts]

    @property
    def duals(self) -> np.ndarray:
        return self._duals[: self.n_cuts]

    @property
    def exact_offsets(self) -> np.ndarray:
        """The oracle's offsets ``b_r``, shape (n_cuts,): equal to :attr:`offsets` except for cuts
        rounded to float32, whose model offset is lower (:mod:`cutplane.rounded_cuts`)."""
        return self._b_exact[: self.n_cuts]

    @property
    def residual_norms(self) -> np.ndarray:
        """Per cut, a bound on ``||a_r - stored slope||_2``, shape (n_cuts,); 0 for a cut stored exactly."""
        return self._e[: self.n_cuts]

    @property
    def single_precision(self) -> bool:
        """Whether the dense slopes are stored as float32 (every one a rounded cut or exact in float32)."""
        return self._dense is not None and self._dense.dtype == np.float32

    @property
    def ball(self) -> Ball | None:
        """The region holding the optimum that new cuts are rounded for (:meth:`set_ball`), or None."""
        return self._ball

    def set_ball(self, ball: Ball) -> None:
        """Name a region that holds the optimum of the problem being solved.

        From then on the working set may store a dense cut rounded to float32 with its offset
        lowered so that it stays below the exact cut on ``ball`` (:func:`cutplane.rounded_cuts.round_cut`),
        and switches its block to float32 once it is large (:data:`SINGLE_MIN_BYTES`). Cuts left
        from another problem (:meth:`forget_ball`) get offsets valid on ``ball`` first
        (:func:`cutplane.rounded_cuts.stale_offset`). The caller guarantees that the optimum is in
        ``ball`` (the engine derives it from a reduced solve's dual, see :mod:`cutplane.rounded_cuts`).

        Parameters
        ----------
        ball : Ball
        """
        if not isinstance(ball, Ball):
            raise InputError(f"ball must be a cutplane.rounded_cuts.Ball, got {type(ball).__name__}", field="ball")
        if ball.center.shape != (self.dim,) or not (np.isfinite(ball.radius) and ball.radius >= 0):
            raise InputError(f"ball needs a center of shape ({self.dim},) and a finite radius >= 0", field="ball")
        if self._stale:
            n = self.n_cuts
            rounded = self._e[:n] > 0
            self._b[:n][rounded] = stale_offset(self._b_exact[:n][rounded], self._e[:n][rounded], ball)
            self._stale = False
        self._ball = ball

    def forget_ball(self) -> None:
        """The cuts are about to serve another problem (a warm start at another ``lam``): the
        offsets of rounded cuts no longer hold and are replaced at the next :meth:`set_ball`,
        which must come before the next reduced solve (or drop them: :meth:`discard_rounded`)."""
        self._ball = None
        self._stale = bool(np.any(self._e[: self.n_cuts] > 0))

    def discard_rounded(self) -> int:
        """Remove the rounded cuts and store the block as float64 again; returns how many were removed."""
        keep = self._e[: self.n_cuts] == 0
        dropped = int(keep.size - keep.sum())
        if dropped:
            self._keep(keep)
        self._to_double()
        self._ball = None
        self._stale = False
        return dropped

    def scale(self, factor: float) -> None:
        """Multiply every cut by ``factor > 0``, in place: ``(a_r, b_r)`` becomes
        ``(factor a_r, factor b_r)``.

        A minorant of ``R`` times ``factor`` is a minorant of ``factor R``; so the cuts of the
        risk of a subset ``S`` of ``n`` examples, scaled by ``|S| / n``, are cuts of the risk of
        all ``n`` (the others' mean risk being ``>= 0``). The Gram blocks scale by ``factor**2``,
        the rounding records (exact offsets, residual norms) by ``factor``; a float32 block is
        stored as float64 first (without loss), so the scaled slopes round only once, in float64.

        Parameters
        ----------
        factor : float
            Finite and positive.
        """
        f = float(factor)
        if not (np.isfinite(f) and f > 0.0):
            raise InputError(f"factor must be finite and > 0, got {factor!r}", field="factor")
        n = self.n_cuts
        if self.sparse:
            self._store.scale_rows(f)
        elif self._dense is not None:
            self._to_double()
            self._dense[:n] *= f
        self._b[:n] *= f
        self._b_exact[:n] *= f
        self._e[:n] *= f
        self._G[:, :n, :n] *= f * f

    def set_rounding_records(self, exact_offsets, residual_norms) -> None:
        """Restore :attr:`exact_offsets` and :attr:`residual_norms` (a rebuild from saved arrays).

        Parameters
        ----------
        exact_offsets, residual_norms : ndarray of shape (n_cuts,)
        """
        n = self.n_cuts
        b = np.asarray(exact_offsets, dtype=np.float64)
        e = np.asarray(residual_norms, dtype=np.float64)
        if b.shape != (n,) or e.shape != (n,):
            raise InputError(f"exact offsets and residual norms must have shape ({n},)", field="residual_norms")
        if not (np.all(np.isfinite(b)) and np.all(np.isfinite(e)) and np.all(e >= 0)):
            raise InputError("exact offsets must be finite and residual norms finite and >= 0", field="residual_norms")
        self._b_exact[:n] = b
        self._e[:n] = e

    @property
    def row_ids(self) -> np.ndarray:
        """A number per stored cut, ndarray of int64 of shape (n_cuts,): given once, when the cut is
        added (or made by :meth:`aggregate`), never given again in this process (one counter for
        every working set, from a random start, so that a working set rebuilt by a memory budget or
        unpickled from elsewhere does not reuse another's numbers either), and kept when other
        cuts are removed or the cuts reordered. A copy of the rows elsewhere (an executor's
        workers, :mod:`cutplane.executors.mirror`) names them by it."""
        return self._ids[: self.n_cuts]

    @property
    def idle_counts(self) -> np.ndarray:
        """Consecutive recorded iterations with zero dual, per cut, shape (n_cuts,)."""
        return self._idle[: self.n_cuts]

    def _grow(self, need):
        if need <= self._cap:
            return
        cap = max(8, 2 * self._cap, need)
        if self.sparse is False:
            dense = np.zeros((cap, self.dim), dtype=np.float32 if self.single_precision else np.float64)
            if self._dense is not None:
                dense[: self.n_cuts] = self._dense[: self.n_cuts]
            self._dense = dense
        G = np.zeros((self.n_groups, cap, cap))
        G[:, : self.n_cuts, : self.n_cuts] = self._G[:, : self.n_cuts, : self.n_cuts]
        self._G = G
        for name in ("_b", "_b_exact", "_e", "_duals", "_idle", "_ids"):
            old = getattr(self, name)
            new = np.zeros(cap, dtype=old.dtype)
            new[: self.n_cuts] = old[: self.n_cuts]
            setattr(self, name, new)
        self._cap = cap

    def _split_slope(self, slope):
        """(indices, data) of the nonzeros of a slope of shape (dim,) or (1, dim)."""
        if sp.issparse(slope):
            if slope.shape not in ((1, self.dim), (self.dim,)):
                raise InputError(f"cut slope has shape {slope.shape}, expected (1, {self.dim})", field="slope")
            if slope.format == "csr" and slope.shape == (1, self.dim) and slope.has_canonical_format:
                idx, data = slope.indices, slope.data  # sorted, no duplicates: no rebuild
            else:
                row = sp.csr_matrix(slope.reshape(1, self.dim))
                row.sum_duplicates()  # also sorts the indices, as the merge joins need
                idx, data = row.indices, row.data
            nz = data != 0
            if not nz.all():
                idx, data = idx[nz], data[nz]
            idx = idx.astype(self._index_dtype, copy=True)  # never a view of the caller's arrays
            data = data.astype(np.float64, copy=True)
        else:
            a = np.asarray(slope, dtype=np.float64)
            if a.shape not in ((self.dim,), (1, self.dim)):
                raise InputError(f"cut slope has shape {a.shape}, expected ({self.dim},)", field="slope")
            a = a.ravel()
            idx = np.flatnonzero(a).astype(self._index_dtype)
            data = a[idx]
        if not np.all(np.isfinite(data)):
            raise InputError("cut slope has NaN or infinite entries", field="slope")
        return idx, data

    def matrix(self):
        """The slopes stacked as rows: ndarray or CSR of shape (n_cuts, dim) (float32 when
        :attr:`single_precision`)."""
        if self.sparse:
            return self._store.matrix()
        if self._dense is None:
            return np.zeros((0, self.dim))
        return self._dense[: self.n_cuts]

    def _group_block(self, idx, data):
        """Sparse (dim, n_groups) matrix holding the slope in the column of each coordinate's group."""
        cols = np.zeros(len(idx), dtype=np.int64) if self._groups is None else self._groups[idx]
        return sp.csr_matrix((data, (idx, cols)), shape=(self.dim, self.n_groups))

    def _cross(self, idx, data, dense_vec=None):
        """Per-group inner products of a slope with every stored cut, shape (n_groups, n_cuts)
        (sparse slopes: :meth:`cutplane.working_set.sparse_rows.SparseRows.cross`)."""
        n = self.n_cuts
        if n == 0:
            return np.zeros((self.n_groups, 0))
        if self.sparse:
            return self._store.cross(idx, data).T
        if dense_vec is None:
            dense_vec = np.zeros(self.dim)
            dense_vec[idx] = data
        if self.single_precision:
            out = np.empty(n)
            _single_kernels().rows_dot(self._dense, n, dense_vec, out)
            return out[None, :]
        if self._groups is None:
            return (self._dense[:n] @ dense_vec)[None, :]
        block = self._group_block(idx, data)
        return np.asarray(block.T @ self._dense[:n].T)

    def add(self, cut) -> int:
        """Append a cut; returns its index. Costs one row of inner products.

        Parameters
        ----------
        cut : Cut
            Slope of shape (dim,) (dense) or (1, dim) (sparse), and a finite offset.
        """
        slope, offset = cut
        offset = float(offset)
        if not np.isfinite(offset):
            raise InputError(f"cut offset is not finite: {offset}", field="offset")
        is_sparse = sp.issparse(slope)
        if self.sparse is None:
            self.sparse = is_sparse
        idx, data = self._split_slope(slope)
        dense_vec, self_gram = None, None
        exact_offset, residual = offset, 0.0
        if not self.sparse:  # numpy throughout: no compiled kernel to load in a small dense fit
            dense_vec = np.zeros(self.dim)
            dense_vec[idx] = data
            if self.single_precision and self._ball is None:
                self._to_double()  # no region to round for: store exactly
            elif not self.single_precision and self._single_pays():
                self._to_single()
            if self.single_precision and self._ball is not None:
                rounded = round_cut(dense_vec, offset, self._ball)
                if np.isfinite(rounded.offset):
                    dense_vec, offset, residual = rounded.slope, rounded.offset, rounded.residual_norm
                else:  # an entry beyond float32's range: store this cut exactly
                    self._to_double()
            if self._groups is None:
                self_gram = np.array([dense_vec @ dense_vec])
            else:
                self_gram = np.bincount(self._groups, weights=dense_vec * dense_vec, minlength=self.n_groups)
        cross = self._cross(idx, data, dense_vec)
        n = self.n_cuts
        self._grow(n + 1)
        if self.sparse:
            self._store.append(idx, data)
        else:
            self._dense[n] = dense_vec
        self._G[:, n, :n] = cross
        self._G[:, :n, n] = cross
        self._G[:, n, n] = self._store.self_gram(idx, data) if self_gram is None else self_gram
        self._b[n] = offset
        self._b_exact[n] = exact_offset
        self._e[n] = residual
        self._duals[n] = 0.0
        self._idle[n] = 0
        self._ids[n] = self._new_id()
        self.n_cuts = n + 1
        return n

    def _new_id(self) -> int:
        return next(_ROW_IDS)

    def _single_pays(self) -> bool:
        """Whether to switch the dense block to float32 before the next cut (see :data:`SINGLE_MIN_BYTES`)."""
        n = self.n_cuts + 1
        return (
            self._ball is not None
            and not self._stale
            and self._groups is None
            and n * self.dim * 8 >= SINGLE_MIN_BYTES
            and n * n * self.dim <= SINGLE_CONVERT_BUDGET
        )

    def _to_single(self) -> None:
        """Round the stored slopes on the ball and store the block as float32; recompute the Gram matrix."""
        n, ball = self.n_cuts, self._ball
        assert ball is not None  # _single_pays checked it
        rounded = [round_cut(self._dense[r], self._b[r], ball) for r in range(n)]
        if not all(np.isfinite(c.offset) for c in rounded):  # an entry beyond float32's range
            return
        block = np.zeros((max(self._cap, 8), self.dim), dtype=np.float32)
        for r, c in enumerate(rounded):
            block[r] = c.slope
            self._b[r] = c.offset
            self._e[r] += c.residual_norm
        rows = block[:n].astype(np.float64)
        self._G[0, :n, :n] = rows @ rows.T
        self._dense = block

    def _to_double(self) -> None:
        """Store the block as float64 again (without loss: float32 numbers are float64 numbers)."""
        if self.single_precision:
            self._dense = self._dense.astype(np.float64)

    def stored_row(self, position):
        """The stored form of a sparse cut's slope: ``(indices, values, scale)``, the slope being
        ``values * scale`` at ``indices`` (sorted int32 or int64 indices; values as exact int16 or
        int32 counts, or float64 with ``scale = 1``: :func:`cutplane.working_set.sparse_rows.quantize`).
        The arrays are the working set's own (do not modify them).

        Parameters
        ----------
        position : int
            Row position in ``0 .. n_cuts - 1`` (see :attr:`row_ids` for a stable name).

        Raises
        ------
        InputError
            For a dense working set, or a position out of range.
        """
        if not self.sparse:
            raise InputError("stored_row needs a working set of sparse cuts", field="position")
        position = int(position)
        if not 0 <= position < self.n_cuts:
            raise InputError(f"position must be in [0, {self.n_cuts}), got {position}", field="position")
        idx, values = self._store.rows[position]
        return idx, values, float(self._store.scale[position])

    # ------------------------------------------------------------------ algebra
    def gram(self, group=None) -> np.ndarray:
        """``A^T A`` (or ``A_j^T A_j`` for a group), ndarray of shape (n_cuts, n_cuts)."""
        n = self.n_cuts
        if group is None:
            if self.n_groups == 1:
                return self._G[0, :n, :n].copy()
            return self._G[:, :n, :n].sum(axis=0)
        return self._G[self._check_group(group), :n, :n].copy()

    def gram_blocks(self, n_groups=None) -> np.ndarray:
        """Every group's ``A_j^T A_j`` at once, ndarray of shape (n_groups, n_cuts, n_cuts).

        Parameters
        ----------
        n_groups : int, optional
            The number of blocks wanted (a regulariser may count more groups than any
            coordinate has, or fewer): the first ``n_groups`` blocks, zero blocks after the
            working set's own. Default: the working set's groups.

        Returns
        -------
        ndarray
            With the working set's own groups: a read-only view, no copy (``gram(group=j)``
            copies one block), valid until the next ``add``, ``prune`` or ``aggregate``; copy
            what must outlive them. Otherwise a new array.
        """
        n = self.n_cuts
        view = self._G[:, :n, :n]
        view.flags.writeable = False
        if n_groups is None or int(n_groups) == self.n_groups:
            return view
        out = np.zeros((int(n_groups), n, n))
        k = min(int(n_groups), self.n_groups)
        out[:k] = view[:k]
        return out

    def _check_group(self, group):
        j = int(group)
        if not 0 <= j < self.n_groups:
            raise InputError(f"group {group} out of range 0..{self.n_groups - 1}", field="group")
        return j

    def _mask(self, group):
        j = self._check_group(group)
        if j not in self._masks:
            self._masks[j] = (self._groups == j) if self._groups is not None else np.ones(self.dim, bool)
        return self._masks[j]

    def output_vector(self) -> np.ndarray:
        """A writable float64 array of shape (dim,), its content arbitrary, for a point the
        caller fills: with sparse cuts from the pool that ``A alpha``'s outputs come from (an
        array nothing refers to any more is filled again instead of a new one being mapped:
        :meth:`cutplane.working_set.sparse_rows.SparseRows.output`), else a new array."""
        if self.sparse:
            return self._store.output()
        return np.empty(self.dim)

    def combine(self, alpha, group=None) -> np.ndarray:
        """``sum_r alpha_r a_r``, ndarray of shape (dim,) (zero outside ``group`` if given)."""
        alpha = np.asarray(alpha, dtype=np.float64)
        if alpha.shape != (self.n_cuts,):
            raise InputError(f"alpha has shape {alpha.shape}, expected ({self.n_cuts},)", field="alpha")
        if self.n_cuts == 0:
            out = np.zeros(self.dim)
        elif self.sparse:
            out = self._store.combine(alpha)
        elif self.single_precision:
            out = np.empty(self.dim)
            _single_kernels().combine_rows(self._dense, alpha, out)
        else:
            out = _dense_combination(alpha, self._dense[: self.n_cuts])
        if group is not None:
            out = np.where(self._mask(group), out, 0.0)
        return out

    def combine_by_group(self, beta) -> np.ndarray:
        """``w_c = sum_r beta[g(c), r] a_rc`` (``w_j = A_j^T beta_j`` for every group), shape (dim,).

        Parameters
        ----------
        beta : ndarray of shape (n_groups, n_cuts)
            One combination of the cuts per group (more rows than ``n_groups`` are allowed: a
            regulariser may count trailing groups that own no coordinate).
        """
        beta = np.asarray(beta, dtype=np.float64)
        if beta.ndim != 2 or beta.shape[1] != self.n_cuts or beta.shape[0] < self.n_groups:
            raise InputError(f"beta has shape {beta.shape}, expected (>= {self.n_groups}, {self.n_cuts})", field="beta")
        if self.n_cuts == 0:
            return np.zeros(self.dim)
        if self.sparse:
            return self._store.combine_by_group(beta)
        dense = self._dense[: self.n_cuts]
        ids = self._groups if self._groups is not None else np.zeros(self.dim, dtype=np.intp)
        return np.einsum("rc,rc->c", dense, beta[ids].T) if self.dim else np.zeros(0)

    def slopes_dot(self, w, rows=None) -> np.ndarray:
        """``A^T w``: the inner product of every slope with ``w``, shape (n_cuts,); with ``rows``
        (cut indices), of those cuts only, shape (len(rows),)."""
        w = np.asarray(w, dtype=np.float64)
        if self.n_cuts == 0:
            return np.zeros(0)
        if rows is not None:
            rows = np.asarray(rows, dtype=np.intp)
            if self.sparse:
                return self._store.dot(np.ascontiguousarray(w), rows)
            return self._dense[rows].astype(np.float64) @ w
        if self.sparse:
            return self._store.dot(np.ascontiguousarray(w))
        if self.single_precision:
            out = np.empty(self.n_cuts)
            _single_kernels().rows_dot(self._dense, self.n_cuts, np.ascontiguousarray(w), out)
            return out
        return self._dense[: self.n_cuts] @ w

    def model_value(self, w, rows=None) -> float:
        """``R_t(w) = max_r <a_r, w> + b_r`` (``-inf`` for an empty set); with ``rows``, the
        maximum over those cuts only (a lower bound on ``R_t(w)``)."""
        if self.n_cuts == 0 or (rows is not None and len(rows) == 0):
            return -np.inf
        if rows is None:
            return float(np.max(self.slopes_dot(w) + self.offsets))
        rows = np.asarray(rows, dtype=np.intp)
        return float(np.max(self.slopes_dot(w, rows) + self.offsets[rows]))

    def same_groups(self, groups) -> bool:
        """Whether ``groups`` (as given to the constructor) names this working set's coordinate groups.

        None and a single group of every coordinate are the same grouping (one Gram block).
        """
        if groups is None:
            return self.n_groups == 1
        ids = as_group_ids(groups, self.dim, compact=True)  # the same array when shared: no copy
        if self._groups is None:
            return bool(np.all(ids == 0))
        return ids is self._groups or bool(np.array_equal(ids, self._groups))

    def share_groups(self, groups) -> bool:
        """Hold the array of ``groups`` itself (compact int32 ids, a regulariser's
        :attr:`~cutplane.regularizers.MixedNorm.groups`) when it names this working set's
        groups: a working set adopted by a run whose regulariser was built anew (a refit from a
        path's cuts) then keeps no second copy of ``dim`` ids. Returns whether it is held;
        False (nothing changed) when the groups differ or there is one group."""
        if groups is None or self._groups is None:
            return False
        ids = as_group_ids(groups, self.dim, compact=True)
        if ids is self._groups:
            return True
        if ids.dtype != self._groups.dtype or not np.array_equal(ids, self._groups):
            return False
        self._groups = ids
        self._store.share_groups(ids)
        return True

    def max_constant_offset(self) -> float:
        """The largest offset of a cut with a zero slope (a floor ``R(w) >= b``), ``-inf`` if none."""
        n = self.n_cuts
        if n == 0:
            return -np.inf
        diag = np.einsum("gii->i", self._G[:, :n, :n])
        const = diag == 0.0
        return float(np.max(self._b[:n][const])) if const.any() else -np.inf

    # ------------------------------------------------------------------ memory
    def scratch_bytes_after_add(self) -> int:
        """Bytes the dense scatter buffer of sparse slopes will add at the next :meth:`add`
        (0 once it exists, or for dense slopes)."""
        return self._store.scratch_bytes_after_add() if self.sparse else 0

    @property
    def slope_itemsize(self) -> int:
        """Bytes per stored coordinate of a dense slope (8, or 4 in :attr:`single_precision`)."""
        return 4 if self.single_precision else 8

    @property
    def capacity(self) -> int:
        """Cuts the arrays have room for before the next growth (doubling)."""
        return int(self._cap)

    @property
    def nbytes(self) -> int:
        """Bytes held by the stored slopes (with the dense scatter buffer of sparse ones) and the Gram blocks."""
        if self.sparse:
            slopes = self._store.nbytes
        else:
            slopes = 0 if self._dense is None else self._dense.nbytes
        scalars = self._b.nbytes + self._b_exact.nbytes + self._e.nbytes + self._duals.nbytes + self._idle.nbytes
        return int(slopes + self._G.nbytes + scalars)

    def cuts(self):
        """The stored cuts as a list of :class:`~cutplane.cuts.Cut` (dense or CSR slopes)."""
        A = self.matrix()
        return [Cut(A[r] if self.sparse else A[r].astype(np.float64), float(self._b[r])) for r in range(self.n_cuts)]

    def __repr__(self) -> str:
        dense = "dense float32" if self.single_precision else "dense"
        mode = {None: "empty", True: "sparse", False: dense}[self.sparse]
        return f"WorkingSet(dim={self.dim}, n_cuts={self.n_cuts}, n_groups={self.n_groups}, {mode})"


def _single_kernels():
    """The compiled float32 products (imported when first needed: a small fit never loads them)."""
    from . import _single_kernels as kernels

    return kernels


def _dense_combination(alpha, rows):
    """``alpha @ rows`` reading only the rows of nonzero ``alpha``.

    The reduced problem's duals are sparse (a few dozen of hundreds of cuts carry weight), and
    with dense slopes the product is bound by reading the rows: the full product reads every
    slope, this one only the slopes whose dual is nonzero.
    """
    nz = np.flatnonzero(alpha)
    if nz.size * 2 >= alpha.size:
        return alpha @ rows
    out = np.zeros(rows.shape[1])
    for r in nz:
        out += alpha[r] * rows[r]
    return out
