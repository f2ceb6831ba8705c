"""The cutting-plane loop: Kelley's method (chapter Alg. 1.2), BMRM (Alg. 1.3), LS-BMRM (Alg. 1.4).

Each iteration calls the oracle at the query point (upper bound ``F(w) = lam Omega(w) + R(w)``),
adds the cut to the working set, solves the reduced problem in its dual (eq. 14) through the
reduced solver of the regulariser's ``kind`` (:mod:`cutplane.reduced.registry`; certified
lower bound ``F_t(w_t)``) and stops when the best
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
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from .bounds import clip_lower, update_lower
from .checkpoint import Checkpointer, EngineState
from .cuts import Cut, slope_dot
from .exceptions import ConvergenceWarning, InexactCutWarning, InputError
from .executors.base import ExecutorError
from .executors.mirror import combination_query, query_of
from .fingerprint import fingerprint
from .interrupt import InterruptGuard, raised_by_interrupt
from .nslack import NSLACK, NSLACK_OPTIONS, minimize_nslack
from .progress import ProgressReporter, check_progress_scale, display_factor
from .protocols import (
    REGULARIZER_CAPABILITIES,
    REGULARIZER_METHODS,
    CachingOracle,
    Oracle,
    ReducedSolver,
    Regularizer,
    risk_floor,
)
from .reduced.registry import make_reduced_solver
from .result import FallbackRecord, History, IterationInfo, Result, gap_tolerance
from .rounded_cuts import ball_from_cut, ball_from_dual
from .steps import DirectStep, LineSearchStep, StepContext, StepOutcome
from .working_set import WorkingSet
from .working_set.memory_budget import bytes_after_add, fit_memory, slope_bytes

__all__ = [
    "minimize",
    "minimize_with_working_set",
    "METHODS",
    "MethodSpec",
    "method_names",
    "StepContext",
    "StepOutcome",
    "DirectStep",
    "LineSearchStep",
    "PRUNE_BATCH_DIVISOR",
]

logger = logging.getLogger("cutplane")

#: ``prune_after`` drops idle cuts once at least ``n_cuts // PRUNE_BATCH_DIVISOR`` qualify.
PRUNE_BATCH_DIVISOR = 16


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
    "ls-bmrm": MethodSpec(
        LineSearchStep, False, "BMRM with line search (LS-BMRM / OCAS), chapter Alg. 1.4", ("theta",)
    ),
    "kelley": MethodSpec(DirectStep, True, "Kelley's cutting plane over a simple set, chapter Alg. 1.2"),
}


def method_names(*, indicator=True) -> tuple[str, ...]:
    """Every ``method`` of :func:`minimize`: the step rules of :data:`METHODS` (without those that
    need an indicator set, Kelley's, when ``indicator`` is False) and the n-slack method
    (:mod:`cutplane.nslack`), which needs a norm regulariser."""
    names = tuple(name for name, spec in METHODS.items() if indicator or not spec.needs_indicator)
    return (*names, NSLACK)


def _positive(value, name, integer=False, allow_none=False):
    if value is None and allow_none:
        return None
    if not isinstance(value, bool):
        if integer and isinstance(value, numbers.Integral) and int(value) > 0:
            return int(value)
        if not integer and isinstance(value, numbers.Real) and np.isfinite(float(value)) and float(value) > 0:
            return float(value)
    what = "a positive integer" if integer else "a positive finite number"
    raise InputError(f"must be {what}, got {value!r}", field=name)


def _validate(oracle, regularizer, lam, method, eps, max_iter, time_limit, max_cuts, prune_after, w0):
    if method not in METHODS:
        accepted = ", ".join(sorted(method_names()))
        raise InputError(f"unknown method {method!r}; accepted: {accepted}", field="method")
    spec = METHODS[method]
    dim = oracle.dim if isinstance(oracle, Oracle) else None
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
        raise InputError(
            f"oracle must be callable with a positive integer attribute dim, got dim={dim!r}", field="oracle"
        )
    dim = int(dim)
    if not isinstance(regularizer, Regularizer):
        missing = [m for m in REGULARIZER_CAPABILITIES + REGULARIZER_METHODS if not hasattr(regularizer, m)]
        raise InputError(
            f"regularizer {regularizer!r} lacks {', '.join(sorted(missing))} (see "
            "cutplane.protocols.Regularizer; cutplane.regularizers.RegularizerBase gives the defaults)",
            field="regularizer",
        )
    if spec.needs_indicator and not regularizer.is_indicator:
        raise InputError(
            f"method {method!r} needs a simple set X as regularizer (Simplex(dim) or Box(lower, "
            f"upper)), got {regularizer!r}",
            field="regularizer",
        )
    rdim = regularizer.dim
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
        w0 = regularizer.initial_point(dim)
    w0 = np.array(w0, dtype=np.float64, copy=True)
    if w0.shape != (dim,):
        raise InputError(f"w0 has shape {w0.shape}, expected ({dim},)", field="w0")
    if not np.all(np.isfinite(w0)):
        raise InputError("w0 has NaN or infinite entries", field="w0")
    if regularizer.is_indicator and not regularizer.contains(w0):
        raise InputError(f"w0 is not in the feasible set {regularizer!r}", field="w0")
    return spec, dim, lam, eps, max_iter, time_limit, max_cuts, prune_after, w0


def _check_oracle_result(res, dim, w):
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


def _zero_like_slope(slope, dim):
    return sp.csr_matrix((1, dim)) if sp.issparse(slope) else np.zeros(dim)


def minimize(
    oracle,
    regularizer,
    lam,
    *,
    method="bmrm",
    eps=1e-3,
    max_iter=1000,
    time_limit=None,
    max_cuts=None,
    prune_after=50,
    w0=None,
    solver=None,
    callback=None,
    verbose=False,
    progress_scale="F",
    risk_lower_bound=None,
    theta=None,
    checkpoint=None,
    checkpoint_every=10,
    resume=False,
    memory_limit=None,
    warm_start=None,
    rtol=None,
    cache_steps=0,
    options=None,
) -> Result:
    """Minimise ``F(w) = lam * Omega(w) + R(w)`` to a certified gap ``eps``.

    Parameters
    ----------
    oracle : Oracle
        Has ``dim`` and ``__call__(w) -> OracleResult(value, Cut(slope, offset), exact, argmax)``.
        ``w`` is passed read-only (it may become the best point without a copy): an oracle
        that writes into it gets numpy's "assignment destination is read-only" error. An oracle
        with an executor (``oracle.executor.n_workers``) also sets the threads of the engine's
        own products over the working set: a serial oracle runs on one core (without an
        executor: up to 4 threads above a few million stored nonzeros).
    regularizer : Regularizer
        ``L2()``, ``L1()``, or for Kelley an indicator set ``Simplex(dim)`` / ``Box(lower, upper)``.
    lam : float
        Regularisation constant (> 0); irrelevant for indicator sets.
    method : {"bmrm", "ls-bmrm", "kelley", "n-slack"}
        ``"kelley"`` requires an indicator-set regulariser (chapter Alg. 1.2). ``"ls-bmrm"``
        (chapter Alg. 1.4) line-searches ``F`` from the best point through each reduced
        minimiser (exactly for ``L2`` with an oracle offering ``line_search_pieces``, else by a
        1-D search on oracle values) and calls the oracle at ``(1 - theta) w^b + theta w_t``.
        ``"n-slack"`` (:mod:`cutplane.nslack`) keeps a working set per example and raises the
        dual by block-coordinate steps; it needs ``L2`` and an oracle with one cut per example
        (:class:`~cutplane.protocols.ExampleCutsOracle`), and takes its own ``options``; the
        working-set options (``max_cuts``, ``prune_after``, ``memory_limit``, ``solver``),
        ``w0``, checkpoints, warm starts and ``cache_steps`` do not apply to it (refused when
        set; ``prune_after`` is ignored: the option ``max_idle`` drops idle cuts).
    eps : float
        Absolute gap on the scale of ``F``.
    rtol : float, optional
        Relative gap, ``0 < rtol < 1``: the run also stops once the certified gap is at most
        ``rtol * |F(w_best)|`` (the gap it stops at is ``max(eps, rtol * |F(w_best)|)``,
        :attr:`Result.tolerance`). None (default): ``eps`` alone.
    cache_steps : int, default=0
        With a :class:`~cutplane.protocols.CachingOracle` (the structured hinge oracles keep
        their recent argmax outputs): after each exact call and reduced solve, up to this many
        cuts from the oracle's cache (:meth:`~cutplane.protocols.CachingOracle.cached_cut` at
        the reduced minimiser), each added and re-solved while it is violated by more than
        ``eps`` (its value at the minimiser exceeds the model's, evaluated on the cuts with a
        positive dual, which attain the model's maximum there, by more than ``eps``). They are
        valid minorants of ``R``: the lower bound stays certified; upper bounds come from exact
        calls only. 0: off. The working-set budgets (``max_cuts``, ``memory_limit``) apply at
        iteration boundaries. ``Result.n_cached_cuts`` and ``Result.cache_time_s`` say what it did.
    options : dict, optional
        Options of ``method="n-slack"``: the keywords of :func:`cutplane.nslack.minimize_nslack`
        named in :data:`cutplane.nslack.NSLACK_OPTIONS` (``planes``, ``max_idle``,
        ``max_sweeps``, ``sweep_time_ratio``, ``inner_gap``, ``seed``, ``sweep_threads``).
        Refused with the other methods.
    max_iter : int
        Oracle-call budget, counted over resumed runs too.
    time_limit : float, optional
        Seconds for this call; checked before each oracle call.
    max_cuts : int, optional
        Working-set budget (>= 2); the oldest cuts are aggregated (limited-memory BMRM). The
        floor cut ``R >= risk_lower_bound``, when added, is never aggregated or pruned away (it
        is what bounds the reduced problem of ``L1``) and takes one of the slots; ``L1`` needs
        about ``dim + 3`` cuts (a basis of the reduced LP, the floor cut, the new cut) to keep
        converging, a smaller budget stays certified but may stall.
    prune_after : int or None
        Drop cuts whose dual stayed zero this many consecutive iterations (None: never), at
        the ends of iterations where the lower bound rose strictly since the last drop: dropping
        at a constant bound can cycle (Kelley's LP for ``L1`` re-adds the cuts it dropped and
        stalls), dropping only after a strict rise keeps the method convergent (Eaves and
        Zangwill, 1971). Cuts are dropped in batches, once at least ``n_cuts //``
        :data:`PRUNE_BATCH_DIVISOR` of them qualify (one is enough below that many cuts): each
        drop moves the stored slopes and the Gram matrix, a pass over the working set.
    w0 : ndarray of shape (dim,), optional
        Starting point (default: the regulariser's ``initial_point``, zeros for norms).
    solver : None, str, list of str or ReducedSolver
        Reduced-problem backend(s) in preference order (None: registry default) for the
        reduced solver the registry (:mod:`cutplane.reduced.registry`) gives the regulariser's
        ``kind``; or a :class:`~cutplane.protocols.ReducedSolver` object, used as given.
    callback : callable, optional
        ``callback(IterationInfo)``; returning True stops with status ``"callback"``.
    verbose : bool
        Show a tqdm counter (iterations, elapsed time, bounds, gap and ``eps``); each iteration
        is logged at INFO on the ``"cutplane"`` logger anyway (:mod:`cutplane.progress`).
    progress_scale : {"F", "F/lam"}, default="F"
        The scale of the bounds, gap and ``eps`` that the bar shows and the log records:
        ``"F"``, or ``"F/lam"``, that is ``Omega(w) + C * R(w)`` with ``C = 1 / lam``, the scale
        on which the estimators of ``problems`` state ``F`` and ``eps``. The result is on
        ``F`` either way.
    risk_lower_bound : float, optional
        A known lower bound on ``R`` (0 for non-negative losses), added as the cut
        ``R(w) >= risk_lower_bound``; needed by ``L1`` while the model is still unbounded.
        Defaults to the oracle's ``risk_lower_bound`` attribute when it has one; that default
        is not added for a regulariser whose ``risk_floor_cut`` is False (``L2``: it slowed
        BMRM down), a value passed here always is.
    theta : float, optional
        LS-BMRM only: the cutting point's weight on the reduced minimiser, ``0 < theta <= 1``
        (default 0.1, chapter sec. 1.2.2).
    checkpoint : str or os.PathLike, optional
        File where the run's state is saved (:mod:`cutplane.checkpoint`): every
        ``checkpoint_every`` iterations, when the run stops before convergence (``max_iter``,
        ``time_limit``, callback) and on Ctrl-C or SIGTERM, which then return status
        ``"interrupted"`` with the best point so far. While it runs in the main thread with a
        checkpoint, SIGTERM (and SIGINT under Python's default handler) are caught and the
        previous handlers restored on return.
    checkpoint_every : int, default=10
        Iterations between two saves.
    resume : bool, default=False
        Continue from ``checkpoint`` when that file exists (``w0`` is then ignored); the file is
        verified (checksum, version, shapes, dim, and a fingerprint of the oracle's data and the
        regulariser, ``lam``, ``method`` and ``theta``) and refused with
        :class:`~cutplane.exceptions.ModelFormatError` if anything is off.
    memory_limit : int, optional
        Bytes for the working set (slopes and Gram blocks, :attr:`WorkingSet.nbytes`): before
        each oracle call the oldest cuts are aggregated until the next cut fits, so
        ``peak_working_set_bytes`` stays within ``memory_limit`` plus one cut (a limit below
        one aggregated cut and a new one is logged and exceeded by that much).
    warm_start : WarmStart, optional
        Start from the cuts of another run (:class:`cutplane.path.WarmStart`): the risk ``R``
        does not depend on ``lam``, so every cut of its working set is a valid cut at this
        ``lam`` and the first reduced solve already gives a certified lower bound here. The
        engine takes ownership of the working set (no copy: it is extended, pruned and
        aggregated in place) and starts at ``warm_start.w`` (default: ``w0``, or the
        regulariser's initial point), whose ``F`` at this ``lam`` is evaluated by the first
        oracle call. Everything tied to ``lam`` starts afresh: the running maximum of the
        lower bounds, the best upper bound, the idle counts used by pruning; the recorded
        duals are kept only as the reduced solver's warm start (its bound is recomputed from
        its own duals, so a stale warm start can only slow it down). The risk-floor cut is
        not added twice. ``None`` (default): an empty working set. Refused together with
        ``resume=True`` (a checkpoint holds its own working set) and together with both
        ``w0`` and ``warm_start.w``.

    Returns
    -------
    Result
    """
    return _minimize(
        oracle,
        regularizer,
        lam,
        method=method,
        eps=eps,
        max_iter=max_iter,
        time_limit=time_limit,
        max_cuts=max_cuts,
        prune_after=prune_after,
        w0=w0,
        solver=solver,
        callback=callback,
        verbose=verbose,
        progress_scale=progress_scale,
        risk_lower_bound=risk_lower_bound,
        theta=theta,
        checkpoint=checkpoint,
        checkpoint_every=checkpoint_every,
        resume=resume,
        memory_limit=memory_limit,
        warm_start=warm_start,
        rtol=rtol,
        cache_steps=cache_steps,
        options=options,
        stacklevel=3,
    )[0]


def minimize_with_working_set(oracle, regularizer, lam, **kwargs) -> tuple[Result, WorkingSet]:
    """:func:`minimize`, also returning the final working set (for the next warm start).

    The keywords are those of :func:`minimize`. The working set is the engine's own (not a
    copy): its cuts are cuts of ``R``, valid at every ``lam``; pass it on in a
    :class:`cutplane.path.WarmStart`. :func:`cutplane.path.regularization_path` is the loop
    built on it.

    Returns
    -------
    result : Result
    working_set : WorkingSet
    """
    if kwargs.get("method") == NSLACK:
        raise InputError(
            "method 'n-slack' keeps per-example working sets, which do not warm start another run: "
            "use minimize(..., method='n-slack')",
            field="method",
        )
    return _minimize(oracle, regularizer, lam, stacklevel=3, **kwargs)


def _check_warm_start(warm_start, dim, groups, w0, resume):
    """Validate ``warm_start`` against the problem; return its working set and start point."""
    if not (hasattr(warm_start, "working_set") and hasattr(warm_start, "w")):  # cutplane.path.WarmStart (duck-typed:
        # cutplane.path imports this module)
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


def _minimize(
    oracle,
    regularizer,
    lam,
    *,
    method="bmrm",
    eps=1e-3,
    max_iter=1000,
    time_limit=None,
    max_cuts=None,
    prune_after=50,
    w0=None,
    solver=None,
    callback=None,
    verbose=False,
    progress_scale="F",
    risk_lower_bound=None,
    theta=None,
    checkpoint=None,
    checkpoint_every=10,
    resume=False,
    memory_limit=None,
    warm_start=None,
    rtol=None,
    cache_steps=0,
    options=None,
    stacklevel=2,
):
    if method == NSLACK:
        unsupported = dict(
            max_cuts=max_cuts,
            w0=w0,
            solver=solver,
            risk_lower_bound=risk_lower_bound,
            theta=theta,
            checkpoint=checkpoint,
            memory_limit=memory_limit,
            warm_start=warm_start,
        )
        for name, value in unsupported.items():
            if value is not None:
                raise InputError("does not apply to method 'n-slack' (see cutplane.minimize)", field=name)
        if resume or cache_steps:
            raise InputError(
                "does not apply to method 'n-slack' (see cutplane.minimize)",
                field="resume" if resume else "cache_steps",
            )
        return _run_nslack(
            oracle,
            regularizer,
            lam,
            eps,
            max_iter,
            time_limit,
            rtol,
            callback,
            verbose,
            progress_scale,
            options,
            stacklevel,
        ), None
    if options:
        raise InputError(f"options apply to method 'n-slack' only, not {method!r}", field="options")
    t_call = time.perf_counter()
    warm_ws = None
    if warm_start is not None:
        dim0 = oracle.dim if isinstance(oracle, Oracle) else None
        groups0 = regularizer.groups if isinstance(regularizer, Regularizer) else None
        if isinstance(dim0, numbers.Integral) and not isinstance(dim0, bool):
            warm_ws, warm_w = _check_warm_start(warm_start, int(dim0), groups0, w0, resume)
            if warm_w is not None:
                w0 = warm_w
    spec, dim, lam, eps, max_iter, time_limit, max_cuts, prune_after, w = _validate(
        oracle, regularizer, lam, method, eps, max_iter, time_limit, max_cuts, prune_after, w0
    )
    checkpoint_every = _positive(checkpoint_every, "checkpoint_every", integer=True)
    rtol = _check_rtol(rtol)
    cache_steps = _check_cache_steps(cache_steps, oracle)
    memory_limit = _positive(memory_limit, "memory_limit", integer=True, allow_none=True)
    if resume and checkpoint is None:
        raise InputError("resume=True needs the checkpoint path to resume from", field="resume")
    if method == "kelley":
        lam = 1.0
    progress_scale = check_progress_scale(progress_scale)
    if risk_lower_bound is None and regularizer.risk_floor_cut:
        risk_lower_bound = risk_floor(oracle)
    if risk_lower_bound is not None and not np.isfinite(float(risk_lower_bound)):
        raise InputError(f"must be finite, got {risk_lower_bound!r}", field="risk_lower_bound")
    options = {}
    if theta is not None:
        if "theta" not in spec.options:
            raise InputError(f"theta applies to method 'ls-bmrm' only, not {method!r}", field="theta")
        options["theta"] = theta
    step = spec.step(**options)
    groups = regularizer.groups
    modulus = _rounding_modulus(regularizer)
    ckpt = None
    if checkpoint is not None:
        ckpt = Checkpointer(
            checkpoint,
            checkpoint_every,
            method,
            oracle,
            step,
            fingerprint(oracle, regularizer, lam, method, {k: getattr(step, k) for k in spec.options}),
        )
    st = ckpt.restore(dim, groups, step) if (ckpt is not None and resume) else None
    if st is None:
        w = _frozen(w)
        st = EngineState(
            WorkingSet(dim, groups=groups)
            if warm_ws is None
            else _adopt(warm_ws, max_cuts, memory_limit, groups, risk_lower_bound, modulus is not None),
            w,
            w,
        )
        st.peak_bytes = st.working_set.nbytes
    else:
        st.w = _frozen(st.w)
    reduced = solver if isinstance(solver, ReducedSolver) else make_reduced_solver(regularizer, solver)
    threads = _oracle_workers(oracle)
    reporter = ProgressReporter(verbose, method, scale=display_factor(progress_scale, lam), eps=eps)
    t_start = t_call - st.elapsed  # elapsed times count over resumed runs
    cpu_start = time.process_time() - _last_cpu_time(st.rows)
    solution, outcome, status, phase, n_start = None, None, "max_iter", "boundary", st.n_iter
    cut_bytes = 0
    query, row_ids, bytes_at_call = None, None, None  # the next point as a combination of cuts (executors)
    guard = InterruptGuard(enabled=ckpt is not None)
    with guard:
        try:
            while True:
                ws = st.working_set  # a memory budget may have rebuilt it
                ws.n_threads = threads
                if st.pending is None:
                    phase = "boundary"
                    guard.check()  # a signal a library swallowed ends the run here
                    if st.n_iter >= max_iter:
                        status = "max_iter"
                        break
                    if time_limit is not None and st.n_iter > n_start and time.perf_counter() - t_call >= time_limit:
                        status = "time_limit"
                        break
                    phase = "oracle"
                    bytes_at_call = _bytes_sent(oracle)
                    t0 = time.perf_counter()
                    try:
                        with combination_query(query if query is not None and query.w is st.w else None):
                            res = oracle(st.w)
                    except ExecutorError:  # the workers are gone: keep this boundary, then say so
                        if ckpt is not None:
                            with guard.critical():
                                ckpt.save(st, time.perf_counter() - t_start)
                        raise
                    t_oracle = time.perf_counter() - t0
                    value, cut, cut_exact = _check_oracle_result(res, dim, st.w)
                    with guard.critical():
                        first = st.n_iter == 0
                        st.n_calls += 1
                        st.oracle_time += t_oracle
                        if not cut_exact and st.exact:
                            warnings.warn(
                                "the oracle returned an inexact cut: the certificate is relative to the approximation",
                                InexactCutWarning,
                                stacklevel=stacklevel,
                            )
                        st.exact = st.exact and cut_exact
                        upper = lam * _regularizer_at(st, regularizer) + value
                        if upper < st.best_upper:
                            st.best_upper, st.best_w = upper, st.w  # read-only (_frozen): shared, not copied
                        if modulus is not None and ws.ball is None and not sp.issparse(cut.slope):
                            # before a reduced solve of this run: the region holding w* from this
                            # exact cut alone (rounded_cuts.ball_from_cut); later ones come from solves
                            ws.set_ball(ball_from_cut(cut.slope, cut.offset, st.best_upper, lam, regularizer, modulus))
                        ws.add(cut)
                        cut_bytes = slope_bytes(cut.slope)
                        if (
                            first
                            and risk_lower_bound is not None
                            and ws.max_constant_offset() < float(risk_lower_bound)
                        ):
                            ws.add(Cut(_zero_like_slope(cut.slope, dim), float(risk_lower_bound)))
                        st.peak_bytes = max(st.peak_bytes, ws.nbytes)
                        st.pending = (upper, t_oracle)
                it = st.n_iter
                upper, t_oracle = st.pending
                phase = "solve"
                t0 = time.perf_counter()
                solution = reduced.solve(ws, lam, warm_start=ws.duals)
                t_solve = time.perf_counter() - t0
                row_ids = ws.row_ids.copy()
                with guard.critical():
                    _adopt_solution(st, ws, solution, t_solve, it, lam, modulus)
                    st.pending, outcome, phase = None, None, "step"
                    st.rows.append(None)  # the row of this iteration, filled in below
                for _ in range(cache_steps):  # cuts from the oracle's cache (phase "step": an interrupt
                    # finishes the iteration at the latest reduced minimiser)
                    if st.best_upper - st.lower <= gap_tolerance(eps, rtol, st.best_upper):
                        break
                    t0 = time.perf_counter()
                    with combination_query(query_of(solution.w, solution, row_ids, ws, regularizer)):
                        cached = oracle.cached_cut(solution.w)
                    violation = float(cached.value) - _model_at_minimiser(ws, solution, regularizer, lam)
                    st.cache_time += time.perf_counter() - t0
                    if not violation > eps:
                        break
                    with guard.critical():
                        ws.add(cached.cut)
                        st.n_cached_cuts += 1
                        st.peak_bytes = max(st.peak_bytes, ws.nbytes)
                    t0 = time.perf_counter()
                    cache_solution = reduced.solve(ws, lam, warm_start=ws.duals)
                    t_cache_solve = time.perf_counter() - t0
                    row_ids = ws.row_ids.copy()
                    with guard.critical():
                        _adopt_solution(st, ws, cache_solution, t_cache_solve, it, lam, modulus)
                        t_solve += t_cache_solve
                        solution = cache_solution
                t_step = 0.0
                if st.best_upper - st.lower > gap_tolerance(eps, rtol, st.best_upper):
                    t0 = time.perf_counter()
                    outcome = step.next_query(
                        solution, StepContext(oracle, regularizer, lam, st.best_w, st.best_upper, it)
                    )
                    t_step = time.perf_counter() - t0
                with guard.critical():
                    clocks = (*_clocks(t_start, cpu_start), _bytes_since(oracle, bytes_at_call))
                    _finish_iteration(st, outcome, upper, t_oracle, t_solve, t_step, it, clocks)
                    phase = "callback"
                info = IterationInfo(
                    it,
                    upper,
                    st.best_upper,
                    st.lower,
                    st.best_upper - st.lower,
                    ws.n_cuts,
                    time.perf_counter() - t_start,
                    st.w,
                    lam,
                )
                reporter.update(info)
                if st.best_upper - st.lower <= gap_tolerance(eps, rtol, st.best_upper):
                    status = "converged"
                    break
                stop = callback is not None and callback(info)
                with guard.critical():
                    _to_boundary(st, outcome, prune_after, max_cuts, memory_limit, cut_bytes, groups, risk_lower_bound)
                    query = query_of(st.w, solution, row_ids, ws, regularizer)
                    phase = "boundary"
                    if ckpt is not None and len(st.rows) % ckpt.every == 0 and not stop:
                        ckpt.save(st, time.perf_counter() - t_start)
                if stop:
                    status = "callback"
                    break
        except (KeyboardInterrupt, SystemError) as exc:
            # a signal raised inside a C extension's callback (numba's dispatcher) comes back as a
            # SystemError caused by the KeyboardInterrupt: the same interrupt
            if isinstance(exc, SystemError) and not (guard.signal_received is not None and raised_by_interrupt(exc)):
                raise
            status = "interrupted"
            logger.warning(
                "interrupted at iteration %d: returning the best point so far%s",
                st.n_iter,
                "" if ckpt is None else f"; state saved to {ckpt.path}",
            )
            with guard.critical():
                if phase == "step" and solution is not None:  # the step did not finish (phase "step" comes
                    # after a solve): query the reduced minimiser (a BMRM step)
                    outcome = StepOutcome(solution.w)
                    clocks = (*_clocks(t_start, cpu_start), _bytes_since(oracle, bytes_at_call))
                    _finish_iteration(st, outcome, upper, t_oracle, t_solve, 0.0, it, clocks)
                    phase = "callback"
                if phase == "callback":
                    _to_boundary(st, outcome, prune_after, max_cuts, memory_limit, cut_bytes, groups, risk_lower_bound)
        finally:
            reporter.close(status)
        if ckpt is not None and status != "converged":  # not reached when an error propagates
            with guard.critical():
                ckpt.save(st, time.perf_counter() - t_start)

    if status in ("max_iter", "time_limit"):
        warnings.warn(
            f"{method} stopped ({status}) after {st.n_iter} iterations with gap "
            f"{st.best_upper - st.lower:.3g} > eps = {gap_tolerance(eps, rtol, st.best_upper):.3g}",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )
    history = History.from_rows(st.rows)
    return Result(
        w=np.array(st.best_w, dtype=np.float64),
        objective=float(st.best_upper),
        lower_bound=float(st.lower),
        gap=float(st.best_upper - st.lower),
        n_iter=len(st.rows),
        status=status,
        history=history,
        backend=st.backend,
        fallbacks=list(st.fallbacks),
        exact=st.exact,
        alpha=st.alpha,
        mu=st.mu,
        time_s=time.perf_counter() - t_start,
        oracle_time_s=st.oracle_time,
        solver_time_s=st.solver_time,
        peak_working_set_bytes=int(st.peak_bytes),
        method=method,
        eps=eps,
        rtol=rtol,
        n_cached_cuts=st.n_cached_cuts,
        cache_time_s=st.cache_time,
        n_oracle_calls=st.n_calls,
        n_line_searches=st.n_searches,
        step_time_s=0.0 if history.step_time is None else float(history.step_time.sum()),
    ), st.working_set


def _run_nslack(
    oracle, regularizer, lam, eps, max_iter, time_limit, rtol, callback, verbose, progress_scale, options, stacklevel
):
    """``method="n-slack"``: the common checks, then :func:`cutplane.nslack.minimize_nslack`."""
    if not isinstance(regularizer, Regularizer) or regularizer.kind != "l2":
        raise InputError(f"method 'n-slack' needs the L2 regulariser, got {regularizer!r}", field="regularizer")
    options = dict(options or {})
    unknown = sorted(set(options) - set(NSLACK_OPTIONS))
    if unknown:
        raise InputError(
            f"unknown option(s) {', '.join(unknown)}; method 'n-slack' takes {', '.join(NSLACK_OPTIONS)}",
            field="options",
        )
    return minimize_nslack(
        oracle,
        _positive(lam, "lam"),
        eps=_positive(eps, "eps"),
        max_iter=_positive(max_iter, "max_iter", integer=True),
        time_limit=_positive(time_limit, "time_limit", allow_none=True),
        rtol=_check_rtol(rtol),
        callback=callback,
        verbose=verbose,
        progress_scale=check_progress_scale(progress_scale),
        stacklevel=stacklevel + 1,
        **options,
    )


def _adopt(ws, max_cuts, memory_limit, groups, floor, rounding):
    """A warm start's working set, made ready for a run at a new ``lam``.

    The idle counts (pruning) were counted at the previous ``lam`` and start again from zero;
    the recorded duals stay as the reduced solver's warm start. The budgets of this run apply
    from the start (aggregation keeps every cut a minorant of ``R``, and the floor cut ``R >= floor``).
    Cuts rounded to float32 for the previous problem are minorants only near its optimum: with
    ``rounding`` (a strongly convex regulariser) their offsets are made valid again on this run's
    first ball (``WorkingSet.forget_ball``), otherwise they are dropped.
    """
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


def _rounding_modulus(regularizer) -> float | None:
    """The regulariser's ``strong_convexity`` when it is a positive finite number, else None (the
    working set then keeps every cut exact: :mod:`cutplane.rounded_cuts`)."""
    mu = getattr(regularizer, "strong_convexity", None)
    if not isinstance(mu, numbers.Real) or isinstance(mu, bool):
        return None
    value = float(mu)
    return value if np.isfinite(value) and value > 0 else None


def _adopt_solution(st, ws, solution, t_solve, it, lam, modulus):
    """Fold a reduced solve into the state: its time, failed backends, the lower bound (running
    maximum), the duals of the working set, and the backend / duals / group weights reported.
    With a strongly convex regulariser (``modulus``) and dense cuts, the solve's dual also names
    the ball that holds ``w*`` for the working set's float32 cuts (:func:`cutplane.rounded_cuts.ball_from_dual`;
    ``solution.combination`` says that ``w`` is the minimiser at the solve's ``alpha``)."""
    st.solver_time += t_solve
    st.fallbacks.extend(FallbackRecord(it, b, r) for b, r in solution.failures)
    st.lower = update_lower(st.lower, solution.lower_bound, st.best_upper, st.exact, it)
    ws.record_duals(solution.alpha)
    if (
        modulus is not None
        and ws.sparse is False
        and solution.combination is not None
        and np.isfinite(solution.lower_bound)
    ):
        ws.set_ball(ball_from_dual(solution.w, solution.lower_bound, st.best_upper, lam, modulus))
    st.backend, st.alpha, st.mu = solution.backend, np.asarray(solution.alpha), solution.mu
    if solution.regularizer_value is not None:
        st.known_omega = (solution.w, float(solution.regularizer_value))


def _oracle_workers(oracle):
    """The worker count of the oracle's executor (its ``executor.n_workers``), which the working
    set's products also use: one thread for a serial oracle; None (up to 4) for an oracle without
    an executor."""
    n = getattr(getattr(oracle, "executor", None), "n_workers", None)
    if isinstance(n, numbers.Integral) and not isinstance(n, bool) and int(n) >= 1:
        return int(n)
    return None


def _regularizer_at(st, regularizer) -> float:
    """``Omega(st.w)``: the reduced solve's value when ``st.w`` is its minimiser (the BMRM step
    queries it as it is: same array), else evaluated."""
    if st.known_omega is not None and st.known_omega[0] is st.w:
        return st.known_omega[1]
    return float(regularizer(st.w))


def _model_at_minimiser(ws, solution, regularizer, lam):
    """A lower estimate of ``R_t(w_t)``, the cutting-plane model at the reduced minimiser.

    The reduced solution's certified bound satisfies ``lower <= min F_t <= lam Omega(w_t) + R_t(w_t)``,
    so ``lower - lam Omega(w_t) <= R_t(w_t)`` whatever the solver's accuracy, with equality at the
    reduced optimum (for the dual solvers it is Fenchel-Young's equality: the ``alpha``-average of
    the cuts at ``w_t``, which the cuts with a positive dual attain). One evaluation of ``Omega``
    (none when the solve gave it: ``ReducedSolution.regularizer_value``) instead of a pass over the
    active cuts' slopes. Only the constraint cache's violation test reads it: a low estimate can add
    a cut that is not violated (every cached cut is valid), never skip one that is; no bound depends
    on it. When the bound is not finite the active cuts are evaluated.
    """
    if np.isfinite(solution.lower_bound):
        omega = solution.regularizer_value
        omega = float(regularizer(solution.w)) if omega is None else float(omega)
        return float(solution.lower_bound) - lam * omega
    active = np.flatnonzero(np.asarray(solution.alpha) > 0)
    return ws.model_value(solution.w, active if len(active) else None)


def _check_cache_steps(cache_steps, oracle):
    """``cache_steps``: an integer >= 0; > 0 needs a :class:`~cutplane.protocols.CachingOracle`."""
    if isinstance(cache_steps, bool) or not isinstance(cache_steps, numbers.Integral) or cache_steps < 0:
        raise InputError(f"must be an integer >= 0, got {cache_steps!r}", field="cache_steps")
    if cache_steps and not isinstance(oracle, CachingOracle):
        raise InputError(
            f"cache_steps={cache_steps} needs an oracle with a cache (a cached_cut method); "
            f"{type(oracle).__name__} has none",
            field="cache_steps",
        )
    return int(cache_steps)


def _check_rtol(rtol):
    """``rtol``: None or a number in (0, 1)."""
    if rtol is None:
        return None
    if isinstance(rtol, bool) or not isinstance(rtol, numbers.Real) or not 0.0 < float(rtol) < 1.0:
        raise InputError(f"must be a number in (0, 1) or None, got {rtol!r}", field="rtol")
    return float(rtol)


def _last_cpu_time(rows) -> float:
    """CPU seconds recorded by the last history row (a resumed run counts on from it); 0 if none."""
    if rows and len(rows[-1]) >= 12 and np.isfinite(rows[-1][11]):
        return float(rows[-1][11])
    return 0.0


def _clocks(t_start, cpu_start):
    """``(wall, cpu)`` seconds since the run started (the history's clock columns)."""
    return time.perf_counter() - t_start, time.process_time() - cpu_start


def _bytes_sent(oracle):
    """The ``bytes_sent`` counter of the oracle's executor (:mod:`cutplane.executors`), or None."""
    n = getattr(getattr(oracle, "executor", None), "bytes_sent", None)
    return n if isinstance(n, numbers.Integral) and not isinstance(n, bool) else None


def _bytes_since(oracle, start):
    """Bytes the oracle's executor sent since its counter read ``start`` (NaN when unknown: no
    counter, or an iteration resumed from a checkpoint after its oracle call)."""
    now = _bytes_sent(oracle)
    return float(now - start) if now is not None and start is not None else np.nan


def _finish_iteration(st, outcome, upper, t_oracle, t_solve, t_step, it, clocks):
    """Fold the step's line-search point into the bounds and write the iteration's history row
    (``clocks``: wall and CPU seconds since the run started, bytes sent by the executor)."""
    if outcome is not None:
        st.n_calls += outcome.oracle_calls
        st.n_searches += int(outcome.line_search)
        if outcome.candidate is not None and outcome.candidate_value < st.best_upper:
            st.best_upper = float(outcome.candidate_value)
            st.best_w = np.array(outcome.candidate, dtype=np.float64)
            st.lower = clip_lower(st.lower, st.best_upper, st.exact, it)
    st.rows[-1] = (
        upper,
        st.best_upper,
        st.lower,
        st.best_upper - st.lower,
        t_oracle,
        t_solve,
        st.working_set.n_cuts,
        t_step,
        np.nan if outcome is None or outcome.candidate is None else outcome.candidate_value,
        np.nan if outcome is None else outcome.step_length,
        *clocks,
    )


def _to_boundary(st, outcome, prune_after, max_cuts, memory_limit, cut_bytes, groups, floor):
    """End of an iteration: prune, aggregate under the budgets, move to the next query point.

    ``floor`` is the run's ``risk_lower_bound`` (None if no floor cut was added): pruning and
    aggregation keep the floor cut, which is what bounds the reduced problem of ``L1``.
    """
    if prune_after is not None and st.lower > st.lower_at_prune:  # only after a strict rise (see minimize)
        ws = st.working_set
        if np.count_nonzero(ws.idle_counts >= prune_after) >= max(1, ws.n_cuts // PRUNE_BATCH_DIVISOR):
            ws.prune(prune_after, floor=floor)
            st.lower_at_prune = st.lower
    if max_cuts is not None:
        st.working_set.aggregate(max_cuts - 1, floor=floor)
    if memory_limit is not None:
        st.working_set = fit_memory(st.working_set, memory_limit, cut_bytes, groups=groups, floor=floor)
        need = bytes_after_add(st.working_set, cut_bytes)
        if need > memory_limit and not st.memory_warned:
            st.memory_warned = True
            logger.warning(
                "memory_limit=%d bytes is below one aggregated cut and a new one (%d bytes)", memory_limit, need
            )
    st.w = _frozen(outcome.query)


def _frozen(w) -> np.ndarray:
    """``w`` as a read-only float64 array owning its data (copied only if it is a view or not
    float64). The query point is handed to the oracle and, when it improves the upper bound,
    kept as the best point without a copy (a pass over 10^7 coordinates per iteration on the
    structured tasks); read-only, an oracle or a step that wrote into it would fail loudly
    instead of silently changing the best point."""
    a = np.asarray(w, dtype=np.float64)
    if a.base is not None or not a.flags.owndata or not a.flags.c_contiguous:
        a = a.copy()
    a.flags.writeable = False
    return a
