"""Compiled loops for the working set and the group norms (numba, ``nogil``).

At the dimensions of the structured tasks (10^7 coordinates, 10^5-10^6 nonzeros per cut) the
engine's own work is memory-bound: every numpy expression over a ``(dim,)`` vector allocates
and streams a temporary. These kernels do each operation in one pass without temporaries:

- :func:`group_dot_sorted`: per-group inner products of two sparse rows with sorted indices
  (a merge join: sequential access only, no dense scatter);
- :func:`group_dot_gather`: the same against a dense scatter of one of the rows (faster than
  the merge join while the scatter buffer stays in cache: a few 10^5 coordinates);
  :func:`gather_dot_upto` one cache-sized block of coordinates at a time (beyond);
- :func:`group_dot_gather_runs`: the gather when the groups are contiguous runs of
  coordinates (templates' features are numbered template by template): a binary search per
  run instead of a group lookup per entry;
- :func:`scatter_add_grouped_upto`: ``out[idx] += coef[group] * data`` from a cursor up to a
  coordinate (one coefficient per group, ``w_j = A_j^T beta_j``; one group: ``A alpha``; threads
  add disjoint ranges of coordinates of one output, block by block, so that the written block
  stays in cache across the rows);
- :func:`scatter_rows_grouped_range`: the same for many rows over a range of coordinates, block
  by block, in one call (a thread's whole share: threads that called a
  compiled loop per row and block spent more time handing the GIL over than adding);
  :func:`gram_blocks`: a Gram row's share of many cache blocks, in one call. These take the rows
  as addresses and lengths (:func:`row_addresses`) of arrays the caller keeps alive during the
  call: numba's typed lists would compile their own methods in every new process, where these
  loops come from the on-disk cache (compile times of a fresh process:
  ``docs/results/cold_start.md``);
- :func:`sparse_dot`: ``sum(data * w[idx])``;
- :func:`group_sq_sums`: per-group sums of squares of a sparse row;
- :func:`group_norms_kernel`: ``||v_j||_2`` per group, rescaled where the squares could under-
  or overflow; :func:`group_norms_runs` the same run by run;
- :func:`scale_by_group`: ``v *= mu[groups]`` in place (:func:`scale_by_group_runs` run by run);
  :func:`scaled_by_group` into a new array.

All take group ids as an integer array of shape (dim,); a zero-length array means one group.

numba compiles every loop a fit reaches once per installation (``cache=True`` keeps the machine
code), and within that first process it also compiles each numpy function and each helper a
loop calls. So the loops take their arrays from the Python caller instead of allocating them, and
the helpers called from other loops are inlined by numba (``inline="always"``: compiled as part of
each caller, not as functions of their own); the arithmetic is the same either way.
"""

from __future__ import annotations

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic

__all__ = [
    "group_dot_sorted",
    "group_dot_gather",
    "group_dot_gather_runs",
    "integer_multiples",
    "scatter_add_grouped_upto",
    "row_addresses",
    "scatter_rows_grouped_range",
    "gram_blocks",
    "sparse_dot",
    "group_sq_sums",
    "group_norms_kernel",
    "group_norms_runs",
    "scale_by_group",
    "scale_by_group_runs",
    "scaled_by_group",
]


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


