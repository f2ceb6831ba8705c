"""Numba maximum spanning tree decoders of the parsing oracles: Chu-Liu-Edmonds and Eisner.

Moved here from :mod:`oracles._parsing_kernels` (which re-exports ``cle_kernel`` and
``eisner_kernel`` and states the conventions: ``N = n + 1`` nodes, node 0 the root,
``scores[h, m]`` the score of the arc ``h -> m``, a tree is a head array of shape (N,) with
``heads[0] = -1``; arcs into the root and self-loops are never used). Validation is done by
the callers in :mod:`oracles.parsing`; these kernels trust their input.

Tie-breaking (deterministic): every argmax keeps the first maximiser in increasing index
order (strict ``>`` comparisons), so equal inputs give identical outputs; among several
optimal trees the one returned is a deterministic function of the scores, not necessarily
the lexicographically smallest one.

All kernels are compiled with ``nogil=True`` so a thread pool can run them in parallel.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["cle_kernel", "eisner_kernel"]


@njit(cache=True, nogil=True)
def _better(p1, s1, p2, s2):
    """Lexicographic ``(p1, s1) > (p2, s2)``: integer key first, then the float score."""
    return p1 > p2 or (p1 == p2 and s1 > s2)


@njit(cache=True, nogil=True)
def _best_heads(S, P, N, pi):
    """Greedy best incoming arc of every non-root node (first maximiser wins)."""
    for m in range(1, N):
        best = -1
        for h in range(N):
            if h == m:
                continue
            if best < 0 or _better(P[h, m], S[h, m], P[best, m], S[best, m]):
                best = h
        pi[m] = best
    pi[0] = -1


@njit(cache=True, nogil=True)
def _find_cycle(pi, N, in_cycle):
    """Mark the first cycle (scanning start nodes in increasing order) of the head graph.

    Returns the number of nodes on the cycle (0 when ``pi`` is a tree).
    """
    state = np.zeros(N, dtype=np.int64)  # 0 new, 1 on the current walk, 2 finished
    state[0] = 2
    for start in range(1, N):
        v = start
        while state[v] == 0:
            state[v] = 1
            v = pi[v]
        if state[v] == 1:  # closed a cycle through v
            size = 0
            u = v
            while True:
                in_cycle[u] = True
                size += 1
                u = pi[u]
                if u == v:
                    break
            return size
        v = start
        while state[v] == 1:
            state[v] = 2
            v = pi[v]
    return 0


@njit(cache=True, nogil=True)
def cle_kernel(scores, penalty):
    """Maximum spanning arborescence rooted at node 0 (Chu-Liu-Edmonds, O(N^3)).

    Parameters
    ----------
    scores : ndarray of shape (N, N), float64
        Arc scores (finite).
    penalty : ndarray of shape (N, N), int64
        A primary integer key compared before the scores (lexicographic order); all zero
        for the plain problem, ``-1`` on root arcs to force a single root child. CLE is
        exact over any totally ordered abelian group, hence over these pairs.

    Returns
    -------
    heads : ndarray of shape (N,), int64
        ``heads[0] = -1``.
    """
    N0 = scores.shape[0]
    heads_out = np.full(N0, -1, dtype=np.int64)
    if N0 <= 1:
        return heads_out
    S = scores.copy()
    P = penalty.copy()
    N = N0
    L = N0  # at most N0 - 1 contractions
    lvl_N = np.zeros(L, dtype=np.int64)
    lvl_pi = np.zeros((L, N0), dtype=np.int64)
    lvl_cyc = np.zeros((L, N0), dtype=np.bool_)
    lvl_new = np.zeros((L, N0), dtype=np.int64)  # old index -> new index
    lvl_old = np.zeros((L, N0), dtype=np.int64)  # new index -> old index (non-cycle nodes)
    lvl_enter = np.zeros((L, N0), dtype=np.int64)  # outside u -> cycle node its arc enters
    lvl_exit = np.zeros((L, N0), dtype=np.int64)  # outside v -> cycle node its head leaves
    pi = np.zeros(N0, dtype=np.int64)
    level = 0
    while True:
        _best_heads(S, P, N, pi)
        cyc = lvl_cyc[level]
        cyc[:] = False
        if _find_cycle(pi, N, cyc) == 0:
            break
        lvl_N[level] = N
        lvl_pi[level, :N] = pi[:N]
        # new indices: non-cycle nodes keep their order, the cycle becomes the last node
        k = 0
        for v in range(N):
            if not cyc[v]:
                lvl_new[level, v] = k
                lvl_old[level, k] = v
                k += 1
        c = k
        for v in range(N):
            if cyc[v]:
                lvl_new[level, v] = c
        N2 = c + 1
        S2 = np.zeros((N2, N2), dtype=np.float64)
        P2 = np.zeros((N2, N2), dtype=np.int64)
        for u in range(N):
            if cyc[u]:
                continue
            nu = lvl_new[level, u]
            for v in range(N):
                if cyc[v]:
                    continue
                nv = lvl_new[level, v]
                S2[nu, nv] = S[u, v]
                P2[nu, nv] = P[u, v]
            # best arc from u into the cycle, relative to the cycle arc it replaces
            best = -1
            bp = 0
            bs = 0.0
            for v in range(N):
                if not cyc[v]:
                    continue
                cp = P[u, v] - P[pi[v], v]
                cs = S[u, v] - S[pi[v], v]
                if best < 0 or _better(cp, cs, bp, bs):
                    best = v
                    bp = cp
                    bs = cs
            lvl_enter[level, u] = best
            S2[nu, c] = bs
            P2[nu, c] = bp
        for v in range(1, N):
            if cyc[v]:
                continue
            best = -1
            for u in range(N):
                if not cyc[u]:
                    continue
                if best < 0 or _better(P[u, v], S[u, v], P[best, v], S[best, v]):
                    best = u
            lvl_exit[level, v] = best
            nv = lvl_new[level, v]
            S2[c, nv] = S[best, v]
            P2[c, nv] = P[best, v]
        S = S2
        P = P2
        N = N2
        level += 1
    cur = pi[:N].copy()
    for lv in range(level - 1, -1, -1):
        Nl = lvl_N[lv]
        cyc = lvl_cyc[lv]
        c = 0
        for v in range(Nl):
            if not cyc[v]:
                c += 1
        prev = np.full(Nl, -1, dtype=np.int64)
        for v in range(1, Nl):
            if cyc[v]:
                continue
            hn = cur[lvl_new[lv, v]]
            prev[v] = lvl_exit[lv, v] if hn == c else lvl_old[lv, hn]
        u = lvl_old[lv, cur[c]]
        for v in range(Nl):
            if cyc[v]:
                prev[v] = lvl_pi[lv, v]
        prev[lvl_enter[lv, u]] = u
        cur = prev
    heads_out[:] = cur
    heads_out[0] = -1
    return heads_out


@njit(cache=True, nogil=True)
def eisner_kernel(scores, single_root):
    """Best projective tree rooted at node 0 (Eisner 1996, O(N^3)).

    Parameters
    ----------
    scores : ndarray of shape (N, N), float64
        Arc scores (finite).
    single_root : bool
        When True the root takes exactly one child (the root's right incomplete span may
        only be built from the empty span ``[0, 0]``).

    Returns
    -------
    heads : ndarray of shape (N,), int64
        ``heads[0] = -1``.
    """
    N = scores.shape[0]
    heads = np.full(N, -1, dtype=np.int64)
    if N <= 1:
        return heads
    NEG = -np.inf
    # [s, t, d]: d = 0 head at t (left-pointing), d = 1 head at s (right-pointing)
    C = np.full((N, N, 2), NEG)
    Inc = np.full((N, N, 2), NEG)  # incomplete spans
    Cb = np.zeros((N, N, 2), dtype=np.int64)
    Ib = np.zeros((N, N, 2), dtype=np.int64)
    for s in range(N):
        C[s, s, 0] = 0.0
        C[s, s, 1] = 0.0
    for k in range(1, N):
        for s in range(0, N - k):
            t = s + k
            # incomplete spans: arc between s and t, split at r
            best_l = NEG
            best_r = NEG
            arg_l = s
            arg_r = s
            r_stop = t
            if single_root and s == 0:
                r_stop = 1
            for r in range(s, t):
                base = C[s, r, 1] + C[r + 1, t, 0]
                if base > best_l:
                    best_l = base
                    arg_l = r
                if r < r_stop and base > best_r:
                    best_r = base
                    arg_r = r
            if s > 0:  # the root is never a modifier
                Inc[s, t, 0] = best_l + scores[t, s]
                Ib[s, t, 0] = arg_l
            Inc[s, t, 1] = best_r + scores[s, t]
            Ib[s, t, 1] = arg_r
            # complete spans
            best = NEG
            arg = s
            for r in range(s, t):
                v = C[s, r, 0] + Inc[r, t, 0]
                if v > best:
                    best = v
                    arg = r
            C[s, t, 0] = best
            Cb[s, t, 0] = arg
            best = NEG
            arg = t
            for r in range(s + 1, t + 1):
                v = Inc[s, r, 1] + C[r, t, 1]
                if v > best:
                    best = v
                    arg = r
            C[s, t, 1] = best
            Cb[s, t, 1] = arg
    # backtrack with an explicit stack of (s, t, d, complete)
    stack = np.zeros((4 * N + 4, 4), dtype=np.int64)
    top = 0
    stack[0, 0] = 0
    stack[0, 1] = N - 1
    stack[0, 2] = 1
    stack[0, 3] = 1
    top = 1
    while top > 0:
        top -= 1
        s = stack[top, 0]
        t = stack[top, 1]
        d = stack[top, 2]
        comp = stack[top, 3]
        if s == t:
            continue
        if comp == 1:
            r = Cb[s, t, d]
            if d == 0:
                stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = s, r, 0, 1
                stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2], stack[top + 1, 3] = r, t, 0, 0
            else:
                stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = s, r, 1, 0
                stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2], stack[top + 1, 3] = r, t, 1, 1
            top += 2
        else:
            r = Ib[s, t, d]
            if d == 0:
                heads[s] = t
            else:
                heads[t] = s
            stack[top, 0], stack[top, 1], stack[top, 2], stack[top, 3] = s, r, 1, 1
            stack[top + 1, 0], stack[top + 1, 1], stack[top + 1, 2], stack[top + 1, 3] = r + 1, t, 0, 1
            top += 2
    heads[0] = -1
    return heads
