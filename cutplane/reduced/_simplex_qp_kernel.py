"""Compiled loop of :func:`cutplane.reduced.simplex_qp.solve_simplex_qp` (numba, one call per solve).

The primal active-set method of that module, whole: the support ``S`` is a boolean mask plus
its sorted index list, the reduced Hessian ``M = Z^T H_SS Z`` of the face (``Z = [e_i - e_0]``)
is built in a fresh array, factorised by a hand-written Cholesky that stops at the first pivot
below ``rtol * max|diag M|`` (the singularity test of the Python version, ``d.min()^2 > rtol *
diag_max``), and replaced by the eigenvector of the smallest eigenvalue (``np.linalg.eigh``)
on a singular face. Inputs are contiguous float64 arrays already checked by the caller.
"""
from __future__ import annotations

import numpy as np
from numba import njit

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
def _face_step(Hs, idx, s, g, p, rtol):
    """Newton step on the face of ``S = idx[:s]``: fills ``p[:s]`` (``sum p = 0``); returns ``full``.

    ``full`` is True for the minimiser of ``g_S^T p + 1/2 p^T H_SS p`` on ``sum p = 0``; False
    when the reduced Hessian is numerically singular, and then ``p`` spans ``H_SS p ~ 0``.
    """
    if s == 1:
        p[0] = 0.0
        return True
    m = s - 1
    i0 = idx[0]
    h00 = Hs[i0, i0]
    M = np.empty((m, m))
    diag_max = 0.0
    for a in range(m):
        ia = idx[a + 1]
        ha0 = Hs[ia, i0]
        for b in range(a + 1):
            ib = idx[b + 1]
            v = Hs[ia, ib] - ha0 - Hs[ib, i0] + h00
            M[a, b] = v
            M[b, a] = v
        if abs(M[a, a]) > diag_max:
            diag_max = abs(M[a, a])
    ok = diag_max > 0.0
    L = np.zeros((m, m))
    if ok:                                   # Cholesky M = L L^T, lower triangle of L
        floor = rtol * diag_max
        for j in range(m):
            d = M[j, j]
            for k in range(j):
                d -= L[j, k] * L[j, k]
            if not (d > floor) or not np.isfinite(d):
                ok = False
                break
            d = np.sqrt(d)
            L[j, j] = d
            for i in range(j + 1, m):
                v = M[i, j]
                for k in range(j):
                    v -= L[i, k] * L[j, k]
                L[i, j] = v / d
    if ok:
        y = np.empty(m)                      # L y = -(g_S[1:] - g_S[0])
        gs0 = g[i0]
        for i in range(m):
            v = gs0 - g[idx[i + 1]]
            for k in range(i):
                v -= L[i, k] * y[k]
            y[i] = v / L[i, i]
        total = 0.0                          # L^T q = y, q stored in p[1:]
        for i in range(m - 1, -1, -1):
            v = y[i]
            for k in range(i + 1, m):
                v -= L[k, i] * p[k + 1]
            v /= L[i, i]
            p[i + 1] = v
            total += v
        p[0] = -total
        return True
    total = 0.0
    if diag_max > 0.0:
        evals, evecs = np.linalg.eigh(M)
        for i in range(m):
            p[i + 1] = evecs[i, 0]
            total += evecs[i, 0]
    else:                                    # M = 0: every direction of the face is null
        p[1] = 1.0
        total = 1.0
        for i in range(1, m):
            p[i + 1] = 0.0
    p[0] = -total
    return False


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
            added = j
            at_face_min = False
            continue
        full = _face_step(Hs, idx, s, g, p, rtol)
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
                alpha[idx[k]] /= total
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
