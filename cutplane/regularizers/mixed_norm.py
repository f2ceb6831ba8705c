"""The squared p-block mixed norm of multiple template learning (MTL^struct).

For a partition of ``w`` into groups ``j = 1..m`` (templates, kernels)::

    Omega(w) = 1/2 (sum_j ||w_j||_2^p)^(2/p)            p >= 1

- ``p = 1``: ``1/2 (sum_j ||w_j||)^2``, MTL's showcase and sparse MKL (Mao and Tsang 2013,
  sec. 1.3); group-sparse solutions; the reduced problem is the QCQP (6).
- ``1 < p``: the p-block norms of Mao and Tsang 2013, sec. 2; the reduced dual (11) is smooth and is
  solved by projected gradient; ``p = 2`` is ``1/2 ||w||^2``, the plain structural SVM;
  large ``p`` (the paper uses 100) approximates ``p -> inf``.

Conjugate (the dual norm of ``||.||_{2,p}`` is ``||.||_{2,q}`` with ``1/p + 1/q = 1``)::

    Omega^*(v) = 1/2 ||v||_{2,q}^2 = 1/2 (sum_j ||v_j||^q)^(2/q)     (q = inf for p = 1)

and its gradient ``w_j = mu_j v_j`` with the group weights
``mu_j = (||v_j|| / ||v||_{2,q})^(q-2)`` (Mao and Tsang 2013, eq. 12-13 up to the scale ``lam``);
for ``p = 1`` any ``mu`` on the simplex supported on the groups of largest norm is a
subgradient, and the QCQP gives the right one through its constraint duals (eq. 7).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError
from ..groups import as_group_ids, group_norms, group_runs, group_weights_from_norms, half_sq_norm
from .base import RegularizerBase

__all__ = ["MixedNorm", "group_weights_from_norms", "half_sq_norm"]  # the last two from cutplane.groups


class MixedNorm(RegularizerBase):
    """``Omega(w) = 1/2 (sum_j ||w_j||_2^p)^(2/p)`` over a partition of the coordinates.

    Parameters
    ----------
    groups : array-like of int of shape (dim,), or list of index arrays
        The group of every coordinate (ids ``0..m-1``), or ``m`` index arrays partitioning
        ``range(dim)`` (converted by :func:`cutplane.groups.as_group_ids`).
    p : float, default=1.0
        ``p >= 1``. ``p = 1`` uses the QCQP reduced solver, ``p > 1`` projected gradient
        on the smooth dual (``p = 2`` the plain QP of ``L2``).
    dim : int, optional
        Length of ``w``; required when ``groups`` is a list of index arrays.
    n_groups : int, optional
        Number of groups ``m`` (default: ``max(groups) + 1``), so that templates with no
        feature keep their id.
    tie_rtol : float, default=1e-9
        For ``p = 1``, groups within this relative tolerance of the largest norm share
        the subgradient weight in :meth:`grad_conjugate`.

    Attributes
    ----------
    groups : ndarray of int32 of shape (dim,)
        Group id of each coordinate, read-only (int64 for ids of ``2**31`` or more; the
        engine's working set keeps per-group Gram blocks when its regulariser has this
        attribute, and shares this array).
    n_groups : int
        ``m``.
    q : float
        The dual exponent ``p / (p - 1)`` (``inf`` for ``p = 1``).
    kind : str
        ``"mixed-norm-1"`` (``p = 1``: the QCQP reduced solver), ``"mixed-norm-2"`` (``p = 2``:
        ``1/2 ||w||^2``, the QP of ``L2``) or ``"mixed-norm-p"`` (projected gradient on the
        smooth dual), the key of :mod:`cutplane.reduced.registry`.
    risk_floor_cut : bool
        Whether the engine adds an oracle's declared floor ``R >= r0`` as a cut: not for
        ``p = 2`` (``1/2 ||w||^2``, as for :attr:`cutplane.regularizers.L2.risk_floor_cut`),
        for every other ``p`` yes. Measurements: ``docs/results/risk_floor_ab.md``.
    """

    is_indicator = False
    self_conjugate = False
    dim: int
    groups: np.ndarray
    n_groups: int

    def __init__(self, groups, p=1.0, *, dim=None, n_groups=None, tie_rtol=1e-9):
        p = float(p)
        if not np.isfinite(p) or p < 1.0:
            raise InputError(f"p must be a finite number >= 1, got {p!r}", field="p")
        if dim is None:
            if isinstance(groups, (list, tuple)) and len(groups) and np.ndim(groups[0]) > 0:
                raise InputError("dim is required when groups is a list of index arrays", field="dim")
            dim = int(np.size(groups))
        self.groups = as_group_ids(groups, int(dim), n_groups, compact=True)  # shared with the working set
        self.dim = int(dim)
        self.n_groups = (
            int(n_groups) if n_groups is not None else (int(self.groups.max()) + 1 if self.groups.size else 0)
        )
        self.p = p
        self.q = np.inf if p == 1.0 else p / (p - 1.0)
        self.tie_rtol = float(tie_rtol)
        self.kind = "mixed-norm-1" if p == 1.0 else ("mixed-norm-2" if p == 2.0 else "mixed-norm-p")
        self.risk_floor_cut = p != 2.0

    # ------------------------------------------------------------------ values
    def _vec(self, w, field="w"):
        w = np.asarray(w, dtype=np.float64)
        if w.ndim != 1:
            w = w.ravel()  # 1-D input stays the caller's array (a ravel view would be copied downstream)
        if w.shape != (self.dim,):
            raise InputError(f"vector has shape {w.shape}, expected ({self.dim},)", field=field)
        return w

    def group_norms(self, w) -> np.ndarray:
        """``||w_j||_2`` for every group, ndarray of shape (n_groups,)."""
        return group_norms(self._vec(w), self._kernel_groups, self.n_groups, runs=self._runs)

    def __call__(self, w) -> float:
        return half_sq_norm(self.group_norms(w), self.p)

    def conjugate(self, v) -> float:
        """``1/2 ||v||_{2,q}^2``."""
        return half_sq_norm(self.group_norms(v), self.q)

    def weights(self, v) -> np.ndarray:
        """Group weights ``mu`` of ``grad Omega^*(v)``, ndarray of shape (n_groups,), on the simplex for p = 1."""
        n = self.group_norms(v)
        if np.isinf(self.q):
            top = float(n.max()) if n.size else 0.0
            mu = np.zeros_like(n)
            if top == 0.0:
                return mu
            ties = n >= top * (1.0 - self.tie_rtol)
            mu[ties] = 1.0 / ties.sum()
            return mu
        return group_weights_from_norms(n, self.q)

    def grad_conjugate(self, v) -> np.ndarray:
        """``w_j = mu_j v_j`` (a subgradient for p = 1: weight shared by the largest groups)."""
        return self.from_group_weights(v, self.weights(v))

    @property
    def _kernel_groups(self) -> np.ndarray:
        """The group ids as a contiguous int32 array (half the memory traffic of int64)."""
        g = self.__dict__.get("_kgroups")
        if g is None:
            dt = np.int32 if self.n_groups < 2**31 else np.int64
            g = self.__dict__["_kgroups"] = np.ascontiguousarray(self.groups, dtype=dt)  # no copy when int32
        return g

    @property
    def _runs(self):
        """:func:`~cutplane.groups.group_runs` of the groups (cached), or None when scattered."""
        if "_runs_cache" not in self.__dict__:
            self.__dict__["_runs_cache"] = group_runs(self.groups, self.n_groups) if self.dim else None
        return self.__dict__["_runs_cache"]

    def from_group_weights(self, v, mu, *, overwrite_v=False) -> np.ndarray:
        """``w_j = mu_j v_j`` for given group weights (Mao and Tsang 2013, eq. 7 with ``v = -A alpha / lam``).

        With ``overwrite_v=True`` and a contiguous float64 ``v``, ``v`` itself is scaled and
        returned (no new vector of size dim: for the reduced solvers' own dual points).
        """
        from ..working_set._ws_kernels import scale_by_group, scale_by_group_runs, scaled_by_group

        v = np.ascontiguousarray(self._vec(v, "v"))
        mu = np.ascontiguousarray(mu, dtype=np.float64)
        if mu.shape != (self.n_groups,):
            raise InputError(f"mu has shape {mu.shape}, expected ({self.n_groups},)", field="mu")
        if not (overwrite_v and v.flags.writeable):
            if self._runs is None:
                return scaled_by_group(v, mu, self._kernel_groups)
            v = v.copy()
        if self._runs is not None:
            scale_by_group_runs(v, mu, self._runs[0], self._runs[1])
        else:
            scale_by_group(v, mu, self._kernel_groups)
        return v

    def prox(self, v, step) -> np.ndarray:
        """``argmin_x step * Omega(x) + 1/2 ||x - v||^2`` (Martins et al. 2011, Prop. 1 on the group norms)."""
        from ..prox import prox_squared_group_l1, prox_squared_group_lp

        v = self._vec(v, "v")
        if self.p == 1.0:
            return prox_squared_group_l1(v, float(step), self.groups)
        return prox_squared_group_lp(v, float(step), self.groups, self.p)

    def initial_point(self, dim=None) -> np.ndarray:
        return np.zeros(self.dim)

    def cvx_term(self, w):
        """The value as a cvxpy expression (for direct reference solves in tests)."""
        import cvxpy as cp

        norms = cp.hstack(
            [cp.norm(w[np.flatnonzero(self.groups == j)], 2) for j in range(self.n_groups) if np.any(self.groups == j)]
        )
        return 0.5 * cp.square(cp.norm(norms, self.p))

    def __repr__(self):
        return f"MixedNorm(n_groups={self.n_groups}, p={self.p:g}, dim={self.dim})"
