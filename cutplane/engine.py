"""The cutting-plane loop: Kelley's method (chapter Alg. 1.2), BMRM (Alg. 1.3), LS-BMRM (Alg. 1.4).

Each iteration calls the oracle at the query point (upper bound ``F(w) = lam Omega(w) + R(w)``),
adds the cut to the working set, solves the reduced problem in its dual (eq. 14) through the
regulariser's reduced solver (certified lower bound ``F_t(w_t)``) and stops when the best
upper bound minus the running maximum of the lower bounds is at most ``eps``. The next query
point comes from a per-method *step strategy* (:mod:`cutplane.steps`): the reduced minimiser
for BMRM and Kelley; for LS-BMRM a line search from the best point through the reduced
minimiser, whose point is an upper bound too, then the cutting point ``w^c``. The step runs
before the stopping test, so LS-BMRM stops on ``F(w^b) - F_t(w_t) <= eps`` as in Alg. 1.4.
"""
from __future__ import annotations

import logging
import numbers
import time
import warnings
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np
import scipy.sparse as sp

from .cuts import Cut, slope_dot
from .exceptions import ConvergenceWarning, InexactCutWarning, InputError
from .progress import ProgressReporter
from .result import FallbackRecord, History, IterationInfo, Result
from .steps import DirectStep, LineSearchStep, StepContext, StepOutcome
from .working_set import WorkingSet

__all__ = ["minimize", "METHODS", "MethodSpec", "StepContext", "StepOutcome", "DirectStep", "LineSearchStep"]

logger = logging.getLogger("cutplane")


@dataclass(frozen=True)
class MethodSpec:
    """A method of :func:`minimize`: its step strategy, what it requires, the options it takes.

    Attributes
    ----------
    step : callable
        Builds the step strategy from the method's options (keyword arguments).
    needs_indicator : bool
        The regulariser must be an indicator set (Kelley).
    description : str
    options : tuple of str
        Keyword options of :func:`minimize` passed to ``step`` (e.g. ``"theta"``).
    """

    step: Callable
    needs_indicator: bool = False
    description: str = ""
    options: tuple = ()


METHODS = {
    "bmrm": MethodSpec(DirectStep, False, "BMRM, chapter Alg. 1.3"),
    "ls-bmrm": MethodSpec(LineSearchStep, False, "BMRM with line search (LS-BMRM / OCAS), chapter Alg. 1.4",
                          ("theta",)),
    "kelley": MethodSpec(DirectStep, True, "Kelley's cutting plane over a simple set, chapter Alg. 1.2"),
}


def _positive(value, name, integer=False, allow_none=False):
    if value is None and allow_none:
        return None
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind) or not np.isfinite(value) or value <= 0:
        what = "a positive integer" if integer else "a positive finite number"
        raise InputError(f"must be {what}, got {value!r}", field=name)
    return int(value) if integer else float(value)


def _validate(oracle, regularizer, lam, method, eps, max_iter, time_limit, max_cuts, prune_after, w0):
    if method not in METHODS:
        raise InputError(f"unknown method {method!r}; accepted: {', '.join(sorted(METHODS))}", field="method")
    spec = METHODS[method]
    dim = getattr(oracle, "dim", None)
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1 or not callable(oracle):
        raise InputError(f"oracle must be callable with a positive integer attribute dim, got dim={dim!r}",
                         field="oracle")
    dim = int(dim)
    for name in ("conjugate", "grad_conjugate", "make_reduced_solver"):
        if not callable(getattr(regularizer, name, None)) or not callable(regularizer):
            raise InputError(f"regularizer {regularizer!r} lacks {name}() (see cutplane.regularizers)",
                             field="regularizer")
    if spec.needs_indicator and not getattr(regularizer, "is_indicator", False):
        raise InputError(f"method {method!r} needs a simple set X as regularizer (Simplex(dim) or Box(lower, "
                         f"upper)), got {regularizer!r}", field="regularizer")
    rdim = getattr(regularizer, "dim", None)
    if rdim is not None and rdim != dim:
        raise InputError(f"regularizer has dim {rdim}, oracle has dim {dim}", field="regularizer")
    lam = _positive(lam, "lam")
    eps = _positive(eps, "eps")
    max_iter = _positive(max_iter, "max_iter", integer=True)
    time_limit = _positive(time_limit, "time_limit", allow_none=True)
    max_cuts = _positive(max_cuts, "max_cuts", integer=True, allow_none=True)
    if max_cuts is not None and max_cuts < 2:
        raise InputError(f"must be >= 2 (the aggregated cut and the new one), got {max_cuts}", field="max_cuts")
    prune_after = _positive(prune_after, "prune_after", integer=True, allow_none=True)
    if w0 is None:
        init = getattr(regularizer, "initial_point", None)
        w0 = init(dim) if init is not None else np.zeros(dim)
    w0 = np.array(w0, dtype=np.float64, copy=True)
    if w0.shape != (dim,):
        raise InputError(f"w0 has shape {w0.shape}, expected ({dim},)", field="w0")
    if not np.all(np.isfinite(w0)):
        raise InputError("w0 has NaN or infinite entries", field="w0")
    if getattr(regularizer, "is_indicator", False) and not regularizer.contains(w0):
        raise InputError(f"w0 is not in the feasible set {regularizer!r}", field="w0")
    return spec, dim, lam, eps, max_iter, time_limit, max_cuts, prune_after, w0


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