@njit(nogil=True, cache=True, inline="always")
def _gather_sum(ir, dr, dense, lo, hi, c0):
    """``sum_{k in [lo, hi)} dr[k] * dense[ir[k] - c0]`` with four partial sums; the caller
    guarantees ``0 <= lo``, ``hi <= len(ir)`` and ``ir[k] >= c0`` on the range.

    Two things decide its speed (``benchmarks/engine_overhead.py``'s Gram-row section; see
    docs/results/engine_overhead.md):

    - indices are unsigned: numba guards every signed index against negative values (Python's
      wrap-around), a compare and a branch per load, which it drops only where it can prove the
      index non-negative (a loop from a literal 0, not from ``lo``);
    - four independent sums let the loads and multiplications of consecutive entries overlap
      instead of waiting for each floating-point addition.

    The entries are summed in a fixed order whatever the caller, so every result is reproducible.
    """
    a0 = 0.0
    a1 = 0.0
    a2 = 0.0
    a3 = 0.0
    c = np.int64(c0)
    k = np.uint64(lo)
    h = np.uint64(hi)
    one, two, three, four = np.uint64(1), np.uint64(2), np.uint64(3), np.uint64(4)
    while k + four <= h:
        a0 += dr[k] * dense[np.uint64(ir[k] - c)]
        a1 += dr[k + one] * dense[np.uint64(ir[k + one] - c)]
        a2 += dr[k + two] * dense[np.uint64(ir[k + two] - c)]
        a3 += dr[k + three] * dense[np.uint64(ir[k + three] - c)]
        k += four
    while k < h:
        a0 += dr[k] * dense[np.uint64(ir[k] - c)]
        k += one
    return (a0 + a1) + (a2 + a3)


@njit(nogil=True, cache=True)
def group_dot_gather(ir, dr, dense, groups, out):
    """``out[g] += sum over k with groups[ir[k]] == g of dr[k] * dense[ir[k]]``."""
    if groups.shape[0] == 0:
        out[0] += _gather_sum(ir, dr, dense, np.int64(0), ir.shape[0], np.int64(0))  # int64, as in the other callers:
        # one compiled specialisation (a literal 0 would be another)
    else:
        for k in range(ir.shape[0]):
            i = np.uint64(ir[k])  # unsigned: no wrap-around guard per load (see _gather_sum)
            out[np.uint64(groups[i])] += dr[k] * dense[i]


@njit(nogil=True, cache=True, inline="always")
def _first_at_least(idx, lo, hi, value):
    """Smallest ``k`` in ``[lo, hi]`` with ``idx[k] >= value`` (``hi`` if none); ``idx`` increasing."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if idx[mid] < value:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(nogil=True, cache=True)
def group_dot_gather_runs(ir, dr, dense, run_lo, run_group, out):
    """``out[run_group[s]] += sum over k with run_lo[s] <= ir[k] < run_lo[s+1] of dr[k] * dense[ir[k]]``.

    ``ir`` strictly increasing; ``run_lo`` increasing with ``run_lo[0] == 0`` (the coordinate
    runs of the groups; the last run ends at ``dim``).
    """
    n = ir.shape[0]
    n_runs = run_lo.shape[0]
    k = np.int64(0)  # not a literal 0: the callees' int64 specialisations serve this loop too
    for s in range(n_runs):
        if k >= n:
            break
        e = n if s + 1 == n_runs else _first_at_least(ir, k, n, run_lo[s + 1])
        out[run_group[s]] += _gather_sum(ir, dr, dense, k, e, np.int64(0))  # int64: one specialisation
        k = e


@njit(nogil=True, cache=True, inline="always")
def gather_dot_upto(idx, data, block, c0, c1):
    """``sum_j data[j] * block[idx[j] - c0]`` over the entries with ``c0 <= idx[j] < c1`` (found by
    binary search): one row's share of a Gram entry within the coordinate block ``[c0, c1)``,
    held densely in ``block`` (small enough to stay in cache across the rows)."""
    n = idx.shape[0]
    k = _first_at_least(idx, np.int64(0), n, c0)  # int64 lo: one specialisation (a literal 0 is another)
    return _gather_sum(idx, data, block, k, _first_at_least(idx, k, n, c1), c0)


@njit(nogil=True, cache=True, inline="always")
def scatter_add_grouped_upto(out, idx, data, coef, groups, k, c1):
    """``out[i] += coef[groups[i]] * data[j]`` for ``i = idx[j]``, ``j = k, k+1, ...`` while
    ``i < c1`` (``groups`` empty: one group, ``coef[0]``); returns the first ``j`` not added."""
    hi = _first_at_least(idx, k, idx.shape[0], c1)
    j = np.uint64(k)  # unsigned: no wrap-around guard per access (see _gather_sum)
    if groups.shape[0] == 0:
        a = coef[0]
        while j < np.uint64(hi):
            out[np.uint64(idx[j])] += a * data[j]
            j += np.uint64(1)
    else:
        while j < np.uint64(hi):
            i = np.uint64(idx[j])
            out[i] += coef[np.uint64(groups[i])] * data[j]
            j += np.uint64(1)
    return hi


def row_addresses(arrays):
    """``(addresses, lengths)``: int64 arrays of shape (n,) naming 1-D C-contiguous arrays for the
    compiled loops below, which read them in place. The caller keeps the arrays alive, unchanged,
    while a loop runs; all of them must share one dtype (the loops are compiled for it)."""
    addresses = np.empty(len(arrays), dtype=np.int64)
    lengths = np.empty(len(arrays), dtype=np.int64)
    for j, a in enumerate(arrays):
        if a.ndim != 1 or not a.flags.c_contiguous:
            raise ValueError("row_addresses needs 1-D C-contiguous arrays")
        addresses[j] = a.ctypes.data
        lengths[j] = a.shape[0]
    return addresses, lengths


@intrinsic
def _pointer_to(typingctx, address, proto):
    """A pointer to ``proto``'s dtype at the integer ``address`` (see :func:`row_addresses`)."""
    sig = types.CPointer(proto.dtype)(address, proto)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], context.get_value_type(signature.return_type))

    return sig, codegen


