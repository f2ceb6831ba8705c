"""Compiled loop of :func:`cutplane.reduced.simplex_qp.solve_simplex_qp` (numba, one call per solve).

The primal active-set method of that module, whole. The support ``S`` is a boolean mask plus its
sorted index list; ``H`` is read through its symmetric part, one row at a time, the rows of the
coordinates that enter ``S`` (``O(n)`` each; the whole matrix is never touched). The reduced
Hessian of the face, ``M = Z^T H_SS Z`` in a basis ``Z = [e_r - e_r0]`` of ``sum p = 0``, is kept
factorised, ``M = L L^T``, and updated when ``S`` changes: a coordinate that enters borders ``L``
with one row (``O(s^2)``), one that leaves has its row deleted and the triangle restored by Givens
rotations (``O(s^2)``); only when the reference ``r0`` leaves, or a face is singular, is the factor
rebuilt (``O(s^3)``, ``r0`` the smallest index of ``S``, as in the first version).
The factor's functions come first: :func:`_append` borders it, :func:`_remove` deletes a row and
restores the triangle, :func:`_refactor` rebuilds it, :func:`_face_step` is the Newton step on the
face, or a null direction of ``M`` when the face is numerically singular (:func:`_usable`). The singularity
test is that of the Python version, ``min L_ii^2 > rtol max |M_ii|`` (an updated factor that fails
it is rebuilt and tested again); on a singular face ``p`` is the eigenvector of the smallest
eigenvalue of ``M`` (``np.linalg.eigh``), a direction with ``H_SS p ~ 0``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["active_set_kernel"]

_STATUS_OK = 0
_STATUS_NONFINITE = 1


# ------------------------------------------------------------------ the face factor
# The face factor: ``M = Z^T H_SS Z`` in the basis ``Z = [e_r - e_r0 : r in order[:m]]`` of
# ``sum p = 0`` (``r0`` a member of ``S``, ``order`` the others in the order they were factorised),
# ``M = L L^T`` with ``L`` in the leading ``m x m`` block of an ``(n, n)`` buffer, ``Mdiag`` its
# diagonal, ``pos[r]`` the place of ``r`` in ``order`` (-1 for ``r0``), ``meta = [m, r0, valid]``.


@njit(cache=True, nogil=True, error_model="numpy")
def _m_entry(Hs, r0, a, b):
    return Hs[a, b] - Hs[a, r0] - Hs[b, r0] + Hs[r0, r0]


@njit(cache=True, nogil=True, error_model="numpy")
def _append(Hs, j, L, order, pos, Mdiag, meta):
    """Border the factor with ``e_j - e_r0`` (``O(m^2)``); an invalid factor when the pivot is not > 0."""
    if meta[2] == 0:
        return
    m = meta[0]
    r0 = meta[1]
    d2 = _m_entry(Hs, r0, j, j)
    Mdiag[m] = d2
    for a in range(m):  # L[m, :m] = L^{-1} M[:m, m]
        v = _m_entry(Hs, r0, order[a], j)
        for k in range(a):
            v -= L[a, k] * L[m, k]
        v /= L[a, a]
        L[m, a] = v
        d2 -= v * v
    if not (d2 > 0.0 and np.isfinite(d2)):
        meta[2] = 0
        return
    L[m, m] = np.sqrt(d2)
    order[m] = j
    pos[j] = m
    meta[0] = m + 1


@njit(cache=True, nogil=True, error_model="numpy")
def _refactor(Hs, idx, s, L, order, pos, Mdiag, meta):
    """A fresh factor of the face of ``S = idx[:s]`` with ``r0 = idx[0]`` (``O(s^3)``)."""
    meta[0] = 0
    meta[1] = idx[0]
    meta[2] = 1
    pos[idx[0]] = -1
    for k in range(1, s):
        _append(Hs, idx[k], L, order, pos, Mdiag, meta)


@njit(cache=True, nogil=True, error_model="numpy")
def _remove(r, L, order, pos, Mdiag, meta):
    """Drop ``r`` from the factor: delete its row, restore the triangle by Givens rotations of
    adjacent columns (``O(m^2)``); removing ``r0`` invalidates the factor (rebuilt on use)."""
    if meta[2] == 0:
        return
    if r == meta[1]:
        meta[2] = 0
        return
    m = meta[0]
    q = pos[r]
    for i in range(q, m - 1):
        for k in range(i + 2):
            L[i, k] = L[i + 1, k]
        order[i] = order[i + 1]
        pos[order[i]] = i
        Mdiag[i] = Mdiag[i + 1]
    for k in range(q, m - 1):  # row k has one entry above the diagonal, L[k, k+1]
        x = L[k, k]
        y = L[k, k + 1]
        h = np.hypot(x, y)
        if not h > 0.0:
            meta[2] = 0
            return
        cs = x / h
        sn = y / h
        for i in range(k, m - 1):
            u = L[i, k]
            v = L[i, k + 1]
            L[i, k] = cs * u + sn * v
            L[i, k + 1] = cs * v - sn * u
        L[k, k + 1] = 0.0
    meta[0] = m - 1


@njit(cache=True, nogil=True, error_model="numpy")
def _usable(L, Mdiag, m, rtol):
    """The singularity test: ``min L_ii^2 > rtol max |M_ii|``."""
    diag_max = 0.0
    for i in range(m):
        diag_max = max(diag_max, abs(Mdiag[i]))
    if not diag_max > 0.0:
        return False
    for i in range(m):
        if not L[i, i] * L[i, i] > rtol * diag_max:
            return False
    return True


@njit(cache=True, nogil=True, error_model="numpy")
def _face_step(Hs, idx, s, g, p, rtol, L, order, pos, Mdiag, meta):
    """Newton step on the face of ``S = idx[:s]``: fills ``p[:s]`` (``sum p = 0``); returns ``full``.

    ``full`` is True for the minimiser of ``g_S^T p + 1/2 p^T H_SS p`` on ``sum p = 0``; False
    when the reduced Hessian is numerically singular, and then ``p`` spans ``H_SS p ~ 0``.
    """
    fresh = meta[2] == 0
    if fresh:
        _refactor(Hs, idx, s, L, order, pos, Mdiag, meta)
    m = meta[0]
    if m == 0 and meta[2] == 1:  # a vertex
        p[0] = 0.0
        return True
    ok = meta[2] == 1 and _usable(L, Mdiag, m, rtol)
    if not ok and not fresh:  # updated factor failed the test: try a fresh one
        _refactor(Hs, idx, s, L, order, pos, Mdiag, meta)
        m = meta[0]
        ok = meta[2] == 1 and _usable(L, Mdiag, m, rtol)
    if ok:
        r0 = meta[1]
        y = np.empty(m)  # L y = -(g_order - g_r0)
        for i in range(m):
            v = g[r0] - g[order[i]]
            for k in range(i):
                v -= L[i, k] * y[k]
            y[i] = v / L[i, i]
        for i in range(m - 1, -1, -1):  # L^T q = y, by columns of L^T (rows of L), q in y
            y[i] /= L[i, i]
            for k in range(i):
                y[k] -= L[i, k] * y[i]
        total = 0.0
        for k in range(s):
            r = idx[k]
            if r == r0:
                continue
            p[k] = y[pos[r]]
            total += p[k]
        for k in range(s):
            if idx[k] == r0:
                p[k] = -total
        return True
    meta[2] = 0  # singular face: M in the basis e_r - e_idx[0]
    sm = s - 1
    i0 = idx[0]
    M = np.empty((sm, sm))
    diag_max = 0.0
    for a in range(sm):
        for b in range(a + 1):
            v = _m_entry(Hs, i0, idx[a + 1], idx[b + 1])
            M[a, b] = v
            M[b, a] = v
        diag_max = max(diag_max, abs(M[a, a]))
    total = 0.0
    if diag_max > 0.0:
        evals, evecs = np.linalg.eigh(M)
        for i in range(sm):
            p[i + 1] = evecs[i, 0]
            total += evecs[i, 0]
    else:  # M = 0: every direction of the face is null
        p[1] = 1.0
        total = 1.0
        for i in range(1, sm):
            p[i + 1] = 0.0
    p[0] = -total
    return False


@njit(cache=True, nogil=True, error_model="numpy")
def _install(Hs, in_S, idx, s, f_members, f_L, L, order, pos, Mdiag, meta):
    """Adopt a factor of an earlier face (``f_members = [r0, order...]``, ``f_L`` its ``L``), then
    bring it to the face of ``S = idx[:s]``: members outside ``S`` removed, members of ``S``
    missing from it appended (``O(m^2)`` each). The factor is refused (left invalid: rebuilt on
    first use) when a member is out of range or repeated, ``r0`` is not in ``S``, or a diagonal
    entry ``sum_k L_ik^2`` of a member in ``S`` differs from ``M_ii`` of this ``H`` by more than
    ``1e-8`` relative (another ``H``, or rounding drift of the updates)."""
    n = in_S.shape[0]
    m = f_members.shape[0] - 1
    meta[2] = 0
    if m < 0 or f_L.shape[0] != m or f_L.shape[1] != m:
        return
    member = np.zeros(n, dtype=np.bool_)
    for k in range(m + 1):
        r = f_members[k]
        if r < 0 or r >= n or member[r]:
            return
        member[r] = True
    r0 = f_members[0]
    if not in_S[r0]:
        return
    for i in range(m):
        a = f_members[i + 1]
        order[i] = a
        pos[a] = i
        total = 0.0
        for k in range(i + 1):
            L[i, k] = f_L[i, k]
            total += f_L[i, k] * f_L[i, k]
        Mdiag[i] = total
        if in_S[a]:
            d = _m_entry(Hs, r0, a, a)
            if not (np.isfinite(total) and abs(total - d) <= 1e-8 * (abs(d) + abs(total)) + 1e-300):
                return
            Mdiag[i] = d
    pos[r0] = -1
    meta[0] = m
    meta[1] = r0
    meta[2] = 1
    for i in range(m - 1, -1, -1):
        a = f_members[i + 1]
        if not in_S[a]:
            _remove(a, L, order, pos, Mdiag, meta)
    for k in range(s):
        r = idx[k]
        if not member[r]:
            _append(Hs, r, L, order, pos, Mdiag, meta)


# ------------------------------------------------------------------ the active-set loop
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
def active_set_kernel(H, c, alpha0, tol, max_iter, rtol, f_members, f_L):
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
    f_members : ndarray of int64 of shape (m + 1,) or (0,)
        A face factor to start from (see :func:`_install`): ``r0`` then the factor's order,
        indices into this ``H``; empty for none.
    f_L : ndarray of shape (m, m)
        Its lower triangle ``L`` (``M = L L^T``); ignored when ``f_members`` is empty.

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
    members : ndarray of int64 of shape (m + 1,) or (0,)
        The face factor at the end, ``r0`` then its order (empty when it is not valid then).
    L_out : ndarray of shape (m, m)
        Its lower triangle (zeros above the diagonal).
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
        return _STATUS_NONFINITE, alpha, 0, np.nan, np.nan, tol, np.empty(0, dtype=np.int64), np.zeros((0, 0))
    if np.isnan(tol):
        tol = 1e-11 * (1.0 + cmax + hmax)
    _start(H, c, alpha0, alpha)

    Hs = np.empty((n, n))  # symmetric rows, filled on first use
    have = np.zeros(n, dtype=np.bool_)
    in_S = np.zeros(n, dtype=np.bool_)
    idx = np.empty(n, dtype=np.int64)
    g = np.empty(n)
    p = np.empty(n)
    hit = np.empty(n, dtype=np.bool_)
    L = np.empty((n, n))  # the face factor (see _append)
    order = np.empty(n, dtype=np.int64)
    pos = np.empty(n, dtype=np.int64)
    Mdiag = np.empty(n)
    meta = np.zeros(3, dtype=np.int64)  # [m, r0, valid]: invalid, built on first use
    s = _support(alpha, in_S, idx)
    if not _rows_of_support(H, Hs, have, idx, s):
        return _STATUS_NONFINITE, alpha, 0, np.nan, np.nan, tol, np.empty(0, dtype=np.int64), np.zeros((0, 0))
    _gradient(Hs, c, alpha, idx, s, g)
    if f_members.shape[0] > 0:
        _install(Hs, in_S, idx, s, f_members, f_L, L, order, pos, Mdiag, meta)
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
            for r in range(n):  # most violated multiplier (first of ties)
                if not in_S[r] and (j < 0 or g[r] < gj):
                    j = r
                    gj = g[r]
            if gj >= tau - tol:
                break
            if not _ensure_row(H, Hs, have, j):
                return _STATUS_NONFINITE, alpha, it, np.nan, np.nan, tol, np.empty(0, dtype=np.int64), np.zeros((0, 0))
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
            if slope > 0.0:  # f is linear along a null direction: go downhill
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
        else:  # a null direction with no negative entry: impossible
            break
        n_hit = 0
        only = -1
        if t < 1.0 or not full:  # the blocking coordinates (ratios before the step)
            bound = t_block * (1.0 + 1e-12)
            for k in range(s):
                hit[k] = p[k] < 0.0 and alpha[idx[k]] / -p[k] <= bound
                if hit[k]:
                    n_hit += 1
                    only = idx[k]
        for k in range(s):  # alpha_S += t p, g += H[:, S] (t p)
            step = t * p[k]
            if step != 0.0:
                r = idx[k]
                alpha[r] += step
                for i in range(n):
                    g[i] += Hs[r, i] * step
        if t < 1.0 or not full:
            if t == 0.0 and n_hit == 1 and only == added:
                break  # degenerate: the entering index leaves at once (stall)
            total = 0.0
            for k in range(s):
                r = idx[k]
                if hit[k] or alpha[r] < 0.0:
                    alpha[r] = 0.0
                total += alpha[r]
            if not total > 0.0:  # cannot happen in exact arithmetic (sum p = 0)
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
    if not total > 0.0:  # unreachable safeguard
        _start(H, c, alpha[:0], alpha)
        total = 1.0
    for r in range(n):
        alpha[r] /= total
    s = _support(alpha, in_S, idx)
    if not _rows_of_support(H, Hs, have, idx, s):
        return _STATUS_NONFINITE, alpha, it, np.nan, np.nan, tol, np.empty(0, dtype=np.int64), np.zeros((0, 0))
    _gradient(Hs, c, alpha, idx, s, g)
    gmin = np.inf
    ag = 0.0
    value = 0.0
    for r in range(n):
        if g[r] < gmin:
            gmin = g[r]
        ag += alpha[r] * g[r]
        value += 0.5 * alpha[r] * (g[r] - c[r])  # 1/2 a^T H a - c^T a, with H a = g + c
    fw_gap = ag - gmin
    if fw_gap < 0.0:
        fw_gap = 0.0
    if meta[2] == 0:
        return _STATUS_OK, alpha, it, value, fw_gap, tol, np.empty(0, dtype=np.int64), np.zeros((0, 0))
    m = meta[0]
    members = np.empty(m + 1, dtype=np.int64)
    members[0] = meta[1]
    L_out = np.zeros((m, m))
    for i in range(m):
        members[i + 1] = order[i]
        for k in range(i + 1):
            L_out[i, k] = L[i, k]
    return _STATUS_OK, alpha, it, value, fw_gap, tol, members, L_out
