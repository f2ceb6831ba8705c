"""A native active-set solver for the dense QP over the probability simplex.

The reduced problem of BMRM with ``Omega = 1/2 ||w||^2`` (chapter eq. 14) is, in minimisation
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

The answer carries its own certificate, the Frank-Wolfe gap
``<g, alpha> - min_r g_r >= f(alpha) - min f`` with ``g = H alpha - c``, so a caller can
accept it or fall back to a cvxpy backend. (The engine recomputes its lower bound from the
returned ``alpha`` anyway: an inaccurate answer can only weaken the bound.)
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

__all__ = ["SimplexQPResult", "solve_simplex_qp"]


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
    """

    alpha: np.ndarray
    value: float
    fw_gap: float
    n_iter: int
    converged: bool


def _face_step(H_SS, g_S, rtol=1e-11):
    """Newton step on the face of ``S``: ``p`` with ``sum p = 0`` minimising ``g_S^T p + 1/2 p^T H_SS p``.

    In the null-space basis ``Z = [e_i - e_0]`` of ``sum p = 0`` the reduced Hessian
    ``M = Z^T H_SS Z`` is factorised by Cholesky. Returns ``(p, True)``; when ``M`` is
    (numerically) singular, ``(p, False)`` with ``p`` a direction of ``H_SS p ~ 0`` instead.
    """
    s = g_S.shape[0]
    if s == 1:
        return np.zeros(1), True
    h0 = H_SS[0]
    M = H_SS[1:, 1:] - h0[1:][:, None] - h0[1:][None, :] + h0[0]
    r = g_S[1:] - g_S[0]
    diag_max = float(np.max(np.abs(np.diag(M)))) if s > 1 else 0.0
    ok = diag_max > 0.0
    if ok:
        try:
            L = np.linalg.cholesky(M)
            d = np.diag(L)
            ok = bool(np.all(np.isfinite(L))) and float(d.min()) ** 2 > rtol * diag_max
        except np.linalg.LinAlgError:
            ok = False
    if ok:
        y = _tri_solve(L, -r, lower=True)
        q = _tri_solve(L.T, y, lower=False)
        return np.concatenate(([-q.sum()], q)), True
    evals, evecs = np.linalg.eigh(M if diag_max > 0.0 else np.zeros_like(M))
    q = evecs[:, 0]
    p = np.concatenate(([-q.sum()], q))
    return p, False


def _tri_solve(L, rhs, lower):
    from scipy.linalg import solve_triangular

    return solve_triangular(L, rhs, lower=lower, check_finite=False)


def solve_simplex_qp(H, c, alpha0=None, *, tol=None, max_iter=None) -> SimplexQPResult:
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
        KKT tolerance on the gradient, default ``1e-11 * (1 + max|c| + max|H|)``.
    max_iter : int, optional
        Active-set steps, default ``20 n + 50``.

    Returns
    -------
    SimplexQPResult
    """
    H = np.asarray(H, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64).ravel()
    n = c.shape[0]
    if H.shape != (n, n):
        raise ValueError(f"H has shape {H.shape}, expected ({n}, {n})")
    H = 0.5 * (H + H.T)
    if tol is None:
        tol = 1e-11 * (1.0 + np.abs(c).max() + np.abs(H).max())
    if max_iter is None:
        max_iter = 20 * n + 50
    alpha = None
    if alpha0 is not None:
        a = np.asarray(alpha0, dtype=np.float64).ravel()
        if a.shape == (n,) and np.all(np.isfinite(a)):
            a = np.clip(a, 0.0, None)
            if a.sum() > 0:
                alpha = a / a.sum()
    if alpha is None:
        alpha = np.zeros(n)
        alpha[int(np.argmin(0.5 * np.diag(H) - c))] = 1.0
    S = np.flatnonzero(alpha > 0)
    g = H[:, S] @ alpha[S] - c
    at_face_min = False
    added = -1
    it = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        while it < max_iter:
            it += 1
            if at_face_min:
                tau = float(g[S].mean())
                out = np.ones(n, dtype=bool)
                out[S] = False
                if not out.any():
                    break
                cand = np.flatnonzero(out)
                j = int(cand[np.argmin(g[cand])])
                if g[j] >= tau - tol:
                    break
                S = np.sort(np.append(S, j))
                added = j
                at_face_min = False
                continue
            p, full = _face_step(H[np.ix_(S, S)], g[S])
            if not full and float(g[S] @ p) > 0:
                p = -p                       # f is linear along a null direction: go downhill
            neg = p < 0
            if neg.any():
                ratios = alpha[S][neg] / -p[neg]
                t_block = float(ratios.min())
            else:
                t_block = np.inf
            if full and t_block >= 1.0:
                t = 1.0
            elif np.isfinite(t_block):
                t = t_block
            else:                            # a null direction with no negative entry: impossible
                break
            step = t * p
            alpha[S] += step
            g += H[:, S] @ step
            if t < 1.0 or not full:
                hit = S[neg][np.flatnonzero(ratios <= t_block * (1.0 + 1e-12))] if neg.any() else S[:0]
                if t == 0.0 and hit.tolist() == [added]:
                    break                    # degenerate: the entering index leaves at once (stall)
                alpha[hit] = 0.0
                alpha[S[alpha[S] < 0]] = 0.0
                S = np.flatnonzero(alpha > 0)
                alpha /= alpha.sum()
                g = H[:, S] @ alpha[S] - c
                at_face_min = False
            else:
                at_face_min = True
            added = -1
    alpha = np.clip(alpha, 0.0, None)
    alpha /= alpha.sum()
    g = H @ alpha - c
    fw_gap = max(float(alpha @ g - g.min()), 0.0)
    value = float(0.5 * alpha @ (g - c))  # 1/2 a^T H a - c^T a, with H a = g + c
    return SimplexQPResult(alpha, value, fw_gap, it, fw_gap <= max(tol, 1e-14))
