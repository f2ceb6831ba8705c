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
from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

from cutplane.exceptions import InputError

from .sequence_chunk import merge_sorted_sums

__all__ = [
    "StructuredChunk",
    "ChunkCut",
    "ChunkRows",
    "ExampleTerms",
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


def sum_rows(indices, values, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Sum sparse vectors given as concatenated (coordinates, values).

    Parameters
    ----------
    indices : list of ndarray of int64
        Coordinates of each vector (any order, repeats allowed).
    values : list of ndarray of float64
        Their values, aligned with ``indices``.
    dim : int
        Length of the vectors.

    Returns
    -------
    indices : ndarray of shape (nnz,), int64
        Sorted unique coordinates of the nonzero sums.
    values : ndarray of shape (nnz,), float64
    """
    if not indices:
        return np.zeros(0, np.int64), np.zeros(0)
    idx = np.concatenate(indices).astype(np.int64, copy=False)
    val = np.concatenate(values).astype(np.float64, copy=False)
    if idx.size == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    if idx.size >= dim // 4:
        acc = np.bincount(idx, weights=val, minlength=dim)
        nz = np.flatnonzero(acc)
        return nz.astype(np.int64), acc[nz]
    uniq, inv = np.unique(idx, return_inverse=True)
    acc = np.bincount(inv.ravel(), weights=val, minlength=uniq.size)
    keep = acc != 0.0
    return uniq[keep], acc[keep]


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
    """

    def __init__(self, model, dim: int, check: bool):
        self.model, self.dim, self.check = model, int(dim), bool(check)
        self.name = type(model).__name__
        self.approximate = bool(getattr(model, "approximate", False))

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


class StructuredChunk:
    """A :class:`cutplane.executors.ChunkTask`: examples ``start .. start + len(X)`` of a structured model.

    ``chunk(w, mode)`` with ``mode`` one of ``"cut"`` (the chunk's share of the 1-slack cut,
    :class:`ChunkCut`), ``"rows"`` (one cut per example, :class:`ChunkRows`) or ``"cached"`` (the
    share of the cut from the cached outputs, :class:`ChunkCut`). ``"cut"`` and ``"rows"`` call the
    model's ``batch_loss_augmented_argmax`` once on the chunk's examples and remember each new
    output (the last ``cache_size`` distinct ones per example).

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
    """

    def __init__(self, model, X, Y, start: int, *, dim: int, check: bool = True, cache_size: int = 0):
        self.X, self.Y = list(X), list(Y)
        self.start = int(start)
        self.checks = ModelChecks(model, dim, check)
        self.cache_size = int(cache_size)
        self._truth: list = [None] * len(self.X)  # Phi(x_i, y_i), computed at first use
        self._cache: list[list] = [[] for _ in self.X]  # per example: [(output, loss, indices, values)]
        self._dense = False

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
        terms = []
        for k, y_hat in enumerate(self.outputs_at(w)):
            t = self.terms(k, y_hat, w)
            if self.checks.check or self.checks.approximate:
                t = self._with_cache(k, t, w)
            self._remember(k, t)
            terms.append(t)
        return terms

    def __call__(self, w, mode: str = "cut"):
        w = np.asarray(w)
        if mode == "rows":
            return self.rows(w)
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
