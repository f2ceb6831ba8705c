"""A working set as plain arrays and back: what a checkpoint stores, and a compacting rebuild.

:func:`working_set_state` gives the offsets, duals, idle counts and slopes of the cuts as
arrays (no pickling); :func:`working_set_from_state` rebuilds a working set with the same cuts,
duals and idle counts from them, recomputing the Gram blocks (its arrays sized to the cuts, so
it also serves as compaction: :func:`cutplane.working_set.memory_budget.fit_memory`).

With ``compact=True`` (what checkpoints store) sparse slopes are written in their stored form,
exactly and in fewer bytes, instead of the float64 CSR arrays: each row's sorted indices as the
gaps between them (the first index of a row as it is) in one byte each (uint8; uint16 or uint32
when that is smaller), a gap that does not fit written as the type's largest value and listed
apart; each row's values as the working set keeps them
(:meth:`~cutplane.working_set.WorkingSet.stored_row`): integer counts, narrowed the same way to
int8 (a count outside ``-127..126`` listed apart), with one scale per row, or float64. A slope of
a structured oracle (feature counts times ``1/n``) then takes about 2 bytes per nonzero instead
of 12. :func:`expand_slopes` turns them back into the CSR arrays, bit for bit those of
``compact=False``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..cuts import Cut
from .working_set import WorkingSet

__all__ = ["working_set_state", "working_set_from_state", "expand_slopes", "COMPACT_KEYS"]

#: The arrays of compact sparse slopes (``working_set_state(ws, compact=True)``).
COMPACT_KEYS = (
    "ws_gaps",
    "ws_gaps_at",
    "ws_gaps_wide",
    "ws_row_kind",
    "ws_row_scale",
    "ws_counts",
    "ws_counts_at",
    "ws_counts_wide",
    "ws_floats",
)
#: ``ws_row_kind``: how a row's values are stored (float64, or int16 / int32 counts times the scale).
_KINDS = {0: np.float64, 2: np.int16, 4: np.int32}


def _escaped(a: np.ndarray, dtypes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``a`` (int64) in the smallest of ``dtypes`` counting the values listed apart: ``(narrow,
    at, wide)``, a value outside ``[lo, hi)`` (``hi`` the type's largest value, the escape mark;
    ``lo`` its smallest, kept for signed types) written ``hi`` and listed apart (positions
    ``at``, values ``wide``, int64)."""
    options: list = []
    for dt in dtypes:
        info = np.iinfo(dt)
        lo = info.min + 1 if info.min < 0 else 0
        out = (a < lo) | (a >= info.max)
        options.append((a.size * np.dtype(dt).itemsize + 16 * int(np.count_nonzero(out)), len(options), dt, out))
    _, _, dt, out = min(options, key=lambda o: o[:2])
    narrow = a.astype(dt)
    narrow[out] = np.iinfo(dt).max
    at = np.flatnonzero(out).astype(np.int64)
    return narrow, at, a[at]


def _unescaped(narrow, at, wide) -> np.ndarray:
    a = np.asarray(narrow).astype(np.int64)
    a[np.asarray(at, dtype=np.int64)] = np.asarray(wide, dtype=np.int64)
    return a


