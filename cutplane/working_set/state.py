"""A working set as plain arrays and back: what a checkpoint stores, and a compacting rebuild.

:func:`working_set_state` gives the offsets, duals, idle counts and slopes of the cuts as
arrays (no pickling); :func:`working_set_from_state` rebuilds a working set with the same cuts,
duals and idle counts from them, recomputing the Gram blocks (its arrays sized to the cuts, so
it also serves as compaction: :func:`cutplane.working_set.memory_budget.fit_memory`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..cuts import Cut
from .working_set import WorkingSet

__all__ = ["working_set_state", "working_set_from_state"]


def working_set_state(ws: WorkingSet) -> dict:
    """The arrays that rebuild ``ws``: ``ws_offsets``, ``ws_duals``, ``ws_idle`` and the slopes
    (``ws_indptr``, ``ws_indices``, ``ws_data`` when sparse, else ``ws_dense``); with cuts rounded
    to float32 (:mod:`cutplane.rounded_cuts`), also ``ws_exact_offsets`` and ``ws_residual_norms``."""
    out = {
        "ws_offsets": np.array(ws.offsets, dtype=np.float64),
        "ws_duals": np.array(ws.duals, dtype=np.float64),
        "ws_idle": np.array(ws.idle_counts, dtype=np.int64),
    }
    if np.any(ws.residual_norms > 0):
        out["ws_exact_offsets"] = np.array(ws.exact_offsets, dtype=np.float64)
        out["ws_residual_norms"] = np.array(ws.residual_norms, dtype=np.float64)
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
