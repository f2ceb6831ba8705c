"""The factorised face of the simplex active-set kernel (numba): :mod:`cutplane.reduced._simplex_qp_kernel`.

On the face of the support ``S`` the reduced Hessian ``M = Z^T H_SS Z`` (basis
``Z = [e_r - e_r0]`` of ``sum p = 0``) is kept as ``M = L L^T``: :func:`_append` borders the
factor with a coordinate that enters ``S`` (``O(s^2)``), :func:`_remove` deletes one that
leaves and restores the triangle by Givens rotations (``O(s^2)``), :func:`_refactor` rebuilds it
(``O(s^3)``); :func:`_face_step` is the Newton step on the face, or a null direction of ``M``
when the face is numerically singular (:func:`_usable`).

numba's on-disk cache of :func:`~cutplane.reduced._simplex_qp_kernel.active_set_kernel`
compiles these functions into it but is invalidated only by edits to its own file: after
editing this one, clear the cache (the ``__pycache__/_simplex_qp_kernel*.nbi`` / ``.nbc``
files) or touch ``_simplex_qp_kernel.py``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["_append", "_face_step", "_remove"]


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
    for a in range(m):                       # L[m, :m] = L^{-1} M[:m, m]
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
    for k in range(q, m - 1):                # row k has one entry above the diagonal, L[k, k+1]
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
    if m == 0 and meta[2] == 1:              # a vertex
        p[0] = 0.0
        return True
    ok = meta[2] == 1 and _usable(L, Mdiag, m, rtol)
    if not ok and not fresh:                 # updated factor failed the test: try a fresh one
        _refactor(Hs, idx, s, L, order, pos, Mdiag, meta)
        m = meta[0]
        ok = meta[2] == 1 and _usable(L, Mdiag, m, rtol)
    if ok:
        r0 = meta[1]
        y = np.empty(m)                      # L y = -(g_order - g_r0)
        for i in range(m):
            v = g[r0] - g[order[i]]
            for k in range(i):
                v -= L[i, k] * y[k]
            y[i] = v / L[i, i]
        for i in range(m - 1, -1, -1):       # L^T q = y, by columns of L^T (rows of L), q in y
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
    meta[2] = 0                              # singular face: M in the basis e_r - e_idx[0]
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
    else:                                    # M = 0: every direction of the face is null
        p[1] = 1.0
        total = 1.0
        for i in range(1, sm):
            p[i + 1] = 0.0
    p[0] = -total
    return False