@njit(nogil=True, inline="always")
def _row(addresses, lengths, j, proto):
    """Array ``j`` of :func:`row_addresses`, of ``proto``'s dtype (no copy). Inlined into its
    callers by numba (not a compiled function of its own per dtype: one pipeline fewer per row
    dtype when a new process compiles the loops; they are cached with it)."""
    return carray(_pointer_to(addresses[j], proto), (lengths[j],))  # type: ignore[call-arg]  # an intrinsic


@njit(nogil=True, cache=True)
def scatter_rows_grouped_range(
    out, rows_idx, rows_val, lengths, idx_proto, val_proto, coef, groups, c0, c1, step, cursor
):
    """``out[i] += coef[j, groups[i]] * val_j[k]`` for ``i = idx_j[k]`` in ``[c0, c1)``, over
    every row ``j`` (index and value arrays at ``rows_idx[j]`` and ``rows_val[j]``, ``lengths[j]``
    entries, of the dtypes of ``idx_proto`` and ``val_proto``: :func:`row_addresses`; ``coef`` of
    shape (n_rows, n_groups), ``groups`` empty for one group: ``coef[j, 0]``): ``step``
    coordinates at a time, all rows per block, so that the written block of ``out`` stays in
    cache; each coordinate is summed in row order. ``cursor`` (int64, shape (n_rows,)) is scratch
    space, allocated by the caller (a loop that calls no numpy function compiles faster in a new
    process)."""
    n = rows_idx.shape[0]
    for j in range(n):
        cursor[j] = _first_at_least(_row(rows_idx, lengths, j, idx_proto), np.int64(0), lengths[j], c0)
    e = c0
    while e < c1:
        e = e + step if e + step < c1 else c1  # not min(): numba compiles its builtin in every new process
        for j in range(n):
            ir = _row(rows_idx, lengths, j, idx_proto)
            dr = _row(rows_val, lengths, j, val_proto)
            cursor[j] = scatter_add_grouped_upto(out, ir, dr, coef[j], groups, cursor[j], e)


