"""The reduced primal of the p-block norm on the span of the cuts' group parts (pMTL, p > 1).

The reduced problem ``min_w lam/2 ||w||_{2,p}^2 + max_r <a_r, w> + b_r`` has its minimiser in
``{w : w_j = A_j^T beta_j}`` (eq. 13 of Mao and Tsang 2013 writes ``w_j`` as a multiple of
``A_j^T alpha``), and restricting ``beta_j`` to a set ``S`` of cuts that holds the support of
the optimal ``alpha`` loses nothing. With ``Q^j_SS = V diag(s) V^T`` (eigenvalues above 1e-10
of the largest) and ``beta_j = V s^(-1/2) z_j``: ``||w_j|| = ||z_j||`` and the cut values are
``b + sum_j M_j z_j`` with ``M_j = Q^j_{:,S} V s^(-1/2)``, so the problem is the power-cone
program::

    min  lam/2 t^2 + xi
    s.t. xi >= b_r + (sum_j M_j z_j)_r        (multipliers alpha_r: the dual point)
         u_j >= ||z_j||,   t >= ||u||_p       (u_j <= rho_j^(1/p) t^(1-1/p), sum_j rho_j = t)

It is handed to Clarabel directly (cvxpy's compilation costs more than the solve at every
cutting-plane iteration), with the cvxpy backend chain as fallback. Everything comes from the
Gram blocks; the point ``w`` is assembled from the slopes in one compiled pass.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..groups import half_sq_norm
from .backends import clarabel_direct

__all__ = ["RestrictedPrimal", "solve_restricted_primal", "primal_group_weights"]

DIRECT_NAME = "CLARABEL(direct)"


class RestrictedPrimal(NamedTuple):
    """A reduced primal point ``w_j = A_j^T beta_j``.

    Attributes
    ----------
    value : float
        ``lam Omega(w) + max_r <a_r, w> + b_r`` (from the Gram blocks).
    beta : ndarray of shape (n_groups, n_cuts)
    norms : ndarray of shape (n_groups,)
        ``||w_j||``.
    duals : ndarray of shape (n_cuts,) or None
        Multipliers of the cut constraints (zero outside ``S``): ``alpha`` up to round-off.
    backend : str
    """

    value: float
    beta: np.ndarray
    norms: np.ndarray
    duals: np.ndarray | None
    backend: str


def primal_group_weights(norms, p) -> np.ndarray:
    """Group weights of a primal point: ``mu_j = (||w_j|| / ||w||_{2,p})^(2-p)``, 0 where ``w_j = 0``.

    They are eq. (12)'s ``mu`` written in the primal (``w_j = mu_j v_j`` with
    ``v = grad Omega(w)``). For ``p > 2`` they grow without bound as ``||w_j|| -> 0``; they
    are computed in logarithms and capped at ``e^600``, so that ``mu / sum(mu)`` stays finite.

    Parameters
    ----------
    norms : ndarray of shape (n_groups,)
        ``||w_j||``, non-negative.
    p : float
        ``p > 1``.

    Returns
    -------
    mu : ndarray of shape (n_groups,)
    """
    n = np.asarray(norms, dtype=np.float64)
    mu = np.zeros_like(n)
    pos = n > 0
    if not np.any(pos):
        return mu
    top = float(n[pos].max())
    log_total = np.log(top) + np.log(float(np.sum((n[pos] / top) ** p))) / p
    mu[pos] = np.exp(np.minimum((2.0 - p) * (np.log(n[pos]) - log_total), 600.0))
    return mu


def _blocks(grams, S):
    """``(j, B_j, M_j)`` for the groups with a nonzero Gram block on ``S``."""
    blocks = []
    for j, G in enumerate(grams):
        GS = G[np.ix_(S, S)]
        s, V = np.linalg.eigh(0.5 * (GS + GS.T))
        if not s.size or s[-1] <= 0.0:
            continue
        keep = s > 1e-10 * s[-1]
        B = V[:, keep] / np.sqrt(s[keep])
        blocks.append((j, B, G[:, S] @ B))
    return blocks


def _direct(blocks, b, lam, p, tol=1e-9):
    """Clarabel on the program of the module docstring; (z list, duals of the cut rows) or None."""
    try:
        import clarabel
    except ImportError:  # pragma: no cover - clarabel is a declared dependency
        return None
    n, K = b.shape[0], len(blocks)
    sizes = [B.shape[1] for _, B, _ in blocks]
    z0 = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    R = int(z0[-1])
    iu, ir, it, ix = R, R + K, R + 2 * K, R + 2 * K + 1  # x = [z, u, rho, t, xi]
    nx = ix + 1
    rows, cols, vals, rhs, cones = [], [], [], [], []
    # zero cone: sum rho - t = 0
    rows += [np.zeros(K + 1, np.int64)]
    cols += [np.concatenate([ir + np.arange(K), [it]])]
    vals += [np.concatenate([np.ones(K), [-1.0]])]
    rhs.append(np.zeros(1))
    cones.append(clarabel.ZeroConeT(1))
    # nonnegative cone: M z - xi + s = -b
    M = np.hstack([Mj for _, _, Mj in blocks])  # (n, R)
    rr, cc = np.nonzero(M)
    rows += [1 + rr, 1 + np.arange(n)]
    cols += [cc, np.full(n, ix)]
    vals += [M[rr, cc], -np.ones(n)]
    rhs.append(-b)
    cones.append(clarabel.NonnegativeConeT(n))
    r0 = 1 + n
    for k in range(K):  # second-order cones (u_k, z_k)
        d = sizes[k]
        rows += [np.arange(r0, r0 + d + 1)]
        cols += [np.concatenate([[iu + k], z0[k] + np.arange(d)])]
        vals += [-np.ones(d + 1)]
        rhs.append(np.zeros(d + 1))
        cones.append(clarabel.SecondOrderConeT(d + 1))
        r0 += d + 1
    for k in range(K):  # power cones (rho_k, t, u_k): rho^(1/p) t^(1-1/p) >= |u_k|
        rows += [np.arange(r0, r0 + 3)]
        cols += [np.array([ir + k, it, iu + k])]
        vals += [-np.ones(3)]
        rhs.append(np.zeros(3))
        cones.append(clarabel.PowerConeT(1.0 / p))
        r0 += 3
    A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r0, nx))
    P = sp.csc_matrix(([lam], ([it], [it])), shape=(nx, nx))
    q = np.zeros(nx)
    q[ix] = 1.0
    out = clarabel_direct(P, q, A, np.concatenate(rhs), cones, tol)
    if out is None:
        return None
    x, zd = out
    return [x[z0[k] : z0[k + 1]] for k in range(K)], zd[1 : 1 + n].copy()


def _via_cvxpy(blocks, b, lam, p, backends):
    import cvxpy as cp

    from .backends import resolve_backends, solve_with_fallback

    zs = [cp.Variable(B.shape[1]) for _, B, _ in blocks]
    u, t, xi = cp.Variable(len(blocks), nonneg=True), cp.Variable(nonneg=True), cp.Variable()
    cons = [cp.norm(z, 2) <= u[k] for k, z in enumerate(zs)]
    cut_rows = b + sum(M @ z for (_, _, M), z in zip(blocks, zs)) <= xi
    cons += [cp.pnorm(u, p, approx=False) <= t, cut_rows]
    prob = cp.Problem(cp.Minimize(0.5 * lam * cp.square(t) + xi), cons)

    def extract(_p):
        duals = None if cut_rows.dual_value is None else np.array(cut_rows.dual_value, dtype=np.float64)
        return [np.array(z.value, dtype=np.float64) for z in zs], duals

    (zval, duals), name, _, fails = solve_with_fallback(prob, resolve_backends(backends, "socp"), extract)
    return zval, duals, name, tuple(fails)


def solve_restricted_primal(grams, b, lam, p, S, backends=None, *, direct=True):
    """Solve the reduced primal on the span of the cuts ``S`` (see the module docstring).

    Parameters
    ----------
    grams : ndarray of shape (n_groups, n_cuts, n_cuts)
        The per-group Gram blocks ``Q^j = A_j A_j^T``.
    b : ndarray of shape (n_cuts,)
    lam : float
    p : float
        ``p > 1``.
    S : ndarray of int
        Cut indices spanning the subspace (all cuts, or the support of a dual point).
    backends : None, str or list of str
        cvxpy backends of the fallback.
    direct : bool, default=True
        Try Clarabel's own API first.

    Returns
    -------
    found : RestrictedPrimal or None
        None when every solver failed (or no group has a nonzero block on ``S``).
    failures : tuple of (backend, reason)
    """
    b = np.asarray(b, dtype=np.float64)
    S = np.asarray(S, dtype=np.int64)
    blocks = _blocks(grams, S)
    if not blocks:
        return None, ()
    failures: tuple[tuple[str, str], ...] = ()
    got = _direct(blocks, b, float(lam), float(p)) if direct else None
    if got is not None:
        zval, duals = got
        name = DIRECT_NAME
    else:
        if direct:
            failures = ((DIRECT_NAME, "not solved"),)
        try:
            zval, duals, name, fails = _via_cvxpy(blocks, b, float(lam), float(p), backends)
        except Exception as exc:  # noqa: BLE001 - the caller keeps its eq. (13) point
            return None, failures + (("restricted-primal", f"{type(exc).__name__}: {exc}"),)
        failures += fails
    beta = np.zeros((grams.shape[0], b.shape[0]))
    norms = np.zeros(grams.shape[0])
    cuts = b.copy()
    for (j, B, M), z in zip(blocks, zval):
        if not np.all(np.isfinite(z)):
            return None, failures + (("restricted-primal", "non-finite solution"),)
        beta[j, S] = B @ z
        norms[j] = float(np.linalg.norm(z))
        cuts += M @ z
    value = float(lam) * half_sq_norm(norms, float(p)) + float(cuts.max())
    ok = duals is not None and duals.shape == b.shape and np.all(np.isfinite(duals))
    return RestrictedPrimal(value, beta, norms, duals if ok else None, name), failures
