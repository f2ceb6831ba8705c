"""One chunk of examples of a user's structured model: its loss-augmented outputs and its share of the cuts.

:class:`StructuredChunk` is the :class:`cutplane.executors.ChunkTask` that
:class:`oracles.structured.StructuredOracle` maps over its executor (serial, threads, processes,
Dask). It holds the model and its own slice of the data (pickled for worker processes with the
model: the model's class must be importable there), calls the model's batch loss-augmented
argmax on its examples and returns

- the chunk's share of the 1-slack cut (:class:`ChunkCut`: the sum of
  ``dPhi_i = Phi(x_i, y^_i) - Phi(x_i, y_i)`` as sorted coordinates and values, the sum of the
  losses and of the hinge terms), or
- one row per example for the n-slack method (:class:`ChunkRows`), or
- the cut from the outputs it has cached (the last ``cache_size`` distinct ones per example,
  kept where the chunk lives: in this process or on its worker).

Every answer of the model is checked here (:class:`ModelChecks`), early and once, so a wrong
model gives one :class:`~cutplane.exceptions.InputError` naming the model's class and method,
never a wrong certificate or an error from deep inside the engine.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp
from numba import njit

from cutplane.exceptions import InputError

from .sequence_chunk import merge_sorted_sums

__all__ = [
    "StructuredChunk",
    "ChunkCut",
    "ChunkRows",
    "ExampleTerms",
    "BatchTerms",
    "ModelChecks",
    "PredictTask",
    "same_output",
    "SparseRow",
    "sparse_row",
    "as_dense",
    "sum_rows",
    "MARGIN_RTOL",
]

#: Relative tolerance of the loss-augmented margin test: an output whose
#: ``Delta + <w, dPhi>`` is below ``-MARGIN_RTOL * (1 + |Delta| + sum_j |w_j dPhi_j|)`` is worse than
#: the true label beyond rounding.
MARGIN_RTOL = 1e-8


def same_output(a, b) -> bool:
    """Whether two outputs are equal: arrays by shape and values, tuples and lists entry by entry,
    anything else by ``==`` (a comparison that fails or is ambiguous counts as different)."""
    if a is b:
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        try:
            return bool(np.array_equal(np.asarray(a), np.asarray(b)))
        except Exception:  # noqa: BLE001 - outputs of arbitrary types: unequal
            return False
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same_output(u, v) for u, v in zip(a, b))
    try:
        r = a == b
        if isinstance(r, (bool, np.bool_)):
            return bool(r)
        return bool(np.all(r)) and np.shape(a) == np.shape(b)
    except Exception:  # noqa: BLE001 - outputs of arbitrary types: unequal
        return False


@njit(nogil=True, cache=True)
def _scatter(indices, values, sign, acc, seen, touched, n_seen):
    """Add ``sign * values`` into ``acc`` at ``indices``; each coordinate met for the first time is
    marked in ``seen`` and appended to ``touched`` (from position ``n_seen``). Returns the new count."""
    for p in range(indices.shape[0]):
        j = indices[p]
        if not seen[j]:
            seen[j] = True
            touched[n_seen] = j
            n_seen += 1
        acc[j] += sign * values[p]
    return n_seen


@njit(nogil=True, cache=True)
def _gather(acc, seen, touched, n_seen):
    """The sorted touched coordinates of nonzero sum and their sums, read off the scratch
    ``acc`` / ``seen`` (:func:`_scatter`), which are left zero: when few were touched, their
    sorted list; else one pass over ``seen`` (a branch per coordinate, cheaper than a sort)."""
    dim = acc.shape[0]
    out_idx = np.empty(n_seen, dtype=np.int64)
    out_val = np.empty(n_seen)
    r = 0
    if n_seen * 64 < dim:
        for j in np.sort(touched[:n_seen]):
            seen[j] = False
            if acc[j] != 0.0:
                out_idx[r] = j
                out_val[r] = acc[j]
                r += 1
            acc[j] = 0.0
    else:
        for j in range(dim):
            if seen[j]:
                seen[j] = False
                if acc[j] != 0.0:
                    out_idx[r] = j
                    out_val[r] = acc[j]
                    r += 1
                acc[j] = 0.0
    return out_idx[:r], out_val[:r]


def signed_sum(parts, dim: int, scratch=None) -> tuple[np.ndarray, np.ndarray]:
    """``sum_k sign_k * v_k`` of sparse vectors ``parts = [(indices, values, sign), ...]``
    (coordinates in any order, repeats allowed), each added in the given order, as sorted
    unique coordinates (int64) and the nonzero sums (float64). ``scratch``: as :func:`sum_rows`."""
    if scratch is None or scratch[0].shape[0] != dim:
        scratch = (np.zeros(dim), np.zeros(dim, dtype=np.bool_))
    touched = np.empty(min(dim, sum(int(i.shape[0]) for i, _, _ in parts)), dtype=np.int64)
    n_seen = 0
    for idx, val, sign in parts:
        n_seen = _scatter(idx, val, float(sign), scratch[0], scratch[1], touched, n_seen)
    return _gather(scratch[0], scratch[1], touched, n_seen)


@njit(nogil=True, cache=True)
def _row_differences(a_indptr, a_indices, a_data, b_indptr, b_indices, b_data, b_rows, w):
    """``A[j] - B[b_rows[j]]`` for every row ``j`` of ``A`` (both canonical CSR): a merge of sorted
    rows as :func:`~oracles.sequence_chunk.merge_sorted_sums` (a matched pair summing to zero is
    dropped), and each difference's ``<row, w>`` summed in coordinate order.
    Returns the CSR arrays ``(indptr, indices, data)`` (int64, int64, float64) and the dots."""
    n = a_indptr.shape[0] - 1
    bound = a_indptr[n]
    for j in range(n):
        bound += b_indptr[b_rows[j] + 1] - b_indptr[b_rows[j]]
    idx = np.empty(bound, dtype=np.int64)
    val = np.empty(bound)
    indptr = np.zeros(n + 1, dtype=np.int64)
    dots = np.zeros(n)
    r = 0
    for j in range(n):
        p, p1 = a_indptr[j], a_indptr[j + 1]
        q, q1 = b_indptr[b_rows[j]], b_indptr[b_rows[j] + 1]
        r0 = r
        while p < p1 and q < q1:
            if a_indices[p] < b_indices[q]:
                idx[r], val[r] = a_indices[p], a_data[p]
                p += 1
                r += 1
            elif b_indices[q] < a_indices[p]:
                idx[r], val[r] = b_indices[q], -b_data[q]
                q += 1
                r += 1
            else:
                v = a_data[p] + -b_data[q]
                if v != 0:
                    idx[r], val[r] = a_indices[p], v
                    r += 1
                p += 1
                q += 1
        while p < p1:
            idx[r], val[r] = a_indices[p], a_data[p]
            p += 1
            r += 1
        while q < q1:
            idx[r], val[r] = b_indices[q], -b_data[q]
            q += 1
            r += 1
        dot = 0.0
        for k in range(r0, r):
            dot += val[k] * w[idx[k]]
        dots[j] = dot
        indptr[j + 1] = r
    return indptr, idx[:r], val[:r], dots


@njit(nogil=True, cache=True)
def _take_rows(indptr, indices, data, rows):
    """The CSR rows ``rows`` (in that order) as CSR arrays ``(indptr, indices, data)``."""
    n = rows.shape[0]
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    for j in range(n):
        out_ptr[j + 1] = out_ptr[j] + indptr[rows[j] + 1] - indptr[rows[j]]
    idx = np.empty(out_ptr[n], dtype=np.int64)
    val = np.empty(out_ptr[n])
    for j in range(n):
        r = out_ptr[j]
        for p in range(indptr[rows[j]], indptr[rows[j] + 1]):
            idx[r], val[r] = indices[p], data[p]
            r += 1
    return out_ptr, idx, val


@njit(nogil=True, cache=True)
def _splice_rows(old_ptr, old_idx, old_val, new_ptr, new_idx, new_val, source):
    """CSR arrays ``(indptr, indices, data)`` with one row per entry of ``source``: row ``k`` is
    the old row ``k`` where ``source[k] == -2``, empty where ``source[k] == -1``, else the new
    row ``source[k]``."""
    m = source.shape[0]
    ptr = np.zeros(m + 1, dtype=np.int64)
    for k in range(m):
        s = source[k]
        if s == -2:
            ptr[k + 1] = ptr[k] + old_ptr[k + 1] - old_ptr[k]
        elif s >= 0:
            ptr[k + 1] = ptr[k] + new_ptr[s + 1] - new_ptr[s]
        else:
            ptr[k + 1] = ptr[k]
    idx = np.empty(ptr[m], dtype=np.int64)
    val = np.empty(ptr[m])
    for k in range(m):
        s = source[k]
        r = ptr[k]
        if s == -2:
            for p in range(old_ptr[k], old_ptr[k + 1]):
                idx[r], val[r] = old_idx[p], old_val[p]
                r += 1
        elif s >= 0:
            for p in range(new_ptr[s], new_ptr[s + 1]):
                idx[r], val[r] = new_idx[p], new_val[p]
                r += 1
    return ptr, idx, val


@njit(nogil=True, cache=True)
def _row_dots(indptr, indices, data, rows, w):
    """``<row_j, w>`` of the CSR rows ``rows``, each summed in coordinate order (as
    :func:`_row_differences`)."""
    dots = np.zeros(rows.shape[0])
    for r in range(rows.shape[0]):
        j = rows[r]
        dot = 0.0
        for p in range(indptr[j], indptr[j + 1]):
            dot += data[p] * w[indices[p]]
        dots[r] = dot
    return dots


def _flatten(outputs):
    """``(shapes, concatenated values, offsets)`` of outputs that are all numeric ndarrays, else None."""
    if not all(type(o) is np.ndarray and o.dtype.kind in "biuf" for o in outputs):
        return None
    sizes = [o.size for o in outputs]
    flat = np.concatenate([o.ravel() for o in outputs]) if outputs else np.zeros(0)
    return [o.shape for o in outputs], flat, np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)


def _same_outputs(outputs, flat, reference, flat_reference) -> np.ndarray:
    """Whether ``outputs[k]`` equals ``reference[k]`` (:func:`same_output`), as a bool ndarray;
    numeric array outputs of equal shapes compared in one pass (``flat``: :func:`_flatten`)."""
    m = len(outputs)
    if flat is not None and flat_reference is not None and flat[0] == flat_reference[0]:
        ptr = flat_reference[2]
        if flat_reference[1].size == 0:
            return np.ones(m, dtype=bool)
        counts = np.concatenate([[0], np.cumsum(flat[1] != flat_reference[1])])
        return counts[ptr[1:]] == counts[ptr[:-1]]
    return np.fromiter((same_output(o, y) for o, y in zip(outputs, reference)), dtype=bool, count=m)


def sum_rows(indices, values, dim: int, scratch=None) -> tuple[np.ndarray, np.ndarray]:
    """Sum sparse vectors given as concatenated (coordinates, values).

    Parameters
    ----------
    indices : list of ndarray of int64
        Coordinates of each vector (any order, repeats allowed).
    values : list of ndarray of float64
        Their values, aligned with ``indices``.
    dim : int
        Length of the vectors.
    scratch : tuple of ndarray, optional
        ``(zeros(dim), zeros(dim, bool))`` to reuse between calls (left zero): a caller that sums
        often keeps one and saves the first touch of fresh memory.

    Returns
    -------
    indices : ndarray of shape (nnz,), int64
        Sorted unique coordinates of the nonzero sums (each sum accumulated in the given order).
    values : ndarray of shape (nnz,), float64
    """
    if not indices:
        return np.zeros(0, np.int64), np.zeros(0)
    idx = (np.concatenate(indices) if len(indices) > 1 else indices[0]).astype(np.int64, copy=False)
    val = (np.concatenate(values) if len(values) > 1 else values[0]).astype(np.float64, copy=False)
    if idx.size == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    return signed_sum([(idx, val, 1.0)], dim, scratch)


class SparseRow(NamedTuple):
    """A sparse joint feature: sorted unique coordinates and their values.

    Attributes
    ----------
    indices : ndarray of shape (nnz,), int64
    values : ndarray of shape (nnz,), float64
    dim : int
        Length of the vector.
    """

    indices: np.ndarray
    values: np.ndarray
    dim: int


def sparse_row(phi) -> SparseRow:
    """A scipy sparse row (shape (1, dim) or (dim,), any format) as a :class:`SparseRow`.

    A CSR row in canonical form (sorted, no duplicates) is read without a copy of its structure;
    any other is summed and sorted first.
    """
    dim = int(phi.shape[-1])
    if phi.format == "csr" and len(phi.shape) == 2 and phi.has_canonical_format:
        return SparseRow(np.asarray(phi.indices, dtype=np.int64), np.asarray(phi.data, dtype=np.float64).copy(), dim)
    coo = sp.coo_matrix(phi.reshape((1, -1)) if len(phi.shape) == 1 else phi)
    cols, vals = coo.col.astype(np.int64), np.asarray(coo.data, dtype=np.float64)
    uniq, inv = np.unique(cols, return_inverse=True)
    sums = np.bincount(inv.ravel(), weights=vals, minlength=uniq.size)
    return SparseRow(uniq, sums, dim)


def as_dense(phi) -> np.ndarray:
    """``phi`` (an ndarray or a :class:`SparseRow`) as a dense float64 vector."""
    if isinstance(phi, SparseRow):
        out = np.zeros(phi.dim)
        out[phi.indices] = phi.values
        return out
    return phi


def _stack_rows(rows, dim: int) -> tuple[sp.csr_matrix, bool]:
    """Checked joint features (each an ndarray or a :class:`SparseRow`) as one canonical CSR
    matrix of shape (len(rows), dim), and whether any was dense."""
    dense = False
    idx, val = [], []
    for r in rows:
        if isinstance(r, SparseRow):
            idx.append(r.indices)
            val.append(r.values)
        else:
            dense = True
            nz = np.flatnonzero(r)
            idx.append(nz)
            val.append(r[nz])
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([i.size for i in idx], out=indptr[1:])
    if rows:
        cols, vals = np.concatenate(idx).astype(np.int64, copy=False), np.concatenate(val)
    else:
        cols, vals = np.zeros(0, np.int64), np.zeros(0)
    mat = sp.csr_matrix((vals.astype(np.float64, copy=False), cols, indptr), shape=(len(rows), dim))
    mat.has_canonical_format = True  # each row sorted and unique (SparseRow, flatnonzero)
    return mat, dense


class ExampleTerms(NamedTuple):
    """The hinge term of one example at ``w`` for one output.

    Attributes
    ----------
    loss : float
        ``Delta(y_i, y^)``.
    indices : ndarray of shape (nnz,), int64
        Sorted coordinates of ``dPhi = Phi(x_i, y^) - Phi(x_i, y_i)``.
    values : ndarray of shape (nnz,), float64
        Its nonzero entries.
    value : float
        ``Delta(y_i, y^) + <w, dPhi>``.
    output : object
        ``y^`` (the true label when an approximate model's output was replaced by it).
    replaced : bool
        Whether the model's output was replaced (by the truth or by a better cached output).
    """

    loss: float
    indices: np.ndarray
    values: np.ndarray
    value: float
    output: Any
    replaced: bool


class ChunkCut(NamedTuple):
    """One chunk's share of the 1-slack cut (unnormalised sums over its examples).

    Attributes
    ----------
    indices : ndarray of shape (nnz,), int64
        Sorted coordinates of ``sum_i Phi(x_i, y^_i) - Phi(x_i, y_i)``.
    values : ndarray of shape (nnz,), float64
    loss : float
        ``sum_i Delta(y_i, y^_i)``.
    value : float
        ``sum_i R_i`` (the hinge terms).
    outputs : list
        ``y^_i`` of the chunk's examples, in order.
    n_replaced : int
        Outputs of an approximate model replaced by a better one (the truth or a cached output).
    dense : bool
        Whether the model's joint features came back as dense arrays.
    """

    indices: np.ndarray
    values: np.ndarray
    loss: float
    value: float
    outputs: list
    n_replaced: int
    dense: bool


class ChunkRows(NamedTuple):
    """One chunk's cuts, one per example (the n-slack method).

    Attributes
    ----------
    indptr : ndarray of shape (n_chunk + 1,), int64
        Example ``k``'s row is ``indices/values[indptr[k]:indptr[k + 1]]``.
    indices : ndarray of shape (nnz,), int64
        Sorted coordinates of ``Phi(x_i, y^_i) - Phi(x_i, y_i)`` per example.
    values : ndarray of shape (nnz,), float64
    losses : ndarray of shape (n_chunk,), float64
        ``Delta(y_i, y^_i)``.
    risks : ndarray of shape (n_chunk,), float64
        ``R_i(w)`` (``Delta + <w, dPhi>``).
    outputs : list
    n_replaced : int
    """

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    losses: np.ndarray
    risks: np.ndarray
    outputs: list
    n_replaced: int


class BatchTerms(NamedTuple):
    """The hinge terms of a chunk's examples at ``w``, as arrays (the vectorised path).

    Attributes
    ----------
    indptr : ndarray of int64 of shape (r + 1,)
        Row ``j`` is ``indices/values[indptr[j]:indptr[j + 1]]``: ``dPhi = Phi(x_k, y^_k) -
        Phi(x_k, y_k)`` (sorted coordinates, no zeros) of example ``k = examples[j]``; an empty
        row (the output is the truth, or was replaced by it) and an example without a row have
        a zero term.
    indices : ndarray of int64
    values : ndarray of float64
    examples : ndarray of int64 of shape (r,)
        The chunk's index of each row (:meth:`StructuredChunk.batch_terms`: every example, in order).
    losses : ndarray of shape (n_chunk,), float64
        ``Delta(y_k, y^_k)`` (0 where the output is the truth or was replaced by it).
    values_at_w : ndarray of shape (n_chunk,), float64
        ``Delta + <w, dPhi>``.
    outputs : list
        ``y^_k`` (the truth where the model's output equals it or was replaced by it).
    replaced : ndarray of bool of shape (n_chunk,)
        Outputs of an approximate model replaced by the truth.
    total : tuple of ndarray, optional
        ``sum_j dPhi_j`` as sorted (coordinates int64, nonzero values float64), when asked for.
    """

    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    examples: np.ndarray
    losses: np.ndarray
    values_at_w: np.ndarray
    outputs: list
    replaced: np.ndarray
    total: tuple | None = None

    def example(self, k: int, position: int | None) -> ExampleTerms:
        """Example ``k``'s term (``position``: its row, None for a zero term)."""
        if position is None:
            return ExampleTerms(0.0, np.zeros(0, np.int64), np.zeros(0), 0.0, self.outputs[k], bool(self.replaced[k]))
        a, b = self.indptr[position], self.indptr[position + 1]
        return ExampleTerms(
            float(self.losses[k]),
            self.indices[a:b].copy(),
            self.values[a:b].copy(),
            float(self.values_at_w[k]),
            self.outputs[k],
            bool(self.replaced[k]),
        )


class ModelChecks:
    """The checked calls of a user's model: joint features, losses, loss-augmented margins.

    Parameters
    ----------
    model : StructuredModel
        The user's model.
    dim : int
        Length of the joint feature.
    check : bool
        Check every joint feature (length, finiteness) and loss (finite, ``>= 0``).
    batch_forms : frozenset of str, default=frozenset()
        The batch forms the model gives itself (``"batch_joint_feature"``, ``"batch_loss"``):
        :meth:`batch_features` and :meth:`batch_losses` call them once, else loop over the
        per-example methods.
    """

    def __init__(self, model, dim: int, check: bool, batch_forms=frozenset()):
        self.model, self.dim, self.check = model, int(dim), bool(check)
        self.name = type(model).__name__
        self.approximate = bool(getattr(model, "approximate", False))
        self.batch_forms = frozenset(batch_forms)

    def error(self, method: str, message: str, i=None) -> InputError:
        """An :class:`InputError` naming the model's class, the method and the example ``i``."""
        where = f" (example {i})" if i is not None else ""
        return InputError(f"{self.name}.{method}{where}: {message}", field=method)

    def feature(self, x, y, i=None):
        """``Phi(x, y)``: a dense ndarray of shape (dim,) (float64), or for a sparse joint feature
        a :class:`SparseRow` (sorted unique coordinates, values)."""
        phi = self.model.joint_feature(x, y)
        dim = self.dim
        if sp.issparse(phi):
            shape = phi.shape
            if self.check and shape not in ((1, dim), (dim,)):
                raise self.error("joint_feature", f"returned a sparse matrix of shape {shape}, expected (1, {dim})", i)
            row = sparse_row(phi)
            if self.check and not np.all(np.isfinite(row.values)):
                raise self.error("joint_feature", "returned non-finite entries (NaN or inf)", i)
            return row
        try:
            arr = np.asarray(phi, dtype=np.float64)
        except (TypeError, ValueError):
            raise self.error(
                "joint_feature",
                f"returned {type(phi).__name__}, expected an ndarray of shape ({dim},) or a sparse row",
                i,
            ) from None
        if self.check:
            if arr.shape not in ((dim,), (1, dim)):
                raise self.error("joint_feature", f"returned shape {arr.shape}, expected ({dim},) (dim={dim})", i)
            if not np.all(np.isfinite(arr)):
                raise self.error("joint_feature", "returned non-finite entries (NaN or inf)", i)
        return arr.reshape(-1)

    def loss(self, y, y_hat, i=None) -> float:
        """``Delta(y, y_hat)`` as a float, checked finite and ``>= 0``."""
        raw = self.model.loss(y, y_hat)
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise self.error("loss", f"returned {type(raw).__name__}, expected a number", i) from None
        if self.check and not (math.isfinite(value) and value >= 0.0):
            raise self.error("loss", f"returned {value!r}; a loss must be finite and >= 0", i)
        return value

    def batch_features(self, X, Y, examples) -> tuple[sp.csr_matrix, bool]:
        """``Phi(X[j], Y[j])`` of many examples as one CSR matrix.

        Parameters
        ----------
        X, Y : list
            Inputs and outputs, ``n`` of each.
        examples : ndarray of int of shape (n,)
            Their indices in the training set (for messages).

        Returns
        -------
        phi : scipy.sparse.csr_matrix of shape (n, dim), float64
            Canonical (sorted coordinates, no duplicates, no explicit zeros from a dense form).
        dense : bool
            Whether the model gave dense features (then the 1-slack slope is dense).
        """
        if "batch_joint_feature" not in self.batch_forms:
            rows = [self.feature(x, y, i) for x, y, i in zip(X, Y, examples)]
            return _stack_rows(rows, self.dim)
        return self.batch_matrix("batch_joint_feature", self.model.batch_joint_feature(X, Y), len(X), examples)

    def batch_differences(self, X, Y, Y_hat, examples) -> tuple[sp.csr_matrix, bool]:
        """``Phi(X[j], Y_hat[j]) - Phi(X[j], Y[j])`` of many examples by the model's
        ``batch_joint_feature_difference``, as :meth:`batch_features` returns (its explicit zeros dropped)."""
        method = "batch_joint_feature_difference"
        mat, dense = self.batch_matrix(method, self.model.batch_joint_feature_difference(X, Y, Y_hat), len(X), examples)
        if not dense:
            mat.eliminate_zeros()
        return mat, dense

    def batch_matrix(self, method: str, phi, n: int, examples) -> tuple[sp.csr_matrix, bool]:
        """The answer ``phi`` of the batch form ``method`` for ``n`` examples, checked (shape, and
        with ``check`` finite entries), as a canonical CSR matrix of shape (n, dim) (the model's own
        matrix is left as it is) and whether it was dense."""
        dim = self.dim
        if sp.issparse(phi):
            if phi.shape != (n, dim):
                raise self.error(method, f"returned a sparse matrix of shape {phi.shape}, expected ({n}, {dim})")
            mat = sp.csr_matrix(phi, dtype=np.float64)
            if not mat.has_canonical_format:
                mat = mat.copy()
                mat.sum_duplicates()
            dense = False
        else:
            try:
                arr = np.asarray(phi, dtype=np.float64)
            except (TypeError, ValueError):
                raise self.error(
                    method, f"returned {type(phi).__name__}, expected a CSR matrix or an ndarray of shape ({n}, {dim})"
                ) from None
            if arr.shape != (n, dim):
                raise self.error(method, f"returned shape {arr.shape}, expected ({n}, {dim}) (dim={dim})")
            mat, dense = sp.csr_matrix(arr), True
        if self.check:
            bad = np.flatnonzero(~np.isfinite(mat.data))
            if bad.size:
                j = int(np.searchsorted(mat.indptr, bad[0], side="right")) - 1
                raise self.error(method, f"returned non-finite entries (NaN or inf) in row {j}", examples[j])
        return mat, dense

    def batch_losses(self, Y, Y_hat, examples) -> np.ndarray:
        """``Delta(Y[j], Y_hat[j])`` of many examples as an ndarray of shape (n,), checked finite and
        ``>= 0`` (``examples``: their indices in the training set, for messages)."""
        n = len(Y)
        if "batch_loss" not in self.batch_forms:
            return np.array([self.loss(y, yh, i) for y, yh, i in zip(Y, Y_hat, examples)], dtype=np.float64)
        raw = self.model.batch_loss(Y, Y_hat)
        try:
            arr = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError):
            raise self.error(
                "batch_loss", f"returned {type(raw).__name__}, expected an ndarray of shape ({n},)"
            ) from None
        if arr.shape != (n,):
            raise self.error("batch_loss", f"returned shape {arr.shape}, expected ({n},)")
        if self.check:
            bad = np.flatnonzero(~(np.isfinite(arr) & (arr >= 0.0)))
            if bad.size:
                j = int(bad[0])
                raise self.error(
                    "batch_loss", f"returned {float(arr[j])!r}; a loss must be finite and >= 0", examples[j]
                )
        return arr

    @property
    def loss_method(self) -> str:
        """The name of the method that gives the losses (for messages)."""
        return "batch_loss" if "batch_loss" in self.batch_forms else "loss"

    @staticmethod
    def difference(phi_hat, phi_true) -> tuple[np.ndarray, np.ndarray]:
        """``phi_hat - phi_true`` (each an ndarray or a :class:`SparseRow`) as sorted (coordinates,
        nonzero values)."""
        if isinstance(phi_hat, SparseRow) and isinstance(phi_true, SparseRow):
            return merge_sorted_sums(phi_hat.indices, phi_hat.values, phi_true.indices, -phi_true.values)
        diff = as_dense(phi_hat) - as_dense(phi_true)
        nz = np.flatnonzero(diff)
        return nz.astype(np.int64), diff[nz]

    def margin_floor(self, loss, values, w_at) -> float:
        """The most negative margin ``Delta + <w, dPhi>`` that rounding alone explains."""
        return -MARGIN_RTOL * (1.0 + abs(loss) + float(np.abs(values * w_at).sum()))


class _LastTerms(NamedTuple):
    """A chunk's terms of its last call (:meth:`StructuredChunk.batch_terms`): the outputs kept
    (and their :func:`_flatten` form), one CSR row of ``dPhi`` per example, the losses, whether
    every entry is an integer, and the rows' sum when it was asked for."""

    outputs: list
    flat: Any
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    losses: np.ndarray
    integral: bool
    total: tuple | None


def _row(indptr, indices, data, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Row ``k`` of CSR arrays as ``(indices, data)`` views."""
    return indices[indptr[k] : indptr[k + 1]], data[indptr[k] : indptr[k + 1]]


class StructuredChunk:
    """A :class:`cutplane.executors.ChunkTask`: examples ``start .. start + len(X)`` of a structured model.

    ``chunk(w, mode)`` with ``mode`` one of ``"cut"`` (the chunk's share of the 1-slack cut,
    :class:`ChunkCut`), ``"rows"`` (one cut per example, :class:`ChunkRows`) or ``"cached"`` (the
    share of the cut from the cached outputs, :class:`ChunkCut`). ``"cut"`` and ``"rows"`` call the
    model's ``batch_loss_augmented_argmax`` once on the chunk's examples and remember each new
    output (the last ``cache_size`` distinct ones per example).

    Two paths give the same answers. The per-example path asks the model for one joint feature
    and one loss at a time. The vectorised path (``vectorised=True``) holds the truth's features
    as one CSR matrix (computed once, with ``loss(y, y) = 0`` checked once) and per call asks for
    the joint features and losses of every output that differs from its truth in one batch
    (``batch_joint_feature``, ``batch_loss`` when the model gives them, else a loop over the
    per-example methods); ``dPhi`` is CSR arithmetic, the values ``Delta + dPhi @ w``, the checks
    and the margin test against the truth are made on the arrays.

    Parameters
    ----------
    model : StructuredModel
    X, Y : list
        The chunk's inputs and true outputs.
    start : int
        Index of the chunk's first example in the whole training set (for messages).
    dim : int
        Length of the joint feature.
    check : bool
        Check the model's joint features and losses (:class:`ModelChecks`).
    cache_size : int
        Outputs kept per example for :meth:`cached` (0: none).
    vectorised : bool, default=False
        Take the vectorised path.
    batch_forms : frozenset of str, default=frozenset()
        The batch forms the model gives (:class:`ModelChecks`).
    """

    def __init__(
        self,
        model,
        X,
        Y,
        start: int,
        *,
        dim: int,
        check: bool = True,
        cache_size: int = 0,
        vectorised: bool = False,
        batch_forms=frozenset(),
    ):
        self.X, self.Y = list(X), list(Y)
        self.start = int(start)
        self.checks = ModelChecks(model, dim, check, batch_forms)
        self.cache_size = int(cache_size)
        self.vectorised = bool(vectorised)
        self._truth: list = [None] * len(self.X)  # Phi(x_i, y_i), computed at first use
        self._truth_rows = None  # the vectorised path's Phi(x_i, y_i) as one CSR matrix
        self._difference_checked = False  # the model's batch difference compared once (with check)
        self._last: _LastTerms | None = None  # the last call's terms (the vectorised path)
        self._flat_truth = None  # (shapes, concatenated values, offsets) of array outputs, for bulk equality
        self._cache: list[list] = [[] for _ in self.X]  # per example: [(output, loss, indices, values)]
        self._dense = False
        self._scratch: tuple[np.ndarray, np.ndarray] | None = None  # the column sums' scratch (not pickled)

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_scratch"] = None
        state["_last"] = None  # a copy starts afresh (the same answers)
        return state

    @property
    def model(self):
        """The user's model."""
        return self.checks.model

    def __len__(self) -> int:
        return len(self.X)

    # -- one example ------------------------------------------------------------------------
    def truth_feature(self, k: int):
        """``Phi(x_k, y_k)`` of the chunk's example ``k`` (computed once; checked ``Delta(y, y) = 0``)."""
        phi = self._truth[k]
        if phi is None:
            i = self.start + k
            phi = self.checks.feature(self.X[k], self.Y[k], i)
            if self.checks.check:
                own = self.checks.loss(self.Y[k], self.Y[k], i)
                if own != 0.0:
                    raise self.checks.error(
                        "loss", f"loss(y, y) = {own!r} for the true output; a loss must be 0 at the truth", i
                    )
            self._truth[k] = phi
            self._dense = self._dense or not isinstance(phi, SparseRow)
        return phi

    def terms(self, k: int, y_hat, w: np.ndarray) -> ExampleTerms:
        """The checked hinge term of example ``k`` for the model's output ``y_hat`` at ``w``.

        An output worse than the truth (``Delta + <w, dPhi>`` below zero beyond rounding) raises
        an :class:`InputError` naming ``loss_augmented_argmax``, or, for a model declared
        ``approximate``, is replaced by the truth (margin 0).
        """
        y = self.Y[k]
        i = self.start + k
        phi_true = self.truth_feature(k)
        if same_output(y_hat, y):
            return ExampleTerms(0.0, np.zeros(0, np.int64), np.zeros(0), 0.0, y, False)
        phi_hat = self.checks.feature(self.X[k], y_hat, i)
        self._dense = self._dense or not isinstance(phi_hat, SparseRow)
        loss = self.checks.loss(y, y_hat, i)
        idx, val = ModelChecks.difference(phi_hat, phi_true)
        w_at = w[idx]
        value = loss + float(val @ w_at)
        if value < self.checks.margin_floor(loss, val, w_at):
            if self.checks.approximate:
                return ExampleTerms(0.0, np.zeros(0, np.int64), np.zeros(0), 0.0, y, True)
            raise self.checks.error(
                "loss_augmented_argmax",
                f"returned an output worse than the true output: Delta(y, y^) + <w, Phi(x, y^) - Phi(x, y)> = "
                f"{value:.6g} < 0. An exact loss-augmented argmax maximises this over all outputs (the truth "
                "gives 0); declare approximate = True on the model if its argmax is approximate",
                i,
            )
        return ExampleTerms(loss, idx, val, value, y_hat, False)

    def _cached_best(self, k: int, w: np.ndarray):
        """The cached output of example ``k`` of largest value at ``w`` (None when the cache is empty)."""
        best = None
        for out, loss, idx, val in self._cache[k]:
            v = loss + float(val @ w[idx])
            if best is None or v > best.value:
                best = ExampleTerms(loss, idx, val, v, out, False)
        return best

    def _remember(self, k: int, t: ExampleTerms) -> None:
        if self.cache_size <= 0 or t.replaced or (t.loss == 0.0 and t.indices.size == 0):
            return
        entries = self._cache[k]
        for j, e in enumerate(entries):
            if same_output(e[0], t.output):
                entries.append(entries.pop(j))  # the most recent last
                return
        entries.append((t.output, t.loss, t.indices, t.values))
        if len(entries) > self.cache_size:
            del entries[0]

    def _with_cache(self, k: int, t: ExampleTerms, w: np.ndarray) -> ExampleTerms:
        """``t``, or a cached output of example ``k`` that beats it beyond rounding: taken for an
        approximate model, an :class:`InputError` for an exact one (its argmax did not maximise)."""
        if not self._cache[k]:
            return t
        best = self._cached_best(k, w)
        if best is None or best.value <= t.value + MARGIN_RTOL * (1.0 + abs(best.value) + abs(t.value)):
            return t
        if self.checks.approximate:
            return best._replace(replaced=True)
        raise self.checks.error(
            "loss_augmented_argmax",
            f"returned an output of Delta + <w, dPhi> = {t.value:.6g} but an earlier output of this example "
            f"reaches {best.value:.6g}: not a maximiser; declare approximate = True on the model if its "
            "argmax is approximate",
            self.start + k,
        )

    # -- the vectorised path -------------------------------------------------------------------
    def truth_rows(self) -> sp.csr_matrix:
        """``Phi(x_k, y_k)`` of every example of the chunk as one CSR matrix (computed once; with
        ``check``, ``Delta(y_k, y_k) = 0`` checked once)."""
        if self._truth_rows is None:
            examples = self.start + np.arange(len(self.X))
            mat, dense = self.checks.batch_features(self.X, self.Y, examples)
            if self.checks.check:
                own = self.checks.batch_losses(self.Y, self.Y, examples)
                nz = np.flatnonzero(own != 0.0)
                if nz.size:
                    j = int(nz[0])
                    raise self.checks.error(
                        self.checks.loss_method,
                        f"loss(y, y) = {float(own[j])!r} for the true output; a loss must be 0 at the truth",
                        int(examples[j]),
                    )
            self._truth_rows = mat
            self._dense = self._dense or dense
            self._flat_truth = _flatten(self.Y)
        return self._truth_rows

    def same_as_truth(self, outputs: list, flat=None) -> np.ndarray:
        """Whether each output equals its truth (:func:`same_output`), as a bool ndarray; numeric
        array outputs of the truths' shapes are compared in one pass (``flat``: their
        :func:`_flatten` form when the caller has it)."""
        self.truth_rows()
        return _same_outputs(outputs, _flatten(outputs) if flat is None else flat, self.Y, self._flat_truth)

    def batch_terms(self, w: np.ndarray, with_sum: bool = False) -> BatchTerms:
        """Every example's term at ``w`` from the model's argmax, as arrays (:class:`BatchTerms`,
        one row per example).

        One batch argmax. The outputs are compared in bulk with the last call's: an example whose
        output did not change keeps its row of ``dPhi`` and its loss (consecutive queries of a
        cutting-plane method change few outputs). For the changed outputs other than the truth,
        one batch of losses and one of ``dPhi`` (the model's ``batch_joint_feature_difference``,
        else its joint features less the truth's by a merge of sorted rows), checked. The values
        ``Delta + <w, dPhi>`` of every row and the margin test against the truth at ``w``.

        With ``with_sum``, also ``sum_k dPhi_k`` (:attr:`BatchTerms.total`): updated from the last
        call's sum by the changed rows when every entry is an integer (counts: exact, the same
        sum as a fresh one) and the changed rows are fewer than the rest, else summed afresh.
        """
        truth = self.truth_rows()
        outs = self.outputs_at(w)
        m = len(outs)
        flat = _flatten(outs)
        last = self._last
        if last is None:
            changed = np.ones(m, dtype=bool)
        else:
            changed = ~_same_outputs(outs, flat, last.outputs, last.flat)
        differ = ~self.same_as_truth(outs, flat)
        need = np.flatnonzero(changed & differ)
        n_ptr, n_idx, n_val, n_loss = np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
        n_dots = np.zeros(0)
        if need.size:
            examples = self.start + need
            X_d, Y_d, O_d = [self.X[k] for k in need], [self.Y[k] for k in need], [outs[k] for k in need]
            n_loss = self.checks.batch_losses(Y_d, O_d, examples)
            if "batch_joint_feature_difference" in self.checks.batch_forms:
                n_ptr, n_idx, n_val = self._model_differences(X_d, Y_d, O_d, need, w)
                n_dots = _row_dots(n_ptr, n_idx, n_val, np.arange(need.size), w)
            else:
                phi, dense = self.checks.batch_features(X_d, O_d, examples)
                self._dense = self._dense or dense
                n_ptr, n_idx, n_val, n_dots = _row_differences(
                    phi.indptr, phi.indices, phi.data, truth.indptr, truth.indices, truth.data, need, w
                )
        values = np.zeros(m)
        values[need] = n_dots
        if last is None:
            losses = np.zeros(m)
            reused = np.zeros(0, dtype=np.int64)
        else:
            losses = last.losses.copy()
            reused = np.flatnonzero(~changed & (np.diff(last.indptr) > 0))  # old rows kept
        if reused.size:
            assert last is not None  # rows are reused only from a last call
            source = np.where(changed, -1, -2).astype(np.int64)
            source[need] = np.arange(need.size)
            indptr, indices, data = _splice_rows(last.indptr, last.indices, last.values, n_ptr, n_idx, n_val, source)
            values[reused] = _row_dots(last.indptr, last.indices, last.values, reused, w)
        else:  # no old row kept: the new rows are the rows, in example order
            counts = np.zeros(m, dtype=np.int64)
            counts[need] = np.diff(n_ptr)
            indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            indices, data = n_idx.astype(np.int64, copy=False), n_val
        losses[changed] = 0.0
        losses[need] = n_loss
        values += losses
        rows = np.flatnonzero(differ)
        keep = self._margins_kept(
            values[rows], losses[rows], rows, w, lambda j: _row(indptr, indices, data, int(rows[j]))
        )
        replaced = np.zeros(m, dtype=bool)
        if not keep.all():
            replaced[rows[~keep]] = True
            differ &= ~replaced
            losses[replaced] = 0.0
            values[replaced] = 0.0
            gone = np.where(replaced, -1, -2).astype(np.int64)
            indptr, indices, data = _splice_rows(indptr, indices, data, n_ptr, n_idx, n_val, gone)
        outputs = [o if d else y for o, y, d in zip(outs, self.Y, differ.tolist())]
        integral = bool(np.array_equal(n_val, np.rint(n_val))) and (last is None or last.integral)
        total = None
        if with_sum:
            total = self._updated_sum(last, changed, integral and not replaced.any(), n_idx, n_val, indices, data)
        # the outputs kept equal the model's by value except where replaced: their flat form is the same
        flat_kept = _flatten(outputs) if replaced.any() else flat
        self._last = _LastTerms(outputs, flat_kept, indptr, indices, data, losses, integral, total)
        return BatchTerms(indptr, indices, data, np.arange(m), losses, values, outputs, replaced, total)

    def _updated_sum(self, last, changed, exact, n_idx, n_val, indices, data):
        """``sum_k dPhi_k`` of the new rows: the last sum less the changed examples' old rows plus
        their new ones when ``exact`` (integer entries) and that reads fewer entries, else afresh."""
        dim = self.checks.dim
        if self._scratch is None:
            self._scratch = (np.zeros(dim), np.zeros(dim, dtype=np.bool_))
        if exact and last is not None and last.total is not None:
            gone = np.flatnonzero(changed)
            n_old = int(np.diff(last.indptr)[gone].sum())
            if n_old + n_idx.size + last.total[0].size < indices.size:
                _, o_idx, o_val = _take_rows(last.indptr, last.indices, last.values, gone)
                delta = signed_sum([(n_idx, n_val, 1.0), (o_idx, o_val, -1.0)], dim, self._scratch)
                total = merge_sorted_sums(last.total[0], last.total[1], delta[0], delta[1])
                if not total[1].size or float(np.abs(total[1]).max()) < 2.0**52:
                    return total
        return sum_rows([indices], [data], dim, self._scratch)

    def _model_differences(self, X_d, Y_d, O_d, differ, w):
        """``dPhi`` of the outputs ``O_d`` (examples ``differ``) by the model's
        ``batch_joint_feature_difference``, as CSR arrays ``(indptr, indices, data)``. With
        ``check``, the first call of the chunk compares every row with the joint features'
        difference (one call of the joint feature, once)."""
        examples = self.start + differ
        dphi, dense = self.checks.batch_differences(X_d, Y_d, O_d, examples)
        self._dense = self._dense or dense
        indptr, indices = dphi.indptr.astype(np.int64, copy=False), dphi.indices.astype(np.int64, copy=False)
        if self.checks.check and not self._difference_checked:
            truth = self.truth_rows()
            phi, _ = self.checks.batch_features(X_d, O_d, examples)
            r_ptr, r_idx, r_val, _ = _row_differences(
                phi.indptr, phi.indices, phi.data, truth.indptr, truth.indices, truth.data, differ, w
            )
            ref = sp.csr_matrix((r_val, r_idx, r_ptr), shape=dphi.shape)
            gap = abs(dphi - ref)
            if gap.nnz and gap.max() > 1e-9 * (1.0 + abs(ref).max()):
                j = int(np.argmax(np.asarray(gap.max(axis=1).todense()).ravel()))
                raise self.checks.error(
                    "batch_joint_feature_difference",
                    f"differs from joint_feature(x, y^) - joint_feature(x, y) (largest difference "
                    f"{float(gap.max()):.6g}); the batch form must give the difference of the joint features",
                    int(examples[j]),
                )
            self._difference_checked = True
        return indptr, indices, np.asarray(dphi.data, dtype=np.float64)

    def _margins_kept(self, value, loss, differ, w, row) -> np.ndarray:
        """The margin test against the truth of the outputs ``differ`` (as in :meth:`terms`), on
        arrays: ``value[j] = Delta + <w, dPhi_j>``, ``loss[j] = Delta``, ``row(j)`` the sorted
        ``(indices, values)`` of ``dPhi_j`` (asked only of the rare negative values). An output
        worse than the truth beyond rounding raises for an exact model; for an approximate one it
        is marked False (replaced by the truth). Returns the bool mask of the outputs kept."""
        keep = np.ones(differ.size, dtype=bool)
        for j in np.flatnonzero(value < 0.0):
            idx, val = row(j)
            if value[j] < self.checks.margin_floor(loss[j], val, w[idx]):
                if not self.checks.approximate:
                    raise self.checks.error(
                        "loss_augmented_argmax",
                        f"returned an output worse than the true output: Delta(y, y^) + <w, Phi(x, y^) - Phi(x, y)> = "
                        f"{value[j]:.6g} < 0. An exact loss-augmented argmax maximises this over all outputs (the "
                        "truth gives 0); declare approximate = True on the model if its argmax is approximate",
                        self.start + int(differ[j]),
                    )
                keep[j] = False
        return keep

    def _batch_as_terms(self, bt: BatchTerms) -> list[ExampleTerms]:
        position = dict(zip(bt.examples.tolist(), range(bt.examples.size)))
        return [bt.example(k, position.get(k)) for k in range(len(bt.outputs))]

    def outputs_at(self, w: np.ndarray) -> list:
        """The model's loss-augmented outputs of the chunk's examples at ``w`` (one batch call)."""
        outs = self.model.batch_loss_augmented_argmax(self.X, self.Y, w)
        try:
            outs = list(outs)
        except TypeError:
            raise self.checks.error(
                "batch_loss_augmented_argmax", f"returned {type(outs).__name__}, expected a list of outputs"
            ) from None
        if len(outs) != len(self.X):
            raise self.checks.error(
                "batch_loss_augmented_argmax", f"returned {len(outs)} outputs for {len(self.X)} examples"
            )
        return outs

    # -- the chunk's answers ----------------------------------------------------------------
    def example_terms(self, w: np.ndarray, cached: bool = False) -> list[ExampleTerms]:
        """Every example's term at ``w``: from the model's argmax, or (``cached``) from the cache
        (per example the cached output, or the truth, of largest value)."""
        zero = ExampleTerms(0.0, np.zeros(0, np.int64), np.zeros(0), 0.0, None, False)
        if cached:
            out = []
            for k in range(len(self.X)):
                best = self._cached_best(k, w)
                out.append(best if best is not None and best.value > 0.0 else zero._replace(output=self.Y[k]))
            return out
        found: Iterable[ExampleTerms]
        if self.vectorised:
            found = self._batch_as_terms(self.batch_terms(w))
        else:  # lazily: example by example, each checked before the next is read
            found = (self.terms(k, y_hat, w) for k, y_hat in enumerate(self.outputs_at(w)))
        terms = []
        for k, t in enumerate(found):
            if self.checks.check or self.checks.approximate:
                t = self._with_cache(k, t, w)
            self._remember(k, t)
            terms.append(t)
        return terms

    def __call__(self, w, mode: str = "cut"):
        w = np.asarray(w)
        if mode == "rows":
            return self.rows(w)
        if self.vectorised and self.cache_size <= 0 and mode == "cut":
            bt = self.batch_terms(w, with_sum=True)
            assert bt.total is not None  # asked for
            idx, val = bt.total
            return ChunkCut(
                idx,
                val,
                float(sum(bt.losses.tolist())),
                float(sum(bt.values_at_w.tolist())),
                bt.outputs,
                int(bt.replaced.sum()),
                self._dense,
            )
        terms = self.example_terms(w, cached=(mode == "cached"))
        idx, val = sum_rows([t.indices for t in terms], [t.values for t in terms], self.checks.dim)
        return ChunkCut(
            idx,
            val,
            float(sum(t.loss for t in terms)),
            float(sum(t.value for t in terms)),
            [t.output for t in terms],
            sum(t.replaced for t in terms),
            self._dense,
        )

    def rows(self, w: np.ndarray) -> ChunkRows:
        """One cut per example at ``w`` (:class:`ChunkRows`)."""
        if self.vectorised and self.cache_size <= 0:
            bt = self.batch_terms(w)
            counts = np.zeros(len(bt.outputs), dtype=np.int64)
            counts[bt.examples] = np.diff(bt.indptr)
            return ChunkRows(
                np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                bt.indices,
                bt.values,
                bt.losses,
                bt.values_at_w,
                bt.outputs,
                int(bt.replaced.sum()),
            )
        terms = self.example_terms(w)
        indptr = np.concatenate([[0], np.cumsum([t.indices.size for t in terms])]).astype(np.int64)
        indices = np.concatenate([t.indices for t in terms]) if terms else np.zeros(0, np.int64)
        values = np.concatenate([t.values for t in terms]) if terms else np.zeros(0)
        return ChunkRows(
            indptr,
            indices.astype(np.int64, copy=False),
            values.astype(np.float64, copy=False),
            np.array([t.loss for t in terms], dtype=np.float64),
            np.array([t.value for t in terms], dtype=np.float64),
            [t.output for t in terms],
            sum(t.replaced for t in terms),
        )


class PredictTask:
    """Picklable ``X -> model.batch_argmax(X, w)`` (a chunk of new inputs, for ``executor.map``).

    Parameters
    ----------
    model : StructuredModel
    w : ndarray of shape (dim,)
    """

    def __init__(self, model, w):
        self.model, self.w = model, w

    def __call__(self, X) -> list:
        out = list(self.model.batch_argmax(X, self.w))
        if len(out) != len(X):
            raise InputError(
                f"{type(self.model).__name__}.batch_argmax: returned {len(out)} outputs for {len(X)} inputs",
                field="batch_argmax",
            )
        return out