def _compact_slopes(ws: WorkingSet) -> dict:
    """The sparse slopes of ``ws`` in compact form (the module docstring)."""
    n = ws.n_cuts
    rows = [ws.stored_row(r) for r in range(n)]
    nnz = np.array([len(idx) for idx, _, _ in rows], dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(nnz, out=indptr[1:])
    idx = np.concatenate([np.asarray(i, dtype=np.int64) for i, _, _ in rows]) if n else np.zeros(0, np.int64)
    gaps = np.empty_like(idx)
    if idx.size:
        gaps[1:] = idx[1:] - idx[:-1]
        starts = indptr[:-1][nnz > 0]
        gaps[starts] = idx[starts]  # a row's first index as it is
    kind = np.zeros(n, dtype=np.int8)
    scale = np.ones(n, dtype=np.float64)
    counts, floats = [], []
    for r, (_, values, sc) in enumerate(rows):
        values = np.asarray(values)
        if values.dtype in (np.int16, np.int32):
            kind[r] = values.dtype.itemsize
            scale[r] = sc
            counts.append(values.astype(np.int64))
        else:  # the row as the float64 CSR holds it
            floats.append(np.asarray(values * sc).astype(np.float64))
    g, g_at, g_wide = _escaped(gaps, (np.uint8, np.uint16, np.uint32))
    c, c_at, c_wide = _escaped(np.concatenate(counts) if counts else np.zeros(0, np.int64), (np.int8, np.int16))
    return {
        "ws_indptr": indptr,
        "ws_gaps": g,
        "ws_gaps_at": g_at,
        "ws_gaps_wide": g_wide,
        "ws_row_kind": kind,
        "ws_row_scale": scale,
        "ws_counts": c,
        "ws_counts_at": c_at,
        "ws_counts_wide": c_wide,
        "ws_floats": np.concatenate(floats) if floats else np.zeros(0),
    }


def expand_slopes(arrays, dim) -> dict:
    """``arrays`` with compact sparse slopes (``working_set_state(ws, compact=True)``) turned
    into the CSR arrays ``ws_indices`` and ``ws_data`` of ``compact=False``, bit for bit; the
    same dict when it holds none.

    Raises
    ------
    ValueError
        The compact arrays do not fit together (lengths, kinds).
    """
    if "ws_gaps" not in arrays:
        return arrays
    out = {k: v for k, v in arrays.items() if k not in COMPACT_KEYS}
    indptr = np.asarray(arrays["ws_indptr"], dtype=np.int64)
    n, nnz = indptr.shape[0] - 1, int(indptr[-1])
    gaps = _unescaped(arrays["ws_gaps"], arrays["ws_gaps_at"], arrays["ws_gaps_wide"])
    kind, scale = arrays["ws_row_kind"], arrays["ws_row_scale"]
    if gaps.shape != (nnz,) or kind.shape != (n,) or scale.shape != (n,):
        raise ValueError("compact slopes: gaps, kinds and scales do not match the rows")
    # a row's indices: the cumulative sum of its gaps (its first gap is its first index)
    idx = np.cumsum(gaps)
    starts = indptr[:-1]
    row_of = np.repeat(np.arange(n), np.diff(indptr))
    before = np.concatenate([[0], idx])[starts]  # the running sum before each row's first entry
    idx -= before[row_of]
    counts = _unescaped(arrays["ws_counts"], arrays["ws_counts_at"], arrays["ws_counts_wide"])
    floats = np.asarray(arrays["ws_floats"], dtype=np.float64)
    data = np.empty(nnz)
    ci = fi = 0
    for r in range(n):
        a, b = int(indptr[r]), int(indptr[r + 1])
        k = int(kind[r])
        if k not in _KINDS:
            raise ValueError(f"compact slopes: unknown row kind {k}")
        if k:  # the counts times the scale, as the working set's matrix() computes them
            data[a:b] = counts[ci : ci + b - a].astype(_KINDS[k]) * float(scale[r])
            ci += b - a
        else:
            data[a:b] = floats[fi : fi + b - a]
            fi += b - a
    if ci != counts.shape[0] or fi != floats.shape[0]:
        raise ValueError("compact slopes: the values do not match the rows")
    out["ws_indices"] = idx.astype(np.int32 if dim <= np.iinfo(np.int32).max + 1 else np.int64)
    out["ws_data"] = data
    return out


def working_set_state(ws: WorkingSet, *, compact: bool = False) -> dict:
    """The arrays that rebuild ``ws``: ``ws_offsets``, ``ws_duals``, ``ws_idle`` and the slopes
    (``ws_indptr``, ``ws_indices``, ``ws_data`` when sparse, else ``ws_dense``); with cuts rounded
    to float32 (:mod:`cutplane.rounded_cuts`), also ``ws_exact_offsets`` and ``ws_residual_norms``.
    With ``compact``, sparse slopes as :data:`COMPACT_KEYS` and ``ws_indptr`` (the module
    docstring; :func:`expand_slopes` reads them back)."""
    out = {
        "ws_offsets": np.array(ws.offsets, dtype=np.float64),
        "ws_duals": np.array(ws.duals, dtype=np.float64),
        "ws_idle": np.array(ws.idle_counts, dtype=np.int64),
    }
    if np.any(ws.residual_norms > 0):
        out["ws_exact_offsets"] = np.array(ws.exact_offsets, dtype=np.float64)
        out["ws_residual_norms"] = np.array(ws.residual_norms, dtype=np.float64)
    if ws.sparse and compact:
        out.update(_compact_slopes(ws))
        return out
    A = ws.matrix()
    if ws.sparse:
        A = sp.csr_matrix(A)
        out.update(
            ws_indptr=A.indptr.astype(np.int64),
            # int32 when every index fits (dim <= 2**31): a quarter of the slopes' bytes, read back exactly
            ws_indices=A.indices.astype(np.int32 if ws.dim <= np.iinfo(np.int32).max + 1 else np.int64),
            ws_data=A.data.astype(np.float64),
        )
    else:
        out["ws_dense"] = np.array(A, dtype=np.float64).reshape(-1, ws.dim)
    return out


def working_set_from_state(arrays, dim, *, groups=None, zero_tol=1e-7) -> WorkingSet:
    """A :class:`WorkingSet` with the cuts, duals and idle counts of :func:`working_set_state`.

    The Gram blocks are recomputed from the slopes (one row of inner products per cut).
    """
    ws = WorkingSet(dim, groups=groups, zero_tol=zero_tol)
    arrays = expand_slopes(arrays, dim)
    offsets = arrays["ws_offsets"]
    if "ws_dense" in arrays:
        A = arrays["ws_dense"]
        for r in range(offsets.shape[0]):
            ws.add(Cut(A[r], float(offsets[r])))
    else:
        A = sp.csr_matrix((arrays["ws_data"], arrays["ws_indices"], arrays["ws_indptr"]), shape=(offsets.shape[0], dim))
        for r in range(offsets.shape[0]):
            ws.add(Cut(A[r], float(offsets[r])))
    ws.set_duals(arrays["ws_duals"], arrays["ws_idle"])
    if "ws_residual_norms" in arrays:
        ws.set_rounding_records(arrays["ws_exact_offsets"], arrays["ws_residual_norms"])
    return ws
