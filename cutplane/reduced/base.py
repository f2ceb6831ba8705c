"""The reduced solvers' answer and the certified dual value they all share.

The contract itself is :class:`cutplane.protocols.ReducedSolver`.

A reduced solver minimises ``F_t(w) = lam * Omega(w) + max_r <a_r, w> + b_r`` over the cuts
of a :class:`~cutplane.working_set.WorkingSet`, in its dual (Franc et al. 2012, eq. 14)::

    max_{alpha in simplex}  b^T alpha - lam * Omega^*(-A alpha / lam)

Whatever backend produced ``alpha``, the lower bound is recomputed here in numpy from a
feasible ``alpha`` (clipped and renormalised onto the simplex): by weak duality any feasible
``alpha`` gives a valid lower bound, so an inaccurate backend can only make the bound
weaker, never wrong.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["ReducedSolution", "to_simplex", "dual_value", "dual_value_parts", "dual_combination"]


class ReducedSolution(NamedTuple):
    """The answer of a reduced solver.

    Attributes
    ----------
    w : ndarray of shape (dim,)
        Minimiser of the reduced problem (the next query point).
    lower_bound : float
        Certified dual value ``<= min F_t <= min F``; ``-inf`` when the dual point was
        not feasible within tolerance.
    alpha : ndarray of shape (n_cuts,)
        Duals, one per cut, on the simplex.
    mu : ndarray of shape (n_groups,) or None
        Group weights (mixed-norm regularisers), else None.
    status : str
        Solver status of the accepted solve (``"optimal"``, ``"analytic"`` ...).
    backend : str or None
        The backend that gave the accepted solve.
    failures : tuple of (backend, reason)
        Backends tried before and failed or were inaccurate.
    regularizer_value : float or None
        ``Omega(w)`` when the solve computed it on the way (self-conjugate regularisers:
        ``Omega(w) = Omega^*(v)`` at ``w = v``), else None: the engine then evaluates ``Omega``.
    combination : ndarray of shape (n_cuts,) or None
        When not None, ``w`` was computed as ``grad Omega^*(v)`` with
        ``v = working_set.combine(combination)`` (``combination = -alpha / lam``) over the cuts as
        they were at the solve: the recipe an executor's workers follow to rebuild ``w`` from the
        cuts they hold (:mod:`cutplane.executors.mirror`). None when ``w`` came otherwise (an LP's
        primal solution, a QCQP's group weights).
    """

    w: np.ndarray
    lower_bound: float
    alpha: np.ndarray
    mu: np.ndarray | None
    status: str
    backend: str | None
    failures: tuple = ()
    regularizer_value: float | None = None
    combination: np.ndarray | None = None


def to_simplex(alpha, n=None) -> np.ndarray:
    """Clip at zero and renormalise: a point of the probability simplex, shape (n,).

    Falls back to the uniform vector when nothing positive is left (a solver failure).
    """
    a = np.asarray(alpha, dtype=np.float64).ravel()
    if n is not None and a.shape != (n,):
        raise ValueError(f"alpha has shape {a.shape}, expected ({n},)")
    a = np.where(np.isfinite(a), np.clip(a, 0.0, None), 0.0)
    s = a.sum()
    if not s > 0:
        return np.full(a.shape, 1.0 / max(a.size, 1))
    return a / s


def dual_value(regularizer, working_set, alpha, lam) -> tuple[float, np.ndarray]:
    """Dual objective of eq. 14 at ``alpha`` and ``v = -A alpha / lam``.

    Returns
    -------
    value : float
        ``b^T alpha - lam * Omega^*(v)``, a lower bound on the reduced optimum when
        ``alpha`` is on the simplex.
    v : ndarray of shape (dim,)
        The dual point, so that ``w = grad Omega^*(v)``.
    """
    value, v, _ = dual_value_parts(regularizer, working_set, alpha, lam)
    return value, v


def dual_combination(alpha, lam) -> np.ndarray:
    """``-alpha / lam`` as the reduced solvers pass it to ``working_set.combine`` (the same
    floating-point operations wherever it is computed), ndarray of shape (n_cuts,)."""
    return np.asarray(alpha, dtype=np.float64) * (-1.0 / lam)


def dual_value_parts(regularizer, working_set, alpha, lam) -> tuple[float, np.ndarray, float]:
    """:func:`dual_value` and the conjugate's value: ``(value, v, Omega^*(v))``."""
    v = working_set.combine(dual_combination(alpha, lam))  # one pass over the slopes
    conjugate = float(regularizer.conjugate(v))
    return float(working_set.offsets @ alpha) - lam * conjugate, v, conjugate
