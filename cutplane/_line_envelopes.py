"""The piecewise-linear part of the exact line search of :mod:`cutplane.linesearch`.

Each term of ``f(k) = (a2 / 2) k^2 + a1 k + sum_i max_j (c_ij + k s_ij)`` is the upper envelope
of ``m`` lines. Here: the checks of the coefficients (:func:`_check_pieces`), the breakpoints
on ``(0, inf)`` and slope jumps of every row's envelope (:func:`_breakpoints_two`, closed form
for ``m = 2``; :func:`_breakpoints_general`, vectorised rounds for any ``m``) and the value
``f(k)`` (:func:`_f`). :func:`cutplane.linesearch.exact_line_search` sorts the breakpoints and
reads off the zero of the subdifferential.
"""
from __future__ import annotations

import math

import numpy as np

from .exceptions import InputError


def _check_pieces(a2, a1, offsets, slopes):
    for name, val in (("a2", a2), ("a1", a1)):
        if not np.isscalar(val) and np.ndim(val) != 0:
            raise InputError(f"expected a scalar, got an array of shape {np.shape(val)}", field=name)
        if not math.isfinite(float(val)):
            raise InputError(f"must be finite, got {val}", field=name)
    if a2 < 0:
        raise InputError(f"the quadratic coefficient must be >= 0 (f convex), got {a2}", field="a2")
    offsets = np.asarray(offsets, dtype=np.float64)
    slopes = np.asarray(slopes, dtype=np.float64)
    if offsets.ndim != 2 or slopes.ndim != 2:
        raise InputError(f"offsets and slopes must be 2-D (n, m), got shapes {offsets.shape} "
                         f"and {slopes.shape}", field="offsets")
    if offsets.shape != slopes.shape:
        raise InputError(f"offsets {offsets.shape} and slopes {slopes.shape} differ in shape",
                         field="slopes")
    if offsets.shape[0] > 0 and offsets.shape[1] == 0:
        raise InputError("each row needs at least one line (m >= 1)", field="offsets")
    if not (np.isfinite(offsets).all() and np.isfinite(slopes).all()):
        raise InputError("offsets and slopes must be finite", field="offsets")
    return float(a2), float(a1), offsets, slopes


def _breakpoints_two(offsets, slopes):
    """Breakpoints of max(l0, l1) per row, closed form (the binary-hinge case m = 2)."""
    steep = slopes[:, 1] > slopes[:, 0]                  # index of the steeper line
    c_hi = np.where(steep, offsets[:, 1], offsets[:, 0])
    c_lo = np.where(steep, offsets[:, 0], offsets[:, 1])
    s_hi = np.where(steep, slopes[:, 1], slopes[:, 0])
    s_lo = np.where(steep, slopes[:, 0], slopes[:, 1])
    gap = c_lo - c_hi                                    # > 0: the flat line leads at k = 0
    jump = s_hi - s_lo
    start = float(np.where(gap > 0, s_lo, s_hi).sum())
    mask = (gap > 0) & (jump > 0)
    with np.errstate(over="ignore"):
        t = gap[mask] / jump[mask]
    keep = np.isfinite(t)                                # a crossing beyond float range: never
    return start, t[keep], jump[mask][keep]


def _breakpoints_general(offsets, slopes):
    """Breakpoints of the upper envelope of m lines per row, vectorised over rows.

    Walks each envelope from k = 0 rightwards; a round finds, for every row still active,
    the steeper line that overtakes the current one first. The slope increases strictly
    at each step, so there are at most m - 1 rounds, each one an (n_active, m) array op,
    and the rows drop out as their envelope ends. Concurrent crossings (ties, or several
    lines through one point) are resolved over successive rounds as breakpoints at the
    same k, so ties need no special case: only the sum of the jumps at a point matters.
    """
    n, m = offsets.shape
    rows = np.arange(n)
    cur = offsets.argmax(axis=1)
    start = float(slopes[rows, cur].sum())
    C, S, k_cur = offsets, slopes, np.zeros(n)
    ks, jumps = [], []
    for _ in range(m - 1):
        ar = np.arange(C.shape[0])
        cj, sj = C[ar, cur], S[ar, cur]
        ds = S - sj[:, None]
        t = cj[:, None] - C
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            np.divide(t, ds, out=t)
        t[ds <= 0] = np.inf                               # only steeper lines can overtake
        nxt = t.argmin(axis=1)
        tmin = t[ar, nxt]
        has = tmin < np.inf
        if not has.any():
            break
        cur, k_cur = nxt[has], np.maximum(tmin[has], k_cur[has])  # rounding: never step back
        ks.append(k_cur)
        jumps.append(S[ar[has], cur] - sj[has])
        C, S = C[has], S[has]
    if not ks:
        return start, np.empty(0), np.empty(0)
    return start, np.concatenate(ks), np.concatenate(jumps)


def _f(a2, a1, offsets, slopes, k):
    if offsets.shape[0] == 0:
        return 0.5 * a2 * k * k + a1 * k
    lines = offsets + k * slopes
    best = np.take_along_axis(lines, lines.argmax(axis=1)[:, None], axis=1)
    return float(0.5 * a2 * k * k + a1 * k + best.sum())
