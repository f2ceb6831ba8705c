"""A native primal-dual interior-point solver for the reduced QCQP of MTL^struct.

The problem (:mod:`cutplane.reduced.qcqp`, the engine's scale) is::

    max_{alpha in simplex, theta}  b^T alpha - theta
    s.t.  q_j(alpha) = 1/(2 lam) alpha^T Q^j alpha <= theta,      j = 1..m,

with ``Q^j`` positive semi-definite (``n x n``, ``n`` the number of cuts). A cone solver sees
one second-order cone of size ``rank(Q^j) + 2`` per group and factorises a KKT system of
order ``~ m n``; here the quadratic constraints are kept as they are, so each Newton step is
one dense Cholesky factorisation of order ``n``.

Method
------
The minimisation form ``min -b^T alpha + theta`` has the Lagrangian
``L = -b^T alpha + theta + sum_j u_j (q_j(alpha) - theta) - nu (1^T alpha - 1) - z^T alpha``
with ``u >= 0`` (the group weights once normalised: stationarity in ``theta`` reads
``sum_j u_j = 1``) and ``z >= 0``. The iterates keep ``alpha > 0`` and the slacks
``s_j = theta - q_j(alpha) > 0`` (computed exactly from ``alpha, theta``, so every iterate is
primal feasible), ``u > 0``, ``z > 0``, and take Mehrotra predictor-corrector Newton steps on
the perturbed KKT conditions ``z_i alpha_i = tau``, ``u_j s_j = tau``. Eliminating ``dz``,
``du`` and ``dtheta`` leaves ``alpha``'s step and the multiplier ``nu`` of ``1^T alpha = 1``::

    K dalpha - dnu 1 = r,    1^T dalpha = 1 - 1^T alpha,
    K = sum_j u_j Q^j / lam + diag(z / alpha) + sum_j d_j (g_j - gbar)(g_j - gbar)^T,

with ``g_j = Q^j alpha / lam``, ``d = u / s`` and ``gbar = sum_j d_j g_j / sum_j d_j``: ``K``
is positive definite (the diagonal ``z / alpha > 0``), one Cholesky factor serves both
right-hand sides and both (predictor, corrector) solves. The step is cut by the
fraction-to-boundary rule (0.99 of the largest step), where the largest step along which a
slack stays positive is the root of the concave quadratic ``s_j(t)``: the slacks never need a
line search.

Certificate
-----------
For any ``mu`` on the simplex, ``max_j q_j >= sum_j mu_j q_j``, so
``D(mu) = max_{a in simplex} b^T a - sum_j mu_j q_j(a)`` bounds the optimum from above; the
maximand is concave, so its linearisation at any ``alpha`` bounds it in turn (the Frank-Wolfe
bound)::

    D(mu) <= phi(alpha) + max_i grad_i - grad^T alpha,
    phi(a) = b^T a - sum_j mu_j q_j(a),   grad = b - sum_j mu_j Q^j alpha / lam.

It costs nothing at an iterate (the ``Q^j alpha`` are there) and tends to the optimum as the
complementarity does. The returned ``gap`` is the best such bound over the iterates minus the
value at the returned ``alpha`` (``b^T alpha - max_j q_j(alpha)``, evaluated exactly); when the
iteration stops short of ``tol``, ``D(mu)`` itself is computed by the native simplex QP
(:func:`cutplane.reduced.simplex_qp.solve_simplex_qp`) and used when smaller.

Scaling
-------
``alpha`` does not change when a constant is added to ``b`` or when ``b`` and every
``Q^j / lam`` are multiplied by the same positive factor, so the iteration runs on
``b' = (b - max b) / sigma`` and ``Q^j / (lam sigma)`` with ``sigma`` the largest of
``|b'|`` and of the diagonals' halves: the iterates are O(1) whatever the input's scale.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...exceptions import InputError

__all__ = ["QCQPNativeResult", "solve_qcqp_native"]

_ETA = 0.99  # fraction-to-boundary
_MU_DROP = 1e-9  # group weights below this (after normalising) are dropped when the bound allows
_MIX = 0.1  # share of the uniform vector mixed into a warm start
_STALL = 8  # iterations without halving the gap before giving up


def _rounding(n, quad_abs, lin_abs):
    """Bound on the rounding error of evaluating ``b^T a - q_j(a)`` in floating point, from
    ``quad_abs = |a|^T |Q^j / lam| |a| / 2`` and ``lin_abs = |b|^T |a|`` (dot products of length
    ``n``: ``gamma_2n = 2 n eps`` relative to the sums of absolute values)."""
    return 2.0 * n * np.finfo(np.float64).eps * (quad_abs + lin_abs)


class QCQPNativeResult(NamedTuple):
    """The answer of :func:`solve_qcqp_native`.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        A point of the probability simplex (the best one found).
    mu : ndarray of shape (m,)
        Group weights on the simplex: the normalised multipliers of the quadratic constraints,
        zero for groups whose constraint does not bind.
    theta : float
        ``max_j q_j(alpha)`` (the smallest ``theta`` feasible with ``alpha``).
    value : float
        ``b^T alpha - max_j q_j(alpha)``: the objective at ``alpha``, a lower bound on the optimum.
    gap : float
        Certified bound on ``optimum - value`` (>= 0), from the Lagrangian dual at ``mu``.
    n_iter : int
        Interior-point iterations.
    converged : bool
        True when ``gap <= tol * max(|b^T alpha|, theta)`` (relative to the size of the two
        terms of the value).
    """

    alpha: np.ndarray
    mu: np.ndarray
    theta: float
    value: float
    gap: float
    n_iter: int
    converged: bool


def _check(grams, b, lam):
    b = np.asarray(b, dtype=np.float64)
    if b.ndim != 1 or b.shape[0] == 0:
        raise InputError(f"b must be a non-empty vector, got shape {b.shape}", field="b")
    n = b.shape[0]
    if not np.isfinite(lam) or lam <= 0:
        raise InputError(f"lam must be finite and > 0, got {lam!r}", field="lam")
    m = len(grams)
    if m == 0:
        raise InputError("at least one group (Q^j) is needed", field="grams")
    Qs = np.empty((m, n, n))
    for j, Q in enumerate(grams):
        Q = np.asarray(Q, dtype=np.float64)
        if Q.shape != (n, n):
            raise InputError(f"Q^{j} has shape {Q.shape}, expected ({n}, {n})", field="grams")
        np.add(Q, Q.T, out=Qs[j])
    if not (np.all(np.isfinite(b)) and np.all(np.isfinite(Qs))):
        raise InputError("b and the Q^j must be finite (found NaN or inf)", field="grams")
    Qs *= 0.5 / float(lam)
    return Qs, b, n, m


def _fw_bound(b, G, q, mu, alpha):
    """``phi(alpha) + max_i grad_i - grad^T alpha`` for ``mu`` (``G``: rows ``Q^j alpha / lam``)."""
    grad = b - mu @ G
    return float(b @ alpha - mu @ q + grad.max() - grad @ alpha)


def _max_step(x, dx):
    neg = dx < 0
    return float(np.min(-x[neg] / dx[neg])) if np.any(neg) else np.inf


def _max_slack_step(s, ds, curv):
    """Largest ``t`` with ``s + t ds - t^2 curv > 0`` (``curv >= 0``, ``s > 0``) for every entry."""
    curv = np.clip(curv, 0.0, None)  # a quadratic form of a PSD matrix: below zero only by rounding
    disc = np.sqrt(ds * ds + 4.0 * curv * s)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(ds <= 0, 2.0 * s / (disc - ds), (ds + disc) / (2.0 * curv))
    t = np.where(np.isnan(t), np.inf, t)
    return float(t.min())


def _solve_direction(Gm, chol, x2, r_d, r_t, r_p, alpha, z, s, d, v, delta, c_a, c_s):
    """Newton direction ``(dalpha, dtheta, dnu, dz, du, ds_lin)`` from the reduced system."""
    from scipy.linalg import cho_solve

    cs_s = c_s / s
    R1 = -r_d - Gm.T @ cs_s + c_a / alpha
    R2 = r_t - cs_s.sum()
    x1 = cho_solve(chol, R1 - v * (R2 / delta), check_finite=False)
    dnu = (r_p - x1.sum()) / x2.sum()
    da = x1 + dnu * x2
    dth = (v @ da - R2) / delta
    ds = dth - Gm @ da
    du = cs_s - d * ds
    dz = (c_a - z * da) / alpha
    return [da, dth, dnu, dz, du, ds]


def _newton(Qflat, u, Gm, chol, x2, r_d, r_t, r_p, alpha, z, s, d, v, delta, c_a, c_s):
    """The Newton direction and the slacks' curvature ``curv_j = dalpha^T Q^j dalpha / (2 lam)``
    along it, and the rows ``Q^j dalpha / lam`` (the change of ``Gm`` per unit step: the next
    iterate's ``Gm`` costs no pass over the blocks). (No iterative refinement against the unreduced
    system: it did not change convergence and only added work.)"""
    m, n = Gm.shape
    step = _solve_direction(Gm, chol, x2, r_d, r_t, r_p, alpha, z, s, d, v, delta, c_a, c_s)
    da = step[0]
    q_da = (Qflat @ da).reshape(m, n)
    return step, 0.5 * (q_da @ da), q_da


def _factor(K):
    """Cholesky of ``K`` (positive definite up to rounding); a growing diagonal shift if it fails."""
    from scipy.linalg import LinAlgError, cho_factor

    shift = 0.0
    scale = max(float(np.max(np.diag(K))), 1e-300)
    for _ in range(12):
        try:
            if shift:
                K = K + shift * np.eye(K.shape[0])
            return cho_factor(K, lower=True, check_finite=False)
        except LinAlgError:
            shift = max(10.0 * shift, 1e-14 * scale)
    return None


def solve_qcqp_native(grams, b, lam, *, alpha0=None, tol=1e-9, max_iter=200) -> QCQPNativeResult:
    """Solve the reduced QCQP of MTL^struct by a primal-dual interior-point method.

    Parameters
    ----------
    grams : sequence of m ndarray of shape (n, n)
        The groups' Gram matrices ``Q^j`` (positive semi-definite; read as ``(Q + Q^T) / 2``;
        rank-deficient and zero blocks are fine).
    b : ndarray of shape (n,)
        Cut offsets.
    lam : float
        Regularisation constant (> 0).
    alpha0 : ndarray of shape (n,), optional
        Warm start (clipped, renormalised and mixed with 10% of the uniform vector to be
        interior); default: uniform.
    tol : float, default=1e-9
        Relative tolerance on the certified gap (see ``QCQPNativeResult.converged``).
    max_iter : int, default=200
        Interior-point iterations.

    Returns
    -------
    QCQPNativeResult
        The best ``alpha`` found, also when not converged (``converged=False``).

    Raises
    ------
    InputError
        Empty ``b``, a block of the wrong shape, a non-finite entry, ``lam <= 0`` or no group.
    """
    from scipy.linalg import cho_solve

    Qs, b_in, n, m = _check(grams, b, lam)
    shift = float(b_in.max())
    bs = b_in - shift
    diag_max = float(np.max(np.einsum("jii->ji", Qs))) if n else 0.0
    sigma = max(float(np.max(-bs)), 0.5 * diag_max)
    if n == 1 or sigma == 0.0:
        # a single point (n = 1) or a constant objective: any point of the simplex is optimal
        alpha = np.ones(1) if n == 1 else _start(alpha0, n, 0.0)
        return _finish(Qs, b_in, alpha, None, None, 0)
    bs = bs / sigma
    Qs /= sigma
    Qflat = Qs.reshape(m * n, n)
    Qrow = Qs.reshape(m, n * n)
    # |a|^T |Q| |a| <= (sum_i a_i sqrt(Q_ii))^2 for a PSD Q: the rounding floor's size, cheaply
    sqrt_diag = np.sqrt(np.clip(np.einsum("jii->ji", Qs), 0.0, None))
    abs_b = np.abs(b_in)

    alpha = _start(alpha0, n, _MIX)
    # initial slacks of one (scaled units) for theta above max q and z above zero, also for a
    # warm start: smaller slacks save iterations from engine-like warm starts but stall more
    # often from random points or vertices
    slack = 1.0
    Gm = (Qflat @ alpha).reshape(m, n)
    q = 0.5 * (Gm @ alpha)
    theta = float(q.max()) + slack
    u = np.full(m, 1.0 / m)
    grad_l = Gm.T @ u - bs
    nu = float(grad_l.min()) - slack
    z = grad_l - nu

    best_val, best_alpha = -np.inf, alpha
    best_ub, best_mu, best_ub_alpha = np.inf, u.copy(), alpha
    best_gap, stalled = np.inf, 0
    it = 0
    while it < max_iter:  # ``it`` (the steps taken) is reported after the loop
        it += 1
        s = theta - q
        val = float(bs @ alpha - q.max())
        if val > best_val:
            best_val, best_alpha = val, alpha
        mu_w = u / u.sum()
        ub = _fw_bound(bs, Gm, q, mu_w, alpha)
        if ub < best_ub:
            best_ub, best_mu, best_ub_alpha = ub, mu_w, alpha
        # the gap relative to the size of the two terms of the value, or at the rounding
        # floor of evaluating them (input units)
        size = max(abs(sigma * float(bs @ alpha) + shift), sigma * float(q.max()))
        floor = _rounding(n, sigma * 0.5 * float(np.max((sqrt_diag @ alpha) ** 2)), float(abs_b @ alpha))
        gap = (best_ub - best_val) * sigma
        if gap <= max(tol * size, floor):
            break
        stalled = stalled + 1 if gap > 0.5 * best_gap else 0
        best_gap = min(best_gap, gap)
        if stalled >= _STALL:
            break
        # residuals of stationarity (alpha, theta) and of the equality
        r_d = Gm.T @ u - bs - nu - z
        r_t = 1.0 - u.sum()
        r_p = 1.0 - alpha.sum()
        comp = (z @ alpha + u @ s) / (n + m)
        d = u / s
        delta = d.sum()
        v = Gm.T @ d
        Gc = (Gm - v / delta) * np.sqrt(d)[:, None]
        K = (u @ Qrow).reshape(n, n)
        K += Gc.T @ Gc
        K.flat[:: n + 1] += z / alpha
        chol = _factor(K)
        if chol is None:
            break
        x2 = cho_solve(chol, np.ones(n), check_finite=False)
        args = (Qflat, u, Gm, chol, x2, r_d, r_t, r_p, alpha, z, s, d, v, delta)

        # predictor (affine scaling)
        (da, dth, dnu, dz, du, ds), curv, _ = _newton(*args, -z * alpha, -u * s)
        t = min(1.0, _max_step(alpha, da), _max_step(z, dz), _max_step(u, du), _max_slack_step(s, ds, curv))
        s_aff = s + t * ds - t * t * curv
        comp_aff = ((alpha + t * da) @ (z + t * dz) + s_aff @ (u + t * du)) / (n + m)
        sig = min(1.0, (max(comp_aff, 0.0) / comp) ** 3)
        # corrector: centring plus the second-order terms of both products (the slack's
        # curvature included)
        c_a = sig * comp - z * alpha - da * dz
        c_s = sig * comp - u * s - ds * du + u * curv
        (da, dth, dnu, dz, du, ds), curv, q_da = _newton(*args, c_a, c_s)
        t_max = min(_max_step(alpha, da), _max_step(z, dz), _max_step(u, du), _max_slack_step(s, ds, curv))
        t = min(1.0, _ETA * t_max)
        if not t > 1e-14:
            break
        alpha = alpha + t * da
        theta = theta + t * dth
        nu = nu + t * dnu
        z = z + t * dz
        u = u + t * du
        Gm = Gm + t * q_da  # Q^j alpha is linear in alpha; _finish re-evaluates exactly
        q = 0.5 * (Gm @ alpha)
        if np.any(theta - q <= 0):  # rounding at the boundary: keep the slacks positive
            qmax = float(q.max())
            theta = qmax + 4.0 * np.finfo(np.float64).eps * (abs(qmax) + 1e-12)
    Qs *= sigma
    return _finish(Qs, b_in, best_alpha, best_mu, best_ub_alpha, it, tol=tol)


def _start(alpha0, n, mix):
    """``alpha0`` on the simplex mixed with ``mix`` of the uniform vector (uniform when absent)."""
    if alpha0 is None:
        return np.full(n, 1.0 / n)
    a = np.asarray(alpha0, dtype=np.float64).ravel()
    if a.shape != (n,):
        raise InputError(f"alpha0 has shape {a.shape}, expected ({n},)", field="alpha0")
    a = np.where(np.isfinite(a), np.clip(a, 0.0, None), 0.0)
    if not a.sum() > 0:
        return np.full(n, 1.0 / n)
    return (1.0 - mix) * a / a.sum() + mix / n


def _finish(Qs, b, alpha, mu, ub_alpha, n_iter, tol=0.0):
    """Exact value and certified gap in the input's units (``Qs``: the ``Q^j / lam``)."""
    m, n = Qs.shape[0], b.shape[0]
    alpha = np.clip(alpha, 0.0, None)
    alpha = alpha / alpha.sum()
    G = Qs.reshape(m * n, n) @ alpha
    q = 0.5 * (G.reshape(m, n) @ alpha)
    theta = float(q.max())
    value = float(b @ alpha) - theta
    if mu is None:  # trivial cases: the subgradient weights of the largest groups
        top = q >= theta * (1.0 - 1e-12) if theta > 0 else np.ones(m, dtype=bool)
        mu = top / top.sum()
        return QCQPNativeResult(alpha, mu, theta, value, 0.0, n_iter, True)

    def bound(weights):
        Gu = Qs.reshape(m * n, n) @ ub_alpha
        qu = 0.5 * (Gu.reshape(m, n) @ ub_alpha)
        return _fw_bound(b, Gu.reshape(m, n), qu, weights, ub_alpha)

    ub = bound(mu)
    clean = np.where(mu >= _MU_DROP, mu, 0.0)
    clean /= clean.sum()
    ub_clean = bound(clean)
    # the bound and the value are each exact up to rounding: both margins go into the gap
    margin = 2.0 * _rounding(n, max(0.5 * float(alpha @ np.abs(Q) @ alpha) for Q in Qs), float(np.abs(b) @ alpha))
    scale = max(tol * max(abs(float(b @ alpha)), theta), margin)
    if ub_clean <= max(ub, value + scale):
        mu, ub = clean, ub_clean
    if ub - value > scale:
        # not certified to tol: the exact dual function at mu (a simplex QP) may be tighter
        from ..simplex_qp import solve_simplex_qp

        H = np.tensordot(mu, Qs, axes=1)
        res = solve_simplex_qp(H, b, alpha)
        ub = min(ub, -res.value + res.fw_gap)
    converged = ub - value <= scale
    return QCQPNativeResult(alpha, mu, theta, value, max(ub - value, 0.0) + margin, n_iter, bool(converged))
