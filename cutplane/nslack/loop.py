"""The n-slack method: per-example working sets, a batch oracle pass, block-coordinate dual steps.

Each iteration

1. calls the oracle at ``w_t = w(alpha)`` for one cut per example
   (:class:`~cutplane.protocols.ExampleCutsOracle`): the upper bound
   ``F(w_t) = lam/2 ||w_t||^2 + (1/n) sum_i R_i(w_t)``;
2. adds each example's cut to that example's working set when it is violated
   (:meth:`ExampleWorkingSets.add`);
3. raises the dual ``D(alpha)`` of the reduced problem by passes of exact block-coordinate steps
   over the examples in random order (:meth:`ExampleWorkingSets.sweep`), until the passes cost
   as much time as the oracle call (``sweep_time_ratio``), the reduced problem's own gap falls
   below ``inner_gap`` of the certified gap, or ``max_sweeps`` passes;
4. recomputes ``w(alpha)`` and ``D(alpha)`` from the duals and takes the exact line search
   along the scaling of the cuts' duals (:meth:`ExampleWorkingSets.scale_step`): the lower
   bound, certified by weak duality (:mod:`cutplane.nslack.example_working_sets`);
5. drops the cuts whose dual stayed zero ``max_idle`` iterations
   (:meth:`ExampleWorkingSets.retire_idle`).

Once the certified relative gap is below ``average_below``, every ``average_every``-th
iteration queries the oracle at a running average of the earlier query points instead
(``average_decay``): at large C the reduced minimiser zigzags as cuts enter, and the average has
the lower objective (a better upper bound and returned model); its cuts enter like any others.

It stops when the best upper bound minus the best lower bound is at most the tolerance, as the
other methods of :func:`cutplane.minimize`. With per-example models the reduced problem is a far
closer model of ``F`` than the 1-slack one after the same number of oracle calls (Joachims,
Finley and Yu 2009, sec. 4; the multi-plane block-coordinate methods of Shah et al. 2015), which
is what pays at large ``C`` (``1 / lam``), where the 1-slack method needs many iterations.
Measured: ``docs/results/large_c.md``.
"""

from __future__ import annotations

import logging
import numbers
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..bounds import clip_lower, update_lower
from ..driver import Budget, Clock
from ..exceptions import InexactCutWarning, InputError
from ..interrupt import InterruptGuard
from ..options import NSLACK
from ..protocols import ExampleCutsOracle, Regularizer
from ..result import HistoryRow, IterationInfo
from ..run_inputs import check_lam
from . import _kernels
from .example_working_sets import ExampleWorkingSets

__all__ = ["NSlack", "NSlackState", "NSLACK", "FLOAT32_POINTS_RTOL"]

logger = logging.getLogger("cutplane")

#: With a relative tolerance ``rtol`` at least this, the query points are rounded to float32
#: (a relative change of at most ``2**-24`` per coordinate, far below the gap sought) and the best
#: point and the running average are kept in float32, exactly: ``F`` is evaluated at the rounded
#: point, which is the one returned, so the certificate is unchanged. The working sets' float
#: rows (the merged cuts) are kept in float32 too, the lower bound less a bound on what that
#: rounding can have added (:class:`~cutplane.nslack.example_working_sets.ExampleWorkingSets`).
FLOAT32_POINTS_RTOL = 1e-4

#: The options of :func:`cutplane.minimize` that only the one-working-set methods take, refused
#: here when given at all (those with a default are refused by :func:`cutplane.options.check_options`).
_CALL_ARGUMENTS = ("w0", "warm_start", "risk_lower_bound")


