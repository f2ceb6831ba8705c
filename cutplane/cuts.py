"""Cuts and oracle results: what an oracle hands to the engine (batch) or to SPOM (per example).

The protocols that produce them (:class:`~cutplane.protocols.Oracle`,
:class:`~cutplane.protocols.ExampleOracle`) are in :mod:`cutplane.protocols`.

A *cut* at a query point ``w_t`` is the affine minorant
``R(w) >= <slope, w> + offset`` of the risk, with ``offset = R(w_t) - <slope, w_t>``.
Slopes are dense ``ndarray`` of shape (dim,) or scipy sparse with one row,
shape (1, dim) (any format; the working set stores them as CSR rows).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import scipy.sparse as sp

__all__ = [
    "Cut",
    "OracleResult",
    "CachedCut",
    "ExampleSubgradient",
    "ExampleCuts",
    "is_sparse_slope",
    "coordinate_dtype",
    "slope_dot",
    "slope_to_dense",
    "make_cut",
    "sparse_to_subgradient",
]


class Cut(NamedTuple):
    """An affine lower bound ``<slope, w> + offset`` of a convex risk.

    Attributes
    ----------
    slope : ndarray of shape (dim,) or scipy sparse of shape (1, dim)
        A subgradient of the risk at the query point.
    offset : float
        ``R(w_t) - <slope, w_t>``.
    """

    slope: Any
    offset: float


class CachedCut(NamedTuple):
    """A cut built from outputs an oracle has seen before (its cache), not from a new argmax.

    For a structured hinge risk ``R(w) = (1/n) sum_i max_y [Delta(y_i, y) + <w, dPhi_i(y)>]``
    any fixed choice of one output per example gives the affine minorant
    ``(1/n) sum_i [Delta(y_i, y_i') + <w, dPhi_i(y_i')>] <= R(w)`` everywhere, so the cut is as
    valid as the oracle's own; but its value at the query point is only a lower bound on
    ``R(w)``, never an upper bound (the engine takes no upper bound from it).

    Attributes
    ----------
    cut : Cut
        The affine minorant.
    value : float
        ``<slope, w> + offset`` at the query point ``w`` (``<= R(w)``), up to rounding (an oracle
        may sum it per example, as it chose the outputs).
    """

    cut: Cut
    value: float


class OracleResult(NamedTuple):
    """What an oracle returns at a query point.

    Attributes
    ----------
    value : float
        ``R(w)``; an upper bound on it when ``exact`` is False.
    cut : Cut
        The cut at ``w``.
    exact : bool
        False when the value or the cut is approximate (relaxed MAP, loose inner solver);
        the engine then reports that its certificate is relative to the approximation.
    argmax : object
        The most violated outputs (for caches and debugging), or None.
    """

    value: float
    cut: Cut
    exact: bool = True
    argmax: Any = None


class ExampleSubgradient(NamedTuple):
    """The loss of one example and a subgradient, as sparse coordinates (what SPOM consumes).

    Attributes
    ----------
    value : float
        ``L_i(w)``.
    indices : ndarray of shape (nnz,), int64
        Unique coordinates of the subgradient.
    values : ndarray of shape (nnz,), float64
        ``g[indices]``; ``g`` is zero elsewhere.
    """

    value: float
    indices: np.ndarray
    values: np.ndarray


class ExampleCuts(NamedTuple):
    """One cut per example at a query point ``w``: what the n-slack method consumes
    (:func:`cutplane.minimize` with ``method="n-slack"``, :class:`cutplane.protocols.ExampleCutsOracle`).

    The risk is the mean ``R(w) = (1/n) sum_i R_i(w)`` and row ``i`` is the cut
    ``R_i(v) >= <slopes[i], v> + offsets[i]``, tight at ``w``.

    Attributes
    ----------
    values : ndarray of shape (n_samples,), float64
        ``R_i(w)``.
    offsets : ndarray of shape (n_samples,), float64
        ``R_i(w) - <slopes[i], w>`` (the structured hinge: the loss of the argmax output).
    slopes : scipy.sparse.csr_matrix of shape (n_samples, dim)
        Row ``i`` a subgradient of ``R_i`` at ``w`` (the structured hinge:
        ``Phi(x_i, y^_i) - Phi(x_i, y_i)``). Its values may be of any real type: integer
        counts in int8 take an eighth of the memory of float64, and the n-slack method reads
        them in their own type.
    argmax : object
        The most violated outputs, or None.
    exact : bool, default=True
        False when the outputs may not be the most violated ones (an approximate argmax): the
        values are then lower estimates of ``R_i(w)`` and a certificate is relative to the
        approximation (:attr:`cutplane.result.Result.exact`).
    """

    values: np.ndarray
    offsets: np.ndarray
    slopes: Any
    argmax: Any = None
    exact: bool = True


def coordinate_dtype(dim: int) -> np.dtype:
    """The integer type of sparse slopes' coordinates for a ``w`` of length ``dim``: int32 while
    every coordinate fits (a third less memory per stored entry than int64 with float64 values),
    else int64. The n-slack working sets store rows with it, and oracles that build rows in it
    are stored without a conversion."""
    return np.dtype(np.int32 if int(dim) <= np.iinfo(np.int32).max else np.int64)


def is_sparse_slope(slope) -> bool:
    """True when ``slope`` is a scipy sparse matrix or array."""
    return sp.issparse(slope)


def slope_dot(slope, w: np.ndarray) -> float:
    """``<slope, w>`` for a dense (dim,) or sparse (1, dim) slope."""
    if sp.issparse(slope):
        return float((slope @ w).sum())
    return float(np.dot(slope, w))


def slope_to_dense(slope, dim: int | None = None) -> np.ndarray:
    """The slope as a dense float64 vector of shape (dim,)."""
    if sp.issparse(slope):
        out = np.asarray(slope.toarray(), dtype=np.float64).ravel()
    else:
        out = np.asarray(slope, dtype=np.float64).ravel()
    if dim is not None and out.shape[0] != dim:
        raise ValueError(f"slope has {out.shape[0]} entries, expected {dim}")
    return out


def make_cut(value: float, slope, w: np.ndarray) -> Cut:
    """The cut through ``(w, value)`` with the given slope: offset = value - <slope, w>."""
    return Cut(slope, float(value) - slope_dot(slope, w))


def sparse_to_subgradient(value: float, slope) -> ExampleSubgradient:
    """An :class:`ExampleSubgradient` from a (1, dim) scipy sparse or dense (dim,) slope."""
    if sp.issparse(slope):
        row = sp.csr_matrix(slope)
        row.sum_duplicates()
        row.eliminate_zeros()
        return ExampleSubgradient(float(value), row.indices.astype(np.int64), row.data.astype(np.float64))
    g = np.asarray(slope, dtype=np.float64).ravel()
    nz = np.flatnonzero(g)
    return ExampleSubgradient(float(value), nz.astype(np.int64), g[nz])
