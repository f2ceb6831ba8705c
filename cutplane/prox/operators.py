r"""Proximity operators of the (block-)norm regularisers, shared by the engine and SPOM.

For a convex ``Omega`` and a step ``tau >= 0`` the proximity operator is

.. math:: \mathrm{prox}_{\tau\Omega}(v) = \arg\min_w \tfrac12 \|w - v\|_2^2 + \tau\,\Omega(w).

Conventions. Squared norms carry the factor 1/2, as in SPOM (Martins et al. 2011, sec. 2: the MKL
regulariser is ``lambda/2 (sum_j ||w_j||)^2``) and in MTL (Mao and Tsang 2013, eq. 4 and 10):
``prox_squared_l1`` is the prox of ``tau * 1/2 ||w||_1^2``, exactly Alg. 2 of Martins et al. 2011 with
its ``lambda = tau``. Groups follow :mod:`cutplane.groups` (an int array of group ids, or a
list of index arrays; an empty group stays empty and changes nothing).

Block norms use Prop. 1 of Martins et al. 2011: if ``Omega(w) = phi(||w_1||, ..., ||w_m||)`` then
``[prox_{tau Omega}(v)]_j = [prox_{tau phi}(b)]_j * v_j / ||v_j||`` with ``b_j = ||v_j||``
(a group with ``v_j = 0`` maps to 0).

All functions are pure: they validate their input (raising :class:`InputError`), never
modify ``v`` and return a new float64 array of the shape of ``v``. The root finders of the
power and squared-lp operators (safeguarded Newton, Brent) are in :mod:`cutplane.prox.roots`.
"""

from __future__ import annotations

import numpy as np

from cutplane.exceptions import InputError
from cutplane.groups import as_group_ids, group_norms

from .checks import as_scalar, as_vector
from .roots import half_sq_lp, power_shrink

__all__ = [
    "prox_l1",
    "prox_group_l21",
    "prox_squared_l1",
    "prox_squared_weighted_l1",
    "prox_squared_group_l1",
    "prox_group_l2q",
    "prox_squared_lp",
    "prox_squared_group_lp",
    "project_l2_ball",
]


def _prepare_groups(v, groups, n_groups=None):
    v = as_vector(v)
    ids = as_group_ids(groups, v.shape[0], n_groups)
    return v, ids, group_norms(v, ids, n_groups)


