"""The inputs of a cutting-plane run, checked: the problem, the oracle's answers, a warm start.

Every check raises one :class:`~cutplane.exceptions.InputError` naming what is wrong, as early
as it can be known: the problem (oracle, regulariser, ``lam``, start point) before the first
oracle call, each oracle answer as it comes.
"""

from __future__ import annotations

import logging
import numbers

import numpy as np
import scipy.sparse as sp

from .cuts import Cut, slope_dot
from .exceptions import InputError
from .options import positive_number
from .protocols import REGULARIZER_CAPABILITIES, REGULARIZER_METHODS, Oracle, Regularizer
from .working_set import WorkingSet
from .working_set.memory_budget import fit_memory

__all__ = [
    "oracle_dim",
    "check_regularizer",
    "check_start",
    "check_oracle_result",
    "check_warm_start",
    "adopt_working_set",
    "rounding_modulus",
    "oracle_workers",
    "frozen",
    "zero_like_slope",
]

logger = logging.getLogger("cutplane")


def oracle_dim(oracle) -> int:
    """The oracle's ``dim``, a positive integer."""
    dim = oracle.dim if isinstance(oracle, Oracle) else None
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
        raise InputError(
            f"oracle must be callable with a positive integer attribute dim, got dim={dim!r}", field="oracle"
        )
    return int(dim)


def check_regularizer(regularizer, dim: int, *, method: str, needs_indicator: bool) -> None:
    """The regulariser has the protocol's methods, the method's kind of set and the oracle's dim."""
    if not isinstance(regularizer, Regularizer):
        missing = [m for m in REGULARIZER_CAPABILITIES + REGULARIZER_METHODS if not hasattr(regularizer, m)]
        raise InputError(
            f"regularizer {regularizer!r} lacks {', '.join(sorted(missing))} (see "
            "cutplane.protocols.Regularizer; cutplane.regularizers.RegularizerBase gives the defaults)",
            field="regularizer",
        )
    if needs_indicator and not regularizer.is_indicator:
        raise InputError(
            f"method {method!r} needs a simple set X as regularizer (Simplex(dim) or Box(lower, "
            f"upper)), got {regularizer!r}",
            field="regularizer",
        )
    rdim = regularizer.dim
    if rdim is not None and rdim != dim:
        raise InputError(f"regularizer has dim {rdim}, oracle has dim {dim}", field="regularizer")


def check_start(w0, regularizer, dim: int) -> np.ndarray:
    """The start point: ``w0`` (default the regulariser's ``initial_point``), finite, feasible.

    A read-only float64 array that owns its data is taken as it is: the engine never writes into
    its points, and nothing else can (a start point of the size of the model is then not held
    twice, as when a refit starts from the chosen point of a path). Any other ``w0`` is copied,
    so that the caller's array stays writable and unchanged.
    """
    if w0 is None:
        w0 = regularizer.initial_point(dim)
    given = w0 if isinstance(w0, np.ndarray) else None
    shared = (
        given is not None
        and given.dtype == np.float64
        and not given.flags.writeable
        and given.flags.owndata
        and given.flags.c_contiguous
    )
    w0 = given if shared else np.array(w0, dtype=np.float64, copy=True)
    if w0.shape != (dim,):
        raise InputError(f"w0 has shape {w0.shape}, expected ({dim},)", field="w0")
    if not np.all(np.isfinite(w0)):
        raise InputError("w0 has NaN or infinite entries", field="w0")
    if regularizer.is_indicator and not regularizer.contains(w0):
        raise InputError(f"w0 is not in the feasible set {regularizer!r}", field="w0")
    return w0


def check_lam(lam) -> float:
    """``lam``, a positive finite number."""
    return positive_number(lam, "lam")


def check_oracle_result(res, dim, w):
    """Unpack and sanity-check an oracle's answer: (value, cut, exact).

    Refuses, with one :class:`~cutplane.exceptions.InputError` naming the oracle, an answer
    that is not ``OracleResult(value, Cut(slope, offset), exact, ...)``, a non-finite value, a
    slope of the wrong shape, or a cut above the risk at the query point (the offset must be
    ``R(w) - <slope, w>``).
    """
    try:
        value, cut = res[0], res[1]
        exact = bool(res[2]) if len(res) > 2 else True
        slope, offset = cut
    except (TypeError, ValueError, IndexError):
        raise InputError(
            f"oracle must return OracleResult(value, Cut(slope, offset), ...), got {type(res).__name__}", field="oracle"
        ) from None
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
        raise InputError(
            f"the cut is above the risk at the query point ({at_w:.10g} > R(w) = {value:.10g}): "
            "offset must be R(w) - <slope, w>",
            field="oracle",
        )
    return value, Cut(slope, offset), exact


