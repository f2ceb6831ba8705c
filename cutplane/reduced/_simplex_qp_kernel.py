"""Compiled loop of :func:`cutplane.reduced.simplex_qp.solve_simplex_qp` (numba, one call per solve).

The primal active-set method of that module, whole. The support ``S`` is a boolean mask plus its
sorted index list; ``H`` is read through its symmetric part, one row at a time, the rows of the
coordinates that enter ``S`` (``O(n)`` each; the whole matrix is never touched). The reduced
Hessian of the face, ``M = Z^T H_SS Z`` in a basis ``Z = [e_r - e_r0]`` of ``sum p = 0``, is kept
factorised, ``M = L L^T``, and updated when ``S`` changes: a coordinate that enters borders ``L``
with one row (``O(s^2)``), one that leaves has its row deleted and the triangle restored by Givens
rotations (``O(s^2)``); only when the reference ``r0`` leaves, or a face is singular, is the factor
rebuilt (``O(s^3)``, ``r0`` the smallest index of ``S``, as in the first version). The singularity
test is that of the Python version, ``min L_ii^2 > rtol max |M_ii|`` (an updated factor that fails
it is rebuilt and tested again); on a singular face ``p`` is the eigenvector of the smallest
eigenvalue of ``M`` (``np.linalg.eigh``), a direction with ``H_SS p ~ 0``. The factor's functions
are in :mod:`cutplane.reduced._face_factor` (numba's cache of this kernel does not see edits there:
see that module).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._face_factor import _append, _face_step, _remove

__all__ = ["active_set_kernel"]

_STATUS_OK = 0
_STATUS_NONFINITE = 1


@njit(cache=True, nogil=True, error_model="numpy")
def _ensure_row(H, Hs, have, r):
    """Fill ``Hs[r] = (H[r] + H[:, r]) / 2`` once; returns False on a non-finite entry."""
    if have[r]:
        return True
    finite = True
    for i in range(H.shape[0]):
        v = 0.5 * (H[r, i] + H[i, r])
        Hs[r, i] = v
        if not np.isfinite(v):
            finite = False
    have[r] = True
    return finite


@njit(cache=True, nogil=True, error_model="numpy")
def _support(alpha, in_S, idx):
    """``idx[:s]`` = sorted ``{r : alpha_r > 0}``, ``in_S`` its mask; returns ``s``."""
    s = 0
    for r in range(alpha.shape[0]):
        if alpha[r] > 0.0:
            in_S[r] = True
            idx[s] = r
            s += 1
        else:
            in_S[r] = False
    return s


@njit(cache=True, nogil=True, error_model="numpy")
def _gradient(Hs, c, alpha, idx, s, g):
    """``g = H[:, S] alpha_S - c`` from the symmetric rows ``Hs[S]``."""
    n = c.shape[0]
    for i in range(n):
        g[i] = -c[i]
    for k in range(s):
        r = idx[k]
        a = alpha[r]
        for i in range(n):
            g[i] += Hs[r, i] * a


@njit(cache=True, nogil=True, error_model="numpy")
def _start(H, c, alpha0, alpha):
    """``alpha`` = ``alpha0`` clipped at 0 and renormalised, else the best vertex ``argmin H_rr/2 - c_r``."""
    n = c.shape[0]
    total = 0.0
    usable = alpha0.shape[0] == n
    if usable:
        for r in range(n):
            if not np.isfinite(alpha0[r]):
                usable = False
                break
            alpha[r] = alpha0[r] if alpha0[r] > 0.0 else 0.0
            total += alpha[r]
    if usable and total > 0.0:
        for r in range(n):
            alpha[r] /= total
        return
    best = 0
    for r in range(n):
        alpha[r] = 0.0
        if 0.5 * H[r, r] - c[r] < 0.5 * H[best, best] - c[best]:
            best = r
    alpha[best] = 1.0


@njit(cache=True, nogil=True, error_model="numpy")
def _rows_of_support(H, Hs, have, idx, s):
    """Fill the symmetric rows of ``S``; False on a non-finite entry."""
    ok = True
    for k in range(s):
        if not _ensure_row(H, Hs, have, idx[k]):
            ok = False
    return ok


@njit(cache=True, nogil=True, error_model="numpy")
def active_set_kernel(H, c, alpha0, tol, max_iter, rtol):
    """Minimise ``1/2 a^T H a - c^T a`` on the simplex by the active-set method, from ``alpha0``.

    ``H`` is used through ``(H + H^T) / 2``, one row at a time, only the rows of coordinates that
    enter the support (``O(n)`` each, never the whole matrix).

    Parameters
    ----------
    H : ndarray of shape (n, n)
        Positive semi-definite.
    c : ndarray of shape (n,)
    alpha0 : ndarray of shape (n,) or (0,)
        Warm start, clipped at 0 and renormalised; the best vertex ``argmin H_rr / 2 - c_r`` when
        it is empty, has a non-finite entry or no positive one.
    tol : float
        KKT tolerance; NaN for the default ``1e-11 (1 + max|c| + max_r |H_rr|)`` (for a positive
        semi-definite ``H`` the largest diagonal entry is its largest entry).
    max_iter : int
    rtol : float
        Relative pivot floor of the face Cholesky.

    Returns
    -------
    status : int
        0, or 1 when an entry of ``c``, of the diagonal of ``H`` or of a row of ``H`` read by the
        method is not finite (the method stops there).
    alpha : ndarray of shape (n,)
        The answer, a point of the simplex.
    n_iter : int
    value : float
        ``1/2 alpha^T H alpha - c^T alpha``.
    fw_gap : float
        ``<g, alpha> - min_r g_r`` with ``g = H alpha - c``.
    tol : float
        The tolerance used.
    """
    n = c.shape[0]
    alpha = np.zeros(n)
    hmax = 0.0
    cmax = 0.0
    finite = True
    for i in range(n):
        if not (np.isfinite(c[i]) and np.isfinite(H[i, i])):
            finite = False
        else:
            cmax = max(cmax, abs(c[i]))
            hmax = max(hmax, abs(H[i, i]))
    if not finite:
        return _STATUS_NONFINITE, alpha, 0, np.nan, np.nan, tol
    if np.isnan(tol):
        tol = 1e-11 * (1.0 + cmax + hmax)
    _start(H, c, alpha0, alpha)

    Hs = np.empty((n, n))                    # symmetric rows, filled on first use
    have = np.zeros(n, dtype=np.bool_)
    in_S = np.zeros(n, dtype=np.bool_)
    idx = np.empty(n, dtype=np.int64)
    g = np.empty(n)
    p = np.empty(n)
    hit = np.empty(n, dtype=np.bool_)
    L = np.empty((n, n))                     # the face factor (see _append)
    order = np.empty(n, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    Mdiag = np.empty(n)
    meta = np.zeros(3, dtype=np.int64)       # [m, r0, valid]: invalid, built on first use
    s = _support(alpha, in_S, idx)
    if not _rows_of_support(H, Hs, have, idx, s):
        return _STATUS_NONFINITE, alpha, 0, np.nan, np.nan, tol
    _gradient(Hs, c, alpha, idx, s, g)
    at_face_min = False
    added = -1
    it = 0
    while it < max_iter:
        it += 1
        if at_face_min:
            if s == n:
                break
            tau = 0.0
            for k in range(s):
                tau += g[idx[k]]
            tau /= s
            j = -1
            gj = np.inf
            for r in range(n):               # most violated multiplier (first of ties)
                if not in_S[r] and (j < 0 or g[r] < gj):
                    j = r
                    gj = g[r]
            if gj >= tau - tol:
                break
            if not _ensure_row(H, Hs, have, j):
                return _STATUS_NONFINITE, alpha, it, np.nan, np.nan, tol
            in_S[j] = True
            s = 0
            for r in range(n):
                if in_S[r]:
                    idx[s] = r
                    s += 1
            _append(Hs, j, L, order, pos, Mdiag, meta)
            added = j
            at_face_min = False
            continue
        full = _face_step(Hs, idx, s, g, p, rtol, L, order, pos, Mdiag, meta)
        if not full:
            slope = 0.0
            for k in range(s):
                slope += g[idx[k]] * p[k]
            if slope > 0.0:                  # f is linear along a null direction: go downhill
                for k in range(s):
                    p[k] = -p[k]
        t_block = np.inf
        for k in range(s):
            if p[k] < 0.0:
                ratio = alpha[idx[k]] / -p[k]
                if ratio < t_block:
                    t_block = ratio
        if full and t_block >= 1.0:
            t = 1.0
        elif np.isfinite(t_block):
            t = t_block
        else:                                # a null direction with no negative entry: impossible
            break
        n_hit = 0
        only = -1
        if t < 1.0 or not full:              # the blocking coordinates (ratios before the step)
            bound = t_block * (1.0 + 1e-12)
            for k in range(s):
                hit[k] = p[k] < 0.0 and alpha[idx[k]] / -p[k] <= bound
                if hit[k]:
                    n_hit += 1
                    only = idx[k]
        for k in range(s):                   # alpha_S += t p, g += H[:, S] (t p)
            step = t * p[k]
            if step != 0.0:
                r = idx[k]
                alpha[r] += step
                for i in range(n):
                    g[i] += Hs[r, i] * step
        if t < 1.0 or not full:
            if t == 0.0 and n_hit == 1 and only == added:
                break                        # degenerate: the entering index leaves at once (stall)
            total = 0.0
            for k in range(s):
                r = idx[k]
                if hit[k] or alpha[r] < 0.0:
                    alpha[r] = 0.0
                total += alpha[r]
            if not total > 0.0:              # cannot happen in exact arithmetic (sum p = 0)
                break
            for k in range(s):
                r = idx[k]
                alpha[r] /= total
                if not alpha[r] > 0.0:
                    _remove(r, L, order, pos, Mdiag, meta)
            s = _support(alpha, in_S, idx)
            _gradient(Hs, c, alpha, idx, s, g)
            at_face_min = False
        else:
            at_face_min = True
        added = -1

    total = 0.0
    for r in range(n):
        if alpha[r] < 0.0 or not np.isfinite(alpha[r]):
            alpha[r] = 0.0
        total += alpha[r]
    if not total > 0.0:                      # unreachable safeguard
        _start(H, c, alpha[:0], alpha)
        total = 1.0
    for r in range(n):
        alpha[r] /= total
    s = _support(alpha, in_S, idx)
    if not _rows_of_support(H, Hs, have, idx, s):
        return _STATUS_NONFINITE, alpha, it, np.nan, np.nan, tol
    _gradient(Hs, c, alpha, idx, s, g)
    gmin = np.inf
    ag = 0.0
    value = 0.0
    for r in range(n):
        if g[r] < gmin:
            gmin = g[r]
        ag += alpha[r] * g[r]
        value += 0.5 * alpha[r] * (g[r] - c[r])   # 1/2 a^T H a - c^T a, with H a = g + c
    fw_gap = ag - gmin
    if fw_gap < 0.0:
        fw_gap = 0.0
    return _STATUS_OK, alpha, it, value, fw_gap, tol
