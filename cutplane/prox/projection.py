r"""Euclidean projections onto the simplex and the capped simplex.

They are the projection steps of the projected-gradient solver of the smooth dual (11)
of pMTL^struct (Mao and Tsang 2013, sec. 2), whose feasible set is
``A_s = {alpha >= 0, sum alpha <= C}``.

Simplex (Duchi, Shalev-Shwartz, Singer and Chandra, 2008, Fig. 1). The projection of ``v``
onto ``{x >= 0, sum x = z}`` is ``x = max(v - theta, 0)``, where, with ``u`` the entries of
``v`` sorted decreasingly,

    rho = max{j : u_j - (sum_{r<=j} u_r - z) / j > 0},   theta = (sum_{r<=rho} u_r - z) / rho.

Cost O(n log n) (the sort). The entries are shifted by ``-max(v)`` first (the projection
is shift-invariant), which keeps ``x`` accurate when ``|v|`` is much larger than ``z``.

Capped simplex. ``{x >= 0, sum x <= C}``: if clipping at zero already gives a feasible
point (``sum max(v, 0) <= C``) that is the projection (the sum constraint is inactive);
otherwise the constraint is active at the projection and it is the simplex projection
with ``z = C``.
"""

from __future__ import annotations

import numpy as np

from cutplane.exceptions import InputError

from .checks import as_scalar, as_vector

__all__ = ["project_simplex", "project_capped_simplex"]


def project_simplex(v, z=1.0):
    """Euclidean projection onto the simplex ``{x in R^n : x >= 0, sum x = z}``.

    Solves ``min_x 1/2 ||x - v||^2`` over the simplex by the sort-based algorithm of
    Duchi et al. (2008).

    Parameters
    ----------
    v : array-like of shape (n,)
        Finite real entries; ``n >= 1`` (the simplex in R^0 is empty).
    z : float >= 0, default 1.0
        Sum of the entries of the projection; ``z = 0`` gives the zero vector.

    Returns
    -------
    x : ndarray of shape (n,)
        ``x >= 0`` and ``sum x = z`` up to rounding.

    Raises
    ------
    InputError
        ``v`` not 1-D, empty or not finite; ``z`` negative or not finite.
    """
    v = as_vector(v)
    z = as_scalar(z, "z")
    if v.size == 0:
        raise InputError("the simplex in R^0 is empty: v must have at least one entry", field="v")
    return _simplex(v, z)


def _simplex(v: np.ndarray, z: float) -> np.ndarray:
    if z == 0.0:
        return np.zeros_like(v)
    # the projection is invariant to a common shift: subtracting max(v) first makes the entries
    # that can end up positive exact differences, so x = v - theta keeps its digits when
    # |v| >> z (without it, [1e20, 0] with z = 1 would lose the mass entirely)
    v = v - v.max()
    u = -np.sort(-v)
    css = np.cumsum(u) - z
    j = np.arange(1, v.size + 1)
    active = np.flatnonzero(u - css / j > 0)
    rho = active[-1] if active.size else 0  # j = 1 qualifies in exact arithmetic since z > 0
    theta = css[rho] / (rho + 1)
    return np.maximum(v - theta, 0.0)


def project_capped_simplex(v, C):
    """Euclidean projection onto the capped simplex ``{x in R^n : x >= 0, sum x <= C}``.

    ``max(v, 0)`` when its sum is at most ``C``, else the simplex projection with ``z = C``.

    Parameters
    ----------
    v : array-like of shape (n,)
        Finite real entries (``n = 0`` gives an empty array).
    C : float >= 0
        Upper bound on the sum (MTL's regularisation constant; the set ``A_s``).

    Returns
    -------
    x : ndarray of shape (n,)

    Raises
    ------
    InputError
        ``v`` not 1-D or not finite; ``C`` negative or not finite.
    """
    v = as_vector(v)
    C = as_scalar(C, "C")
    x = np.maximum(v, 0.0)
    if x.sum() <= C:
        return x
    return _simplex(v, C)
