"""Indicator sets ``Simplex`` and ``Box``: ``Omega`` is 0 inside the set, ``inf`` outside.

They turn the engine into Kelley's cutting-plane method (Franc et al. 2012, Alg. 1.2):
``lam * Omega = Omega`` so ``lam`` plays no role. Their ``kind`` is ``"indicator"``: the
registry (:mod:`cutplane.reduced.registry`) gives them the LP reduced solver.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError
from ..prox import project_simplex
from .base import RegularizerBase
from .base import as_vector as _vec

__all__ = ["IndicatorSet", "Simplex", "Box"]


class IndicatorSet(RegularizerBase):
    """Common part of indicator sets: value 0 inside (within ``tol``), ``inf`` outside."""

    kind = "indicator"
    is_indicator = True
    risk_floor_cut = True
    tol = 1e-7
    dim: int

    def __call__(self, w) -> float:
        return 0.0 if self.contains(w) else np.inf

    def contains(self, w) -> bool:  # pragma: no cover - every set overrides it
        raise NotImplementedError

    def cvx_term(self, w):
        return None

    def _check(self, w):
        w = _vec(w)
        if w.shape != (self.dim,):
            raise InputError(f"point has shape {w.shape}, expected ({self.dim},)", field="w")
        return w


class Simplex(IndicatorSet):
    """Indicator of the probability simplex ``{x >= 0, sum x = 1}`` in R^dim.

    Parameters
    ----------
    dim : int
        Dimension, >= 1.
    """

    def __init__(self, dim):
        if int(dim) != dim or int(dim) < 1:
            raise InputError(f"dim must be a positive integer, got {dim!r}", field="dim")
        self.dim = int(dim)

    def contains(self, w) -> bool:
        w = self._check(w)
        return bool(np.all(w >= -self.tol) and abs(w.sum() - 1.0) <= self.tol * self.dim)

    def conjugate(self, v) -> float:
        """``sup_{x in simplex} <x, v> = max_i v_i``."""
        return float(np.max(_vec(v)))

    def grad_conjugate(self, v) -> np.ndarray:
        """The vertex ``e_i`` at the largest ``v_i``."""
        v = _vec(v)
        out = np.zeros_like(v)
        out[int(np.argmax(v))] = 1.0
        return out

    def prox(self, v, step=None) -> np.ndarray:
        """Euclidean projection onto the simplex (``step`` plays no role for an indicator)."""
        return project_simplex(_vec(v))

    def repair(self, w) -> np.ndarray:
        """Snap a solver point with round-off violations into the simplex (clip, renormalise)."""
        w = np.clip(_vec(w), 0.0, None)
        s = w.sum()
        return w / s if s > 0 else np.full(self.dim, 1.0 / self.dim)

    def initial_point(self, dim=None) -> np.ndarray:
        return np.full(self.dim, 1.0 / self.dim)

    def cvx_constraints(self, w):
        import cvxpy as cp

        return [w >= 0, cp.sum(w) == 1]

    def __repr__(self):
        return f"Simplex({self.dim})"


class Box(IndicatorSet):
    """Indicator of the box ``{lower <= x <= upper}``.

    Parameters
    ----------
    lower, upper : float or array-like of shape (dim,)
        Finite bounds with ``lower <= upper``.
    dim : int, optional
        Needed only when both bounds are scalars.
    """

    def __init__(self, lower, upper, *, dim=None):
        lo, up = np.asarray(lower, dtype=np.float64), np.asarray(upper, dtype=np.float64)
        if dim is None:
            shapes = [a.shape for a in (lo, up) if a.ndim > 0]
            if not shapes:
                raise InputError("give dim= when both bounds are scalars", field="dim")
            dim = shapes[0][0]
        try:
            lo, up = np.broadcast_to(lo, (int(dim),)).copy(), np.broadcast_to(up, (int(dim),)).copy()
        except ValueError:
            raise InputError(
                f"bounds of shapes {np.shape(lower)}, {np.shape(upper)} do not fit dim {dim}", field="lower/upper"
            ) from None
        if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(up))):
            raise InputError("box bounds must be finite", field="lower/upper")
        if np.any(lo > up):
            raise InputError(f"lower > upper at {int(np.argmax(lo > up))}", field="lower/upper")
        self.lower, self.upper, self.dim = lo, up, int(dim)

    def contains(self, w) -> bool:
        w = self._check(w)
        return bool(np.all(w >= self.lower - self.tol) and np.all(w <= self.upper + self.tol))

    def conjugate(self, v) -> float:
        """``sup_{l <= x <= u} <x, v> = sum_i max(l_i v_i, u_i v_i)``."""
        v = _vec(v)
        return float(np.maximum(self.lower * v, self.upper * v).sum())

    def grad_conjugate(self, v) -> np.ndarray:
        """The maximising corner: ``u_i`` where ``v_i > 0``, else ``l_i``."""
        return np.where(_vec(v) > 0, self.upper, self.lower)

    def prox(self, v, step=None) -> np.ndarray:
        """Euclidean projection onto the box (clipping)."""
        return np.clip(_vec(v), self.lower, self.upper)

    def repair(self, w) -> np.ndarray:
        """Snap a solver point into the box: the projection (clipping)."""
        return self.prox(w)

    def initial_point(self, dim=None) -> np.ndarray:
        return np.clip(np.zeros(self.dim), self.lower, self.upper)

    def cvx_constraints(self, w):
        return [w >= self.lower, w <= self.upper]

    def __repr__(self):
        return f"Box(dim={self.dim})"
