"""Limited-memory BMRM (Franc et al. 2012, sec. 1.2.3): the duals recorded per cut, pruning, aggregation.

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

__all__ = ["LimitedMemoryMixin", "FLOOR_SHARE", "compact_rows"]

#: Weight of the floor cut ``(0, r0)`` in the single merged cut of :meth:`LimitedMemoryMixin.aggregate`
#: with ``max_cuts=1`` and a risk floor: the merged slope keeps this relative margin inside the
#: conjugate's domain, so the reduced problem stays bounded.
FLOOR_SHARE = 1e-2


class LimitedMemoryMixin:
    """Duals, idle counts, pruning and aggregation of the cuts of a :class:`~cutplane.working_set.WorkingSet`.

    A mixin: it reads and rewrites the working set's arrays (``_b``, ``_duals``, ``_idle``,
    ``_ids``, ``_G``, the slopes) and has no state of its own; a merged cut gets a new row id.
    """

    if TYPE_CHECKING:  # the working set's attributes the mixin uses (declared for the type checker)
        zero_tol: float
        n_cuts: int
        n_groups: int
        sparse: bool | None
        _b: np.ndarray
        _b_exact: np.ndarray
        _e: np.ndarray
        _duals: np.ndarray
        _idle: np.ndarray
        _ids: np.ndarray
        _G: np.ndarray
        _dense: Any  # (cap, dim) block in dense mode, None in sparse mode
        _store: Any
        _index_dtype: np.dtype

        @property
        def duals(self) -> np.ndarray: ...

        @property
        def idle_counts(self) -> np.ndarray: ...

        def matrix(self) -> Any: ...

        def _new_id(self) -> int: ...

        def _to_double(self) -> None: ...

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
        self._select(np.flatnonzero(keep))

    def _select(self, sel):
        """Keep the cuts of the index array ``sel``, in that order (a subset, or a permutation)."""
        sel = np.asarray(sel, dtype=np.intp)
        n = self.n_cuts
        m = len(sel)
        if self.sparse:
            self._store.keep(sel)
        else:
            compact_rows(self._dense, sel)
        self._G[:, :m, :m] = self._G[:, sel[:, None], sel[None, :]]
        for name in ("_b", "_b_exact", "_e", "_duals", "_idle", "_ids"):
            arr = getattr(self, name)
            arr[:m] = arr[:n][sel]
        self.n_cuts = m

    def floor_index(self, floor=None) -> int | None:
        """The index of the pinned floor cut, if ``floor`` is given and there is one.

        The floor cut is the cut ``R(w) >= r0`` with a zero slope (the largest offset among
        them) that :func:`cutplane.minimize` adds from ``risk_lower_bound``: under ``L1`` (and
        the other regularisers whose conjugate is an indicator) it is the cut that keeps the
        reduced problem bounded at every ``w``, so :meth:`prune` and :meth:`aggregate` keep it
        when given the ``floor``.

        Parameters
        ----------
        floor : float or None
            The risk floor of the run; None: no cut is pinned (returns None).

        Returns
        -------
        int or None
        """
        n = self.n_cuts
        if floor is None or n == 0:
            return None
        const = np.flatnonzero(np.einsum("gii->i", self._G[:, :n, :n]) == 0.0)
        if const.size == 0:
            return None
        return int(const[np.argmax(self._b[:n][const])])

    def prune(self, idle_iterations, *, floor=None) -> int:
        """Remove cuts whose dual stayed zero for ``idle_iterations`` consecutive records.

        Parameters
        ----------
        idle_iterations : int
            >= 1.
        floor : float, optional
            The run's risk floor: the floor cut (:meth:`floor_index`) is never removed.

        Returns
        -------
        int
            The number of cuts removed.
        """
        k = int(idle_iterations)
        if k < 1:
            raise InputError(f"idle_iterations must be >= 1, got {idle_iterations}", field="prune_after")
        drop = self.idle_counts >= k
        pin = self.floor_index(floor)
        if pin is not None:
            drop[pin] = False
        if not drop.any():
            return 0
        self._keep(~drop)
        return int(drop.sum())

    def aggregate(self, max_cuts, alpha=None, *, floor=None) -> int:
        """Merge the oldest cuts into one so that ``n_cuts <= max_cuts``.

        Cuts whose dual is (numerically) zero are dropped first, oldest first, as far as the
        budget needs (they would enter the merge with weight zero). Then the merged cut is
        ``sum_i beta_i (a_i, b_i)`` over the oldest remaining cuts with
        ``beta = alpha_old / sum(alpha_old)``. Its Gram row comes from the stored Gram
        blocks, not from the slopes.

        With ``floor`` given, the floor cut ``R >= r0`` (:meth:`floor_index`) is pinned: it is
        neither dropped nor merged (it moves to the newest end, the merge takes the oldest
        other cuts). The duals of the last solve lie on the boundary of the conjugate's domain
        (``||A alpha||_inf = lam`` for ``L1``), so a merged cut carries no slack of its own:
        folding the floor cut into it would leave a reduced problem bounded only up to
        round-off. When the budget leaves a single cut (``max_cuts=1``), that cut is the merge
        of every cut mixed with the floor: ``(1 - tau) sum_i beta_i (a_i, b_i) + tau (0, r0)``
        with ``tau = FLOOR_SHARE``, a convex combination of minorants again, whose slope keeps
        a margin inside the domain.

        Parameters
        ----------
        max_cuts : int
            Budget, >= 1.
        alpha : ndarray of shape (n_cuts,), optional
            Duals of the last reduced solve; defaults to the recorded ones.
        floor : float, optional
            The run's risk floor ``r0`` (``R(w) >= r0`` for every ``w``); None: no cut is pinned.

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
        if floor is not None and not np.isfinite(float(floor)):
            raise InputError(f"floor must be finite, got {floor!r}", field="floor")
        n_start, n_dropped = n, 0
        pin = self.floor_index(floor)
        zero = np.abs(alpha) <= self.zero_tol * max(float(np.abs(alpha).sum()), np.finfo(float).tiny)
        if pin is not None:
            zero[pin] = False
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
            pin = self.floor_index(floor)
        n_dropped = n_start - n
        if pin is not None and max_cuts >= 2 and pin != n - 1:
            order = np.append(np.delete(np.arange(n), pin), pin)  # the floor cut to the newest end
            self._select(order)
            alpha = alpha[order]
        k = n - max_cuts + 1  # the oldest k cuts become one (never the pinned floor when max_cuts >= 2)
        w_old = np.clip(alpha[:k], 0.0, None)
        total = w_old.sum()
        beta = w_old / total if total > 0 else np.full(k, 1.0 / k)
        scale, shift = 1.0, 0.0
        if floor is not None and max_cuts == 1:  # no room for the floor cut: mix it into the merge
            r0 = float(floor) if pin is None else max(float(floor), float(self._b[pin]))
            scale, shift = 1.0 - FLOOR_SHARE, FLOOR_SHARE * r0
        # slope and offset of the merged cut
        if self.sparse:
            merged = (sp.csr_matrix(scale * beta[None, :]) @ self.matrix()[:k]).tocsr()
            merged.sum_duplicates()
            merged.eliminate_zeros()
            merged_row = (merged.indices.astype(self._index_dtype), merged.data.astype(np.float64))
        else:
            # the merged slope is not a float32 vector: the block goes back to float64 (no loss)
            self._to_double()
            merged_vec = (scale * beta) @ self._dense[:k]
        b_new = scale * float(beta @ self._b[:k]) + shift
        # the exact cuts merge alike; their residuals' norms add up (triangle inequality)
        b_exact_new = scale * float(beta @ self._b_exact[:k]) + shift
        e_new = scale * float(beta @ self._e[:k])
        G = self._G[:, :n, :n]
        cross = scale * np.einsum("i,gij->gj", beta, G[:, :k, k:])  # (n_groups, n - k)
        self_g = scale**2 * np.einsum("i,gij,j->g", beta, G[:, :k, :k], beta)
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
        for name, first in (
            ("_b", b_new),
            ("_b_exact", b_exact_new),
            ("_e", e_new),
            ("_duals", dual_new),
            ("_idle", 0),
            ("_ids", self._new_id()),
        ):
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


def compact_rows(block, sel) -> None:
    """``block[:len(sel)] = block[sel]`` without a temporary copy of the kept rows.

    ``sel`` is a subset in increasing order (pruning) or any permutation (aggregation's
    reordering). For an increasing subset, ``sel[i] >= i``, so copying the rows forwards,
    one at a time and only those that move, never reads a row already overwritten: the
    rows before the first dropped one stay where they are, and no (n_cuts, dim) array is
    allocated (a fancy-indexed copy would allocate and zero-fill one at every pruning).
    """
    sel = np.asarray(sel, dtype=np.intp)
    if sel.size > 1 and not np.all(sel[1:] > sel[:-1]):  # not increasing: general permutation
        block[: sel.size] = block[sel]
        return
    for i in np.flatnonzero(sel != np.arange(sel.size)):
        block[i] = block[sel[i]]
