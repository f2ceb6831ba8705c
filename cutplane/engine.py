"""The cutting-plane engine: the method registry, :func:`minimize`, and BMRM's loop as a state and a step.

Every method is an initial state and a step, run by one driver (:func:`cutplane.driver.drive`:
budgets, interruption, checkpoints, progress, history, result). BMRM (Franc, Sonnenburg and
Werner 2012, Alg. 1.3), LS-BMRM (Alg. 1.4) and Kelley's method (Alg. 1.2) share one step over
one working set of cuts (:class:`OneSlack`); they differ in where the next query point is
(:mod:`cutplane.steps`). The n-slack method keeps a working set per example
(:mod:`cutplane.nslack.loop`). One iteration of :class:`OneSlack`:

1. the oracle at the query point ``w_t``: ``R(w_t)`` and a subgradient, that is the upper bound
   ``F(w_t) = lam Omega(w_t) + R(w_t)`` and the cut ``R(w) >= <a_t, w> + b_t``, added to the
   working set (:meth:`OneSlack.call_oracle`);
2. the reduced problem ``min_w lam Omega(w) + max_i <a_i, w> + b_i`` solved in its dual by the
   reduced solver of the regulariser's ``kind`` (:mod:`cutplane.reduced.registry`): its
   minimiser and a certified lower bound (:meth:`OneSlack.solve`);
3. optionally cuts from the oracle's cache of recent outputs, while they are violated
   (:meth:`OneSlack.cache_round`);
4. the next query point from the method's step rule: the reduced minimiser (BMRM, Kelley), or a
   line search from the best point through it (LS-BMRM) (:meth:`OneSlack.next_query`);
5. the stopping test (the driver): best upper bound minus the running maximum of the lower
   bounds at most ``eps``.

The step runs before the stopping test, so LS-BMRM stops on ``F(w^b) - F_t(w_t) <= eps`` as in
Alg. 1.4. The executor mirror (the query point sent as a combination of cuts,
:mod:`cutplane.executors.mirror`), the float32 cuts' ball (:mod:`cutplane.rounded_cuts`) and the
working-set budgets (:meth:`OneSlack.boundary`) are named parts of the step.
"""

from __future__ import annotations

import logging
import numbers
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from .bounds import clip_lower, update_lower
from .checkpoint import Checkpointer, EngineState
from .cuts import Cut
from .driver import Budget, Clock, drive
from .exceptions import InexactCutWarning, InputError
from .executors.mirror import combination_query, query_of
from .fingerprint import fingerprint
from .interrupt import InterruptGuard
from .options import NSLACK, check_options, merge_options, options_doc
from .progress import ProgressReporter, check_progress_scale, display_factor
from .protocols import CachingOracle, ReducedSolver, risk_floor
from .reduced.registry import make_reduced_solver
from .result import FallbackRecord, HistoryRow, IterationInfo, Result
from .rounded_cuts import ball_from_cut, ball_from_dual
from .run_inputs import (
    adopt_working_set,
    check_lam,
    check_oracle_result,
    check_regularizer,
    check_start,
    check_warm_start,
    frozen,
    oracle_dim,
    oracle_workers,
    rounding_modulus,
    zero_like_slope,
)
from .steps import DirectStep, InOutStep, LineSearchStep, StepContext, StepOutcome
from .working_set import WorkingSet
from .working_set.memory_budget import bytes_after_add, fit_memory, slope_bytes

