r"""Kernel-weight updates of the wrapper MKL methods (:mod:`problems.mkl.wrappers`): Gauss-Seidel and SimpleMKL.

The l1 MKL problem (Martins et al. 2011, eq. 5) couples kernel weights ``beta`` on the simplex
``Delta = {beta >= 0, sum_k beta_k = 1}`` with one weight block ``v_k`` per kernel:

.. math::
    \min_{\beta \in \Delta} J(\beta), \qquad
    J(\beta) = \min_v \; \frac{\lambda}{2} \sum_k \frac{\|v_k\|^2}{\beta_k} + R(v)

(``0/0 = 0``; ``c/0 = +inf`` for ``c > 0``). Minimising over ``beta`` for fixed ``v`` gives
(Cauchy-Schwarz) ``sum_k ||v_k||^2 / beta_k >= (sum_k ||v_k||)^2``, with equality at
``beta_k = ||v_k|| / sum_j ||v_j||``; so the joint problem is the single problem in ``w = v``

.. math:: \min_w \; \frac{\lambda}{2} \Big(\sum_k \|w_k\|\Big)^2 + R(w),

which SPOM and MTL^struct solve (``lam * MixedNorm(p=1)``). A *wrapper* keeps ``beta`` outside
and solves, for fixed ``beta``, an ordinary SVM: with features of block ``k`` scaled by
``sqrt(beta_k)`` and weights ``u_k = v_k / sqrt(beta_k)``, the inner problem is
``min_u lam/2 ||u||^2 + R(sqrt(beta) * u)``.

The two updates of ``beta`` given the inner solution (as the block norms ``||v_k||``):

- **Gauss-Seidel** (alternating minimisation, e.g. Kloft et al. 2010):
  ``beta_k = ||v_k|| / sum_j ||v_j||`` (:func:`gauss_seidel_weights`): the exact minimiser of
  the bound above for fixed ``v``.
- **SimpleMKL** (Rakotomamonjy et al. 2008): reduced gradient descent on ``J`` over the
  simplex. By Danskin's theorem at the inner minimiser ``v*``,
  ``dJ/dbeta_k = -lam/2 ||v*_k||^2 / beta_k^2`` (:func:`mkl_gradient`); for a kernel SVM in its
  dual (``v_k = beta_k sum_i alpha_i y_i phi_k(x_i)``) this is
  ``-lam/2 alpha^T (y y^T o K_k) alpha``, independent of ``beta``. The descent direction
  (:func:`simplemkl_direction`, SimpleMKL eq. 13) moves mass towards the largest weight
  ``mu = argmax beta``:
  ``D_m = 0`` if ``beta_m = 0`` and ``g_m - g_mu > 0``; ``D_m = -(g_m - g_mu)`` otherwise
  (``m != mu``); ``D_mu = -sum_{m != mu} D_m``, so ``sum D = 0`` and
  ``<g, D> = -sum_{m: D_m != 0, m != mu} (g_m - g_mu)^2 <= 0``. The step
  (:func:`simplemkl_step`) is at most ``gamma_max`` (where the first weight reaches 0) and is
  chosen by Armijo backtracking on the upper bound
  ``J_v(beta') = lam/2 sum_k ||v_k||^2 / beta'_k + R(v) >= J(beta')`` (``v`` fixed, so the
  risk term is a constant and no SVM is solved during the search).

All functions are pure: they take block norms and weights and return new arrays.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from cutplane.exceptions import InputError

__all__ = [
    "BetaStep",
    "gauss_seidel_weights",
    "mkl_surrogate",
    "mkl_gradient",
    "simplemkl_direction",
    "simplemkl_max_step",
    "simplemkl_step",
    "check_simplex",
]


class BetaStep(NamedTuple):
    """One SimpleMKL update of the kernel weights.

    Attributes
    ----------
    beta : ndarray of shape (n_kernels,)
        The new weights (on the simplex).
    step : float
        The step length ``gamma`` along ``direction`` (0 when no descent was possible).
    direction : ndarray of shape (n_kernels,)
        The descent direction ``D`` (sums to 0).
    surrogate_before, surrogate_after : float
        ``lam/2 sum_k ||v_k||^2 / beta_k`` at the old and the new weights.
    n_trials : int
        Surrogate evaluations of the backtracking search.
    """

    beta: np.ndarray
    step: float
    direction: np.ndarray
    surrogate_before: float
    surrogate_after: float
    n_trials: int


def _norms(norms, name="norms"):
    n = np.asarray(norms, dtype=np.float64)
    if n.ndim != 1 or n.size == 0 or not np.all(np.isfinite(n)) or np.any(n < 0):
        raise InputError("expected a non-empty 1-D array of finite numbers >= 0", field=name)
    return n


def check_simplex(beta, n_kernels=None, *, atol=1e-9) -> np.ndarray:
    """``beta`` as float64 after checking ``beta >= 0`` and ``sum beta = 1`` (within ``atol``).

    Raises
    ------
    InputError
        Wrong shape, negative or non-finite entries, or a sum away from 1.
    """
    b = np.asarray(beta, dtype=np.float64)
    if b.ndim != 1 or b.size == 0 or (n_kernels is not None and b.size != n_kernels):
        raise InputError(f"beta must be a 1-D array of length {n_kernels or '>= 1'}, got shape {b.shape}", field="beta")
    if not np.all(np.isfinite(b)) or np.any(b < -atol) or abs(b.sum() - 1.0) > atol * b.size + atol:
        raise InputError(
            f"beta must lie on the simplex (>= 0, sum 1), got sum {b.sum():.6g}, min {b.min():.3g}", field="beta"
        )
    return np.maximum(b, 0.0)


def gauss_seidel_weights(norms) -> np.ndarray:
    """Closed-form Gauss-Seidel update ``beta_k = ||v_k|| / sum_j ||v_j||``.

    Parameters
    ----------
    norms : array-like of shape (n_kernels,)
        Block norms ``||v_k||`` of the current weights in the unscaled space
        (``||v_k|| = sqrt(beta_k) ||u_k||`` for the scaled-feature weights ``u``).

    Returns
    -------
    beta : ndarray of shape (n_kernels,)
        The minimiser over the simplex of ``sum_k ||v_k||^2 / beta_k``, of value
        ``(sum_k ||v_k||)^2``; uniform when every norm is zero.
    """
    n = _norms(norms)
    total = float(n.sum())
    if total == 0.0:
        return np.full(n.size, 1.0 / n.size)
    return n / total


def mkl_surrogate(sq_norms, beta, lam=1.0) -> float:
    """``lam/2 sum_k ||v_k||^2 / beta_k`` with ``0/0 = 0`` and ``c/0 = inf`` (``c > 0``).

    Parameters
    ----------
    sq_norms : array-like of shape (n_kernels,)
        ``||v_k||^2``.
    beta : array-like of shape (n_kernels,)
        Non-negative weights.
    lam : float, default=1.0
    """
    s = _norms(sq_norms, "sq_norms")
    b = np.asarray(beta, dtype=np.float64)
    if b.shape != s.shape:
        raise InputError(f"beta has shape {b.shape}, expected {s.shape}", field="beta")
    pos = s > 0
    if np.any(pos & (b <= 0)):
        return np.inf
    return 0.5 * float(lam) * float(np.sum(s[pos] / b[pos]))


def mkl_gradient(sq_norms, beta, lam=1.0) -> np.ndarray:
    """``dJ/dbeta_k = -lam/2 ||v_k||^2 / beta_k^2`` at the inner minimiser (Danskin).

    Parameters
    ----------
    sq_norms : array-like of shape (n_kernels,)
        ``||v_k||^2`` of the inner solution in the unscaled space (for scaled weights
        ``u``: ``beta_k ||u_k||^2``, and the gradient is ``-lam/2 ||u_k||^2 / beta_k``).
    beta : array-like of shape (n_kernels,)
    lam : float, default=1.0

    Returns
    -------
    grad : ndarray of shape (n_kernels,)
        Non-positive; 0 where ``||v_k|| = 0``.

    Raises
    ------
    InputError
        A block with ``beta_k = 0`` but ``||v_k|| > 0`` (J is infinite there).
    """
    s = _norms(sq_norms, "sq_norms")
    b = np.asarray(beta, dtype=np.float64)
    if b.shape != s.shape:
        raise InputError(f"beta has shape {b.shape}, expected {s.shape}", field="beta")
    pos = s > 0
    if np.any(pos & (b <= 0)):
        raise InputError("a kernel with beta_k = 0 has a nonzero block: J is infinite there", field="beta")
    g = np.zeros_like(s)
    g[pos] = -0.5 * float(lam) * s[pos] / (b[pos] * b[pos])
    return g


def simplemkl_direction(grad, beta) -> np.ndarray:
    """SimpleMKL's reduced-gradient descent direction on the simplex (eq. 13 of Rakotomamonjy et al.).

    Parameters
    ----------
    grad : array-like of shape (n_kernels,)
        ``dJ/dbeta``.
    beta : array-like of shape (n_kernels,)
        Current weights on the simplex.

    Returns
    -------
    D : ndarray of shape (n_kernels,)
        ``sum(D) = 0``; ``D_m >= 0`` wherever ``beta_m = 0``; ``<grad, D> <= 0``.
    """
    b = check_simplex(beta)
    g = np.asarray(grad, dtype=np.float64)
    if g.shape != b.shape or not np.all(np.isfinite(g)):
        raise InputError(f"grad must be finite of shape {b.shape}", field="grad")
    mu = int(np.argmax(b))
    diff = g - g[mu]
    D = -diff
    D[(b <= 0) & (diff > 0)] = 0.0
    D[mu] = 0.0
    D[mu] = -float(D.sum())
    return D


def simplemkl_max_step(beta, direction) -> float:
    """Largest ``gamma`` with ``beta + gamma D >= 0`` (``inf`` when no entry decreases)."""
    b = np.asarray(beta, dtype=np.float64)
    D = np.asarray(direction, dtype=np.float64)
    neg = D < 0
    if not np.any(neg):
        return np.inf
    return float(np.min(b[neg] / -D[neg]))


def simplemkl_step(sq_norms, beta, lam=1.0, *, rtol=1e-12, max_iter=200) -> BetaStep:
    """One SimpleMKL update: the descent direction, then an exact line search on the surrogate.

    Along ``beta(gamma) = beta + gamma D``, ``0 <= gamma <= gamma_max``, the surrogate
    ``S(gamma) = lam/2 sum_k ||v_k||^2 / (beta_k + gamma D_k)`` is convex, with
    ``S'(gamma) = -lam/2 sum_k ||v_k||^2 D_k / (beta_k + gamma D_k)^2``; its minimiser is found by
    bisection on the sign of ``S'`` (SimpleMKL uses a line search on ``J``; ``S >= J`` is the
    upper bound with ``v`` held fixed, see the module docstring). When ``S' <= 0`` up to
    ``gamma_max`` (the first weight to reach 0 has a zero block), the step is ``gamma_max`` and
    that weight becomes exactly 0.

    Parameters
    ----------
    sq_norms : array-like of shape (n_kernels,)
        ``||v_k||^2`` of the current inner solution (unscaled space).
    beta : array-like of shape (n_kernels,)
        Current weights on the simplex.
    lam : float, default=1.0
    rtol : float, default=1e-12
        Bisection stops when the bracket is below ``rtol * gamma``.
    max_iter : int, default=200

    Returns
    -------
    BetaStep
        ``beta`` unchanged (step 0) when ``D = 0``.
    """
    b = check_simplex(beta)
    s = _norms(sq_norms, "sq_norms")
    g = mkl_gradient(s, b, lam)
    D = simplemkl_direction(g, b)
    before = mkl_surrogate(s, b, lam)
    if not np.any(D) or float(np.dot(g, D)) >= 0:
        return BetaStep(b, 0.0, D, before, before, 0)
    pos = s > 0

    def deriv(gamma):
        den = b + gamma * D
        return -0.5 * lam * float(np.sum(s[pos] * D[pos] / (den[pos] * den[pos])))

    gmax = simplemkl_max_step(b, D)
    hits = (
        (D < 0) & np.isclose(b / np.where(D < 0, -D, 1.0), gmax, rtol=1e-12, atol=0.0)
        if np.isfinite(gmax)
        else np.zeros(b.size, bool)
    )
    n_eval = 0
    if np.isfinite(gmax) and not np.any(hits & pos):
        n_eval += 1
        if deriv(gmax) <= 0:  # descent all the way: a kernel with a zero block leaves the support
            new = np.maximum(b + gmax * D, 0.0)
            new[hits] = 0.0
            new /= new.sum()
            return BetaStep(new, float(gmax), D, before, mkl_surrogate(s, new, lam), n_eval)
    lo = 0.0
    if np.isfinite(gmax):
        hi = gmax
    else:  # S decreases for ever only if S' < 0 everywhere: grow the bracket until S' > 0
        hi = 1.0
        while deriv(hi) < 0 and n_eval < max_iter:
            lo, hi = hi, 2.0 * hi
            n_eval += 1
    while n_eval < max_iter and hi - lo > rtol * max(hi, 1e-300):
        mid = 0.5 * (lo + hi)
        n_eval += 1
        if deriv(mid) < 0:
            lo = mid
        else:
            hi = mid
    gamma = lo
    new = np.maximum(b + gamma * D, 0.0)
    new /= new.sum()
    after = mkl_surrogate(s, new, lam)
    if not after <= before:
        return BetaStep(b, 0.0, D, before, before, n_eval)
    return BetaStep(new, float(gamma), D, before, after, n_eval)
