"""The working set's memory budget: bytes per cut, the size after the next cut, making room.

With ``memory_limit`` (bytes), :func:`cutplane.minimize` checks before each oracle call that the
working set (:attr:`~cutplane.working_set.WorkingSet.nbytes`: slopes, Gram blocks, offsets,
duals) will still fit once the next cut is added (:func:`bytes_after_add`), and otherwise makes
room (:func:`fit_memory`): arrays grown far beyond the cuts they hold are compacted, then the
oldest cuts are aggregated into one (limited-memory BMRM, Franc et al. 2012, sec. 1.2.3), which keeps the
lower bound valid. The peak stays within the limit plus one cut.
"""

from __future__ import annotations

import scipy.sparse as sp

from .state import working_set_from_state, working_set_state
from .working_set import WorkingSet

__all__ = ["slope_bytes", "bytes_after_add", "fit_memory"]


def slope_bytes(slope) -> int:
    """Bytes a cut's slope adds to the working set.

    Parameters
    ----------
    slope : ndarray of shape (dim,) or scipy sparse matrix of shape (1, dim)

    Returns
    -------
    int
        16 per nonzero (index and value) when sparse; 0 when dense (dense slopes live in the
        preallocated block already counted by the working set's capacity).
    """
    return 16 * int(slope.nnz) if sp.issparse(slope) else 0


def bytes_after_add(ws: WorkingSet, cut_bytes: int) -> int:
    """Predicted :attr:`~cutplane.working_set.WorkingSet.nbytes` after adding one cut.

    Parameters
    ----------
    ws : WorkingSet
    cut_bytes : int
        :func:`slope_bytes` of the cut.

    Returns
    -------
    int
        Includes the growth of the preallocated arrays (capacity doubled, at least 8) when the
        working set is full, and the dense scatter buffer a sparse working set allocates at its
        second cut (:meth:`~cutplane.working_set.WorkingSet.scratch_bytes_after_add`).
    """
    n, cap = ws.n_cuts, int(ws.capacity)
    grow = 0
    if n + 1 > cap:
        new = max(8, 2 * cap, n + 1)
        # offset, exact offset, residual norm, dual, idle count (+ a dense row)
        per_cut = 40 + (0 if ws.sparse else ws.slope_itemsize * ws.dim)
        grow = 8 * ws.n_groups * (new * new - cap * cap) + per_cut * (new - cap)
    return ws.nbytes + cut_bytes + grow + ws.scratch_bytes_after_add()


def fit_memory(ws: WorkingSet, limit: int, cut_bytes: int, *, groups=None, floor=None) -> WorkingSet:
    """Make room for one more cut within ``limit`` bytes.

    Arrays with more than twice the room the cuts need are compacted first (a rebuild with the
    same cuts, duals and idle counts); then the two oldest cuts are merged into one
    (``WorkingSet.aggregate``, from :meth:`~cutplane.working_set.limited_memory.LimitedMemoryMixin.aggregate`)
    until the next cut fits, or a single cut is left.

    Parameters
    ----------
    ws : WorkingSet
    limit : int
        Bytes.
    cut_bytes : int
        :func:`slope_bytes` of the next cut.
    groups : ndarray of int of shape (dim,), optional
        The regulariser's coordinate groups (for a rebuilt working set's Gram blocks).
    floor : float, optional
        The run's risk floor: the floor cut ``R >= floor`` is never merged away (see
        :meth:`~cutplane.working_set.limited_memory.LimitedMemoryMixin.aggregate`).

    Returns
    -------
    WorkingSet
        ``ws`` itself (aggregated in place) or its compacted rebuild.
    """
    while bytes_after_add(ws, cut_bytes) > limit:
        if int(ws.capacity) > 2 * max(ws.n_cuts + 1, 8):
            ws = working_set_from_state(working_set_state(ws), ws.dim, groups=groups, zero_tol=ws.zero_tol)
        elif ws.n_cuts > 1:
            ws.aggregate(ws.n_cuts - 1, floor=floor)
        else:
            break
    return ws
