"""Input checks shared by the proximity operators and the projections: finite vectors, real scalars."""

from __future__ import annotations

import numbers

import numpy as np

from cutplane.exceptions import InputError

__all__ = ["as_vector", "as_scalar"]


def as_vector(v, field: str = "v") -> np.ndarray:
    """``v`` as a finite float64 array of shape (n,); InputError otherwise."""
    arr = np.asarray(v)
    if arr.ndim != 1:
        raise InputError(f"expected a 1-D array of shape (n,), got shape {arr.shape}", field=field)
    if arr.dtype == np.bool_ or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InputError(f"expected real numbers, got dtype {arr.dtype}", field=field)
    arr = arr.astype(np.float64, copy=False)
    if not np.all(np.isfinite(arr)):
        raise InputError("contains NaN or infinite entries", field=field)
    return arr


def as_scalar(x, field: str, *, allow_inf: bool = False, low: float = 0.0, strict: bool = False) -> float:
    """A real scalar ``>= low`` (``> low`` when strict), finite unless ``allow_inf``."""
    if isinstance(x, (bool, np.bool_)) or np.ndim(x) != 0 or not isinstance(np.asarray(x).item(), numbers.Real):
        raise InputError(f"expected a real scalar, got {x!r}", field=field)
    val = float(x)
    if np.isnan(val) or (np.isinf(val) and not (allow_inf and val > 0)):
        raise InputError(f"must be finite{' or +inf' if allow_inf else ''}, got {val}", field=field)
    if val < low or (strict and val == low):
        raise InputError(f"must be {'>' if strict else '>='} {low}, got {val}", field=field)
    return val
