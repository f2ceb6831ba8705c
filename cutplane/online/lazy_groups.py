r"""A group-structured weight vector stored lazily as per-group scale times unnormalised vector.

SPOM (Martins et al. 2011, Alg. 3 and the last paragraph of sec. 3.4) touches ``w`` in two ways per round:

- a sparse gradient step ``w <- w - eta g`` with ``g`` supported on a few coordinates;
- a proximal step and a projection that, by Prop. 1, only *rescale whole groups*:
  ``w_j <- c_j w_j``.

Storing ``w_j = s_j v_j`` (scalar ``s_j``, vector ``v_j``) makes the first O(nnz(g)) and the
second O(m) (m groups), instead of O(dim). The squared norms ``||v_j||^2`` are updated
incrementally so the group norms ``||w_j|| = |s_j| ||v_j||`` cost O(m).

Zeroed groups. When the prox sets a group to zero, ``s_j = 0``; the next write into that group
starts a new *generation* of it (``s_j = 1``, ``v_j = 0``) in O(1): each coordinate remembers
the generation it was last written in (a global id; ``_gen_group`` maps it to its group, so a
read touches two per-coordinate arrays, ``v`` and the generation), and a coordinate of an
older generation reads as 0.

Averaged model. With ``track_average=True`` the sum of the iterates ``sum_r w(r)`` is kept
lazily too (the rounds are counted by :meth:`accumulate`). Per group, ``S_j`` is the sum of
the scales ``s_j(r)`` over the rounds accumulated so far, and per coordinate a correction
``acc_i`` collects ``-delta * S_j`` for every write ``v_i += delta``; then

    sum_r w_i(r) = frozen_i + S_j v_i + acc_i,

where ``frozen_i`` holds the totals of earlier generations (``S_j`` at the end of a generation
is kept in ``_gen_S``, looked up when a stale coordinate is next touched).

Numerics. ``S_j v_i + acc_i`` cancels when the scale has shrunk a lot since the sums started
(``v_i ~ w_i / s_j`` while ``S_j`` holds the older, larger scales): relative to the sum, the
rounding error is at most about ``eps * s_max / s_j``. So a group whose scale leaves ``[1e-6, 1e6]``
(relative error below ~1e-10) is renormalised
(O(d_j): its sums are folded into ``frozen``, ``v_j <- s_j v_j``, ``s_j = 1``, ``S_j = 0``),
and :meth:`compact` folds everything in O(dim) (SPOM calls it once per epoch, when it
evaluates the objective anyway). Between renormalisations ``S_j / s_j`` stays below
``1e6 * (rounds since)``.
"""

from __future__ import annotations

import numpy as np

from cutplane.exceptions import InputError
from cutplane.groups import as_group_ids

from ._lazy_kernels import (
    add_kernel,
    dead_groups_kernel,
    dense_kernel,
    dense_range_kernel,
    gather_kernel,
    renormalise_kernel,
)

__all__ = ["LazyGroupVector"]

_SCALE_LO, _SCALE_HI = 1e-6, 1e6
_SLICE_MIN = 1024  # coordinates per group (on average) above which to_dense multiplies slices