@njit(nogil=True, cache=True)
def gram_blocks(
    blocks, edges, group, pos, idx, data, rows_idx, rows_val, lengths, idx_proto, val_proto, row_ids, part, buf
):
    """``part[row_ids[j], group[b]] += <new slope, row j>`` restricted to the coordinate block
    ``b`` (``[edges[b], edges[b + 1])``, the new slope's entries ``pos[b]:pos[b + 1]``), for every
    block of ``blocks`` and every row (as in :func:`scatter_rows_grouped_range`): the block's entries are
    scattered into ``buf`` (left zero on return), which stays in cache while every row gathers
    from it."""
    for bi in range(blocks.shape[0]):
        b = blocks[bi]
        c0 = edges[b]
        c1 = edges[b + 1]
        for k in range(pos[b], pos[b + 1]):
            buf[idx[k] - c0] = data[k]
        g = group[b]
        for j in range(rows_idx.shape[0]):
            ir = _row(rows_idx, lengths, j, idx_proto)
            dr = _row(rows_val, lengths, j, val_proto)
            part[row_ids[j], g] += gather_dot_upto(ir, dr, buf, c0, c1)
        for k in range(pos[b], pos[b + 1]):
            buf[idx[k] - c0] = 0.0


@njit(nogil=True, cache=True)
def integer_multiples(data, scale, limit, q):
    """``(ok, top)``: writes ``q`` (int32, shape of ``data``) with ``q[k] * scale == data[k]`` bit
    for bit for every ``k`` and returns ``top = max |q|``; ``ok`` False as soon as an entry is not
    such a multiple within ``limit`` (``q`` is then partial). One pass over the row instead of
    numpy's six; the caller allocates ``q`` (a loop that calls no numpy function compiles faster
    in a new process)."""
    n = data.shape[0]
    top = 0.0
    for k in range(n):
        r = np.rint(data[k] / scale)
        a = abs(r)
        if not a <= limit or r * scale != data[k]:
            return False, top
        if a > top:
            top = a
        q[k] = np.int32(r)
    return True, top


@njit(nogil=True, cache=True)
def sparse_dot(idx, data, w):
    """``sum_k data[k] * w[idx[k]]``."""
    return _gather_sum(idx, data, w, np.int64(0), idx.shape[0], np.int64(0))


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
            out[np.uint64(groups[np.uint64(idx[k])])] += data[k] * data[k]


_SAFE_LO, _SAFE_HI = 1e-140, 1e140  # |v_i| range whose squares neither underflow nor overflow a sum


@njit(nogil=True, cache=True, inline="always")
def _finish_norms(sq, top, out, redo):
    """``out = sqrt(sq)``; ``redo[g]`` True for the groups whose largest entry is outside the safe
    range; returns how many there are."""
    n_redo = 0
    for g in range(sq.shape[0]):
        t = top[g]
        out[g] = np.sqrt(sq[g])
        r = t > 0.0 and (t < _SAFE_LO or t > _SAFE_HI)
        redo[g] = r
        if r:
            n_redo += 1
    return n_redo


@njit(nogil=True, cache=True)
def _apply_rescaled(out, redo, top, acc):
    """``out[g] = top[g] * sqrt(acc[g])`` for the groups recomputed from ``(v_i / top[g])**2``."""
    for g in range(out.shape[0]):
        if redo[g]:
            out[g] = top[g] * np.sqrt(acc[g])


def _norm_buffers(n_groups):
    """``(top, sq, out, redo)`` for the passes below, allocated here rather than in the compiled
    loops: numba compiles each numpy function a loop calls in every new process (its cache keeps
    only the loops), so a loop without them compiles faster on a first fit."""
    return np.zeros(n_groups), np.zeros(n_groups), np.empty(n_groups), np.empty(n_groups, dtype=np.bool_)


@njit(nogil=True, cache=True)
def _norms_pass(v, groups, top, sq, out, redo):
    """Each group's largest ``|v_i|`` into ``top`` and sum of squares into ``sq`` (both zero on
    entry), then :func:`_finish_norms`."""
    for i in range(v.shape[0]):
        x = v[i]
        g = groups[i]
        a = abs(x)
        if a > top[g]:
            top[g] = a
        sq[g] += x * x
    return _finish_norms(sq, top, out, redo)


@njit(nogil=True, cache=True)
def _rescaled_norms(v, groups, top, redo, out):
    """``out[g]`` recomputed from ``(v_i / top[g])**2`` for the groups marked in ``redo``."""
    acc = np.zeros(out.shape[0])
    for i in range(v.shape[0]):
        g = groups[i]
        if redo[g]:
            r = v[i] / top[g]
            acc[g] += r * r
    _apply_rescaled(out, redo, top, acc)


