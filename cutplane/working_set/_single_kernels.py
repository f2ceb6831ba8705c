"""Compiled products over a block of float32 slopes, accumulated in float64 (numba, ``nogil``).

The working set stores dense slopes as float32 when every stored slope is a float32 vector
(:mod:`cutplane.rounded_cuts`). numpy would multiply a float32 block by a float64 vector by
converting the whole block to float64 first (a temporary as large as the block, written and read
again); these loops read each float32 entry once and accumulate in float64, so the products are
those of the float64 block up to the order of the additions, reading half the bytes of
float64 BLAS's products over a float64 block:

- :func:`rows_dot`: ``out[r] = <S[r], v>`` for the first ``n`` rows, eight rows at a time (one
  load of ``v`` serves eight rows);
- :func:`combine_rows`: ``out = sum_r alpha_r S[r]`` over the rows with ``alpha_r != 0``, eight
  rows per pass over ``out``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["rows_dot", "combine_rows"]

#: Reassociation lets LLVM vectorise the float64 sums (the order of additions changes, the
#: precision does not); no other fast-math flag.
_REASSOC = {"reassoc", "contract"}


@njit(cache=True, nogil=True, fastmath=_REASSOC)
def rows_dot(S, n, v, out):  # pragma: no cover - compiled
    """``out[r] = sum_k float64(S[r, k]) v[k]`` for ``r < n``; S (cap, dim) float32, v (dim,) float64."""
    d = v.shape[0]
    r = 0
    while r + 8 <= n:
        a0 = 0.0
        a1 = 0.0
        a2 = 0.0
        a3 = 0.0
        a4 = 0.0
        a5 = 0.0
        a6 = 0.0
        a7 = 0.0
        for k in range(d):
            x = v[k]
            a0 += np.float64(S[r, k]) * x
            a1 += np.float64(S[r + 1, k]) * x
            a2 += np.float64(S[r + 2, k]) * x
            a3 += np.float64(S[r + 3, k]) * x
            a4 += np.float64(S[r + 4, k]) * x
            a5 += np.float64(S[r + 5, k]) * x
            a6 += np.float64(S[r + 6, k]) * x
            a7 += np.float64(S[r + 7, k]) * x
        out[r] = a0
        out[r + 1] = a1
        out[r + 2] = a2
        out[r + 3] = a3
        out[r + 4] = a4
        out[r + 5] = a5
        out[r + 6] = a6
        out[r + 7] = a7
        r += 8
    while r < n:
        acc = 0.0
        for k in range(d):
            acc += np.float64(S[r, k]) * v[k]
        out[r] = acc
        r += 1


@njit(cache=True, nogil=True, fastmath={"contract"})
def combine_rows(S, alpha, out):  # pragma: no cover - compiled
    """``out = sum_r alpha[r] float64(S[r])`` over ``r < len(alpha)`` with ``alpha[r] != 0``."""
    d = out.shape[0]
    for k in range(d):
        out[k] = 0.0
    m = 0
    for r in range(alpha.shape[0]):
        if alpha[r] != 0.0:
            m += 1
    nz = np.empty(m, dtype=np.int64)
    m = 0
    for r in range(alpha.shape[0]):
        if alpha[r] != 0.0:
            nz[m] = r
            m += 1
    i = 0
    while i + 8 <= m:
        r0 = nz[i]
        r1 = nz[i + 1]
        r2 = nz[i + 2]
        r3 = nz[i + 3]
        r4 = nz[i + 4]
        r5 = nz[i + 5]
        r6 = nz[i + 6]
        r7 = nz[i + 7]
        b0 = alpha[r0]
        b1 = alpha[r1]
        b2 = alpha[r2]
        b3 = alpha[r3]
        b4 = alpha[r4]
        b5 = alpha[r5]
        b6 = alpha[r6]
        b7 = alpha[r7]
        for k in range(d):
            lo = (b0 * np.float64(S[r0, k]) + b1 * np.float64(S[r1, k])) + (
                b2 * np.float64(S[r2, k]) + b3 * np.float64(S[r3, k])
            )
            hi = (b4 * np.float64(S[r4, k]) + b5 * np.float64(S[r5, k])) + (
                b6 * np.float64(S[r6, k]) + b7 * np.float64(S[r7, k])
            )
            out[k] += lo + hi
        i += 8
    while i < m:
        r = nz[i]
        b = alpha[r]
        for k in range(d):
            out[k] += b * np.float64(S[r, k])
        i += 1
