"""Ship the duals, not ``w``: workers that rebuild the query point from the cuts they hold.

The reduced QP's minimiser is a combination of the working set's cuts: with a self-conjugate
regulariser (``L2``), ``w = v = A c`` with ``c = -alpha / lam`` (Franc et al. 2012, eq. 14,
``w = grad Omega^*(v)``). An executor whose workers are reached over a network (Dask) can
therefore send, instead of the dense ``w`` (8 bytes per coordinate), each new cut once (its
stored form, int32 indices and int16 counts, packed for the trip as index gaps and small
counts, :class:`PackedRow`) and per call the ``t`` coefficients (the bytes per iteration of
both: ``docs/results/dask_scaling.md``); every worker keeps a copy of the rows it was sent
and rebuilds ``w`` with the same compiled loop, on the same rows in the same order, as the
engine did (:meth:`cutplane.working_set.sparse_rows.SparseRows.combine`): the rebuilt ``w``
is the engine's ``w`` bit for bit, so the cuts are the serial ones. A few coordinates of ``w``
travel with each update and every worker checks its rebuild against them.

Three parts:

- :class:`CombinationQuery`: what the engine knows about a query point (:func:`query_of`), set
  for the duration of the oracle call with :func:`combination_query` (a context variable: the
  oracles pass ``w`` through unchanged and need not know);
- :class:`MirrorPlanner` (client side): per call, the :class:`MirrorUpdate` for the workers (the
  rows they lack, the rows to forget, the coefficients), or None when ``w`` must go dense;
- :class:`RowMirror` (worker side): the rows and the rebuilt ``w``.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..working_set.sparse_rows import SparseRows
from .base import ExecutorError

__all__ = [
    "CombinationQuery",
    "combination_query",
    "current_query",
    "query_of",
    "MirrorUpdate",
    "MirrorPlan",
    "MirrorPlanner",
    "RowMirror",
    "MirrorMismatch",
    "PackedRow",
]

#: Coordinates of ``w`` sent with each update for the workers to check their rebuild against.
N_PROBES = 16


@dataclass(frozen=True, eq=False)
class CombinationQuery:
    """A query point ``w = A c`` over the sparse cuts of a working set.

    Attributes
    ----------
    w : ndarray of shape (dim,)
        The point (the engine's own array: executors recognise it by identity).
    row_ids : ndarray of int64 of shape (n_cuts,)
        :attr:`cutplane.working_set.WorkingSet.row_ids` at the reduced solve, in row order.
    coefficients : ndarray of shape (n_cuts,)
        ``c``, as given to ``working_set.combine`` (zeros are skipped there, and here).
    working_set : WorkingSet
        Where rows are read (by id) for the workers that lack them.
    """

    w: np.ndarray
    row_ids: np.ndarray
    coefficients: np.ndarray
    working_set: Any

    def stored_row(self, row_id):
        """``(indices, values, scale)`` of the row named ``row_id``, or None once the working set
        no longer holds it (pruned, merged or rebuilt since the solve)."""
        ws = self.working_set
        at = np.flatnonzero(ws.row_ids == row_id)
        return ws.stored_row(int(at[0])) if at.size else None


def query_of(w, solution, row_ids, working_set, regularizer) -> CombinationQuery | None:
    """The :class:`CombinationQuery` of a query point, when ``w`` is the reduced minimiser of a
    self-conjugate regulariser over sparse cuts (``solution.combination`` set); else None.

    Parameters
    ----------
    w : ndarray of shape (dim,)
        The next query point.
    solution : ReducedSolution or None
        The reduced solve it may come from (``w`` must be ``solution.w``).
    row_ids : ndarray of int64 of shape (n_cuts,)
        The working set's row ids at that solve.
    working_set : WorkingSet
    regularizer : Regularizer
    """
    if (
        solution is None
        or w is not solution.w
        or getattr(solution, "combination", None) is None
        or not getattr(regularizer, "self_conjugate", False)
        or not working_set.sparse
        or len(row_ids) != len(solution.combination)
    ):
        return None
    return CombinationQuery(w, np.asarray(row_ids, dtype=np.int64), solution.combination, working_set)


_CURRENT: contextvars.ContextVar[CombinationQuery | None] = contextvars.ContextVar("cutplane_query", default=None)


@contextlib.contextmanager
def combination_query(query: CombinationQuery | None):
    """Make ``query`` known to the executors for the calls in the ``with`` block (None: nothing)."""
    token = _CURRENT.set(query)
    try:
        yield query
    finally:
        _CURRENT.reset(token)


def current_query(w) -> CombinationQuery | None:
    """The query set by :func:`combination_query` if it describes this very ``w``, else None."""
    query = _CURRENT.get()
    if query is None:
        return None
    if w is query.w:
        return query
    q = query.w
    if (
        isinstance(w, np.ndarray)
        and (w.shape, w.dtype, w.strides) == (q.shape, q.dtype, q.strides)
        and w.ctypes.data == q.ctypes.data
    ):
        return query  # the same memory seen through another array object
    return None


def _narrowed(a: np.ndarray, dtype, wide: np.ndarray, sentinel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``a`` in the narrow ``dtype``, the entries where ``wide`` is true written ``sentinel`` (a
    value no kept entry takes) and listed apart: ``(narrow, their positions, their values in
    ``a``'s dtype)``; :func:`_widened` undoes it."""
    at = np.flatnonzero(wide)
    narrow = a.astype(dtype)
    narrow[at] = sentinel
    return narrow, at.astype(np.int32 if a.size < 2**31 else np.int64), a[at]


def _widened(narrow: np.ndarray, at: np.ndarray, wide: np.ndarray, dtype) -> np.ndarray:
    """The array :func:`_narrowed` was given, in ``dtype``."""
    out = narrow.astype(dtype)
    out[at] = wide
    return out


def _escaped(a: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Integers ``a`` in the narrow signed ``dtype``: values outside ``-max..max`` are written
    ``min`` and listed apart (:func:`_narrowed`)."""
    info = np.iinfo(dtype)
    return _narrowed(a, dtype, (a < -info.max) | (a > info.max), info.min)


def _cheapest(options):
    """The option of fewest bytes among ``(bytes, build)`` pairs, built."""
    return min(options, key=lambda o: o[0])[1]()


class PackedRow:
    """A stored row ``(indices, values, scale)`` in fewer bytes for the trip, restored exactly.

    The indices are sorted. Strictly increasing ones travel in the smallest of these forms:

    - ``"bitmap"``: one bit per coordinate from the first index to the last (a row dense in its
      span: more than one nonzero in 8 coordinates, as the cuts of the first iterations are);
    - ``"gaps"``: the first index and the gaps between them, each in one byte (uint8) or two
      (uint16); a gap too large for them is written 0 (gaps are >= 1, so 0 is free) and listed
      apart with its position;
    - ``"raw"``: the indices as they are (also when they are not strictly increasing).

    Integer values travel as int8 (or int16), a value outside ``-127..127`` (``-32767..32767``)
    written ``-128`` (``-32768``) and listed apart, when that is smaller than their own type.
    :meth:`unpack` gives back arrays of the original dtypes and values, bit for bit (what the
    worker's rebuild needs to match the engine's).

    Parameters
    ----------
    indices : ndarray of int32 or int64 of shape (nnz,)
    values : ndarray of shape (nnz,)
        int16 / int32 counts or float64 (:func:`cutplane.working_set.sparse_rows.quantize`).
    scale : float
    """

    __slots__ = (
        "nnz",
        "form",
        "first",
        "span",
        "body",
        "body_at",
        "body_wide",
        "index_dtype",
        "values",
        "values_at",
        "values_wide",
        "values_dtype",
        "scale",
    )

    def __init__(self, indices, values, scale):
        indices, values = np.asarray(indices), np.asarray(values)
        self.nnz = n = int(len(indices))
        self.index_dtype = np.dtype(indices.dtype).str
        self.values_dtype = np.dtype(values.dtype).str
        self.scale = float(scale)
        self.first = int(indices[0]) if n else 0
        self.span = int(indices[-1]) - self.first + 1 if n else 0
        none = np.zeros(0, dtype=np.int32)
        self.body_at, self.body_wide = none, none
        gaps = np.diff(indices.astype(np.int64, copy=False))
        if gaps.size and int(gaps.min()) < 1:  # not strictly increasing
            self.form, self.body = "raw", indices
        else:
            n8, n16 = int(np.count_nonzero(gaps > 255)), int(np.count_nonzero(gaps > 65535))
            self.form, (self.body, self.body_at, self.body_wide) = _cheapest(
                [
                    (indices.nbytes, lambda: ("raw", (indices, none, none))),
                    ((self.span + 7) // 8, lambda: ("bitmap", (self._bitmap(indices), none, none))),
                    (gaps.size + 12 * n8, lambda: ("gaps", self._gaps(gaps, np.uint8))),
                    (2 * gaps.size + 12 * n16, lambda: ("gaps", self._gaps(gaps, np.uint16))),
                ]
            )
        self.values, self.values_at, self.values_wide = values, none, none
        if values.dtype.kind == "i" and values.size:
            options: list[tuple[int, Callable[[], tuple]]] = [(values.nbytes, lambda: (values, none, none))]
            for narrow in (np.int8, np.int16):
                if np.dtype(narrow).itemsize < values.dtype.itemsize:
                    limit = np.iinfo(narrow).max
                    wide = int(np.count_nonzero((values < -limit) | (values > limit)))
                    size = values.size * np.dtype(narrow).itemsize + wide * (4 + values.dtype.itemsize)
                    options.append((size, functools.partial(_escaped, values, narrow)))
            self.values, self.values_at, self.values_wide = _cheapest(options)

    def _bitmap(self, indices):
        mask = np.zeros(self.span, dtype=bool)
        mask[indices - self.first] = True
        return np.packbits(mask)

    @staticmethod
    def _gaps(gaps, dtype):
        """Gaps (>= 1) in the unsigned ``dtype``, those above its top written 0 and listed apart."""
        return _narrowed(gaps, dtype, gaps > np.iinfo(dtype).max, 0)

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays and the few numbers that travel."""
        arrays = (self.body, self.body_at, self.body_wide, self.values, self.values_at, self.values_wide)
        return int(sum(a.nbytes for a in arrays) + 40)

    def unpack(self):
        """``(indices, values, scale)`` with the dtypes and values given to the constructor."""
        index_dtype = np.dtype(self.index_dtype)
        if self.form == "raw":
            idx = self.body
        elif self.form == "bitmap":
            on = np.flatnonzero(np.unpackbits(self.body, count=self.span))
            idx = (on + self.first).astype(index_dtype)
        else:
            idx = np.empty(self.nnz, dtype=index_dtype)
            if self.nnz:
                gaps = _widened(self.body, self.body_at, self.body_wide, np.int64)
                idx[0] = self.first
                idx[1:] = self.first + np.cumsum(gaps)
        values_dtype = np.dtype(self.values_dtype)
        if self.values.dtype == values_dtype:
            values = self.values
        else:
            values = _widened(self.values, self.values_at, self.values_wide, values_dtype)
        return idx, values, self.scale

    def __getstate__(self):
        return {k: getattr(self, k) for k in self.__slots__}

    def __setstate__(self, state):
        for k, v in state.items():
            setattr(self, k, v)


class MirrorUpdate(NamedTuple):
    """What a worker needs to rebuild ``w`` (see :class:`RowMirror`).

    Attributes
    ----------
    version : int
        Increases with every update; a worker applies each version once.
    dim : int
    new_rows : tuple of (int, PackedRow)
        The rows the workers do not hold yet, with their ids.
    drop : ndarray of int64
        Row ids the workers can forget (gone from the working set).
    row_ids : ndarray of int64 of shape (k,)
        The rows with a nonzero coefficient, in the working set's order.
    coefficients : ndarray of shape (k,)
    probe_at : ndarray of int64 of shape (N_PROBES,) or fewer
        Coordinates of ``w`` to check the rebuild against ...
    probe_values : ndarray of shape (N_PROBES,) or fewer
        ... and their values in the engine's ``w``.
    """

    version: int
    dim: int
    new_rows: tuple
    drop: np.ndarray
    row_ids: np.ndarray
    coefficients: np.ndarray
    probe_at: np.ndarray
    probe_values: np.ndarray

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays of the update (what one worker receives, up to pickling headers)."""
        rows = sum(row.nbytes + 8 for _, row in self.new_rows)
        return int(
            rows
            + self.drop.nbytes
            + self.row_ids.nbytes
            + self.coefficients.nbytes
            + self.probe_at.nbytes
            + self.probe_values.nbytes
            + 16
        )


class MirrorPlan(NamedTuple):
    """One call's plan (:meth:`MirrorPlanner.plan`), before it is packed for each worker.

    Attributes
    ----------
    version : int
    query : CombinationQuery
    new_rows : tuple of (int, ndarray, ndarray, float)
        ``(row id, indices, values, scale)`` of the rows the workers lack, as stored.
    drop : ndarray of int64
    row_ids, coefficients : ndarray of shape (k,)
        The rows with a nonzero coefficient, in order, and their coefficients.
    """

    version: int
    query: CombinationQuery
    new_rows: tuple
    drop: np.ndarray
    row_ids: np.ndarray
    coefficients: np.ndarray


class MirrorPlanner:
    """Client side: which rows the workers hold, and the update each call sends them.

    Every worker holds the same rows, or the parts of them its tasks read (``support`` in
    :meth:`update`). A call whose ``w`` has no :class:`CombinationQuery`, or whose rows are no
    longer all readable, goes dense.
    """

    def __init__(self):
        self.held: set[int] = set()
        self.nnz: dict[int, int] = {}  # stored nonzeros of each held row (whole rows)
        self.version = 0

    def plan(self, query: CombinationQuery) -> MirrorPlan | None:
        """What the workers need to rebuild ``query.w``, or None (send ``w`` itself)."""
        coef = np.asarray(query.coefficients, dtype=np.float64)
        nz = np.flatnonzero(coef != 0.0)  # the rows combine() reads
        ids = query.row_ids[nz]
        new_rows = []
        for row_id in ids.tolist():
            if row_id not in self.held:
                row = query.stored_row(row_id)
                if row is None:  # gone before its first trip: the workers cannot rebuild w
                    return None
                new_rows.append((row_id, *row))
        live = set(query.row_ids.tolist())
        drop = np.array(sorted(self.held - live), dtype=np.int64)
        self.version += 1
        return MirrorPlan(self.version, query, tuple(new_rows), drop, ids.astype(np.int64), coef[nz])

    @staticmethod
    def update(plan: MirrorPlan, support: np.ndarray | None = None) -> MirrorUpdate:
        """The update of ``plan`` for a worker: every row, or with ``support`` (ndarray of bool of
        shape (dim,)) only the entries at the coordinates its tasks read; there its rebuilt ``w``
        is the engine's bit for bit (the same terms in the same order), elsewhere it is 0."""
        query = plan.query
        rows = []
        for row_id, idx, values, scale in plan.new_rows:
            if support is not None:
                keep = support[idx]
                idx, values = idx[keep], values[keep]
            rows.append((row_id, idx, values, scale))
        probe_at = _probes(rows, query, plan.row_ids, support)
        return MirrorUpdate(
            plan.version,
            int(query.w.shape[0]),
            tuple((row_id, PackedRow(idx, values, scale)) for row_id, idx, values, scale in rows),
            plan.drop,
            plan.row_ids,
            plan.coefficients,
            probe_at,
            np.asarray(query.w[probe_at], dtype=np.float64),
        )

    def update_for(self, query: CombinationQuery) -> MirrorUpdate | None:
        """:meth:`plan` and :meth:`update` for workers that read every coordinate."""
        plan = self.plan(query)
        return None if plan is None else self.update(plan)

    def commit(self, done: MirrorPlan | MirrorUpdate) -> None:
        """Record that every worker applied the plan (or the update) ``done``."""
        for row_id, *row in done.new_rows:
            self.held.add(row_id)
            self.nnz[row_id] = row[0].nnz if len(row) == 1 else len(row[0])
        for row_id in done.drop.tolist():
            self.held.discard(row_id)
            self.nnz.pop(row_id, None)

    def combined_nnz(self, done: MirrorPlan | MirrorUpdate) -> int:
        """Stored nonzeros of the rows combined (after :meth:`commit`): the rebuild's work."""
        return int(sum(self.nnz.get(r, 0) for r in done.row_ids.tolist()))

    def reset(self) -> None:
        """Forget what the workers hold (they were replaced): the next update sends every row."""
        self.held.clear()
        self.nnz.clear()


def _probes(new_rows, query, ids, support=None):
    """Up to :data:`N_PROBES` coordinates where ``w`` is a sum over the combined rows: spread over
    the indices of the rows with a nonzero coefficient (a mismatch anywhere in the rebuild shows
    at coordinates the rows touch), within ``support`` when given."""
    ws_rows = {row_id: idx for row_id, idx, _, _ in new_rows}  # already within the support
    picks: list[int] = []
    for row_id in ids[-N_PROBES:].tolist():
        idx = ws_rows.get(row_id)
        if idx is None:
            row = query.stored_row(row_id)
            idx = None if row is None else row[0]
            if idx is not None and support is not None and len(idx):  # a few candidates, not the row
                idx = idx[np.linspace(0, len(idx) - 1, min(len(idx), 8)).astype(np.int64)]
                idx = idx[support[idx]]
        if idx is not None and len(idx):
            picks.append(int(idx[(len(picks) * 7919 + len(idx) // 2) % len(idx)]))
    return np.unique(np.asarray(picks, dtype=np.int64))


class MirrorMismatch(ExecutorError):
    """A worker's rebuilt ``w`` differs from the engine's at a probed coordinate (a bug: the
    executor then sends ``w`` itself)."""


class RowMirror:
    """Worker side: the rows sent so far and ``w`` rebuilt at the last update.

    Parameters
    ----------
    dim : int
    n_threads : int, default=1
        Threads of the rebuild (a worker's share of the machine's cores).
    """

    def __init__(self, dim, n_threads=1):
        self.dim = int(dim)
        self.rows: dict[int, tuple] = {}
        self.version = -1
        self.w = None
        self._store = SparseRows(self.dim, None, 1)
        self._store.n_threads = max(1, int(n_threads))

    def apply(self, update: MirrorUpdate) -> np.ndarray:
        """Fold ``update`` in and return ``w`` (read-only; the same array for a repeated version).

        Raises
        ------
        ExecutorError
            A row the update needs was never received (the worker was replaced).
        MirrorMismatch
            The rebuilt ``w`` differs from the engine's at a probed coordinate.
        """
        if update.version == self.version and self.w is not None:
            return self.w
        if update.dim != self.dim:
            raise ExecutorError(f"update for dim {update.dim} sent to a mirror of dim {self.dim}")
        for row_id, row in update.new_rows:
            self.rows[int(row_id)] = row.unpack()
        for row_id in update.drop.tolist():
            self.rows.pop(int(row_id), None)
        try:
            picked = [self.rows[int(r)] for r in update.row_ids.tolist()]
        except KeyError as exc:
            raise ExecutorError(
                f"a worker lacks cut {exc.args[0]} of the working set (it was restarted or replaced)"
            ) from None
        self.w = None  # let combine() reuse the previous output buffer
        self._store.set_rows([(idx, values) for idx, values, _ in picked], [s for _, _, s in picked])
        w = self._store.combine(update.coefficients)
        if not np.array_equal(w[update.probe_at], update.probe_values):
            raise MirrorMismatch(
                f"rebuilt w differs from the engine's at {int(np.sum(w[update.probe_at] != update.probe_values))} "
                f"of {len(update.probe_at)} probed coordinates"
            )
        w.flags.writeable = False
        self.w, self.version = w, update.version
        return w