def zero_like_slope(slope, dim):
    """A zero slope of the same kind (sparse or dense) as ``slope``: the floor cut's."""
    return sp.csr_matrix((1, dim)) if sp.issparse(slope) else np.zeros(dim)


def check_warm_start(warm_start, dim, groups, w0, resume):
    """Validate ``warm_start`` against the problem; return its working set and start point."""
    if not (hasattr(warm_start, "working_set") and hasattr(warm_start, "w")):  # cutplane.path.WarmStart (duck-typed:
        # cutplane.path imports the engine)
        raise InputError(
            f"must be a cutplane.WarmStart(working_set, w=None), got {type(warm_start).__name__}", field="warm_start"
        )
    if resume:
        raise InputError(
            "warm_start and resume=True cannot be combined: a checkpoint holds its own working set "
            "(resume from the checkpoint alone, or warm start without resume)",
            field="warm_start",
        )
    ws = warm_start.working_set
    if not isinstance(ws, WorkingSet):
        raise InputError(f"working_set must be a WorkingSet, got {type(ws).__name__}", field="warm_start")
    if ws.dim != dim:
        raise InputError(f"working set has dim {ws.dim}, the oracle has dim {dim}", field="warm_start")
    if not ws.same_groups(groups):
        raise InputError("the working set's coordinate groups differ from the regulariser's groups", field="warm_start")
    w = warm_start.w
    if w is not None and w0 is not None:
        raise InputError("give the start point either as w0 or as warm_start.w, not both", field="w0")
    return ws, w


def adopt_working_set(ws, max_cuts, memory_limit, groups, floor, rounding):
    """A warm start's working set, made ready for a run at a new ``lam``.

    The idle counts (pruning) were counted at the previous ``lam`` and start again from zero;
    the recorded duals stay as the reduced solver's warm start. The budgets of this run apply
    from the start (aggregation keeps every cut a minorant of ``R``, and the floor cut ``R >= floor``).
    Cuts rounded to float32 for the previous problem are minorants only near its optimum: with
    ``rounding`` (a strongly convex regulariser) their offsets are made valid again on this run's
    first ball (``WorkingSet.forget_ball``), otherwise they are dropped. The working set holds
    the regulariser's group-id array itself from then on (``WorkingSet.share_groups``).
    """
    ws.share_groups(groups)
    if not rounding and ws.discard_rounded():
        logger.info("warm start: dropped the cuts rounded to float32 (no region from this regulariser holds them)")
    ws.set_duals(ws.duals, np.zeros(ws.n_cuts, dtype=np.int64))
    if max_cuts is not None:
        ws.aggregate(max_cuts - 1, floor=floor)
    if memory_limit is not None:
        ws = fit_memory(ws, memory_limit, 0, groups=groups, floor=floor)
    if rounding:  # last: a rebuild by the memory budget keeps the records, not the mark
        ws.forget_ball()
    return ws


def rounding_modulus(regularizer) -> float | None:
    """The regulariser's ``strong_convexity`` when it is a positive finite number, else None (the
    working set then keeps every cut exact: :mod:`cutplane.rounded_cuts`)."""
    mu = getattr(regularizer, "strong_convexity", None)
    if not isinstance(mu, numbers.Real) or isinstance(mu, bool):
        return None
    value = float(mu)
    return value if np.isfinite(value) and value > 0 else None


def oracle_workers(oracle):
    """The worker count of the oracle's executor (its ``executor.n_workers``), which the working
    set's products also use: one thread for a serial oracle; None (up to 4) for an oracle without
    an executor."""
    n = getattr(getattr(oracle, "executor", None), "n_workers", None)
    if isinstance(n, numbers.Integral) and not isinstance(n, bool) and int(n) >= 1:
        return int(n)
    return None


def frozen(w) -> np.ndarray:
    """``w`` as a read-only float64 array owning its data (copied only if it is a view or not
    float64). The query point is handed to the oracle and, when it improves the upper bound,
    kept as the best point without a copy (a pass over every coordinate per iteration avoided);
    read-only, an oracle or a step that wrote into it would fail loudly instead of silently
    changing the best point."""
    a = np.asarray(w, dtype=np.float64)
    if a.base is not None or not a.flags.owndata or not a.flags.c_contiguous:
        a = a.copy()
    a.flags.writeable = False
    return a
