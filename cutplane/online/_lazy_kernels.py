"""Compiled loops of :class:`cutplane.online.lazy_groups.LazyGroupVector` (numba, one pass each).

Array roles (see the class): ``v`` unnormalised values, ``cgen`` the generation id each
coordinate was written in, ``gen_group`` the group of a generation id, ``gen`` the current
generation of each group, ``s`` the scales, ``sq`` the squared norms of ``v`` per group; with
``track``: ``S`` the per-group sums of scales, ``acc`` / ``frozen`` per-coordinate sums and
``gen_S`` the value of ``S`` at the end of each finished generation.
"""

from __future__ import annotations

from numba import njit

__all__ = [
    "gather_kernel",
    "dense_kernel",
    "dense_range_kernel",
    "dead_groups_kernel",
    "add_kernel",
    "renormalise_kernel",
]


@njit(cache=True, nogil=True)
def gather_kernel(v, cgen, gen_group, gen, s, idx, out):
    """``out[k] = w[idx[k]]`` (0 for a coordinate of an older generation)."""
    for k in range(idx.size):
        i = idx[k]
        c = cgen[i]
        g = gen_group[c]
        out[k] = s[g] * v[i] if c == gen[g] else 0.0


@njit(cache=True, nogil=True)
def dense_kernel(v, cgen, gen_group, gen, s, out):
    """``out[i] = w[i]`` for every coordinate (0 for a coordinate of an older generation); one pass."""
    for i in range(v.size):
        c = cgen[i]
        g = gen_group[c]
        out[i] = s[g] * v[i] if c == gen[g] else 0.0


@njit(cache=True, nogil=True)
def dense_range_kernel(v, cgen, lo, hi, gen_j, s_j, out):
    """``out[i] = w[i]`` for the coordinates ``lo..hi-1`` of one group (contiguous groups)."""
    for i in range(lo, hi):
        out[i] = s_j * v[i] if cgen[i] == gen_j else 0.0


@njit(cache=True, nogil=True)
def dead_groups_kernel(cgen, gen_group, s, idx, flag):
    """Set ``flag[g] = True`` for the groups of ``idx`` whose scale is 0; returns how many were set."""
    n = 0
    for k in range(idx.size):
        g = gen_group[cgen[idx[k]]]
        if s[g] == 0.0 and not flag[g]:
            flag[g] = True
            n += 1
    return n


@njit(cache=True, nogil=True)
def add_kernel(v, cgen, gen_group, gen, s, sq, idx, vals, track, S, acc, frozen, gen_S):
    """``w[idx] += vals`` (no group of ``idx`` may have scale 0; ``idx`` without repeats)."""
    for k in range(idx.size):
        i = idx[k]
        c = cgen[i]
        g = gen_group[c]
        if c != gen[g]:  # older generation: fold its sum, then it reads 0
            if track:
                frozen[i] += gen_S[c] * v[i] + acc[i]
                acc[i] = 0.0
            v[i] = 0.0
            cgen[i] = gen[g]
        d = vals[k] / s[g]
        sq[g] += d * (2.0 * v[i] + d)
        if track:
            acc[i] -= d * S[g]
        v[i] += d


@njit(cache=True, nogil=True)
def renormalise_kernel(v, cgen, members, lo, hi, gen_j, s_j, track, S_j, acc, frozen, gen_S):
    """Coordinates ``members[lo:hi]`` (or ``lo..hi-1`` when ``members`` is empty) of one group:
    fold their sums into ``frozen``, ``v <- s_j v``; returns the new ``||v_j||^2``."""
    sq = 0.0
    use_members = members.size > 0
    for k in range(lo, hi):
        i = members[k] if use_members else k
        c = cgen[i]
        if c != gen_j:
            if track:
                frozen[i] += gen_S[c] * v[i] + acc[i]
                acc[i] = 0.0
            v[i] = 0.0
            cgen[i] = gen_j
        else:
            if track:
                frozen[i] += S_j * v[i] + acc[i]
                acc[i] = 0.0
            v[i] *= s_j
            sq += v[i] * v[i]
    return sq
