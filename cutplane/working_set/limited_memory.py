"""Limited-memory BMRM (chapter sec. 1.2.3): the duals recorded per cut, pruning, aggregation.

:class:`LimitedMemoryMixin` holds the operations of :class:`~cutplane.working_set.WorkingSet`
that bound the number of cuts: :meth:`~LimitedMemoryMixin.record_duals` keeps the duals of the
last reduced solve and counts, per cut, the consecutive solves in which its dual was zero;
:meth:`~LimitedMemoryMixin.prune` drops cuts idle for k iterations and
:meth:`~LimitedMemoryMixin.aggregate` merges the oldest cuts into one convex combination. A
convex combination of minorants is a minorant, and merging with the reduced problem's duals as
weights keeps the reduced optimum unchanged, so neither operation breaks a bound. The storage
(slopes, offsets, Gram blocks) is the working set's; the mixin only reorders and merges it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from ..exceptions import InputError

__all__ = ["LimitedMemoryMixin"]


class LimitedMemoryMixin:
    """Duals, idle counts, pruning and aggregation of the cuts of a :class:`~cutplane.working_set.WorkingSet`.

    A mixin: it reads and rewrites the working set's arrays (``_b``, ``_duals``, ``_idle``,
    ``_G``, the slopes) and has no state of its own.
    """

    if TYPE_CHECKING:  # the working set's attributes the mixin uses (declared for the type checker)
        zero_tol: float
        n_cuts: int
        n_groups: int
        sparse: bool | None
        _b: np.ndarray
        _duals: np.ndarray
        _idle: np.ndarray
        _G: np.ndarray
        _dense: Any  # (cap, dim) block in dense mode, None in sparse mode
        _store: Any
        _index_dtype: type

        @property
        def duals(self) -> np.ndarray: ...

        @property
        def idle_counts(self) -> np.ndarray: ...

        def matrix(self) -> Any: ...

    def record_duals(self, alpha) -> None:
        """Store the duals of the last reduced solve and update the per-cut idle counts."""
        alpha = np.asarray(alpha, dtype=np.float64)
        if alpha.shape != (self.n_cuts,):
            raise InputError(f"alpha has shape {alpha.shape}, expected ({self.n_cuts},)", field="alpha")
        n = self.n_cuts
        scale = max(float(np.sum(np.abs(alpha))), np.finfo(float).tiny)
        zero = np.abs(alpha) <= self.zero_tol * scale
        self._idle[:n] = np.where(zero, self._idle[:n] + 1, 0)
        self._duals[:n] = alpha

    def _keep(self, keep):
        """Keep the cuts flagged in the boolean mask ``keep`` (order preserved)."""
        n = self.n_cuts
        sel = np.flatnonzero(keep)
        m = len(sel)
        if self.sparse:
            self._store.keep(sel)
        else:
            self._dense[:m] = self._dense[sel]
        self._G[:, :m, :m] = self._G[:, sel[:, None], sel[None, :]]
        for name in ("_b", "_duals", "_idle"):
            arr = getattr(self, name)
            arr[:m] = arr[:n][sel]
        self.n_cuts = m

    def prune(self, idle_iterations) -> int:
        """Remove cuts whose dual stayed zero for ``idle_iterations`` consecutive records.

        Returns
        -------
        int
            The number of cuts removed.
        """
        k = int(idle_iterations)
        if k < 1:
            raise InputError(f"idle_iterations must be >= 1, got {idle_iterations}", field="prune_after")
        drop = self.idle_counts >= k
        if not drop.any():
            return 0
        self._keep(~drop)
        return int(drop.sum())

    def aggregate(self, max_cuts, alpha=None) -> int:
        """Merge the oldest cuts into one so that ``n_cuts <= max_cuts``.

        Cuts whose dual is (numerically) zero are dropped first, oldest first, as far as the
        budget needs (they would enter the merge with weight zero). Then the merged cut is
        ``sum_i beta_i (a_i, b_i)`` over the oldest remaining cuts with
        ``beta = alpha_old / sum(alpha_old)``. Its Gram row comes from the stored Gram
        blocks, not from the slopes.

        Parameters
        ----------
        max_cuts : int
            Budget, >= 1.
        alpha : ndarray of shape (n_cuts,), optional
            Duals of the last reduced solve; defaults to the recorded ones.

        Returns
        -------
        int
            How many cuts the working set lost (0 when already within budget).
        """
        max_cuts = int(max_cuts)
        if max_cuts < 1:
            raise InputError(f"max_cuts must be >= 1, got {max_cuts}", field="max_cuts")
        n = self.n_cuts
        if n <= max_cuts:
            return 0
        alpha = self.duals.copy() if alpha is None else np.asarray(alpha, dtype=np.float64)
        if alpha.shape != (n,):
            raise InputError(f"alpha has shape {alpha.shape}, expected ({n},)", field="alpha")
        n_start, n_dropped = n, 0
        zero = np.abs(alpha) <= self.zero_tol * max(float(np.abs(alpha).sum()), np.finfo(float).tiny)
        if zero.any():
            # cuts without dual weight would enter the merge with weight 0: drop them instead,
            # oldest first and only as many as the budget needs
            drop = np.flatnonzero(zero)[: n - max_cuts]
            keep = np.ones(n, dtype=bool)
            keep[drop] = False
            self._keep(keep)
            alpha = alpha[keep]
            n = self.n_cuts
            if n <= max_cuts:
                return len(drop)
        n_dropped = n_start - n
        k = n - max_cuts + 1  # the oldest k cuts become one
        w_old = np.clip(alpha[:k], 0.0, None)
        total = w_old.sum()
        beta = w_old / total if total > 0 else np.full(k, 1.0 / k)
        # slope and offset of the merged cut
        if self.sparse:
            merged = (sp.csr_matrix(beta[None, :]) @ self.matrix()[:k]).tocsr()
            merged.sum_duplicates()
            merged.eliminate_zeros()
            merged_row = (merged.indices.astype(self._index_dtype), merged.data.astype(np.float64))
        else:
            merged_vec = beta @ self._dense[:k]
        b_new = float(beta @ self._b[:k])
        G = self._G[:, :n, :n]
        cross = np.einsum("i,gij->gj", beta, G[:, :k, k:])  # (n_groups, n - k)
        self_g = np.einsum("i,gij,j->g", beta, G[:, :k, :k], beta)
        dual_new = float(alpha[:k].sum())
        # rebuild: merged cut at position 0, then the remaining cuts in order
        m = n - k + 1
        newG = np.zeros((self.n_groups, m, m))
        newG[:, 1:, 1:] = G[:, k:, k:]
        newG[:, 0, 1:] = cross
        newG[:, 1:, 0] = cross
        newG[:, 0, 0] = self_g
        self._G[:, :m, :m] = newG
        if self.sparse:
            self._store.merge_oldest(k, *merged_row)
        else:
            self._dense[1:m] = self._dense[k:n].copy()
            self._dense[0] = merged_vec
        for name, first in (("_b", b_new), ("_duals", dual_new), ("_idle", 0)):
            arr = getattr(self, name)
            arr[1:m] = arr[k:n].copy()
            arr[0] = first
        self.n_cuts = m
        return n_dropped + k - 1

    def set_duals(self, duals, idle_counts) -> None:
        """Restore the duals and idle counts of the stored cuts (e.g. from a checkpoint).

        Parameters
        ----------
        duals : ndarray of shape (n_cuts,)
        idle_counts : ndarray of int of shape (n_cuts,)
        """
        n = self.n_cuts
        duals = np.asarray(duals, dtype=np.float64)
        idle = np.asarray(idle_counts)
        if duals.shape != (n,) or idle.shape != (n,):
            raise InputError(
                f"duals and idle_counts must have shape ({n},), got {duals.shape} and {idle.shape}", field="duals"
            )
        if not np.all(np.isfinite(duals)) or np.any(idle < 0):
            raise InputError("duals must be finite and idle counts non-negative", field="duals")
        self._duals[:n] = duals
        self._idle[:n] = idle.astype(np.int64)