def _zero_like_slope(slope, dim):
    return sp.csr_matrix((1, dim)) if sp.issparse(slope) else np.zeros(dim)


def minimize(oracle, regularizer, lam, *, method="bmrm", eps=1e-3, max_iter=1000, time_limit=None,
             max_cuts=None, prune_after=50, w0=None, solver=None, callback=None, verbose=False,
             risk_lower_bound=None, theta=None) -> Result:
    """Minimise ``F(w) = lam * Omega(w) + R(w)`` to a certified gap ``eps``.

    Parameters
    ----------
    oracle : Oracle
        Has ``dim`` and ``__call__(w) -> OracleResult(value, Cut(slope, offset), exact, argmax)``.
    regularizer : Regularizer
        ``L2()``, ``L1()``, or for Kelley an indicator set ``Simplex(dim)`` / ``Box(lower, upper)``.
    lam : float
        Regularisation constant (> 0); irrelevant for indicator sets.
    method : {"bmrm", "ls-bmrm", "kelley"}
        ``"kelley"`` requires an indicator-set regulariser (chapter Alg. 1.2). ``"ls-bmrm"``
        (chapter Alg. 1.4) line-searches ``F`` from the best point through each reduced
        minimiser (exactly for ``L2`` with an oracle offering ``line_search_pieces``, else by a
        1-D search on oracle values) and calls the oracle at ``(1 - theta) w^b + theta w_t``.
    eps : float
        Absolute gap on the scale of ``F``.
    max_iter : int
        Oracle-call budget.
    time_limit : float, optional
        Seconds; checked before each oracle call.
    max_cuts : int, optional
        Working-set budget (>= 2); the oldest cuts are aggregated (limited-memory BMRM).
    prune_after : int or None
        Drop cuts whose dual stayed zero this many consecutive iterations (None: never).
    w0 : ndarray of shape (dim,), optional
        Starting point (default: the regulariser's ``initial_point``, zeros for norms).
    solver : None, str or list of str
        Reduced-problem backend(s) in preference order (None: registry default).
    callback : callable, optional
        ``callback(IterationInfo)``; returning True stops with status ``"callback"``.
    verbose : bool
        Show a tqdm bar; each iteration is logged at INFO on the ``"cutplane"`` logger anyway.
    risk_lower_bound : float, optional
        A known lower bound on ``R`` (0 for non-negative losses), added as the cut
        ``R(w) >= risk_lower_bound``; needed by ``L1`` while the model is still unbounded.
        Defaults to the oracle's ``risk_lower_bound`` attribute when it has one.
    theta : float, optional
        LS-BMRM only: the cutting point's weight on the reduced minimiser, ``0 < theta <= 1``
        (default 0.1, chapter sec. 1.2.2).

    Returns
    -------
    Result
    """
    t_start = time.perf_counter()
    spec, dim, lam, eps, max_iter, time_limit, max_cuts, prune_after, w = _validate(
        oracle, regularizer, lam, method, eps, max_iter, time_limit, max_cuts, prune_after, w0)
    if method == "kelley":
        lam = 1.0
    if risk_lower_bound is None:
        risk_lower_bound = getattr(oracle, "risk_lower_bound", None)
    if risk_lower_bound is not None and not np.isfinite(float(risk_lower_bound)):
        raise InputError(f"must be finite, got {risk_lower_bound!r}", field="risk_lower_bound")
    options = {}
    if theta is not None:
        if "theta" not in spec.options:
            raise InputError(f"theta applies to method 'ls-bmrm' only, not {method!r}", field="theta")
        options["theta"] = theta
    step = spec.step(**options)
    working_set = WorkingSet(dim, groups=getattr(regularizer, "groups", None))
    reduced = regularizer.make_reduced_solver(solver)
    reporter = ProgressReporter(verbose, max_iter, method)

    best_w, best_upper, lower = w.copy(), np.inf, -np.inf
    rows, fallbacks, exact, peak = [], [], True, 0
    oracle_total = solver_total = 0.0
    n_calls = n_searches = 0
    solution, status, it = None, "max_iter", 0
    try:
        while it < max_iter:
            if time_limit is not None and it > 0 and time.perf_counter() - t_start >= time_limit:
                status = "time_limit"
                break
            it += 1
            t0 = time.perf_counter()
            res = oracle(w)
            n_calls += 1
            t_oracle = time.perf_counter() - t0
            oracle_total += t_oracle
            value, cut, cut_exact = _check_oracle_result(res, dim, w)
            if not cut_exact and exact:
                warnings.warn("the oracle returned an inexact cut: the certificate is relative to the "
                              "approximation", InexactCutWarning, stacklevel=2)
            exact = exact and cut_exact
            upper = lam * float(regularizer(w)) + value
            if upper < best_upper:
                best_upper, best_w = upper, w.copy()
            working_set.add(cut)
            if it == 1 and risk_lower_bound is not None:
                working_set.add(Cut(_zero_like_slope(cut.slope, dim), float(risk_lower_bound)))
            peak = max(peak, working_set.nbytes)

            t0 = time.perf_counter()
            solution = reduced.solve(working_set, lam, warm_start=working_set.duals)
            t_solve = time.perf_counter() - t0
            solver_total += t_solve
            fallbacks.extend(FallbackRecord(it, b, r) for b, r in solution.failures)
            lower = _update_lower(lower, solution.lower_bound, best_upper, exact, it)
            working_set.record_duals(solution.alpha)
            outcome, t_step = None, 0.0
            if best_upper - lower > eps:
                t0 = time.perf_counter()
                outcome = step.next_query(solution, StepContext(oracle, regularizer, lam, best_w, best_upper, it))
                t_step = time.perf_counter() - t0
                n_calls += outcome.oracle_calls
                n_searches += int(outcome.line_search)
                if outcome.candidate is not None and outcome.candidate_value < best_upper:
                    best_upper = float(outcome.candidate_value)
                    best_w = np.array(outcome.candidate, dtype=np.float64)
                    lower = _clip_lower(lower, best_upper, exact, it)
            gap = best_upper - lower
            rows.append((upper, best_upper, lower, gap, t_oracle, t_solve, working_set.n_cuts, t_step,
                         np.nan if outcome is None or outcome.candidate is None else outcome.candidate_value,
                         np.nan if outcome is None else outcome.step_length))
            info = IterationInfo(it, upper, best_upper, lower, gap, working_set.n_cuts,
                                 time.perf_counter() - t_start, w)
            reporter.update(info)
            if gap <= eps:
                status = "converged"
                break
            if callback is not None and callback(info):
                status = "callback"
                break
            if prune_after is not None:
                working_set.prune(prune_after)
            if max_cuts is not None:
                working_set.aggregate(max_cuts - 1)
            w = np.asarray(outcome.query, dtype=np.float64)
    except KeyboardInterrupt:
        status = "interrupted"
        logger.warning("interrupted at iteration %d: returning the best point so far", it)
    finally:
        reporter.close(status)

    if status in ("max_iter", "time_limit"):
        warnings.warn(f"{method} stopped ({status}) after {it} iterations with gap {best_upper - lower:.3g} "
                      f"> eps = {eps:.3g}", ConvergenceWarning, stacklevel=2)
    history = History.from_rows(rows)
    return Result(
        w=best_w, objective=float(best_upper), lower_bound=float(lower), gap=float(best_upper - lower),
        n_iter=len(rows), status=status, history=history,
        backend=None if solution is None else solution.backend, fallbacks=fallbacks, exact=exact,
        alpha=None if solution is None else np.asarray(solution.alpha),
        mu=None if solution is None else solution.mu,
        time_s=time.perf_counter() - t_start, oracle_time_s=oracle_total, solver_time_s=solver_total,
        peak_working_set_bytes=int(peak), method=method, eps=eps,
        n_oracle_calls=n_calls, n_line_searches=n_searches, step_time_s=float(history.step_time.sum()),
    )


