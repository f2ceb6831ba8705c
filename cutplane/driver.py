"""The driver of every method: one loop around a method's step.

A method (:data:`cutplane.engine.METHODS`) is an initial state and a step: its run object has
``step() -> IterationInfo`` (one iteration: the oracle, the reduced problem, the next query
point), ``boundary()`` (the end of an iteration: budgets, the next query point in place),
``interrupted()`` (finish an iteration a signal cut short), ``mid_iteration`` (a cut is in but
its iteration not done, e.g. after a resume), ``at_boundary`` (its state is whole), ``n_iter``,
``lam``, ``budget`` (:class:`Budget`), ``state`` (what :func:`cutplane.result.make_result`
reads) and ``guard`` (set by the driver: the :class:`~cutplane.interrupt.InterruptGuard` whose
critical sections its state changes sit in). The driver owns what
every method shares: the iteration and time budgets, interruption (Ctrl-C, SIGTERM), the
checkpoints, the progress display and the log, the stopping test on the certified gap, the
callback, the warning of an uncertified stop and the :class:`~cutplane.result.Result`.
"""

from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, field

from .exceptions import ConvergenceWarning
from .executors.base import ExecutorError
from .interrupt import InterruptGuard, raised_by_interrupt
from .progress import ProgressReporter
from .result import Result, gap_tolerance, make_result

__all__ = ["Clock", "Budget", "drive"]

logger = logging.getLogger("cutplane")


@dataclass
class Clock:
    """Wall and CPU seconds of a run, counted over resumed runs.

    ``started`` is when this call began (the time limit counts from it); :meth:`resume` moves
    the run's origin back by the seconds a checkpoint had already spent.
    """

    started: float = field(default_factory=time.perf_counter)
    origin: float = 0.0
    cpu_origin: float = field(default_factory=time.process_time)

    def __post_init__(self):
        self.origin = self.started

    def resume(self, elapsed: float, cpu: float) -> None:
        """Count on from ``elapsed`` wall and ``cpu`` CPU seconds of earlier calls."""
        self.origin = self.started - elapsed
        self.cpu_origin = time.process_time() - cpu

    def elapsed(self) -> float:
        """Wall seconds of the run (over resumed calls)."""
        return time.perf_counter() - self.origin

    def cpu(self) -> float:
        """CPU seconds of the process since the run's origin."""
        return time.process_time() - self.cpu_origin

    def this_call(self) -> float:
        """Wall seconds of this call (what ``time_limit`` limits)."""
        return time.perf_counter() - self.started


@dataclass(frozen=True)
class Budget:
    """When a run stops: the certified gap (``eps``, ``rtol``), ``max_iter``, ``time_limit``."""

    eps: float
    rtol: float | None
    max_iter: int
    time_limit: float | None

    @classmethod
    def of(cls, options: dict) -> Budget:
        """The budget of a run's checked options (:func:`cutplane.options.check_options`)."""
        return cls(options["eps"], options["rtol"], options["max_iter"], options["time_limit"])

    def tolerance(self, best_upper: float) -> float:
        """The gap to reach: ``eps``, or ``max(eps, rtol * |best_upper|)`` (:func:`~cutplane.result.gap_tolerance`)."""
        return gap_tolerance(self.eps, self.rtol, best_upper)

    def reached(self, best_upper: float, lower: float) -> bool:
        """The certified gap is within the tolerance."""
        return best_upper - lower <= self.tolerance(best_upper)


def drive(
    run,
    *,
    method: str,
    budget: Budget,
    clock: Clock,
    reporter: ProgressReporter,
    callback=None,
    checkpointer=None,
    stacklevel: int = 2,
) -> Result:
    """Iterate ``run`` until the gap is certified or a budget, the callback or a signal stops it.

    ``checkpointer`` (:class:`cutplane.checkpoint.Checkpointer`, optional) saves ``run.state``
    every ``checkpointer.every`` iterations, when the run stops uncertified and when the
    executor's workers are lost; with it, SIGTERM (and SIGINT) are caught for the run.
    """
    guard = InterruptGuard(enabled=checkpointer is not None)
    run.guard = guard  # the run changes its state in the guard's critical sections
    run.observed = callback is not None  # a callback sees each iteration's query point
    status, n_start = "max_iter", run.n_iter
    with guard:
        try:
            status = _loop(run, budget, clock, reporter, callback, checkpointer, guard, n_start)
        except (KeyboardInterrupt, SystemError) as exc:
            # a signal raised inside a C extension's callback (numba's dispatcher) comes back as a
            # SystemError caused by the KeyboardInterrupt: the same interrupt
            if isinstance(exc, SystemError) and not (guard.signal_received is not None and raised_by_interrupt(exc)):
                raise
            status = "interrupted"
            reporter.close(status)  # the counter ends its line first: the message gets a line of its own
            logger.warning(
                "interrupted at iteration %d: returning the best point so far%s",
                run.state.n_iter,
                "" if checkpointer is None else f"; state saved to {checkpointer.path}",
            )
            with guard.critical():
                run.interrupted()
        finally:
            reporter.close(status)
        if checkpointer is not None and status != "converged":  # not reached when an error propagates
            with guard.critical():
                checkpointer.save(run.state, clock.elapsed())
    st = run.state
    if status in ("max_iter", "time_limit"):
        warnings.warn(
            f"{method} stopped ({status}) after {len(st.rows)} iterations with gap "
            f"{st.best_upper - st.lower:.3g} > eps = {gap_tolerance(budget.eps, budget.rtol, st.best_upper):.3g}",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )
    return make_result(st, status=status, method=method, eps=budget.eps, rtol=budget.rtol, time_s=clock.elapsed())


def _loop(run, budget, clock, reporter, callback, checkpointer, guard, n_start) -> str:
    """The iterations; returns the status they stopped with."""
    while True:
        if not run.mid_iteration:
            guard.check()  # a signal a library swallowed ends the run here
            if run.n_iter >= budget.max_iter:
                return "max_iter"
            if budget.time_limit is not None and run.n_iter > n_start and clock.this_call() >= budget.time_limit:
                return "time_limit"
        try:
            info = run.step()
        except ExecutorError:  # the workers are gone: keep the last boundary, then say so
            if checkpointer is not None and run.at_boundary:
                with guard.critical():
                    checkpointer.save(run.state, clock.elapsed())
            raise
        reporter.update(info)
        if budget.reached(info.best_upper, info.lower):
            return "converged"
        stop = callback is not None and bool(callback(info))
        del info  # it holds this iteration's query point: not kept alive through the next step
        with guard.critical():
            run.boundary()
            if checkpointer is not None and len(run.state.rows) % checkpointer.every == 0 and not stop:
                checkpointer.save(run.state, clock.elapsed())
        if stop:
            return "callback"
