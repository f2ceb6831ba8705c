"""The norms ``Omega(w) = 1/2 ||w||_2^2`` (:class:`L2`) and ``||w||_1`` (:class:`L1`).

Value, Fenchel conjugate, its gradient and prox; the reduced solvers use ``conjugate`` /
``grad_conjugate`` for the certified lower bound and the primal point
``w = grad Omega^*(-A alpha / lam)``. The reduced solver of each is found by its ``kind`` in
:mod:`cutplane.reduced.registry` (the QP over the simplex for ``"l2"``, the LP for ``"l1"``).
"""

from __future__ import annotations

import numpy as np

from .base import RegularizerBase
from .base import as_vector as _vec

__all__ = ["L2", "L1"]


class L2(RegularizerBase):
    """``Omega(w) = 1/2 ||w||_2^2``; self-conjugate; reduced problem a QP over the simplex."""

    kind = "l2"
    is_indicator = False
    #: ``Omega^* = Omega`` and ``grad Omega^*(v) = v``: a reduced solver may use its own ``v`` as ``w``
    self_conjugate = True
    #: The engine does not add an oracle's declared floor ``R >= r0`` as a cut for this
    #: regulariser (an explicit ``risk_lower_bound=`` still is): the reduced problem is bounded
    #: without it, and the floor cut, once in the working set, can take much of the dual weight
    #: and pull every query point towards 0. Measurements: ``docs/results/risk_floor_ab.md``.
    risk_floor_cut = False
    #: ``1/2 ||w||^2`` is 1-strongly convex: the engine may round large dense cuts to float32
    #: on a ball around the reduced minimiser (:mod:`cutplane.rounded_cuts`).
    strong_convexity = 1.0

    def __call__(self, w) -> float:
        w = _vec(w)
        return 0.5 * float(np.einsum("i,i->", w, w))  # no BLAS: its threads contend under load

    def conjugate(self, v) -> float:
        v = _vec(v)
        return 0.5 * float(np.einsum("i,i->", v, v))

    def grad_conjugate(self, v) -> np.ndarray:
        return _vec(v).copy()

    def prox(self, v, step) -> np.ndarray:
        """``argmin_x step/2 ||x||^2 + 1/2 ||x - v||^2 = v / (1 + step)``."""
        return _vec(v) / (1.0 + float(step))

    def cvx_term(self, w):
        import cvxpy as cp

        return 0.5 * cp.sum_squares(w)

    def __repr__(self):
        return "L2()"


class L1(RegularizerBase):
    """``Omega(w) = ||w||_1``; conjugate is the indicator of the unit inf-norm ball.

    Parameters
    ----------
    tol : float, default=1e-7
        ``conjugate(v)`` is 0 when ``max |v_i| <= 1 + tol`` (absorbs LP solver round-off in
        the dual point), ``inf`` beyond: the lower bound is then simply not improved.
    """

    kind = "l1"
    is_indicator = False

    def __init__(self, tol=1e-7):
        self.tol = float(tol)

    def __call__(self, w) -> float:
        return float(np.abs(_vec(w)).sum())

    def conjugate(self, v) -> float:
        v = _vec(v)
        return 0.0 if (v.size == 0 or np.max(np.abs(v)) <= 1.0 + self.tol) else np.inf

    def grad_conjugate(self, v) -> np.ndarray:
        """An element of the subdifferential of the conjugate at ``v``: the zero vector.

        The conjugate is an indicator, so its subdifferential (the normal cone) is not a
        single point; the LP reduced solver returns the primal ``w`` directly instead.
        """
        return np.zeros_like(_vec(v))

    def feasible_dual(self, alpha, working_set, lam) -> np.ndarray:
        """Move ``alpha`` (on the simplex) into the conjugate's domain ``||A alpha||_inf <= lam``.

        LP duals violate the constraint by round-off, which would make the bound
        ``b^T alpha`` slightly too high. Mixing in the cut of smallest slope norm, when that
        norm is below ``lam`` (e.g. the zero-slope cut ``R >= risk_lower_bound``), gives an
        exactly feasible point and hence a rigorous lower bound. Without such a cut
        ``alpha`` is returned unchanged and ``conjugate``'s tolerance applies.
        """
        v_norm = float(np.max(np.abs(working_set.combine(alpha)), initial=0.0))
        if v_norm <= lam:
            return alpha
        A = working_set.matrix()
        norms = abs(A).max(axis=1)
        norms = np.asarray(norms.toarray() if hasattr(norms, "toarray") else norms, dtype=np.float64).ravel()
        r = int(np.argmin(norms))
        if norms[r] >= lam:
            return alpha
        t = min(1.0, (v_norm - lam) / (v_norm - norms[r]) * (1.0 + 1e-12))
        out = (1.0 - t) * np.asarray(alpha, dtype=np.float64)
        out[r] += t
        return out

    def prox(self, v, step) -> np.ndarray:
        """Soft thresholding ``sign(v) max(|v| - step, 0)``."""
        v = _vec(v)
        return np.sign(v) * np.maximum(np.abs(v) - float(step), 0.0)

    def cvx_term(self, w):
        import cvxpy as cp

        return cp.norm1(w)

    def __repr__(self):
        return "L1()"
