"""A query point ``w`` as the oracles take it: checked once, float64, contiguous."""

from __future__ import annotations

import numpy as np

from .exceptions import InputError

__all__ = ["checked_point"]


def checked_point(w, dim: int) -> np.ndarray:
    """``w`` as a C-contiguous float64 vector of shape (dim,).

    Parameters
    ----------
    w : array-like of shape (dim,)
    dim : int

    Returns
    -------
    ndarray of shape (dim,), float64

    Raises
    ------
    InputError
        ``w`` of another shape, or with a NaN or an infinite entry (field ``w``).
    """
    w = np.asarray(w)
    if w.shape != (dim,):
        raise InputError(f"w must have shape ({dim},), got {w.shape}", field="w")
    w = np.ascontiguousarray(w, dtype=np.float64)
    if not np.isfinite(w.sum()) and not np.all(np.isfinite(w)):  # a finite sum: every entry is finite
        raise InputError("w must be finite (no NaN or inf)", field="w")
    return w