def _rescale_groups(v: np.ndarray, ids: np.ndarray, b0: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Prop. 1: ``w_j = (b_j / b0_j) v_j`` (0 where ``b0_j = 0``; exactly ``v_j`` where ``b_j = b0_j``).

    When a ratio ``b_j / b0_j`` or a norm ``b0_j`` is subnormal, the unit direction is formed
    first, ``w_j = b_j (v_j / b0_j)``, so no digits are lost through a subnormal factor."""
    pos = b0 > 0
    safe = np.where(pos, b0, 1.0)
    factor = np.where(pos, b / safe, 0.0)
    tiny = np.finfo(np.float64).tiny
    if np.any(pos & (((factor < tiny) & (b > 0)) | (b0 < tiny))):
        return (v / safe[ids]) * np.where(pos, b, 0.0)[ids]
    return v * factor[ids]


# --------------------------------------------------------------------------- separable
def prox_l1(v, tau):
    r"""Soft threshold, the prox of ``Omega(w) = ||w||_1``.

    ``[prox_{tau ||.||_1}(v)]_i = sign(v_i) max(0, |v_i| - tau)`` (Martins et al. 2011, eq. 11).

    Parameters
    ----------
    v : array-like of shape (n,)
    tau : float >= 0

    Returns
    -------
    w : ndarray of shape (n,)
    """
    v = as_vector(v)
    tau = as_scalar(tau, "tau")
    return np.sign(v) * np.maximum(np.abs(v) - tau, 0.0)


def prox_group_l21(v, tau, groups):
    r"""Group soft threshold, the prox of the group lasso ``Omega(w) = sum_j ||w_j||_2``.

    By Prop. 1 (Martins et al. 2011) it is the soft threshold of the group norms:
    ``w_j = max(0, 1 - tau / ||v_j||) v_j``.

    Parameters
    ----------
    v : array-like of shape (dim,)
    tau : float >= 0
    groups : array-like of int of shape (dim,) or list of index arrays
        See :func:`cutplane.groups.as_group_ids`.

    Returns
    -------
    w : ndarray of shape (dim,)
    """
    v, ids, b0 = _prepare_groups(v, groups)
    tau = as_scalar(tau, "tau")
    return _rescale_groups(v, ids, b0, np.maximum(b0 - tau, 0.0))


# --------------------------------------------------------------------------- squared l1
def _squared_l1_threshold(y_sorted: np.ndarray, inv_tau: float) -> float:
    """Alg. 2 of Martins et al. 2011, steps 3-4, on ``y_1 >= ... >= y_M >= 0``: the threshold ``tau * ||w||_1``.

    Takes ``1 / tau`` (``inf`` for ``tau = 0``). The test of step 3,
    ``y_j - tau/(1 + j tau) sum_{r<=j} y_r > 0``, is evaluated as ``y_j / tau > D_j`` with
    ``D_j = sum_{r<=j} (y_r - y_j) = D_{j-1} + (j-1)(y_{j-1} - y_j) >= 0`` (no cancellation, so
    neither a huge nor a tiny ``tau`` misjudges the active set), and the threshold of step 4,
    ``tau/(1 + rho tau) sum_{r<=rho} y_r``, as ``sum_{r<=rho} y_r / (1/tau + rho)``.
    """
    if y_sorted.size == 0 or inv_tau == np.inf or y_sorted[0] == 0.0:
        return 0.0
    j = np.arange(1, y_sorted.size + 1)
    D = np.cumsum(np.concatenate(([0.0], (j[:-1] * (y_sorted[:-1] - y_sorted[1:])))))
    with np.errstate(over="ignore", under="ignore"):  # inf / 0 products keep the comparison's truth
        active = (y_sorted * inv_tau > D) | ((D == 0.0) & (y_sorted > 0))
    rho = np.flatnonzero(active)[-1]  # j = 1 always qualifies: y_1 > 0 = D_1
    return float(np.sum(y_sorted[: rho + 1])) / (inv_tau + rho + 1)


def prox_squared_l1(v, tau):
    r"""Prox of the squared l1 norm ``Omega(w) = 1/2 ||w||_1^2`` by sorting (Martins et al. 2011, Alg. 2).

    Optimality gives ``w = soft(v, tau * ||w||_1)``. Sort ``y = |v|`` decreasingly and let
    ``rho = max{j : y_j - tau/(1 + j tau) sum_{r<=j} y_r > 0}``; then
    ``w = soft(v, theta)`` with ``theta = tau/(1 + rho tau) sum_{r<=rho} y_r``.
    Cost O(n log n). This is the ``lambda/2 ||.||_1^2`` prox of Martins et al. 2011 with ``lambda = tau``.

    Parameters
    ----------
    v : array-like of shape (n,)
    tau : float >= 0

    Returns
    -------
    w : ndarray of shape (n,)
    """
    v = as_vector(v)
    tau = as_scalar(tau, "tau")
    a = np.abs(v)
    theta = _squared_l1_threshold(-np.sort(-a), np.inf if tau == 0.0 else 1.0 / tau)
    return np.sign(v) * np.maximum(a - theta, 0.0)


def prox_squared_weighted_l1(v, tau, weights):
    r"""Prox of the squared weighted l1 norm ``Omega(w) = 1/2 (sum_i d_i |w_i|)^2``.

    Martins et al. 2010, App. F, Alg. 4.

    Optimality (the solution agrees in sign with ``v``, Lemma 9 of Martins et al. 2010) gives
    ``w_i = sign(v_i) max(0, |v_i| - d_i theta)`` with ``theta = tau sum_i d_i |w_i|``.
    Sort the ratios ``|v_i| / d_i`` decreasingly; with prefix sums ``A_j = sum_{r<=j} d_r |v_r|``
    and ``B_j = sum_{r<=j} d_r^2``, ``rho = max{j : |v_j|/d_j - tau A_j / (1 + tau B_j) > 0}`` and
    ``theta = tau A_rho / (1 + tau B_rho)``. With unit weights this is Alg. 2.

    Parameters
    ----------
    v : array-like of shape (n,)
    tau : float >= 0
    weights : array-like of shape (n,)
        ``d_i >= 0``, finite. A zero weight leaves its coordinate unpenalised (``w_i = v_i``).

    Returns
    -------
    w : ndarray of shape (n,)
    """
    v = as_vector(v)
    tau = as_scalar(tau, "tau")
    d = as_vector(weights, "weights")
    if d.shape != v.shape:
        raise InputError(f"weights must have shape {v.shape}, got {d.shape}", field="weights")
    if np.any(d < 0):
        raise InputError("weights must be >= 0", field="weights")
    a = np.abs(v)
    pen = d > 0
    order = np.argsort(-(a[pen] / d[pen]), kind="stable")
    ap, dp = a[pen][order], d[pen][order]
    inv_tau = np.inf if tau == 0.0 else 1.0 / tau
    if inv_tau == np.inf or ap.size == 0 or ap[0] == 0.0:  # no penalty, or nothing penalised is nonzero
        return v.copy()
    r = ap / dp
    B = np.cumsum(dp * dp)
    # r_j - tau A_j / (1 + tau B_j) > 0  <=>  r_j / tau > E_j = A_j - r_j B_j = sum_{i<=j} d_i^2 (r_i - r_j),
    # accumulated as E_j = E_{j-1} + B_{j-1} (r_{j-1} - r_j) >= 0 without cancellation
    E = np.cumsum(np.concatenate(([0.0], B[:-1] * (r[:-1] - r[1:]))))
    with np.errstate(over="ignore", under="ignore"):
        active = (r * inv_tau > E) | ((E == 0.0) & (r > 0))
    active[0] = True  # j = 1 qualifies (r_1 > 0 = E_1), also when r_1 = |v_1| / d_1 underflows to 0
    rho = np.flatnonzero(active)[-1]
    theta = float(np.sum(dp[: rho + 1] * ap[: rho + 1])) / (inv_tau + B[rho])  # tau A / (1 + tau B)
    return np.sign(v) * np.maximum(a - d * theta, 0.0)


def prox_squared_group_l1(v, tau, groups, weights=None):
    r"""Prox of ``Omega(w) = 1/2 (sum_j d_j ||w_j||_2)^2`` (sparse MKL, MTL^struct with p = 1).

    Prop. 1 (Martins et al. 2011): apply Alg. 2 (unit weights, the default) or Alg. 4 (``weights``
    given) to the vector of group norms and rescale each group.

    Parameters
    ----------
    v : array-like of shape (dim,)
    tau : float >= 0
    groups : array-like of int of shape (dim,) or list of index arrays
    weights : array-like of shape (n_groups,), optional
        Group weights ``d_j >= 0``, one per group (trailing empty groups included); every
        group id must be smaller than ``len(weights)``.

    Returns
    -------
    w : ndarray of shape (dim,)
    """
    if weights is None:
        v, ids, b0 = _prepare_groups(v, groups)
        return _rescale_groups(v, ids, b0, prox_squared_l1(b0, tau))
    d = as_vector(weights, "weights")
    v, ids, b0 = _prepare_groups(v, groups, n_groups=d.size)
    return _rescale_groups(v, ids, b0, prox_squared_weighted_l1(b0, tau, d))


# --------------------------------------------------------------------------- powers
def prox_group_l2q(v, tau, groups, q):
    r"""Prox of ``Omega(w) = sum_j ||w_j||_2^q``, ``q > 1`` (l_{2,q}^q; Martins et al. 2011, sec. 3.2).

    By Prop. 1 each group norm ``b0 = ||v_j||`` becomes the root ``b in [0, b0]`` of
    ``b - b0 + tau q b^(q-1) = 0`` (valid for every ``q > 1``), found by safeguarded Newton,
    vectorised over groups; the group is rescaled by ``b / b0``. For ``q = 2`` the root is
    ``b0 / (1 + 2 tau)``.

    Parameters
    ----------
    v : array-like of shape (dim,)
    tau : float >= 0
    groups : array-like of int of shape (dim,) or list of index arrays
    q : float > 1, finite

    Returns
    -------
    w : ndarray of shape (dim,)
    """
    v, ids, b0 = _prepare_groups(v, groups)
    tau = as_scalar(tau, "tau")
    q = as_scalar(q, "q", low=1.0, strict=True)
    return _rescale_groups(v, ids, b0, power_shrink(b0, tau, q))


# --------------------------------------------------------------------------- squared lp
def _prox_half_sq_lp_nonneg(b0: np.ndarray, tau: float, p: float) -> np.ndarray:
    """``prox_{tau/2 ||.||_p^2}(b0)`` for ``b0 >= 0`` and ``1 <= p <= inf``."""
    if tau == 0.0 or not np.any(b0 > 0):
        return b0.copy()
    if p == 1.0:
        return prox_squared_l1(b0, tau)
    if p == 2.0:
        return b0 / (1.0 + tau)
    if np.isinf(p):  # Moreau: b0 - prox_{(1/tau)/2 ||.||_1^2}(b0) = min(b0, threshold)
        theta = _squared_l1_threshold(-np.sort(-b0), tau)
        return np.minimum(b0, theta)
    return half_sq_lp(b0, tau, p)


def prox_squared_lp(v, tau, p):
    r"""Prox of ``Omega(w) = 1/2 ||w||_p^2``, ``1 <= p <= inf``.

    ``p = 1``: Alg. 2 (Martins et al. 2011); ``p = 2``: ``v / (1 + tau)``; ``p = inf``: Moreau's identity
    with the conjugate ``1/2 ||.||_1^2`` (``|w_i| = min(|v_i|, theta)``, theta from Alg. 2 with
    step ``1/tau``). Other ``p``: optimality ``x_i + lam |x_i|^(p-1) = |v_i|`` (signs of ``v``)
    with ``lam = tau ||x||_p^(2-p)``; each ``x_i`` given ``lam`` by safeguarded Newton, ``lam``
    by Brent's method on the consistency equation in ``log lam``. Exact to machine precision
    (a root find, not an approximation).

    Parameters
    ----------
    v : array-like of shape (n,)
    tau : float >= 0
    p : float in [1, inf]

    Returns
    -------
    w : ndarray of shape (n,)
    """
    v = as_vector(v)
    tau = as_scalar(tau, "tau")
    p = as_scalar(p, "p", low=1.0, allow_inf=True)
    return np.sign(v) * _prox_half_sq_lp_nonneg(np.abs(v), tau, p)


def prox_squared_group_lp(v, tau, groups, p):
    r"""Prox of the p-block norm ``Omega(w) = 1/2 (sum_j ||w_j||_2^p)^(2/p)`` (Mao and Tsang 2013, eq. 10).

    Prop. 1 (Martins et al. 2011) reduces it to :func:`prox_squared_lp` on the group norms.
    ``p = 1`` is :func:`prox_squared_group_l1`, ``p = 2`` is ``v / (1 + tau)``.

    Parameters
    ----------
    v : array-like of shape (dim,)
    tau : float >= 0
    groups : array-like of int of shape (dim,) or list of index arrays
    p : float in [1, inf]

    Returns
    -------
    w : ndarray of shape (dim,)
    """
    v, ids, b0 = _prepare_groups(v, groups)
    tau = as_scalar(tau, "tau")
    p = as_scalar(p, "p", low=1.0, allow_inf=True)
    return _rescale_groups(v, ids, b0, _prox_half_sq_lp_nonneg(b0, tau, p))


# --------------------------------------------------------------------------- ball
def project_l2_ball(v, radius):
    r"""Euclidean projection onto ``{w : ||w||_2 <= radius}`` (the prox of its indicator).

    ``w = v * min(1, radius / ||v||)``; SPOM's projection step with radius gamma.

    Parameters
    ----------
    v : array-like of shape (n,)
    radius : float >= 0, or ``inf`` (no constraint: returns a copy of ``v``)

    Returns
    -------
    w : ndarray of shape (n,)
    """
    v = as_vector(v)
    radius = as_scalar(radius, "radius", allow_inf=True)
    nrm = np.linalg.norm(v)
    if nrm <= radius:
        return v.copy()
    return v * (radius / nrm)
