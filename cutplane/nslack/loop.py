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

import numpy as np
import scipy.sparse as sp

from ..bounds import clip_lower, update_lower
from ..exceptions import ConvergenceWarning, InputError
from ..progress import ProgressReporter, display_factor
from ..protocols import ExampleCutsOracle
from ..result import History, IterationInfo, Result, gap_tolerance
from . import _kernels
from .example_working_sets import DEFAULT_MAX_IDLE, DEFAULT_PLANES, ExampleWorkingSets

__all__ = ["minimize_nslack", "NSLACK_OPTIONS", "NSLACK"]

#: The method's name in :func:`cutplane.minimize`.
NSLACK = "n-slack"

logger = logging.getLogger("cutplane")

#: The keyword options of ``minimize(..., method="n-slack")`` beyond the common ones.
NSLACK_OPTIONS = (
    "planes",
    "max_idle",
    "max_sweeps",
    "sweep_time_ratio",
    "inner_gap",
    "seed",
    "sweep_threads",
    "average_every",
    "average_decay",
    "average_below",
    "bound_every",
)


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
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(offsets)) and np.all(np.isfinite(slopes.data))):
        raise InputError("example_cuts returned non-finite values, offsets or slopes", field="oracle")
    at_w = slopes @ w + offsets
    bad = at_w > values + 1e-7 * (1.0 + np.abs(values))
    if np.any(bad):
        i = int(np.argmax(bad))
        raise InputError(
            f"the cut of example {i} is above its risk at the query point ({at_w[i]:.10g} > R_i(w) = "
            f"{values[i]:.10g}): offset must be R_i(w) - <slope, w>",
            field="oracle",
        )
    return values, offsets, slopes


def _count(value, name, minimum):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < minimum:
        raise InputError(f"must be an integer >= {minimum}, got {value!r}", field=name)
    return int(value)


