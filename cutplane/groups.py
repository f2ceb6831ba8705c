"""Partitions of the weight vector into groups (templates, kernels, blocks).

The package convention for a partition of ``w in R^dim`` into ``m`` groups is an integer
array ``group_ids`` of shape (dim,) whose entry ``i`` is the group of coordinate ``i``, a
value in ``0 .. m-1``. A list of index arrays (one per group) is accepted everywhere and
converted by :func:`as_group_ids`, the one place where that conversion is done.

Empty groups
------------
A group id with no coordinate (an id skipped in ``group_ids``, or an empty index array in
the list form) is allowed. Such a group has ``w_j`` of length 0, hence ``||w_j|| = 0``: it
contributes nothing to any block norm and every proximity operator leaves it empty.
"""

from __future__ import annotations

import numbers

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["as_group_ids", "group_norms", "group_weights_from_norms", "half_sq_norm"]


def _is_scalar_like(x) -> bool:
    return np.ndim(x) == 0


def _check_integer_array(arr: np.ndarray, field: str, cast: bool = True) -> np.ndarray:
    if arr.size == 0:
        return np.zeros(0, dtype=np.intp)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise InputError(f"expected integer indices, got dtype {arr.dtype}", field=field)
    return arr.astype(np.intp, copy=False) if cast else arr


def as_group_ids(groups, dim: int, n_groups: int | None = None, *, compact: bool = False) -> np.ndarray:
    """Convert a partition of ``range(dim)`` into the group-id array convention.

    Parameters
    ----------
    groups : array-like of int of shape (dim,), or sequence of array-like of int
        Either the group id of every coordinate (values in ``0 .. m-1``), or a list (or
        tuple) of ``m`` index arrays, the ``j``-th holding the coordinates of group ``j``.
        In the list form the index arrays must partition ``range(dim)``: every coordinate
        in exactly one group. Empty groups are allowed (see the module docstring).
    dim : int
        Length of the weight vector.
    n_groups : int, optional
        When given, ids must be smaller than ``n_groups`` (and in the list form the list
        must have exactly ``n_groups`` entries).
    compact : bool, default=False
        Return a read-only int32 array (int64 when an id is ``2**31`` or more) instead of a
        writable intp copy. A read-only, owned, contiguous array of that type is returned as
        it is (it cannot change: sharing it is safe), so the regulariser, the working set and
        the kernels hold one array of ``dim`` ids instead of a copy each.

    Returns
    -------
    group_ids : ndarray of shape (dim,), dtype intp (int32 or int64, read-only, when ``compact``)
        ``group_ids[i]`` is the group of coordinate ``i``.

    Raises
    ------
    InputError
        Non-integer ids, negative ids, ids out of range, index arrays that overlap or that
        miss a coordinate, a 2-D array (ambiguous), or a length other than ``dim``.
    """
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 0:
        raise InputError(f"dim must be a non-negative integer, got {dim!r}", field="dim")
    dim = int(dim)
    if n_groups is not None:
        if isinstance(n_groups, bool) or not isinstance(n_groups, numbers.Integral) or n_groups < 0:
            raise InputError(f"n_groups must be a non-negative integer, got {n_groups!r}", field="n_groups")
        n_groups = int(n_groups)

    if isinstance(groups, (list, tuple)) and len(groups) > 0 and not all(map(_is_scalar_like, groups)):
        if any(map(_is_scalar_like, groups)):
            raise InputError("mixes scalars and index arrays; give either group ids or index arrays", field="groups")
        ids = _ids_from_index_arrays(groups, dim, n_groups)
        return _read_only_ids(ids) if compact else ids

    try:
        ids = np.asarray(groups)
    except (TypeError, ValueError) as exc:  # ragged or odd objects
        raise InputError(f"cannot read groups as an array: {exc}", field="groups") from None
    if ids.ndim != 1:
        raise InputError(f"group ids must be 1-D of shape ({dim},), got shape {ids.shape}", field="groups")
    if ids.shape[0] != dim:
        raise InputError(f"group ids must have shape ({dim},), got shape {ids.shape}", field="groups")
    ids = _check_integer_array(ids, "groups", cast=not compact)
    if ids.size and ids.min() < 0:
        raise InputError(f"group ids must be >= 0, found {int(ids.min())}", field="groups")
    if n_groups is not None and ids.size and ids.max() >= n_groups:
        raise InputError(f"group id {int(ids.max())} >= n_groups={n_groups}", field="groups")
    if compact:
        return _read_only_ids(ids)
    return np.array(ids, dtype=np.intp, copy=True)


def _read_only_ids(ids: np.ndarray) -> np.ndarray:
    """Checked ids as a read-only int32 (int64 for large ids) array; ``ids`` itself when it
    already is one that owns its data."""
    dtype = np.dtype(np.int32) if (not ids.size or int(ids.max()) < 2**31) else np.dtype(np.int64)
    if ids.dtype == dtype and not ids.flags.writeable and ids.flags.owndata and ids.flags.c_contiguous:
        return ids
    out = np.array(ids, dtype=dtype, copy=True)
    out.flags.writeable = False
    return out


