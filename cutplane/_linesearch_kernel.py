"""Compiled exact line search for two lines per term (numba): the binary hinge's pieces.

:func:`two_line_search` is :func:`cutplane.linesearch.exact_line_search`'s ``m = 2`` path in one
compiled pass and a selection: the breakpoints of ``max(l0, l1)`` per term in closed form (the
line with the larger offset leads at ``k = 0+``, the steeper one on a tie; the other overtakes it
at ``k = -dc / ds > 0`` when it is steeper and below, the slope jumping by ``|ds|``), then the
root of the non-decreasing ``f'(k+) = a2 k + g0 + sum_{bk_i <= k} jump_i`` by three-way
partitions around a median-of-three pivot (expected linear time), the last few breakpoints
sorted and scanned as in Franc & Sonnenburg. The scratch arrays come from the caller (no
allocation in the compiled code, which would compile numpy's allocators in every new process).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["two_line_search"]

_SMALL = 16  # ranges up to this size are sorted by insertion and scanned


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _piece_root(a2, g_prev, lo, b):
    """The root in the piece ``(lo, b]`` whose right end has ``f'(b+) >= 0``: inside the
    piece when ``f'(b-) = a2 b + g_prev >= 0`` (and ``a2 > 0``), else at ``b`` itself."""
    if a2 > 0.0 and a2 * b + g_prev >= 0.0:
        r = -g_prev / a2
        if r < lo:
            r = lo
        if r > b:
            r = b
        return r
    return b


@njit(cache=True, nogil=True, error_model="numpy")
def two_line_search(a1, a2, offsets, slopes, bk, jump):
    """The smallest minimiser over ``k >= 0`` of ``a2/2 k^2 + a1 k + sum_i max_j (c_ij + k s_ij)``.

    Parameters
    ----------
    a1, a2 : float
        Linear and quadratic coefficients (``a2 >= 0``).
    offsets, slopes : ndarray of shape (n, 2)
        ``c_ij`` and ``s_ij``, finite.
    bk, jump : ndarray of shape (n,)
        Scratch space (overwritten).

    Returns
    -------
    k : float
        The minimiser; ``inf`` when ``a2 = 0`` and ``f`` decreases for ever.
    n_bk : int
        The breakpoints on ``(0, inf)``.
    """
    n = offsets.shape[0]
    start = 0.0
    cnt = 0
    for i in range(n):
        c0 = offsets[i, 0]
        s0 = slopes[i, 0]
        s1 = slopes[i, 1]
        dc = offsets[i, 1] - c0
        ds = s1 - s0
        if dc > 0.0:
            start += s1
        elif dc < 0.0:
            start += s0
        elif s1 > s0:
            start += s1
        else:
            start += s0
        if (dc < 0.0 and ds > 0.0) or (dc > 0.0 and ds < 0.0):
            t = -dc / ds
            if t < np.inf:  # a crossing beyond float range (or NaN): never
                bk[cnt] = t
                jump[cnt] = ds if ds > 0.0 else -ds
                cnt += 1
    g = a1 + start  # f'(0+)
    if not g < 0.0:
        return 0.0, cnt
    lo = 0.0  # every breakpoint left of the range [i0, i1) is <= lo; g counts their jumps
    i0 = 0
    i1 = cnt
    while i1 - i0 > _SMALL:
        a = bk[i0]
        b = bk[(i0 + i1) // 2]
        c = bk[i1 - 1]
        if a > b:  # median of three, without the min / max builtins (compiled per process)
            a, b = b, a
        p = b if b < c else (c if c > a else a)
        lt = i0
        i = i0
        gt = i1
        s_lt = 0.0
        s_eq = 0.0
        max_lt = -np.inf
        while i < gt:  # [i0, lt) < p, [lt, i) == p, [gt, i1) > p
            v = bk[i]
            if v < p:
                u = jump[i]
                bk[i] = bk[lt]
                jump[i] = jump[lt]
                bk[lt] = v
                jump[lt] = u
                s_lt += u
                if v > max_lt:
                    max_lt = v
                lt += 1
                i += 1
            elif v > p:
                gt -= 1
                u = jump[i]
                bk[i] = bk[gt]
                jump[i] = jump[gt]
                bk[gt] = v
                jump[gt] = u
            else:
                s_eq += jump[i]
                i += 1
        if a2 * p + g + s_lt + s_eq < 0.0:  # f'(p+) < 0: the root is right of p
            g += s_lt + s_eq
            lo = p
            i0 = gt
        elif lt > i0 and a2 * max_lt + g + s_lt >= 0.0:  # already at the largest below p
            i1 = lt
        else:  # at a breakpoint equal to p: the first of them with f'(p+) >= 0
            g_prev = g + s_lt
            lo_b = max_lt if lt > i0 else lo
            for j in range(lt, gt):
                if a2 * p + g_prev + jump[j] >= 0.0:
                    return _piece_root(a2, g_prev, lo_b, p), cnt
                g_prev += jump[j]
                lo_b = p
            return p, cnt  # not reached: the jumps equal to p bring f'(p+) to >= 0
    for j in range(i0 + 1, i1):  # insertion sort of the last few, jumps alongside
        v = bk[j]
        u = jump[j]
        q = j - 1
        while q >= i0 and bk[q] > v:
            bk[q + 1] = bk[q]
            jump[q + 1] = jump[q]
            q -= 1
        bk[q + 1] = v
        jump[q + 1] = u
    for j in range(i0, i1):
        if a2 * bk[j] + g + jump[j] >= 0.0:
            return _piece_root(a2, g, lo, bk[j]), cnt
        g += jump[j]
        lo = bk[j]
    if a2 > 0.0:
        r = -g / a2
        return (r if r > lo else lo), cnt
    return np.inf, cnt
