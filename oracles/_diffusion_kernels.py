"""Numba kernels of max-sum diffusion (Franc et al. 2012, sec. 1.4.4, Alg. 1.6) on pairwise models with cycles.

Layout (all flat float64 / int64 arrays, so one compiled kernel serves any graph):

* nodes ``v`` with ``n_states[v]`` states; the reparametrised unary weights
  ``theta^phi_v`` live in ``th_node[noff[v]:noff[v + 1]]``;
* edges ``e = (eu[e], ev[e])``; ``theta^phi_e(x_u, x_v)`` lives row-major (x_u major) in
  ``th_edge[eoff[e] + x_u * K_v + x_v]``;
* zero cycle subproblems ``C``: cycle ``c`` owns the *slots* ``coff[c]:coff[c + 1]``; slot ``s``
  is the traversal of the edge at ``slot_eoff[s]`` (its offset in ``th_edge``) from node ``a_s``
  to ``a_{s+1}`` (``slot_flip[s]`` is 1 when that is the direction v -> u), and its message
  ``phi_{C,e}`` lives in edge layout in ``cmsg[slot_moff[s]:...]``. By eq. (38),
  ``theta^phi_C(x_C) = sum_s phi_{C,e_s}(x_{e_s})`` (``theta_C = 0``), restricted to joint
  states whose edges are all finite (a zero interaction may be set to -inf where the objective
  is -inf anyway, which keeps Alg. 1.6's condition).

The kernels release the GIL (``nogil=True``), so a thread executor can run examples in parallel.
Only ``theta^phi`` of nodes and edges and the cycle messages are stored: the node-edge messages
are implicit in ``th_node`` / ``th_edge`` (eq. 38 applied in place, as in eq. 39).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["edge_node_sweep", "cycle_sweep", "cycles_max", "slot_maxmarginal", "upper_bound", "diffuse"]

_NEG = -np.inf


@njit(cache=True, nogil=True)
def edge_node_sweep(th_node, noff, th_edge, eoff, eu, ev, n_states, node_fin):
    """One pass of Alg. 1.6 over the pairs (edge, endpoint); returns the largest |message change|."""
    maxchg = 0.0
    for e in range(eu.shape[0]):
        u = eu[e]
        v = ev[e]
        ku = n_states[u]
        kv = n_states[v]
        base = eoff[e]
        for a in range(ku):  # pair (e, u): max over x_v
            if not node_fin[noff[u] + a]:
                continue
            m = _NEG
            for b in range(kv):
                t = th_edge[base + a * kv + b]
                if t > m:
                    m = t
            d = 0.5 * (th_node[noff[u] + a] - m)
            for b in range(kv):
                th_edge[base + a * kv + b] += d
            th_node[noff[u] + a] -= d
            if abs(d) > maxchg:
                maxchg = abs(d)
        for b in range(kv):  # pair (e, v): max over x_u
            if not node_fin[noff[v] + b]:
                continue
            m = _NEG
            for a in range(ku):
                t = th_edge[base + a * kv + b]
                if t > m:
                    m = t
            d = 0.5 * (th_node[noff[v] + b] - m)
            for a in range(ku):
                th_edge[base + a * kv + b] += d
            th_node[noff[v] + b] -= d
            if abs(d) > maxchg:
                maxchg = abs(d)
    return maxchg


@njit(cache=True, nogil=True)
def _load_slot(tab, toff, mask, moff, ku, kv, flip, out):
    """Copy one slot's table into ``out[a, b]`` along the traversal; masked entries are -inf."""
    if flip == 0:
        for a in range(ku):
            for b in range(kv):
                i = a * kv + b
                out[a, b] = tab[toff + i] if mask[moff + i] else _NEG
        return ku, kv
    for a in range(kv):
        for b in range(ku):
            i = b * kv + a
            out[a, b] = tab[toff + i] if mask[moff + i] else _NEG
    return kv, ku


@njit(cache=True, nogil=True)
def _tropical_mul(p, rows, inner, t, cols, out):
    """``out = p (rows x inner) (max,+) t (inner x cols)``."""
    for r in range(rows):
        for c in range(cols):
            m = _NEG
            for k in range(inner):
                s = p[r, k] + t[k, c]
                if s > m:
                    m = s
            out[r, c] = m


@njit(cache=True, nogil=True)
def _path_product(tab, tab_off, mask, mask_off, slot_ku, slot_kv, slot_flip, s0, length, first, count, p, t, tmp):
    """(max,+) product of ``count`` consecutive slots of a cycle starting at slot ``first``.

    Returns the shape (rows, cols) of the product, stored in ``p``.
    """
    s = s0 + first % length
    rows, cols = _load_slot(tab, tab_off[s], mask, mask_off[s], slot_ku[s], slot_kv[s], slot_flip[s], p)
    for i in range(1, count):
        s = s0 + (first + i) % length
        r2, c2 = _load_slot(tab, tab_off[s], mask, mask_off[s], slot_ku[s], slot_kv[s], slot_flip[s], t)
        _tropical_mul(p, rows, r2, t, c2, tmp)
        for r in range(rows):
            for c in range(c2):
                p[r, c] = tmp[r, c]
        cols = c2
    return rows, cols