class LazyGroupVector:
    """``w = concat_j s_j v_j`` over a partition of the coordinates into groups.

    Parameters
    ----------
    groups : array-like of int of shape (dim,), or list of index arrays
        The group of every coordinate (:func:`cutplane.groups.as_group_ids`).
    n_groups : int, optional
        Number of groups ``m`` (default ``max(groups) + 1``).
    track_average : bool, default=False
        Also keep the running sum of the iterates (see the module docstring).
    dim : int, optional
        Required when ``groups`` is a list of index arrays.

    Attributes
    ----------
    dim : int
    n_groups : int
    n_rounds : int
        Rounds counted by :meth:`accumulate`.
    """

    def __init__(self, groups, n_groups=None, *, track_average=False, dim=None):
        if dim is None:
            if isinstance(groups, (list, tuple)) and len(groups) and np.ndim(groups[0]) > 0:
                raise InputError("dim is required when groups is a list of index arrays", field="dim")
            dim = int(np.size(groups))
        self.groups = as_group_ids(groups, int(dim), n_groups)
        self.dim = int(dim)
        self.n_groups = int(n_groups) if n_groups is not None else (int(self.groups.max()) + 1 if self.dim else 0)
        self.track_average = bool(track_average)
        m, d = self.n_groups, self.dim
        self._v = np.zeros(d)
        self._s = np.ones(m)
        self._sq: np.ndarray = np.zeros(m)  # ||v_j||^2 of the current generation
        self._gen = np.arange(m, dtype=np.int32)  # current generation id of each group
        self._cgen = self.groups.astype(np.int32)  # generation id each coordinate was written in
        self._gen_group = np.arange(m, dtype=np.intp)  # group of each generation id
        self._n_gen = m
        self._sorted = bool(np.all(self.groups[1:] >= self.groups[:-1])) if d > 1 else True
        self._members = None  # coordinates of each group, sorted by group (built on first renormalisation)
        self.n_rounds = 0
        if self.track_average:
            self._S = np.zeros(m)
            self._acc = np.zeros(d)
            self._frozen = np.zeros(d)
            self._gen_S = np.zeros(max(2 * m, 16))  # S_j at the end of each finished generation
        else:  # placeholders for the compiled kernels
            self._S, self._acc, self._frozen, self._gen_S = (np.zeros(0) for _ in range(4))
        self._dead = np.zeros(m, dtype=np.bool_)
        self._restarted = np.zeros(m, dtype=np.bool_)  # a new generation since the last compact
        self._ptr = None

    # ---------------------------------------------------------------- reading
    def norms(self) -> np.ndarray:
        """``||w_j||_2`` for every group, ndarray of shape (n_groups,); O(m)."""
        return np.abs(self._s) * np.sqrt(np.maximum(self._sq, 0.0))

    def norm(self) -> float:
        """``||w||_2``; O(m)."""
        return float(np.sqrt(np.sum(self.norms() ** 2)))

    def gather(self, idx) -> np.ndarray:
        """``w[idx]``, ndarray of shape (len(idx),); O(len(idx))."""
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        out = np.empty(idx.size)
        gather_kernel(self._v, self._cgen, self._gen_group, self._gen, self._s, idx, out)
        return out

    def to_dense(self, out=None) -> np.ndarray:
        """``w`` as a dense ndarray of shape (dim,); O(dim), one compiled pass.

        Parameters
        ----------
        out : ndarray of float64 of shape (dim,), optional
            Written in place and returned (a caller that reads ``w`` every round reuses one
            buffer instead of allocating ``dim`` floats per round).
        """
        if out is None:
            out = np.empty(self.dim)
        elif out.shape != (self.dim,) or out.dtype != np.float64 or not out.flags.c_contiguous:
            raise InputError(f"out must be a C-contiguous float64 array of shape ({self.dim},)", field="out")
        if self._sorted and self.dim >= _SLICE_MIN * max(self.n_groups, 1):
            # contiguous groups, large on average: one vectorised multiply per group, unless the group
            # restarted since the last compact (then some coordinates are stale: the compiled range loop)
            ptr = self._group_ptr()
            for j in range(self.n_groups):
                lo, hi = int(ptr[j]), int(ptr[j + 1])
                if self._restarted[j]:
                    dense_range_kernel(self._v, self._cgen, lo, hi, int(self._gen[j]), float(self._s[j]), out)
                else:
                    np.multiply(self._v[lo:hi], self._s[j], out=out[lo:hi])
        else:
            dense_kernel(self._v, self._cgen, self._gen_group, self._gen, self._s, out)
        return out

    def _group_ptr(self) -> np.ndarray:
        """Start of every group's coordinates and the end, ndarray of shape (n_groups + 1,)."""
        if self._ptr is None:
            self._ptr = np.concatenate(([0], np.cumsum(np.bincount(self.groups, minlength=self.n_groups))))
        return self._ptr

    def average(self) -> np.ndarray:
        """``(1 / n_rounds) sum_r w(r)``, ndarray of shape (dim,); O(dim). Zeros before any round."""
        if not self.track_average:
            raise InputError("this vector does not track the average (track_average=False)")
        if self.n_rounds == 0:
            return np.zeros(self.dim)
        return self._totals() / self.n_rounds

    def _totals(self) -> np.ndarray:
        g = self.groups
        stale = self._cgen != self._gen[g]
        S = self._S[g]
        S[stale] = self._gen_S[self._cgen[stale]]
        return self._frozen + S * self._v + self._acc

    # ---------------------------------------------------------------- writing
    def accumulate(self) -> None:
        """Count the current ``w`` as one more round of the average (``S_j += s_j``); O(m)."""
        self.n_rounds += 1
        if self.track_average:
            self._S += self._s

    def add(self, idx, vals) -> None:
        """``w[idx] += vals``; ``idx`` must not repeat. O(len(idx)) plus O(1) per restarted group."""
        idx = np.ascontiguousarray(idx, dtype=np.int64)
        if idx.size == 0:
            return
        vals = np.ascontiguousarray(vals, dtype=np.float64)
        if dead_groups_kernel(self._cgen, self._gen_group, self._s, idx, self._dead):
            self._restart(np.flatnonzero(self._dead))
            self._dead[:] = False
        add_kernel(
            self._v,
            self._cgen,
            self._gen_group,
            self._gen,
            self._s,
            self._sq,
            idx,
            vals,
            self.track_average,
            self._S,
            self._acc,
            self._frozen,
            self._gen_S,
        )

    def scale_groups(self, factors) -> None:
        """``w_j <- factors_j w_j`` (``factors`` of shape (n_groups,), >= 0); O(m)."""
        self._s *= np.asarray(factors, dtype=np.float64)
        self._check_scales()

    def scale(self, factor: float) -> None:
        """``w <- factor w``; O(m)."""
        self._s *= float(factor)
        self._check_scales()

    def set_group_norms(self, new_norms, old_norms=None) -> None:
        """Rescale every group to the given norms (Prop. 1 of Martins et al. 2011); groups of norm 0 stay 0.
        ``old_norms``: the current :meth:`norms`, when the caller has them."""
        old = self.norms() if old_norms is None else old_norms
        new = np.asarray(new_norms, dtype=np.float64)
        f = np.zeros_like(old)
        pos = old > 0
        f[pos] = new[pos] / old[pos]
        self.scale_groups(f)

    # ---------------------------------------------------------------- housekeeping
    def _check_scales(self) -> None:
        a = np.abs(self._s)
        out = ((a < _SCALE_LO) & (a > 0)) | (a > _SCALE_HI)
        if out.any():
            self._renormalise(np.flatnonzero(out))

    def _renormalise(self, groups_) -> None:
        """Fold the scale of the given groups into ``v`` (and their sums into ``frozen``); O(sum d_j)."""
        if self._members is None:
            ptr = np.concatenate(([0], np.cumsum(np.bincount(self.groups, minlength=self.n_groups))))
            order = np.zeros(0, np.int64) if self._sorted else np.argsort(self.groups, kind="stable")
            self._members = (order, ptr)
        order, ptr = self._members
        for j in groups_:  # ranges of coordinates when the groups are contiguous, else member lists
            S_j = float(self._S[j]) if self.track_average else 0.0
            self._sq[j] = renormalise_kernel(
                self._v,
                self._cgen,
                order,
                int(ptr[j]),
                int(ptr[j + 1]),
                int(self._gen[j]),
                float(self._s[j]),
                self.track_average,
                S_j,
                self._acc,
                self._frozen,
                self._gen_S,
            )
            if self.track_average:
                self._S[j] = 0.0
            self._s[j] = 1.0

    def _restart(self, groups_) -> None:
        """New generation for the given (zero-scale) groups: ``s = 1``, ``v = 0`` lazily."""
        k = groups_.size
        if self._n_gen + k >= np.iinfo(np.int32).max:  # ids are int32: start afresh
            self.compact()
        new_ids = np.arange(self._n_gen, self._n_gen + k, dtype=np.int32)
        if self._n_gen + k > self._gen_group.size:
            grown = np.empty(max(self._n_gen + k, 2 * self._gen_group.size), dtype=np.intp)
            grown[: self._gen_group.size] = self._gen_group
            self._gen_group = grown
        self._gen_group[new_ids] = groups_
        if self.track_average:
            old = self._gen[groups_]
            self._ensure_gen_capacity(self._n_gen + k)
            self._gen_S[old] = self._S[groups_]
            self._S[groups_] = 0.0
        self._n_gen += k
        self._gen[groups_] = new_ids
        self._restarted[groups_] = True
        self._s[groups_] = 1.0
        self._sq[groups_] = 0.0

    def _ensure_gen_capacity(self, n) -> None:
        if n > self._gen_S.size:
            grown = np.zeros(max(n, 2 * self._gen_S.size))
            grown[: self._gen_S.size] = self._gen_S
            self._gen_S = grown

    def compact(self) -> None:
        """Fold scales, generations and average bookkeeping into plain arrays; O(dim).

        Afterwards ``s_j = 1``, ``v = w``, every coordinate is of its group's current
        generation, ``S = 0``, ``acc = 0`` and ``frozen`` holds the totals; ``||v_j||^2`` is
        recomputed exactly.
        """
        if self.track_average:
            self._frozen = self._totals()
            self._acc[:] = 0.0
            self._S[:] = 0.0
        w = self.to_dense()
        self._v = w
        self._s[:] = 1.0
        self._gen = np.arange(self.n_groups, dtype=np.int32)
        self._cgen = self.groups.astype(np.int32)
        self._gen_group = np.arange(self.n_groups, dtype=np.intp)
        self._n_gen = self.n_groups
        self._restarted[:] = False
        self._sq = np.bincount(self.groups, weights=w * w, minlength=self.n_groups)

    def __repr__(self):
        return f"LazyGroupVector(dim={self.dim}, n_groups={self.n_groups}, rounds={self.n_rounds})"
