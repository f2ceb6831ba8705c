r"""Root finders behind the power and squared-lp proximity operators of :mod:`cutplane.prox`.

- :func:`power_shrink`: the root ``b in [0, b0]`` of ``b + tau q b^(q-1) = b0``, elementwise,
  by safeguarded Newton in ``u = log(b / b0)`` (the group norms of ``prox_group_l2q``, and the
  inner equations of the squared lp prox);
- :func:`pnorm`: ``||x||_p`` scaled by its maximum;
- :func:`half_sq_lp`: ``prox_{tau/2 ||.||_p^2}`` of a non-negative vector for ``1 < p < inf``,
  ``p != 2``, by Brent's method on the consistency equation in ``log lam``.

They do not validate their input: the validated operators are in :mod:`cutplane.prox`.
"""

from __future__ import annotations

import numpy as np

from ..exceptions import InputError

__all__ = ["power_shrink", "pnorm", "half_sq_lp"]

_EPS = np.finfo(np.float64).eps


def power_shrink(b0: np.ndarray, tau: float | None, q: float, log_tau: float | None = None) -> np.ndarray:
    r"""Solve ``b + tau q b^(q-1) = b0`` for ``b in [0, b0]``, elementwise (``b0 >= 0``, ``q > 1``).

    ``log_tau`` may replace ``tau`` (pass ``tau=None``) when ``tau`` itself would overflow.

    With ``b = b0 e^u`` the equation is ``H(u) = e^u + e^(log c + (q-1) u) - 1 = 0`` with
    ``c = tau q b0^(q-2)``: ``H`` is increasing and convex, so Newton started where ``H >= 0``
    decreases monotonically to the root. The start ``u_hi = min(0, -log(c)/(q-1))`` and the
    lower end ``u_lo = min(-log 2, -log(2c)/(q-1))`` bracket the root; a step leaving the
    bracket (rounding) is replaced by bisection. Working in ``u`` avoids overflow and keeps
    the relative accuracy of tiny roots; vectorised over the entries.
    """
    b0 = np.asarray(b0, dtype=np.float64)
    out = b0.copy()
    pos = b0 > 0
    if log_tau is None:
        if tau is None:
            raise InputError("power_shrink needs tau or log_tau", field="tau")
        if tau == 0.0:
            return out
        log_tau = np.log(tau)
    if not pos.any() or log_tau == -np.inf:
        return out
    with np.errstate(over="ignore"):
        tau = np.exp(log_tau)  # may be inf: the linear-domain polish below then rejects its step
    logb0 = np.log(b0[pos])
    logc = log_tau + np.log(q) + (q - 2.0) * logb0
    hi = np.minimum(0.0, -logc / (q - 1.0))
    lo = np.minimum(-np.log(2.0), -(logc + np.log(2.0)) / (q - 1.0))
    u = hi.copy()
    todo = np.ones(u.shape, dtype=bool)
    with np.errstate(over="ignore", under="ignore"):
        for _ in range(200):
            idx = np.flatnonzero(todo)
            if idx.size == 0:
                break
            ut, lc = u[idx], logc[idx]
            e1, e2 = np.exp(ut), np.exp(lc + (q - 1.0) * ut)
            h = e1 + e2 - 1.0
            lo_t = np.where(h < 0, ut, lo[idx])
            hi_t = np.where(h > 0, ut, hi[idx])
            new = ut - h / (e1 + (q - 1.0) * e2)
            bad = ~((new >= lo_t) & (new <= hi_t))
            new = np.where(bad, 0.5 * (lo_t + hi_t), new)
            tol = 2 * _EPS * np.maximum(1.0, np.abs(ut))
            done = (h == 0) | (np.abs(new - ut) <= tol) | (hi_t - lo_t <= tol)
            u[idx] = np.where(h == 0, ut, new)
            lo[idx], hi[idx] = lo_t, hi_t
            todo[idx[done]] = False
        b = np.where(u > -700.0, b0[pos] * np.exp(u), np.exp(logb0 + u))
        # u carries an absolute error ~eps*|log b0|; two Newton steps on g(b) = b + tau q b^(q-1) - b0
        # in the linear domain restore the relative accuracy the problem allows (~eps / min(1, q-1))
        nz = np.flatnonzero(b >= np.finfo(np.float64).tiny)
        bn, b0n = b[nz], b0[pos][nz]
        for _ in range(2):  # an overflowing power gives a non-finite step, which is rejected
            with np.errstate(all="ignore"):
                bq = np.power(bn, q - 1.0)
                new = bn - (bn + tau * q * bq - b0n) / (1.0 + tau * q * (q - 1.0) * bq / bn)
            bn = np.where(np.isfinite(new) & (new > 0) & (new <= b0n), new, bn)
        b[nz] = bn
        out[pos] = b
    return out


