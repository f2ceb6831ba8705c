"""A native active-set solver for the dense QP over the probability simplex.

The reduced problem of BMRM with ``Omega = 1/2 ||w||^2`` (Franc et al. 2012, eq. 14) is, in minimisation
form with ``H = G / lam`` (``G = A A^T``, the cuts' Gram matrix) and ``c = b`` (the offsets)::

    min_{alpha >= 0, sum alpha = 1}  f(alpha) = 1/2 alpha^T H alpha - c^T alpha.

It is small (one variable per cut) and dense, so a primal active-set method solves it exactly
in a few steps from the previous duals: keep the support ``S = {r : alpha_r > 0}``; solve the
equality-constrained problem on the affine hull of ``S`` (the KKT system
``[[H_SS, 1], [1^T, 0]] [x; nu] = [c_S; 1]``); step towards ``x`` until a coordinate hits zero
(it leaves ``S``); at the minimiser of the face, add the coordinate whose gradient is most below
the common value on ``S`` (the most violated multiplier), or stop. ``H`` is only positive
semi-definite (affinely dependent cuts, more cuts than dimensions): a singular KKT matrix gives a
direction ``p`` with ``H_SS p = 0``, ``sum p = 0`` along which ``f`` is linear; moving downhill
along it until a coordinate vanishes removes the dependence.

The loop runs compiled, in one call (:mod:`cutplane.reduced._simplex_qp_kernel`, numba, cached
on disk: the first call in a fresh environment compiles it, a few seconds); ``H`` is read as
``(H + H^T) / 2``, row by row, only the rows of the coordinates that enter the support.

Up to :data:`FACE_ENUMERATION_MAX` coordinates the solver enumerates the faces instead, in numpy
(:func:`_solve_by_faces`): a fit whose reduced problems all stay that small (a linear SVM at a
small C converges in a few cuts) then never loads a compiled kernel, whose first call in a
process costs most of a second even from numba's disk cache.

The answer carries its own certificate, the Frank-Wolfe gap
``<g, alpha> - min_r g_r >= f(alpha) - min f`` with ``g = H alpha - c``, so a caller can
accept it or fall back to a cvxpy backend. (The engine recomputes its lower bound from the
returned ``alpha`` anyway: an inaccurate answer can only weaken the bound.)
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["FaceFactor", "SimplexQPResult", "solve_simplex_qp", "FACE_ENUMERATION_MAX"]

#: Largest problem solved by enumerating the faces of the simplex (``2^n - 1`` small KKT systems).
FACE_ENUMERATION_MAX = 6


class FaceFactor(NamedTuple):
    """The Cholesky factor of a face's reduced Hessian, kept to warm-start the next solve.

    With ``r0 = members[0]`` and ``Z = [e_r - e_r0 : r in members[1:]]``,
    ``Z^T H Z = L L^T``.

    Attributes
    ----------
    members : ndarray of int64 of shape (m + 1,)
        ``r0``, then the coordinates of the basis in the factor's order (indices into ``H``).
    L : ndarray of shape (m, m)
        Lower triangular.
    """

    members: np.ndarray
    L: np.ndarray


class SimplexQPResult(NamedTuple):
    """The answer of :func:`solve_simplex_qp`.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        A point of the simplex.
    value : float
        ``f(alpha) = 1/2 alpha^T H alpha - c^T alpha``.
    fw_gap : float
        ``<g, alpha> - min_r g_r`` with ``g = H alpha - c``: an upper bound on ``f(alpha) - min f``.
    n_iter : int
        Active-set steps taken.
    converged : bool
        True when the KKT conditions hold within ``tol`` (``fw_gap <= tol``).
    factor : FaceFactor or None
        The factor of the last face, to pass as ``factor=`` to the next solve of a problem that
        shares these coordinates (None when the face was singular or enumerated).
    """

    alpha: np.ndarray
    value: float
    fw_gap: float
    n_iter: int
    converged: bool
    factor: FaceFactor | None = None


_RTOL = 1e-11  # relative pivot floor of the face Cholesky (singular face below it)
_NO_MEMBERS = np.empty(0, dtype=np.int64)  # no factor to start from
_NO_FACTOR = np.empty((0, 0))


def _kernel():
    """The compiled loop, imported on first use (numba loads or compiles it then)."""
    from ._simplex_qp_kernel import active_set_kernel

    return active_set_kernel


def solve_simplex_qp(H, c, alpha0=None, *, tol=None, max_iter=None, factor=None) -> SimplexQPResult:
    """Minimise ``1/2 a^T H a - c^T a`` over the probability simplex by an active-set method.

    Parameters
    ----------
    H : ndarray of shape (n, n)
        Symmetric positive semi-definite (``G / lam``).
    c : ndarray of shape (n,)
        Linear term (the cuts' offsets ``b``).
    alpha0 : ndarray of shape (n,), optional
        Warm start (clipped and renormalised); default: the best vertex.
    tol : float, optional
        KKT tolerance on the gradient, default ``1e-11 * (1 + max|c| + max_r |H_rr|)`` (for a
        positive semi-definite ``H`` its largest entry is on the diagonal).
    max_iter : int, optional
        Active-set steps, default ``20 n + 50``.
    factor : FaceFactor, optional
        The factor of an earlier solve (:attr:`SimplexQPResult.factor`), its members renamed to
        indices of this ``H``: the face of ``alpha0``'s support is then reached by updating it
        (``O(m^2)`` per coordinate that left or entered) instead of factorising it afresh
        (``O(m^3)``). It is checked on its diagonal and refused (factorised afresh) when it does
        not fit this ``H``; an answer that is not certified from it is computed again without it.
        The answer is the same up to rounding.

    Returns
    -------
    SimplexQPResult

    Raises
    ------
    ValueError
        ``H`` not of shape ``(n, n)``, ``n = 0``, or a non-finite entry of ``c``, of the diagonal
        of ``H`` or of a row of ``H`` that the method reads.
    """
    H = np.ascontiguousarray(H, dtype=np.float64)
    c = np.ascontiguousarray(c, dtype=np.float64).ravel()
    n = c.shape[0]
    if H.shape != (n, n):
        raise ValueError(f"H has shape {H.shape}, expected ({n}, {n})")
    if n == 0:
        raise ValueError("the simplex of dimension 0 is empty: c has no entry")
    if max_iter is None:
        max_iter = 20 * n + 50
    if n <= FACE_ENUMERATION_MAX:
        return _solve_by_faces(H, c, tol)
    a0 = np.empty(0) if alpha0 is None else np.ascontiguousarray(alpha0, dtype=np.float64).ravel()
    tol_in = np.nan if tol is None else float(tol)
    if factor is None:
        members, L = _NO_MEMBERS, _NO_FACTOR
    else:
        members = np.ascontiguousarray(factor.members, dtype=np.int64).ravel()
        L = np.ascontiguousarray(factor.L, dtype=np.float64)
    status, alpha, it, value, fw_gap, tol, members, L = _kernel()(H, c, a0, tol_in, int(max_iter), _RTOL, members, L)
    if status != 0:
        raise ValueError("H and c must be finite (found NaN or inf)")
    converged = bool(fw_gap <= max(tol, 1e-14))
    if factor is not None and not converged:  # the updated factor may have drifted: start afresh
        return solve_simplex_qp(H, c, alpha0, tol=None if np.isnan(tol_in) else tol_in, max_iter=max_iter)
    out = FaceFactor(members, L) if members.size else None
    return SimplexQPResult(alpha, float(value), float(fw_gap), int(it), converged, out)


def _solve_by_faces(H, c, tol=None) -> SimplexQPResult:
    """The exact minimiser for a few coordinates: the best KKT point over all faces of the simplex.

    The minimiser lies in the relative interior of some face ``S``, where it solves
    ``[[H_SS, 1], [1^T, 0]] [x; nu] = [c_S; 1]``; with a singular ``H_SS`` the face's solution
    set is affine and also meets a smaller face, which is enumerated too, so the least-squares
    solution of each system suffices. Among the faces whose solution is non-negative, the one of
    least ``f`` is returned, with the same Frank-Wolfe certificate as the active-set kernel.
    """
    n = c.shape[0]
    H = 0.5 * (H + H.T)
    if not (np.isfinite(c).all() and np.isfinite(H).all()):
        raise ValueError("H and c must be finite (found NaN or inf)")
    if tol is None:
        tol = 1e-11 * (1.0 + float(np.max(np.abs(c))) + float(np.max(np.abs(np.diag(H)))))
    best, best_value = np.zeros(n), np.inf  # replaced: every vertex is a face with a feasible solution
    for mask in range(1, 1 << n):
        S = [r for r in range(n) if mask >> r & 1]
        k = len(S)
        K = np.zeros((k + 1, k + 1))
        K[:k, :k] = H[np.ix_(S, S)]
        K[:k, k] = K[k, :k] = 1.0
        rhs = np.append(c[S], 1.0)
        x = np.linalg.lstsq(K, rhs, rcond=None)[0][:k]
        if x.min() < 0.0 or not np.isclose(x.sum(), 1.0, rtol=0.0, atol=1e-9):
            continue
        alpha = np.zeros(n)
        alpha[S] = x / x.sum()
        value = 0.5 * float(alpha @ H @ alpha) - float(c @ alpha)
        if value < best_value:
            best, best_value = alpha, value
    g = H @ best - c
    fw_gap = max(float(best @ g - g.min()), 0.0)
    return SimplexQPResult(best, float(best_value), fw_gap, (1 << n) - 1, bool(fw_gap <= max(tol, 1e-14)))