def _positive_number(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 < float(value) <= 1e6:
        raise InputError(f"must be a positive number, got {value!r}", field=name)
    return float(value)


def minimize_nslack(
    oracle,
    lam,
    *,
    eps,
    max_iter,
    time_limit=None,
    rtol=None,
    callback=None,
    verbose=False,
    progress_scale="F",
    planes=DEFAULT_PLANES,
    max_idle=DEFAULT_MAX_IDLE,
    max_sweeps=50,
    sweep_time_ratio=1.0,
    inner_gap=0.1,
    seed=0,
    sweep_threads=None,
    average_every=3,
    average_decay=0.8,
    average_below=0.1,
    bound_every=2,
    stacklevel=2,
) -> Result:
    """Minimise ``F(w) = lam/2 ||w||^2 + (1/n) sum_i R_i(w)`` to a certified gap by the n-slack method.

    Called by :func:`cutplane.minimize` with ``method="n-slack"`` (which validates ``lam``,
    ``eps``, ``max_iter``, ``time_limit``, ``rtol`` and the regulariser, ``L2``); the options
    are those of :data:`NSLACK_OPTIONS`.

    Parameters
    ----------
    oracle : ExampleCutsOracle
    lam, eps, max_iter, time_limit, rtol, callback, verbose, progress_scale
        As in :func:`cutplane.minimize`.
    planes : int, default=8
        Cuts kept per example besides the floor.
    max_idle : int, default=3
        Iterations a cut's dual may stay zero before the cut is dropped (0: never).
    max_sweeps : int, default=50
        Most passes of dual steps per iteration.
    sweep_time_ratio : float or None, default=1.0
        The passes stop once they took this many times the iteration's oracle seconds. None:
        no time rule, so that a run is reproducible to the bit (the number of passes then does
        not depend on the machine's speed).
    inner_gap : float, default=0.1
        The passes stop once the reduced problem's gap is below this fraction of the certified gap.
    seed : int, default=0
        Seed of the order of the examples in the passes (:func:`numpy.random.default_rng`).
    sweep_threads : int, optional
        Threads of each pass (:meth:`ExampleWorkingSets.sweep`), and of the insertion of the cuts.
        None: the workers of the oracle's executor (``oracle.executor.n_workers``), 1 without one. With one thread and
        ``sweep_time_ratio=None`` a run is reproducible to the bit.
    average_every : int, default=3
        Every this many iterations, the query point is the running average of the earlier query
        points ``w(alpha)`` (0: never; 1 is refused, as it would leave nothing to average).
    average_decay : float, default=0.8
        The average's ``avg = average_decay avg + (1 - average_decay) w(alpha)``, in ``[0, 1)``.
    average_below : float, default=0.1
        The queries at the average begin once the certified gap is at most this fraction of the
        objective: far from the optimum the query points move fast, and their average lags.
    bound_every : int, default=2
        The lower bound (``w(alpha)`` and ``D(alpha)`` recomputed from the duals, and the scale
        step) every this many iterations (and at the first); between them the sweeps' own ``w``
        serves as the next query point and the last certified bound stands.

    Returns
    -------
    Result
        ``method="n-slack"``; ``n_cached_cuts`` is 0 (no constraint cache: the per-example
        working sets play its part); the cuts added and merged are logged at DEBUG.
    """
    t_start, cpu_start = time.perf_counter(), time.process_time()
    if not isinstance(oracle, ExampleCutsOracle):
        raise InputError(
            f"method 'n-slack' needs an oracle with example_cuts(w), n_samples and example_lower_bound "
            f"(cutplane.protocols.ExampleCutsOracle), got {type(oracle).__name__}",
            field="oracle",
        )
    planes = _count(planes, "planes", 2)
    max_idle = _count(max_idle, "max_idle", 0)
    max_sweeps = _count(max_sweeps, "max_sweeps", 1)
    sweep_time_ratio = None if sweep_time_ratio is None else _positive_number(sweep_time_ratio, "sweep_time_ratio")
    inner_gap = _positive_number(inner_gap, "inner_gap")
    if sweep_threads is None:
        workers = getattr(getattr(oracle, "executor", None), "n_workers", 1)
        sweep_threads = workers if isinstance(workers, numbers.Integral) and not isinstance(workers, bool) else 1
    sweep_threads = _count(sweep_threads, "sweep_threads", 1)
    n, dim = int(oracle.n_samples), int(oracle.dim)
    floor = float(oracle.example_lower_bound)
    if not np.isfinite(floor):
        raise InputError(f"example_lower_bound must be finite, got {floor!r}", field="oracle")
    average_every = _count(average_every, "average_every", 0)
    if average_every == 1:
        raise InputError(
            "must be 0 (never) or >= 2: every query at the average leaves nothing to average", field="average_every"
        )
    is_number = isinstance(average_decay, numbers.Real) and not isinstance(average_decay, bool)
    if not is_number or not 0.0 <= float(average_decay) < 1.0:
        raise InputError(f"must be a number in [0, 1), got {average_decay!r}", field="average_decay")
    average_decay = float(average_decay)
    average_below = _positive_number(average_below, "average_below")
    bound_every = _count(bound_every, "bound_every", 1)
    rng = np.random.default_rng(seed)
    sets = ExampleWorkingSets(n, dim, lam, floor, planes=planes, max_idle=max_idle, threads=sweep_threads)
    reporter = ProgressReporter(verbose, "n-slack", scale=display_factor(progress_scale, lam), eps=eps)
    lower = sets.lower_bound()  # the floor: D at alpha on the floors, w = 0
    best_upper, best_w = np.inf, sets.w.copy()
    rows: list[tuple] = []
    status = "max_iter"
    t_oracle_total = t_solve_total = 0.0
    peak = sets.nbytes
    average = None  # the running average of the query points w(alpha)
    for it in range(1, max_iter + 1):
        if time_limit is not None and time.perf_counter() - t_start >= time_limit:
            status = "time_limit"
            break
        averaged = False
        if (
            average is not None
            and average_every > 0
            and it % average_every == 0
            and best_upper - lower <= average_below * abs(best_upper)
        ):
            w, averaged = average, True
        else:
            w = sets.w
            if average_every > 0:
                if average is None:
                    average = w.copy()
                else:
                    _kernels.blend(average, w, average_decay)
        w.flags.writeable = False
        query = w.copy() if callback is not None else None  # IterationInfo.w (the sweeps move sets.w)
        t0 = time.perf_counter()
        values, offsets, slopes = _check_example_cuts(oracle.example_cuts(w), n, dim, w)
        t_oracle = time.perf_counter() - t0
        w.flags.writeable = True
        upper = 0.5 * lam * float(w @ w) + float(values.mean())
        if upper < best_upper:
            best_upper, best_w = upper, w.copy()
            lower = clip_lower(lower, best_upper, True, it)
        t1 = time.perf_counter()
        n_new = sets.add(values, offsets, slopes, at=w)
        del slopes
        t2 = time.perf_counter()
        t_add = t2 - t1
        tol = gap_tolerance(eps, rtol, best_upper)
        estimate = lower
        passes = 0
        while passes < max_sweeps:
            inc, block_gap = sets.sweep(rng.permutation(n))
            passes += 1
            estimate += inc
            if block_gap <= inner_gap * max(best_upper - estimate, tol) or (
                sweep_time_ratio is not None and time.perf_counter() - t2 >= sweep_time_ratio * t_oracle
            ):
                break
        t_pass = time.perf_counter() - t2
        if it % bound_every == 0 or it == 1:
            lower = update_lower(lower, sets.scale_step(sets.lower_bound()), best_upper, True, it)
        n_dropped = sets.retire_idle()
        logger.debug(
            "n-slack it %d%s: oracle %.3g s, add %.3g s (%s), %d passes in %.3g s, bound %.3g s, reduced gap %.3g, "
            "cuts %d (+%d, %d merged in all, %d idle dropped), live nnz %d",
            it,
            " (averaged query)" if averaged else "",
            t_oracle,
            t_add,
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
        t_oracle_total += t_oracle
        t_solve_total += t_solve
        peak = max(peak, sets.nbytes)
        gap = best_upper - lower
        wall, cpu = time.perf_counter() - t_start, time.process_time() - cpu_start
        rows.append((upper, best_upper, lower, gap, t_oracle, t_solve, sets.n_cuts, 0.0, np.nan, np.nan, wall, cpu))
        info = IterationInfo(
            it, upper, best_upper, lower, gap, sets.n_cuts, wall, best_w if query is None else query, lam
        )
        reporter.update(info)
        if gap <= gap_tolerance(eps, rtol, best_upper):
            status = "converged"
            break
        if callback is not None and callback(info):
            status = "callback"
            break
    result = Result(
        w=best_w,
        objective=best_upper,
        lower_bound=lower,
        gap=best_upper - lower,
        n_iter=len(rows),
        status=status,
        history=History.from_rows(rows),
        time_s=time.perf_counter() - t_start,
        oracle_time_s=t_oracle_total,
        solver_time_s=t_solve_total,
        peak_working_set_bytes=peak,
        method="n-slack",
        eps=eps,
        rtol=rtol,
        n_oracle_calls=len(rows),
    )
    reporter.close(status, result)
    if status in ("max_iter", "time_limit"):
        warnings.warn(
            f"n-slack stopped ({status}) after {result.n_iter} iterations with gap {result.gap:.3g} > "
            f"eps = {result.tolerance:.3g}",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )
    return result
