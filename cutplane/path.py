"""A certified regularisation path: one certified run per ``lam``, each warm-started from the last.

The risk ``R`` does not depend on ``lam``, so every cut ``R(w) >= <a, w> + b`` collected at one
``lam`` is a valid cut at every other: a run at a new ``lam`` can start from the whole working set
of the previous one (:class:`WarmStart`, the keyword ``warm_start`` of :func:`cutplane.minimize`)
and its first reduced solve already gives a certified lower bound there. The start point is the
best ``w`` of the previous point, whose ``F`` at the new ``lam`` the first oracle call evaluates.
Everything tied to ``lam`` starts afresh at each point (the running maximum of the lower bounds,
the best upper bound, the pruning counters), so each point's :class:`~cutplane.result.Result` is
certified on its own: ``lower_bound <= min F_lam <= objective``, with its own history.

:func:`regularization_path` is the loop over ``lams``. The order in which it runs them matters
for the cost only, never for the certificates. ``order="auto"`` runs them by decreasing ``lam``
(increasing ``C = 1/lam``): the small-``C`` points are cheap, and the cuts they leave describe
``R`` near the origin, where the next, larger-``C`` point starts its search; the largest ``C``,
the expensive point, runs last with every cut collected before. The measurements that chose it
(both directions, against cold runs at each ``C``) are on the page ``docs/results/c_path.md``
(``python -m benchmarks.c_path``).
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .engine import Problem, method_spec, run_problem
from .exceptions import InputError
from .options import check_options, merge_options, positive_number
from .protocols import ReducedSolver, Regularizer
from .reduced.registry import make_reduced_solver
from .working_set import WorkingSet

__all__ = ["WarmStart", "PathResult", "regularization_path", "ORDERS", "PATH_STATUSES", "AUTO_ORDER"]

#: Accepted values of ``order``.
ORDERS = ("auto", "increasing", "decreasing", "given")
#: The direction ``order="auto"`` runs (see the module docstring and ``docs/results/c_path.md``).
AUTO_ORDER = "decreasing"
#: Values of :attr:`PathResult.status`.
PATH_STATUSES = ("converged", "max_iter", "time_limit", "stopped", "callback", "interrupted")


@dataclass(frozen=True)
class WarmStart:
    """Where :func:`cutplane.minimize` starts when given ``warm_start``.

    Attributes
    ----------
    working_set : WorkingSet
        Cuts of ``R`` from an earlier run (valid at every ``lam``: ``R`` does not depend on
        it). The engine takes ownership of this object: it is extended, pruned and aggregated
        in place, not copied.
    w : ndarray of shape (dim,) or None
        The point to start from, e.g. the best ``w`` of the previous ``lam``; None: the
        ``w0`` of :func:`cutplane.minimize` (default the regulariser's initial point).
    """

    working_set: WorkingSet
    w: np.ndarray | None = None


@dataclass(frozen=True)
class PathResult:
    """The outcome of :func:`regularization_path`.

    Attributes
    ----------
    lams : tuple of float
        The ``lams`` as given (their order, not the run order).
    results : tuple of (Result or None)
        Aligned with ``lams``: the full :class:`~cutplane.result.Result` of each point that ran
        (its own history, iterations of that point only, and its own certificate); None for a
        point that did not run (the path stopped before it: see ``status``). A point whose
        ``w`` the path let go (``keep_w``) has ``w`` None.
    run_order : tuple of int
        Indices into ``lams`` of the points that ran, in the order they ran.
    seconds : float
        Wall-clock seconds of the whole path.
    status : str
        ``"converged"``: every point ran and converged. ``"max_iter"``: every point ran, at
        least one stopped at ``max_iter`` (uncertified; see its ``status``). The path stopped
        early, the points after it not run: ``"time_limit"`` (the path's time limit ran out),
        ``"stopped"`` (``on_point`` returned True before the last point), ``"callback"`` (the per-iteration callback
        returned True), ``"interrupted"`` (Ctrl-C).
    working_set : WorkingSet or None
        The path's working set when it ended: cuts of ``R``, valid at every ``lam`` (e.g. a
        warm start for another run on the same risk, or, scaled by
        :meth:`~cutplane.working_set.WorkingSet.scale`, on a risk it is part of); None for a
        method without a shared working set (``"n-slack"``) or a path that ran no point.
    """

    lams: tuple
    results: tuple
    run_order: tuple
    seconds: float
    status: str
    working_set: WorkingSet | None = None

    @property
    def not_run(self) -> tuple:
        """Indices of the points that did not run (their result is None)."""
        return tuple(i for i, r in enumerate(self.results) if r is None)

    @property
    def converged(self) -> bool:
        """True when every point ran and reached its certified gap."""
        return self.status == "converged"

    @property
    def n_iter(self) -> int:
        """Iterations of the whole path (sum over the points that ran)."""
        return int(sum(r.n_iter for r in self.results if r is not None))

    def summary(self) -> str:
        """One line per point, in the order of ``lams``."""
        lines = [
            f"regularization path: {self.status}, {len(self.run_order)} of {len(self.lams)} points, "
            f"{self.n_iter} iterations in {self.seconds:.3g} s"
        ]
        for i, (lam, r) in enumerate(zip(self.lams, self.results)):
            if r is None:
                lines.append(f"  [{i}] lam {lam:.6g}: not run")
            else:
                lines.append(
                    f"  [{i}] lam {lam:.6g}: {r.status}, objective {r.objective:.10g}, lower {r.lower_bound:.10g}, "
                    f"gap {r.gap:.3g}, {r.n_iter} it, {r.time_s:.3g} s"
                )
        return "\n".join(lines)


def _check_lams(lams) -> tuple:
    if isinstance(lams, (str, bytes)) or not isinstance(lams, (Sequence, np.ndarray)):
        raise InputError(f"must be a sequence of positive numbers, got {type(lams).__name__}", field="lams")
    out = []
    for i, v in enumerate(list(lams)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(float(v)) or float(v) <= 0:
            raise InputError(f"lams[{i}] must be a positive finite number, got {v!r}", field="lams")
        out.append(float(v))
    if not out:
        raise InputError("is empty: give at least one lam", field="lams")
    if len(set(out)) != len(out):
        dup = sorted({v for v in out if out.count(v) > 1})
        raise InputError(f"has duplicates: {', '.join(f'{v:g}' for v in dup)}", field="lams")
    return tuple(out)


def _check_eps(eps, n) -> tuple:
    if isinstance(eps, (Sequence, np.ndarray)) and not isinstance(eps, (str, bytes)):
        values = list(eps)
        if len(values) != n:
            raise InputError(f"has {len(values)} values for {n} lams", field="eps")
    else:
        values = [eps] * n
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(float(v)) or float(v) <= 0:
            raise InputError(f"must be positive finite numbers, got {v!r}" + (f" at {i}" if n > 1 else ""), field="eps")
    return tuple(float(v) for v in values)


def run_order(lams, order="auto") -> tuple:
    """Indices into ``lams`` in the order :func:`regularization_path` runs them.

    Parameters
    ----------
    lams : sequence of float
    order : {"auto", "increasing", "decreasing", "given"}
        ``"increasing"``: increasing ``lam`` (decreasing ``C``); ``"decreasing"``: decreasing
        ``lam`` (increasing ``C``); ``"given"``: as given; ``"auto"``: :data:`AUTO_ORDER`.
    """
    if order not in ORDERS:
        raise InputError(f"unknown order {order!r}; accepted: {', '.join(ORDERS)}", field="order")
    if order == "auto":
        order = AUTO_ORDER
    idx = list(range(len(lams)))
    if order == "increasing":
        idx.sort(key=lambda i: lams[i])
    elif order == "decreasing":
        idx.sort(key=lambda i: -lams[i])
    return tuple(idx)


def regularization_path(
    oracle,
    regularizer,
    lams,
    *,
    eps,
    order="auto",
    callback=None,
    on_point: Callable | None = None,
    extend: Callable | None = None,
    keep_w: Callable | None = None,
    risk_lower_bound=None,
    progress_scale="F",
    **options,
) -> PathResult:
    """Minimise ``F_lam(w) = lam * Omega(w) + R(w)`` at every ``lam`` of ``lams``, each to its certified gap.

    The points run one after the other (``order``), each from the working set and the best
    ``w`` of the point before (:class:`WarmStart`): its first reduced solve already gives a
    certified lower bound at its ``lam``, and its result is certified on its own, as a cold
    :func:`cutplane.minimize` at that ``lam`` would be (``"n-slack"`` runs each point cold).

    Parameters
    ----------
    oracle, regularizer
        As for :func:`cutplane.minimize` (a norm regulariser: an indicator set has no ``lam``).
    lams : sequence of float
        Positive, distinct, in any order.
    eps : float or sequence of float
        Absolute gap on the engine's scale ``F_lam``: one for every point, or one per point
        aligned with ``lams``.
    order : {"auto", "increasing", "decreasing", "given"}
        Run order (:func:`run_order`); ``"auto"`` is decreasing ``lam`` (see the module
        docstring for why).
    callback : callable, optional
        ``callback(IterationInfo)`` per iteration, its ``lam`` the running point's; returning
        True stops the point and the path (status ``"callback"``).
    on_point : callable, optional
        ``on_point(index, lam, result)`` after each point that ran (``index`` into ``lams``);
        returning True stops the path (status ``"stopped"``).
    extend : callable, optional
        ``extend(lams, results) -> (lam, eps) or None``, called once every point of ``lams``
        ran and the path did not stop (status ``"converged"`` or ``"max_iter"``), then after
        each point it added: one more point (a ``lam`` not run before, to the gap ``eps``) or
        None to end the path. An added point starts from the path's working set and the best
        ``w`` of the nearest ``lam`` (log scale), is certified on its own and is appended to
        ``lams`` and ``results`` (``on_point`` gets its index there): e.g. past the edge of a
        grid while a score keeps rising.
    keep_w : callable, optional
        ``keep_w(index) -> bool``, asked after each point for every earlier one still holding
        its ``w`` (dense, ``dim`` floats: on a large model the path's largest objects): False
        lets it go (its result's ``w`` becomes None, its certificate stays). An added point
        starts from the nearest ``w`` kept. None: every ``w`` is kept.
    risk_lower_bound, progress_scale
        As for :func:`cutplane.minimize`, at every point.
    **options
        The engine's options (:data:`cutplane.options.OPTIONS`) at every point, but ``time_limit``:
        seconds for the whole path (each point gets what remains; the points after it ran out do
        not run, status ``"time_limit"``). ``max_iter`` is each point's budget. One reduced
        solver is built for the whole path (its compiled problems are reused).

    Returns
    -------
    PathResult
    """
    t0 = time.perf_counter()
    lams = _check_lams(lams)
    eps_all = list(_check_eps(eps, len(lams)))  # extend appends to it
    for name, hook in (("on_point", on_point), ("extend", extend), ("keep_w", keep_w)):
        if hook is not None and not callable(hook):
            raise InputError(f"must be callable, got {type(hook).__name__}", field=name)
    options, time_limit = _path_options(regularizer, options)
    call = dict(risk_lower_bound=risk_lower_bound, progress_scale=progress_scale)
    all_lams, carry = list(lams), {"ws": None, "w": None}  # extend appends to all_lams
    hooks = (callback, on_point, extend, keep_w)
    results, ran, status = _run_points(
        oracle, regularizer, all_lams, eps_all, run_order(lams, order), options, call, hooks, t0, time_limit, carry
    )
    ws = carry["ws"] if method_spec(options.get("method", "bmrm")).warm_starts else None
    return PathResult(tuple(all_lams), tuple(results), tuple(ran), time.perf_counter() - t0, status, ws)


def _path_options(regularizer, given) -> tuple:
    """The engine options of every point (checked; one reduced solver for the whole path when
    the method warm-starts) and the path's time limit (None or > 0)."""
    options = merge_options(None, given, owner="regularization_path")
    time_limit = options.pop("time_limit", None)
    if time_limit is not None:
        time_limit = positive_number(time_limit, "time_limit")
    spec = method_spec(options.get("method", "bmrm"))
    check_options(options)
    if (isinstance(regularizer, Regularizer) and regularizer.is_indicator) or spec.needs_indicator:
        raise InputError("a path over lam needs a norm regulariser (an indicator set has no lam)", field="regularizer")
    if spec.warm_starts and isinstance(regularizer, Regularizer):
        solver = options.get("solver")  # one for the path: compiled problems are reused
        options["solver"] = solver if isinstance(solver, ReducedSolver) else make_reduced_solver(regularizer, solver)
    return options, time_limit


def _run_points(oracle, regularizer, lams, eps_all, order_idx, options, call, hooks, t0, time_limit, carry):
    """The points in their order, each warm from the one before (when the method carries a
    working set), then the points ``extend`` adds (appended to ``lams`` and ``eps_all``);
    ``hooks`` is ``(callback, on_point, extend, keep_w)``; ``carry`` (``{"ws": None, "w": None}``)
    holds the working set and the best ``w`` passed on, and is left with the last ones.
    Returns the results aligned with ``lams``, the indices run and the status."""
    callback, on_point, extend, keep_w = hooks
    warm = method_spec(options.get("method", "bmrm")).warm_starts
    results: list = [None] * len(lams)
    ran: list = []
    status = "converged"
    order = list(order_idx)
    while True:
        for i in order:
            remaining = None
            if time_limit is not None:
                remaining = time_limit - (time.perf_counter() - t0)
                if remaining <= 0:
                    return results, ran, "time_limit"
            w = carry["w"] if i < len(order_idx) or not ran else _nearest_w(lams, results, i)
            start = WarmStart(carry["ws"], w) if (warm and carry["ws"] is not None) else None
            problem = Problem(oracle, regularizer, lams[i], warm_start=start, **call)
            res, carry["ws"] = run_problem(
                problem, {**options, "eps": eps_all[i], "time_limit": remaining}, callback=callback
            )
            carry["w"] = res.w
            results[i] = res
            ran.append(i)
            stop = bool(on_point(i, lams[i], res)) if on_point is not None else False
            if keep_w is not None:
                _let_go(results, ran, keep_w)
            if res.status in ("time_limit", "callback", "interrupted"):
                return results, ran, res.status
            if res.status == "max_iter":
                status = "max_iter"
            if stop and (len(ran) < len(lams) or extend is not None):
                return results, ran, "stopped"
        order = _extended(extend, lams, eps_all, results)
        if not order:
            return results, ran, status


def _extended(extend, lams, eps_all, results) -> list:
    """The index of the point ``extend`` adds (appended to ``lams``, ``eps_all`` and
    ``results``), in a list; empty when it adds none."""
    if extend is None:
        return []
    more = extend(tuple(lams), tuple(results))
    if more is None:
        return []
    lam, eps = more
    (lam,) = _check_lams([lam])
    (eps,) = _check_eps(eps, 1)
    if lam in lams:
        raise InputError(f"extend gave lam {lam:g}, which the path has run already", field="extend")
    lams.append(lam)
    eps_all.append(eps)
    results.append(None)
    return [len(lams) - 1]


def _let_go(results, ran, keep_w) -> None:
    """Set to None the ``w`` of every point run before the last one that ``keep_w`` does not keep."""
    for j in ran[:-1]:
        if results[j].w is not None and not keep_w(j):
            results[j].w = None


def _nearest_w(lams, results, i):
    """The best ``w`` of the point run (its ``w`` kept) whose ``lam`` is nearest to ``lams[i]``
    on a log scale."""
    ran = [j for j, r in enumerate(results) if r is not None and r.w is not None]
    j = min(ran, key=lambda j: abs(np.log(lams[j] / lams[i])))
    return results[j].w
