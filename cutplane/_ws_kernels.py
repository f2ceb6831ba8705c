"""Compiled loops for the working set and the group norms (numba, ``nogil``).

At the dimensions of the structured tasks (10^7 coordinates, 10^5-10^6 nonzeros per cut) the
engine's own work is memory-bound: every numpy expression over a ``(dim,)`` vector allocates
and streams a temporary. These kernels do each operation in one pass without temporaries:

- :func:`group_dot_sorted`: per-group inner products of two sparse rows with sorted indices
  (a merge join: sequential access only, no dense scatter);
- :func:`group_dot_gather`: the same against a dense scatter of one of the rows (for cuts
  dense enough that the merge join's branches cost more than the random gathers);
- :func:`scatter_add`: ``out[idx] += a * data``;
- :func:`sparse_dot`: ``sum(data * w[idx])``;
- :func:`group_sq_sums`: per-group sums of squares of a sparse row;
- :func:`group_norms_kernel`: ``||v_j||_2`` per group with a per-group scale (no underflow or
  overflow of the squares);
- :func:`scale_by_group`: ``v *= mu[groups]`` in place; :func:`scaled_by_group` into a new array.

All take group ids as an integer array of shape (dim,); a zero-length array means one group.
"""
from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["group_dot_sorted", "group_dot_gather", "scatter_add", "sparse_dot", "group_sq_sums", "group_norms_kernel",
           "scale_by_group", "scaled_by_group"]


@njit(nogil=True, cache=True)
def group_dot_sorted(i1, d1, i2, d2, groups, out):
    """``out[g] += sum over common indices k with groups[k] == g of d1 * d2``.

    ``i1`` and ``i2`` must be strictly increasing. ``out`` has shape (n_groups,); with an empty
    ``groups`` everything goes to ``out[0]``.
    """
    one = groups.shape[0] == 0
    p, q = 0, 0
    n1, n2 = i1.shape[0], i2.shape[0]
    acc = 0.0
    while p < n1 and q < n2:
        a = i1[p]
        b = i2[q]
        if a == b:
            if one:
                acc += d1[p] * d2[q]
            else:
                out[groups[a]] += d1[p] * d2[q]
            p += 1
            q += 1
        elif a < b:
            p += 1
        else:
            q += 1
    if one:
        out[0] += acc


@njit(nogil=True, cache=True)
def group_dot_gather(ir, dr, dense, groups, out):
    """``out[g] += sum over k with groups[ir[k]] == g of dr[k] * dense[ir[k]]``."""
    if groups.shape[0] == 0:
        acc = 0.0
        for k in range(ir.shape[0]):
            acc += dr[k] * dense[ir[k]]
        out[0] += acc
    else:
        for k in range(ir.shape[0]):
            i = ir[k]
            out[groups[i]] += dr[k] * dense[i]


@njit(nogil=True, cache=True)
def scatter_add(out, idx, data, a):
    """``out[idx] += a * data`` (indices unique)."""
    for k in range(idx.shape[0]):
        out[idx[k]] += a * data[k]


@njit(nogil=True, cache=True)
def sparse_dot(idx, data, w):
    """``sum_k data[k] * w[idx[k]]``."""
    s = 0.0
    for k in range(idx.shape[0]):
        s += data[k] * w[idx[k]]
    return s


@njit(nogil=True, cache=True)
def group_sq_sums(idx, data, groups, out):
    """``out[g] += sum of data[k]**2 over groups[idx[k]] == g`` (``out[0]`` for one group)."""
    if groups.shape[0] == 0:
        s = 0.0
        for k in range(idx.shape[0]):
            s += data[k] * data[k]
        out[0] += s
    else:
        for k in range(idx.shape[0]):
            out[groups[idx[k]]] += data[k] * data[k]


@njit(nogil=True, cache=True)
def group_norms_kernel(v, groups, n_groups):
    """``||v_j||_2`` per group, ndarray of shape (n_groups,).

    Two passes: the largest ``|v_i|`` of each group, then the sum of ``(v_i / max_j)**2``,
    so no square under- or overflows whatever the scale of the group.
    """
    top = np.zeros(n_groups)
    for i in range(v.shape[0]):
        a = abs(v[i])
        g = groups[i]
        if a > top[g]:
            top[g] = a
    acc = np.zeros(n_groups)
    for i in range(v.shape[0]):
        g = groups[i]
        t = top[g]
        if t > 0.0:
            r = v[i] / t
            acc[g] += r * r
    out = np.empty(n_groups)
    for g in range(n_groups):
        out[g] = top[g] * np.sqrt(acc[g])
    return out


@njit(nogil=True, cache=True)
def scale_by_group(v, mu, groups):
    """``v[i] *= mu[groups[i]]`` in place."""
    for i in range(v.shape[0]):
        v[i] *= mu[groups[i]]


@njit(nogil=True, cache=True)
def scaled_by_group(v, mu, groups):
    """``mu[groups] * v`` in one pass (one read of ``v``, one write), ndarray of shape (dim,)."""
    out = np.empty(v.shape[0])
    for i in range(v.shape[0]):
        out[i] = mu[groups[i]] * v[i]
    return out
