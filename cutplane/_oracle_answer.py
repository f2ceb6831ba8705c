"""The engine's check of an oracle's answer (:func:`cutplane.engine.minimize`).

:func:`_check_oracle_result` unpacks ``OracleResult(value, Cut(slope, offset), exact, ...)``
and refuses, with one :class:`~cutplane.exceptions.InputError` naming the oracle, an answer
that is not of that form, a non-finite value, a slope of the wrong shape, or a cut above the
risk at the query point (the offset must be ``R(w) - <slope, w>``).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .cuts import Cut, slope_dot
from .exceptions import InputError



def _check_oracle_result(res, dim, w):
    """Unpack and sanity-check an oracle's answer: (value, cut, exact)."""
    try:
        value, cut = res[0], res[1]
        exact = bool(res[2]) if len(res) > 2 else True
        slope, offset = cut
    except (TypeError, ValueError, IndexError):
        raise InputError(f"oracle must return OracleResult(value, Cut(slope, offset), ...), got {type(res).__name__}",
                         field="oracle") from None
    try:
        value = float(value)
        offset = float(offset)
    except (TypeError, ValueError):
        raise InputError("oracle value and cut offset must be real numbers", field="oracle") from None
    if not np.isfinite(value):
        raise InputError(f"oracle returned a non-finite risk value {value}", field="oracle")
    shape = slope.shape if (sp.issparse(slope) or isinstance(slope, np.ndarray)) else np.shape(slope)
    if tuple(shape) not in ((dim,), (1, dim)):
        raise InputError(f"cut slope has shape {tuple(shape)}, expected ({dim},) or (1, {dim})", field="oracle")
    with np.errstate(invalid="ignore", over="ignore"):
        at_w = slope_dot(slope, w) + offset
    if not np.isfinite(at_w):
        raise InputError("cut slope or offset is not finite", field="oracle")
    if at_w > value + 1e-7 * (1.0 + abs(value)):
        raise InputError(f"the cut is above the risk at the query point ({at_w:.10g} > R(w) = {value:.10g}): "
                         "offset must be R(w) - <slope, w>", field="oracle")
    return value, Cut(slope, offset), exact