def _ids_from_index_arrays(groups, dim: int, n_groups: int | None) -> np.ndarray:
    if n_groups is not None and len(groups) != n_groups:
        raise InputError(f"{len(groups)} index arrays given, expected n_groups={n_groups}", field="groups")
    ids = np.full(dim, -1, dtype=np.intp)
    for j, idx in enumerate(groups):
        arr = np.asarray(idx)
        if arr.ndim != 1:
            raise InputError(f"index array of group {j} must be 1-D, got shape {arr.shape}", field="groups")
        arr = _check_integer_array(arr, f"groups[{j}]")
        if arr.size == 0:
            continue
        if arr.min() < 0 or arr.max() >= dim:
            raise InputError(
                f"indices must lie in [0, {dim}), found {int(arr.min())}..{int(arr.max())}", field=f"groups[{j}]"
            )
        clash = ids[arr] != -1
        if clash.any() or np.unique(arr).size != arr.size:
            i = int(arr[clash][0]) if clash.any() else int(arr[np.argmax(np.bincount(arr))])
            raise InputError(
                f"coordinate {i} belongs to more than one group (groups must not overlap)", field=f"groups[{j}]"
            )
        ids[arr] = j
    missing = np.flatnonzero(ids < 0)
    if missing.size:
        raise InputError(
            f"{missing.size} coordinate(s) in no group, first {int(missing[0])}; "
            "the index arrays must cover range(dim)",
            field="groups",
        )
    return ids


def group_runs(group_ids, n_groups: int, max_runs_per_group: int = 16):
    """Maximal runs of equal ids: ``(run_lo, run_group)``, int64 arrays of shape (n_runs,).

    Templates number their features template by template, so a template's coordinates form a
    few contiguous runs and the compiled loops can work run by run instead of reading a group id
    per coordinate. Returns None when there are more than ``max_runs_per_group * n_groups``
    runs (ids scattered over the coordinates); ``group_ids=None`` (one group) is one run.
    """
    if group_ids is None:
        return np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    ids = np.asarray(group_ids)
    if ids.size == 0:
        return None
    starts = np.concatenate(([0], np.flatnonzero(ids[1:] != ids[:-1]) + 1)).astype(np.int64)
    if len(starts) > max_runs_per_group * max(int(n_groups), 1):
        return None
    return starts, ids[starts].astype(np.int64)


def group_norms(v: np.ndarray, group_ids: np.ndarray, n_groups: int | None = None, runs=None) -> np.ndarray:
    """Euclidean norm of each group, ``b_j = ||v_j||_2``.

    Parameters
    ----------
    v : ndarray of shape (dim,)
        A vector (already validated, float64).
    group_ids : ndarray of int of shape (dim,)
        Output of :func:`as_group_ids`.
    n_groups : int, optional
        Number of groups ``m``; default ``group_ids.max() + 1`` (0 when ``dim == 0``).
    runs : tuple, optional
        :func:`group_runs` of ``group_ids`` (one streaming pass, no id read per coordinate).

    Returns
    -------
    norms : ndarray of shape (n_groups,)
        Non-negative; empty groups have norm 0. A compiled loop without temporaries of size
        dim; groups whose largest entry is outside [1e-140, 1e140] are recomputed from
        ``v_i / max_{i in j} |v_i|``, so no group loses precision to under- or overflow.
    """
    from .working_set._ws_kernels import group_norms_kernel, group_norms_runs

    if n_groups is None:
        n_groups = int(group_ids.max()) + 1 if group_ids.size else 0
    v = np.ascontiguousarray(v, dtype=np.float64).view()
    v.flags.writeable = False  # one compiled specialisation whether the caller's v is read-only or not
    if runs is not None:
        return group_norms_runs(v, runs[0], runs[1], int(n_groups))
    return group_norms_kernel(v, np.ascontiguousarray(group_ids), int(n_groups))


def half_sq_norm(n, r) -> float:
    """``1/2 ||n||_r^2`` for a non-negative vector ``n`` and ``1 <= r <= inf`` (scaled, no overflow)."""
    n = np.asarray(n, dtype=np.float64)
    top = float(n.max()) if n.size else 0.0
    if top == 0.0:
        return 0.0
    if np.isinf(r):
        return 0.5 * top * top
    return 0.5 * (top * float(np.sum((n / top) ** r)) ** (1.0 / r)) ** 2


def group_weights_from_norms(norms, q) -> np.ndarray:
    """``mu_j = (n_j / ||n||_q)^(q-2)`` with ``mu_j = 0`` where ``n_j = 0`` (q < inf).

    Parameters
    ----------
    norms : ndarray of shape (m,)
        Non-negative group norms ``n_j = ||v_j||``.
    q : float
        Dual exponent, ``1 < q < inf``.

    Returns
    -------
    mu : ndarray of shape (m,)
        Group weights with ``grad Omega^*(v)_j = mu_j v_j``. (A group of zero norm
        contributes ``mu_j v_j = 0`` whatever ``mu_j``; 0 is reported.)
    """
    n = np.asarray(norms, dtype=np.float64)
    top = float(n.max()) if n.size else 0.0
    mu = np.zeros_like(n)
    if top == 0.0:
        return mu
    t = n / top
    total = float(np.sum(t[t > 0] ** q)) ** (1.0 / q)
    pos = t > 0
    mu[pos] = (t[pos] / total) ** (q - 2.0)
    return mu