def group_norms_kernel(v, groups, n_groups):
    """``||v_j||_2`` per group, ndarray of shape (n_groups,).

    One compiled pass takes each group's sum of squares and largest ``|v_i|``. A group whose
    largest entry is below 1e-140 or above 1e140 (where squares could under- or overflow) is then
    recomputed from ``(v_i / max_j)**2`` in a second pass (a loop of its own, compiled only when
    a vector needs it), so no group loses precision whatever its scale; in the safe range the
    plain sum is accurate (entries small enough for their squares to underflow are below 1e-154,
    i.e. 1e-28 relative to the largest).
    """
    top, sq, out, redo = _norm_buffers(n_groups)
    if _norms_pass(v, groups, top, sq, out, redo):
        _rescaled_norms(v, groups, top, redo, out)
    return out


@njit(nogil=True, cache=True)
def _norms_runs_pass(v, run_lo, run_group, top, sq, out, redo):
    """:func:`_norms_pass` for groups that are contiguous runs of coordinates (no group id read
    per entry: one streaming pass over ``v``)."""
    n_runs = run_lo.shape[0]
    for s in range(n_runs):
        hi = v.shape[0] if s + 1 == n_runs else run_lo[s + 1]
        g = run_group[s]
        t = top[g]
        acc = 0.0
        for i in range(run_lo[s], hi):
            x = v[i]
            a = abs(x)
            if a > t:
                t = a
            acc += x * x
        top[g] = t
        sq[g] += acc
    return _finish_norms(sq, top, out, redo)


@njit(nogil=True, cache=True)
def _rescaled_norms_runs(v, run_lo, run_group, top, redo, out):
    """:func:`_rescaled_norms` run by run."""
    acc = np.zeros(out.shape[0])
    n_runs = run_lo.shape[0]
    for s in range(n_runs):
        g = run_group[s]
        if redo[g]:
            hi = v.shape[0] if s + 1 == n_runs else run_lo[s + 1]
            for i in range(run_lo[s], hi):
                r = v[i] / top[g]
                acc[g] += r * r
    _apply_rescaled(out, redo, top, acc)


def group_norms_runs(v, run_lo, run_group, n_groups):
    """:func:`group_norms_kernel` for groups that are contiguous runs of coordinates (no group id
    read per entry: one streaming pass over ``v``)."""
    top, sq, out, redo = _norm_buffers(n_groups)
    if _norms_runs_pass(v, run_lo, run_group, top, sq, out, redo):
        _rescaled_norms_runs(v, run_lo, run_group, top, redo, out)
    return out


#: Up to this many runs :func:`scale_by_group_runs` scales in numpy, one in-place product per run
#: (a few microseconds of Python per run; the products are the same), so that a fit whose groups
#: are a few templates compiles no loop for it in a new process.
NUMPY_SCALE_MAX_RUNS = 64


def scale_by_group_runs(v, mu, run_lo, run_group):
    """``v[i] *= mu[group of i]`` in place, run by run: in numpy up to
    :data:`NUMPY_SCALE_MAX_RUNS` runs, beyond in one compiled pass."""
    n_runs = run_lo.shape[0]
    if n_runs > NUMPY_SCALE_MAX_RUNS:
        _scale_runs(v, mu, run_lo, run_group)
        return
    for s in range(n_runs):
        hi = v.shape[0] if s + 1 == n_runs else int(run_lo[s + 1])
        v[int(run_lo[s]) : hi] *= mu[run_group[s]]


@njit(nogil=True, cache=True)
def _scale_runs(v, mu, run_lo, run_group):
    """:func:`scale_by_group_runs` in one compiled pass."""
    n_runs = run_lo.shape[0]
    for s in range(n_runs):
        hi = v.shape[0] if s + 1 == n_runs else run_lo[s + 1]
        m = mu[run_group[s]]
        for i in range(run_lo[s], hi):
            v[i] *= m


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