__all__ = [
    "minimize",
    "minimize_with_working_set",
    "METHODS",
    "MethodSpec",
    "Problem",
    "OneSlack",
    "method_names",
    "method_spec",
    "run_problem",
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
class Problem:
    """What a run minimises, and how it was called: ``F(w) = lam Omega(w) + R(w)``.

    ``w0``, ``warm_start`` and ``risk_lower_bound`` are the call's (None when not given);
    ``progress_scale`` is the scale of the progress display.
    """

    oracle: Any
    regularizer: Any
    lam: float
    w0: Any = None
    warm_start: Any = None
    risk_lower_bound: float | None = None
    progress_scale: str = "F"


@dataclass(frozen=True)
class MethodSpec:
    """A method of :func:`minimize`: how it starts, what it needs.

    Attributes
    ----------
    start : callable
        ``start(problem, options, clock, stacklevel) -> (run, checkpointer)``: the method's initial state
        (a run object that :func:`cutplane.driver.drive` steps) and its checkpointer, if any.
    description : str
    needs_indicator : bool
        The regulariser must be an indicator set (Kelley).
    warm_starts : bool
        Its working set can start another run (:func:`minimize_with_working_set`, the path).
    step : callable or None
        The step rule over one working set (:mod:`cutplane.steps`), built from the options
        named in ``step_options``.
    step_options : tuple of str
    """

    start: Callable
    description: str
    needs_indicator: bool = False
    warm_starts: bool = True
    step: Callable | None = None
    step_options: tuple = ()


def _start_nslack(problem, options, clock, stacklevel):
    from .nslack.loop import NSlack  # the n-slack method and its kernels load on first use

    return NSlack.start(problem, options, clock), None


def _start_one_slack(problem, options, clock, stacklevel):
    return OneSlack.start(problem, options, clock, stacklevel)


METHODS = {
    "bmrm": MethodSpec(_start_one_slack, "BMRM, Franc et al. 2012 Alg. 1.3", step=DirectStep),
    "ls-bmrm": MethodSpec(
        _start_one_slack,
        "BMRM with line search (LS-BMRM / OCAS), Franc et al. 2012 Alg. 1.4",
        step=LineSearchStep,
        step_options=("theta",),
    ),
    "in-out": MethodSpec(
        _start_one_slack,
        "BMRM with in-out query points (Wentges 1997; Ben-Ameur and Neto 2007)",
        step=InOutStep,
        step_options=("theta", "direct_every"),
    ),
    "kelley": MethodSpec(
        _start_one_slack,
        "Kelley's cutting plane over a simple set, Franc et al. 2012 Alg. 1.2",
        needs_indicator=True,
        step=DirectStep,
    ),
    NSLACK: MethodSpec(
        _start_nslack, "a working set per example, block-coordinate dual steps (n-slack)", warm_starts=False
    ),
}


def method_spec(name) -> MethodSpec:
    """The registry's entry of ``name``, or :class:`~cutplane.exceptions.InputError` naming the methods."""
    spec = METHODS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise InputError(f"unknown method {name!r}; accepted: {', '.join(sorted(method_names()))}", field="method")
    return spec


def method_names(*, indicator=True) -> tuple[str, ...]:
    """Every ``method`` of :func:`minimize` (without those that need an indicator set, Kelley's,
    when ``indicator`` is False)."""
    return tuple(name for name, spec in METHODS.items() if indicator or not spec.needs_indicator)


def minimize(
    oracle,
    regularizer,
    lam,
    *,
    w0=None,
    warm_start=None,
    callback=None,
    risk_lower_bound=None,
    progress_scale="F",
    options=None,
    **engine_options,
) -> Result:
    return run_problem(
        Problem(oracle, regularizer, lam, w0, warm_start, risk_lower_bound, progress_scale),
        merge_options(options, engine_options, owner="minimize"),
        callback=callback,
        stacklevel=4,
    )[0]


minimize.__doc__ = f"""Minimise ``F(w) = lam * Omega(w) + R(w)`` to a certified gap ``eps``.

    Parameters
    ----------
    oracle : Oracle
        Has ``dim`` and ``__call__(w) -> OracleResult(value, Cut(slope, offset), exact, argmax)``.
        ``w`` is passed read-only (it may become the best point without a copy). An oracle with
        an executor (``oracle.executor.n_workers``) also sets the threads of the engine's own
        products over the working set. The n-slack method needs an
        :class:`~cutplane.protocols.ExampleCutsOracle` (one cut per example).
    regularizer : Regularizer
        ``L2()``, ``L1()``, ``MixedNorm``, or for Kelley an indicator set ``Simplex(dim)`` /
        ``Box(lower, upper)``; n-slack needs ``L2``.
    lam : float
        Regularisation constant (> 0); irrelevant for indicator sets.
    w0 : ndarray of shape (dim,), optional
        Starting point (default: the regulariser's ``initial_point``, zeros for norms).
    warm_start : WarmStart, optional
        Start from the cuts of another run (:class:`cutplane.path.WarmStart`): every cut of ``R``
        is valid at every ``lam``, so the first reduced solve already certifies a lower bound
        here. The engine takes ownership of the working set (extended, pruned and aggregated in
        place); everything tied to ``lam`` starts afresh. Refused with ``resume=True`` and with
        both ``w0`` and ``warm_start.w``.
    callback : callable, optional
        ``callback(IterationInfo)`` after each iteration; returning True stops with status
        ``"callback"``.
    risk_lower_bound : float, optional
        A known lower bound on ``R``, added as the cut ``R(w) >= risk_lower_bound`` (needed by
        ``L1`` while the model is unbounded). Default: the oracle's ``risk_lower_bound``, added
        only for a regulariser whose ``risk_floor_cut`` is True.
    progress_scale : {{"F", "F/lam"}}, default="F"
        The scale of the bounds the progress display and the log show (``"F/lam"``: ``Omega +
        C R`` with ``C = 1 / lam``); the result is on ``F`` either way.
    options : dict, optional
        More options, as a dict (merged with the keywords).
    **engine_options
        The engine's options (:data:`cutplane.options.OPTIONS`, each declared once with its
        check); an option of another method, given at a value other than its default, is
        refused, naming it. Details: the user guide's solvers page.

{options_doc("    " * 2)}

    Returns
    -------
    Result
        The best point, its objective, the certified lower bound and gap, the status and the
        per-iteration history.
    """


def minimize_with_working_set(oracle, regularizer, lam, **kwargs) -> tuple[Result, WorkingSet]:
    """:func:`minimize`, also returning the final working set (for the next warm start).

    The keywords are those of :func:`minimize`. The working set is the engine's own (not a
    copy): its cuts are cuts of ``R``, valid at every ``lam``; pass it on in a
    :class:`cutplane.path.WarmStart`. :func:`cutplane.path.regularization_path` is the loop
    built on it. Refused for a method without a shared working set (n-slack).

    Returns
    -------
    result : Result
    working_set : WorkingSet
    """
    call = {k: kwargs.pop(k) for k in ("w0", "warm_start", "risk_lower_bound", "progress_scale") if k in kwargs}
    callback = kwargs.pop("callback", None)
    options = merge_options(kwargs.pop("options", None), kwargs, owner="minimize_with_working_set")
    spec = method_spec(options.get("method", "bmrm"))
    if not spec.warm_starts:
        raise InputError(
            f"method {options['method']!r} keeps per-example working sets, which do not warm start another run: "
            f"use minimize(..., method={options['method']!r})",
            field="method",
        )
    result, ws = run_problem(Problem(oracle, regularizer, lam, **call), options, callback=callback, stacklevel=4)
    assert ws is not None  # a method that warm starts keeps one working set
    return result, ws


def run_problem(problem: Problem, given: dict, *, callback=None, stacklevel=3) -> tuple[Result, WorkingSet | None]:
    """One run: the options checked, the method started, the driver to the end."""
    clock = Clock()
    spec = method_spec(given.get("method", "bmrm"))
    options = check_options(given)
    run, checkpointer = spec.start(problem, options, clock, stacklevel)
    lam = run.lam
    reporter = ProgressReporter(
        options["verbose"],
        options["method"],
        scale=display_factor(check_progress_scale(problem.progress_scale), lam),
        eps=options["eps"],
        initial=run.n_iter,  # a resumed run counts on from its checkpoint's iterations
    )
    result = drive(
        run,
        method=options["method"],
        budget=run.budget,
        clock=clock,
        reporter=reporter,
        callback=callback,
        checkpointer=checkpointer,
        stacklevel=stacklevel,
    )
    return result, getattr(run.state, "working_set", None)


@dataclass
class _Iteration:
    """The figures of the running iteration (its history row, and an interrupt's ending)."""

    number: int
    upper: float
    oracle_time: float
    solver_time: float = 0.0


class OneSlack:
    """BMRM, LS-BMRM and Kelley's method: one working set, a reduced solve, a step rule.

    Built by :meth:`start` (the initial state); :meth:`step` is one iteration. The driver
    (:func:`cutplane.driver.drive`) sets :attr:`guard` (its signal guard: the state changes in
    its critical sections), calls :meth:`boundary` between iterations and :meth:`interrupted`
    when a signal cut an iteration short.
    """

    def __init__(self, problem, options, state, rule, reduced, *, floor, clock, stacklevel):
        self.oracle, self.regularizer, self.lam = problem.oracle, problem.regularizer, problem.lam
        self.options, self.state, self.rule, self.reduced = options, state, rule, reduced
        self.budget = Budget.of(options)
        self.floor, self.clock, self.stacklevel = floor, clock, stacklevel
        self.modulus = rounding_modulus(problem.regularizer)
        self.dim = state.working_set.dim
        self.threads = oracle_workers(self.oracle)
        self.guard = InterruptGuard(enabled=False)
        self.phase = "boundary"  # where an interrupt finds the iteration (see interrupted)
        self.solution: Any = None  # the last reduced solve's ReducedSolution
        self.outcome: Any = None  # the step rule's StepOutcome of this iteration
        self.current: Any = None  # this iteration's _Iteration
        self.row_ids: Any = None
        self.query = None  # the next point as a combination of cuts (the executor mirror)
        self.cut_bytes = 0
        self.bytes_at_call = None

    # ------------------------------------------------------------------ the initial state
    @classmethod
    def start(cls, problem: Problem, options: dict, clock: Clock, stacklevel: int):
        """The initial state of a run (a checkpoint's, with ``resume``), and its checkpointer."""
        oracle, regularizer, method = problem.oracle, problem.regularizer, options["method"]
        spec = METHODS[method]
        dim = oracle_dim(oracle)
        check_regularizer(regularizer, dim, method=method, needs_indicator=spec.needs_indicator)
        w0, warm_ws = problem.w0, None
        if problem.warm_start is not None:
            warm_ws, warm_w = check_warm_start(problem.warm_start, dim, regularizer.groups, w0, options["resume"])
            w0 = w0 if warm_w is None else warm_w
        lam = 1.0 if method == "kelley" else check_lam(problem.lam)
        w0 = check_start(w0, regularizer, dim)
        _check_run_options(options, oracle)
        floor = _floor(problem.risk_lower_bound, oracle, regularizer)
        assert spec.step is not None  # every method started here has a step rule
        rule = spec.step(**{k: options[k] for k in spec.step_options if options[k] is not None})
        checkpointer = None
        if options["checkpoint"] is not None:
            fp = fingerprint(oracle, regularizer, lam, method, {k: getattr(rule, k) for k in spec.step_options})
            checkpointer = Checkpointer(options["checkpoint"], options["checkpoint_every"], method, oracle, rule, fp)
        st = checkpointer.restore(dim, regularizer.groups, rule) if (checkpointer and options["resume"]) else None
        if st is None:
            ws = WorkingSet(dim, groups=regularizer.groups)
            if warm_ws is not None:
                rounding = rounding_modulus(regularizer) is not None
                max_cuts, memory_limit = options["max_cuts"], options["memory_limit"]
                ws = adopt_working_set(warm_ws, max_cuts, memory_limit, regularizer.groups, floor, rounding)
            w = frozen(w0)
            st = EngineState(ws, w, w)
            st.peak_bytes = ws.nbytes
        else:
            st.w = frozen(st.w)
            clock.resume(st.elapsed, _last_cpu_time(st.rows))
        solver = options["solver"]
        reduced = solver if isinstance(solver, ReducedSolver) else make_reduced_solver(regularizer, solver)
        run = cls(
            Problem(oracle, regularizer, lam),
            options,
            st,
            rule,
            reduced,
            floor=floor,
            clock=clock,
            stacklevel=stacklevel,
        )
        return run, checkpointer

    # ------------------------------------------------------------------ what the driver reads
    @property
    def n_iter(self) -> int:
        """Iterations so far (over resumed runs), a pending one included."""
        return self.state.n_iter

    @property
    def mid_iteration(self) -> bool:
        """A cut is in the working set whose reduced problem was not solved (a resumed run)."""
        return self.state.pending is not None

    @property
    def at_boundary(self) -> bool:
        """Between two iterations: the state is whole (a checkpoint may be written)."""
        return self.state.pending is None and self.phase in ("boundary", "oracle")

    # ------------------------------------------------------------------ one iteration (Alg. 1.3)
    def step(self) -> IterationInfo:
        """One iteration: oracle and cut, reduced solve, cached cuts, next query point, history row."""
        st = self.state
        if st.pending is None:
            self.call_oracle()  # 1. R(w_t) and a cut at the query point; F(w_t) an upper bound
        self.current = _Iteration(st.n_iter, *st.pending)
        self.phase = "solve"
        solution, seconds = self.solve()  # 2. the reduced problem: w_t and a certified lower bound
        with self.guard.critical():
            self.adopt(solution, seconds)
            st.pending, self.outcome, self.phase = None, None, "step"
            st.rows.append(None)  # this iteration's row, written by record()
        self.cache_round()  # 3. cuts from the oracle's cache while they are violated
        t_step = 0.0
        if not self.budget.reached(st.best_upper, st.lower):
            t0 = time.perf_counter()
            self.outcome = self.next_query()  # 4. the step rule: where the oracle is called next
            t_step = time.perf_counter() - t0
        with self.guard.critical():
            self.record(t_step)
            self.phase = "callback"
        gap = st.best_upper - st.lower
        n_cuts = st.working_set.n_cuts
        return IterationInfo(
            self.current.number,
            self.current.upper,
            st.best_upper,
            st.lower,
            gap,
            n_cuts,
            self.clock.elapsed(),
            st.w,
            self.lam,
        )

    # ------------------------------------------------------------------ its parts
    def call_oracle(self) -> None:
        """The oracle at ``state.w`` (sent as a combination of cuts when the executor mirrors
        them): the upper bound, the cut added (with the floor cut at the first call and the
        float32 cuts' first ball)."""
        st, ws = self.state, self.state.working_set
        ws.n_threads = self.threads
        self.phase = "oracle"
        self.bytes_at_call = _bytes_sent(self.oracle)
        t0 = time.perf_counter()
        with combination_query(self.query if self.query is not None and self.query.w is st.w else None):
            res = self.oracle(st.w)
        t_oracle = time.perf_counter() - t0
        value, cut, cut_exact = check_oracle_result(res, self.dim, st.w)
        with self.guard.critical():
            first = st.n_iter == 0
            st.n_calls += 1
            st.oracle_time += t_oracle
            if not cut_exact and st.exact:
                warnings.warn(
                    "the oracle returned an inexact cut: the certificate is relative to the approximation",
                    InexactCutWarning,
                    stacklevel=self.stacklevel + 4,  # call_oracle <- step <- the driver's loop <- drive
                )
            st.exact = st.exact and cut_exact
            upper = self.lam * self._regularizer_at_w() + value
            if upper < st.best_upper:
                st.best_upper, st.best_w = upper, st.w  # read-only (frozen): shared, not copied
            self._first_ball(cut)
            ws.add(cut)
            self.cut_bytes = slope_bytes(cut.slope)
            if first and self.floor is not None and ws.max_constant_offset() < float(self.floor):
                ws.add(Cut(zero_like_slope(cut.slope, self.dim), float(self.floor)))
            st.peak_bytes = max(st.peak_bytes, ws.nbytes)
            st.pending = (upper, t_oracle)

    def solve(self):
        """The reduced problem, warm from the working set's duals: ``(solution, seconds)``."""
        ws = self.state.working_set
        t0 = time.perf_counter()
        solution = self.reduced.solve(ws, self.lam, warm_start=ws.duals)
        seconds = time.perf_counter() - t0
        self.row_ids = ws.row_ids.copy()
        return solution, seconds

    def cache_round(self) -> None:
        """Up to ``cache_steps`` cuts from the oracle's cache (:class:`~cutplane.protocols.CachingOracle`),
        each added and re-solved while it is violated by more than ``eps`` at the reduced
        minimiser. Valid minorants of ``R``: the lower bound stays certified; upper bounds come
        from exact calls only. Their budgets (``max_cuts``, ``memory_limit``) apply at the
        iteration's boundary."""
        st, ws = self.state, self.state.working_set
        for _ in range(self.options["cache_steps"]):
            if self.budget.reached(st.best_upper, st.lower):
                break
            solution = self.solution
            t0 = time.perf_counter()
            with combination_query(query_of(solution.w, solution, self.row_ids, ws, self.regularizer)):
                cached = self.oracle.cached_cut(solution.w)
            violation = float(cached.value) - self._model_at_minimiser(solution)
            st.cache_time += time.perf_counter() - t0
            if not violation > self.options["eps"]:
                break
            with self.guard.critical():
                ws.add(cached.cut)
                st.n_cached_cuts += 1
                st.peak_bytes = max(st.peak_bytes, ws.nbytes)
            solution, seconds = self.solve()
            with self.guard.critical():
                self.adopt(solution, seconds)

    def next_query(self) -> StepOutcome:
        """The step rule's next query point (and a line-search point with its ``F``)."""
        st = self.state
        context = StepContext(
            self.oracle,
            self.regularizer,
            self.lam,
            st.best_w,
            st.best_upper,
            self.current.number,
            st.working_set.output_vector,
        )
        return self.rule.next_query(self.solution, context)

    def adopt(self, solution, seconds) -> None:
        """Fold a reduced solve into the state: its time, failed backends, the lower bound
        (running maximum), the duals, the backend / duals / group weights reported, and with a
        strongly convex regulariser and dense cuts the ball that holds ``w*`` for the float32
        cuts (:func:`cutplane.rounded_cuts.ball_from_dual`)."""
        st, ws, it = self.state, self.state.working_set, self.current.number
        self.current.solver_time += seconds
        st.solver_time += seconds
        st.fallbacks.extend(FallbackRecord(it, b, r) for b, r in solution.failures)
        st.lower = update_lower(st.lower, solution.lower_bound, st.best_upper, st.exact, it)
        ws.record_duals(solution.alpha)
        if (
            self.modulus is not None
            and ws.sparse is False
            and solution.combination is not None
            and np.isfinite(solution.lower_bound)
        ):
            ws.set_ball(ball_from_dual(solution.w, solution.lower_bound, st.best_upper, self.lam, self.modulus))
        st.backend, st.alpha, st.mu = solution.backend, np.asarray(solution.alpha), solution.mu
        if solution.regularizer_value is not None:
            st.known_omega = (solution.w, float(solution.regularizer_value))
        self.solution = solution

    def record(self, t_step) -> None:
        """Fold the step's line-search point into the bounds; write the iteration's history row."""
        st, outcome, cur = self.state, self.outcome, self.current
        if outcome is not None:
            st.n_calls += outcome.oracle_calls
            st.n_searches += int(outcome.line_search)
            if outcome.candidate is not None and outcome.candidate_value < st.best_upper:
                st.best_upper = float(outcome.candidate_value)
                st.best_w = np.array(outcome.candidate, dtype=np.float64)
                st.lower = clip_lower(st.lower, st.best_upper, st.exact, cur.number)
        searched = outcome is not None and outcome.candidate is not None
        st.rows[-1] = HistoryRow(
            upper=cur.upper,
            best_upper=st.best_upper,
            lower=st.lower,
            gap=st.best_upper - st.lower,
            oracle_time=cur.oracle_time,
            solver_time=cur.solver_time,
            n_cuts=st.working_set.n_cuts,
            step_time=t_step,
            line_search_value=outcome.candidate_value if searched else np.nan,
            step_length=np.nan if outcome is None else outcome.step_length,
            wall_time=self.clock.elapsed(),
            cpu_time=self.clock.cpu(),
            bytes_sent=_bytes_since(self.oracle, self.bytes_at_call),
        )

    def boundary(self) -> None:
        """End of an iteration: prune, keep the budgets, move to the next query point."""
        st, opts = self.state, self.options
        prune_after, max_cuts, memory_limit = opts["prune_after"], opts["max_cuts"], opts["memory_limit"]
        if prune_after is not None and st.lower > st.lower_at_prune:  # only after a strict rise of the bound
            ws = st.working_set
            if np.count_nonzero(ws.idle_counts >= prune_after) >= max(1, ws.n_cuts // PRUNE_BATCH_DIVISOR):
                ws.prune(prune_after, floor=self.floor)
                st.lower_at_prune = st.lower
        if max_cuts is not None:
            st.working_set.aggregate(max_cuts - 1, floor=self.floor)
        if memory_limit is not None:
            groups = self.regularizer.groups
            st.working_set = fit_memory(st.working_set, memory_limit, self.cut_bytes, groups=groups, floor=self.floor)
            need = bytes_after_add(st.working_set, self.cut_bytes)
            if need > memory_limit and not st.memory_warned:
                st.memory_warned = True
                logger.warning(
                    "memory_limit=%d bytes is below one aggregated cut and a new one (%d bytes)", memory_limit, need
                )
        st.w = frozen(self.outcome.query)
        self.query = query_of(st.w, self.solution, self.row_ids, st.working_set, self.regularizer)
        self.phase = "boundary"

    def interrupted(self) -> None:
        """Finish the iteration a signal cut short: after a reduced solve whose step did not
        finish, query the reduced minimiser (a BMRM step); then the boundary."""
        if self.phase == "step" and self.solution is not None:
            self.outcome = StepOutcome(self.solution.w)
            self.record(0.0)
            self.phase = "callback"
        if self.phase == "callback":
            self.boundary()

    # ------------------------------------------------------------------ helpers
    def _first_ball(self, cut) -> None:
        """Before a reduced solve of this run: the region holding ``w*`` from this exact cut alone
        (:func:`cutplane.rounded_cuts.ball_from_cut`); later ones come from the solves."""
        ws = self.state.working_set
        if self.modulus is not None and ws.ball is None and not sp.issparse(cut.slope):
            upper = self.state.best_upper
            ws.set_ball(ball_from_cut(cut.slope, cut.offset, upper, self.lam, self.regularizer, self.modulus))

    def _regularizer_at_w(self) -> float:
        """``Omega(state.w)``: the reduced solve's value when ``state.w`` is its minimiser (the BMRM
        step queries it as it is: same array), else evaluated."""
        st = self.state
        if st.known_omega is not None and st.known_omega[0] is st.w:
            return st.known_omega[1]
        return float(self.regularizer(st.w))

    def _model_at_minimiser(self, solution) -> float:
        """A lower estimate of ``R_t(w_t)``, the cutting-plane model at the reduced minimiser.

        ``lower <= min F_t <= lam Omega(w_t) + R_t(w_t)``, so ``lower - lam Omega(w_t) <= R_t(w_t)``
        whatever the solver's accuracy, with equality at the reduced optimum (Fenchel-Young's
        equality for the dual solvers). Only the cache's violation test reads it: a low estimate
        can add a cut that is not violated (every cached cut is valid), never skip one that is.
        When the bound is not finite the active cuts are evaluated.
        """
        if np.isfinite(solution.lower_bound):
            omega = solution.regularizer_value
            omega = float(self.regularizer(solution.w)) if omega is None else float(omega)
            return float(solution.lower_bound) - self.lam * omega
        active = np.flatnonzero(np.asarray(solution.alpha) > 0)
        return self.state.working_set.model_value(solution.w, active if len(active) else None)


def _check_run_options(options, oracle) -> None:
    """The checks across options and the oracle: ``resume`` needs a checkpoint, ``cache_steps``
    an oracle with a cache."""
    if options["resume"] and options["checkpoint"] is None:
        raise InputError("resume=True needs the checkpoint path to resume from", field="resume")
    steps = options["cache_steps"]
    if steps and not isinstance(oracle, CachingOracle):
        raise InputError(
            f"cache_steps={steps} needs an oracle with a cache (a cached_cut method); {type(oracle).__name__} has none",
            field="cache_steps",
        )


def _floor(risk_lower_bound, oracle, regularizer):
    """The floor cut's value: the one given, else the oracle's for a regulariser that takes it."""
    if risk_lower_bound is None and regularizer.risk_floor_cut:
        risk_lower_bound = risk_floor(oracle)
    if risk_lower_bound is not None and not np.isfinite(float(risk_lower_bound)):
        raise InputError(f"must be finite, got {risk_lower_bound!r}", field="risk_lower_bound")
    return risk_lower_bound


def _last_cpu_time(rows) -> float:
    """CPU seconds recorded by the last history row (a resumed run counts on from it); 0 if none."""
    if rows and rows[-1] is not None and np.isfinite(rows[-1].cpu_time):
        return float(rows[-1].cpu_time)
    return 0.0


def _bytes_sent(oracle):
    """The ``bytes_sent`` counter of the oracle's executor (:mod:`cutplane.executors`), or None."""
    n = getattr(getattr(oracle, "executor", None), "bytes_sent", None)
    return n if isinstance(n, numbers.Integral) and not isinstance(n, bool) else None


def _bytes_since(oracle, start):
    """Bytes the oracle's executor sent since its counter read ``start`` (NaN when unknown: no
    counter, or an iteration resumed from a checkpoint after its oracle call)."""
    now = _bytes_sent(oracle)
    return float(now - start) if now is not None and start is not None else np.nan
