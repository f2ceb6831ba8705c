"""Compiled loops of the per-example working sets (:mod:`cutplane.nslack.example_working_sets`).

The cuts live in one pool: row ``r`` has the sorted coordinates ``pidx[rstart[r] : rstart[r] +
rlen[r]]`` and offset ``rb[r]``; its values are ``pval`` at the same positions (a narrow integer
type) for an integer row (``rfo[r] < 0``), else ``fval[rfo[r] : rfo[r] + rlen[r]]`` (float64, or
float32 where the working sets round the float rows: then ``rerr[r]`` bounds the Euclidean
distance of the stored row from the exact cut it stands for, which the certified bound accounts
for).
Example ``i`` owns the slots ``slot[i, :]`` (row ids,
-1 when empty) with duals ``alpha[i, 1:]``; ``alpha[i, 0]`` is the weight of the floor cut
``R_i >= floor`` (slope 0). ``gram[i, j, k]`` is ``<a_j, a_k>`` of the block's slots ``j, k``.
The duals of a block lie on the simplex and ``w = -kappa sum_i sum_j alpha[i, j + 1] a_j`` with
``kappa = 1 / (lam n)``.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True)
def _value(pval, fval, fo, start, p):
    """The value at pool position ``p`` of a row starting at ``start`` with float offset ``fo``."""
    if fo < 0:
        return np.float64(pval[p])
    return np.float64(fval[fo + p - start])


@njit(nogil=True, cache=True)
def _row_dot(pidx, pval, fval, fo, start, length, w):
    s = 0.0
    if fo < 0:
        for p in range(start, start + length):
            s += np.float64(pval[p]) * w[pidx[p]]
    else:
        for k in range(length):
            s += np.float64(fval[fo + k]) * w[pidx[start + k]]
    return s


@njit(nogil=True, cache=True)
def _row_axpy(pidx, pval, fval, fo, start, length, c, w):
    if fo < 0:
        for p in range(start, start + length):
            w[pidx[p]] += c * np.float64(pval[p])
    else:
        for k in range(length):
            w[pidx[start + k]] += c * np.float64(fval[fo + k])


@njit(nogil=True, cache=True)
def _rows_dot(pidx, pval, fval, s1, l1, f1, s2, l2, f2):
    """``<a, b>`` of two pool rows (sorted coordinates): one merge pass."""
    p, q = s1, s2
    e1, e2 = s1 + l1, s2 + l2
    acc = 0.0
    while p < e1 and q < e2:
        a = pidx[p]
        b = pidx[q]
        if a == b:
            acc += _value(pval, fval, f1, s1, p) * _value(pval, fval, f2, s2, q)
            p += 1
            q += 1
        elif a < b:
            p += 1
        else:
            q += 1
    return acc


@njit(nogil=True, cache=True)
def _gram(gram, i, j, k):
    """``<a_j, a_k>`` with index 0 the floor cut (slope 0) and ``j >= 1`` slot ``j - 1``."""
    if j == 0 or k == 0:
        return 0.0
    return gram[i, j - 1, k - 1]


@njit(nogil=True, cache=True)
def sweep(order, slot, alpha, gram, rstart, rlen, rb, rfo, pidx, pval, fval, w, kappa, floor, tol, max_steps, s, g, a):
    """One pass of exact block-coordinate ascent on the dual, over the examples in ``order``.

    For block ``i`` with the others fixed, the dual's change along ``d`` (``sum d = 0``) is
    ``(1/n) [sum_j d_j s_j - kappa/2 d^T G d]`` with ``s_j = b_j + <a_j, w>`` the cuts' values at
    the current ``w``: a small QP over the simplex, solved by pairwise (SMO) steps between the
    slot of largest gradient and the slot of smallest gradient with a positive dual, each step
    exact along its direction, until the two gradients are within ``tol``. ``w`` is updated by
    the cuts whose duals moved. ``s``, ``g``, ``a`` are scratch of length ``m + 1``.

    Returns
    -------
    increase : float
        ``n`` times the dual's increase over the pass (from the steps' exact line values).
    block_gap : float
        ``sum_i max_j s_j - sum_j alpha_ij s_j`` at each block's visit: ``n`` times the reduced
        problem's duality gap when the pass changes nothing.
    """
    m = slot.shape[1]
    increase = 0.0
    block_gap = 0.0
    for ii in range(order.shape[0]):
        i = order[ii]
        s[0] = floor
        best = floor
        avg = alpha[i, 0] * floor
        for j in range(m):
            r = slot[i, j]
            if r < 0:
                s[j + 1] = -np.inf
                continue
            v = rb[r] + _row_dot(pidx, pval, fval, rfo[r], rstart[r], rlen[r], w)
            s[j + 1] = v
            avg += alpha[i, j + 1] * v
            if v > best:
                best = v
        block_gap += best - avg
        if best - avg <= tol:
            continue
        for j in range(m + 1):
            g[j] = s[j]
            a[j] = alpha[i, j]
        for _ in range(max_steps):
            up = -1
            gu = -np.inf
            dn = -1
            gd = np.inf
            for j in range(m + 1):
                if j > 0 and slot[i, j - 1] < 0:
                    continue
                if g[j] > gu:
                    gu = g[j]
                    up = j
                if a[j] > 0.0 and g[j] < gd:
                    gd = g[j]
                    dn = j
            if dn < 0 or up == dn or gu - gd <= tol:
                break
            q = kappa * (_gram(gram, i, up, up) + _gram(gram, i, dn, dn) - 2.0 * _gram(gram, i, up, dn))
            t = a[dn]
            bounded = True
            if q > 0.0 and (gu - gd) / q < t:
                t = (gu - gd) / q
                bounded = False
            a[up] += t
            if bounded:
                a[dn] = 0.0
            else:
                a[dn] -= t
            increase += t * (gu - gd) - 0.5 * q * t * t
            for j in range(m + 1):
                if j > 0 and slot[i, j - 1] < 0:
                    continue
                g[j] -= kappa * t * (_gram(gram, i, j, up) - _gram(gram, i, j, dn))
        for j in range(m):
            d = a[j + 1] - alpha[i, j + 1]
            if d != 0.0:
                r = slot[i, j]
                _row_axpy(pidx, pval, fval, rfo[r], rstart[r], rlen[r], -kappa * d, w)
        for j in range(m + 1):
            alpha[i, j] = a[j]
    return increase, block_gap


@njit(nogil=True, cache=True)
def normalize(slot, alpha, rlen, rb, rerr, floor):
    """Put every block's duals back on the simplex (round-off of the sweeps:
    ``alpha_i0 = 1 - sum_j alpha_ij``, the others scaled down if they sum above 1; empty slots 0).

    Returns
    -------
    dual_offset : float
        ``sum_i alpha_i0 floor + sum_j alpha_ij b_ij`` (``n`` times the dual's linear term).
    live_nnz : int
        Stored nonzeros of the rows in the slots.
    error_mass : float
        ``sum_ij alpha_ij rerr[slot_ij]`` (0 when no row was rounded).
    """
    n, m = slot.shape
    total = 0.0
    live = 0
    mass = 0.0
    for i in range(n):
        rest = 0.0
        for j in range(m):
            if slot[i, j] < 0 or alpha[i, j + 1] < 0.0:
                alpha[i, j + 1] = 0.0
            rest += alpha[i, j + 1]
        if rest > 1.0:
            for j in range(m):
                alpha[i, j + 1] /= rest
            alpha[i, 0] = 0.0
        else:
            alpha[i, 0] = 1.0 - rest
        total += alpha[i, 0] * floor
        for j in range(m):
            r = slot[i, j]
            if r >= 0:
                live += rlen[r]
                if alpha[i, j + 1] > 0.0:
                    total += alpha[i, j + 1] * rb[r]
                    mass += alpha[i, j + 1] * rerr[r]
    return total, live, mass


@njit(nogil=True, cache=True)
def scatter(lo, hi, slot, alpha, rstart, rlen, rfo, pidx, pval, fval, kappa, w):
    """``w[lo:hi] = -kappa sum_i sum_j alpha_ij a_ij[lo:hi]`` afresh: every row's entries in the
    coordinate range (found by bisection in its sorted coordinates), added in example and slot
    order, so each coordinate gets the same sum, bit for bit, however the range is cut; disjoint
    ranges may run in threads at once."""
    for c in range(lo, hi):
        w[c] = 0.0
    n, m = slot.shape
    for i in range(n):
        for j in range(m):
            r = slot[i, j]
            if r < 0 or alpha[i, j + 1] <= 0.0:
                continue
            s0 = rstart[r]
            e0 = s0 + rlen[r]
            p = s0 + np.searchsorted(pidx[s0:e0], lo)
            q = s0 + np.searchsorted(pidx[s0:e0], hi)
            if q > p:
                fo = rfo[r] + (p - s0) if rfo[r] >= 0 else -1
                _row_axpy(pidx, pval, fval, fo, p, q - p, -kappa * alpha[i, j + 1], w)


@njit(nogil=True, cache=True)
def retire(slot, alpha, idle, max_idle):
    """Count each slot's iterations with a zero dual (reset by a positive one) and empty the
    slots idle ``max_idle`` times in a row (0: never; a zero dual moves neither ``w`` nor ``D``);
    return how many were emptied."""
    n, m = slot.shape
    dropped = 0
    for i in range(n):
        for j in range(m):
            if slot[i, j] < 0:
                continue
            if alpha[i, j + 1] > 0.0:
                idle[i, j] = 0
            else:
                idle[i, j] += 1
                if max_idle > 0 and idle[i, j] >= max_idle:
                    slot[i, j] = -1
                    dropped += 1
    return dropped


@njit(nogil=True, cache=True)
def _merge_into(pidx, pval, fval, s1, l1, f1, c1, s2, l2, f2, c2, out, fout, ulp):
    """Write ``c1 a + c2 b`` of two pool rows at ``out`` (sorted coordinates, zeros dropped), its
    values at ``fval[fout:]`` (a float row); return its length and a bound on the Euclidean
    norm of what storing it changed: with ``ulp`` (2**-52, for a float32 ``fval``) each value's
    rounding to ``fval``'s type plus ``ulp`` times its terms' sizes (the float64 sum's own
    rounding); 0 with ``ulp`` 0 (float64, the sum kept as computed)."""
    p, q = s1, s2
    e1, e2 = s1 + l1, s2 + l2
    r = out
    err = 0.0
    while p < e1 or q < e2:
        if q >= e2 or (p < e1 and pidx[p] < pidx[q]):
            k = pidx[p]
            v = c1 * _value(pval, fval, f1, s1, p)
            size = abs(v)
            p += 1
        elif p >= e1 or pidx[q] < pidx[p]:
            k = pidx[q]
            v = c2 * _value(pval, fval, f2, s2, q)
            size = abs(v)
            q += 1
        else:
            k = pidx[p]
            x = c1 * _value(pval, fval, f1, s1, p)
            y = c2 * _value(pval, fval, f2, s2, q)
            v = x + y
            size = abs(x) + abs(y)
            p += 1
            q += 1
        fval[fout + r - out] = v  # rounded to fval's type (within the row's reserved range)
        stored = np.float64(fval[fout + r - out])
        e = abs(stored - v) + 2.0 * ulp * size
        err += e * e
        if stored != 0.0:
            pidx[r] = k
            r += 1
    return r - out, np.sqrt(err)


@njit(nogil=True, cache=True)
def violated(
    lo,
    hi,
    b_ptr,
    b_idx,
    b_val,
    b_off,
    b_risk,
    w,
    slot,
    alpha,
    rstart,
    rlen,
    rb,
    rfo,
    pidx,
    pval,
    fval,
    floor,
    rtol,
    want,
):
    """``want[i]`` for the examples ``lo..hi``: whether example ``i``'s new cut (batch row ``i``:
    ``b_idx/b_val[b_ptr[i]:b_ptr[i + 1]]``, offset ``b_off[i]``, ``R_i(w) = b_risk[i]``) is
    violated: ``R_i(w)`` exceeds ``max(floor, max_j b_j + <a_j, w>)`` over the block's cuts of
    positive dual by more than ``rtol * (1 + |R_i(w)|)``, and the cut is not one of the block's
    idle cuts. (At the reduced minimiser the cuts of positive dual attain the block's model;
    reading only them saves a pass over the idle ones.) Reads only: threads may run disjoint
    ranges at once."""
    m = slot.shape[1]
    for i in range(lo, hi):
        length = b_ptr[i + 1] - b_ptr[i]
        risk = b_risk[i]
        model = floor
        duplicate = False
        for j in range(m):
            r = slot[i, j]
            if r < 0:
                continue
            if alpha[i, j + 1] > 0.0:
                v = rb[r] + _row_dot(pidx, pval, fval, rfo[r], rstart[r], rlen[r], w)
                if v > model:
                    model = v
            elif rb[r] == b_off[i] and rlen[r] == length:  # an idle cut: skip the new one if it is this one
                same = True
                for p in range(length):
                    q = rstart[r] + p
                    if (
                        pidx[q] != b_idx[b_ptr[i] + p]
                        or _value(pval, fval, rfo[r], rstart[r], q) != b_val[b_ptr[i] + p]
                    ):
                        same = False
                        break
                duplicate = duplicate or same
        want[i] = not duplicate and risk > model + rtol * (1.0 + abs(risk))


@njit(nogil=True, cache=True)
def place(
    lo, want, b_ptr, b_off, b_int, slot, alpha, gram, idle, rstart, rlen, rb, rfo, rerr, state, pidx, fval, new_slot,
    merge_row, merge_src, merge_coef,
):  # fmt: skip
    """Give each wanted example's new cut a slot and a row of the pool (its entries are copied
    by :func:`copy_rows`, its Gram row by :func:`gram_rows`); ``new_slot[i]`` is the slot (-1:
    none). The cut enters with dual 0 (``w`` and the dual value do not move). A full block first
    frees a slot: the slot with a zero dual idle the longest, else the two slots of smallest
    duals are replaced by their dual-weighted average (a convex combination of cuts of ``R_i``
    is one; ``w`` and the dual value do not move either; its Gram entries are the same
    combination of the two rows'). The merged row gets its offset and Gram entries here and a
    pool row as long as its two sources together; :func:`merge_rows` writes its entries
    (``merge_row[i]`` the row, -1: none; ``merge_src[i]`` the two source rows, ``merge_coef[i]``
    their weights), in threads. The merged row's ``rerr`` starts as the same combination of
    its sources' (:func:`merge_rows` adds its own rounding), a new row's at 0.

    A new cut whose values are integers in the range of the narrow value type (``b_int[i]``)
    keeps its values beside its coordinates; the others (and every merged row) get a range of
    ``fval`` too. ``state`` is int64 ``[n_rows, used, added, merged, float_used]`` (rows in the
    table, pool entries used, counters, ``fval`` entries used), updated in place.
    Starts at example ``lo``; returns the example it stopped at:
    ``n`` when done, earlier when the pool or the row table needs to grow first.
    """
    n, m = slot.shape
    cap = pidx.shape[0]
    fcap = fval.shape[0]
    rcap = rstart.shape[0]
    for i in range(lo, n):
        new_slot[i] = -1
        merge_row[i] = -1
        if not want[i]:
            continue
        length = b_ptr[i + 1] - b_ptr[i]
        k = -1
        for j in range(m):
            if slot[i, j] < 0:
                k = j
                break
        if k < 0:
            longest = -1
            for j in range(m):
                if alpha[i, j + 1] == 0.0 and idle[i, j] > longest:
                    longest = idle[i, j]
                    k = j
        merge_p = -1
        need = length
        fneed = 0 if b_int[i] else length
        if k < 0:
            p1 = -1
            p2 = -1
            for j in range(m):
                if p1 < 0 or alpha[i, j + 1] < alpha[i, p1 + 1]:
                    p2 = p1
                    p1 = j
                elif p2 < 0 or alpha[i, j + 1] < alpha[i, p2 + 1]:
                    p2 = j
            merge_p = p2  # the merged row goes to p2, the new cut to p1
            k = p1
            need += rlen[slot[i, p1]] + rlen[slot[i, p2]]
            fneed += rlen[slot[i, p1]] + rlen[slot[i, p2]]
        if state[1] + need > cap or state[4] + fneed > fcap or state[0] + 2 > rcap:
            return i
        if merge_p >= 0:
            rp, rq = slot[i, merge_p], slot[i, k]
            ap, aq = alpha[i, merge_p + 1], alpha[i, k + 1]
            cp, cq = ap / (ap + aq), aq / (ap + aq)
            nr = state[0]
            rstart[nr] = state[1]
            rlen[nr] = rlen[rp] + rlen[rq]  # reserved; merge_rows sets the merged length
            rfo[nr] = state[4]
            state[4] += rlen[nr]
            merge_row[i] = nr
            merge_src[i, 0], merge_src[i, 1] = rp, rq
            merge_coef[i, 0], merge_coef[i, 1] = cp, cq
            rb[nr] = cp * rb[rp] + cq * rb[rq]
            rerr[nr] = cp * rerr[rp] + cq * rerr[rq]
            state[1] += rlen[nr]
            state[0] += 1
            gpp, gqq, gpq = gram[i, merge_p, merge_p], gram[i, k, k], gram[i, merge_p, k]
            for j in range(m):
                if j != merge_p and j != k and slot[i, j] >= 0:
                    v = cp * gram[i, merge_p, j] + cq * gram[i, k, j]
                    gram[i, merge_p, j] = v
                    gram[i, j, merge_p] = v
            gram[i, merge_p, merge_p] = cp * cp * gpp + 2.0 * cp * cq * gpq + cq * cq * gqq
            slot[i, merge_p] = nr
            alpha[i, merge_p + 1] = ap + aq
            idle[i, merge_p] = 0
            state[3] += 1
        nr = state[0]
        rstart[nr] = state[1]
        rlen[nr] = length
        rb[nr] = b_off[i]
        rerr[nr] = 0.0
        if b_int[i]:
            rfo[nr] = -1
        else:
            rfo[nr] = state[4]
            state[4] += length
        state[1] += length
        state[0] += 1
        slot[i, k] = nr
        alpha[i, k + 1] = 0.0
        idle[i, k] = 0
        new_slot[i] = k
        state[2] += 1
    return n


@njit(nogil=True, cache=True)
def merge_rows(lo, hi, merge_row, merge_src, merge_coef, rerr, ulp, rstart, rlen, rfo, pidx, pval, fval):
    """Write the merged rows of examples ``lo..hi`` (placed by :func:`place`) into their pool
    rows, set their lengths and add their rounding to ``rerr`` (:func:`_merge_into`); disjoint
    ranges may run in threads at once (the sources are only read, each merged row has its own
    reserved range)."""
    for i in range(lo, hi):
        r = merge_row[i]
        if r < 0:
            continue
        p, q = merge_src[i, 0], merge_src[i, 1]
        length, err = _merge_into(
            pidx, pval, fval, rstart[p], rlen[p], rfo[p], merge_coef[i, 0], rstart[q], rlen[q], rfo[q],
            merge_coef[i, 1], rstart[r], rfo[r], ulp,
        )  # fmt: skip
        rlen[r] = length
        rerr[r] += err


@njit(nogil=True, cache=True)
def copy_rows(lo, hi, new_slot, slot, b_ptr, b_idx, b_val, rstart, rfo, rerr, pidx, pval, fval):
    """Copy the new cuts of examples ``lo..hi`` (placed by :func:`place`) into their pool rows
    (a float row's rounding to ``fval``'s type, none in float64, into ``rerr``); disjoint
    ranges may run in threads at once."""
    for i in range(lo, hi):
        k = new_slot[i]
        if k < 0:
            continue
        r = slot[i, k]
        s0 = rstart[r]
        fo = rfo[r]
        b0 = b_ptr[i]
        err = 0.0
        for p in range(b_ptr[i + 1] - b0):
            pidx[s0 + p] = b_idx[b0 + p]
            if fo < 0:
                pval[s0 + p] = b_val[b0 + p]  # an integer in the type's range: exact
            else:
                fval[fo + p] = b_val[b0 + p]
                e = np.float64(fval[fo + p]) - np.float64(b_val[b0 + p])
                err += e * e
        rerr[r] = np.sqrt(err)


@njit(nogil=True, cache=True)
def gram_rows(lo, hi, new_slot, slot, gram, rstart, rlen, rfo, pidx, pval, fval):
    """The Gram entries of the new cuts of examples ``lo..hi`` with their blocks' cuts (after
    :func:`copy_rows`); disjoint ranges may run in threads at once."""
    m = slot.shape[1]
    for i in range(lo, hi):
        k = new_slot[i]
        if k < 0:
            continue
        nr = slot[i, k]
        for j in range(m):
            r = slot[i, j]
            if r >= 0:
                v = _rows_dot(pidx, pval, fval, rstart[nr], rlen[nr], rfo[nr], rstart[r], rlen[r], rfo[r])
                gram[i, k, j] = v
                gram[i, j, k] = v


@njit(nogil=True, cache=True)
def blend(avg, w, decay):
    """``avg = decay avg + (1 - decay) w`` in place (no temporary of the length of ``w``)."""
    rest = 1.0 - decay
    for c in range(avg.shape[0]):
        avg[c] = decay * avg[c] + rest * w[c]


@njit(nogil=True, cache=True)
def round_to_float32(w):
    """Round ``w`` in place to the nearest float32 values (kept as float64): a query point that
    a float32 copy holds exactly."""
    for c in range(w.shape[0]):
        w[c] = np.float64(np.float32(w[c]))


@njit(nogil=True, cache=True)
def blend32(avg, w, decay):
    """``avg = decay avg + (1 - decay) w`` in place for a float32 ``avg`` (computed in float64,
    rounded once per coordinate)."""
    rest = 1.0 - decay
    for c in range(avg.shape[0]):
        avg[c] = np.float32(decay * np.float64(avg[c]) + rest * w[c])


@njit(nogil=True, cache=True)
def compact_down(rows, new_start, new_fo, rstart, rlen, rfo, pidx, pval, fval):
    """Move rows ``rows`` (in increasing order of their start, which is also the order of the
    float rows' ``fval`` ranges) to ``new_start`` in the same pool, their float values to
    ``new_fo`` (-1: an integer row), in that order: every destination is at or before its
    source, so each entry is read before it can be overwritten (a serial pass; rows already in
    place are skipped)."""
    for q in range(rows.shape[0]):
        r = rows[q]
        s0 = rstart[r]
        d0 = new_start[q]
        f0 = rfo[r]
        g0 = new_fo[q]
        if s0 != d0:
            for p in range(rlen[r]):
                pidx[d0 + p] = pidx[s0 + p]
                pval[d0 + p] = pval[s0 + p]
        if f0 >= 0 and f0 != g0:
            for p in range(rlen[r]):
                fval[g0 + p] = fval[f0 + p]


@njit(nogil=True, cache=True)
def integer_rows(b_ptr, b_val, lo_value, hi_value, out):
    """``out[i]``: whether every value of batch row ``i`` is an integer in ``[lo_value,
    hi_value]`` (then the narrow integer type holds it exactly)."""
    for i in range(b_ptr.shape[0] - 1):
        ok = True
        for p in range(b_ptr[i], b_ptr[i + 1]):
            v = b_val[p]
            if not (v >= lo_value and v <= hi_value and v == np.floor(v)):
                ok = False
                break
        out[i] = ok


@njit(nogil=True, cache=True)
def batch_products(b_ptr, b_idx, b_val, w, out):
    """``out[i] = <row i, w>`` of a CSR batch, its values read in their own type (an int8 batch
    is not widened to float64 first, as ``scipy.sparse`` would)."""
    for i in range(b_ptr.shape[0] - 1):
        acc = 0.0
        for p in range(b_ptr[i], b_ptr[i + 1]):
            acc += np.float64(b_val[p]) * w[b_idx[p]]
        out[i] = acc