def pnorm(x: np.ndarray, p: float) -> float:
    """``||x||_p`` of a non-negative vector, scaled by its maximum so ``x^p`` cannot underflow."""
    top = float(x.max(initial=0.0))
    if top == 0.0:
        return 0.0
    return top * float(np.sum((x / top) ** p)) ** (1.0 / p)


def half_sq_lp(b: np.ndarray, tau: float, p: float) -> np.ndarray:
    r"""``x = prox_{tau/2 ||.||_p^2}(b)`` for ``1 < p < inf``, ``p != 2``, ``b >= 0``, ``b != 0``, ``tau > 0``.

    The prox of a 2-homogeneous function is positively homogeneous, so ``b`` is scaled to
    ``||b||_p = 1`` first. Optimality: ``x_i + lam x_i^(p-1) = b_i`` with ``lam = tau ||x||_p^(2-p)``.
    For a given ``lam``, ``x(lam)`` solves the separable equations (:func:`power_shrink` with
    step ``lam / p``) and decreases with ``lam``; the consistency equation in ``t = log lam`` is
    ``G(t) = t - log tau - (2-p) log ||x(e^t)||_p = 0``. Its root is unique (the prox is), and
    ``G(log tau) = (p-2) log ||x(tau)||_p`` (as ``||x|| <= 1``) is >= 0 for ``p < 2`` and <= 0
    for ``p > 2``. For ``p < 2``, ``G`` is increasing and ``log tau + (2-p) log ||x(tau)||_p``
    is a lower end; for ``p > 2`` the upper end is found by doubling steps. Brent's method then
    solves for ``t`` to machine precision.
    """
    from scipy.optimize import brentq

    scale = pnorm(b, p)
    bn = b / scale
    log_tau = np.log(tau)
    tiny = np.finfo(np.float64).tiny

    def x_of(t):  # lam = e^t itself may overflow (p > 2, large tau): pass its logarithm
        return power_shrink(bn, None, p, log_tau=t - np.log(p))

    def G(t):  # an underflowing norm is clamped to the smallest normal (moves G towards its sign)
        return t - log_tau - (2.0 - p) * np.log(max(pnorm(x_of(t), p), tiny))

    t_mid = log_tau
    g_mid = G(t_mid)
    # for p < 2, G(log tau) = -(2 - p) log ||x||_p >= 0 since ||x||_p <= ||bn||_p = 1; a negative
    # value is rounding of a norm within an ulp of 1, i.e. a shrinkage below working precision
    if g_mid == 0.0 or (p < 2.0 and g_mid < 0.0):
        return scale * x_of(t_mid)
    if p < 2.0:
        lo, hi = log_tau + (2.0 - p) * np.log(max(pnorm(x_of(log_tau), p), tiny)), t_mid
        if G(lo) >= 0.0:
            return scale * x_of(lo)
    else:
        lo, hi, step = t_mid, t_mid + 1.0, 1.0
        while G(hi) <= 0.0:  # G grows at least like t / (p-1): a finite number of doublings
            step *= 2.0
            hi = t_mid + step
    t = brentq(G, lo, hi, xtol=1e-15, rtol=4 * _EPS, maxiter=500)
    return scale * x_of(t)
