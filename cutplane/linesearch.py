"""Line search along a direction for LS-BMRM / OCAS (Franc et al. 2012, Alg. 1.4, line 7, eq. 15-16).

Along ``w(k) = w_b + k d`` the objective ``F(w) = lam/2 ||w||^2 + R(w)`` becomes, up to the
constant ``lam/2 ||w_b||^2``,

    f(k) = (a2 / 2) k^2 + a1 k + sum_i max_j (c_ij + k s_ij),   k >= 0,

with ``a2 = lam ||d||^2``, ``a1 = lam <w_b, d>``, ``c_ij = u_ij + <v_ij, w_b>`` and
``s_ij = <v_ij, d>`` when the risk has the form (16)
``R(w) = sum_i max_j (u_ij + <v_ij, w>)``.  Oracles of that form offer
``line_search_pieces(w, d) -> (offsets, slopes)`` and ``supports_line_search = True``.

:func:`exact_line_search` minimises ``f`` exactly (Franc & Sonnenburg): each term is the
upper envelope of ``m`` lines, a convex piecewise-linear function whose breakpoints on
``(0, inf)`` and slope jumps are found for all rows at once; the ``O(n m)`` breakpoints are
sorted and the zero crossing of the (increasing) subdifferential
``df(k) = a2 k + a1 + sum of the active slopes`` is read off in ``O(n m log(n m))`` (the
envelopes' breakpoints: :func:`_breakpoints_two`, closed form for ``m = 2``;
:func:`_breakpoints_general`, vectorised rounds for any ``m``).
:func:`line_search` is the fallback for risks without that form: a safeguarded 1-D convex
search (bracketing by doubling, then Brent's golden-section / parabolic steps).
:func:`piecewise_linear_search` is exact for risks piecewise linear along the line whose pieces
are too many to list (pairwise hinges) or not of form (16) (a profiled offset): it locates the
minimiser's piece from values and right derivatives, each one pass over the data.
:func:`minimize_along` chooses between them for an oracle.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from .exceptions import InputError
from .protocols import piecewise_linear_along, supports_line_search

__all__ = ["LineSearchResult", "exact_line_search", "line_search", "minimize_along", "piecewise_linear_search"]

_GOLDEN = 0.5 * (3.0 - math.sqrt(5.0))


# ----------------------------------------------------------- envelopes of the pieces
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
        raise InputError(
            f"offsets and slopes must be 2-D (n, m), got shapes {offsets.shape} and {slopes.shape}", field="offsets"
        )
    if offsets.shape != slopes.shape:
        raise InputError(f"offsets {offsets.shape} and slopes {slopes.shape} differ in shape", field="slopes")
    if offsets.shape[0] > 0 and offsets.shape[1] == 0:
        raise InputError("each row needs at least one line (m >= 1)", field="offsets")
    if not (np.isfinite(offsets).all() and np.isfinite(slopes).all()):
        raise InputError("offsets and slopes must be finite", field="offsets")
    return float(a2), float(a1), offsets, slopes


def _breakpoints_two(offsets, slopes):
    """Breakpoints of max(l0, l1) per row, closed form (the binary-hinge case m = 2).

    With ``dc = c1 - c0`` and ``ds = s1 - s0``: the line with the larger offset leads at
    ``k = 0+`` (the steeper one on a tie), and the other overtakes it at ``k = -dc / ds > 0``
    exactly when it is steeper and below (``dc ds < 0``), the slope jumping by ``|ds|``.
    """
    s0, s1 = slopes[:, 0], slopes[:, 1]
    dc = offsets[:, 1] - offsets[:, 0]
    ds = s1 - s0
    # the leading slopes themselves summed (a sum of differences would leave rounding residue,
    # e.g. -3e-16 for a flat envelope, and turn a flat line into an unbounded one)
    start = float(np.where(dc > 0.0, s1, np.where(dc < 0.0, s0, np.maximum(s0, s1))).sum())
    mask = ((dc < 0.0) & (ds > 0.0)) | ((dc > 0.0) & (ds < 0.0))
    ds = ds[mask]
    with np.errstate(over="ignore"):
        t = -dc[mask] / ds
    keep = np.isfinite(t)  # a crossing beyond float range: never
    return start, t[keep], np.abs(ds[keep])


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
        t[ds <= 0] = np.inf  # only steeper lines can overtake
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
    if offsets.shape[1] == 2:  # the same maximum, without the argmax and gather
        best2 = np.maximum(offsets[:, 0] + k * slopes[:, 0], offsets[:, 1] + k * slopes[:, 1])
        return float(0.5 * a2 * k * k + a1 * k + best2.sum())
    lines = offsets + k * slopes
    best = np.take_along_axis(lines, lines.argmax(axis=1)[:, None], axis=1)
    return float(0.5 * a2 * k * k + a1 * k + best.sum())


#: Above this many breakpoints :func:`_root` halves the set by selection before it sorts.
_SORT_BELOW = 4096

#: From this many terms on, two lines per term (the binary hinge) are searched by the compiled
#: pass of :mod:`cutplane._linesearch_kernel` (below it, numpy: a small fit loads no kernel) ...
COMPILED_MIN_TERMS = 4096
#: ... once this many such searches have run in numpy in the process: the compiled pass's first
#: call loads it from numba's disk cache, which costs about as much as this many numpy searches of
#: a large fit lose against it, so a fit of a few iterations never pays it and a long one pays at
#: most twice the best choice in hindsight (the ski-rental rule). The fresh-process fits of
#: ``python -m benchmarks.linear_svm --fresh-process`` time it (``docs/results/linear_svm_fresh.md``).
COMPILED_AFTER = 70
_numpy_searches = 0  # searches of at least COMPILED_MIN_TERMS terms run in numpy in this process


def _compiled_now(n) -> bool:
    """Whether a search of ``n`` two-line terms takes the compiled pass (counts the others)."""
    global _numpy_searches
    if n < COMPILED_MIN_TERMS:
        return False
    if _numpy_searches >= COMPILED_AFTER:
        return True
    _numpy_searches += 1
    return False


def _root(a2, g0, bk, jump):
    """The smallest ``k >= 0`` with ``0`` in ``df(k)``, given ``f'(0+) = g0 < 0``.

    ``f'(k+) = a2 k + g0 + sum_{bk_i <= k} jump_i`` is non-decreasing (``jump > 0``, ``a2 >= 0``).
    While many breakpoints remain, the median one (``np.partition``, linear time) says on which
    side the root lies, and the other half is dropped, its jumps folded into ``g0`` when it lies
    left of the root; the few that remain are sorted and scanned as in Franc & Sonnenburg. Linear
    expected time instead of ``O(n log n)``; the same root up to the rounding of the sums.
    ``inf`` when ``a2 = 0`` and ``f'`` stays negative (unbounded below).
    """
    lo = 0.0  # every breakpoint dropped on the left is <= lo
    while bk.size > _SORT_BELOW:
        mid = bk.size // 2
        pivot = float(np.partition(bk, mid)[mid])
        left = bk <= pivot
        g_left = g0 + float(jump[left].sum())
        if a2 * pivot + g_left >= 0.0:  # f'(pivot+) >= 0: the root is at or before the pivot
            if left.all():  # ties up to the largest: no progress by halving
                break
            bk, jump = bk[left], jump[left]
        else:
            g0, lo = g_left, pivot
            right = ~left
            bk, jump = bk[right], jump[right]
    order = np.argsort(bk)
    bk = bk[order]
    g = g0 + np.cumsum(jump[order])  # the constant part of f' right of each breakpoint
    hit = np.flatnonzero(a2 * bk + g >= 0.0)  # f'(bk+) >= 0
    if hit.size:
        b = int(hit[0])
        g_prev = g[b - 1] if b > 0 else g0
        lo = float(bk[b - 1]) if b > 0 else lo
        if a2 > 0.0 and a2 * bk[b] + g_prev >= 0.0:  # f'(bk-) >= 0: root inside the piece
            return min(max(-g_prev / a2, lo), float(bk[b]))
        return float(bk[b])  # 0 in [f'(bk-), f'(bk+)]
    g_last = float(g[-1]) if bk.size else g0
    lo = float(bk[-1]) if bk.size else lo
    if a2 > 0.0:
        return max(-g_last / a2, lo)
    return math.inf


class LineSearchResult(NamedTuple):
    """The outcome of a line search over ``k >= 0``.

    Attributes
    ----------
    k : float
        The minimiser (the smallest one when the minimiser set is an interval); ``inf`` when
        ``f`` decreases for ever and the search was exact (see ``unbounded``).
    value : float
        ``f(k)`` (``-inf`` for an unbounded exact search).
    n_breakpoints : int
        Breakpoints of the piecewise-linear part on ``[0, inf)``, counted per term (several
        lines meeting at one point may count more than once); 0 for the generic search.
    n_evals : int
        Evaluations of ``f`` (1 for the exact search: the value at ``k``).
    unbounded : bool
        True when ``f`` is unbounded below along the direction (``a2 = 0`` and a negative
        slope at infinity; for the generic search: still decreasing after the last doubling).
    converged : bool
        False when the generic search ran out of evaluations before its tolerance.
    """

    k: float
    value: float
    n_breakpoints: int
    n_evals: int
    unbounded: bool = False
    converged: bool = True


def exact_line_search(a2, a1, offsets, slopes, *, k_max=None, on_unbounded="flag"):
    """Exact minimiser over ``k >= 0`` of ``(a2/2) k^2 + a1 k + sum_i max_j (c_ij + k s_ij)``.

    Parameters
    ----------
    a2 : float
        Quadratic coefficient, ``>= 0`` (``lam ||d||^2``).
    a1 : float
        Linear coefficient (``lam <w_b, d>``).
    offsets : ndarray of shape (n, m)
        ``c_ij``, the value of line ``j`` of term ``i`` at ``k = 0``.
    slopes : ndarray of shape (n, m)
        ``s_ij``, its slope in ``k``.
    k_max : float, optional
        Upper end of the search interval (by convexity the result is
        ``min(k*, k_max)``).
    on_unbounded : {"flag", "raise"}
        What to do when ``a2 = 0`` and ``f`` decreases for ever (no ``k_max``): return
        ``k = inf``, ``value = -inf``, ``unbounded = True``, or raise :class:`InputError`.

    Returns
    -------
    LineSearchResult
        ``k`` is the smallest minimiser; ``0 in df(k)`` (or ``k = 0`` with
        ``f'(0+) >= 0``, or ``k = k_max``).

    Notes
    -----
    ``m = 2`` (binary hinge) takes a closed-form path, compiled from
    :data:`COMPILED_MIN_TERMS` terms on once :data:`COMPILED_AFTER` searches of that size
    ran in numpy (:mod:`cutplane._linesearch_kernel`: one pass for the
    breakpoints, then three-way partitions, expected ``O(n)``); general ``m`` computes each
    row's envelope with at most ``m - 1`` vectorised rounds, ``O(n m^2)`` in total, then
    sorts the breakpoints, ``O(n m log(n m))``, as in Franc & Sonnenburg (halving them by
    selection first while more than a few thousand remain).
    """
    a2, a1, offsets, slopes = _check_pieces(a2, a1, offsets, slopes)
    if on_unbounded not in ("flag", "raise"):
        raise InputError(f"must be 'flag' or 'raise', got {on_unbounded!r}", field="on_unbounded")
    if k_max is not None and not (float(k_max) >= 0.0):
        raise InputError(f"must be >= 0, got {k_max}", field="k_max")
    n, m = offsets.shape
    if m == 2 and _compiled_now(n):
        k, n_bk = _compiled_two_lines(a2, a1, offsets, slopes)
        return _result(a2, a1, offsets, slopes, k, n_bk, k_max, on_unbounded)
    if n == 0:
        start, bk, jump = 0.0, np.empty(0), np.empty(0)
    elif m == 1:
        start, bk, jump = float(slopes.sum()), np.empty(0), np.empty(0)
    elif m == 2:
        start, bk, jump = _breakpoints_two(offsets, slopes)
    else:
        start, bk, jump = _breakpoints_general(offsets, slopes)
    g0 = a1 + start  # f'(0+)
    k = 0.0 if g0 >= 0.0 else _root(a2, g0, bk, jump)
    return _result(a2, a1, offsets, slopes, k, int(bk.size), k_max, on_unbounded)


def _compiled_two_lines(a2, a1, offsets, slopes):
    """``(k, n_bk)`` of two lines per term by the compiled pass (:mod:`cutplane._linesearch_kernel`)."""
    from ._linesearch_kernel import two_line_search

    n = offsets.shape[0]
    k, n_bk = two_line_search(
        a1, a2, np.ascontiguousarray(offsets), np.ascontiguousarray(slopes), np.empty(n), np.empty(n)
    )
    return float(k), int(n_bk)


def _result(a2, a1, offsets, slopes, k, n_bk, k_max, on_unbounded):
    """The :class:`LineSearchResult` of the root ``k`` (``inf``: unbounded), capped at ``k_max``."""
    unbounded = math.isinf(k)
    if k_max is not None:
        k = min(k, float(k_max))
        unbounded = unbounded and math.isinf(k)
    if unbounded:
        if on_unbounded == "raise":
            raise InputError(
                "f decreases for ever along the direction (a2 = 0 and a negative "
                "slope at infinity): the line search is unbounded",
                field="a2",
            )
        return LineSearchResult(math.inf, -math.inf, n_bk, 0, unbounded=True)
    return LineSearchResult(float(k), _f(a2, a1, offsets, slopes, k), n_bk, 1)


def piecewise_linear_search(a2, a1, phi, *, max_evals=60):
    """Exact minimiser over ``k >= 0`` of ``(a2/2) k^2 + a1 k + g(k)``, ``g`` convex piecewise linear,
    known only through ``phi(k) -> (g(k), g'(k+))``.

    For risks piecewise linear along a line whose breakpoints are too many to list (the
    pairwise hinges: one per pair) or not of form (16) (a profiled offset or thresholds):
    each call of ``phi`` is one pass over the data (a sort and a count), never a pass over the
    breakpoints. ``f'(k+) = a2 k + a1 + g'(k+)`` is non-decreasing; the search keeps a bracket
    ``[lo, hi]`` of its zero with ``f'(lo+) < 0 <= f'(hi+)``. The next try is the secant point
    of ``f'`` (with many small pieces ``f'`` is nearly continuous), or, after two moves of the
    same end, where the lines through ``lo`` and ``hi`` with the right slopes there cross (they
    are minorants of ``g``, by convexity: the one kink there would be if ``g`` had two pieces on
    the bracket); always between the Newton points of the two pieces (``-(a1 + g'(lo+)) / a2``
    is never left of the zero, the one of ``hi`` never right of it), and the midpoint when the
    bracket does not halve. A try ``t``
    on ``lo``'s line shows ``g`` linear on ``[lo, t]`` (convex, equal to a minorant line at both
    ends), so the zero is read off exactly: the Newton point of that piece, or ``t`` itself when
    ``0`` lies in ``[f'(t-), f'(t+)]`` (a kink); likewise with ``hi``'s line. So the search is
    exact once the minimiser's piece (or kink) is located; the piece count between the first
    bracket's ends bounds the calls, which are usually a handful.

    Parameters
    ----------
    a2 : float
        Quadratic coefficient, ``> 0``.
    a1 : float
        Linear coefficient.
    phi : callable
        ``phi(k) -> (value, right_slope)`` of ``g``, ``k >= 0``.
    max_evals : int, default=60
        Budget of calls of ``phi`` (one more may evaluate the returned point).

    Returns
    -------
    LineSearchResult
        ``k`` and ``value = f(k)`` from ``phi`` at ``k`` (never extrapolated); ``converged``
        False when the budget ran out before the piece was located (the best point tried is
        returned).
    """
    a2, a1 = float(a2), float(a1)
    if not (a2 > 0.0 and math.isfinite(a2)) or not math.isfinite(a1):
        raise InputError(f"needs a2 > 0 and finite a1, got a2 = {a2}, a1 = {a1}", field="a2")
    if int(max_evals) < 2:
        raise InputError(f"must be >= 2, got {max_evals}", field="max_evals")
    evals = 0
    best = [math.inf, 0.0]
    tiny = 64.0 * float(np.finfo(float).eps)

    seen: dict[float, tuple[float, float]] = {}

    def call(k):
        nonlocal evals
        if k in seen:  # (the point to return may have been tried already)
            return seen[k]
        v, g = phi(k)
        v, g = float(v), float(g)
        if not (math.isfinite(v) and math.isfinite(g)):
            raise InputError(f"phi returned ({v}, {g}) at k = {k}", field="phi")
        evals += 1
        fk = 0.5 * a2 * k * k + a1 * k + v
        if fk < best[0] or (fk == best[0] and k < best[1]):
            best[0], best[1] = fk, k
        seen[k] = (v, g)
        return v, g

    def finish(k):
        if k != best[1]:
            call(k)  # the value at the returned point, from phi (the best point tried is returned)
        return LineSearchResult(float(best[1]), float(best[0]), 0, evals)

    def on_line(v, k, v0, g0, k0):
        """Whether ``(k, v)`` lies on the line through ``(k0, v0)`` of slope ``g0`` (to rounding)."""
        line = v0 + g0 * (k - k0)
        return abs(v - line) <= tiny * max(1.0, abs(v), abs(v0), abs(g0 * (k - k0)))

    lo = 0.0
    v_lo, g_lo = call(0.0)
    if a1 + g_lo >= 0.0:  # f'(0+) >= 0
        return LineSearchResult(0.0, float(best[0]), 0, evals)
    hi, v_hi, g_hi = math.inf, math.nan, math.nan
    width, stalls, side, same_side = math.inf, 0, 0, 0
    while evals < int(max_evals):
        newton_lo = -(a1 + g_lo) / a2  # >= the zero
        if math.isinf(hi):
            if not newton_lo > lo:  # the zero at lo to the rounding of k
                return finish(lo)
            t = newton_lo
        else:
            newton_hi = -(a1 + g_hi) / a2  # <= the zero (g_hi may be a right slope at a kink)
            if stalls >= 2:
                t, stalls = 0.5 * (lo + hi), 0
            elif same_side >= 2 and g_hi > g_lo:  # where the two minorant lines cross
                t = (v_hi - v_lo + g_lo * lo - g_hi * hi) / (g_lo - g_hi)
            else:  # the secant of f' (many small pieces: f' nearly continuous)
                f_lo, f_hi = a2 * lo + a1 + g_lo, a2 * hi + a1 + g_hi
                t = lo - f_lo * (hi - lo) / (f_hi - f_lo) if f_hi > f_lo else 0.5 * (lo + hi)
            t = min(max(t, newton_hi, lo), newton_lo, hi)
            if not lo < t < hi:
                t = 0.5 * (lo + hi)
            if not lo < t < hi:  # the bracket closed on a kink
                return finish(hi)
        v, g = call(t)
        fp = a2 * t + a1 + g  # f'(t+)
        if g == g_lo or on_line(v, t, v_lo, g_lo, lo):  # g linear on [lo, t]: f'(t-) known
            if a2 * t + a1 + g_lo >= 0.0 or t >= newton_lo:  # (the latter: rounding of the zero)
                return finish(min(max(newton_lo, lo), t))
            if fp >= 0.0:  # 0 in [f'(t-), f'(t+)]: the kink
                return finish(t)
        if not math.isinf(hi) and g == g_hi and on_line(v, t, v_hi, g_hi, hi) and fp <= 0.0:
            return finish(min(max(-(a1 + g_hi) / a2, t), hi))  # g linear on [t, hi]
        if fp < 0.0:
            lo, v_lo, g_lo = t, v, g
            same_side = same_side + 1 if side < 0 else 1
            side = -1
        elif fp > 0.0:
            hi, v_hi, g_hi = t, v, g
            same_side = same_side + 1 if side > 0 else 1
            side = 1
        else:
            return finish(t)
        new_width = hi - lo
        stalls = stalls + 1 if new_width > 0.5 * width else 0
        width = new_width
        if not math.isinf(hi) and hi - lo <= 4.0 * float(np.finfo(float).eps) * max(1.0, hi):
            return finish(hi)
    return LineSearchResult(float(best[1]), float(best[0]), 0, evals, converged=False)


def _eval(fun, k):
    v = float(fun(k))
    if math.isnan(v) or v == math.inf:
        raise InputError(f"the function returned {v} at k = {k}", field="fun")
    return v


def _brent(fun, a, b, x, fx, xtol, atol, max_evals):
    """Brent's minimisation on [a, b] from an interior x; returns (x, fx, evals, converged)."""
    w = v = x
    fw = fv = fx
    d = e = 0.0
    evals = 0
    while evals < max_evals:
        mid = 0.5 * (a + b)
        tol = xtol * abs(x) + atol
        if abs(x - mid) <= 2.0 * tol - 0.5 * (b - a):
            return x, fx, evals, True
        golden = True
        if abs(e) > tol:  # try the parabola through x, w, v
            r = (x - w) * (fx - fv)
            q = (x - v) * (fx - fw)
            p = (x - v) * q - (x - w) * r
            q = 2.0 * (q - r)
            if q > 0.0:
                p = -p
            q = abs(q)
            e_prev, e = e, d
            if abs(p) < abs(0.5 * q * e_prev) and q * (a - x) < p < q * (b - x):
                d = p / q
                if (x + d - a) < 2.0 * tol or (b - x - d) < 2.0 * tol:
                    d = tol if x < mid else -tol
                golden = False
        if golden:
            e = (b - x) if x < mid else (a - x)
            d = _GOLDEN * e
        u = x + (d if abs(d) >= tol else math.copysign(tol, d))
        fu = _eval(fun, u)
        evals += 1
        if fu <= fx:
            if u < x:
                b = x
            else:
                a = x
            v, fv, w, fw, x, fx = w, fw, x, fx, u, fu
        else:
            if u < x:
                a = u
            else:
                b = u
            if fu <= fw or w == x:
                v, fv, w, fw = w, fw, u, fu
            elif fu <= fv or v == x or v == w:
                v, fv = u, fu
    return x, fx, evals, False


def line_search(fun: Callable[[float], float], k_max=None, *, k_init=1.0, xtol=1e-8, max_evals=100, max_doublings=60):
    """Safeguarded minimisation of a black-box convex function over ``k >= 0``.

    For risks without form (16): ``fun(k)`` is typically ``F(w_b + k d)`` through the
    oracle. The minimiser is bracketed by doubling from ``k_init`` (convexity: once
    ``f(2k) >= f(k)`` it lies left of ``2k``; if ``f(k_init) >= f(0)`` it lies in
    ``[0, k_init]``), then located by Brent's method (golden section with safeguarded
    parabolic steps), which is exact in one step on a quadratic piece.

    Parameters
    ----------
    fun : callable
        ``fun(k) -> float``, convex on ``[0, inf)``; NaN or ``+inf`` raise :class:`InputError`.
    k_max : float, optional
        Upper end of the search interval.
    k_init : float, default=1.0
        First trial step (LS-BMRM: ``k = 1`` is the reduced problem's solution).
    xtol : float, default=1e-8
        Tolerance on ``k``: relative, plus ``xtol * min(k_init, bracket)`` absolute.
    max_evals : int, default=100
        Budget of evaluations of ``fun`` (bracketing included).
    max_doublings : int, default=60
        Past ``k_init * 2**max_doublings`` with ``f`` still decreasing the result is flagged
        ``unbounded`` (then ``k`` is the last, best, point tried, not ``inf``).

    Returns
    -------
    LineSearchResult
        The best point evaluated; ``n_breakpoints = 0``.
    """
    if not callable(fun):
        raise InputError(f"must be callable, got {type(fun).__name__}", field="fun")
    if not (float(k_init) > 0.0 and math.isfinite(float(k_init))):
        raise InputError(f"must be > 0 and finite, got {k_init}", field="k_init")
    if k_max is not None and not (float(k_max) >= 0.0):
        raise InputError(f"must be >= 0, got {k_max}", field="k_max")
    if not (float(xtol) > 0.0):
        raise InputError(f"must be > 0, got {xtol}", field="xtol")
    if int(max_evals) < 2:
        raise InputError(f"must be >= 2, got {max_evals}", field="max_evals")
    k_max = math.inf if k_max is None else float(k_max)
    f0 = _eval(fun, 0.0)
    if k_max == 0.0:
        return LineSearchResult(0.0, f0, 0, 1)
    lo, f_lo = 0.0, f0
    mid = min(float(k_init), k_max)
    f_mid = _eval(fun, mid)
    evals = 2
    if f_mid >= f_lo:  # minimiser in [0, mid]
        lo, hi = 0.0, mid
        delta = float(xtol) * mid  # f'(0+) >= 0 test: then k = 0, by convexity
        f_delta = _eval(fun, delta)
        evals += 1
        if f_delta >= f0:
            return LineSearchResult(0.0, f0, 0, evals)
        x = lo + _GOLDEN * (hi - lo)
        fx = _eval(fun, x)
        evals += 1
        if fx > f_lo:  # still climbing: shrink towards 0
            hi = x
            x = lo + _GOLDEN * (hi - lo)
            fx = _eval(fun, x)
            evals += 1
    else:  # f decreases at mid: double
        doublings = 0
        while True:
            if mid >= k_max:
                return LineSearchResult(mid, f_mid, 0, evals)
            hi = min(2.0 * mid, k_max)
            f_hi = _eval(fun, hi)
            evals += 1
            if f_hi >= f_mid:
                break
            lo, f_lo, mid, f_mid = mid, f_mid, hi, f_hi
            doublings += 1
            if f_hi == -math.inf or doublings >= max_doublings or evals >= max_evals:
                return LineSearchResult(
                    mid, f_mid, 0, evals, unbounded=doublings >= max_doublings or f_hi == -math.inf, converged=False
                )
        x, fx = mid, f_mid
    budget = max(int(max_evals) - evals, 0)
    atol = float(xtol) * min(float(k_init), hi)  # absolute resolution near k = 0
    xb, fb, used, ok = _brent(fun, lo, hi, x, fx, float(xtol), atol, budget)
    evals += used
    best = min(((f0, 0.0), (fb, xb), (fx, x)), key=lambda t: (t[0], t[1]))
    return LineSearchResult(float(best[1]), float(best[0]), 0, evals, converged=ok)


def minimize_along(oracle, lam, w, d, *, k_max=None, **kwargs):
    """``argmin_{k >= 0} lam/2 ||w + k d||^2 + R(w + k d)`` for an oracle of ``R``.

    Uses :func:`exact_line_search` on ``oracle.line_search_pieces(w, d)`` when the oracle
    declares ``supports_line_search = True``, :func:`piecewise_linear_search` on
    ``oracle.line_function(w, d)`` when it declares ``piecewise_linear = True`` (``lam > 0``, no
    ``k_max``), else :func:`line_search` on oracle values.

    Parameters
    ----------
    oracle : Oracle
        The risk oracle.
    lam : float
        Regularisation constant (``> 0`` or ``0``).
    w : ndarray of shape (dim,)
        Start point (the best-so-far ``w_b``).
    d : ndarray of shape (dim,)
        Direction (``w_t - w_b``).
    k_max : float, optional
        Upper end of the search interval.
    **kwargs
        Passed to :func:`line_search` (generic path) or :func:`exact_line_search`.

    Returns
    -------
    LineSearchResult
        ``value`` is the full objective ``F(w + k d)`` (the constant included).
    """
    w = np.asarray(w, dtype=np.float64).ravel()
    d = np.asarray(d, dtype=np.float64).ravel()
    if w.shape != d.shape:
        raise InputError(f"w {w.shape} and d {d.shape} differ in shape", field="d")
    lam = float(lam)
    if not (lam >= 0.0 and math.isfinite(lam)):
        raise InputError(f"must be >= 0 and finite, got {lam}", field="lam")
    const = 0.5 * lam * float(w @ w)
    if supports_line_search(oracle):
        offsets, slopes = oracle.line_search_pieces(w, d)
        res = exact_line_search(lam * float(d @ d), lam * float(w @ d), offsets, slopes, k_max=k_max, **kwargs)
        return res._replace(value=res.value + const)
    if piecewise_linear_along(oracle) and lam > 0.0 and k_max is None and float(d @ d) > 0.0:
        res = piecewise_linear_search(lam * float(d @ d), lam * float(w @ d), oracle.line_function(w, d), **kwargs)
        return res._replace(value=res.value + const)

    def fun(k):
        wk = w + k * d
        return 0.5 * lam * float(wk @ wk) + float(oracle(wk).value)

    return line_search(fun, k_max=k_max, **kwargs)
