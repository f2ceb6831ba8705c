"""The MTL^struct QCQP handed to Clarabel directly, without cvxpy's compilation.

cvxpy re-canonicalises the problem at every solve (the factors change with every cut); on the
structured tasks that compilation is most of the reduced solver's time, so the engine first
tries this direct form and falls back to the cvxpy path (and its backend chain) when Clarabel
is missing or does not report success. Same problem, same duals::

    min_{alpha, theta}  -b^T alpha + theta
    s.t.  1^T alpha = 1,   alpha >= 0,
          ||F_j alpha||^2 <= 2 lam theta          for each group j in the working subset,

with ``F_j^T F_j = Q^j``. Each quadratic constraint is the second-order cone
``||(2 F_j alpha, 2 lam theta - 1)|| <= 2 lam theta + 1`` (``||u||^2 <= s t`` with ``s = 2 lam
theta``, ``t = 1``). In Clarabel's form ``A x + s = b, s in K`` and stationarity in ``theta``
reads ``1 = sum_j 2 lam (z_j0 + z_jlast)``, so the group weights of eq. 7 are
``mu_j = 2 lam (z_j0 + z_jlast)`` and sum to one.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..backends import clarabel_direct

__all__ = ["solve_qcqp_direct", "DIRECT_NAME"]

DIRECT_NAME = "CLARABEL(direct)"


def solve_qcqp_direct(factors, b, lam, *, tol=1e-9):
    """Solve the QCQP above with Clarabel's Python API.

    Parameters
    ----------
    factors : list of ndarray of shape (rank_j, n)
        ``F_j`` with ``F_j^T F_j = Q^j`` for the groups of the working subset.
    b : ndarray of shape (n,)
        Cut offsets.
    lam : float
        Regularisation constant (> 0).
    tol : float, default=1e-9
        Clarabel's absolute and relative gap tolerances.

    Returns
    -------
    (alpha, mu) : tuple of ndarray of shape (n,) and (len(factors),), or None
        None when clarabel is not installed or its status is neither ``Solved`` nor
        ``AlmostSolved`` (the caller falls back to cvxpy).
    """
    try:
        import clarabel
    except ImportError:  # pragma: no cover - clarabel is a declared dependency
        return None
    b = np.asarray(b, dtype=np.float64)
    n = b.shape[0]
    lam = float(lam)
    # row 0: the equality; rows 1..n: -alpha + s = 0, s >= 0
    rows = [np.zeros(n, dtype=np.int64), 1 + np.arange(n)]
    cols = [np.arange(n), np.arange(n)]
    vals = [np.ones(n), -np.ones(n)]
    rhs = [np.array([1.0]), np.zeros(n)]
    cones = [clarabel.ZeroConeT(1), clarabel.NonnegativeConeT(n)]
    r0 = 1 + n
    heads = []
    for F in factors:
        F = np.asarray(F, dtype=np.float64)
        k = F.shape[0]
        # first row: -(2 lam) theta, rhs 1; middle rows: -2 F alpha, rhs 0; last: -(2 lam) theta, rhs -1
        rows += [np.array([r0]), np.repeat(r0 + 1 + np.arange(k), n), np.array([r0 + k + 1])]
        cols += [np.array([n]), np.tile(np.arange(n), k), np.array([n])]
        vals += [np.array([-2.0 * lam]), -2.0 * F.ravel(), np.array([-2.0 * lam])]
        rhs += [np.array([1.0]), np.zeros(k), np.array([-1.0])]
        cones.append(clarabel.SecondOrderConeT(k + 2))
        heads.append((r0, r0 + k + 1))
        r0 += k + 2
    A = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r0, n + 1))
    q = np.concatenate([-b, [1.0]])
    P = sp.csc_matrix((n + 1, n + 1))
    out = clarabel_direct(P, q, A, np.concatenate(rhs), cones, tol)
    if out is None:
        return None
    x, z = out
    mu = np.array([2.0 * lam * (z[i] + z[j]) for i, j in heads])
    return x[:n], mu