def _clip_lower(lower, best_upper, exact, iteration):
    """After a line-search point lowered the best upper bound: keep ``lower <= best_upper``.

    By weak duality ``F(w) >= min F >= lower`` at every point, so only round-off may put the
    new best upper bound below the lower bound; the lower bound is then clipped to it (the same
    convention as :func:`_update_lower`: it moves by round-off only). More than round-off is a
    wrong cut: raised for exact cuts, logged and clipped for inexact ones.
    """
    if best_upper >= lower:
        return lower
    if lower - best_upper > 1e-6 * max(1.0, abs(best_upper)):
        msg = (f"iteration {iteration}: the line search found F = {best_upper:.12g} below the certified "
               f"lower bound {lower:.12g}; the oracle's cuts are not minorants of R")
        if exact:
            raise InputError(msg, field="oracle")
        logger.warning("%s; clipped (inexact cuts)", msg)
    return best_upper


def _update_lower(lower, candidate, best_upper, exact, iteration):
    """Running max of the reduced values, clipped at the best upper bound.

    A reduced value above the best upper bound by more than round-off means a cut was not a
    minorant of ``R``: with exact cuts that is an oracle error and raised; with inexact
    cuts it is logged and clipped (the certificate is relative to the approximation).
    """
    tol = 1e-6 * max(1.0, abs(best_upper))
    if candidate is None or not np.isfinite(candidate):
        return min(lower, best_upper)
    if candidate > best_upper + tol:
        msg = (f"iteration {iteration}: reduced-problem lower bound {candidate:.12g} exceeds the best upper "
               f"bound {best_upper:.12g}; the oracle's cuts are not minorants of R (wrong subgradient or "
               "offset, or a non-convex risk)")
        if exact:
            raise InputError(msg, field="oracle")
        logger.warning("%s; clipped (inexact cuts)", msg)
    # when a new best upper bound meets the lower bound, round-off can put the old lower bound
    # a few ulps above it: clip, so the gap is never negative (the bound moves by round-off only)
    return min(max(lower, candidate), best_upper)