@njit(cache=True, nogil=True)
def slot_maxmarginal(tab, tab_off, mask, mask_off, slot_ku, slot_kv, slot_flip, s0, length, j, kmax, out):
    """Max-marginal of the cycle function ``sum_s tab_s`` onto the edge of slot ``j``.

    Written to ``out`` in the edge's own layout (x_u major), -inf where the edge is masked.
    """
    p = np.empty((kmax, kmax))
    t = np.empty((kmax, kmax))
    tmp = np.empty((kmax, kmax))
    s = s0 + j
    ku = slot_ku[s]
    kv = slot_kv[s]
    # product of the other slots: from the end node of slot j back to its start node
    _path_product(tab, tab_off, mask, mask_off, slot_ku, slot_kv, slot_flip, s0, length, j + 1, length - 1, p, t, tmp)
    for xu in range(ku):
        for xv in range(kv):
            i = xu * kv + xv
            if not mask[mask_off[s] + i]:
                out[i] = _NEG
                continue
            if slot_flip[s] == 0:
                rest = p[xv, xu]  # path from v back to u
            else:
                rest = p[xu, xv]  # traversal v -> u: path from u back to v
            out[i] = tab[tab_off[s] + i] + rest
    return out


@njit(cache=True, nogil=True)
def cycles_max(tab, tab_off, mask, mask_off, slot_ku, slot_kv, slot_flip, coff, kmax):
    """``max_{x_C} sum_{s in C} tab_s(x_{e_s})`` for every cycle (by a (max,+) trace); shape (n_cycles,)."""
    n_c = coff.shape[0] - 1
    res = np.empty(n_c)
    p = np.empty((kmax, kmax))
    t = np.empty((kmax, kmax))
    tmp = np.empty((kmax, kmax))
    for c in range(n_c):
        s0 = coff[c]
        length = coff[c + 1] - s0
        rows, cols = _path_product(
            tab, tab_off, mask, mask_off, slot_ku, slot_kv, slot_flip, s0, length, 0, length, p, t, tmp
        )
        m = _NEG
        for a in range(rows):
            if p[a, a] > m:
                m = p[a, a]
        res[c] = m
    return res


@njit(cache=True, nogil=True)
def cycle_sweep(th_edge, cmsg, slot_eoff, slot_moff, slot_ku, slot_kv, slot_flip, coff, edge_fin, kmax):
    """One pass of Alg. 1.6 over the pairs (cycle, edge); returns the largest |message change|."""
    maxchg = 0.0
    buf = np.empty(kmax * kmax)
    for c in range(coff.shape[0] - 1):
        s0 = coff[c]
        length = coff[c + 1] - s0
        for j in range(length):
            s = s0 + j
            slot_maxmarginal(
                cmsg, slot_moff, edge_fin, slot_eoff, slot_ku, slot_kv, slot_flip, s0, length, j, kmax, buf
            )
            base = slot_eoff[s]
            mo = slot_moff[s]
            for i in range(slot_ku[s] * slot_kv[s]):
                if not edge_fin[base + i]:
                    continue
                d = 0.5 * (th_edge[base + i] - buf[i])
                cmsg[mo + i] += d
                th_edge[base + i] -= d
                if abs(d) > maxchg:
                    maxchg = abs(d)
    return maxchg


@njit(cache=True, nogil=True)
def upper_bound(
    th_node, noff, th_edge, eoff, cmsg, slot_eoff, slot_moff, slot_ku, slot_kv, slot_flip, coff, edge_fin, kmax
):
    """Eq. (37)/(40): ``sum_A max_{x_A} theta^phi_A(x_A)`` over nodes, edges and cycles."""
    total = 0.0
    for v in range(noff.shape[0] - 1):
        m = _NEG
        for i in range(noff[v], noff[v + 1]):
            if th_node[i] > m:
                m = th_node[i]
        total += m
    for e in range(eoff.shape[0] - 1):
        m = _NEG
        for i in range(eoff[e], eoff[e + 1]):
            if th_edge[i] > m:
                m = th_edge[i]
        total += m
    if coff.shape[0] > 1:
        cm = cycles_max(cmsg, slot_moff, edge_fin, slot_eoff, slot_ku, slot_kv, slot_flip, coff, kmax)
        for c in range(cm.shape[0]):
            total += cm[c]
    return total


@njit(cache=True, nogil=True)
def diffuse(
    th_node,
    noff,
    th_edge,
    eoff,
    eu,
    ev,
    n_states,
    node_fin,
    edge_fin,
    cmsg,
    slot_eoff,
    slot_moff,
    slot_ku,
    slot_kv,
    slot_flip,
    coff,
    kmax,
    max_iter,
    tol,
    history,
):
    """Run sweeps of Alg. 1.6 (cycle pairs, then edge-node pairs) until max |change| < tol.

    ``history[k]`` receives the upper bound after sweep ``k``. Returns (n_sweeps, converged).
    """
    for it in range(max_iter):
        chg = 0.0
        if coff.shape[0] > 1:
            chg = cycle_sweep(th_edge, cmsg, slot_eoff, slot_moff, slot_ku, slot_kv, slot_flip, coff, edge_fin, kmax)
        c2 = edge_node_sweep(th_node, noff, th_edge, eoff, eu, ev, n_states, node_fin)
        if c2 > chg:
            chg = c2
        history[it] = upper_bound(
            th_node, noff, th_edge, eoff, cmsg, slot_eoff, slot_moff, slot_ku, slot_kv, slot_flip, coff, edge_fin, kmax
        )
        if chg < tol:
            return it + 1, True
    return max_iter, False