def _check_example_cuts(ex, n, dim, w):
    """Unpack and check an :class:`~cutplane.cuts.ExampleCuts`; return (values, offsets, CSR slopes)."""
    try:
        values, offsets, slopes = ex[0], ex[1], ex[2]
    except (TypeError, IndexError):
        raise InputError(
            f"example_cuts must return ExampleCuts(values, offsets, slopes), got {type(ex).__name__}", field="oracle"
        ) from None
    values = np.asarray(values, dtype=np.float64)
    offsets = np.asarray(offsets, dtype=np.float64)
    if values.shape != (n,) or offsets.shape != (n,):
        raise InputError(
            f"example_cuts values and offsets must have shape ({n},), got {values.shape} and {offsets.shape}",
            field="oracle",
        )
    if not (sp.issparse(slopes) and slopes.shape == (n, dim)):
        raise InputError(f"example_cuts slopes must be scipy sparse of shape ({n}, {dim})", field="oracle")
    slopes = sp.csr_matrix(slopes)
    if slopes.dtype.kind not in "iuf":
        raise InputError(f"example_cuts slopes must have real values, got dtype {slopes.dtype}", field="oracle")
    finite = slopes.dtype.kind in "iu" or np.all(np.isfinite(slopes.data))
    if not (finite and np.all(np.isfinite(values)) and np.all(np.isfinite(offsets))):
        raise InputError("example_cuts returned non-finite values, offsets or slopes", field="oracle")
    at_w = np.empty(n)
    _kernels.batch_products(slopes.indptr, slopes.indices, slopes.data, w, at_w)  # no float64 copy of the data
    at_w += offsets
    bad = at_w > values + 1e-7 * (1.0 + np.abs(values))
    if np.any(bad):
        i = int(np.argmax(bad))
        raise InputError(
            f"the cut of example {i} is above its risk at the query point ({at_w[i]:.10g} > R_i(w) = "
            f"{values[i]:.10g}): offset must be R_i(w) - <slope, w>",
            field="oracle",
        )
    return values, offsets, slopes


@dataclass
class NSlackState:
    """The state of an n-slack run: the bounds, the best point, the history, the counters (what
    :func:`cutplane.result.make_result` reads)."""

    best_w: np.ndarray
    lower: float
    best_upper: float = np.inf
    rows: list = field(default_factory=list)
    exact: bool = True
    n_calls: int = 0
    oracle_time: float = 0.0
    solver_time: float = 0.0
    peak_bytes: int = 0

    @property
    def n_iter(self) -> int:
        return len(self.rows)


class NSlack:
    """The n-slack method as an initial state (:meth:`start`) and a step (:meth:`step`), run by
    :func:`cutplane.driver.drive`."""

    mid_iteration = False  # every iteration runs whole (no checkpoints to resume from)
    at_boundary = True

    def __init__(self, oracle, lam, options, sets, *, clock):
        self.oracle, self.lam, self.options, self.sets, self.clock = oracle, lam, options, sets, clock
        self.budget = Budget.of(options)
        self.n = sets.n
        self.rng = np.random.default_rng(options["seed"])
        # a loose relative tolerance: the query points are rounded to float32, so that the best
        # point and the running average are kept exactly in float32 (half the memory of each)
        rtol = options.get("rtol")
        self.float32_points = rtol is not None and rtol >= FLOAT32_POINTS_RTOL
        best = np.zeros(sets.dim, dtype=np.float32) if self.float32_points else sets.w.copy()
        self.state = NSlackState(best_w=best, lower=sets.lower_bound(), peak_bytes=sets.nbytes)
        self.average = None  # the running average of the query points w(alpha)
        self.guard = InterruptGuard(enabled=False)
        self.observed = True  # IterationInfo.w is a copy of the query point (the driver clears it without a callback)

    @classmethod
    def start(cls, problem, options: dict, clock: Clock) -> NSlack:
        """Check the problem (``L2``, an :class:`~cutplane.protocols.ExampleCutsOracle`) and start
        from the floors: every example's dual on its floor cut, ``w = 0``."""
        for name in _CALL_ARGUMENTS:
            if getattr(problem, name) is not None:
                raise InputError(f"does not apply to method {NSLACK!r} (see cutplane.minimize)", field=name)
        regularizer, oracle = problem.regularizer, problem.oracle
        if not isinstance(regularizer, Regularizer) or regularizer.kind != "l2":
            raise InputError(f"method {NSLACK!r} needs the L2 regulariser, got {regularizer!r}", field="regularizer")
        lam = check_lam(problem.lam)
        if not isinstance(oracle, ExampleCutsOracle):
            raise InputError(
                f"method {NSLACK!r} needs an oracle with example_cuts(w), n_samples and example_lower_bound "
                f"(cutplane.protocols.ExampleCutsOracle), got {type(oracle).__name__}",
                field="oracle",
            )
        floor = float(oracle.example_lower_bound)
        if not np.isfinite(floor):
            raise InputError(f"example_lower_bound must be finite, got {floor!r}", field="oracle")
        threads = options["sweep_threads"]
        if threads is None:
            workers = getattr(getattr(oracle, "executor", None), "n_workers", 1)
            threads = int(workers) if isinstance(workers, numbers.Integral) and not isinstance(workers, bool) else 1
        rtol = options.get("rtol")
        loose = rtol is not None and rtol >= FLOAT32_POINTS_RTOL
        sets = ExampleWorkingSets(
            int(oracle.n_samples),
            int(oracle.dim),
            lam,
            floor,
            planes=options["planes"],
            max_idle=options["max_idle"],
            threads=threads,
            float_dtype=np.float32 if loose else np.float64,  # the float rows too: a certified slack
        )
        return cls(oracle, lam, options, sets, clock=clock)

    @property
    def n_iter(self) -> int:
        return self.state.n_iter

    def step(self) -> IterationInfo:
        """One iteration: the oracle's per-example cuts at the query point, their insertion, passes
        of dual steps, the certified lower bound (every ``bound_every``), the idle cuts retired."""
        st, sets, it = self.state, self.sets, self.state.n_iter + 1
        w, averaged = self._query_point(it)
        w.flags.writeable = False
        query = w.copy() if self.observed else None  # IterationInfo.w (the sweeps move sets.w)
        t0 = time.perf_counter()
        cuts = self.oracle.example_cuts(w)
        values, offsets, slopes = _check_example_cuts(cuts, self.n, sets.dim, w)
        t_oracle = time.perf_counter() - t0
        self._note_exactness(cuts)
        w.flags.writeable = True
        upper = 0.5 * self.lam * float(w @ w) + float(values.mean())
        if upper < st.best_upper:
            st.best_upper = upper
            np.copyto(st.best_w, w, casting="unsafe")  # in place; exact in float32 (_query_point)
            st.lower = clip_lower(st.lower, st.best_upper, True, it)
        t1 = time.perf_counter()
        n_new = sets.add(values, offsets, slopes, at=w)
        del slopes
        if averaged and w is sets.w:
            sets.recompute_w()  # the average was queried in w's place; the new cuts' duals are 0
        t2 = time.perf_counter()
        passes, block_gap = self._sweeps(t_oracle)
        t_pass = time.perf_counter() - t2
        if it % self.options["bound_every"] == 0 or it == 1:
            st.lower = update_lower(st.lower, sets.scale_step(sets.lower_bound()), st.best_upper, True, it)
        n_dropped = sets.retire_idle()
        logger.debug(
            "n-slack it %d%s: oracle %.3g s, add %.3g s (%s), %d passes in %.3g s, bound %.3g s, reduced gap %.3g, "
            "cuts %d (+%d, %d merged in all, %d idle dropped), live nnz %d",
            it,
            " (averaged query)" if averaged else "",
            t_oracle,
            t2 - t1,
            ", ".join(f"{k} {v:.2g}" for k, v in sets.add_seconds.items()),
            passes,
            t_pass,
            time.perf_counter() - t2 - t_pass,
            block_gap,
            sets.n_cuts,
            n_new,
            sets.n_merged,
            n_dropped,
            sets.live_nnz,
        )
        t_solve = time.perf_counter() - t1
        st.n_calls += 1
        st.oracle_time += t_oracle
        st.solver_time += t_solve
        st.peak_bytes = max(st.peak_bytes, sets.nbytes)
        gap, wall = st.best_upper - st.lower, self.clock.elapsed()
        st.rows.append(
            HistoryRow(
                upper,
                st.best_upper,
                st.lower,
                gap,
                t_oracle,
                t_solve,
                sets.n_cuts,
                wall_time=wall,
                cpu_time=self.clock.cpu(),
            )
        )
        w_info = st.best_w if query is None else query
        return IterationInfo(it, upper, st.best_upper, st.lower, gap, sets.n_cuts, wall, w_info, self.lam)

    def _note_exactness(self, cuts) -> None:
        """An oracle whose cuts are not exact (``ExampleCuts.exact`` False: an approximate argmax)
        makes the certificate relative to the approximation: warned once, ``Result.exact`` False."""
        if self.state.exact and not bool(getattr(cuts, "exact", True)):
            self.state.exact = False
            warnings.warn(
                "the oracle returned inexact cuts: the certificate is relative to the approximation",
                InexactCutWarning,
                stacklevel=5,  # _note_exactness <- step <- the driver's loop <- drive <- run_problem
            )

    def _query_point(self, it: int) -> tuple[np.ndarray, bool]:
        """``(w, averaged)``: ``w(alpha)``, or every ``average_every``-th iteration once the
        relative gap is below ``average_below``, the running average of the earlier query points
        (updated here). With :attr:`float32_points` (``rtol >= FLOAT32_POINTS_RTOL``) the point
        is rounded to float32 in place and the average is kept in float32; an averaged query is
        written into ``sets.w`` (no third float64 vector), which :meth:`step` recomputes after."""
        opts, st = self.options, self.state
        every = opts["average_every"]
        near = st.best_upper - st.lower <= opts["average_below"] * abs(st.best_upper)
        w = self.sets.w
        if self.average is not None and every > 0 and it % every == 0 and near:
            if not self.float32_points:
                return self.average, True
            np.copyto(w, self.average)  # exact; w(alpha) is recomputed after the insertion
            return w, True
        if self.float32_points:
            _kernels.round_to_float32(w)  # the sweeps go on from the rounded point
        # float32 points: the average starts once the relative gap is within ten times
        # average_below (the points before weigh average_decay ** k, k the iterations until the
        # gap reaches average_below, when it is first queried): not beside the first, largest
        # batches of cuts
        started = self.average is not None or not self.float32_points
        if not started and np.isfinite(st.best_upper):
            started = st.best_upper - st.lower <= 10.0 * opts["average_below"] * abs(st.best_upper)
        if every > 0 and started:
            if self.average is None:
                self.average = w.astype(np.float32) if self.float32_points else w.copy()
            elif self.float32_points:
                _kernels.blend32(self.average, w, opts["average_decay"])
            else:
                _kernels.blend(self.average, w, opts["average_decay"])
        return w, False

    def _sweeps(self, t_oracle: float) -> tuple[int, float]:
        """Passes of block-coordinate dual steps in random order, until the reduced problem's gap
        is below ``inner_gap`` of the certified gap, they took ``sweep_time_ratio`` times the
        oracle's seconds, or ``max_sweeps`` passes. Returns the passes and the reduced gap."""
        opts, st, sets = self.options, self.state, self.sets
        tol = self.budget.tolerance(st.best_upper)
        ratio, t2 = opts["sweep_time_ratio"], time.perf_counter()
        estimate, passes = st.lower, 0
        while passes < opts["max_sweeps"]:
            inc, block_gap = sets.sweep(self.rng.permutation(self.n))
            passes += 1
            estimate += inc
            if block_gap <= opts["inner_gap"] * max(st.best_upper - estimate, tol) or (
                ratio is not None and time.perf_counter() - t2 >= ratio * t_oracle
            ):
                break
        return passes, block_gap

    def boundary(self) -> None:
        """Nothing between iterations: the next query point is the sweeps' ``w(alpha)``."""

    def interrupted(self) -> None:
        """An interrupted iteration leaves the bounds as they were certified."""
